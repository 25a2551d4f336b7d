"""Hooks the emotion pack adds (through `tau_addhooks`), so the core stays emotion-free."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pluggy

if TYPE_CHECKING:
    import random

    from tau_emotion.core.models import RunConfig, Task
    from tau_emotion.emotion_pack.taxonomy import Condition

hookspec = pluggy.HookspecMarker("tau_emotion")


@hookspec(firstresult=True)
def tau_emotion_condition(task: Task, config: RunConfig, rng: random.Random) -> Condition | None:
    """Choose the emotion condition for a task that has none. firstresult.

    Return a Condition to use it, or None to fall back to `--emotion` (default: seeded random).
    A plugin can classify the task's own wording here (the classic suites do).
    """
