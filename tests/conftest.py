import atexit
import os
import shutil
import tempfile

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
os.environ.setdefault("OMP_NUM_THREADS", "1")
# Nothing a test runs may write under the home directory: any cache goes to a fresh folder, removed at exit.
os.environ["TAU_CACHE_DIR"] = tempfile.mkdtemp(prefix="tau-test-cache-")
atexit.register(shutil.rmtree, os.environ["TAU_CACHE_DIR"], ignore_errors=True)

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


@pytest.fixture
def tau(tmp_path, monkeypatch):
    """Invoke the `tau` CLI in a temporary working directory: `tau("run", "--plugins", "mock")`."""
    from click.testing import CliRunner

    from tau_emotion.core.cli import build_cli

    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("TAU_PLUGINS", raising=False)
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
