"""`tau tracer collect`: presets, the kept selection (cap, rebalance) and a real collection run
against the loopback OpenAI server, with a scripted expert replaying the gold tool calls."""

import pytest

from tau_emotion.core.errors import TauError
from tau_emotion.core.models import EpisodeResult, Message, Termination, ToolCall
from tau_emotion.tracer import collect
from tests.tracer import expert

INSTALLED = {"airline": ["hand", "test", "train"], "mock": ["test"], "tautrait-retail": ["test", "train"],
             "taubench-retail": ["train"], "tautrait-telecom": ["train"]}


def test_presets_pick_installed_domains_and_say_what_is_missing():
    domains, notes = collect.resolve_domains(INSTALLED, [], "low", "train")
    assert domains == ["airline", "taubench-retail", "tautrait-telecom"]
    assert notes == ["preset low: no installed 'telehealth' domain (install its pack to include it)"]
    domains, notes = collect.resolve_domains(INSTALLED, [], "high", "train")  # the paper's ten, not all installed
    assert domains == ["airline", "taubench-retail", "tautrait-telecom"]
    assert notes == [f"preset high: no installed '{d}' domain (install its pack to include it)" for d in
                     ("telehealth", "restaurant", "bank", "school", "travel", "movie", "basketball")]
    domains, notes = collect.resolve_domains({**INSTALLED, "bank": ["hand"]}, [], "high", "train")
    assert "bank: no 'train' split, skipped" in notes and "bank" not in domains


def test_bad_domain_split_or_preset_is_an_error():
    with pytest.raises(TauError, match="no 'train' split"):
        collect.resolve_domains(INSTALLED, ["mock"], None, "train")
    with pytest.raises(TauError, match="unknown domain 'airlin'"):
        collect.resolve_domains(INSTALLED, ["airlin"], None, "train")
    with pytest.raises(TauError, match="unknown preset"):
        collect.resolve_domains(INSTALLED, [], "medium", "train")
    with pytest.raises(TauError, match="no domain to collect"):
        collect.resolve_domains(INSTALLED, [], None, "train")


def _result(task, reward, family, domain="d", trial=0, messages=()):
    return EpisodeResult(task_id=task, domain=domain, trial=trial, reward=reward, success=reward == 1,
                         termination=Termination(reason="user_stop"), tags={"emotion.family": family},
                         messages=list(messages))


def test_cap_keeps_only_plus_one_and_rebalances_families():
    results = [_result(f"t{i}", 1, "enjoyment") for i in range(6)] + [
        _result("f1", 1, "fear"), _result("f2", 1, "fear"), _result("s1", 1, "sadness"),
        _result("bad", -1, "sadness"), _result("zero", 0, "anger")]
    kept = collect.select_kept(results, cap=6)
    assert all(r.reward == 1 for r in kept) and len(kept) == 6
    families = [r.tags["emotion.family"] for r in kept]
    assert families.count("fear") == 2 and families.count("sadness") == 1 and families.count("enjoyment") == 3
    plain = collect.select_kept(results, cap=6, rebalance=False)
    assert [r.task_id for r in plain] == ["f1", "f2", "s1", "t0", "t1", "t2"]
    assert len(collect.select_kept(results, cap=None)) == 9
    assert collect.select_kept(results, cap=6) == collect.select_kept(results, cap=6)  # seeded


def test_statistics_count_tool_calls_and_questions():
    call = ToolCall(id="1", name="look", arguments={})
    messages = [Message(role="user", content="hi"), Message(role="assistant", content="Your id?"),
                Message(role="assistant", tool_calls=[call, call]), Message(role="assistant", content="Done.")]
    stats = collect.TrajectoryStats.of(_result("t", 1, "fear", messages=messages))
    assert (stats.tool_calls, stats.questions, stats.tools_outnumber_questions) == (2, 1, True)


def _serve(server, tasks, agent="expert"):
    server.respond("expert", getattr(expert, agent)(tasks))
    server.respond("user", expert.user(tasks))


def _args(server, db, *extra):
    return ["tracer", "collect", *extra, "--agent-model", "openai/expert", "--agent-api-base", server.base_url,
            "--user-model", "openai/user", "--user-api-base", server.base_url, "--db", db,
            "-o", "no_progress=true", "-o", "retry_wait=0.01"]


@pytest.mark.slow
def test_collect_airline_against_the_loopback_server(tau, openai_server, airline, tmp_path):
    from tau_emotion.core.manager import load_all_plugins
    from tau_emotion.core.runner import open_store

    tasks = airline.tasks("train")[:8]
    _serve(openai_server, tasks)
    db = str(tmp_path / "runs.db")
    result = tau(*_args(openai_server, db, "airline", "--split", "train", "--tasks", "8", "--cap", "5"))
    assert result.exit_code == 0, result.output
    assert "collect" in result.output and "airline" in result.output and "kept" in result.output
    assert "families kept" in result.output
    store = open_store(load_all_plugins(), None, db, create=False)
    [run] = store.runs()
    block = run["summary"]["collect"]
    results = {(r.task_id, r.trial): r for r in store.results(run["run_id"])}
    assert len(results) == 8
    assert len(block["kept"]) == 5 and all(results[tuple(k)].reward == 1 for k in block["kept"])
    [all_row] = [row for row in block["rows"] if row["domain"] == "all"]
    assert all_row["success"] >= 5 and all_row["kept"] == 5 and all_row["questions"] == 1.0
    assert all_row["tools_gt_questions"] == 1.0 and sum(block["families"].values()) == 5
    one = block["trajectories"][0]
    assert one["questions"] == 1 and one["tool_calls"] >= 2 and one["tools_outnumber_questions"] is True
    assert run["config"]["max_steps"] == 50 and run["config"]["user"] == "llm"
    assert "emotion" in run["config"]["plugins"]
    user_requests = [r for r in openai_server.requests if r["model"] == "user"]
    assert user_requests and all(r.get("temperature", 0) == 0 for r in user_requests)
    assert any("###UNSATISFIED###" in r["messages"][0]["content"] for r in user_requests)  # the emotional user


@pytest.mark.slow
def test_collect_resumes_the_trials_that_failed(tau, openai_server, airline, tmp_path):
    from tau_emotion.core.manager import load_all_plugins
    from tau_emotion.core.runner import open_store

    tasks = airline.tasks("train")[:3]
    openai_server.respond("user", {"status": 500})
    db = str(tmp_path / "runs.db")
    first = tau(*_args(openai_server, db, "airline", "--tasks", "3", "-o", "max_retries=0"))
    assert first.exit_code == 0 and "3 trial(s) ended in error" in first.output
    store = open_store(load_all_plugins(), None, db, create=False)
    [run] = store.runs()
    _serve(openai_server, tasks)
    second = tau(*_args(openai_server, db, "--resume", run["run_id"]))
    assert second.exit_code == 0, second.output
    kept = store.summary(run["run_id"])["collect"]["kept"]
    assert len(kept) == 3 and {r.status for r in store.results(run["run_id"])} == {"ok"}


@pytest.mark.slow
def test_missing_models_fail_before_any_trial(tau, tmp_path):
    result = tau("tracer", "collect", "airline", "--db", str(tmp_path / "r.db"))
    assert result.exit_code == 1 and "the agent needs a model: pass --agent-model" in result.output
    result = tau("tracer", "collect", "airline", "--agent-model", "openai/x", "--db", str(tmp_path / "r.db"))
    assert result.exit_code == 1 and "the user needs a model: pass --user-model" in result.output
    assert not (tmp_path / "r.db").exists()


@pytest.mark.slow
def test_preset_low_names_what_is_missing(tau, tmp_path):
    result = tau("tracer", "collect", "--preset", "low", "--tasks", "1", "--user", "scripted", "--agent", "oracle",
                 "--db", str(tmp_path / "r.db"), "-o", "no_progress=true")
    assert result.exit_code == 0, result.output
    assert "collect" in result.output and "airline" in result.output


@pytest.mark.slow
def test_collect_takes_the_model_options_of_run_from_flags_and_a_config_file(tau, openai_server, airline, tmp_path):
    from tau_emotion.core.cli import build_cli
    from tau_emotion.core.roles import role_options_model

    collect = build_cli().commands["tracer"].commands["collect"]
    flags = {o for p in collect.params for o in p.opts}
    for model in (role_options_model("agent"), role_options_model("user")):
        assert {"--" + name.replace("_", "-") for name in model.model_fields} <= flags
    _serve(openai_server, airline.tasks("train")[:2])
    config = tmp_path / "collect.toml"
    config.write_text(f'agent_model = "openai/expert"\nagent_api_base = "{openai_server.base_url}"\n'
                      'agent_args = {max_tokens = 321}\n')
    result = tau("tracer", "collect", "airline", "--tasks", "2", "--config", str(config), "--agent-client", "openai",
                 "--user-model", "openai/user", "--user-api-base", openai_server.base_url,
                 "--user-args", '{"max_tokens": 77}', "--db", str(tmp_path / "r.db"), "-o", "no_progress=true")
    assert result.exit_code == 0, result.output
    by_model = {r["model"]: r for r in openai_server.requests}
    assert by_model["expert"]["max_tokens"] == 321 and by_model["user"]["max_tokens"] == 77
