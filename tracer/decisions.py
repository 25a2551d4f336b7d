"""Decision rules: a condition the user sets on a figure the agent must look up first.

"If the fare difference is more than $100, keep the flight as it is" is what people say when they
call about a change; it makes the agent read the figure from a tool result and act on it. The
Tracer attaches such a rule to some intents whose request costs money the agent must compute (an
`Output` with an `ask` that is a plain amount, known before the goal call). The threshold is drawn
from the actual amount, so the data decides the branch: above it the user declines (the goal call
is left out of the gold, the agent must still tell the figure), below it the request goes ahead.
Packs need nothing for it beyond an `IntentDraft.decline` phrase ("keep {{my}} flight as it is").

The rule's subject is a noun phrase for the figure: the `Output.noun` the pack declares ("the ticket total"), else
the `ask` when it is one ("the fare difference"); an ask worded as a question ("what the tickets cost {{me}}") makes
no subject ("if what the tickets cost you is more than $50"), so without a declared noun the rule says "the amount".
"""

from __future__ import annotations

import math
import random
import re
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from tau_emotion.tracer.hints import IntentDraft

#: chance that an eligible intent carries a rule, and that the rule's branch declines the request
DECISION_RATE = 0.7
DECLINE_SHARE = 0.5
#: amounts below this are not worth a rule
MIN_AMOUNT = 20
_AMOUNT = re.compile(r"^\d+(\.\d+)?$")
#: an ask worded as an embedded question, which cannot be a sentence's subject
_QUESTION = re.compile(r"^(?:what|how|whether|which|who|when|where|if)\b", re.I)
DEFAULT_NOUN = "the amount"


def rule_noun(ask: str, noun: str | None = None) -> str:
    """The subject of a rule on the figure `ask` asks for: the declared `noun`, else `ask` unless it is a question."""
    if noun:
        return noun
    return DEFAULT_NOUN if _QUESTION.match(ask.strip()) else ask


def _round(value: float, down: bool) -> int:
    step = 50 if value >= 200 else 10
    return int((math.floor if down else math.ceil)(value / step) * step)


def attach_decision(draft: IntentDraft, rng: random.Random, rate: float | None = None) -> None:
    """Maybe give `draft` a decision rule on its first asked amount (seeded; the data picks the branch), with
    probability `rate` (the pack's `TracerHints.decision_rate`, else DECISION_RATE)."""
    if draft.refused or not draft.decline:
        return
    money = next((o for o in draft.outputs if o.ask and not o.from_goal and o.reason is None
                  and _AMOUNT.match(o.text) and float(o.text) >= MIN_AMOUNT), None)
    if money is None or rng.random() >= (DECISION_RATE if rate is None else rate):
        return
    amount = float(money.text)
    if rng.random() < DECLINE_SHARE:
        threshold = _round(amount * rng.uniform(0.4, 0.85), down=True)
        branch = "decline"
    else:
        threshold = _round(amount * rng.uniform(1.2, 2.0), down=False)
        branch = "proceed"
    if threshold <= 0 or threshold == amount:
        return
    draft.decision = {"ask": money.ask, "noun": rule_noun(money.ask, money.noun), "threshold": threshold,
                      "amount": money.text, "branch": branch, "decline": draft.decline}
    if branch == "decline":  # the write does not happen: nothing it would return can be asked for afterwards
        draft.outputs = [o for o in draft.outputs if not o.from_goal]


def rule_text(decision: dict[str, Any], person: dict[str, str], say: Any, frame: int = 0) -> str:
    """'if the fare difference is more than $100, you would rather keep your flight as it is; otherwise go ahead', or
    (frame 1) 'should the fare difference come to more than $100, ...; if not, go ahead': two frames, so that no rule
    sentence is the frame of most of a split's instructions (the audit's sentence-template check). The subject is the
    rule's noun phrase (`rule_noun`), never the question that asks for the figure."""
    rather = "you would rather" if person.get("I") == "you" else "I'd rather"
    ahead = "go ahead" if person.get("I") == "you" else "please go ahead"
    noun = say(decision.get("noun") or rule_noun(decision["ask"]), person)
    limit, decline = decision["threshold"], say(decision["decline"], person)
    if frame % 2:
        return f"should {noun} come to more than ${limit}, {rather} {decline}; if not, {ahead}"
    return f"if {noun} is more than ${limit}, {rather} {decline}; otherwise {ahead}"
