"""How a rule-following simulated user (the offline `scripted` user) sounds and how patient it is under an
emotion condition: a `tau_emotion.core.protocols.UserStyle`.

The phrasing and the patience budget are data in `expression.py`/`data/patience.json`; the
accounting (friction spends patience; at zero the user gives up) is the user's own, shared with its
neutral style, so the no-emotion control differs only in phrasing and budget. What an emotion does
not change (confirmations, corrections, restatements, the closing line) is the user's neutral
style's, handed in through `tau_user_style`, so this module imports no user plugin.
"""

from __future__ import annotations

import random

from tau_emotion.core.protocols import UserStyle
from tau_emotion.emotion_pack import expression
from tau_emotion.emotion_pack.taxonomy import Condition


class EmotionalStyle:
    def __init__(self, condition: Condition, rng: random.Random, neutral: UserStyle, feeling: str | None = None):
        self.condition = condition
        self.rng = rng
        self.neutral = neutral
        self.feeling = feeling  # the task's own feelings text, when it has one (Tracer tasks)
        self.budget = expression.patience_budget(condition)

    def opening(self, request: str) -> str:
        return expression.opening(self.condition, self.rng, request, self.feeling)

    def next_request(self, request: str) -> str:
        return f"{expression.reply_prefix(self.condition, self.rng)} {request}".strip()

    def answer(self, text: str) -> str:
        return f"{expression.reply_prefix(self.condition, self.rng)} {text}".strip()

    def confirm(self) -> str:
        return self.neutral.confirm()

    def correct(self, request: str) -> str:
        return self.neutral.correct(request)

    def restate(self, missing: str, request: str) -> str:
        return self.neutral.restate(missing, request)

    def dont_know(self) -> str:
        return expression.dont_know(self.condition, self.rng)

    def complaint(self, patience_left: int, kind: str) -> str | None:
        return expression.friction(self.condition, self.rng, patience_left, kind)

    def give_up(self) -> str:
        return expression.give_up(self.condition, self.rng)

    def done(self) -> str:
        return self.neutral.done()

    def cost(self, kind: str) -> int:
        return expression.friction_cost(kind)
