"""The tool_calling agent and the llm user against a real OpenAI-compatible server on 127.0.0.1."""

import json

from tau_emotion.core.models import RunConfig
from tau_emotion.core.runner import prepare_run, run_sync


def _config(server, **kw):
    base = dict(plugins=["mock"], task_ids=["mock-001"], trials=1, agent="tool_calling", user="llm",
                options={"agent": {"agent_model": "openai/agent-model", "agent_api_base": server.base_url},
                         "user": {"user_model": "openai/user-model", "user_api_base": server.base_url},
                         "progress": {"no_progress": True}, "model_calls": {"retry_wait": 0.01, "max_retries": 2}})
    base.update(kw)
    return RunConfig(**base)


def test_tool_calling_agent_and_llm_user_solve_a_task(openai_server, tmp_path):
    openai_server.script(
        "agent-model",
        {"content": "Sure. What is your full name?"},
        # malformed tool call: invalid JSON arguments -> error returned to the agent, episode goes on
        {"tool_calls": [{"name": "find_owner", "arguments": '{"name": "Ada Park"'}]},
        {"status": 500},  # a server error, retried
        {"tool_calls": [{"name": "find_owner", "arguments": {"name": "Ada Park"}}]},
        {"content": "I will move 200 dollars from acc-1 to acc-2. Shall I proceed?"},
        {"tool_calls": [{"name": "transfer", "arguments": {"from_account": "acc-1", "to_account": "acc-2", "amount": 200}}]},
        {"content": "Done. The new balance of acc-2 is $235.50... precisely 235.5 dollars."},
    )
    openai_server.script(
        "user-model",
        {"content": "Hi, I'd like to move 200 dollars from acc-1 to acc-2."},
        {"content": "Ada Park."},
        {"content": "Yes. ###STOP###"},  # the premature-stop guard must hold the token back here
        {"content": "Thanks, that's all.\n###STOP###"},
    )
    run = prepare_run(_config(openai_server), str(tmp_path / "r.sqlite"))
    summary = run_sync(run)
    [result] = run.store.results(run.run_id)
    assert result.status == "ok", result.error
    assert result.reward == 1.0, result.parts
    assert result.termination.reason == "user_stop"
    tool_msgs = [m for m in result.messages if m.role == "tool"]
    assert tool_msgs[0].error and "not valid JSON" in tool_msgs[0].content
    assert not tool_msgs[1].error
    # the 500 was retried: 6 agent replies were served from 7 agent requests
    agent_requests = [r for r in openai_server.requests if r["model"] == "agent-model"]
    assert len(agent_requests) == 7
    assert agent_requests[0]["tools"][0]["type"] == "function"
    assert "Mock bank policy" in agent_requests[0]["messages"][0]["content"]
    # the user model saw the instruction; its "Yes. ###STOP###" was kept as "Yes."
    user_requests = [r for r in openai_server.requests if r["model"] == "user-model"]
    assert "Ada Park" in user_requests[0]["messages"][0]["content"]
    assert [m.content for m in result.messages if m.role == "user"][2] == "Yes."
    assert summary["pass_hat_k"]["1"] == 1.0
    assert result.usage["total_tokens"] == 15 * (6 + 4)


def test_unreachable_model_server_records_error_and_other_trials_finish(tmp_path):
    config = RunConfig(plugins=["mock"], task_ids=["mock-001", "mock-002"], trials=1, agent="tool_calling",
                       options={"agent": {"agent_model": "openai/x", "agent_api_base": "http://127.0.0.1:9/v1"},
                                "progress": {"no_progress": True},
                                # the server goes away after the preflight would have passed
                                "model_calls": {"retry_wait": 0.01, "max_retries": 1, "model_timeout": 2, "no_preflight": True}})
    run = prepare_run(config, str(tmp_path / "r.sqlite"))
    summary = run_sync(run)
    results = run.store.results(run.run_id)
    assert len(results) == 2
    assert all(r.status == "error" for r in results)
    assert "after 2 attempts" in results[0].error
    assert summary["errors"] == 2


def test_server_error_then_success_and_timeout_are_retried(openai_server, tmp_path):
    openai_server.script("agent-model", {"status": 503}, {"status": 429}, {"content": "235.5 it is."})
    openai_server.script("user-model", {"content": "Balance of acc-2 please."}, {"content": "###STOP###"})
    run = prepare_run(_config(openai_server, task_ids=["mock-001"]), str(tmp_path / "r.sqlite"))
    run_sync(run)
    [result] = run.store.results(run.run_id)
    assert result.status == "ok"
    assert result.parts.outputs_found == ["235.5"]
    assert result.parts.db_match is False and result.reward == 0.0


def test_request_payload_is_openai_shaped(openai_server, tmp_path):
    openai_server.script(
        "agent-model",
        {"tool_calls": [{"name": "get_account", "arguments": {"account_id": "acc-9"}}]},
        {"content": "That account does not exist."},
    )
    openai_server.script("user-model", {"content": "Check acc-9."}, {"content": "###STOP###"})
    run = prepare_run(_config(openai_server), str(tmp_path / "r.sqlite"))
    run_sync(run)
    second = [r for r in openai_server.requests if r["model"] == "agent-model"][1]
    roles = [m["role"] for m in second["messages"]]
    assert roles == ["system", "user", "assistant", "tool"]
    assert json.loads(second["messages"][2]["tool_calls"][0]["function"]["arguments"]) == {"account_id": "acc-9"}
    assert "not found" in second["messages"][3]["content"]


def test_timeout_is_retried(openai_server, tmp_path):
    openai_server.script("agent-model", {"sleep": 1.5, "content": "late"}, {"content": "235.5, done."})
    openai_server.script("user-model", {"content": "Balance of acc-2?"}, {"content": "###STOP###"})
    config = _config(openai_server)
    config.options["model_calls"]["model_timeout"] = 0.5
    run = prepare_run(config, str(tmp_path / "r.sqlite"))
    run_sync(run)
    [result] = run.store.results(run.run_id)
    assert result.status == "ok", result.error
    assert [m.content for m in result.messages if m.role == "assistant"] == ["235.5, done."]


def test_cli_exits_non_zero_with_summary_when_the_model_server_is_down(tmp_path, monkeypatch):
    from click.testing import CliRunner

    from tau_emotion.core.cli import build_cli

    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(build_cli(), [
        "run", "--plugins", "mock", "--trials", "1", "--agent", "tool_calling", "--agent-model", "openai/x",
        "--agent-api-base", "http://127.0.0.1:9/v1", "--max-retries", "1", "--retry-wait", "0.01", "--no-preflight",
        "--no-progress", "--summary-json", "s.json"])
    assert result.exit_code == 1
    assert "4 trial(s) ended in error" in result.output and "tau run --resume" in result.output
    summary = json.loads((tmp_path / "s.json").read_text())
    assert summary["errors"] == 4 and summary["terminations"] == {"error": 4}
