"""Every row stored as ok reads back (issue 24, item 1): non-finite numbers never reach the store, a row is
validated before it is committed, and a row that cannot be read is never counted as done by `--resume`."""

from __future__ import annotations

import json
import math

import pytest

from tau_emotion.core.models import EpisodeResult, Message, RunConfig, Termination
from tau_emotion.core.runner import prepare_run, resume_run, run_sync
from tests.reliability.conftest import Agents


def _reply_with_usage(usage_json: str) -> dict:
    return {"raw": '{"id": "x", "object": "chat.completion", "model": "agent-model", "choices": [{"index": 0, '
                   '"message": {"role": "assistant", "content": "All done, goodbye."}, "finish_reason": "stop"}], '
                   f'"usage": {usage_json}}}'}


def _server_run(server, tmp_path, name):
    config = RunConfig(plugins=["mock"], agent="tool_calling", max_steps=4, task_ids=["mock-001"], trials=1,
                       options={"agent": {"agent_model": "openai/agent-model",
                                                 "agent_api_base": server.base_url},
                                "progress": {"no_progress": True},
                                "model_calls": {"retry_wait": 0.01, "max_retries": 0}})
    run = prepare_run(config, str(tmp_path / f"{name}.sqlite"))
    run_sync(run)
    return run


@pytest.mark.parametrize("usage", ['{"prompt_tokens": 1e400, "completion_tokens": 5, "total_tokens": 1e400}',
                                   '{"prompt_tokens": "n/a", "completion_tokens": NaN, "total_tokens": -Infinity}'])
def test_a_reply_with_non_finite_or_text_usage_is_stored_ok_and_reads_back(usage, openai_server, tmp_path):
    """Failure: `1e400` became infinity, was stored as null, and the ok row failed validation on read;
    `"n/a"` failed the whole trial."""
    openai_server.respond("agent-model", _reply_with_usage(usage))
    run = _server_run(openai_server, tmp_path, "usage")
    [result] = run.store.results(run.run_id)
    assert result.status == "ok", result.error
    assert result.messages[1].content == "All done, goodbye."
    assert all(math.isfinite(v) for v in result.usage.values())
    assert result.usage["prompt_tokens"] == 0.0  # not a finite number: counted as 0
    assert run.store.done_trials(run.run_id) == {("mock-001", 0)}


def test_an_agent_reporting_nan_cost_is_stored_ok_and_readable(run_mock):
    class NanAgent:
        def __init__(self, episode):
            pass

        async def act(self, history):
            message = Message(role="assistant", content="done ###STOP###", usage={"cost": float("nan"), "tokens": 3})
            message.usage["late"] = float("inf")  # set after construction: still never stored
            return message

    run, summary, results = run_mock(Agents(nan=NanAgent), agent="nan", task_ids=["mock-001"])
    [result] = results
    assert result.status == "ok", result.error
    assert result.usage["tokens"] == 3.0 * result.n_steps and "cost" not in result.usage
    assert result.messages and all(math.isfinite(v) for m in result.messages for v in (m.usage or {}).values())


def test_a_result_that_would_not_read_back_is_stored_as_that_trials_error(run_mock, monkeypatch):
    """A value the serialiser writes as null (here a NaN reward slipped in unvalidated) never becomes an ok row."""
    import tau_emotion.core.episode as episode

    real = episode.result_of

    def nan_reward(*args, **kwargs):
        result = real(*args, **kwargs)
        return EpisodeResult.model_construct(**{**dict(result), "reward": float("nan")})

    monkeypatch.setattr(episode, "result_of", nan_reward)
    run, summary, results = run_mock(task_ids=["mock-001"], trials=2)
    assert [r.status for r in results] == ["error", "error"]
    assert all("storing the result" in r.error for r in results)
    assert run.store.done_trials(run.run_id) == set()


def test_resume_reruns_an_ok_row_that_cannot_be_read(run_mock, tmp_path):
    run, summary, results = run_mock(task_ids=["mock-001", "mock-002"], trials=1, db="resume.sqlite")
    assert {r.status for r in results} == {"ok"}
    run.store.conn.execute("UPDATE trials SET result = ? WHERE task_id = 'mock-001'",
                           (json.dumps({"task_id": "mock-001", "reward": None}),))
    run.store.conn.commit()
    assert run.store.done_trials(run.run_id) == {("mock-002", 0)}
    again = resume_run(run.run_id, str(tmp_path / "resume.sqlite"))
    assert [(t.id, k) for t, k in again.pending] == [("mock-001", 0)]
    run_sync(again)
    assert {r.status for r in again.store.results(run.run_id)} == {"ok"}


def test_non_finite_usage_never_validates_into_a_model():
    result = EpisodeResult(task_id="t", domain="d", trial=0, reward=1.0, success=True,
                           termination=Termination(reason="done"), usage={"a": float("inf"), "b": "7", "c": "x"})
    assert result.usage == {"b": 7.0}
    with pytest.raises(ValueError):
        EpisodeResult(task_id="t", domain="d", trial=0, reward=float("nan"), success=True,
                      termination=Termination(reason="done"))
