"""The conformance suite every domain pack passes, built-in or third-party, as plain functions.

Each check takes a `Domain` and returns the problems it found (an empty list: the check passes),
so a pack's own tests, `tests/domain_packs/test_conformance.py` and a script can all run it:

    from tau_emotion.domain_packs.conformance import CHECKS, load_domain
    domain = load_domain("acme")
    problems = {name: check(domain) for name, check in CHECKS.items()}

`check_domain(domain)` runs them all; `load_domain(name)` finds a domain through the installed
plugins (entry points), as `tau run` does.
"""

from __future__ import annotations

import copy
import json
import re
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from tau_emotion.core.errors import TauError
from tau_emotion.core.reward import GoldReplayError, check_task, expected_hash, replay
from tau_emotion.core.state import Database, canonical_json, thaw
from tau_emotion.core.tools import Tool, ToolError, Toolset, ToolTimeout

if TYPE_CHECKING:
    from tau_emotion.core.domain import Domain

GENERIC_WORDS = {"update", "modify", "manage", "details", "info", "items", "item", "user"}


def load_domain(name: str, plugins: list[str] | tuple[str, ...] = ()) -> Domain:
    """The installed domain `name` (its plugin found through its entry point; `plugins` adds module paths)."""
    from tau_emotion.core.domain import Domain
    from tau_emotion.core.manager import load_all_plugins

    obj = load_all_plugins(plugins).catalog("domains").get(name)
    return obj if isinstance(obj, Domain) else obj()


def tool_schemas_derive(domain: Domain) -> list[str]:
    """Every tool has a JSON schema with a description (and, unless verbatim, described parameters)."""
    if not domain.toolset.tools:
        return [f"{domain.name} has no tools"]
    problems = []
    for schema in domain.toolset.schemas:
        fn = schema["function"]
        if not fn["description"]:
            problems.append(f"{fn['name']}: no description")
        if fn["parameters"]["type"] != "object":
            problems.append(f"{fn['name']}: parameters are not an object")
        json.dumps(schema)
        if domain.meta.get("verbatim_schemas"):
            continue  # an adapted suite keeps its authors' schemas word for word, so agents see the same prompts
        for pname, param in fn["parameters"].get("properties", {}).items():
            if not param.get("description"):
                problems.append(f"{domain.name}.{fn['name']}: parameter {pname} has no description")
    return problems


def tasks_validate_and_are_unique(domain: Domain) -> list[str]:
    """Tasks load, ids are unique, each names this domain, has an instruction and only known gold tools."""
    tasks = domain.tasks(None)
    if not tasks:
        return [f"{domain.name} has no tasks"]
    problems = []
    if len({t.id for t in tasks}) != len(tasks):
        problems.append(f"{domain.name}: task ids repeat")
    for task in tasks:
        if task.domain != domain.name:
            problems.append(f"{task.id}: domain is '{task.domain}', not '{domain.name}'")
        if not task.user.instruction.strip():
            problems.append(f"{task.id}: empty instruction")
        problems += [f"{task.id}: unknown gold tool {a.name}" for a in task.gold.actions if a.name not in domain.toolset]
    return problems


def every_gold_sequence_replays(domain: Domain) -> list[str]:
    """Every gold action sequence runs on the initial database without a tool error."""
    problems = []
    for task in domain.tasks(None):
        try:
            replay(domain, task)
        except (GoldReplayError, TauError) as exc:  # each names the task and the action
            problems.append(str(exc))
    return problems


def every_gold_trajectory_scores_one(domain: Domain) -> list[str]:
    """The gold trajectory of every task scores 1."""
    return [p for p in (check_task(domain, t) for t in domain.tasks(None)) if p]


def refusal_reasons_are_declared_and_used(domain: Domain) -> list[str]:
    """Every declared refusal reason has phrasings, and every reason a gold names is declared."""
    declared = domain.refusal_reasons
    problems = [f"refusal reason {r}: phrasings must be a non-empty list of non-empty strings"
                for r, p in declared.items()
                if not (isinstance(p, list) and p and all(isinstance(x, str) and x.strip() for x in p))]
    used = {r for t in domain.tasks(None) for r in t.gold.reasons}
    problems += [f"{domain.name}: gold names undeclared refusal reason {r}" for r in sorted(used - set(declared))]
    return problems


def reset_is_deterministic(domain: Domain) -> list[str]:
    """Replaying a gold twice gives the same state, the initial state is untouched, expected_hash agrees."""
    problems = []
    initial = domain.database.content_hash
    for task in domain.tasks(None)[:10]:
        first = replay(domain, task).content_hash
        if replay(domain, task).content_hash != first:
            problems.append(f"{task.id}: replaying the gold twice gives two states")
        if domain.database.state().content_hash != initial:
            problems.append(f"{task.id}: replay changed the initial database")
        if expected_hash(domain, task) != first:
            problems.append(f"{task.id}: expected_hash disagrees with the replay")
    return problems


def hash_is_stable_under_key_order(domain: Domain) -> list[str]:
    """The database hash does not depend on the order of keys."""
    tables = domain.database.tables
    reordered = {t: {k: _reverse(rows[k]) for k in reversed(list(rows))} for t, rows in reversed(list(tables.items()))}
    if Database(reordered).content_hash != domain.database.content_hash:
        return [f"{domain.name}: the database hash changes with key order"]
    return []


def policy_problems(domain: Domain) -> list[str]:
    """What a policy fails to govern: every tool that changes data or ends the conversation must be named by
    its words in the policy, and no gold action may break one of the pack's machine-checked policy rules."""
    policy_words = set(re.findall(r"[a-z]+", domain.policy.lower()))
    problems = []
    if len(policy_words) < 20:
        problems.append(f"{domain.name}: the policy is {len(policy_words)} distinct words")
    for tool in domain.toolset.tools.values():
        if not (tool.writes or tool.terminal):
            continue
        words = [w for w in tool.name.split("_") if len(w) >= 4 and w not in GENERIC_WORDS] or [tool.name]
        said = [w for w in words if any(x.startswith(w[:5]) for x in policy_words)]
        if 2 * len(said) < len(words):
            problems.append(f"{domain.name}: the policy never speaks of {tool.name} ({', '.join(words)})")
    for task in domain.tasks(None):
        state = domain.database.state()
        for i, action in enumerate(task.gold.actions):
            problems += [f"{task.id}: gold action {i} ({action.name}) breaks {v.rule}: {v.reason}"
                         for v in domain.violations(state, action)]
            domain.toolset.call(state, action.name, action.arguments)
    return problems


def gold_procedure_problems(domain: Domain) -> list[str]:
    """The pack's procedure file (`data/procedure.json`, when it has one) validates, and every gold identifies the
    caller before what needs it and acts only on records the caller may act on (`identify_before`, `own_records`;
    confirmation and the deciding figure are about what is said, which gold calls do not hold)."""
    from tau_emotion.core.models import Message, ToolCall
    from tau_emotion.core.procedure import check

    try:
        if domain.procedure is None:
            return []
    except TauError as exc:
        return [str(exc)]
    problems = []
    for task in domain.tasks(None):
        calls = [Message(role="assistant", tool_calls=[ToolCall(id=f"g{i}", name=a.name, arguments=dict(a.arguments))])
                 for i, a in enumerate(task.gold.actions)]
        parts = check(domain, task, calls)
        problems += [f"{task.id}: gold action {v.message} ({v.tool}) breaks {v.rule}: {v.detail}"
                     for v in (parts.violations if parts else []) if v.rule in ("identify_before", "own_records")]
    return problems


class InjectedFault(RuntimeError):
    """Raised by the conformance suite inside a tool call, after the tool did its writes."""


#: what a call may raise after its writes: a refusal, a caught error, an uncaught one, the deadline
INJECTED: tuple[type[BaseException], ...] = (ToolError, KeyError, InjectedFault, ToolTimeout)


def _raising_after(tool: Tool, exc: type[BaseException]) -> Tool:
    """`tool` that does all its work and then raises `exc`: a write followed by an error."""
    base = type(tool)

    def call(self: Tool, state: Any, /, **kwargs: Any) -> Any:
        base.__call__(self, state, **kwargs)
        raise exc("injected after the write")

    injected = copy.copy(tool)
    injected.__class__ = type(f"{base.__name__}RaisingAfter", (base,), {"__call__": call})
    return injected


def write_then_raise_changes_nothing(domain: Domain) -> list[str]:
    """A call that raises after writing leaves the state as it was before the call (all-or-nothing tool calls).

    Every write tool is called where a gold trajectory calls it and the call changes the database (the gold
    before it replayed first); the same call is then made with an error of each kind raised after the
    tool's own work, and the state must be unchanged. A write tool no gold call exercises is named."""
    wanted = {name for name, t in domain.toolset.tools.items() if t.writes}
    checked: set[str] = set()
    problems = []
    for task in domain.tasks(None):
        if checked == wanted:
            break
        state = domain.database.state()
        for action in task.gold.actions:
            if action.name in wanted and action.name not in checked:
                before, changed = state.content_hash, state.changed()
                seen = canonical_json(changed)  # changed() hands out the live rows
                trial = domain.database.state()
                for table, rows in changed.items():  # the same state, to see the call change it
                    for key, row in rows.items():
                        if row is None:
                            del trial[table][key]
                        else:
                            trial[table][key] = thaw(row)
                _, failed = domain.toolset.call(trial, action.name, action.arguments)
                if not failed and trial.content_hash != before:
                    checked.add(action.name)
                    for exc in INJECTED:
                        tools = Toolset({action.name: _raising_after(domain.toolset[action.name], exc)})
                        try:
                            _, is_error = tools.call(state, action.name, action.arguments)
                        except InjectedFault:
                            is_error = True
                        if not is_error or state.content_hash != before or canonical_json(state.changed()) != seen:
                            problems.append(f"{task.id}: {action.name} raising {exc.__name__} after its write "
                                            "left the state changed")
            domain.toolset.call(state, action.name, action.arguments)
    if not domain.meta.get("classic"):  # an adapted suite's tasks are its authors': gold cannot be added there
        problems += [f"{domain.name}: write tool {name} is called by no gold that changes the database, so a write "
                     "then an error is unchecked (give a task gold that calls it)" for name in sorted(wanted - checked)]
    return problems


def _reverse(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _reverse(value[k]) for k in reversed(list(value))}
    if isinstance(value, list):
        return [_reverse(v) for v in value]
    return value


#: every check, by name, in the order they are best read (a failing early one explains later ones)
CHECKS: dict[str, Callable[[Domain], list[str]]] = {
    "tool_schemas_derive": tool_schemas_derive,
    "tasks_validate_and_are_unique": tasks_validate_and_are_unique,
    "every_gold_sequence_replays": every_gold_sequence_replays,
    "every_gold_trajectory_scores_one": every_gold_trajectory_scores_one,
    "refusal_reasons_are_declared_and_used": refusal_reasons_are_declared_and_used,
    "reset_is_deterministic": reset_is_deterministic,
    "hash_is_stable_under_key_order": hash_is_stable_under_key_order,
    "policy_governs_the_tools_and_gold_obeys_its_rules": policy_problems,
    "gold_identifies_the_caller_and_acts_on_own_records": gold_procedure_problems,
    "write_then_raise_changes_nothing": write_then_raise_changes_nothing,
}


def check_domain(domain: Domain) -> list[str]:
    """Every check's problems, each prefixed with the check's name (empty: the domain conforms).

    A check that cannot run to the end (a gold that does not replay breaks several) reports why.
    """
    problems = []
    for name, check in CHECKS.items():
        try:
            problems += [f"{name}: {p}" for p in check(domain)]
        except (GoldReplayError, TauError) as exc:
            problems.append(f"{name}: {exc}")
    return problems
