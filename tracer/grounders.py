"""Building blocks for a pack's goal grounders: what every domain's hints would otherwise rewrite.

Money and date phrasing, a per-database index cache, picking an entity no earlier intent of the
task used, and the choice machinery: the fewest attributes the user must state so that their words
pick exactly one option (a reservation by destination, a card by brand or last digits), never a
value that changes during the task (a gift card's balance).
"""

from __future__ import annotations

import datetime as _dt
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TypeVar

from tau_emotion.core.facts import plural_key
from tau_emotion.tracer.drafts import Choice, Option, Refusal, settle, used_by_earlier_intents

if TYPE_CHECKING:
    from tau_emotion.tracer.drafts import GroundingContext

T = TypeVar("T")


def join_and(items: list[str]) -> str:
    """'a', 'a and b', 'a, b and c' (empty items left out): how a fact list is said."""
    items = [i for i in items if i]
    if len(items) <= 1:
        return "".join(items)
    return ", ".join(items[:-1]) + " and " + items[-1]


def fact_values(value: Any) -> list[Any]:
    """A fact's values, flat: when two intents share a fact key, the merged fact is a list (of lists, for lists);
    a pack's `fact_phrase` words each value."""
    if isinstance(value, list):
        return [x for v in value for x in fact_values(v)]
    return [value]


ValueWords = Callable[[Any], str] | dict[str, str]
FactWords = str | tuple[str, str] | tuple[str, ValueWords] | tuple[str, str, ValueWords] | Callable[[list[str]], str]


def _row(row: FactWords) -> tuple[str, str, ValueWords | None]:
    """(wording of one value, of several, how one value is said) of a `fact_wording` row."""
    if isinstance(row, str):
        return row, row, None
    if len(row) == 2 and not isinstance(row[1], str):
        return row[0], row[0], row[1]
    return row[0], row[1], (row[2] if len(row) == 3 else None)


def fact_wording(table: dict[str, FactWords], word: Callable[[str, Any], str] | None = None,
                 unsaid: Iterable[str] = ()) -> Callable[[str, Any], str | None]:
    """A pack's `fact_phrase` from a table: fact key -> how the instruction says it, with `{}` for the values.

    A row is one wording for one value and several ("the trip goes to {}"), or a pair (one, several) when they
    differ ("the trip goes to {}", "the trips go to {}"); either may end with how one value is said: a function
    of the value (`month_day`) or a dict from value to words (values not in it are said as they are). A row may
    instead be a function of the worded values, for a wording of its own. Without a row's own, each value is
    said by `word(key, value)` (default `str`); the values are joined with "and". A key a merge made plural
    (`plural_key`: "reservation_ids") finds its singular's row; keys in `unsaid` are left out of the
    instruction ("": another fact's words say them); any other key gets None (the Tracer's generic wording).
    """
    silent = set(unsaid)

    def say(base: str, how: ValueWords | None, value: Any) -> str:
        if isinstance(how, dict):
            return how.get(str(value), str(value))
        if how is not None:
            return how(value)
        return word(base, value) if word else str(value)

    def fact_phrase(key: str, value: Any) -> str | None:
        if key in silent:
            return ""
        base = next((k for k in table if key in (k, plural_key(k))), None)
        if base is None:
            return None
        row = table[base]
        if callable(row):
            return row([say(base, None, v) for v in fact_values(value)])
        one, several, how = _row(row)
        words = [say(base, how, v) for v in fact_values(value)]
        return (several if len(words) > 1 else one).format(join_and(words))

    return fact_phrase


def money(value: float) -> str:
    """An amount as a gold output says it: '150', '12.50'."""
    value = round(value, 2)
    return str(int(value)) if value == int(value) else f"{value:.2f}"


def month_day(date: str) -> str:
    """'2024-05-17' -> 'May 17'."""
    d = _dt.date.fromisoformat(date[:10])
    return f"{d.strftime('%B')} {d.day}"


def shift_date(date: str, days: int) -> str:
    """'2024-05-17', 2 -> '2024-05-19'."""
    return (_dt.date.fromisoformat(date[:10]) + _dt.timedelta(days=days)).isoformat()


def days_between(start: str, end: str) -> int:
    return (_dt.date.fromisoformat(end[:10]) - _dt.date.fromisoformat(start[:10])).days


def day_period(clock: str) -> str:
    """'14:05' -> 'afternoon'."""
    hour = int(clock[:2])
    return "morning" if hour < 12 else ("afternoon" if hour < 17 else "evening")


def difference(one: float | Sequence[float], other: float | Sequence[float], times: int = 1) -> tuple[str, float]:
    """How much two sums differ, times `times`, and the `calculate` expression for it, the larger sum first so the
    figure has no sign: (250, 300) -> ("300 - 250", 50); ([100, 80], 150, 2) -> ("(100 + 80 - 150) * 2", 60).
    A sum of several terms is written term by term: the larger one's joined by "+", the smaller one's each subtracted."""
    terms = [[one] if isinstance(one, (int, float)) else list(one), [other] if isinstance(other, (int, float)) else list(other)]
    high, low = sorted(terms, key=sum, reverse=True)
    text = " + ".join(map(str, high)) + " - " + " - ".join(map(str, low))
    return (f"({text}) * {times}" if times > 1 else text), (sum(high) - sum(low)) * times


def bill(*lines: tuple[float | Sequence[float], int]) -> tuple[str, float]:
    """What a bill comes to and the `calculate` expression for it: each line is a price (or several, added) times a
    count, and a line counted 0 times is left out: (([120, 80], 2), (30, 2), (50, 0)) -> ("(120 + 80) * 2 + 30 * 2", 460)."""
    kept = [([p] if isinstance(p, (int, float)) else list(p), count) for p, count in lines if count]
    text = " + ".join(f"({' + '.join(map(str, prices))}) * {count}" if len(prices) > 1 else f"{prices[0]} * {count}"
                      for prices, count in kept)
    return text, sum(sum(prices) * count for prices, count in kept)


def per_database(ctx: GroundingContext, build: Callable[[Any], T]) -> T:
    """`build(database)` computed once per build (lookups over the initial data, kept in `ctx.indexes`)."""
    if build not in ctx.indexes:
        ctx.indexes[build] = build(ctx.domain.database)
    return ctx.indexes[build]


def pick_fresh(ctx: GroundingContext, items: Sequence[dict], key: str, what: str | None = None) -> dict | None:
    """A seeded pick among `items` no earlier intent of the task touched (None when all were)."""
    used = used_by_earlier_intents(ctx, key, what)
    fresh = [r for r in items if r[key] not in used]
    return ctx.rng.choice(fresh) if fresh else None


def refused_calls(ctx: GroundingContext, goal: str, calls: Iterable[tuple[T, dict[str, Any]]],
                  refusals: dict[str, Refusal | dict[str, Refusal]]) -> list[tuple[T, dict[str, Any], Refusal]]:
    """The calls of `goal` that exactly one policy rule forbids, a rule `refusals` names: (item, arguments, refusal).

    `calls` pairs what the pack picks among (a line and a plan) with the goal call's arguments; `refusals` maps a
    rule's name (`@rule` in the pack's rules.py) to how that refusal is told. A rule that forbids for several
    reasons maps to a dict instead, from words of each reason to its refusal: {"booking_rules": {"out of
    network": ..., "sees patients aged": ...}}; a reason none of them is in is left out. A policy challenge picks
    among them.
    """
    out = []
    for item, arguments in calls:
        found = ctx.violations(goal, arguments)
        refusal = refusals.get(found[0].rule) if len(found) == 1 else None
        if isinstance(refusal, dict):
            refusal = next((r for words, r in refusal.items() if words in found[0].reason), None)
        if refusal is not None:
            out.append((item, arguments, refusal))
    return out


#: how a payment instrument is named, from the fewest words: its type, its brand, its last digits
INSTRUMENT_ORDERS = (("kind",), ("kind", "brand"), ("kind", "last_four"))


def instrument_options(methods: dict[str, dict[str, Any]], kinds: dict[str, str] | None = None) -> list[Option]:
    """A user's payment methods (id -> row) as the options of a choice, each described as a person names it.

    `kind` is the row's `source` in words ("credit_card" -> "credit card", or as `kinds` says: {"paypal":
    "PayPal account"}); `brand` is the row's `brand` or `bank`; `last_four` the row's own (a card's
    printed digits) and nothing else: the tail of an internal id (`paypal_1488918`, `gift_card_7412`) is no
    number a customer knows, so an instrument without one is named by kind and brand alone; `balance` (the row's `balance` or `amount`) is there for a
    `usable` test only: it changes during a task, so no words name it.
    """
    options = []
    for pid, m in methods.items():
        attrs = {"kind": (kinds or {}).get(m["source"], m["source"].replace("_", " ")),
                 "brand": m.get("brand") or m.get("bank"), "last_four": m.get("last_four"),
                 "balance": m.get("balance", m.get("amount"))}
        options.append(Option(pid, {k: v for k, v in attrs.items() if v is not None}))
    return options


@dataclass
class Instrument:
    """A payment instrument the user picked, and the words that make it the only fit ("Visa credit card")."""

    option: Option
    choice: Choice
    words: str

    @property
    def value(self) -> Any:
        return self.option.value

    def facts(self, digits: str, key: str = "payment_method") -> dict[str, Any]:
        """The user's facts about it: its words under `key`, and its last four under `digits` when the words say them."""
        out = {key: self.words}
        if "last_four" in self.choice.selectors:
            out[digits] = self.option.attrs["last_four"]
        return out


def name_instrument(what: str, pick: Option, options: list[Option]) -> tuple[Choice, str] | None:
    """(choice, words) naming a payment instrument so that it is the only fit: 'credit card', 'Visa credit
    card', 'gift card ending in 4529'. Options carry `kind` ('credit card'), optionally `brand` and
    `last_four`; a balance is never used, because it changes during the task. A brand in lower case is
    capitalised ('visa' -> 'Visa'); one with capitals is kept ('US Bank')."""
    settled = settle(what, pick.value, options, pick.attrs, INSTRUMENT_ORDERS)
    if settled is None:
        return None
    attrs, said = pick.attrs, settled.selectors
    if "last_four" in said:
        return settled, f"{attrs['kind']} ending in {attrs['last_four']}"
    if "brand" in said:
        brand = str(attrs["brand"])
        return settled, f"{brand.title() if brand == brand.lower() else brand} {attrs['kind']}"
    return settled, attrs["kind"]


def pick_instrument(ctx: GroundingContext, what: str, options: list[Option],
                    usable: Callable[[Option], bool] | None = None) -> Instrument | None:
    """A seeded pick among the instruments `usable` allows (default: all), named so that it is the only fit among
    `options` (`name_instrument`), or None when none is usable or no words single it out."""
    fit = [o for o in options if usable is None or usable(o)]
    if not fit:
        return None
    pick = ctx.rng.choice(fit)
    named = name_instrument(what, pick, options)
    return None if named is None else Instrument(pick, *named)
