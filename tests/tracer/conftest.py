import pytest

from tau_emotion.core.manager import load_all_plugins


@pytest.fixture(scope="session")
def domains():
    from tau_emotion.tracer.hints import load_hints

    pm = load_all_plugins(["tests.tracer.tiny_pack"])
    catalog = pm.catalog("domains")
    for name in catalog.names():  # resolve each domain's hints through this manager (the tiny pack's too)
        load_hints(catalog.get(name), pm)
    return catalog


@pytest.fixture(scope="session")
def airline(domains):
    return domains.get("airline")
