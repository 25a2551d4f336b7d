"""`tau score`: a stored run re-scored with the current scorer; one trajectory scored from a file."""

import json

import pytest

from tau_emotion.core.models import Message, ToolCall


def _priced_task():
    """A committed test task whose one gold output is an amount (what the agent must say in dollars)."""
    from tau_emotion.core.manager import load_all_plugins

    domain = load_all_plugins().catalog("domains").get("airline")
    return next(t for t in domain.tasks("test") if len(t.gold.outputs) == 1 and t.gold.outputs[0].isdigit()
                and not t.gold.reasons)


@pytest.mark.slow
def test_an_oracle_trajectory_that_says_dollars_scores_1(tau, tmp_path):
    task = _priced_task()
    amount = task.gold.outputs[0]
    result = tau("run", "--plugins", "airline", "--task-ids", task.id, "--trials", "1",
                 "--summary-json", "s.json", "--no-progress")
    assert result.exit_code == 0, result.output
    run_id = json.loads((tmp_path / "s.json").read_text())["run_id"]
    row = json.loads(tau("export", run_id).output.splitlines()[0])
    said = [m for m in row["messages"] if m["role"] == "assistant" and amount in (m["content"] or "")]
    assert said
    for m in said:
        m["content"] = m["content"].replace(amount, f"${amount}.00")
    (tmp_path / "m.json").write_text(json.dumps(row["messages"]))
    out = tau("score", "--domain", "airline", "--task", task.id, "--messages", "m.json", "--json")
    assert out.exit_code == 0, out.output
    scored = json.loads(out.output)
    assert scored["reward"] == 1.0 and scored["parts"]["outputs_found"] == [amount] and scored["parts"]["db_match"]
    for m in said:
        m["content"] = m["content"].replace(f"${amount}.00", f"$1{amount}")
    (tmp_path / "m.json").write_text(json.dumps(row["messages"]))
    scored = json.loads(tau("score", "--domain", "airline", "--task", task.id, "--messages", "m.json",
                            "--json").output)
    assert scored["reward"] == 0.0 and scored["parts"]["outputs_missing"] == [amount]
    assert "0 of 1 trial(s) changed" in tau("score", run_id).output


def test_rescoring_a_run_names_the_trials_whose_reward_changed(tau, tmp_path, make_pack):
    from pathlib import Path

    import tau_emotion.domain_packs.mock as mock

    src = Path(mock.__file__).parent / "data"
    data = make_pack("rescorepack", "rescore", db=(src / "db.json").read_text())
    tasks = [t for t in json.loads((src / "tasks.json").read_text()) if t["id"] in ("mock-001", "mock-002")]
    for t in tasks:
        t["domain"] = "rescore"
    (data / "tasks.json").write_text(json.dumps(tasks))
    result = tau("run", "--plugins", "rescorepack", "--trials", "1", "--summary-json", "s.json", "--no-progress")
    assert result.exit_code == 0, result.output
    run_id = json.loads((tmp_path / "s.json").read_text())["run_id"]
    tasks[0]["gold"]["outputs"] = ["999"]  # the gold changed since the run
    (data / "tasks.json").write_text(json.dumps(tasks))
    out = tau("score", run_id, "--plugins", "rescorepack")
    assert out.exit_code == 0, out.output
    assert "mock-001" in out.output and "+1 -> +0" in out.output and "mock-002" not in out.output
    assert "1 of 2 trial(s) changed" in out.output


@pytest.mark.slow
def test_score_errors_are_one_line(tau, tmp_path):
    (tmp_path / "bad.json").write_text('[{"role": "wizard"}]')
    out = tau("score", "--domain", "airline", "--task", "airline-test-001", "--messages", "bad.json")
    assert out.exit_code == 1 and "bad.json: message 0.role" in out.output
    (tmp_path / "ok.json").write_text("[]")
    out = tau("score", "--domain", "airline", "--task", "nope", "--messages", "ok.json")
    assert out.exit_code == 1 and "domain 'airline' has no task 'nope'" in out.output
    assert tau("score").exit_code == 2


def test_state_is_rebuilt_from_the_tool_calls():
    from tau_emotion.core.manager import get_plugin_manager
    from tau_emotion.core.reward import expected_hash, state_from_messages

    domain = get_plugin_manager(["mock"]).catalog("domains").get("mock")
    task = {t.id: t for t in domain.tasks()}["mock-001"]
    calls = [ToolCall(id=str(i), name=a.name, arguments=a.arguments) for i, a in enumerate(task.gold.actions)]
    state = state_from_messages(domain, [Message(role="assistant", tool_calls=calls)])
    assert state.content_hash == expected_hash(domain, task)
