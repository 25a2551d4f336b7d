"""What a domain pack gives the Tracer: the grounding-hints interface.

The Tracer itself knows no domain. A pack opts in by answering the hook the tracer plugin adds,
`tau_tracer_hints(domain)`, with its hints module (or its module path) for its own domains:

    @hookimpl(optionalhook=True)
    def tau_tracer_hints(domain):
        if domain.package == __name__:
            return "tau_emotion.domain_packs.NAME.tracer_hints"

Every name in that module is optional except `persona` and `GOALS`; without hints a domain still
gets a graph (`tau tracer graph`) but no tasks.

Module-level names the Tracer reads:

`persona(ctx) -> Persona | None`
    Pick the user of one candidate task from `ctx.state` with `ctx.rng`.
`GOALS: dict[str, Callable[[GroundingContext], IntentDraft | None]]`
    One grounder per goal tool (a write, a terminal tool, or a read whose answer the user
    wants). Given the state after the earlier intents it returns a concrete `IntentDraft`, or None
    when this goal cannot be grounded for this persona (the candidate is then rejected as
    `ungroundable`). With `ctx.want_challenge` it may return a policy challenge instead.
`GOAL_WEIGHTS: dict[str, float]`
    How often each goal is drawn (default: all equal), e.g. to favour goals few users qualify for.
`ENTRY_TOOLS: list[str]`
    Tools a workflow may start with (default: graph nodes without predecessors).
`POLICY_EDGES`, `FORBIDDEN_EDGES: list[tuple[str, str]]`
    Successions the written policy implies (e.g. "verify a flight's status before compensating")
    or forbids; added to / removed from the dependency graph.
`PROBE_ARGUMENTS: dict[str, list[dict]]`
    Example arguments for tools the graph prober cannot fill from database records.
`HANDOFF_TOOL: str`
    The terminal tool a refused user may insist on (default: the domain's only terminal tool).
`OCCASIONS: list[str | tuple[str, int, str]]`
    Reasons people have for what they do in this domain ("{{my}} sister's wedding"), with how much
    is at stake (0-3) and a valence (positive, neutral, negative), used by the feelings generator and
    as instruction context; the valence keeps assigned emotions fitting (see `design.py`).
`OCCASION_INTENTS: list[str]`
    The intent kinds an occasion may accompany (default: any); a task with another kind (a
    cancellation "because plans changed") gets no occasion, so the two never contradict.
`fact_phrase(key, value) -> str | None`
    How the instruction states one of the user's known facts, in the second person ("your new
    address is 12 Oak Street, Apt 4, Austin, TX 78701"); `key` may be the plural a merge made
    ("order_ids", with a list). None keeps the Tracer's generic wording ("the order id is #W1"); an
    empty string leaves a fact that another fact's words already say out of the instruction (it stays
    in `user.known`).

User-facing phrases (`IntentDraft.request`, `.context`, `.preferences`, `Output.ask`,
`Mood.event`, `OCCASIONS`) are tiny Jinja templates written for any grammatical person: use
`{{my}}`, `{{me}}`, `{{I}}`, `{{am}}` and `{{have}}` for the user and `{{agent}}` for the support agent
("you" in the user's lines, "the agent" in the instruction); the refiner renders them in the first
person for the simulated user's lines and in the second person for the instruction.
"""

from __future__ import annotations

import random
import weakref
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cache
from types import ModuleType
from typing import TYPE_CHECKING, Any

import pluggy

from tau_emotion.core import PROJECT
from tau_emotion.core.errors import TauError
from tau_emotion.core.registry import resolve_target

if TYPE_CHECKING:
    from tau_emotion.core.domain import Domain
    from tau_emotion.core.state import State


hookspec = pluggy.HookspecMarker(PROJECT)


class HintsError(TauError):
    """A domain's tracer hints are missing or malformed."""


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


@dataclass
class Mood:
    """The situation as the user lives it, for the feelings generator."""

    event: str
    valence: str = "neutral"  # negative | neutral | positive
    stakes: int = 1  # 0 (trivial) .. 3 (life-changing)
    days_left: int | None = None  # time pressure; None when there is none


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

    def peek(self, table: str, key: str) -> Any:
        return self.state[table].peek(key)


@dataclass
class Hints:
    """The hints of one domain, with defaults for what the pack left out."""

    module: ModuleType | None
    persona: Callable[[GroundingContext], Persona | None] | None
    goals: dict[str, Callable[[GroundingContext], IntentDraft | None]]
    goal_weights: dict[str, float]
    entry_tools: list[str] | None
    policy_edges: list[tuple[str, str]]
    forbidden_edges: list[tuple[str, str]]
    probe_arguments: dict[str, list[dict[str, Any]]]
    handoff_tool: str | None
    occasions: list[str]
    #: intent kinds an occasion may go with (None: any); a cancellation has its own reason, not a wedding
    occasion_intents: set[str] | None = None
    #: the pack's wording of a known fact in the instruction (None: the Tracer's generic wording)
    fact_phrase: Callable[[str, Any], str | None] | None = None

    @property
    def can_ground(self) -> bool:
        return self.persona is not None and bool(self.goals)


class TracerHooks:
    """The hook the tracer plugin adds (through `tau_addhooks`)."""

    @hookspec(firstresult=True)
    def tau_tracer_hints(self, domain: Domain) -> ModuleType | str | object | None:
        """The Tracer hints for `domain`: a module, a module path, or an object with the same names. firstresult.

        A pack answers for its own domains only (compare `domain.package` or `domain.name`) and
        implements it with `@hookimpl(optionalhook=True)`, so the pack loads without the tracer.
        """


_resolved: weakref.WeakKeyDictionary[Domain, Hints] = weakref.WeakKeyDictionary()


@cache
def _installed_plugins() -> Any:
    from tau_emotion.core.manager import load_all_plugins

    return load_all_plugins()


def load_hints(domain: Domain, pm: Any = None) -> Hints:
    """The hints a pack gives for `domain` through `tau_tracer_hints` (empty hints when none does).

    Resolved once per Domain object; `pm` is the plugin manager to ask (default: every installed plugin).
    """
    if domain in _resolved and pm is None:
        return _resolved[domain]
    pm = pm if pm is not None else _installed_plugins()
    hook = getattr(pm.hook, "tau_tracer_hints", None)
    target = hook(domain=domain) if hook is not None else None
    module: Any = None
    if isinstance(target, str):
        try:
            module = resolve_target(target)
        except ImportError as exc:
            raise HintsError(f"domain '{domain.name}': tracer hints module '{target}' cannot be imported: {exc}") from None
    else:
        module = target
    get = (lambda name, default: getattr(module, name, default)) if module is not None else (lambda name, default: default)
    goals = dict(get("GOALS", {}))
    unknown = sorted(g for g in goals if g not in domain.toolset)
    if unknown:
        raise HintsError(f"domain '{domain.name}': tracer GOALS name unknown tools: {', '.join(unknown)}")
    hints = Hints(
        module=module,
        persona=get("persona", None),
        goals=goals,
        goal_weights={g: float(get("GOAL_WEIGHTS", {}).get(g, 1.0)) for g in goals},
        entry_tools=list(get("ENTRY_TOOLS", [])) or None,
        policy_edges=[tuple(e) for e in get("POLICY_EDGES", [])],
        forbidden_edges=[tuple(e) for e in get("FORBIDDEN_EDGES", [])],
        probe_arguments=dict(get("PROBE_ARGUMENTS", {})),
        handoff_tool=get("HANDOFF_TOOL", None),
        occasions=list(get("OCCASIONS", [])),
        occasion_intents=set(get("OCCASION_INTENTS", None) or []) or None,
        fact_phrase=get("fact_phrase", None),
    )
    _resolved[domain] = hints
    return hints
