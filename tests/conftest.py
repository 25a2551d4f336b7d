import os

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
os.environ.setdefault("OMP_NUM_THREADS", "1")

import pytest  # noqa: E402

from tests.openai_server import ScriptedOpenAI  # noqa: E402


@pytest.fixture
def openai_server():
    server = ScriptedOpenAI().start()
    yield server
    server.stop()


@pytest.fixture
def pm():
    from tau_emotion.core.plugins import get_plugin_manager

    return get_plugin_manager(["mock"])
