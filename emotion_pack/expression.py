"""How the offline scripted user expresses a condition: its patience budget and its phrasing.

The scripted user (a separate plugin) is deterministic: it phrases each turn through these
functions with its own seeded `random.Random`, and spends patience on friction until it gives up
with `###UNSATISFIED###` (that token is added by the caller, never here). The numbers live in
`data/patience.json` and the phrases in `data/expression.json`; the rules are described in the
pack's README ("Scripted emotional user").
"""

from __future__ import annotations

import difflib
import json
import random
from collections.abc import Sequence
from functools import cache
from importlib.resources import files
from typing import Any

from tau_emotion.emotion_pack.taxonomy import DIMENSION_NAMES, Condition, parse_condition


@cache
def patience_rules() -> dict[str, Any]:
    """The parsed `data/patience.json` (cached; treat as read-only)."""
    return json.loads(files(__package__).joinpath("data", "patience.json").read_text(encoding="utf-8"))


@cache
def phrases() -> dict[str, Any]:
    """The parsed `data/expression.json` (cached; treat as read-only)."""
    return json.loads(files(__package__).joinpath("data", "expression.json").read_text(encoding="utf-8"))


def _condition(condition: Condition | str) -> Condition:
    return condition if isinstance(condition, Condition) else parse_condition(condition)


def _join(parts: Sequence[str]) -> str:
    return " ".join(part.strip() for part in parts if part and part.strip())


def patience_budget(condition: Condition | str) -> int:
    """How much friction the user tolerates: family base + emotion offset + dimension adjustments, clamped."""
    cond = _condition(condition)
    rules = patience_rules()
    budget = rules["family_base"][cond.family] + rules["emotion_offset"][cond.emotion]
    for dim in DIMENSION_NAMES:
        budget += rules["dimension_adjustment"][dim][getattr(cond, dim)]
    return max(rules["minimum"], min(rules["maximum"], budget))


def friction_kinds() -> list[str]:
    return list(patience_rules()["friction_cost"])


def friction_cost(kind: str) -> int:
    """Patience spent on one friction event: `unknown_question`, `repeated_question` or `no_progress`."""
    costs = patience_rules()["friction_cost"]
    if kind not in costs:
        close = difflib.get_close_matches(kind, list(costs), n=1, cutoff=0.5)
        hint = f"; did you mean '{close[0]}'?" if close else ""
        raise ValueError(f"unknown friction kind '{kind}' (valid: {', '.join(costs)}){hint}")
    return costs[kind]


def friction_level(patience_left: int) -> str:
    """`mild`, `firm` or `final`: the first level in `friction_levels` whose `at_most` bound holds."""
    for rule in patience_rules()["friction_levels"]:
        if rule["at_most"] is None or patience_left <= rule["at_most"]:
            return rule["level"]
    raise ValueError("patience.json friction_levels needs a last level with at_most: null")


def _ensure_sentence(text: str) -> str:
    text = " ".join(text.split())
    return text if not text or text[-1] in ".!?" else text + "."


def opening(condition: Condition | str, rng: random.Random, request: str, feeling: str | None = None) -> str:
    """The first user turn: `request` wrapped in a greeting, an emotional lead and urgency/trust remarks; or, for a
    task with its own feelings text (a Tracer task's `meta.feeling`, written for its situation and read back as its
    condition), the greeting, that text and the request: the generic leads presume a history ("I've tried to sort
    this out several times already") that a task's situation may contradict."""
    cond = _condition(condition)
    bank = phrases()["opening"]
    if feeling and feeling.strip():
        return _join([rng.choice(bank["greeting"][cond.politeness]), _ensure_sentence(feeling.strip()),
                      _ensure_sentence(request)])
    parts = {
        "greeting": rng.choice(bank["greeting"][cond.politeness]),
        "lead": rng.choice(bank["lead"][cond.emotion]),
        "request": _ensure_sentence(request),
        "urgency": rng.choice(bank["urgency"][cond.urgency]),
        "trust": rng.choice(bank["trust"][cond.trust]),
    }
    order = rng.choice(bank["orders"])
    return _join([parts[name] for name in order])


def reply_prefix(condition: Condition | str, rng: random.Random) -> str:
    """A short acknowledgement that starts a later user turn ("Fine.", "Oh, okay, thank you.")."""
    cond = _condition(condition)
    return rng.choice(phrases()["reply_prefix"][cond.family][cond.politeness])


def dont_know(condition: Condition | str, rng: random.Random) -> str:
    """The user's way of saying it does not know a value the agent asked for."""
    cond = _condition(condition)
    bank = phrases()
    return _join([rng.choice(bank["dont_know"][cond.family]), rng.choice(bank["dont_know_tail"][cond.politeness])])


def friction(condition: Condition | str, rng: random.Random, patience_left: int,
             kind: str = "repeated_question") -> str:
    """A complaint about the conversation, sharper as `patience_left` falls (see `friction_level`); a line that
    says the caller told it already (`friction_repeat`) only for a `repeated_question`."""
    cond = _condition(condition)
    bank = phrases()
    tails = bank["friction_tail"]
    lines = bank["friction"][cond.family][friction_level(patience_left)]
    if kind != "repeated_question":
        lines = [line for line in lines if line not in bank["friction_repeat"]] or lines
    return _join([
        rng.choice(lines),
        rng.choice(tails["urgency"][cond.urgency]),
        rng.choice(tails["politeness"][cond.politeness]),
    ])


def give_up(condition: Condition | str, rng: random.Random) -> str:
    """The last sentence before the caller appends `###UNSATISFIED###`."""
    cond = _condition(condition)
    bank = phrases()
    return _join([rng.choice(bank["give_up"][cond.family]), rng.choice(bank["give_up_tail"][cond.politeness])])


__all__ = [
    "dont_know",
    "friction",
    "friction_cost",
    "friction_kinds",
    "friction_level",
    "give_up",
    "opening",
    "patience_budget",
    "reply_prefix",
]
