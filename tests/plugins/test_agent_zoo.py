"""The agent zoo against the emotional scripted user: oracle never loses the user, null and repeater always do."""

import pytest

from tau_emotion.core.models import RunConfig
from tau_emotion.core.runner import prepare_run, run_sync
from tau_emotion.tracer.plan import decision_branches, policy_challenge, refused_calls


def _pick_tasks():
    """From one committed split: two plain write intents, a refusal without handover, and a handover (test first;
    train only if a rebuild ever leaves test without a handover)."""
    from tau_emotion.core.manager import load_all_plugins

    domain = load_all_plugins().catalog("domains").get("airline")
    tools = domain.toolset
    for split in ("test", "train"):
        tasks = domain.tasks(split)
        terminal = [t for t in tasks if any(tools.is_terminal(a.name) for a in t.gold.actions)]
        if terminal:
            break
    two = next(t for t in tasks if len(t.user.intents) == 2 and not policy_challenge(t)
               and not decision_branches(t) and sum(tools[a.name].writes for a in t.gold.actions) == 2)
    refusal = next(t for t in tasks if refused_calls(t) and t not in terminal)
    return split, two, refusal, terminal[0]


SPLIT, TWO, REFUSAL, HANDOVER = _pick_tasks()
TASKS = [TWO.id, REFUSAL.id, HANDOVER.id]


def _run(tmp_path, agent):
    config = RunConfig(plugins=["emotion", "airline"], trials=1, agent=agent, task_ids=TASKS, split=SPLIT,
                       options={"progress": {"no_progress": True}})
    run = prepare_run(config, str(tmp_path / "r.db"))
    run_sync(run)
    return run.store.results(run.run_id)


@pytest.mark.slow
@pytest.mark.parametrize(("agent", "unsatisfied", "successes"),
                         [("oracle", 0, 3), ("null", 3, 0), ("repeater", 3, 0)])
def test_zoo_agents_have_their_expected_endings(tmp_path, agent, unsatisfied, successes):
    results = _run(tmp_path, agent)
    assert sum(r.termination.reason == "unsatisfied" for r in results) == unsatisfied
    assert sum(r.success for r in results) == successes


@pytest.mark.slow
def test_asker_asks_before_it_acts_and_hasty_skips_reads_and_refusals(tmp_path):
    asked = {r.task_id: r for r in _run(tmp_path, "asker")}[TWO.id]
    first = [m for m in asked.messages if m.role == "assistant"][0]
    assert first.content == "Could you tell me the user id?" and TWO.user.known["user_id"] in asked.messages[2].content
    hasty = {r.task_id: r for r in _run(tmp_path, "hasty")}
    calls = [c.name for m in hasty[TWO.id].messages for c in m.tool_calls]
    from tau_emotion.core.manager import load_all_plugins

    tools = load_all_plugins().catalog("domains").get("airline").toolset
    assert calls == [a.name for a in TWO.gold.actions if tools[a.name].writes]
    assert hasty[TWO.id].success and not hasty[REFUSAL.id].success
