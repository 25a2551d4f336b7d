"""The agent zoo against the emotional scripted user: oracle never loses the user, null and repeater always do."""

import pytest

from tau_emotion.core.models import RunConfig
from tau_emotion.core.runner import prepare_run, run_sync

TASKS = ["airline-test-001", "airline-test-012", "airline-test-020"]  # two intents; refusals; a handover


def _run(tmp_path, agent):
    config = RunConfig(plugins=["emotion", "airline"], trials=1, agent=agent, task_ids=TASKS,
                       options={"progress": {"no_progress": True}})
    run = prepare_run(config, str(tmp_path / "r.db"))
    run_sync(run)
    return run.store.results(run.run_id)


@pytest.mark.parametrize(("agent", "unsatisfied", "successes"),
                         [("oracle", 0, 3), ("null", 3, 0), ("repeater", 3, 0)])
def test_zoo_agents_have_their_expected_endings(tmp_path, agent, unsatisfied, successes):
    results = _run(tmp_path, agent)
    assert sum(r.termination.reason == "unsatisfied" for r in results) == unsatisfied
    assert sum(r.success for r in results) == successes


def test_asker_asks_before_it_acts_and_hasty_skips_reads_and_refusals(tmp_path):
    asked = _run(tmp_path, "asker")[0]
    first = [m for m in asked.messages if m.role == "assistant"][0]
    assert first.content == "Could you tell me the user id?" and "yara_brooks_8482" in asked.messages[2].content
    hasty = {r.task_id: r for r in _run(tmp_path, "hasty")}
    calls = [c.name for m in hasty["airline-test-001"].messages for c in m.tool_calls]
    assert calls == ["update_reservation_flights", "update_reservation_passengers"]
    assert hasty["airline-test-001"].success and not hasty["airline-test-012"].success
