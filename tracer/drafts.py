"""What a goal grounder builds: the user, the intent, the choices their words settle, and what they point at.

These are the plain data types of the Tracer's hints API (`tau_emotion.tracer.hints` re-exports them;
a pack imports them from there). `Reference` and `draft()` are the one place where "the entity this
intent is about" (a reservation, a phone line, a family member) is merged into an `IntentDraft`.
"""

from __future__ import annotations

import json
import random
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, TypeVar

from pydantic import BaseModel, ConfigDict

from tau_emotion.core.models import Action

if TYPE_CHECKING:
    from tau_emotion.core.domain import Domain, Violation
    from tau_emotion.core.state import State

T = TypeVar("T")


class Ungrounded(Exception):  # noqa: N818 - a signal, like pytest's Skipped, not an error
    """Raised inside a goal grounder or `persona`: this goal cannot be grounded here (the same as returning None).

    The Tracer catches it where it calls the pack's hints and tries another goal (or another persona), so a
    grounder states what it needs (`need(pick)`, `ctx.choose(options)`) instead of testing and returning None
    at every step.
    """


def need(value: T, why: str = "") -> T:
    """`value` when it is there; otherwise the grounder gives up (`Ungrounded`).

    Not there: None, False, or an empty collection. A number, even 0, is there. Use it on the result of a
    pick (`need(pick_fresh(...))`), a lookup, or a condition the goal rests on (`need(new_date <= LAST_DAY)`).
    """
    if value is None or value is False or (isinstance(value, (list, tuple, dict, set, str)) and not value):
        raise Ungrounded(why)
    return value


def first_grounded(ctx: GroundingContext, *grounders: Callable[[GroundingContext], IntentDraft | None]) -> IntentDraft:
    """The draft of the first of `grounders` that grounds (returns a draft, not None nor `Ungrounded`).

    For a goal grounded in several ways ("change the date" or "change the cabin"), tried in the order given.
    """
    for grounder in grounders:
        try:
            found = grounder(ctx)
        except Ungrounded:
            continue
        if found is not None:
            return found
    raise Ungrounded("no way of grounding this goal fits")


class Rates(BaseModel):
    """The probabilities a pack's grounders draw with: a pack subclasses it with one typed field per knob
    (`Rate`, in [0, 1], with its default and a comment saying what it shapes) and gives an instance as
    `TracerHints.rates`. A grounder asks `ctx.chance("name")`; a misspelt name fails, as a misspelt field does."""

    model_config = ConfigDict(extra="forbid", frozen=True)


@dataclass
class Persona:
    """The simulated user: what they can tell about themselves and how the agent identifies them."""

    name: str
    facts: dict[str, Any]
    #: identification reads the first intent may start with, e.g. {"get_user": [{"user_id": ...}]}
    reads: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    #: the pack's own record of this user (the Tracer never looks inside, but keys sets by it: it must be
    #: hashable, e.g. a user id rather than the user's row)
    entity: Any = None
    #: rows the user's identification writes, table -> key -> row (a session's verified caller): the policy
    #: checks of `GroundingContext.violations` see them, since grounders run before the identification read
    identified: dict[str, dict[str, Any]] = field(default_factory=dict)


@dataclass
class Option:
    """One alternative of a choice: the argument value it stands for and how a person would describe it."""

    value: Any
    attrs: dict[str, Any]


@dataclass
class Choice:
    """A point where the agent must pick one of several valid values; the user's words must pick exactly one.

    `selectors` are attribute values the user states ("nonstop", "on May 24"); `order` is a stated
    ranking such as ("price", "min") for "the cheapest". The choice is determined when filtering the
    options by the selectors and then taking the best by `order` leaves exactly `value`.
    """

    what: str
    value: Any
    options: list[Option]
    selectors: dict[str, Any] = field(default_factory=dict)
    order: tuple[str, str] | None = None

    @classmethod
    def among(cls, what: str, pick: dict[str, Any], rows: Iterable[dict[str, Any]], key: str,
              says: str | Sequence[str] | Callable[[dict[str, Any]], dict[str, Any]]) -> Choice:
        """`pick` chosen among `rows` (records): each an option worth `row[key]`, described by its fields `says`
        ("name", or ("date", "time")) or by `says(row)` ({"month": "May"}); the user states it all for `pick`."""
        if not callable(says):
            fields = (says,) if isinstance(says, str) else tuple(says)
            says = lambda row: {f: row[f] for f in fields}  # noqa: E731
        return cls(what, pick[key], [Option(row[key], says(row)) for row in rows], says(pick))

    @classmethod
    def fewest(cls, what: str, pick: dict[str, Any], rows: Iterable[dict[str, Any]], key: str,
               says: str | Sequence[str] | Callable[[dict[str, Any]], dict[str, Any]],
               orders: Iterable[Sequence[str]]) -> Choice | None:
        """As `among`, but the user states only the fewest words that single `pick` out: the first field set of
        `orders` that does ("destination", then "origin" and "destination"; `settle`), None when none does."""
        full = cls.among(what, pick, rows, key, says)
        return settle(what, full.value, full.options, full.selectors, orders)

    def resolve(self) -> list[Any]:
        """The values still possible given what the user said (distinct, in option order)."""
        left = [o for o in self.options if all(o.attrs.get(k) == v for k, v in self.selectors.items())]
        if self.order and left:
            attr, how = self.order
            ranked = [o for o in left if o.attrs.get(attr) is not None]
            if ranked:
                best = (min if how == "min" else max)(o.attrs[attr] for o in ranked)
                left = [o for o in ranked if o.attrs[attr] == best]
        out: list[Any] = []
        for option in left:
            if option.value not in out:
                out.append(option.value)
        return out


def settle(what: str, value: Any, options: list[Option], wanted: dict[str, Any],
           orders: Iterable[Sequence[str]]) -> Choice | None:
    """The first selector set in `orders` whose stated values leave only `value` (None: no words settle it).

    `orders` go from the fewest to the most words ("destination", then "origin"+"destination", ...);
    attributes that change during a task must not be among them.
    """
    for keys in orders:
        if any(k not in wanted for k in keys):
            continue
        choice = Choice(what, value, options, {k: wanted[k] for k in keys})
        if choice.resolve() == [value]:
            return choice
    return None


@dataclass
class Output:
    """A gold output: a short figure or phrase the agent must tell, and how the user asks for it."""

    text: str
    #: a noun phrase for what the user asks, e.g. "the fare difference" (None: not asked, e.g. a refusal reason)
    ask: str | None = None
    #: the goal call's own result holds it (a refund total); otherwise it must be known before the goal call
    from_goal: bool = False
    #: a refusal's policy reason (declared in the pack's data/refusals.json): the task's gold names
    #: the reason (`gold.reasons`) instead of the keyword `text`, and any declared phrasing explains it
    reason: str | None = None
    #: the figure as the subject of a decision rule, a noun phrase ("the ticket total" where `ask` is "what the
    #: tickets cost {{me}}"); None: `ask` itself when it is a noun phrase, else "the amount" (`decisions.rule_noun`)
    noun: str | None = None


@dataclass(frozen=True)
class Refusal:
    """Why the agent refuses a request the policy forbids: the pack's refusal reason (data/refusals.json) and a
    phrase of the written policy that names it. `draft(..., refusal=...)` makes the intent a refused one."""

    reason: str
    keyword: str
    #: the refused intent's kind, for a table of refusals that each make their own kind ("" when the grounder names it)
    kind: str = ""

    @property
    def outputs(self) -> list[Output]:
        """The refused intent's outputs: the reason the agent must explain."""
        return [Output(self.keyword, reason=self.reason)]


@dataclass
class Mood:
    """The situation as the user lives it, for the feelings generator."""

    event: str
    valence: str = "neutral"  # negative | neutral | positive
    stakes: int = 1  # 0 (trivial) .. 3 (life-changing)
    days_left: int | None = None  # time pressure; None when there is none
    #: other ways the same request may be lived, true of the same records (a booking called off because plans fell
    #: through, or because the meal moved to a friend's home): the design takes the first that gives a condition its
    #: cause when this one gives none (`build.design`), so an emotion does not depend on the request kind
    others: tuple[Mood, ...] = ()


@dataclass
class IntentDraft:
    """One grounded intent: the goal call, what the user says and knows, and which reads may precede it."""

    kind: str
    goal: str
    arguments: dict[str, Any]
    request: list[str]
    facts: dict[str, Any] = field(default_factory=dict)
    #: read tool -> argument sets this intent can use, in order of preference
    reads: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    #: reads that verify a fact the decision rests on (purposeful even when no value flows on)
    evidence: list[str] = field(default_factory=list)
    choices: list[Choice] = field(default_factory=list)
    outputs: list[Output] = field(default_factory=list)
    preferences: list[str] = field(default_factory=list)
    context: str | None = None
    #: policy challenge: the goal call must be refused, so it is not part of the gold trajectory
    refused: bool = False
    #: what the user does when refused: "accept", or "transfer" (insist and get handed over)
    on_refusal: str = "accept"
    #: values the agent computes from the written policy (e.g. a fee from a table)
    policy_values: list[Any] = field(default_factory=list)
    mood: Mood = field(default_factory=lambda: Mood(event="{{I}} need some help"))
    #: the summary passed to the handoff tool when the user insists
    handoff_summary: str = ""
    #: what the user does instead when a decision rule goes against the request ("keep {{my}} flight as it
    #: is"); None: this intent takes no decision rule (see `decisions.py`)
    decline: str | None = None
    #: set by the Tracer: the user's decision rule on a figure the agent must look up (see `decisions.py`)
    decision: dict[str, Any] | None = None

    @property
    def declined(self) -> bool:
        """The decision rule's branch says no: the goal call is not made (and no policy forbids it)."""
        return bool(self.decision) and self.decision["branch"] == "decline"


@dataclass
class GroundingContext:
    """What a goal grounder sees: the state after the earlier intents, the persona and a seeded rng."""

    domain: Domain
    state: State
    persona: Persona
    rng: random.Random
    index: int = 0
    is_last: bool = True
    want_challenge: bool = False
    history: list[IntentDraft] = field(default_factory=list)
    #: the pack's tuned probabilities (`TracerHints.rates`), read by `chance`
    rates: Rates = field(default_factory=Rates)
    #: lookups over the initial data, one per build function (`per_database`); the grounder of a build shares one
    #: dict between its candidates, so nothing outlives the build
    indexes: dict[Any, Any] = field(default_factory=dict)

    def rate(self, name: str) -> float:
        """The pack's probability `name` (a field of its `Rates`); a name it does not define is an error."""
        if name not in type(self.rates).model_fields:
            known = ", ".join(type(self.rates).model_fields) or "none"
            raise AttributeError(f"no rate '{name}' in the pack's {type(self.rates).__name__} (rates: {known})")
        return getattr(self.rates, name)

    def chance(self, rate: str) -> bool:
        """One seeded draw that comes out true with the pack's probability `rate` (a field of its `Rates`)."""
        return self.rng.random() < self.rate(rate)

    def band(self, *rates: str) -> int:
        """One seeded draw among bands as wide as the named rates, in order: the index of the band it falls in, or
        len(rates) for the rest (a persona drawn from several pools in given shares)."""
        roll, edge = self.rng.random(), 0.0
        for i, rate in enumerate(rates):
            edge += self.rate(rate)
            if roll < edge:
                return i
        return len(rates)

    def insists(self, rate: str) -> bool:
        """Whether a refused user insists and is handed over: only as the task's last request, then with `rate`."""
        return self.is_last and self.chance(rate)

    def handoff(self, rate: str, summary: str, when: bool = True) -> dict[str, str]:
        """The draft fields of a refusal the user may insist on (`insists`, drawn whether or not `when` holds, so
        the draw does not depend on it) and the handover's summary."""
        return {"on_refusal": "transfer" if self.insists(rate) and when else "accept", "handoff_summary": summary}

    def fits(self, goal: str, arguments: dict[str, Any]) -> bool:
        """Whether a call of `goal` breaks as many policy rules as the challenge count asks: one when a challenge
        is wanted, none otherwise (to filter candidate calls; `challenged` gives up instead)."""
        return len(self.violations(goal, arguments)) == int(self.want_challenge)

    def challenged(self, goal: str, arguments: dict[str, Any],
                   refusals: Refusal | dict[str, Refusal] | None = None) -> Refusal | None:
        """The challenge check every grounder makes: the call breaks exactly one policy rule when a policy challenge
        is wanted and none otherwise (else the grounder gives up). Returns how the refusal is told (`refusals`: one
        `Refusal`, or rule name -> `Refusal`, a rule not named giving up); None when no challenge is wanted, or when
        no `refusals` are given (the check alone, for a grounder that words its refusal itself)."""
        found = self.violations(goal, arguments)
        need(len(found) == int(self.want_challenge))  # `fits`, keeping the violations for the rule's refusal
        if not self.want_challenge or refusals is None:
            return None
        return refusals if isinstance(refusals, Refusal) else need(refusals.get(found[0].rule))

    def peek(self, table: str, key: str) -> Any:
        return self.state[table].peek(key)

    def fresh(self, rows: Iterable[dict[str, Any]], key: str, what: str | None = None, *,
              reads: bool = False) -> list[dict[str, Any]]:
        """The rows whose `key` no earlier intent of the task touched (`used_by_earlier_intents`)."""
        used = used_by_earlier_intents(self, key, what, reads=reads)
        return [r for r in rows if r[key] not in used]

    def rows(self, table: str, keys: Iterable[Any]) -> list[dict[str, Any]]:
        """The records of `keys` in `table` now, in the order of `keys` (a key with no record left out)."""
        found = self.state[table]
        return [row for key in keys if (row := found.peek(key)) is not None]

    def call(self, tool: str, arguments: dict[str, Any]) -> Any:
        """The parsed result of calling `tool` (a read) on the current state, as the agent would see it; an error
        result: the grounder gives up (`Ungrounded`)."""
        text, is_error = self.domain.toolset.call(self.state, tool, arguments)
        if is_error:
            raise Ungrounded(f"{tool}: {text}")
        return json.loads(text)

    def choose(self, items: Sequence[T]) -> T:
        """A seeded pick among `items` (`rng.choice`); none to pick from: the grounder gives up (`Ungrounded`)."""
        return self.rng.choice(need(items))

    def violations(self, goal: str, arguments: dict[str, Any], state: Any = None) -> list[Violation]:
        """The policy rules a call of `goal` with `arguments` breaks now (in `state`, default the current one as it
        will be once the persona is identified: with `persona.identified`'s rows)."""
        if state is None:
            state = _Identified(self.state, self.persona.identified) if self.persona and self.persona.identified \
                else self.state
        return self.domain.violations(state, Action(name=goal, arguments=arguments))


def used_by_earlier_intents(ctx: GroundingContext, key: str, what: str | None = None, *, reads: bool = False) -> set[Any]:
    """Values of `key` earlier intents of this task wrote to, stated, or had the user choose (as `what`); with
    `reads`, also the values their reads looked up (a refused request's evidence touched it too)."""
    used = set()
    for d in ctx.history:
        used.update(v for v in (d.arguments.get(key), d.facts.get(key)) if v)
        used.update(c.value for c in d.choices if what is not None and c.what == what)
        if reads:
            used.update(v for sets in d.reads.values() for args in sets if (v := args.get(key)))
    return used


class _Identified:
    """A state seen with some rows replaced (`Persona.identified`), for policy checks; tables read through."""

    def __init__(self, state: Any, rows: dict[str, dict[str, Any]]):
        self.state, self.rows = state, rows

    def __getitem__(self, name: str) -> Any:
        return _Rows(self.state[name], self.rows[name]) if name in self.rows else self.state[name]


class _Rows:
    def __init__(self, table: Any, rows: dict[str, Any]):
        self.table, self.rows = table, rows

    def peek(self, key: str, default: Any = None) -> Any:
        return self.rows[key] if key in self.rows else self.table.peek(key, default)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.table, name)


@dataclass
class Reference:
    """How the user points at the entity an intent is about (a reservation, a line, a family member).

    `facts` the user states about it, `choices` their words settle, `reads` the agent may make to find
    it (tool -> argument sets), `evidence` the reads the decision rests on, and `phrase`, the user's
    words for it ("{{my}} Boston to Denver trip on May 20"). `draft()` puts them before the intent's own.
    """

    phrase: str = ""
    facts: dict[str, Any] = field(default_factory=dict)
    choices: list[Choice] = field(default_factory=list)
    reads: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    evidence: list[str] = field(default_factory=list)
    #: the reference's reads lead the intent's reads (the order the Tracer draws reads in, part of a seeded
    #: build); by default a tool only the reference reads comes after the intent's own tools
    reads_first: bool = False


def draft(kind: str, goal: str, arguments: dict[str, Any], request: list[str], ref: Reference | None = None,
          refusal: Refusal | None = None, verify: dict[str, dict[str, Any]] | None = None, **fields: Any) -> IntentDraft:
    """An `IntentDraft` about `ref`: its facts, choices, reads and evidence come first, then the intent's own.

    With `refusal` the intent is a policy challenge: refused, and the refusal's reason comes first among its outputs;
    a refusal with a kind of its own names the intent (`kind` is then the fallback for one without).
    `verify` (read tool -> one argument set) are reads the decision rests on: each is added to `reads`, after the
    ones given there, and to `evidence`. A fact given as a list of one value is that value, so a grounder that
    handles one item or several states `[i["name"] for i in items]` either way.

    Reads of the same tool keep the reference's argument sets first; a tool only the reference reads comes
    after the intent's own tools, or before them with `ref.reads_first`.
    """
    kind = (refusal.kind or kind) if refusal is not None else kind
    out = IntentDraft(kind=kind, goal=goal, arguments=arguments, request=request, **fields)
    out.facts = {k: v[0] if isinstance(v, list) and len(v) == 1 else v for k, v in out.facts.items()}
    for tool, args in (verify or {}).items():
        out.reads = {**out.reads, tool: [*out.reads.get(tool, []), args]}
        out.evidence = [*out.evidence, *([] if tool in out.evidence else [tool])]
    if refusal is not None:
        out.refused, out.outputs = True, [*refusal.outputs, *out.outputs]
    if ref is not None:
        out.facts = {**ref.facts, **out.facts}
        out.choices = [*ref.choices, *out.choices]
        tools = {**ref.reads, **out.reads} if ref.reads_first else {**out.reads, **ref.reads}
        out.reads = {tool: [*ref.reads.get(tool, []), *out.reads.get(tool, [])] for tool in tools}
        out.evidence = [*ref.evidence, *[e for e in out.evidence if e not in ref.evidence]]
    return out
