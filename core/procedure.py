"""Procedure rules as data, and the `procedure` part of a trial's score.

Every pack's policy says how to work, not only what to reach: identify the caller before acting on
their account, state a write and get the caller's yes before making it, say the deciding figure before
acting on a request whose answer depends on it, and act only on the caller's own records (or those of
someone the caller may act for). The reward compares the final database and what was told, so none of
that is measured there. A pack declares these rules in `data/procedure.json` (typed by `ProcedureSpec`,
checked against its tools and tables when the domain first reads it), and `check` replays a stored
transcript's tool calls on a fresh state, asking each rule before each successful call, so the same
transcript always gets the same verdict (`tau score` re-computes it). `apply_scoring` makes the
`strict` reward from it. docs/procedure.md describes the rules and the file.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from tau_emotion.core.errors import DataError
from tau_emotion.core.models import (
    Action,
    EpisodeResult,
    Message,
    ProcedureParts,
    ProcedureViolation,
    RewardParts,
    Scoring,
    Task,
)
from tau_emotion.core.reward import normalize, numbers_in, outputs_told

if TYPE_CHECKING:
    from tau_emotion.core.domain import Domain
    from tau_emotion.core.state import State

RULES = ("identify_before", "confirm_before_write", "inform_before_decide", "own_records")


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class Identify(_Strict):
    """A tool that identifies the caller, and where the caller's id is: one of its arguments or a field of
    its result (dotted; "" for a result that is the id itself). Only a call that succeeds identifies."""

    tool: str
    argument: str | None = None
    result: str | None = None

    @model_validator(mode="after")
    def _one_source(self) -> Identify:
        if (self.argument is None) == (self.result is None):
            raise ValueError(f"identify '{self.tool}': give exactly one of 'argument' or 'result'")
        return self


@dataclass(frozen=True)
class Hop:
    """From an id to a row of `table` (keyed by the id), then to the value(s) at `field` of that row
    (dotted; `[]` walks a list: `holders[].customer_id`)."""

    table: str
    field: str


def chain(text: str) -> list[Hop]:
    """Hops written as `table.field > table.field` ("lines.account_id > accounts.customer_id")."""
    hops = []
    for part in (p.strip() for p in text.split(">")) if text.strip() else []:
        table, _, field = part.partition(".")
        if not table or not field:
            raise ValueError(f"'{part}' is not 'table.field'")
        hops.append(Hop(table, field))
    return hops


class OwnerPath(_Strict):
    """How a write's argument leads to the customer(s) the record belongs to: the argument's value (an id),
    then each hop of `via` in turn. No hops: the argument is the customer's id itself (`book_reservation.user_id`)."""

    argument: str
    via: str = ""

    @property
    def hops(self) -> list[Hop]:
        return chain(self.via)


class Delegation(_Strict):
    """Whom a caller may act for besides themself, read from the state before the call.

    `table` + `field`: the caller's own row of `table` lists them (`guardians[caller].student_ids`).
    `table` + `match` + `field`: every row of `table` whose `match` is the caller gives `field`
    (`consents` where `representative_id` is the caller give `patient_id`)."""

    table: str
    field: str
    match: str | None = None


class OwnRecords(_Strict):
    writes: dict[str, list[OwnerPath]] = Field(default_factory=dict)
    delegations: list[Delegation] = Field(default_factory=list)


class Deciding(_Strict):
    """One deciding argument a confirmation must state: every value at `argument` (dotted, `[]` for list
    elements). Numbers match by value, dates and times in the usual spoken forms, text on word boundaries
    (`_` reads as a space). `also`: the value may be said as a field of the row it names instead (a card's
    last four digits, a plan's name). `new_only`: values the record the write acts on already holds need
    not be said (the flight of a round trip that stays)."""

    argument: str
    also: list[str] = Field(default_factory=list)
    new_only: bool = False

    @property
    def alternatives(self) -> list[list[Hop]]:
        return [chain(a) for a in self.also]


class Confirm(_Strict):
    """What a confirmation of one write tool says: one of `says` (word stems naming the action: "cancel"
    matches "cancelling") and every `deciding` argument."""

    says: list[str] = Field(min_length=1)
    deciding: list[Deciding] = Field(default_factory=list)


class ProcedureSpec(_Strict):
    """A pack's `data/procedure.json`."""

    identify: list[Identify] = Field(default_factory=list)
    identify_before: list[str] = Field(default_factory=list)
    #: telling the customer what the task's gold outputs hold (their data left, their refund) also needs an
    #: identified caller: an agent that answers without identifying anyone breaks `identify_before`
    identify_before_telling: bool = False
    confirm_before_write: dict[str, Confirm] = Field(default_factory=dict)
    #: write tools that change nothing the caller pays for or owns (a troubleshooting step), with why
    no_confirmation: dict[str, str] = Field(default_factory=dict)
    inform_before_decide: bool = False
    own_records: OwnRecords = Field(default_factory=OwnRecords)

    @property
    def rules(self) -> list[str]:
        declared = {"identify_before": bool(self.identify_before or self.identify_before_telling),
                    "confirm_before_write": bool(self.confirm_before_write),
                    "inform_before_decide": self.inform_before_decide, "own_records": bool(self.own_records.writes)}
        return [r for r in RULES if declared[r]]


# --------------------------------------------------------------------------- loading


def load_spec(domain: Domain, raw: Any, source: str) -> ProcedureSpec:
    """Validate a pack's procedure file against the model and against the domain's tools and tables."""
    try:
        spec = ProcedureSpec.model_validate(raw)
    except ValidationError as exc:
        err = exc.errors()[0]
        loc = ".".join(str(x) for x in err.get("loc", ())) or "(top level)"
        raise DataError(f"{source}: field '{loc}': {err.get('msg')}") from None
    problem = _spec_problem(domain, spec)
    if problem:
        raise DataError(f"{source}: {problem}")
    return spec


def _spec_problem(domain: Domain, spec: ProcedureSpec) -> str | None:
    tools = domain.toolset.tools
    tables = set(domain.database.tables)
    writes = {n for n, t in tools.items() if t.writes}

    def tool_problem(name: str, where: str) -> str | None:
        return None if name in tools else f"{where}: '{name}' is not a tool of domain '{domain.name}'"

    def argument_problem(tool: str, path: str, where: str) -> str | None:
        first = path.split(".")[0].removesuffix("[]")
        if first not in tools[tool].parameters.get("properties", {}):
            return f"{where}: '{first}' is not an argument of {tool}"
        return None

    def hop_problems(texts: list[str], where: str) -> Iterator[str]:
        for text in texts:
            try:
                hops = chain(text)
            except ValueError as exc:
                yield f"{where}: {exc}"
                continue
            yield from (f"{where}: no table '{h.table}'" for h in hops if h.table not in tables)

    for item in spec.identify:
        if p := tool_problem(item.tool, "identify") or (
                argument_problem(item.tool, item.argument, "identify") if item.argument else None):
            return p
    for name in spec.identify_before:
        if p := tool_problem(name, "identify_before"):
            return p
    for name, confirm in spec.confirm_before_write.items():
        if p := tool_problem(name, "confirm_before_write"):
            return p
        for d in confirm.deciding:
            if p := argument_problem(name, d.argument, f"confirm_before_write.{name}") or next(
                    hop_problems(d.also, f"confirm_before_write.{name}"), None):
                return p
    for name in spec.no_confirmation:
        if p := tool_problem(name, "no_confirmation"):
            return p
    if spec.confirm_before_write:
        missing = sorted(writes - set(spec.confirm_before_write) - set(spec.no_confirmation))
        if missing:
            return (f"confirm_before_write: write tool '{missing[0]}' is declared neither there nor in "
                    f"no_confirmation (with why it needs no consent)")
    for name, paths in spec.own_records.writes.items():
        if p := tool_problem(name, "own_records.writes"):
            return p
        for path in paths:
            if p := argument_problem(name, path.argument, f"own_records.writes.{name}") or next(
                    hop_problems([path.via], f"own_records.writes.{name}"), None):
                return p
    if spec.own_records.writes:
        missing = sorted(writes - set(spec.own_records.writes))
        if missing:
            return f"own_records.writes: write tool '{missing[0]}' is not declared (an empty list: it acts on no record)"
    for d in spec.own_records.delegations:
        if d.table not in tables:
            return f"own_records.delegations: no table '{d.table}'"
    return None


# --------------------------------------------------------------------------- reading values


def values_at(value: Any, path: str) -> list[Any]:
    """The leaf values at a dotted path (`flights[].flight_number`); [] where the path does not lead."""
    out = [value]
    for part in path.split(".") if path else []:
        many = part.endswith("[]")
        key = part.removesuffix("[]")
        nxt: list[Any] = []
        for v in out:
            v = v.get(key) if isinstance(v, dict) and key else (v if not key else None)
            if v is None:
                continue
            if many:
                nxt.extend(v if isinstance(v, list) else [])
            else:
                nxt.append(v)
        out = nxt
    flat = [x for v in out for x in (v if isinstance(v, list) else [v])]  # a list at the end: its elements
    return [v for v in flat if v is not None]


def _row(state: State, table: str, key: Any) -> Any:
    return state[table].peek(key) if isinstance(key, str) and key in state[table] else None


def follow(state: State, start: list[Any], hops: list[Hop]) -> tuple[list[Any], list[Any]]:
    """(the values the hops end at, the rows of the first hop) from the ids in `start`."""
    values, first_rows = list(start), []
    for i, hop in enumerate(hops):
        rows = [r for v in values if (r := _row(state, hop.table, v)) is not None]
        if i == 0:
            first_rows = rows
        # `a|b`: either field of the row (a player's guardian or its other contact)
        values = [x for r in rows for f in hop.field.split("|") for x in values_at(r, f)]
    return values, first_rows


def leaves(value: Any) -> Iterator[Any]:
    if isinstance(value, dict):
        for v in value.values():
            yield from leaves(v)
    elif isinstance(value, list):
        for v in value:
            yield from leaves(v)
    else:
        yield value


# --------------------------------------------------------------------------- saying values

_MONTHS = ["january", "february", "march", "april", "may", "june", "july", "august", "september", "october",
           "november", "december"]
_ISO_DATE = re.compile(r"^(\d{4})-(\d{2})-(\d{2})$")
_CLOCK = re.compile(r"^(\d{1,2}):(\d{2})$")
_ISO_DATETIME = re.compile(r"^(\d{4}-\d{2}-\d{2})[t ](\d{1,2}:\d{2})(?::\d{2})?$")
_ORD = r"(?:st|nd|rd|th)?"


def _date_patterns(year: int, month: int, day: int) -> list[str]:
    name = _MONTHS[month - 1]
    mon = rf"(?:{name}|{name[:3]}\.?)"
    return [rf"\b{year:04d}-{month:02d}-{day:02d}\b", rf"\b{mon}\s+0?{day}{_ORD}\b",
            rf"\b0?{day}{_ORD}\s+(?:of\s+)?{mon}\b", rf"(?<![\d/]){month}/0?{day}(?:/\d{{2,4}})?(?![\d/])",
            rf"(?<![\d/]){month:02d}/{day:02d}(?:/\d{{2,4}})?(?![\d/])"]


def _time_patterns(hour: int, minute: int) -> list[str]:
    twelve = hour % 12 or 12
    half = "p" if hour >= 12 else "a"
    mins = rf":{minute:02d}" if minute else r"(?::00)?"
    return [rf"(?<![\d:]){hour}:{minute:02d}(?![\d:])", rf"(?<![\d:]){hour:02d}:{minute:02d}(?![\d:])",
            rf"(?<![\d:]){twelve}{mins}\s*{half}\.?\s?m\b\.?"] + ([r"\bnoon\b"] if (hour, minute) == (12, 0) else [])


def _as_number(value: Any) -> Decimal | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, (int, float)):
        return abs(Decimal(str(value)))  # an amount is said without its sign: a debit of -246.40 is "$246.40"
    if isinstance(value, str) and re.fullmatch(r"\d+(?:\.\d+)?", value):
        try:
            return Decimal(value)
        except InvalidOperation:
            return None
    return None


def value_said(value: Any, said: str, numbers: set[Decimal]) -> bool:
    """Whether the agent's normalized text `said` (with its numbers) states `value`."""
    if value is None or isinstance(value, bool):
        return True  # a flag is not a figure a customer hears
    number = _as_number(value)
    if number is not None:
        return number in numbers
    text = str(value).strip().lower()
    if not text:
        return True
    if m := _ISO_DATETIME.match(text):  # a showing's start: its day and its time
        return value_said(m[1], said, numbers) and value_said(m[2], said, numbers)
    if m := _ISO_DATE.match(text):
        patterns = _date_patterns(int(m[1]), int(m[2]), int(m[3]))
    elif m := _CLOCK.match(text):
        patterns = _time_patterns(int(m[1]), int(m[2]))
    else:  # a name with a note ("Lower 102 (center)", "Combo: large popcorn and ...") is said by its head too
        names = {text, re.split(r" \(|:", text)[0].strip()}
        patterns = [_words_pattern(n) for n in names if n]
    return any(re.search(p, said) for p in patterns)


def _words_pattern(text: str) -> str:
    """Text on word boundaries, a plural allowed ("4 combos"); spaces, `_` and `-` between words are one
    separator ("basic_economy")."""
    body = re.escape(normalize(text.replace("_", " "))).replace(r"\ ", r"[\s_-]+")
    return rf"(?<![\w]){body}(?:e?s)?(?![\w])"


def _stem_said(stems: list[str], said: str) -> bool:
    return any(re.search(rf"(?<![\w]){re.escape(normalize(s))}", said) for s in stems)


# --------------------------------------------------------------------------- the user's yes

_NOT_REFUSALS = re.compile(r"\bno (?:problem|worries|rush)\b")
#: consent leads the message ("Yes please", "Sure, go ahead", "Please proceed", "That's right"): a request that
#: merely contains the word ("I need to correct a name") is not a yes
_AFFIRMATIVE = re.compile(
    r"^(?:(?:well|um|hmm|oh|ah|and|then|alright then)[\s,]+)?(?:please[\s,]+)?"
    r"(?:yes|yeah|yep|yup|sure|ok|okay|alright|all right|absolutely|definitely|certainly|of course|go ahead|do it|"
    r"go for it|proceed|confirm(?:ed)?|i confirm|correct|that'?s (?:right|correct|fine|good|great|perfect)|"
    r"that is (?:right|correct|fine)|that (?:sounds|works)|sounds (?:good|great|fine)|perfect|great|fine|please do)"
    r"(?![\w'])")
_NEGATIVE = frozenset({"no", "nope", "not", "never", "wait", "hold", "stop", "rather", "instead", "actually", "but"})
#: how many leading words may hold a hesitation that turns a yes into something else ("OK, wait", "Yes, but no")
_LEAD_WORDS = 6


def affirmative(text: str | None) -> bool:
    """A user message that agrees: it opens with a yes ("yes please", "Sure, go ahead", "Please proceed") and its
    first words hold no refusal or hesitation ("No, wait", "OK, but not yet", "Yes... actually no" do not agree)."""
    said = _NOT_REFUSALS.sub(" ", normalize(text or "")).strip(" \t\"'")
    if not _AFFIRMATIVE.match(said):
        return False
    lead = re.findall(r"[\w']+", said)[:_LEAD_WORDS]
    return not _NEGATIVE & set(lead)


# --------------------------------------------------------------------------- decisions


@dataclass(frozen=True)
class Decision:
    """A request whose answer depends on a figure: the figure, and the gold writes a yes leads to
    (none when the gold declines)."""

    intent: int
    figure: str
    proceeds: bool
    writes: tuple[Action, ...]


def decisions_of(task: Task, writes: set[str]) -> list[Decision]:
    """The task's decision rules, from its typed intent plan (`Task.plan`; none without one): per request with a
    rule, the deciding figure and the gold writes a yes leads to (none when the database puts the figure on the side
    the customer declines)."""
    if task.plan is None:
        return []
    out = []
    for i, request in enumerate(task.plan.requests):
        rule = request.decision
        if rule is None:
            continue
        gold = [task.gold.actions[j] for j in request.actions if 0 <= j < len(task.gold.actions)]
        out.append(Decision(i, rule.amount, rule.outcome == "under", tuple(a for a in gold if a.name in writes)))
    return out


def _same_call(call: Action, gold: Action) -> bool:
    if call.name != gold.name:
        return False
    shared = set(call.arguments) & set(gold.arguments)
    return all(call.arguments[k] == gold.arguments[k] for k in shared)


# --------------------------------------------------------------------------- the check


class _Replay:
    """One pass over a transcript: the state before each call, the caller, the checks."""

    def __init__(self, domain: Domain, spec: ProcedureSpec, task: Task, messages: list[Message]):
        self.domain, self.spec, self.task, self.messages = domain, spec, task, messages
        self.state = domain.database.state()
        self.caller: str | None = None
        self.writes = {n for n, t in domain.toolset.tools.items() if t.writes}
        self.decisions = decisions_of(task, self.writes) if spec.inform_before_decide else []
        self.identify = {i.tool: i for i in spec.identify}
        self.violations: list[ProcedureViolation] = []

    def run(self) -> list[ProcedureViolation]:
        told_unidentified = not self.spec.identify_before_telling or not self.task.gold.outputs
        for index, message in enumerate(self.messages):
            if message.role != "assistant":
                continue
            for call in message.tool_calls:
                arguments = call.arguments if isinstance(call.arguments, dict) else _parsed(call.arguments)
                found = self.before(index, call.name, arguments) if arguments is not None else []
                text, error = self.domain.toolset.call(self.state, call.name, call.arguments)
                if error:
                    continue  # a refused call did nothing: procedure is about what was done
                self.violations.extend(found)
                self.identified(call.name, arguments or {}, text)
            # what a message says reaches the user with its calls' effects (a transfer's summary rides on it)
            if not told_unidentified and self.caller is None and message.content:
                told, _ = outputs_told(self.task.gold.outputs, [message])
                if told:
                    told_unidentified = True  # once is enough: the rest of the answer adds nothing
                    self.violations.append(ProcedureViolation(
                        rule="identify_before", message=index,
                        detail=f"told the customer's {told[0]} before the caller was identified"))
        self.declines()
        return self.violations

    def identified(self, name: str, arguments: dict[str, Any], text: str) -> None:
        how = self.identify.get(name)
        if how is None:
            return
        if how.argument is not None:
            found = values_at(arguments, how.argument)
        else:
            try:
                result = json.loads(text)
            except ValueError:
                result = text
            found = values_at(result, how.result or "")
        if found and isinstance(found[0], str):
            self.caller = found[0]

    def before(self, index: int, name: str, arguments: dict[str, Any]) -> list[ProcedureViolation]:
        out = []

        def add(rule: str, detail: str) -> None:
            out.append(ProcedureViolation(rule=rule, message=index, tool=name, detail=detail))  # type: ignore[arg-type]

        if name in self.spec.identify_before and self.caller is None:
            add("identify_before", f"{name} before the caller was identified")
        confirm = self.spec.confirm_before_write.get(name)
        if confirm is not None and (why := self.unconfirmed(index, name, arguments, confirm)):
            add("confirm_before_write", why)
        for d in self.decisions:
            if d.proceeds and any(_same_call(Action(name=name, arguments=arguments), g) for g in d.writes) \
                    and not self.figure_said(d.figure, index):
                add("inform_before_decide", f"{name} before the deciding figure {d.figure} was said")
        paths = self.spec.own_records.writes.get(name)
        if paths and self.caller is not None and (why := self.not_own(name, arguments, paths)):
            add("own_records", why)
        return out

    def figure_said(self, figure: str, before: int) -> bool:
        return any(value_said(figure, normalize(m.content or ""), numbers_in(m.content or ""))
                   for m in self.messages[:before] if m.role == "assistant" and m.content)

    def declines(self) -> None:
        """A declined request's figure must still reach the user: the decline is theirs to make."""
        for d in self.decisions:
            if not d.proceeds and not self.figure_said(d.figure, len(self.messages)):
                self.violations.append(ProcedureViolation(
                    rule="inform_before_decide", message=max(len(self.messages) - 1, 0),
                    detail=f"the deciding figure {d.figure} of request {d.intent + 1} was never said"))

    def unconfirmed(self, index: int, name: str, arguments: dict[str, Any], confirm: Confirm) -> str | None:
        """Why the write at message `index` lacks consent: after the last user request, an agent message
        states it and a user message after that agrees; None when it has it."""
        users = [i for i in range(index) if self.messages[i].role == "user"]
        request = max((i for i in users if not affirmative(self.messages[i].content)), default=-1)
        yeses = [i for i in users if i > request]
        if not yeses:
            return f"{name} without the user's yes after their last request"
        held = self.held_values(name, arguments)
        for a in range(request + 1, yeses[-1]):
            m = self.messages[a]
            if m.role == "assistant" and m.content and self.states(m.content, arguments, confirm, held):
                return None
        return f"{name} was not stated with its deciding arguments before the user's yes"

    def held_values(self, name: str, arguments: dict[str, Any]) -> set[str]:
        rows = [r for p in self.spec.own_records.writes.get(name, []) if p.hops
                for r in follow(self.state, values_at(arguments, p.argument), p.hops[:1])[1]]
        return {json.dumps(v) for r in rows for v in leaves(r)}

    def states(self, content: str, arguments: dict[str, Any], confirm: Confirm, held: set[str]) -> bool:
        said, numbers = normalize(content), numbers_in(content)
        if not _stem_said(confirm.says, said):
            return False
        for d in confirm.deciding:
            for value in values_at(arguments, d.argument):
                if d.new_only and json.dumps(value) in held:
                    continue
                names = [x for hops in d.alternatives for x in follow(self.state, [value], hops)[0]]
                if not any(value_said(v, said, numbers) for v in [value, *names]):
                    return False
        return True

    def not_own(self, name: str, arguments: dict[str, Any], paths: list[OwnerPath]) -> str | None:
        """Why the write acts on a record that is not the caller's nor a delegator's: every path that finds a
        record must reach one (both accounts of a transfer); a path that finds none is left to the tool."""
        allowed = {self.caller} | self.delegated()
        for path in paths:
            owners = {o for o in follow(self.state, values_at(arguments, path.argument), path.hops)[0]
                      if isinstance(o, str)}
            if owners and not owners & allowed:
                return (f"{name} acts on a record of {', '.join(sorted(owners))} ({path.argument}), "
                        f"not of the identified caller {self.caller}")
        return None

    def delegated(self) -> set[str]:
        out: set[str] = set()
        for d in self.spec.own_records.delegations:
            if d.match is None:
                rows = [r for r in [_row(self.state, d.table, self.caller)] if r is not None]
            else:
                rows = [r for _, r in self.state[d.table].scan() if self.caller in values_at(r, d.match)]
            out.update(v for r in rows for v in values_at(r, d.field) if isinstance(v, str))
        return out


def _parsed(arguments: str) -> dict[str, Any] | None:
    try:
        value = json.loads(arguments) if arguments.strip() else {}
    except (ValueError, RecursionError):
        return None
    return value if isinstance(value, dict) else None


def check(domain: Domain, task: Task, messages: list[Message]) -> ProcedureParts | None:
    """The procedure part of a trial's score; None when the domain declares no procedure."""
    spec = domain.procedure
    if spec is None:
        return None
    violations = _Replay(domain, spec, task, messages).run()
    return ProcedureParts(procedure_ok=not violations, rules=spec.rules, violations=violations)


def strict_reward(paper: float, procedure: ProcedureParts | None) -> float:
    """The paper's reward when the procedure held (or none is declared), else 0; a negative ending stays -1."""
    if procedure is None or procedure.procedure_ok or paper < 0:
        return paper
    return 0.0


def apply_scoring(domain: Domain, task: Task, messages: list[Message], reward: float, parts: RewardParts,
                  scoring: Scoring = "paper") -> tuple[float, RewardParts]:
    """The reward under `scoring`, with the procedure part and the paper's reward kept in the parts."""
    procedure = check(domain, task, messages)
    final = strict_reward(reward, procedure) if scoring == "strict" else reward
    return final, parts.model_copy(update={"procedure": procedure, "scoring": scoring, "paper_reward": reward})


def rescored(result_reward: float, parts: RewardParts | None, scoring: Scoring) -> float | None:
    """A stored trial's reward under `scoring`, from its parts; None when the parts cannot say (stored before
    the procedure was measured, in a domain that declares one)."""
    if parts is None or parts.paper_reward is None:
        return result_reward if scoring == "paper" and (parts is None or parts.scoring == "paper") else None
    return strict_reward(parts.paper_reward, parts.procedure) if scoring == "strict" else parts.paper_reward


def results_under(results: list[EpisodeResult], scoring: Scoring, *, strict: bool = True) -> list[EpisodeResult]:
    """The results with the reward they have under `scoring`, from their stored parts (so runs made under two
    scorings compare under one). A result whose parts cannot say raises DataError when `strict`, else keeps its
    own reward."""
    out = []
    for r in results:
        reward = rescored(r.reward, r.parts, scoring) if r.status == "ok" else r.reward
        if reward is None:
            if strict:
                raise DataError(f"trial {r.task_id} #{r.trial} was stored before the procedure was measured: "
                                f"it has no {scoring} reward (run it again)")
            reward = r.reward
        out.append(r if reward == r.reward else r.model_copy(update={"reward": reward, "success": reward == 1.0}))
    return out
