"""The core's contracts: it names nothing it hosts, plugins own their blocks, options, stores and
model clients, one manager serves a command, and errors are one line only when a user can fix them."""

import io
import json
import tokenize
from pathlib import Path

import click
import pytest
from pydantic import BaseModel

from tau_emotion.core import hookimpl
from tau_emotion.core.errors import TauError
from tau_emotion.core.manager import PluginManager, get_plugin_manager
from tau_emotion.core.models import Message, ModelSettings, RunConfig
from tau_emotion.core.runner import RunError, prepare_run, run_sync

ROOT = Path(__file__).resolve().parents[2]
QUIET = {"progress": {"no_progress": True}}
# what the core must not name: domains, model vendors, the emotion pack's vocabulary, the tracer, stores
BANNED = ["airline", "retail", "telecom", "telehealth", "school", "basketball", "restaurant", "travel", "movie",
          "bank", "mock", "tautrait", "taubench", "litellm", "openai", "vllm", "anthropic", "emotion", "unsatisfied",
          "anger", "fear", "sadness", "disgust", "enjoyment", "tracer", "sqlite"]
PROJECT_NAMES = ("tau_emotion", "tau-emotion")


def _words(path: Path) -> list[tuple[int, str]]:
    found = []
    for tok in tokenize.generate_tokens(io.StringIO(path.read_text(encoding="utf-8")).readline):
        if tok.type not in (tokenize.NAME, tokenize.STRING, tokenize.COMMENT):
            continue
        text = tok.string.lower()
        for name in PROJECT_NAMES:
            text = text.replace(name, " ")
        found += [(tok.start[0], word) for word in BANNED if word in text]
    return found


def test_core_names_no_domain_vendor_emotion_tracer_or_store():
    offences = {f"{p.name}:{line} {word}" for p in (ROOT / "core").glob("*.py") for line, word in _words(p)}
    assert not offences, sorted(offences)


def test_the_check_catches_a_named_vendor(tmp_path):
    bad = tmp_path / "bad.py"
    bad.write_text('import tau_emotion.core\nDEFAULT = "litellm"  # for the OpenAI client\n')
    assert {w for _, w in _words(bad)} == {"litellm", "openai"}


# ----------------------------------------------------------------------------- blocks and tags


class Shade(BaseModel):
    model_config = {"extra": "forbid"}
    colour: str
    depth: int = 1


class ShadePlugin:
    @hookimpl
    def tau_register_blocks(self, register):
        register("shade", Shade)

    @hookimpl
    def tau_task_tags(self, task):
        shade = task.block("shade")
        return {"shade.colour": shade.colour} if shade is not None else None

    @hookimpl
    def tau_summary_rows(self, summary):
        return [(f"shade:{k}", g) for k, g in summary["by_tag"].get("shade.colour", {}).items()]


TASKS = [{"id": f"s-{i}", "domain": "shady", "user": {"instruction": "balance of acc-2?", "intents": ["balance?"]},
          "gold": {"outputs": ["235.5"]}, **({"shade": {"colour": c}} if c else {})}
         for i, c in enumerate(["red", "red", "blue", None])]


@pytest.fixture
def shady(make_pack):
    data = make_pack("shadypack", "shady", db=(ROOT / "domain_packs/mock/data/db.json").read_text())
    (data / "tasks.json").write_text(json.dumps(TASKS))
    return data


def test_a_plugin_owned_block_is_validated_kept_and_tagged(shady, tmp_path):
    pm = get_plugin_manager(["shadypack"], extra=[ShadePlugin()])
    run = prepare_run(RunConfig(plugins=["shadypack"], trials=1, options=QUIET), str(tmp_path / "r.db"), pm=pm)
    assert isinstance(run.tasks[0].block("shade"), Shade) and run.tasks[3].block("shade") is None
    summary = run_sync(run)
    assert set(summary["by_tag"]["shade.colour"]) == {"red", "blue"}
    assert summary["by_tag"]["shade.colour"]["red"]["n_tasks"] == 2
    stored = run.store.results(run.run_id)
    assert stored[0].tags == {"shade.colour": "red", "intents": "1"} and stored[0].blocks == {"shade": {"colour": "red", "depth": 1}}
    rows = [row for rows in pm.hook.tau_summary_rows(summary=summary) for row in rows]
    assert ("shade:blue", summary["by_tag"]["shade.colour"]["blue"]) in rows and rows[0] == ("all", summary)
    dumped = run.tasks[0].model_dump(mode="json")
    assert dumped["shade"] == {"colour": "red", "depth": 1} and "blocks" not in dumped  # file format: top level


def test_a_bad_block_names_file_task_and_field(shady, tmp_path):
    (shady / "tasks.json").write_text(json.dumps([{**TASKS[0], "shade": {"colour": "red", "depth": "deep"}}]))
    pm = get_plugin_manager(["shadypack"], extra=[ShadePlugin()])
    with pytest.raises(TauError, match=r"tasks.json: task 's-0': block 'shade': field 'depth': Input should be a valid integer"):
        prepare_run(RunConfig(plugins=["shadypack"], trials=1, options=QUIET), str(tmp_path / "r.db"), pm=pm)
    # without its plugin the block is unknown, and said so
    with pytest.raises(TauError, match="unknown block 'shade': no installed plugin owns it"):
        prepare_run(RunConfig(plugins=["shadypack"], trials=1, options=QUIET), str(tmp_path / "r2.db"))


# ----------------------------------------------------------------------------- episodes and metrics


def test_an_async_run_episode_can_decline(tmp_path):
    seen = []

    class Picky:
        @hookimpl(tryfirst=True)
        async def tau_run_episode(self, episode):
            seen.append(episode.task.id)
            if episode.task.id != "mock-002":
                return None  # declined: the core loop runs it
            from tau_emotion.core.models import EpisodeResult, Termination

            return EpisodeResult(task_id=episode.task.id, domain="mock", trial=episode.trial, reward=0.0,
                                 success=False, termination=Termination(reason="picked", by="picky"))

    pm = get_plugin_manager(["mock"], extra=[Picky()])
    summary = run_sync(prepare_run(RunConfig(plugins=["mock"], trials=1, options=QUIET), str(tmp_path / "r.db"), pm=pm))
    assert sorted(seen) == ["mock-001", "mock-002", "mock-003", "mock-004"]
    assert summary["terminations"]["picked"] == 1 and summary["avg_at_k"] == 0.75


def test_two_metrics_giving_one_key_is_an_error_naming_both(tmp_path):
    class Clash:
        @hookimpl
        def tau_register_metrics(self, register):
            register("clash", lambda results, config: {"avg_at_k": 0.0})

    pm = get_plugin_manager(["mock"], extra=[Clash()])
    with pytest.raises(RunError, match="metric 'scores' .* and 'clash' both give summary key 'avg_at_k'|"
                                       "metric 'clash' .* and 'core' both give summary key 'avg_at_k'"):
        run_sync(prepare_run(RunConfig(plugins=["mock"], trials=1, options=QUIET), str(tmp_path / "r.db"), pm=pm))


def test_modify_tasks_edits_the_list_in_place_in_hook_order(tmp_path):
    class First:
        @hookimpl(tryfirst=True)
        def tau_modify_tasks(self, tasks):
            tasks[:] = tasks[:3]

    class Then:
        @hookimpl
        def tau_modify_tasks(self, tasks, config):
            assert len(tasks) == 3
            tasks.reverse()

    pm = get_plugin_manager(["mock"], extra=[First(), Then()])
    run = prepare_run(RunConfig(plugins=["mock"], trials=1, options=QUIET), str(tmp_path / "r.db"), pm=pm)
    assert [t.id for t in run.tasks] == ["mock-003", "mock-002", "mock-001"]


# ----------------------------------------------------------------------------- model clients and options


class Canned:
    """A model client that answers from a list, for the catalog test."""

    calls: list = []

    def __init__(self, settings, config):
        self.settings = settings

    async def complete(self, messages, tools=None):
        Canned.calls.append((self.settings.model, messages[-1]["content"] if messages else None, bool(tools)))
        if tools:  # the agent
            return Message(role="assistant", content="The balance of acc-2 is 235.5.")
        asked = sum(m == self.settings.model for m, _, _ in Canned.calls)
        return Message(role="assistant", content="What is the balance of acc-2?" if asked == 1 else "###STOP###")


class CannedPlugin:
    @hookimpl
    def tau_register_model_clients(self, register):
        register("canned", Canned)


def test_agents_and_users_get_their_model_client_from_the_catalog(tmp_path):
    Canned.calls = []
    pm = get_plugin_manager(["mock"], extra=[CannedPlugin()])
    config = RunConfig(plugins=["mock"], trials=1, task_ids=["mock-001"], agent="tool_calling", user="llm", options={
        **QUIET, "agent": {"agent_model": "a", "agent_client": "canned"},
        "user": {"user_model": "u", "user_client": "canned"}})
    run = prepare_run(config, str(tmp_path / "r.db"), pm=pm)
    run_sync(run)
    [result] = run.store.results(run.run_id)
    assert result.status == "ok", result.error
    assert {m for m, _, _ in Canned.calls} == {"a", "u"}
    assert pm.model_client(ModelSettings(model="x")).__class__.__name__ == "LitellmClient"  # the default client


def test_options_of_a_plugin_not_loaded_or_badly_typed_are_errors(tmp_path):
    with pytest.raises(RunError, match="options for 'emotion' were given, but no loaded plugin takes them"):
        prepare_run(RunConfig(plugins=["mock"], options={"emotion": {"emotion": "none"}}), str(tmp_path / "r.db"))
    with pytest.raises(RunError, match="plugin options 'model_calls': field 'max_retries': Input should be greater"):
        prepare_run(RunConfig(plugins=["mock"], options={"model_calls": {"max_retries": -1}}), str(tmp_path / "r.db"))


def test_cli_option_of_an_unselected_plugin_exits_2_naming_it(tau):
    result = tau("run", "--plugins", "mock", "--emotion", "x")
    assert result.exit_code == 2
    assert "--emotion is an option of plugin 'emotion', which this run does not load: add it with --plugins emotion" \
        in result.output
    result = tau("run", "--plugins", "mock", "-o", "emotion_control=true")
    assert result.exit_code == 2 and "plugin 'emotion'" in result.output
    result = tau("run", "--plugins", "mock", "-o", "colour=red")
    assert result.exit_code == 2 and "expected KEY=VALUE with a plugin option as KEY" in result.output


def test_plugin_options_reach_the_plugin_typed(tau, tmp_path):
    result = tau("run", "--plugins", "emotion,mock", "--trials", "1", "--emotion", "family:fear", "--no-progress",
                 "-o", "max_retries=7", "--summary-json", "s.json")
    assert result.exit_code == 0, result.output
    runs = json.loads(tau("show", json.loads((tmp_path / "s.json").read_text())["run_id"], "--json").output)
    assert runs["summary"]["by_tag"]["emotion.family"].keys() == {"fear"}


# ----------------------------------------------------------------------------- one manager, stores, errors


def test_one_plugin_manager_per_command(tau, monkeypatch):
    made = []
    original = PluginManager.__init__

    def counting(self):
        made.append(self)
        original(self)

    monkeypatch.setattr(PluginManager, "__init__", counting)
    assert tau("run", "--plugins", "emotion,mock", "--trials", "1", "--no-progress").exit_code == 0
    assert len(made) == 1


def test_a_second_store_serves_run_runs_show_export_and_resume(tau, tmp_path):
    where = ["--plugins", "tests.fixtures.jsonl_store", "--store", "jsonl", "--db", str(tmp_path / "results")]
    result = tau("run", "--plugins", "mock", "--trials", "2", "--no-progress", "--summary-json", "s.json", *where)
    assert result.exit_code == 0, result.output
    run_id = json.loads((tmp_path / "s.json").read_text())["run_id"]
    assert not (tmp_path / ".tau").exists()  # nothing went to the default store
    trials = tmp_path / "results" / f"{run_id}.trials.jsonl"
    lines = trials.read_text().splitlines()
    assert len(lines) == 8
    assert run_id in tau("runs", *where).output
    shown = json.loads(tau("show", run_id, "--json", *where).output)
    assert len(shown["trials"]) == 8 and shown["summary"]["avg_at_k"] == 1.0
    exported = tau("export", run_id, *where).output.splitlines()
    assert len(exported) == 8 and json.loads(exported[0])["messages"]
    trials.write_text("\n".join(lines[:5]) + "\n")  # a crash lost three trials
    resumed = tau("run", "--resume", run_id, "--no-progress", *where)
    assert resumed.exit_code == 0, resumed.output
    assert "(5 already done)" in resumed.output
    assert len(trials.read_text().splitlines()) == 8
    assert "no results folder" in tau("runs", "--plugins", "tests.fixtures.jsonl_store", "--store", "jsonl",
                                      "--db", str(tmp_path / "nowhere")).output
    assert not (tmp_path / "nowhere").exists()


def test_reading_commands_never_create_a_results_file(tau, tmp_path):
    result = tau("runs", "--db", str(tmp_path / "missing.db"))
    assert result.exit_code == 1 and "no results file at" in result.output
    assert not (tmp_path / "missing.db").exists()


def test_user_errors_are_one_line_and_bugs_keep_their_traceback(tau, plugin_module):
    plugin_module("fussy", """
        from tau_emotion.core import hookimpl
        from tau_emotion.core.errors import TauError

        @hookimpl
        def tau_configure(config):
            if config.seed == 1:
                raise TauError("seed 1 is reserved; pick another")
            if config.seed == 2:
                raise KeyError("a bug")
    """)
    result = tau("run", "--plugins", "fussy,mock", "--seed", "1")
    assert result.exit_code == 1 and result.output.strip() == "Error: seed 1 is reserved; pick another"
    # a plugin's bug in a hook before the run is one line naming the hook (issue 24); --debug keeps its traceback
    result = tau("run", "--plugins", "fussy,mock", "--seed", "2")
    assert result.exit_code == 1 and result.output.strip() == "Error: plugin hook tau_configure failed: KeyError: 'a bug'"
    with pytest.raises(TauError) as info:
        tau("run", "--plugins", "fussy,mock", "--seed", "2", "--debug")
    assert isinstance(info.value.__cause__, KeyError)


def test_run_help_lists_plugin_options_with_their_owner(tau):
    out = tau("run", "--help").output
    assert "[core] Model name for the agent" in " ".join(out.split())
    for flag in ("--agent-model", "--user-api-base", "--max-retries", "--no-progress", "--emotion-control", "--store"):
        assert flag in out


def test_option_models_become_typed_click_options():
    from tau_emotion.core.cli import option_params

    class Opts(BaseModel):
        level: int = 3
        loud: bool = False
        name: str | None = None

    class P:
        @hookimpl
        def tau_register_options(self, register):
            register("p", Opts)

    params = {p.name: p for p in option_params(get_plugin_manager(extra=[P()]))}
    assert params["opt__p__level"].type is click.INT and params["opt__p__loud"].is_flag
    assert params["opt__p__name"].type is click.STRING


def test_retry_options_keep_their_owner_when_the_litellm_client_is_blocked(tau):
    result = tau("run", "--plugins", "mock,no:litellm", "--agent", "tool_calling", "--max-retries", "2", "--help")
    assert result.exit_code == 0, result.output
    line = next(x for x in result.output.splitlines() if "--max-retries" in x)
    assert "[model_calls] Retries of a failing model" in line
    pm = get_plugin_manager(["mock"], ["litellm"])
    assert pm.catalog("options").entry("model_calls").owner == "model_calls"
