"""What the database shows once a request is done: derived from the gold by one replay, checked against a state.

A task's builder replays the gold calls once on a scratch state and records, per request, every place of the
database its calls changed (a row's field, a row created or deleted) with the values that show it done: the
value the request's own calls leave there, or one a later request's calls leave (an agent may do a later
request first). The result is the `Goal` of each `RequestPlan`, stored in the task file, so a simulated user
checks progress against the plan and replays nothing. `plan_from_gold` gives a task that has no plan (an
adapter's task, a hand-written one) a one-request plan the same way; that is the one replay a user may make.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from tau_emotion.core.models import Goal, GoalChange, IntentPlan, PlanFact, RequestPlan
from tau_emotion.core.state import canonical_json, thaw

if TYPE_CHECKING:
    from tau_emotion.core.models import Action, Task
    from tau_emotion.core.state import Database, State

Place = tuple[str, str, tuple[Any, ...]]  # table, row key, path inside the row
_ABSENT = object()


def _diff(old: Any, new: Any, path: tuple[Any, ...], out: dict[tuple[Any, ...], Any]) -> None:
    """The leaves where `new` differs from `old`: nested maps field by field, lists and scalars whole; a map that
    was not there gives each of its leaves, a key or row that is gone gives None."""
    if old is _ABSENT and isinstance(new, dict):
        old = {}
    if isinstance(old, dict) and isinstance(new, dict):
        for key in [*new, *(k for k in old if k not in new)]:
            _diff(old.get(key, _ABSENT), new.get(key, _ABSENT), (*path, key), out)
        return
    new = None if new is _ABSENT else new
    if old is _ABSENT or old != new:
        out[path] = new


def goals_from_gold(toolset: Any, database: Database, actions: list[Action], groups: list[list[int]]) -> list[Goal]:
    """One `Goal` per group of gold call indices (a request's calls), from one replay of `actions`."""
    owner = {j: i for i, group in enumerate(groups) for j in group}
    state = database.state()
    rows: dict[tuple[str, str], Any] = {}  # a row as the last replayed call left it (None: absent)
    changed: list[dict[Place, Any]] = []  # per call, the places it changed and what it left there
    for action in actions:
        toolset.call(state, action.name, action.arguments)
        touched = set(rows) | {(t, k) for t, found in state.changed().items() for k in found}
        step: dict[Place, Any] = {}
        for table, key in sorted(touched):
            before = rows[(table, key)] if (table, key) in rows else database.tables.get(table, {}).get(key)
            now = state[table].peek(key)
            now = None if now is None else thaw(now)
            leaves: dict[tuple[Any, ...], Any] = {}
            _diff(_ABSENT if before is None else thaw(before), now, (), leaves)
            step.update({(table, key, path): value for path, value in leaves.items()})
            rows[(table, key)] = now
        changed.append(step)
    goals = [Goal() for _ in groups]
    for i, goal in enumerate(goals):
        places = [p for j, step in enumerate(changed) if owner.get(j) == i for p in step]
        for place in dict.fromkeys(places):
            values = [step[place] for j, step in enumerate(changed) if place in step and owner.get(j, -1) >= i]
            unique = list({canonical_json(v): v for v in values}.values())
            goal.changes.append(GoalChange(table=place[0], key=place[1], path=list(place[2]), values=unique))
        goal.handover = any(toolset.is_terminal(actions[j].name) for j in groups[i] if j < len(actions))
    return goals


def _at(row: Any, path: list[Any]) -> Any:
    for part in path:
        if not isinstance(row, dict) or part not in row:
            return None
        row = row[part]
    return row


def changes_done(state: State, goal: Goal) -> list[bool]:
    """Per change of `goal`, whether `state` shows one of its values there."""
    out = []
    for change in goal.changes:
        row = state[change.table].peek(change.key)
        found = canonical_json(thaw(_at(row, change.path)) if row is not None else None)
        out.append(any(found == canonical_json(v) for v in change.values))
    return out


def plan_from_gold(task: Task, toolset: Any, database: Database, kind: str = "request") -> IntentPlan:
    """A one-request plan for a task its builder gave none: every known fact, the whole gold as its goal."""
    goal = goals_from_gold(toolset, database, task.gold.actions, [list(range(len(task.gold.actions)))])[0]
    facts = [PlanFact(key=k, value=v) for k, v in task.user.known.items() if k != "preferences"]
    return IntentPlan(requests=[RequestPlan(kind=kind, actions=list(range(len(task.gold.actions))), facts=facts,
                                            outputs=list(task.gold.outputs), reasons=list(task.gold.reasons),
                                            goal=goal)])
