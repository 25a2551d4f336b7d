"""The fault-server matrix: every fault a model server can produce is retried, or stored as that trial's error.

A real HTTP server on 127.0.0.1 (tests/openai_server.py) plays the agent's model. Retry waits and
timeouts are tiny so the matrix stays fast.
"""

from __future__ import annotations

import json
import random

import pytest

from tau_emotion.core.models import RunConfig
from tau_emotion.core.runner import prepare_run, run_sync

GOOD = {"content": "All done, goodbye."}
INJECTED = "INJECTED-STALE-REPLY"


def _raw(usage: str, content: str = GOOD["content"]) -> str:
    return ('{"id": "r", "object": "chat.completion", "model": "agent-model", "choices": [{"index": 0, "message": '
            f'{{"role": "assistant", "content": "{content}"}}, "finish_reason": "stop"}}], "usage": {usage}}}')


STALE = ("HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: "
         f"{len(_raw('{}', INJECTED))}\r\n\r\n{_raw('{}', INJECTED)}")
DEEP = json.dumps(json.loads("{\"a\":" * 300 + "1" + "}" * 300))

#: fault -> what must happen to the trial: "retried" (the next reply is used), "error" (stored as error naming
#: the model and endpoint) or "tool_error" (the agent gets a tool error and the episode goes on)
FAULTS = {
    "429": ({"status": 429}, "retried"),
    "500": ({"status": 500}, "retried"),
    "503-html": ({"status": 503, "html": True}, "retried"),
    "timeout": ({"sleep": 1.0}, "retried"),
    "trickle": ({"trickle": 1.0, "content": "x" * 200}, "retried"),
    "malformed-json": ({"raw": '{"id": "x", "choices": [{"message": {"role": "assis'}, "retried"),
    # issue 35: a 200 whose body is not a completion is the server's fault, retried like a 5xx
    "html-200": ({"raw": "<html><body>Bad gateway</body></html>"}, "retried"),
    "body-a-list": ({"raw": "[1, 2, 3]"}, "retried"),
    "choices-a-number": ({"raw": '{"id": "x", "choices": 5}'}, "retried"),
    "message-a-string": ({"raw": '{"id": "x", "choices": [{"message": "All done."}]}'}, "retried"),
    "deep-body": ({"raw": "[" * 100_000}, "retried"),
    "empty-choices": ({"choices": []}, "retried"),
    "null-message": ({"null_message": True}, "retried"),
    "garbled-arguments": ({"tool_calls": [{"name": "find_owner", "arguments": '{"name": "Ada", ]]'}]}, "tool_error"),
    "garbled-name": ({"tool_calls": [{"name": "", "arguments": "{}"}]}, "tool_error"),
    "nested-arguments": ({"tool_calls": [{"name": "find_owner", "arguments": DEEP}]}, "tool_error"),
    "nan-arguments": ({"tool_calls": [{"name": "transfer", "arguments":
                                       '{"from_account": "acc-1", "to_account": "acc-2", "amount": NaN}'}]},
                      "tool_error"),
    "drop-before": ({"drop": "before"}, "retried"),
    "drop-mid": ({"drop": "mid", "content": "y" * 500}, "retried"),
    # issue 24: replies that were stored as unreadable ok rows, desynchronised the pool or bloated the store
    "usage-infinite": ({"raw": _raw('{"prompt_tokens": 1e400, "completion_tokens": 1, "total_tokens": 1e400}')}, "ok"),
    "usage-text": ({"raw": _raw('{"prompt_tokens": "n/a", "completion_tokens": NaN, "total_tokens": 3}')}, "ok"),
    "bytes-after-reply": ({"content": GOOD["content"], "extra": STALE}, "ok"),
    "continue-100": ({"content": GOOD["content"], "continue": True}, "ok"),
    "huge-reply": ({"content": "z", "pad": (32 << 20) + 10}, "retried"),
    "huge-tool-name": ({"tool_calls": [{"name": "n" * 1_000_000, "arguments": "{}"}]}, "tool_error"),
}


def _config(server, **kw):
    return RunConfig(plugins=["mock"], agent="tool_calling", max_steps=6,
                     options={"agent": {"agent_model": "openai/agent-model", "agent_api_base": server.base_url},
                              "progress": {"no_progress": True},
                              "model_calls": {"retry_wait": 0.01, "max_retries": 2, "model_timeout": 0.5}}, **kw)


@pytest.mark.slow
@pytest.mark.parametrize("fault", sorted(FAULTS))
def test_each_fault_is_retried_or_stored_as_error(fault, openai_server, tmp_path):
    reply, expected = FAULTS[fault]
    openai_server.script("agent-model", reply)
    openai_server.respond("agent-model", GOOD)
    run = prepare_run(_config(openai_server, task_ids=["mock-001"], trials=1), str(tmp_path / "f.sqlite"))
    run_sync(run)
    [result] = run.store.results(run.run_id)
    agent_calls = [r for r in openai_server.requests if r.get("model") == "agent-model"]
    assert INJECTED not in result.model_dump_json()
    if expected == "ok":  # the reply itself is used, and the row reads back
        assert result.status == "ok", result.error
        assert result.messages[1].content == GOOD["content"]
        assert run.store.done_trials(run.run_id) == {("mock-001", 0)}
    elif expected == "retried" or (expected == "retried_or_error" and result.status == "ok"):
        assert result.status == "ok", result.error
        assert len(agent_calls) >= 2  # the fault, then the retry that got the good reply
        assert result.messages[1].content == GOOD["content"]
        assert result.usage["retries"] == 1  # the one fault, counted in the result (whatever process ran it)
    elif expected == "tool_error":
        assert result.status == "ok", result.error
        tool = next(m for m in result.messages if m.role == "tool")
        assert tool.error and tool.content.startswith("Error")
    else:
        assert result.status == "error" and "agent-model" in result.error and openai_server.base_url in result.error


MALFORMED = ["malformed-json", "html-200", "body-a-list", "choices-a-number", "message-a-string", "deep-body"]


@pytest.mark.parametrize("client", ["openai", "litellm"])
@pytest.mark.parametrize("fault", MALFORMED)
def test_a_200_that_is_not_a_completion_is_retried_by_both_clients(fault, client, openai_server, tmp_path):
    openai_server.script("agent-model", FAULTS[fault][0])
    openai_server.respond("agent-model", GOOD)
    config = _config(openai_server, task_ids=["mock-001"], trials=1)
    config.options["agent"]["agent_client"] = client
    config.options["model_calls"]["model_timeout"] = 30.0  # litellm's first call imports for seconds: no timeout here
    run = prepare_run(config, str(tmp_path / "m.sqlite"))
    run_sync(run)
    [result] = run.store.results(run.run_id)
    assert result.status == "ok", result.error
    assert result.messages[1].content == GOOD["content"] and result.usage["retries"] == 1


@pytest.mark.slow
@pytest.mark.parametrize("fault", ["500", "empty-choices", "null-message", "timeout", "html-200"])
def test_a_fault_that_persists_is_stored_as_error_naming_model_and_endpoint(fault, openai_server, tmp_path):
    openai_server.respond("agent-model", FAULTS[fault][0])
    config = _config(openai_server, task_ids=["mock-001"], trials=1)
    config.options["model_calls"].update(max_retries=1, model_timeout=0.2)
    run = prepare_run(config, str(tmp_path / "p.sqlite"))
    summary = run_sync(run)
    [result] = run.store.results(run.run_id)
    assert result.status == "error" and summary["errors"] == 1
    assert "openai/agent-model" in result.error and openai_server.base_url in result.error
    assert "after 2 attempts" in result.error
    assert "IndexError" not in result.error


@pytest.mark.parametrize("trials,concurrency", [(8, 32), pytest.param(64, 256, marks=pytest.mark.slow)])
def test_concurrent_episodes_against_a_random_mix_of_faults_store_every_trial_once(trials, concurrency,
                                                                                    openai_server, tmp_path):
    """benchmarks/fault_storm.py in a test: 32, then 256 concurrent episodes; every trial stored once, readable."""
    rng = random.Random(7)
    kinds = sorted(FAULTS)
    first = list(kinds)  # every fault is served at least once, then at random
    served = []

    def reply(body):
        roll = rng.random()
        if first or roll < 0.35:
            kind = first.pop() if first else rng.choice(kinds)
            served.append(kind)
            return dict(FAULTS[kind][0])
        return {"content": "Done. ###STOP###"} if roll < 0.6 else GOOD

    openai_server.respond("agent-model", reply)
    config = _config(openai_server, trials=trials, concurrency=concurrency)
    config.options["model_calls"].update(max_retries=1, model_timeout=2.0 if concurrency > 32 else 0.4)
    run = prepare_run(config, str(tmp_path / "storm.sqlite"))
    summary = run_sync(run)
    rows = run.store.conn.execute("SELECT task_id, trial, status FROM trials WHERE run_id = ?",
                                  (run.run_id,)).fetchall()
    pairs = [(t, k) for t, k, _ in rows]
    assert len(pairs) == len(set(pairs)) == len(run.tasks) * trials == concurrency
    assert summary["errors"] == sum(s == "error" for _, _, s in rows)
    assert set(served) == set(kinds)
    results = run.store.results(run.run_id)  # every row reads back, and none holds the injected stale reply
    assert not [r.error for r in results if r.error and "cannot be read back" in r.error]
    assert run.store.done_trials(run.run_id) == {(t, k) for t, k, s in rows if s == "ok"}
    assert not [r.task_id for r in results if INJECTED in r.model_dump_json()]
