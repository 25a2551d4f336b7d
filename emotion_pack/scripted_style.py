"""How the offline `scripted` user sounds and how patient it is under an emotion condition.

The phrasing and the patience budget are data in `expression.py`/`data/patience.json`; the
accounting (friction spends patience; at zero the user gives up) is the scripted user's own,
shared with its neutral style, so the no-emotion control differs only in phrasing and budget.
"""

from __future__ import annotations

import random

from tau_emotion.emotion_pack import expression
from tau_emotion.emotion_pack.taxonomy import Condition
from tau_emotion.plugins.scripted_user import UserStyle


class EmotionalStyle(UserStyle):
    def __init__(self, condition: Condition, rng: random.Random):
        self.condition = condition
        self.rng = rng
        self.budget = expression.patience_budget(condition)
        super().__init__()

    def opening(self, request: str) -> str:
        return expression.opening(self.condition, self.rng, request)

    def next_request(self, request: str) -> str:
        return f"{expression.reply_prefix(self.condition, self.rng)} {request}".strip()

    def answer(self, text: str) -> str:
        return f"{expression.reply_prefix(self.condition, self.rng)} {text}".strip()

    def dont_know(self) -> str:
        return expression.dont_know(self.condition, self.rng)

    def cost(self, kind: str) -> int:
        return expression.friction_cost(kind)

    def complaint(self, patience_left: int) -> str | None:
        return expression.friction(self.condition, self.rng, patience_left)

    def give_up(self) -> str:
        return expression.give_up(self.condition, self.rng)
