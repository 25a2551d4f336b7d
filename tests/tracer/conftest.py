import pytest

from tau_emotion.core.manager import load_all_plugins


@pytest.fixture(scope="session")
def domains():
    return load_all_plugins(["tests.tracer.tiny_pack"]).catalog("domains")


@pytest.fixture(scope="session")
def airline(domains):
    return domains.get("airline")


@pytest.fixture(scope="session")
def space():
    """The emotion plugin's condition space, as the Tracer's commands get it: from a plugin manager."""
    from tau_emotion.core.manager import get_plugin_manager
    from tau_emotion.tracer.feelings import condition_space

    return condition_space(get_plugin_manager(["emotion"], defaults=False))
