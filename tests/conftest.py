import os
import sys
import textwrap
from pathlib import Path

# compiled and assertion-rewritten modules are cached even where PYTHONDONTWRITEBYTECODE is set (some sandboxes
# and CI images set it): compiling the suite's ~200 test modules and the package again costs ~6 s a run
sys.dont_write_bytecode = False
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
os.environ.setdefault("OMP_NUM_THREADS", "1")
# the default results file is per user (~/.local/share/tau/runs.db): tests never write there
import tempfile  # noqa: E402

os.environ["XDG_DATA_HOME"] = tempfile.mkdtemp(prefix="tau-test-data-")
os.environ.pop("TAU_DB", None)

import pytest  # noqa: E402

from tau_emotion.core.manager import PluginManager  # noqa: E402

#: every hook some test called, through any plugin manager made in this process (test_hooks checks it)
CALLED_HOOKS: set[str] = set()
_plain_init = PluginManager.__init__


# a package in the τ-Emotion-Bench layout, put on sys.path by its tests: its `tasks_test.py` are data
collect_ignore = ["fixtures/tauemo_fixture"]


def _monitored_init(self):
    _plain_init(self)
    self.add_hookcall_monitoring(lambda name, impls, kwargs: CALLED_HOOKS.add(name), lambda *args: None)


PluginManager.__init__ = _monitored_init


def slow_list() -> set[str]:
    """The test ids and files `tests/slow_tests.txt` names (what the quick loop leaves out, by measured time)."""
    text = (Path(__file__).parent / "slow_tests.txt").read_text(encoding="utf-8")
    return {line.split("  #", 1)[0].strip() for line in text.splitlines() if line.strip() and not line.startswith("#")}


@pytest.hookimpl(tryfirst=True)  # before `-m` deselects by mark
def pytest_collection_modifyitems(items):
    """Tests named in slow_tests.txt are marked `slow`; tests marked `last` run after every other test (the
    hook-coverage check needs the whole run)."""
    slow = slow_list()
    for item in items:
        node = item.nodeid
        if node in slow or node.split("[", 1)[0] in slow or node.split("::", 1)[0] in slow:
            item.add_marker(pytest.mark.slow)
    items.sort(key=lambda item: item.get_closest_marker("last") is not None)


#: fixture -> the background training it waits for (tests/background.py)
TRAININGS = {"trained": "full", "held_out_trained": "held_out"}


def pytest_collection_finish(session):
    """Start the slow trainings the selected tests need in a worker process (see tests/background.py)."""
    from tests import background

    if session.config.option.collectonly:  # nothing will run: a training would only hold the exit
        return
    used = {name for item in session.items for name in getattr(item, "fixturenames", ())}
    background.start([training for fixture, training in TRAININGS.items() if fixture in used])


def pytest_sessionfinish(session):
    from tests import background

    background.stop()


from tests.openai_server import ScriptedOpenAI  # noqa: E402


@pytest.fixture
def openai_server():
    server = ScriptedOpenAI().start()
    yield server
    server.stop()


@pytest.fixture
def pm():
    from tau_emotion.core.manager import get_plugin_manager

    return get_plugin_manager(["mock"])


@pytest.fixture
def tau(tmp_path, monkeypatch):
    """Invoke the `tau` CLI in a temporary working directory: `tau("run", "--plugins", "mock")`."""
    from click.testing import CliRunner

    from tau_emotion.core.cli import build_cli

    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("TAU_PLUGINS", raising=False)
    monkeypatch.setenv("TAU_DB", str(tmp_path / ".tau" / "runs.db"))  # each test its own results file
    runner = CliRunner()
    cli = build_cli()

    def invoke(*args):
        return runner.invoke(cli, list(args), catch_exceptions=False)

    return invoke


@pytest.fixture
def make_pack(tmp_path, monkeypatch):
    """Write a third-party-style pack (the mock tools, given data) on sys.path; returns its data folder."""
    import sys
    import textwrap

    made = []

    def make(module, domain, db='{"owners": {}, "accounts": {}}'):
        pkg = tmp_path / module
        (pkg / "data").mkdir(parents=True)
        (pkg / "__init__.py").write_text(textwrap.dedent(f"""
            from tau_emotion.core import hookimpl
            from tau_emotion.core.domain import Domain

            @hookimpl
            def tau_register_domains(register):
                register(Domain("{domain}", tools="tau_emotion.domain_packs.mock.tools", package=__name__))
        """))
        (pkg / "data" / "policy.md").write_text("policy")
        (pkg / "data" / "db.json").write_text(db)
        made.append(module)
        return pkg / "data"

    monkeypatch.syspath_prepend(str(tmp_path))
    yield make
    for module in made:
        sys.modules.pop(module, None)


@pytest.fixture
def plugin_module(tmp_path, monkeypatch):
    """Write a plugin module on sys.path: `plugin_module("name", source)`; load it with --plugins name."""
    monkeypatch.syspath_prepend(str(tmp_path))
    created = []

    def write(name, source):
        (tmp_path / f"{name}.py").write_text(textwrap.dedent(source))
        created.append(name)
        return name

    yield write
    for name in created:
        sys.modules.pop(name, None)
