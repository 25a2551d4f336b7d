"""How the offline `scripted` user sounds and how patient it is under an emotion condition.

The phrasing and the patience rules are data in `expression.py`/`data/patience.json`; this
class only spends patience on friction and, at zero, gives up with ###UNSATISFIED###.
"""

from __future__ import annotations

import random

from tau_emotion.emotion_pack import expression
from tau_emotion.emotion_pack.taxonomy import Condition
from tau_emotion.emotion_pack.unsatisfied import UNSATISFIED_TOKEN
from tau_emotion.plugins.scripted_user import UserStyle


class EmotionalStyle(UserStyle):
    def __init__(self, condition: Condition, rng: random.Random):
        self.condition = condition
        self.rng = rng
        self.patience = expression.patience_budget(condition)
        self.gave_up = False

    def opening(self, request: str) -> str:
        return expression.opening(self.condition, self.rng, request)

    def next_request(self, request: str) -> str:
        return f"{expression.reply_prefix(self.condition, self.rng)} {request}".strip()

    def answer(self, text: str) -> str:
        return f"{expression.reply_prefix(self.condition, self.rng)} {text}".strip()

    def dont_know(self) -> str:
        return expression.dont_know(self.condition, self.rng)

    def friction(self, kind: str) -> str | None:
        if self.gave_up:
            return f"{expression.give_up(self.condition, self.rng)} {UNSATISFIED_TOKEN}"
        self.patience -= expression.friction_cost(kind)
        if self.patience <= 0:
            self.gave_up = True
            return f"{expression.give_up(self.condition, self.rng)} {UNSATISFIED_TOKEN}"
        return expression.friction(self.condition, self.rng, self.patience)
