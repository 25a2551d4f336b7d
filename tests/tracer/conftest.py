import pytest

from tau_emotion.core.plugins import load_all_plugins


@pytest.fixture(scope="session")
def domains():
    pm, _ = load_all_plugins(["tests.tracer.tiny_pack"])
    return pm.catalog("domains")


@pytest.fixture(scope="session")
def airline(domains):
    return domains.get("airline")
