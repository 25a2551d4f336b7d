"""Every core hook is exercised here (or in a named test) and documented in docs/hooks.md."""

import ast
import types
from pathlib import Path

import click
import pluggy
import pytest

from tau_emotion.core import hookimpl, hookspecs
from tau_emotion.core.manager import get_plugin_manager
from tau_emotion.core.models import EpisodeResult, RunConfig, Termination
from tau_emotion.core.runner import prepare_run, run_sync

ROOT = Path(__file__).resolve().parents[2]


class Recorder:
    def __init__(self):
        self.calls = []

    @hookimpl
    def tau_configure(self, config):
        self.calls.append("configure")
        config.seed = 7

    @hookimpl
    def tau_modify_tasks(self, tasks, config):
        self.calls.append("modify_tasks")
        tasks[:] = [t for t in tasks if t.id != "mock-004"]

    @hookimpl
    def tau_run_start(self, run):
        self.calls.append(f"run_start:{len(run.pending)}")

    @hookimpl
    def tau_episode_start(self, episode):
        self.calls.append("episode_start")

    @hookimpl
    def tau_turn_end(self, episode, turn):
        self.calls.append(f"turn:{turn.actor}")

    @hookimpl
    def tau_episode_end(self, episode, result):
        self.calls.append("episode_end")
        result.usage["marked"] = 1.0

    @hookimpl
    def tau_run_end(self, run, summary):
        self.calls.append(f"run_end:{summary['n_trials']}")

    @hookimpl
    def tau_user_prompt(self, episode, prompt):
        return f"extra section for {episode.task.id}"

    @hookimpl
    def tau_run_episode(self, episode):
        if episode.task.id == "mock-003":
            return EpisodeResult(task_id="mock-003", domain="mock", trial=episode.trial, reward=0.0, success=False,
                                 termination=Termination(reason="skipped", by="recorder"))
        return None


def test_lifecycle_hooks_fire_in_order():
    recorder = Recorder()
    pm = get_plugin_manager(["mock"], extra=[recorder])
    run = prepare_run(RunConfig(plugins=["mock"], trials=1, options={"progress": {"no_progress": True}}), ":memory:", pm=pm)
    assert run.config.seed == 7
    assert [t.id for t in run.tasks] == ["mock-001", "mock-002", "mock-003"]
    summary = run_sync(run)
    calls = recorder.calls
    assert calls[:3] == ["configure", "modify_tasks", "run_start:3"]
    assert calls[-1] == "run_end:3"
    assert calls.count("episode_start") == calls.count("episode_end") == 3
    assert "turn:user" in calls and "turn:agent" in calls
    assert summary["terminations"]["skipped"] == 1
    assert all(r.usage.get("marked") == 1.0 for r in run.store.results(run.run_id))
    from tests.episodes import make_episode

    episode = make_episode(run, run.tasks[0], 0)
    assert episode.user_prompt_sections("base") == ["extra section for mock-001"]


def test_addhooks_suites_trainers_and_commands():
    spec_module = types.ModuleType("extra_specs")
    marker = pluggy.HookspecMarker("tau_emotion")

    def tau_extra_hook(value):
        """An extra hook."""

    spec_module.tau_extra_hook = marker(tau_extra_hook)

    class Adder:
        @hookimpl
        def tau_addhooks(self, pluginmanager):
            pluginmanager.add_hookspecs(spec_module)

        @hookimpl
        def tau_register_suites(self, register):
            register("tiny", ["mock"])

        @hookimpl
        def tau_register_trainers(self, register):
            register("sft", "tau_emotion.core.registry:Registry")

        @hookimpl
        def tau_register_commands(self, cli):
            @cli.command("hello")
            def hello():
                click.echo("hi")

    pm = get_plugin_manager(["mock"], extra=[Adder()])
    assert pm.hook.tau_extra_hook(value=1) == []
    assert pm.catalog("suites").get("tiny") == ["mock"]
    from tau_emotion.core.registry import Registry

    assert pm.catalog("trainers").get("sft") is Registry
    group = click.Group("tau")
    pm.hook.tau_register_commands(cli=group)
    assert "hello" in group.commands


def all_hookspecs():
    """Every hook specification: the core's and every installed plugin's (added through tau_addhooks)."""
    from tau_emotion.core.manager import load_all_plugins

    pm = load_all_plugins()
    return {name: caller.spec for name, caller in vars(pm.hook).items()
            if name.startswith("tau_") and getattr(caller, "spec", None) is not None}


def test_every_hook_is_documented():
    core = [n.name for n in ast.parse(Path(hookspecs.__file__).read_text()).body
            if isinstance(n, ast.FunctionDef) and n.name.startswith("tau_")]
    specs = all_hookspecs()
    assert set(core) <= set(specs) and len(specs) >= len(core) + 2  # tracer and emotion add theirs
    docs = (ROOT / "docs" / "hooks.md").read_text()
    for name, spec in specs.items():
        assert spec.function.__doc__, f"{name} has no docstring"
        assert f"`{name}(" in docs, f"{name} is missing from docs/hooks.md"


@pytest.mark.last
def test_every_hook_is_called_by_some_test(request):
    """Runs after every other test; counts the hooks that tests really called (see conftest.CALLED_HOOKS)."""
    from tests.conftest import CALLED_HOOKS

    ran = {Path(str(item.fspath)).resolve() for item in request.session.items}
    every = {p.resolve() for p in (ROOT / "tests").rglob("test_*.py") if "fixtures" not in p.parts}
    if not every <= ran or request.config.option.markexpr or request.config.option.keyword:
        pytest.skip("only the whole suite shows which hooks the tests call")
    missing = sorted(set(all_hookspecs()) - CALLED_HOOKS)
    assert not missing, f"hooks no test calls: {missing}"


def test_catalog_hooks_plug_in_users_agents_metrics_executors_and_stores(tmp_path):
    from tau_emotion.core.models import Message
    from tau_emotion.plugins.local_executor import LocalExecutor
    from tau_emotion.plugins.sqlite_store import SqliteStore

    class QuietUser:
        def __init__(self, episode):
            pass

        async def start(self):
            return Message(role="user", content="###STOP###")

        async def respond(self, message):
            return Message(role="user", content="###STOP###")

    class Sequential(LocalExecutor):
        used = False

        def __init__(self, concurrency):
            super().__init__(1)
            Sequential.used = True

    class Catalogs:
        @hookimpl
        def tau_register_users(self, register):
            register("quiet", QuietUser)

        @hookimpl
        def tau_register_agents(self, register):
            register("never", "tau_emotion.plugins.oracle_agent:OracleAgent")

        @hookimpl
        def tau_register_metrics(self, register):
            register("count", lambda results, config: {"count": len(results)})

        @hookimpl
        def tau_register_executors(self, register):
            register("sequential", Sequential)

        @hookimpl
        def tau_register_stores(self, register):
            register("sqlite2", SqliteStore)

    pm = get_plugin_manager(["mock"], extra=[Catalogs()])
    config = RunConfig(plugins=["mock"], trials=1, user="quiet", agent="never", executor="sequential",
                       store="sqlite2", options={"progress": {"no_progress": True}})
    summary = run_sync(prepare_run(config, str(tmp_path / "x.sqlite"), pm=pm))
    assert summary["count"] == 4 and Sequential.used
    assert summary["terminations"] == {"user_stop": 4}
    assert summary["avg_at_k"] == 0.0  # nothing was done, every db differs from gold


def test_metrics_get_results_without_transcripts_unless_they_ask(tmp_path):
    """A summary never holds a whole run's conversations: a metric gets them only with `transcripts=True`,
    and then the same trials as the store holds; every other field is what the store gives back."""
    seen = {}

    class Metrics:
        @hookimpl
        def tau_register_metrics(self, register):
            register("light", lambda results, config: seen.setdefault("light", results) and {})
            register("full", lambda results, config: seen.setdefault("full", results) and {}, transcripts=True)

    pm = get_plugin_manager(["mock"], extra=[Metrics()])
    config = RunConfig(plugins=["mock"], trials=2, agent="oracle", options={"progress": {"no_progress": True}})
    run = prepare_run(config, str(tmp_path / "x.sqlite"), pm=pm)
    run_sync(run)
    stored = run.store.results(run.run_id)
    assert [r.model_dump(exclude={"messages"}) for r in seen["light"]] == \
        [r.model_dump(exclude={"messages"}) for r in stored]
    assert all(r.messages == [] for r in seen["light"]) and all(r.messages == [] for r in run.results)
    assert [r.model_dump() for r in seen["full"]] == [r.model_dump() for r in stored]
    assert all(r.messages for r in seen["full"])


def test_a_finished_episode_is_freed_without_a_garbage_collection(tmp_path):
    """The scripted user holds its episode (a cycle): the runner releases what a finished episode holds, so
    its transcript does not wait for a full collection (256 x 200-step transcripts did, wave over wave)."""
    import gc
    import weakref

    kept = []

    class Watch:
        @hookimpl
        def tau_episode_end(self, episode, result):
            kept.append(weakref.ref(episode.messages[0]))

    pm = get_plugin_manager(["mock"], extra=[Watch()])
    config = RunConfig(plugins=["mock"], trials=1, agent="oracle", options={"progress": {"no_progress": True}})
    run = prepare_run(config, str(tmp_path / "x.sqlite"), pm=pm)
    gc.disable()
    try:
        run_sync(run)
        assert kept and all(ref() is None for ref in kept)
    finally:
        gc.enable()
