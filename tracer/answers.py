"""One right answer: other entities the user's words fit, and compliant variants of a refused request.

Issue 21 found two kinds of task with a second right answer that the Choice logic of the grounders
cannot see, because the second answer is not among any list the gold reads:

- **Another binding.** "Your February bill" fitted two of the caller's bills: the gold one (period
  February) and one issued on February 1 with the same overage charge, on which the same credit was
  legal. `alternative_bindings` takes every id argument of a gold write (or refused call) that names a
  row the user owns (a row reached from the user's own row by following ids, at most `DEPTH` hops), the
  facts the user's words state about that row (its field values, and those of the rows it names, that
  the instruction, the user's lines or `user.known` say: verbatim, an ISO date as "May 19" or its month
  name, a number as written), and looks for another owned row of the same table that fits every one of
  them and on which the same call is legal (replayed on a copy of the state: no tool error, no policy
  violation). A month said alone ("the February bill") fits any top-level date of the other row (its
  period, its issue date), since the words do not say which date; every other fact must be at the same
  field. Rows another row names contribute only their descriptive text (a city, a phone number, a name).
  Facts are matched as the words say them: one said otherwise than any field holds it is not seen, which
  can only add alternatives (a false `ambiguous`); a value the words hold by chance (the "2" of "2 bags")
  counts as stated, which can only remove them.
- **A refusal with a compliant variant.** A $75 credit refused by a rule capping credits at 50 per bill:
  an agent that offers 50 is right by the policy and fails the gold. `compliant_variant` looks, for
  each number of a refused call, for the largest smaller value the rules accept (bisected on
  `Domain.violations`, then confirmed on the tool).

Both take plain data (gold calls, refusals, the user's key and words), so they check a candidate while
building and a committed task alike (`benchmarks/one_answer.py`).
"""

from __future__ import annotations

import datetime as _dt
import re
import weakref
from collections.abc import Iterable, Iterator
from copy import deepcopy
from dataclasses import dataclass
from functools import lru_cache
from typing import TYPE_CHECKING, Any

from tau_emotion.core.models import Action
from tau_emotion.tracer.grounders import money
from tau_emotion.tracer.provenance import leaves

if TYPE_CHECKING:
    from tau_emotion.core.domain import Domain
    from tau_emotion.core.models import Task
    from tau_emotion.core.state import State

#: the preference the Tracer gives a refused request whose smaller variant the rules accept (`compliant_variant`):
#: the instruction says "You want to turn down any offer of less than you ask for", so the refusal stays gold
DECLINE_LESS = "turn down any offer of less than {{I}} ask for"
#: how that preference reads in any grammatical person
DECLINED = "any offer of less than"
DEPTH = 2  # hops from the user's row: a customer -> their accounts -> the accounts' bills and lines
_ISO_DAY = re.compile(r"^(\d{4})-(\d{2})-(\d{2})")
_ISO_MONTH = re.compile(r"^(\d{4})-(\d{2})$")
_INDEX = re.compile(r"\[\d+\]")
_DIGIT = re.compile(r"\d")


@dataclass(frozen=True)
class Call:
    """A gold write or a refused request: the tool, its arguments, and how many gold calls run before it."""

    name: str
    arguments: dict[str, Any]
    at: int
    refused: bool = False


@dataclass(frozen=True)
class Fact:
    """Something the user's words say about a row: `text` as a `kind` of rendering at field `path`."""

    path: str  # "table:field", list indices written [] ("bills:items[].description"); "bills:" for a month
    kind: str  # "text" | "number" | "day" | "month"
    text: str


def fork(state: State) -> State:
    """A copy of `state` that a tool may change without touching `state`."""
    copy = state.database.state()
    for table, rows in state.changed().items():
        for key, row in rows.items():
            if row is None:
                del copy[table][key]
            else:
                copy[table][key] = deepcopy(row)
    return copy


_KEYS: weakref.WeakKeyDictionary[Any, dict[str, tuple[str, ...]]] = weakref.WeakKeyDictionary()


def _tables_of(state: State) -> dict[str, tuple[str, ...]]:
    """key -> the tables of the state's snapshot that have a row keyed so (built once per database)."""
    db = state.database
    index = _KEYS.get(db)
    if index is None:
        found: dict[str, list[str]] = {}
        for table, rows in db.tables.items():
            for key in rows:
                found.setdefault(key, []).append(table)
        index = _KEYS[db] = {k: tuple(v) for k, v in found.items()}
    return index


def find_rows(state: State, key: Any) -> list[tuple[str, dict[str, Any]]]:
    """(table, row) of every table that has a row keyed `key` (rows of the snapshot: a row an earlier gold call
    created is no alternative the user's words could mean)."""
    if not isinstance(key, str) or not key:
        return []
    found = []
    for table in _tables_of(state).get(key, ()):
        row = state[table].peek(key)
        if isinstance(row, dict):
            found.append((table, row))
    return found


@lru_cache(maxsize=1 << 14)
def _pattern(text: str) -> re.Pattern[str]:
    return re.compile(rf"(?<![\w]){re.escape(text.strip().lower())}(?![\w])")


def said_in(text: str, words: str) -> bool:
    """`text` occurs in `words` (already lower-cased) on word boundaries, as `provenance.phrase_in` finds it."""
    return bool(text.strip()) and _pattern(text).search(words) is not None


def _refs(row: dict[str, Any]) -> Iterator[str]:
    """Every string a row holds (values, and keys of nested maps): the ids it may name."""
    stack: list[Any] = [row]
    while stack:
        item = stack.pop()
        if isinstance(item, dict):
            for k, v in item.items():
                if item is not row:
                    yield str(k)
                stack.append(v)
        elif isinstance(item, list):
            stack.extend(item)
        elif isinstance(item, str) and item:
            yield item


def owned(state: State, user: Any, depth: int = DEPTH) -> dict[str, set[str]]:
    """table -> keys of the rows the user owns: their own row and every row reached by following ids."""
    out: dict[str, set[str]] = {}
    frontier = [(t, str(user), row) for t, row in find_rows(state, user)]
    for table, key, _ in frontier:
        out.setdefault(table, set()).add(key)
    for _ in range(depth):
        nxt = []
        for _, _, row in frontier:
            for ref in _refs(row):
                for table, hit in find_rows(state, ref):
                    if ref not in out.setdefault(table, set()):
                        out[table].add(ref)
                        nxt.append((table, ref, hit))
        frontier = nxt
    return out


def renderings(value: Any) -> list[tuple[str, str]]:
    """(kind, text) a person could say for a stored value."""
    if value is None or isinstance(value, bool):
        return []
    if isinstance(value, (int, float)):
        texts = dict.fromkeys([money(value), str(value)])
        return [("number", t) for t in texts]
    text = str(value).strip()
    if m := _ISO_DAY.match(text):
        try:
            day = _dt.date(int(m[1]), int(m[2]), int(m[3]))
        except ValueError:
            return [("text", text)]
        month = day.strftime("%B")
        return [("day", f"{month} {day.day}"), ("day", day.isoformat()), ("month", month)]
    if m := _ISO_MONTH.match(text):
        if 1 <= int(m[2]) <= 12:
            return [("month", _dt.date(2000, int(m[2]), 1).strftime("%B")), ("text", text)]
    if len(text) < 2:
        return []
    return [("text", t) for t in dict.fromkeys([text, text.replace("_", " ")])]


def row_leaves(state: State, key: str, row: dict[str, Any], skip: Iterable[str] = ()) -> list[tuple[str, Any]]:
    """The row's fields, and those of the rows it names one hop away ("destination>city"), paths without indices."""
    skip = {key, *skip}
    out = []
    for path, value in leaves(row):
        path = _INDEX.sub("[]", path)
        out.append((path, value))
        if isinstance(value, str) and value not in skip:
            for _, ref in find_rows(state, value):
                out.extend((f"{path}>{p}", v) for p, v in _descriptive(ref))
    return out


def _where(path: str, kind: str) -> str:
    """Where a fact must be: a month said alone may be any top-level date of the row itself ("the February bill":
    its period, or its issue date), not a date inside it (a payment's) nor of a row it names."""
    table, _, field = path.partition(":")
    return f"{table}:" if kind == "month" and not any(c in field for c in ".[>") else path


def _descriptive(row: Any, path: str = "") -> Iterator[tuple[str, str]]:
    """The text fields of a row another row names that say what it is (a city, a phone number, a name), not its
    figures or dates, nor the entries of a keyed map (a flight's seats on each date), which words match by chance."""
    if isinstance(row, dict):
        for key, value in row.items():
            if not _DIGIT.search(str(key)):
                yield from _descriptive(value, f"{path}.{key}" if path else str(key))
    elif isinstance(row, list):
        for value in row:
            if not isinstance(value, (dict, list)):
                yield from _descriptive(value, f"{path}[]")
    elif isinstance(row, str) and not _ISO_DAY.match(row):
        yield path, row


def stated_facts(fields: list[tuple[str, Any]], words: str) -> set[Fact]:
    """The facts `words` state among a row's `fields`; a month only where no day of that field is stated."""
    facts: set[Fact] = set()
    for path, value in fields:
        said = [(kind, text) for kind, text in renderings(value) if said_in(text, words)]
        days = [s for s in said if s[0] == "day"]
        for kind, text in days or said:
            facts.add(Fact(_where(path, kind), kind, text))
    return facts


def fits(facts: set[Fact], fields: list[tuple[str, Any]]) -> bool:
    """Whether a row (its `fields`) has every fact: a month at any date, anything else at the same field."""
    have: set[Fact] = set()
    for path, value in fields:
        for kind, text in renderings(value):
            have.add(Fact(_where(path, kind), kind, text))
    return facts <= have


def _legal(domain: Domain, state: State, name: str, arguments: dict[str, Any]) -> bool:
    if domain.violations(state, Action(name=name, arguments=arguments)):
        return False
    _, is_error = domain.toolset.call(fork(state), name, arguments)
    return not is_error


def _user_words(instruction: str, intents: Iterable[str], known: dict[str, Any]) -> str:
    said = [str(v) for _, v in leaves(known) if v is not None and not isinstance(v, bool)]
    return " | ".join([instruction, *intents, *said]).lower()


def alternative_bindings(domain: Domain, user: Any, steps: list[tuple[str, dict[str, Any]]], refused: list[Call],
                         instruction: str, intents: Iterable[str], known: dict[str, Any]) -> list[str]:
    """Why the task has a second right answer: per gold write or refused call, another owned row its words fit.

    `steps` are the gold calls in order, `refused` the refused requests (each `at` the number of gold calls
    before it). A gold write is ambiguous when the same call is legal on the other row; a refusal, when the
    request would be allowed there (the agent may do it instead of refusing).
    """
    if user is None:
        return []
    words = _user_words(instruction, intents, known)
    tools = domain.toolset
    calls = [Call(n, a, i) for i, (n, a) in enumerate(steps) if n in tools and tools[n].writes]
    calls += refused
    if not calls:
        return []
    found: list[str] = []
    state = domain.database.state()
    todo = sorted(calls, key=lambda c: (c.at, not c.refused))
    done = 0
    for call in todo:
        while done < call.at:  # replay the gold calls before this one
            tools.call(state, *steps[done])
            done += 1
        found.extend(_alternatives(domain, state, user, call, words))
    return found


def entity_fields(state: State, key: str, skip: Iterable[str] = ()) -> list[tuple[str, Any]]:
    """The fields of every row keyed `key` (a line and its usage record), each path after its table's name."""
    return [(f"{table}:{path}", v) for table, row in find_rows(state, key)
            for path, v in row_leaves(state, key, row, skip)]


def _alternatives(domain: Domain, state: State, user: Any, call: Call, words: str) -> list[str]:
    mine: dict[str, set[str]] | None = None
    out = []
    for arg, value in call.arguments.items():
        if not isinstance(value, str) or not _tables_of(state).get(value) or said_in(value, words):
            continue  # names no row, or the user names it (an order number): nothing else fits
        if mine is None:
            mine = owned(state, user)
        tables = [table for table, _ in find_rows(state, value) if value in mine.get(table, set())]
        if not tables:
            continue  # not the user's (a flight, a slot): a choice among search results, settled elsewhere
        others = set().union(*(mine[t] for t in tables)) - {value}
        if not others:
            continue
        facts = stated_facts(entity_fields(state, value, skip=[str(user)]), words)
        for other in sorted(others):
            if not fits(facts, entity_fields(state, other, skip=[str(user)])):
                continue
            legal = next((args for args in _rebound(state, call.arguments, arg, other, words)
                          if _legal(domain, state, call.name, args)), None)
            if legal is not None:
                said = ", ".join(sorted(f.text for f in facts)) or "nothing about it"
                what = "the refused" if call.refused else "the gold"
                same = "the same call" if legal == {**call.arguments, arg: other} else \
                    f"the same call ({', '.join(f'{k}={v!r}' for k, v in legal.items() if k != arg)})"
                out.append(f"{call.name}.{arg}: the user's words ({said}) fit {other} as well as {what} "
                           f"{value}, and {same} is legal on {other}")
    return out


def _rebound(state: State, arguments: dict[str, Any], arg: str, other: str, words: str) -> Iterator[dict[str, Any]]:
    """The call on `other` instead of `arguments[arg]`: as it is, then with each argument the user does not say that
    is a field of the old row ("pay the bill in full": amount = its balance) taken from the same field of `other`."""
    first = {**arguments, arg: other}
    yield first
    old = dict(find_rows(state, arguments[arg])).values()
    new = [row for _, row in find_rows(state, other)]
    tried = [first]
    for key, value in arguments.items():
        if key == arg or isinstance(value, (bool, dict, list)) or value is None or said_in(str(value), words):
            continue
        fields = {f for row in old for f, v in row.items() if v == value and not isinstance(v, bool)}
        for alt in dict.fromkeys(row[f] for row in new for f in fields if f in row):
            args = {**first, key: alt}
            if args not in tried:
                tried.append(args)
                yield args


def _value(n: int, asked: float) -> float | int:
    """The `n`th step below an asked number: whole units for a whole number, cents otherwise."""
    if float(asked).is_integer():
        return float(n) if isinstance(asked, float) else n
    return round(n / 100, 2)


def compliant_variant(domain: Domain, state: State, name: str, arguments: dict[str, Any]) -> tuple[str, Any, Any] | None:
    """(argument, asked, variant): the largest value below the asked number that the rules accept, confirmed on
    the tool; None when no number of the call has one (lowering it does not make the request legal).

    Bisected on `Domain.violations`, so it assumes a rule that accepts a value accepts every smaller one (a cap).
    """
    for key, asked in arguments.items():
        if isinstance(asked, bool) or not isinstance(asked, (int, float)) or asked <= 0:
            continue
        top = round(asked if float(asked).is_integer() else asked * 100)  # the asked value, in steps

        def ok(n: int, key: str = key, asked: float = asked) -> bool:
            return not domain.violations(state, Action(name=name, arguments={**arguments, key: _value(n, asked)}))

        if top < 2 or not ok(1) or ok(top):
            continue  # no smaller value the rules accept, or the asked one breaks no rule on this number
        lo, hi = 1, top  # ok(lo), not ok(hi): the largest ok step is lo once they meet
        while hi - lo > 1:
            mid = (lo + hi) // 2
            lo, hi = (mid, hi) if ok(mid) else (lo, mid)
        variant = _value(lo, asked)
        _, is_error = domain.toolset.call(fork(state), name, {**arguments, key: variant})
        if not is_error:
            return key, asked, variant
    return None


def refusal_variants(domain: Domain, steps: list[tuple[str, dict[str, Any]]], refused: list[Call]) -> list[str]:
    """Why a refusal is not the one right answer: a refused call with a compliant smaller variant (pass only the
    refused calls whose user does not turn such an offer down: `DECLINE_LESS`)."""
    out = []
    state = domain.database.state()
    done = 0
    for call in sorted(refused, key=lambda c: c.at):
        while done < call.at:
            domain.toolset.call(state, *steps[done])
            done += 1
        found = compliant_variant(domain, state, call.name, call.arguments)
        if found:
            key, asked, variant = found
            out.append(f"refused {call.name} with {key}={asked}, but {key}={variant} breaks no rule: an agent that "
                       f"offers {variant} follows the policy, and the user is not told to turn it down")
    return out


def task_calls(task: Task) -> tuple[list[tuple[str, dict[str, Any]]], list[Call]]:
    """A committed task's gold calls and refused requests (its plan's refusals, each `after` gold calls)."""
    from tau_emotion.tracer.plan import refused_calls

    steps = [(a.name, a.arguments) for a in task.gold.actions]
    refused = [Call(r["name"], r["arguments"], int(r.get("after", len(steps))), True) for r in refused_calls(task)]
    return steps, refused


def check_task(domain: Domain, task: Task) -> list[tuple[str, str]]:
    """(check, detail) for every second right answer of a committed task: `ambiguous` and `policy`."""
    steps, refused = task_calls(task)
    user = task.meta.get("user") or task.user.known.get("user_id")
    found = [("ambiguous", d) for d in alternative_bindings(domain, user, steps, refused, task.user.instruction,
                                                             task.user.intents, task.user.known)]
    if task.plan is not None:  # the refusals whose user turns smaller offers down keep the refusal as gold
        open_to_less = [c for c, r in zip(refused, task.plan.refusals, strict=True) if not r.declines_smaller]
        found += [("policy", d) for d in refusal_variants(domain, steps, open_to_less)]
    elif DECLINED not in task.user.instruction.lower():
        found += [("policy", d) for d in refusal_variants(domain, steps, refused)]
    return found
