"""The customer's plan of a Tracer task (`core.models.IntentPlan`), assembled in one place from what a task holds.

`build_plan` reads what the build records while it grounds a candidate (the requests' kinds, which gold calls,
outputs, reasons and facts each request owns, the refused calls, the decision rules, the feelings text: the
`PLAN_META` keys of `Task.meta`), the gold and the pack's database, and writes the plan; `with_plan` moves those
keys out of `meta` into it. The build calls it on every accepted task and `python -m tau_emotion.tracer.plan
PACK...` on the committed task files, so a split rebuilt in place and a migrated one are the same bytes by
construction. Per fact it finds which call arguments the fact gives: the value an argument takes (`known_as`
"id"), or a field of the row the argument's id names (`known_as` "name": "Galaxy A55" for a model code, "credit
card" for a payment method id), so the user can answer a question about that id with the name.
"""

from __future__ import annotations

import argparse
import json
import re
import weakref
from pathlib import Path
from typing import TYPE_CHECKING, Any

from tau_emotion.core.facts import singular_key
from tau_emotion.core.goals import goals_from_gold, plan_from_gold
from tau_emotion.core.models import (
    Action,
    DecisionRule,
    IntentPlan,
    PlanFact,
    RefusalPlan,
    RequestPlan,
    Situation,
    Task,
)

if TYPE_CHECKING:
    from collections.abc import Sequence

    from tau_emotion.core.domain import Domain

#: the `meta` keys the build writes for the plan; `with_plan` moves them into it
PLAN_META = ("policy_challenge", "intents", "refused", "intent_gold", "decisions", "feeling", "situation")
_SECOND_PERSON = re.compile(r"\b(you are|you're|you were|yourself|yours|your|you)\b", re.I)
_FIRST = {"you are": "I am", "you're": "I'm", "you were": "I was", "yourself": "myself", "yours": "mine",
          "your": "my", "you": "I"}


def first_person(text: str) -> str:
    """'your reservation number is X' -> 'my reservation number is X' (the instruction's fact wording, said by the
    customer)."""
    return _SECOND_PERSON.sub(lambda m: _FIRST[m.group(1).lower()], text)


def _norm(value: Any) -> str:
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    return str(value).strip().lower().replace("_", " ")


def _leaves(value: Any, path: str = "") -> list[tuple[str, Any]]:
    """(dotted argument path, scalar) of a call's arguments: 'passengers.first_name'."""
    if isinstance(value, dict):
        return [x for k, v in value.items() for x in _leaves(v, f"{path}.{k}" if path else str(k))]
    if isinstance(value, list):
        return [x for v in value for x in _leaves(v, path)]
    return [(path, value)]


_THINGS: weakref.WeakKeyDictionary[Any, tuple[dict[str, list[int]], dict[int, set[str]]]] = \
    weakref.WeakKeyDictionary()


def _things(database: Any) -> tuple[dict[str, list[int]], dict[int, set[str]]]:
    """(id text -> the records it names, record -> its field values), once per database: a record is named by the
    key it is stored under (a row, an entry of a map) or, in a list, by its fields called `..._id` (an order's item)."""
    found = _THINGS.get(database)
    if found is not None:
        return found
    named: dict[str, list[int]] = {}
    fields: dict[int, set[str]] = {}
    stack: list[tuple[Any, str | None]] = [(rows, None) for rows in database.tables.values()]
    while stack:
        item, key = stack.pop()
        if isinstance(item, dict):
            own = {_norm(v) for v in item.values() if isinstance(v, (str, int, float)) and not isinstance(v, bool)}
            if key is not None and own:
                fields[id(item)] = own
                named.setdefault(_norm(key), []).append(id(item))
            for k, v in item.items():
                if key is None and k.endswith("_id") and isinstance(v, (str, int)) and own:
                    fields[id(item)] = own  # an entry of a list (an order's item) is named by its own ids
                    named.setdefault(_norm(v), []).append(id(item))
                if isinstance(v, (dict, list)):
                    stack.append((v, k if isinstance(v, dict) else None))
        elif isinstance(item, list):
            stack.extend((v, None) for v in item if isinstance(v, (dict, list)))
    _THINGS[database] = found = (named, fields)
    return found


def _names_it(database: Any, argument: Any, value: Any) -> bool:
    """Whether `value` (words, or a number of 4 or more digits; not an id itself) is a field of the record the id
    `argument` names."""
    said = _norm(value)
    if len(said) < 3 or (said.isdigit() and len(said) < 4) or isinstance(value, bool):
        return False
    named, fields = _things(database)
    if said in named:  # an id of its own (a user id a reservation holds): it names its record, not this one
        return False
    return any(said in fields[r] for r in named.get(_norm(argument), ()))


def _within(argument: Any, value: Any) -> bool:
    """A code the customer's words hold whole: 'JFK' in 'New York JFK', 'DFW' in 'Dallas (DFW)'."""
    if not (isinstance(argument, str) and isinstance(value, str) and len(argument) >= 3 and argument.isalnum()
            and argument.isupper() and " " in value.strip()):
        return False
    return argument in re.findall(r"[A-Za-z0-9]+", value)


def _answers(database: Any, value: Any, calls: list[Action]) -> tuple[list[str], list[str]]:
    """The "tool.argument" paths among `calls` whose value `value` is, and those whose id names a record of which
    `value` is a field."""
    given = [v for _, v in _leaves(value) if v is not None and not isinstance(v, bool) and str(v).strip()]
    direct, by_name = [], []
    for call in calls:
        for path, argument in _leaves(call.arguments):
            where = f"{call.name}.{path}"
            if isinstance(argument, bool) or argument is None:
                continue
            if any(_norm(v) == _norm(argument) or _within(argument, v) for v in given):
                direct.append(where)
            elif any(_names_it(database, argument, v) for v in given):
                by_name.append(where)
    direct = list(dict.fromkeys(direct))
    return direct, [w for w in dict.fromkeys(by_name) if w not in direct]


def _spoken(value: Any) -> list[str]:
    return [_norm(v) for _, v in _leaves(value) if isinstance(v, (str, int, float)) and not isinstance(v, bool)]


def _narrowed(value: Any, line: str, calls: list[Action], others: Sequence[str] = ()) -> Any:
    """This request's value of a fact two requests share (merged into a plural list): the items its own line or
    gold calls name, else those no other request's line names (`others`); the whole value when none or all do."""
    if not isinstance(value, list) or len(value) < 2:
        return value
    args = {_norm(v) for c in calls for _, v in _leaves(c.arguments) if not isinstance(v, bool)}

    def named(v: Any, text: str) -> bool:
        return any(len(s) >= 3 and re.search(rf"(?<!\w){re.escape(s)}(?!\w)", _norm(text)) for s in _spoken(v))

    own = [v for v in value if any(s in args for s in _spoken(v)) or named(v, line)]
    own = own or [v for v in value if not any(named(v, other) for other in others)]
    if not own or len(own) == len(value):
        return value
    return own[0] if len(own) == 1 else own


def _words(phrase: Any, key: str, value: Any) -> str:
    said = phrase(key, value) if phrase is not None else None
    return first_person(said) if said else ""


def _fact(domain: Domain, phrase: Any, task: Task, key: str, line: str, calls: list[Action],
          others: list[str] = ()) -> PlanFact:
    known = task.user.known[key]
    value = _narrowed(known, line, calls, others)
    name = key if value == known else singular_key(key)
    answers, names = _answers(domain.database, value, calls)
    return PlanFact(key=key, value=value, words=_words(phrase, name, value), answers=answers, names=names,
                    known_as="name" if names and not answers else "id")


def _handoffs(domain: Domain, task: Task, parts: list[dict[str, Any]], n_kinds: int) -> set[int]:
    """The parts that are the customer's ask for a person after a refusal they insisted on (the build adds one after
    each such refusal): a handover call and nothing else."""
    extra = len(parts) - n_kinds
    out: set[int] = set()
    for i, part in enumerate(parts):
        calls = [task.gold.actions[j].name for j in part.get("actions", []) if j < len(task.gold.actions)]
        if len(out) < extra and i > 0 and calls and all(domain.toolset.is_terminal(c) for c in calls) \
                and not part.get("facts") and not part.get("outputs") and not part.get("reasons"):
            out.add(i)
    return out


def _refusal_owner(parts: list[dict[str, Any]], handoffs: set[int], after: int, taken: set[int],
                   writes: set[int]) -> int | None:
    """The request a refused call belongs to: one whose own gold calls end just before it (the refused call is a
    request's last), preferring one followed by a handover, one that names a reason, and no write of its own."""
    end = -1
    fits = []
    for i, part in enumerate(parts):
        end = max([end, *part.get("actions", [])])
        if i not in handoffs and i not in taken and end + 1 == after:
            fits.append(i)
    if not fits:
        return None
    return max(fits, key=lambda i: (i + 1 in handoffs, bool(parts[i].get("reasons")),
                                    not set(parts[i].get("actions", [])) & writes, i))


def build_plan(domain: Domain, task: Task) -> IntentPlan:
    """The plan of `task` from its `PLAN_META` keys, gold and the pack's database; a task without them (a hand-written
    one) gets a one-request plan of its whole gold (`core.goals.plan_from_gold`)."""
    from tau_emotion.tracer.answers import DECLINED
    from tau_emotion.tracer.hints import load_hints
    from tau_emotion.tracer.refine import FIRST, say

    meta = task.meta
    parts = meta.get("intent_gold")
    actions = task.gold.actions
    lines = task.user.intents or [task.user.instruction]
    if not isinstance(parts, list) or len(parts) != len(lines):
        return plan_from_gold(task, domain.toolset, domain.database)
    kinds = list(meta.get("intents") or [])
    handoffs = _handoffs(domain, task, parts, len(kinds))
    drafts = [i for i in range(len(parts)) if i not in handoffs]  # draft k is request drafts[k]
    goals = goals_from_gold(domain.toolset, domain.database, actions, [list(p.get("actions", [])) for p in parts])
    writes = {j for j, a in enumerate(actions) if a.name in domain.toolset and domain.toolset[a.name].writes}
    refusals: dict[int, RefusalPlan] = {}
    for r in sorted(meta.get("refused") or [], key=lambda r: int(r.get("after", len(actions)))):
        after = int(r.get("after", len(actions)))
        i = _refusal_owner(parts, handoffs, after, set(refusals), writes)
        if i is None:
            continue
        line = lines[i].lower()
        smaller = DECLINED in line or (DECLINED in task.user.instruction.lower() and len(meta["refused"]) == 1)
        refusals[i] = RefusalPlan(call=Action(name=r["name"], arguments=r.get("arguments") or {}), after=after,
                                  then="insist" if i + 1 in handoffs else "accept", declines_smaller=smaller)
    decisions: dict[int, DecisionRule] = {}
    for d in meta.get("decisions") or []:
        k = int(d.get("intent", 0))
        if k < len(drafts):
            decisions[drafts[k]] = DecisionRule(
                figure=say(d["ask"], FIRST), amount=str(d["amount"]), threshold=float(d["threshold"]),
                over=say(d.get("decline") or "", FIRST), outcome="over" if d["branch"] == "decline" else "under")
    phrase = load_hints(domain).fact_phrase
    owned = {k for p in parts for k in p.get("facts") or []}
    requests = []
    for i, part in enumerate(parts):
        calls = [actions[j] for j in part.get("actions", []) if j < len(actions)]
        if i in refusals:
            calls.append(refusals[i].call)
        others = [line for j, line in enumerate(lines) if j != i]
        facts = [_fact(domain, phrase, task, k, lines[i], calls, others)
                 for k in dict.fromkeys(part.get("facts") or []) if k in task.user.known]
        kind = "handover" if i in handoffs else (kinds[drafts.index(i)] if drafts.index(i) < len(kinds) else "request")
        requests.append(RequestPlan(kind=kind, actions=list(part.get("actions", [])), facts=facts,
                                    decision=decisions.get(i), refusal=refusals.get(i),
                                    outputs=list(part.get("outputs", [])), reasons=list(part.get("reasons", [])),
                                    goal=goals[i]))
    every = [*actions, *(r.call for r in refusals.values())]
    caller = [_fact(domain, phrase, task, k, task.user.instruction, every)
              for k in task.user.known if k not in owned and k != "preferences"]
    feeling = meta.get("feeling")
    facts = meta.get("situation") if isinstance(meta.get("situation"), dict) else {}
    situation = Situation(feeling=feeling, **{k: v for k, v in facts.items() if k in Situation.model_fields}) \
        if isinstance(feeling, str) and feeling.strip() else None
    return IntentPlan(requests=requests, caller=caller, situation=situation)


def with_plan(domain: Domain, task: Task) -> Task:
    """`task` with its plan, and without the `meta` keys the plan now carries."""
    plan = build_plan(domain, task)
    meta = {k: v for k, v in task.meta.items() if k not in PLAN_META}
    copy = task.model_copy(update={"plan": plan, "meta": meta})
    copy._source = task.source
    return copy


# --------------------------------------------------------------------------- committed task files


def migrate_file(domain: Domain, path: Path) -> int:
    """Give every task of a pack's task file its plan (`with_plan`), in place; returns how many changed."""
    from tau_emotion.core.state import write_text_atomic

    rows = json.loads(path.read_text(encoding="utf-8"))
    out, changed = [], 0
    for row in rows:
        task = Task.model_validate(row)
        if row.get("domain") == domain.name and task.plan is None:
            task = with_plan(domain, task)
            changed += 1
        out.append(task.model_dump(mode="json"))
    write_text_atomic(path, json.dumps(out, indent=1, ensure_ascii=False) + "\n")
    return changed


# --------------------------------------------------------------------------- reading a task, planned or not


def refused_calls(task: Task) -> list[dict[str, Any]]:
    """The task's refused requests as {name, arguments, after}: from its plan, or (a candidate) from `meta`."""
    if task.plan is not None:
        return [{"name": r.call.name, "arguments": r.call.arguments, "after": r.after} for r in task.plan.refusals]
    return list(task.meta.get("refused") or [])


def request_kinds(task: Task) -> list[str]:
    """The kinds of the task's requests (a handover after an insisted refusal is not one of its own)."""
    if task.plan is not None:
        return [r.kind for r in task.plan.requests if r.kind != "handover"]
    return list(task.meta.get("intents") or [])


def policy_challenge(task: Task) -> bool:
    return bool(refused_calls(task))


def feeling_of(task: Task) -> str:
    """The task's feelings text: its plan's situation, or (a candidate) `meta.feeling`."""
    if task.plan is not None:
        return task.plan.situation.feeling if task.plan.situation is not None else ""
    return str(task.meta.get("feeling") or "")


def decision_branches(task: Task) -> list[str]:
    """Per decision rule of the task, its branch: 'decline' (the figure is over the threshold) or 'proceed'."""
    if task.plan is not None:
        return ["decline" if r.decision.outcome == "over" else "proceed" for r in task.plan.requests if r.decision]
    return [d["branch"] for d in task.meta.get("decisions") or []]


def main(argv: list[str] | None = None) -> None:
    """`python -m tau_emotion.tracer.plan PACK... [--file F]`: write the plans into the packs' committed task files."""
    from importlib.resources import files

    from tau_emotion.core.manager import load_all_plugins
    from tau_emotion.tracer.hints import load_hints

    parser = argparse.ArgumentParser(description=main.__doc__)
    parser.add_argument("packs", nargs="+")
    parser.add_argument("--file", help="a task file other than the pack's data/tasks.json")
    args = parser.parse_args(argv)
    pm = load_all_plugins()
    for name in args.packs:
        domain = pm.catalog("domains").get(name)
        load_hints(domain, pm)
        path = Path(args.file) if args.file else Path(str(files(domain.package).joinpath("data/tasks.json")))
        print(f"{name}: {migrate_file(domain, path)} task(s) given a plan in {path}")


if __name__ == "__main__":
    main()
