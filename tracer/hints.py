"""The Tracer's hints API: the one module a domain pack imports from `tau_emotion.tracer`.

The Tracer itself knows no domain. A pack opts in by answering the hook the tracer plugin adds,
`tau_tracer_hints(domain)`, with a `TracerHints` object for its own domains:

    @hookimpl(optionalhook=True)
    def tau_tracer_hints(domain):
        if domain.package == __name__:
            from tau_emotion.domain_packs.NAME.tracer_hints import HINTS
            return HINTS

`TracerHints` is a pydantic model that forbids unknown fields: a misspelt field (`goal_weight`) fails
`tau tracer build` with one line naming the field and the pack, instead of being ignored. Every field
is optional; without `persona` and `goals` a domain still gets a graph (`tau tracer graph`) but no
tasks. The fields, their types and defaults are documented on the class and in docs/writing-a-pack.md.

User-facing phrases (`IntentDraft.request`, `.context`, `.preferences`, `Output.ask`, `Mood.event`,
`occasions`) are tiny Jinja templates written for any grammatical person: use `{{my}}`, `{{me}}`,
`{{I}}`, `{{am}}` and `{{have}}` for the user and `{{agent}}` for the support agent ("you" in the
user's lines, "the agent" in the instruction); the refiner renders them in the first person for the
simulated user's lines and in the second person for the instruction.

Besides `TracerHints`, this module re-exports what goal grounders build (`Persona`, `IntentDraft`,
`Choice`, `Option`, `Output`, `Mood`, `GroundingContext`, `Reference`, `Refusal`, `draft`), how a grounder
gives up (`need`, `Ungrounded`, `first_grounded`; `ctx.choose` and `ctx.call` give up too) and the building
blocks of `tau_emotion.tracer.grounders` (wording, dates, choices, payment instruments, policy challenges,
price differences), so a pack needs no other Tracer module. `goals_in(globals())` collects a module's
`ground_<tool>` functions. What every grounder does alike is on the `GroundingContext`: the pack's tuned
probabilities (`Rates`, drawn with `ctx.chance`), the challenge-count check and the refusal it calls for
(`ctx.challenged`), a refused user who insists (`ctx.handoff`) and records no earlier intent touched (`ctx.fresh`).
"""

from __future__ import annotations

import difflib
import importlib
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Annotated, Any

import pluggy
from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from tau_emotion.core import PROJECT
from tau_emotion.core.errors import TauError
from tau_emotion.core.registry import RegistryError
from tau_emotion.tracer.drafts import (
    Choice,
    GroundingContext,
    IntentDraft,
    Mood,
    Option,
    Output,
    Persona,
    Rates,
    Reference,
    Refusal,
    Ungrounded,
    draft,
    first_grounded,
    need,
)
from tau_emotion.tracer.grounders import (
    INSTRUMENT_ORDERS,
    Instrument,
    bill,
    day_period,
    days_between,
    difference,
    fact_values,
    fact_wording,
    instrument_options,
    join_and,
    money,
    month_day,
    name_instrument,
    per_database,
    pick_fresh,
    pick_instrument,
    plural_key,
    refused_calls,
    settle,
    shift_date,
    used_by_earlier_intents,
)

if TYPE_CHECKING:
    from tau_emotion.core.domain import Domain

__all__ = [
    "Choice", "GroundingContext", "HintsError", "Instrument", "INSTRUMENT_ORDERS", "IntentDraft", "Mood", "Option",
    "Output", "Persona", "Rate", "Rates", "Reference", "Refusal", "TracerHints", "Ungrounded", "bill", "day_period", "days_between",
    "difference", "draft", "fact_values", "fact_wording", "first_grounded", "goals_in", "instrument_options",
    "join_and", "money", "month_day", "name_instrument", "need", "per_database", "pick_fresh", "pick_instrument", "plural_key",
    "refused_calls", "settle", "shift_date", "used_by_earlier_intents",
]

hookspec = pluggy.HookspecMarker(PROJECT)

Occasion = str | tuple[str, int, str]
#: a probability a pack tunes (a field of its `Rates`)
Rate = Annotated[float, Field(ge=0.0, le=1.0)]


class HintsError(TauError):
    """A domain's tracer hints are missing or malformed."""


class TracerHints(BaseModel):
    """What a pack tells the Tracer about one domain. Unknown fields are an error (a misspelling is not ignored)."""

    model_config = ConfigDict(extra="forbid", arbitrary_types_allowed=True)

    #: pick the user of one candidate task from `ctx.state` with `ctx.rng` (None: no tasks, only a graph)
    persona: Callable[[GroundingContext], Persona | None] | None = None
    #: one grounder per goal tool (a write, a terminal tool, or a read whose answer the user wants): given the
    #: state after the earlier intents it returns an `IntentDraft`, or None when the goal cannot be grounded for
    #: this persona; with `ctx.want_challenge` it may return a policy challenge instead
    goals: dict[str, Callable[[GroundingContext], IntentDraft | None]] = Field(default_factory=dict)
    #: how often each goal is drawn; a goal left out weighs 1.0 (after validation every goal has its weight)
    goal_weights: dict[str, float] = Field(default_factory=dict)
    #: tools a workflow may start with (empty: the graph's nodes without predecessors)
    entry_tools: list[str] = Field(default_factory=list)
    #: successions the written policy implies ("verify a flight's status before compensating"), added to the graph
    policy_edges: list[tuple[str, str]] = Field(default_factory=list)
    #: successions the policy forbids, removed from the graph
    forbidden_edges: list[tuple[str, str]] = Field(default_factory=list)
    #: example arguments for tools the graph prober cannot fill from database records
    probe_arguments: dict[str, list[dict[str, Any]]] = Field(default_factory=dict)
    #: the terminal tool a refused user may insist on (None: the domain's only terminal tool)
    handoff_tool: str | None = None
    #: reasons people have in this domain ("{{my}} sister's wedding"), optionally as (reason, stakes 0-3,
    #: valence positive|neutral|negative), for the feelings generator and as instruction context
    occasions: list[Occasion] = Field(default_factory=list)
    #: the intent kinds an occasion may accompany (None: any); a cancellation "because plans changed" gets none
    occasion_intents: frozenset[str] | None = None
    #: the instruction's wording of one known fact, in the second person; `key` may be the plural a merge made
    #: ("order_ids", with a list). None keeps the generic wording; "" leaves the fact out of the instruction
    fact_phrase: Callable[[str, Any], str | None] | None = None
    #: the id arguments a customer can know and say (a reservation or order number, a user id the app shows);
    #: any other id (a PayPal or gift-card record id, a line or bill record) is internal: neither it nor its last
    #: four digits may appear in an instruction (`tau tracer audit` check `id leak`). Default: none is, so every
    #: pack's instructions are checked; a pack lists the ids its customers do know
    visible_ids: frozenset[str] = frozenset()
    #: (state, candidate) -> why the candidate's situation contradicts the database ("would rather not travel" for
    #: a trip that already started, an occasion on a booking the caller is not on), or None; the validator
    #: rejects such a candidate as `situation`. None: no check
    situation: Callable[[Any, Any], str | None] | None = None
    #: (state before the gold calls, state after them, candidate) -> why a request is not true of the records (a
    #: payment plan for a balance of $0, an absence excused already, a refund told to reach the caller's card when it
    #: goes to another's, a tour departure the trip already holds), or None; the validator rejects such a candidate
    #: as `world` (`tracer/world.py`). None: only the Tracer's own checks (every write changes something)
    world: Callable[[Any, Any, Any], str | None] | None = None
    #: the share of amount-bearing requests given a decision rule ("if the fee is more than $40, keep it as it is");
    #: None: the Tracer's default (`decisions.DECISION_RATE`). A pack with few such requests raises it so that its
    #: splits reach the audit's floor of tasks with a rule
    decision_rate: float | None = Field(default=None, ge=0.0, le=1.0)
    #: the gold reads nothing twice with no write between: a read may follow any call made since the last write,
    #: and an identical read is not made again (issue 34; off: every read follows the one before it in the graph,
    #: and a walk may repeat a read to get on). On for the packs whose walks repeated reads (school, travel)
    reads_once: bool = False
    #: the probabilities the pack's grounders tune their draws with (`ctx.chance("name")`), each a named field of a
    #: `Rates` subclass the pack defines, so that the knobs shaping a split are data in one place, not literals
    #: spread through grounder code
    rates: Rates = Field(default_factory=Rates)

    @model_validator(mode="after")
    def _every_goal_weighs(self) -> TracerHints:
        unknown = sorted(set(self.goal_weights) - set(self.goals))
        if unknown:
            raise ValueError(f"goal_weights names {', '.join(unknown)}, which is not among the goals")
        self.goal_weights = {g: float(self.goal_weights.get(g, 1.0)) for g in self.goals}
        return self

    @property
    def can_ground(self) -> bool:
        return self.persona is not None and bool(self.goals)


def goals_in(namespace: Mapping[str, Any], prefix: str = "ground_") -> dict[str, Callable[[GroundingContext], Any]]:
    """The goal grounders a hints module defines, found by name: `ground_<tool>` grounds the goal tool <tool>.

    `goals=goals_in(globals())` at the end of the module (in the order the grounders are defined, which is
    the order the Tracer tries them in) instead of a dict naming each grounder twice. A name that is no tool
    of the domain fails `tau tracer build`, as a misspelt key of a written dict would.
    """
    return {name.removeprefix(prefix): fn for name, fn in namespace.items() if name.startswith(prefix) and callable(fn)}


class TracerHooks:
    """The hook the tracer plugin adds (through `tau_addhooks`)."""

    @hookspec(firstresult=True)
    def tau_tracer_hints(self, domain: Domain) -> TracerHints | None:
        """The `TracerHints` for `domain`, or None when the pack gives none. firstresult.

        A pack answers for its own domains only (compare `domain.package` or `domain.name`) and
        implements it with `@hookimpl(optionalhook=True)`, so the pack loads without the tracer.
        """


def _pack(domain: Domain, pm: Any) -> str:
    """The plugin that registered `domain` (its package when no catalog names one)."""
    try:
        return str(pm.catalog("domains").entry(domain.name).owner)
    except RegistryError:  # a domain built outside any catalog (a test's own)
        return domain.package or domain.name


def describe_error(exc: ValidationError) -> str:
    """One line for the first problem of a `TracerHints` validation: the field, and the nearest field for a typo."""
    err = exc.errors()[0]
    loc = ".".join(str(x) for x in err.get("loc", ())) or "(top level)"
    more = f" (+{len(exc.errors()) - 1} more)" if len(exc.errors()) > 1 else ""
    if err.get("type") == "extra_forbidden":
        near = difflib.get_close_matches(loc.lower(), list(TracerHints.model_fields), n=1)
        hint = f" (did you mean '{near[0]}'?)" if near else f" (fields: {', '.join(TracerHints.model_fields)})"
        return f"unknown field '{loc}'{hint}{more}"
    msg = str(err.get("msg", "")).removeprefix("Value error, ")
    return f"field '{loc}': {msg}{more}" if err.get("loc") else f"{msg}{more}"


def load_hints(domain: Domain, pm: Any = None) -> TracerHints:
    """The hints for `domain`: what `tau_tracer_hints` answers, asked of `pm` (the command's plugin manager), or,
    without one, of the pack that defines the domain (`domain.package`). Empty hints when no pack answers (a domain
    with no package, asked without a manager, has none).

    Nothing is remembered between calls: every reader is handed the hints it works with (the graph, the grounder,
    the refiner and the validator of a build take them from `build_tasks`), so no answer depends on what was
    called before.
    """
    if pm is not None:
        hook = getattr(pm.hook, "tau_tracer_hints", None)
        owner = lambda: _pack(domain, pm)  # noqa: E731 - only an error message needs the catalog
    else:
        hook = getattr(importlib.import_module(domain.package), "tau_tracer_hints", None) if domain.package else None
        owner = lambda: str(domain.package)  # noqa: E731
    try:
        given = hook(domain=domain) if hook is not None else None
    except ValidationError as exc:
        if exc.title != TracerHints.__name__:
            raise
        raise HintsError(f"tracer hints of pack '{owner()}' (domain '{domain.name}'): {describe_error(exc)}") from None
    if given is None:
        hints = TracerHints()
    elif isinstance(given, TracerHints):
        hints = given
    else:
        raise HintsError(f"tracer hints of pack '{owner()}' (domain '{domain.name}'): tau_tracer_hints "
                         f"returned {type(given).__name__}, not a TracerHints (see tau_emotion.tracer.hints)")
    unknown = sorted(g for g in hints.goals if g not in domain.toolset)
    if unknown:
        raise HintsError(f"tracer hints of pack '{owner()}' (domain '{domain.name}'): goals name "
                         f"unknown tools: {', '.join(unknown)}")
    if hints.handoff_tool is None:  # the documented default, filled in for every reader: the only terminal tool
        terminal = [name for name, tool in domain.toolset.tools.items() if tool.terminal]
        if len(terminal) == 1:
            hints = hints.model_copy(update={"handoff_tool": terminal[0]})
    return hints
