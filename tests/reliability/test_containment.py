"""Nothing one trial does (its agent, user, messages, scoring or stored result) ends the run.

Each test here failed before issue 9: the run died, or a huge or non-finite argument got through.
"""

from __future__ import annotations

import json

import pytest

from tau_emotion.core.models import Message, ToolCall
from tests.reliability.conftest import Agents, scripted


def _deep(n):
    value = {"leaf": 1}
    for _ in range(n):
        value = {"x": value}
    return value


def _call(name, arguments):
    return Message(role="assistant", tool_calls=[ToolCall(id="c1", name=name, arguments=arguments)])


def test_deeply_nested_arguments_fail_one_trial_as_a_tool_error_and_the_run_goes_on(run_mock):
    """Failure 1: ~300 levels made model_dump_json fail while saving, outside the episode's try."""
    deep = _call("find_owner", _deep(300))
    deep_text = _call("find_owner", json.dumps(_deep(300)))
    agents = Agents(deep=scripted(deep, Message(role="assistant", content="done ###STOP###")),
                    deep_text=scripted(deep_text, Message(role="assistant", content="done")))
    for name in ("deep", "deep_text"):
        run, summary, results = run_mock(agents, agent=name, trials=2, db=f"{name}.sqlite")
        assert len(results) == len(run.tasks) * 2  # no trial lost
        tool = next(m for r in results for m in r.messages if m.role == "tool")
        assert tool.error and "nest" in tool.content
        stored_args = next(m for m in results[0].messages if m.tool_calls).tool_calls[0].arguments
        assert isinstance(stored_args, str) and len(stored_args) < 3000


def test_agent_or_user_constructor_raising_fails_that_trial_with_task_and_reason(run_mock):
    """Failure 1: a constructor that raises aborted the run (0 of 8 stored) and named no task."""

    class Broken:
        def __init__(self, episode):
            raise RuntimeError("cannot build me")

    run, summary, results = run_mock(Agents(broken=Broken), agent="broken", trials=2)
    assert len(results) == len(run.tasks) * 2
    assert all(r.status == "error" for r in results)
    assert "task 'mock-001' trial 0" in results[0].error and "cannot build me" in results[0].error
    assert summary["errors"] == len(results)


def test_a_message_holding_a_value_that_cannot_be_serialised_is_that_trials_error(run_mock):
    bad = Message(role="assistant", content="hello")
    bad.tool_calls = [ToolCall.model_construct(id="x", name="find_owner", arguments={"name": object()})]
    run, summary, results = run_mock(Agents(bad=scripted(bad)), agent="bad", trials=1, max_steps=3)
    assert len(results) == len(run.tasks)
    assert all(r.status == "error" and "storing the result" in r.error for r in results)


def test_scoring_failure_is_the_trials_error(run_mock, monkeypatch):
    import tau_emotion.core.episode as episode

    def explode(*a, **k):
        raise ValueError("scorer broke")

    monkeypatch.setattr(episode, "score", explode)
    run, summary, results = run_mock(trials=1)
    assert len(results) == len(run.tasks) and all("scorer broke" in r.error for r in results)


def test_non_finite_numbers_are_a_tool_error_even_nested(pm):
    """Failure 7: NaN and Infinity reached tools (a balance became NaN)."""
    toolset = pm.catalog("domains").get("mock").toolset
    state = pm.catalog("domains").get("mock").database.state()
    for raw in ('{"from_account": "acc-1", "to_account": "acc-2", "amount": NaN}',
                '{"from_account": "acc-1", "to_account": "acc-2", "amount": -Infinity}',
                {"from_account": "acc-1", "to_account": "acc-2", "amount": float("inf")}):
        text, is_error = toolset.call(state, "transfer", raw)
        assert is_error and "non-finite" in text, text
    text, is_error = toolset.call(state, "find_owner", {"name": "x", "extra": [[{"v": float("nan")}]]})
    assert is_error and "non-finite" in text


@pytest.mark.slow
def test_a_huge_bad_argument_is_not_echoed_whole(pm, run_mock):
    """Failure 8: a 10 MB bad argument came back whole in the tool error and the stored row."""
    toolset = pm.catalog("domains").get("mock").toolset
    state = pm.catalog("domains").get("mock").database.state()
    huge = "x" * 10_000_000
    text, is_error = toolset.call(state, "get_account", {"account_id": huge})
    assert is_error and len(text) < 3000
    text, is_error = toolset.call(state, "get_account", json.dumps({"account_id": huge}))
    assert is_error and len(text) < 3000
    text, is_error = toolset.call(state, huge, {})
    assert is_error and len(text) < 3000
    agent = scripted(_call("get_account", json.dumps({"account_id": huge})),
                     Message(role="assistant", content="y" * 3_000_000))
    run, summary, results = run_mock(Agents(huge=agent), agent="huge", max_steps=3, task_ids=["mock-001"])
    row = run.store.conn.execute("SELECT length(result) FROM trials").fetchone()[0]
    assert row < 500_000


def test_broken_gold_refuses_to_start_or_is_skipped(make_pack, tmp_path, tau):
    """Failure 3: broken gold raised during scoring and aborted the run; --check exited 0."""
    db_json = {"owners": {"o1": {"name": "Ada", "accounts": ["a1"]}},
               "accounts": {"a1": {"owner": "o1", "balance": 5.0, "frozen": False}}}
    data = make_pack("brokengold_pack", "brokengold", db=json.dumps(db_json))
    tasks = [{"id": "good", "domain": "brokengold", "user": {"instruction": "hi"},
              "gold": {"actions": [{"name": "get_account", "arguments": {"account_id": "a1"}}]}},
             {"id": "missing-tool", "domain": "brokengold", "user": {"instruction": "hi"},
              "gold": {"actions": [{"name": "get_account", "arguments": {"account_id": "a1"}},
                                   {"name": "no_such_tool", "arguments": {}}]}},
             {"id": "bad-args", "domain": "brokengold", "user": {"instruction": "hi"},
              "gold": {"actions": [{"name": "get_account", "arguments": {"wrong": 1}}]}},
             {"id": "refused", "domain": "brokengold", "user": {"instruction": "hi"},
              "gold": {"actions": [{"name": "get_account", "arguments": {"account_id": "nope"}}]}}]
    (data / "tasks.json").write_text(json.dumps(tasks))
    db = str(tmp_path / "g.sqlite")
    result = tau("run", "--plugins", "brokengold_pack", "--trials", "1", "--db", db, "--no-progress")
    assert result.exit_code == 1
    line = result.output.strip().splitlines()[-1]
    assert "3 task(s) have gold that does not replay" in line and "--skip-broken" in line
    assert "tasks.json: task 'missing-tool': gold action 1 (no_such_tool)" in line
    assert "task 'bad-args': gold action 0 (get_account)" in line and "task 'refused'" in line
    result = tau("run", "--plugins", "brokengold_pack", "--trials", "1", "--db", db, "--no-progress",
                 "--skip-broken")
    assert result.exit_code == 0, result.output
    assert "skipping (--skip-broken)" in result.output and "missing-tool" in result.output
    check = tau("tasks", "brokengold", "--check", "--plugins", "brokengold_pack")
    assert check.exit_code == 1 and "1 of 4 task(s)" in check.output
    # a run started before the gold broke: --resume refuses the same way, and finishes with --skip-broken
    good2 = {**tasks[0], "id": "good2"}
    (data / "tasks.json").write_text(json.dumps([tasks[0], good2]))
    db2 = str(tmp_path / "resume.sqlite")
    first = tau("run", "--plugins", "brokengold_pack", "--trials", "1", "--db", db2, "--no-progress")
    assert first.exit_code == 0, first.output
    import sqlite3

    with sqlite3.connect(db2) as conn:
        [run_id] = [r[0] for r in conn.execute("SELECT run_id FROM runs")]
        conn.execute("UPDATE trials SET status = 'error'")
    good2["gold"] = tasks[1]["gold"]
    (data / "tasks.json").write_text(json.dumps([tasks[0], good2]))
    again = tau("run", "--resume", run_id, "--db", db2, "--no-progress")
    assert again.exit_code == 1 and "task 'good2': gold action 1 (no_such_tool)" in again.output
    again = tau("run", "--resume", run_id, "--db", db2, "--no-progress", "--skip-broken")
    assert again.exit_code == 0, again.output
    assert "skipping (--skip-broken)" in again.output and "good2" in again.output


def test_an_unimportable_lazy_domain_target_is_one_line(plugin_module, tau, tmp_path):
    """Failure 8: register("x", "mod:attr") whose import fails printed a traceback."""
    plugin_module("lazy_broken_pack", """
        from tau_emotion.core import hookimpl

        @hookimpl
        def tau_register_domains(register):
            register("lazybroken", "no_such_module_anywhere:DOMAIN")
    """)
    result = tau("run", "--plugins", "lazy_broken_pack", "--db", str(tmp_path / "l.sqlite"), "--no-progress")
    assert result.exit_code == 1
    assert "lazybroken" in result.output and "no_such_module_anywhere" in result.output
    assert "Traceback" not in result.output


def test_negative_waits_and_zero_counts_are_rejected_by_click(tau):
    """Failure 8: --retry-wait -5 was accepted."""
    for args in (["--retry-wait", "-5"], ["--max-retries", "-1"], ["--model-timeout", "0"], ["--trials", "0"],
                 ["--concurrency", "0"], ["--agent-temperature", "-1"], ["--tool-timeout", "0"], ["--tasks", "-2"]):
        result = tau("run", "--plugins", "mock", *args)
        assert result.exit_code == 2, (args, result.output)
        assert "range" in result.output or "Invalid value" in result.output


def test_every_trial_failing_in_a_different_place_still_stores_each_once(run_mock):
    """Containment: a mix of failures across trials; each is stored once and the run exits with a summary."""

    class Flaky:
        def __init__(self, episode):
            self.kind = (episode.trial + hash(episode.task.id)) % 3
            if self.kind == 0:
                raise RuntimeError("ctor")
            self.n = 0

        async def act(self, history):
            self.n += 1
            if self.kind == 1:
                raise KeyError("act")
            return _call("find_owner", _deep(400)) if self.n < 3 else Message(role="assistant", content="bye")

    run, summary, results = run_mock(Agents(flaky=Flaky), agent="flaky", trials=4, max_steps=5)
    pairs = [(r.task_id, r.trial) for r in results]
    assert len(pairs) == len(set(pairs)) == len(run.tasks) * 4
    assert summary["errors"] >= 1
