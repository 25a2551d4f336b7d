"""Goals (core/goals.py): what the database shows once a request is done, from one replay of the gold."""

import pytest
from pydantic import ValidationError

from tau_emotion.core.goals import changes_done, goals_from_gold, plan_from_gold
from tau_emotion.core.manager import get_plugin_manager
from tau_emotion.core.models import Task


@pytest.fixture(scope="module")
def retail():
    return get_plugin_manager(["retail"]).catalog("domains").get("retail")


def test_a_goal_is_done_only_once_its_requests_calls_ran(retail):
    task = next(t for t in retail.tasks("test") if t.plan and len(t.plan.requests) >= 2
                and all(r.goal.changes for r in t.plan.requests))
    groups = [r.actions for r in task.plan.requests]
    goals = goals_from_gold(retail.toolset, retail.database, task.gold.actions, groups)
    assert [g.model_dump() for g in goals] == [r.goal.model_dump() for r in task.plan.requests]  # as committed
    state = retail.database.state()
    assert not any(any(changes_done(state, g)) for g in goals)
    for j in groups[0]:
        retail.toolset.call(state, task.gold.actions[j].name, task.gold.actions[j].arguments)
    assert all(changes_done(state, goals[0])) and not all(changes_done(state, goals[1]))
    for group in groups[1:]:
        for j in group:
            retail.toolset.call(state, task.gold.actions[j].name, task.gold.actions[j].arguments)
    assert all(all(changes_done(state, g)) for g in goals)


def test_a_later_requests_value_also_counts(retail):
    """An agent that does the second request first leaves a place at its final value: the first still counts."""
    task = next(t for t in retail.tasks(None) if t.plan and len(t.plan.requests) >= 2
                and {(c.table, c.key) for c in t.plan.requests[0].goal.changes}
                & {(c.table, c.key) for c in t.plan.requests[1].goal.changes})
    shared = {(c.table, c.key, tuple(c.path)) for c in task.plan.requests[1].goal.changes}
    first = [c for c in task.plan.requests[0].goal.changes if (c.table, c.key, tuple(c.path)) in shared]
    assert first and all(len(c.values) >= 1 for c in first)


def test_a_task_without_a_plan_gets_one_request_of_its_whole_gold(retail):
    task = next(t for t in retail.tasks("hand"))
    plan = plan_from_gold(task.model_copy(update={"plan": None}), retail.toolset, retail.database)
    assert len(plan.requests) == 1 and plan.requests[0].actions == list(range(len(task.gold.actions)))
    assert plan.requests[0].outputs == task.gold.outputs


def test_a_plan_is_strict_like_the_rest_of_the_task_file(retail):
    row = next(t for t in retail.tasks("test") if t.plan).model_dump(mode="json")
    row["plan"]["requests"][0]["fact"] = row["plan"]["requests"][0].pop("facts", [])  # a misspelt key
    with pytest.raises(ValidationError, match="fact"):
        Task.model_validate(row)
