"""The core install is light: litellm (`[providers]`) and scikit-learn/scipy (`[classifier]`) are extras.

Without them the main job and an OpenAI-compatible endpoint work, and what needs them says, in one line,
which extra to install. A missing library is simulated the way Python sees one: `sys.modules[name] = None`
makes `import name` raise ImportError (CI also runs the main job from the wheel in a venv without them).
"""

import json
import re
import subprocess
import sys
import tomllib
from importlib import metadata
from pathlib import Path

import pytest

from tau_emotion.core.errors import TauError
from tau_emotion.core.models import Message, ModelSettings, to_chat
from tau_emotion.plugins.openai_client import OpenAIClient

ROOT = Path(__file__).resolve().parents[1]


def _project():
    return tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]


@pytest.fixture
def no_litellm(monkeypatch):
    monkeypatch.setitem(sys.modules, "litellm", None)


def test_a_model_only_litellm_serves_is_one_line_naming_the_extra(tau, no_litellm):
    result = tau("run", "--plugins", "mock", "--agent", "tool_calling", "--agent-model", "gpt-4o", "--user", "scripted",
                 "--tasks", "1", "--no-progress")
    assert result.exit_code != 0
    [error] = [line for line in result.output.splitlines() if line.startswith("Error")]  # after the run's header
    assert "Traceback" not in result.output, result.output
    assert "gpt-4o" in error and "pip install 'tau-emotion[providers]'" in error
    assert json.loads(tau("runs", "--json").output) == []  # refused before any trial: no run left behind


def test_an_openai_compatible_endpoint_needs_no_litellm(tau, no_litellm, openai_server):
    openai_server.script("agent-model", {"content": "Hello, how can I help?"})
    result = tau("run", "--plugins", "mock", "--agent", "tool_calling", "--agent-model", "openai/agent-model",
                 "--agent-api-base", openai_server.base_url, "--user", "scripted", "--tasks", "1", "--max-steps", "2",
                 "--no-progress")
    assert result.exit_code == 0 and "litellm" not in result.output, result.output
    [run] = json.loads(tau("runs", "--json").output)
    assert run["summary"]["errors"] == 0
    assert any(r["model"] == "agent-model" for r in openai_server.requests)


def test_litellm_missing_names_the_extra_where_it_is_imported(no_litellm):
    from tau_emotion.plugins.litellm_client import LitellmClient, import_litellm, installed

    assert not installed()
    with pytest.raises(TauError, match=r"tau-emotion\[providers\]"):
        import_litellm()
    with pytest.raises(TauError, match=r"'anthropic/claude' needs litellm.*tau-emotion\[providers\]"):
        LitellmClient(ModelSettings(model="anthropic/claude"))


def test_training_the_classifier_without_scikit_learn_names_the_extra(monkeypatch, tau):
    from tau_emotion.emotion_pack import classifier

    monkeypatch.setitem(sys.modules, "sklearn", None)
    with pytest.raises(TauError) as caught:
        classifier.FeelingsClassifier.train([])
    assert str(caught.value).count("\n") == 0 and "pip install 'tau-emotion[classifier]'" in str(caught.value)
    monkeypatch.setattr(classifier, "_HELD_OUT", {})  # a model held out earlier in this process would be reused
    result = tau("emotions", "eval")
    assert result.exit_code != 0 and "tau-emotion[classifier]" in result.output and "Traceback" not in result.output
    # loading and predicting with the shipped model need numpy alone
    assert classifier.FeelingsClassifier.load().classify("I am furious").family == "anger"


def test_the_request_body_is_compact_json():
    """No blank after `,` or `:` (the defaults sent ~7% more bytes per request than tau-bench for the same text)."""
    client = OpenAIClient(ModelSettings(model="openai/m", api_base="http://h/v1", args={"max_tokens": 5}))
    system = {"role": "system", "content": "policy: a, b"}
    history = to_chat([Message(role="user", content="hi: there, you")])
    tools = [{"type": "function", "function": {"name": "f", "parameters": {"type": "object"}}}]
    for _ in range(2):  # the second time from the encodings kept
        sent = b"".join(client.body([system, *history], tools))
        expected = {"model": "m", "temperature": 0.0, "max_tokens": 5, "messages": [system, *history], "tools": tools}
        assert sent == json.dumps(expected, separators=(",", ":")).encode()
        history = [*history, {"role": "user", "content": "more"}]


def test_core_dependencies_leave_out_the_extras():
    project = _project()
    names = {dep.split(">")[0].split("[")[0].split("=")[0].strip().lower() for dep in project["dependencies"]}
    assert not names & {"litellm", "scikit-learn", "scipy", "openai", "torch"}
    extras = project["optional-dependencies"]
    assert any(d.startswith("litellm") for d in extras["providers"])
    assert {d.split(">")[0] for d in extras["classifier"]} == {"scikit-learn", "scipy"}
    assert "tau-emotion[providers,classifier]" in extras["dev"]  # `pip install -e '.[dev]' && pytest` runs every test


def test_the_version_has_one_source():
    from tau_emotion.core import __version__

    project = _project()
    assert project["dynamic"] == ["version"] and "version" not in project
    assert metadata.version("tau-emotion") == __version__


#: what the main job may import beyond the standard library: the core dependencies and what they pull in
MAIN_JOB = ["run", "--plugins", "emotion,airline", "--agent", "oracle", "--user", "scripted", "--trials", "1",
            "--tasks", "2", "--no-progress"]

BARE = 'import sys; print(" ".join(sorted({m.split(".")[0] for m in sys.modules})))'

SCRIPT = """
import sys
from tau_emotion.core.cli import main
sys.argv = ["tau", *sys.argv[1:]]
try:
    main()
finally:
    sys.stderr.write("MODULES " + " ".join(sorted({m.split(".")[0] for m in list(sys.modules)})) + "\\n")
"""


def _normal(name):
    return re.sub(r"[-_.]+", "-", name).lower()


def _requirement_closure(names):
    """The distributions `names` require, transitively (markers for extras left out)."""
    seen, queue = set(), list(names)
    while queue:
        name = queue.pop()
        if name in seen:
            continue
        seen.add(name)
        try:
            requires = metadata.requires(name) or []
        except metadata.PackageNotFoundError:
            continue
        for req in requires:
            if "extra ==" in req:
                continue
            queue.append(_normal(re.split(r"[\s;\[<>=!~(]", req.strip(), maxsplit=1)[0]))
    return seen


@pytest.mark.slow
def test_the_main_job_imports_only_core_dependencies(tmp_path):
    out = subprocess.run([sys.executable, "-c", SCRIPT, *MAIN_JOB, "--db", str(tmp_path / "r.db")],
                         capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr[-2000:]
    # what the interpreter loads before any code of ours (site's .pth files of other installs) does not count
    bare = set(subprocess.run([sys.executable, "-c", BARE], capture_output=True, text=True, check=True).stdout.split())
    modules = set(out.stderr.rpartition("MODULES ")[2].split()) - bare
    owners = metadata.packages_distributions()
    used = {_normal(d) for m in modules if m not in sys.stdlib_module_names for d in owners.get(m, [])}
    used.discard("tau-emotion")
    core = {_normal(re.split(r"[<>=\[]", dep, maxsplit=1)[0]) for dep in _project()["dependencies"]}
    assert not used - _requirement_closure(core), sorted(used - _requirement_closure(core))
    assert {"pluggy", "pydantic", "click", "jinja2", "rich"} <= used
    assert not {"litellm", "sklearn", "scipy", "openai", "numpy", "networkx"} & set(modules)
