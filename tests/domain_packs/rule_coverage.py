"""What a pack's policy rules must do on the pack's own tasks: each names a declared refusal reason, some task
refuses for that reason, and no gold call of the hand or test split breaks a rule."""

from __future__ import annotations

import re
from typing import Any

from tau_emotion.core.models import Action


def check_rules_on_tasks(domain: Any, rules: Any, unrefused: dict[str, str] | None = None) -> None:
    """`unrefused`: rule name -> why no task refuses for it (a gap written down, checked to stay a gap)."""
    unrefused = unrefused or {}
    declared = set(domain.refusal_reasons)
    tasks = domain.tasks(None)
    refused_for = {r for t in tasks for r in t.gold.reasons}
    for rule in rules.RULES:
        named = set(re.findall(r"`(\w+)`", rule.check.__doc__ or "")) & declared
        assert named, f"rule {rule.name} names no declared refusal reason in its docstring"
        if rule.name in unrefused:
            assert not named & refused_for, f"rule {rule.name} is refused by a task now: drop it from `unrefused`"
        else:
            assert named & refused_for, f"no task refuses for rule {rule.name} ({', '.join(sorted(named))})"
    for task in (t for t in tasks if t.split in ("hand", "test")):
        state = domain.database.state()
        for action in task.gold.actions:
            call = Action(name=action.name, arguments=action.arguments)
            assert not domain.violations(state, call), (task.id, action.name, domain.violations(state, call))
            domain.toolset.call(state, action.name, action.arguments)
