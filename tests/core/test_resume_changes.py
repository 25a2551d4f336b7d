"""--resume: what defines a run cannot change, its infrastructure can; one process at a time per run."""

import json

import pytest

from tau_emotion.core.errors import TauError
from tau_emotion.core.runner import run_lock


def _first_run(tau):
    result = tau("run", "--plugins", "mock", "--trials", "1", "--tasks", "1", "--summary-json", "s.json", "--no-progress")
    assert result.exit_code == 0, result.output
    return json.loads(open("s.json").read())["run_id"]


def test_resume_refuses_a_changed_definition_and_accepts_concurrency(tau):
    run_id = _first_run(tau)
    refused = tau("run", "--resume", run_id, "--agent", "null", "--trials", "2", "--no-progress")
    assert refused.exit_code == 1
    assert "cannot change what defines the run" in refused.output and "--agent 'oracle' -> 'null'" in refused.output
    assert "--trials 1 -> 2" in refused.output
    model = tau("run", "--resume", run_id, "--agent-model", "openai/other", "--no-progress")
    assert model.exit_code == 1 and "--agent-model None -> 'openai/other'" in model.output
    same = tau("run", "--resume", run_id, "--agent", "oracle", "--concurrency", "2", "--no-progress")
    assert same.exit_code == 0, same.output


def test_a_second_process_cannot_hold_a_running_run(tmp_path):
    db = str(tmp_path / "r.sqlite")
    with run_lock(db, "run-1"):
        import multiprocessing

        ctx = multiprocessing.get_context("fork")
        with ctx.Pool(1) as pool:
            message = pool.apply(_try_lock, (db,))
        assert "is being run by process" in message and "run-1" in message
    with run_lock(db, "run-1"):  # released when the holder is done
        pass


def _try_lock(db):
    try:
        with run_lock(db, "run-1"):
            return "acquired"
    except TauError as exc:
        return str(exc)


@pytest.mark.parametrize("bad", ['{"max_tokens": ', "[1, 2]"])
def test_model_args_must_be_a_json_object(tau, bad):
    result = tau("run", "--plugins", "mock", "--agent", "tool_calling", "--agent-model", "openai/x",
                 "--agent-args", bad, "--no-progress")
    assert result.exit_code != 0 and "agent_args" in result.output
