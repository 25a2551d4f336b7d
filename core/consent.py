"""What a rule-following simulated user answers to a confirmation request, as far as its decision rule goes.

A customer whose request has a decision rule (`DecisionRule`: "should the price difference come to more than
$2200, I'd rather keep my cabin") decides only once the agent has said the figure: before that, asked to go
ahead, they ask for the figure; after it, they agree when the database puts the figure on the side they go ahead
on and decline otherwise. Without a rule there is nothing to wait for. The scripted user (and any other) calls
`decide`; the procedure's `inform_before_decide` (core/procedure.py) checks the agent's side of the same
exchange. docs/procedure.md.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Literal

from tau_emotion.core.models import DecisionRule, Message
from tau_emotion.core.procedure import value_said
from tau_emotion.core.telling import normalize, numbers_in

Verdict = Literal["yes", "ask", "no"]


def figure_heard(rule: DecisionRule, messages: Iterable[Message]) -> bool:
    """Whether an agent message among `messages` said the rule's deciding figure (its amount, by value)."""
    return any(value_said(rule.amount, normalize(m.content or ""), numbers_in(m.content or ""))
               for m in messages if m.role == "assistant" and m.content)


def decide(rule: DecisionRule | None, messages: Iterable[Message]) -> Verdict:
    """'yes' (no rule, or the figure was heard and is on the side the customer goes ahead on), 'ask' (the figure
    was not said yet) or 'no' (it was, and the customer declines)."""
    if rule is None:
        return "yes"
    if not figure_heard(rule, messages):
        return "ask"
    return "yes" if rule.outcome == "under" else "no"


def decision_words(rule: DecisionRule, verdict: Verdict) -> str:
    """The customer's words for 'ask' and 'no' ('yes' is the style's own confirmation)."""
    if verdict == "ask":
        return f"Before I decide, what is {rule.figure}?"
    return f"No, thank you. With {rule.figure} at {rule.amount}, I would rather {rule.over}."
