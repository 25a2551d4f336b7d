"""A domain: tools, initial database, policy, its machine-checkable rules, tasks and tool-dependency edges.

A domain pack builds one `Domain` and registers it through `tau_register_domains`. Files are
read lazily from the pack's own package (`importlib.resources`), so registering a domain costs
nothing until a run uses it. Adapters (the classic suites) pass loader callables instead of a package.

The policy rules contract: a pack declares the machine-checkable parts of its written policy as
`Rule`s (the `@rule` decorator), and everyone who asks whether a call is allowed (the conformance
suite, task validation, error analysis, a pack's own task generators) asks
`Domain.violations(state, action)`; nobody loops over the rules themselves.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from functools import cached_property
from importlib.resources import files
from types import ModuleType
from typing import TYPE_CHECKING, Any

from pydantic import ValidationError

from tau_emotion.core.errors import DataError
from tau_emotion.core.models import Action, Task
from tau_emotion.core.state import Database, State, read_json
from tau_emotion.core.tools import Toolset

if TYPE_CHECKING:
    from tau_emotion.core.procedure import ProcedureSpec


@dataclass(frozen=True)
class Rule:
    """One machine-checkable part of a domain's written policy.

    `check(state, action_name, arguments)` sees the state *before* a call and the call's raw arguments,
    and returns a one-line reason when the policy forbids the call, else None. It ignores calls it is
    not about and arguments it cannot read (the tool itself reports those). Tools stay permissive on
    purpose, as in tau-bench: the agent must apply the policy; rules let others check that it did.
    """

    name: str
    check: Callable[[State, str, dict[str, Any]], str | None]

    def __call__(self, state: State, action_name: str, arguments: dict[str, Any]) -> str | None:
        return self.check(state, action_name, arguments)


def rule(check: Callable[[State, str, dict[str, Any]], str | None]) -> Rule:
    """Decorator: a policy-rule function as a `Rule` named after the function (its docstring says the policy)."""
    return Rule(check.__name__, check)


@dataclass(frozen=True)
class Violation:
    """A call the policy forbids: which rule says so, and its one-line reason."""

    rule: str
    reason: str


def format_validation_error(exc: ValidationError) -> str:
    err = exc.errors()[0]
    loc = ".".join(str(x) for x in err.get("loc", ())) or "(top level)"
    more = f" (+{len(exc.errors()) - 1} more)" if len(exc.errors()) > 1 else ""
    return f"field '{loc}': {err.get('msg')}{more}"


def parse_tasks(raw: Any, source: str, domain: str | None = None) -> list[Task]:
    """Validate a list of task dicts; raise DataError naming the file, the task id and the field."""
    if isinstance(raw, dict) and "tasks" in raw:
        raw = raw["tasks"]
    if not isinstance(raw, list):
        raise DataError(f"{source}: expected a list of tasks, got {type(raw).__name__}")
    tasks: list[Task] = []
    seen: set[str] = set()
    for i, item in enumerate(raw):
        ident = item.get("id", f"#{i}") if isinstance(item, dict) else f"#{i}"
        try:
            task = Task.model_validate(item)
        except ValidationError as exc:
            raise DataError(f"{source}: task '{ident}': {format_validation_error(exc)}") from None
        if domain is not None and task.domain != domain:
            raise DataError(f"{source}: task '{ident}': field 'domain' is '{task.domain}', expected '{domain}'")
        task._source = source
        if not (task.gold.actions or task.gold.outputs or task.gold.reasons):  # every agent would score 1 on it
            raise DataError(f"{source}: task '{ident}': its gold is empty (no actions, outputs or reasons), so any "
                            "agent would solve it; give it gold or leave it out")
        if task.id in seen:
            raise DataError(f"{source}: task '{ident}': duplicate task id")
        seen.add(task.id)
        tasks.append(task)
    return tasks


def load_tasks_file(path: Any, domain: str | None = None) -> list[Task]:
    return parse_tasks(read_json(path), str(path), domain)


def collect_tools(source: ModuleType | str | Iterable[Callable]) -> list[Callable]:
    if isinstance(source, str):
        source = importlib.import_module(source)
    if isinstance(source, ModuleType):
        return [v for v in vars(source).values() if callable(v) and hasattr(v, "__tau_tool__")]
    return list(source)


class Domain:
    """Everything the harness needs to run tasks in one domain."""

    def __init__(
        self,
        name: str,
        tools: ModuleType | str | Iterable[Callable] | Callable[[], Toolset],
        *,
        package: str | None = None,
        description: str = "",
        graph_edges: Iterable[tuple[str, str]] | None = None,
        load_database: Callable[[], Database] | None = None,
        load_policy: Callable[[], str] | None = None,
        load_tasks: Callable[[], list[Task]] | None = None,
        load_refusal_reasons: Callable[[], dict[str, list[str]]] | None = None,
        load_procedure: Callable[[], Any] | None = None,
        policy_rules: Iterable[Rule] = (),
        meta: dict[str, Any] | None = None,
    ):
        self.name = name
        self.package = package
        self.description = description
        self._tools = tools
        self._graph_edges = list(graph_edges) if graph_edges is not None else None
        self._load_database = load_database
        self._load_policy = load_policy
        self._load_tasks = load_tasks
        self._load_refusal_reasons = load_refusal_reasons
        self._load_procedure = load_procedure
        self.policy_rules: list[Rule] = list(policy_rules)
        for i, r in enumerate(self.policy_rules):
            if not isinstance(r, Rule):
                raise DataError(f"domain '{name}': policy_rules[{i}] ({getattr(r, '__name__', r)!r}) is not a Rule; "
                                f"declare it with @rule (tau_emotion.core.domain)")
        #: descriptive facts for listings and reports (source, version); no behaviour hangs on them —
        #: what a plugin needs from a domain it asks for through a hook of its own
        self.meta = meta or {}

    def __repr__(self) -> str:
        return f"Domain({self.name!r})"

    def violations(self, state: State, action: Action) -> list[Violation]:
        """Every policy rule the call `action` breaks when made in `state` (the state before it); empty: allowed."""
        arguments = action.arguments if isinstance(action.arguments, dict) else {}
        return [Violation(r.name, reason) for r in self.policy_rules if (reason := r(state, action.name, arguments))]

    def _file(self, relative: str) -> Any:
        if self.package is None:
            raise DataError(f"domain '{self.name}' has no package to read {relative} from")
        return files(self.package).joinpath(relative)

    @cached_property
    def toolset(self) -> Toolset:
        if callable(self._tools) and not isinstance(self._tools, ModuleType):
            made = self._tools()
            return made if isinstance(made, Toolset) else Toolset(list(made))
        return Toolset(collect_tools(self._tools))

    @cached_property
    def database(self) -> Database:
        if self._load_database is not None:
            return self._load_database()
        return Database.from_json(self._file("data/db.json"))

    @cached_property
    def policy(self) -> str:
        if self._load_policy is not None:
            return self._load_policy()
        return self._file("data/policy.md").read_text(encoding="utf-8")

    @cached_property
    def refusal_reasons(self) -> dict[str, list[str]]:
        """Policy reason -> phrasings that explain it (`data/refusals.json`; {} when the pack has none).

        A refusal task's gold names reasons (`gold.reasons`); the agent must say one phrasing of each.
        """
        if self._load_refusal_reasons is not None:
            return self._load_refusal_reasons()
        if self.package is None or not self._file("data/refusals.json").is_file():
            return {}
        path = self._file("data/refusals.json")
        raw = read_json(path)
        reasons = raw.get("reasons", raw) if isinstance(raw, dict) else None
        if not isinstance(reasons, dict):
            raise DataError(f"{path}: expected {{\"reasons\": {{reason: {{\"phrasings\": [...]}}}}}}")
        out: dict[str, list[str]] = {}
        for name, entry in reasons.items():
            phrasings = entry.get("phrasings") if isinstance(entry, dict) else entry
            if not isinstance(phrasings, list) or not phrasings or not all(isinstance(p, str) for p in phrasings):
                raise DataError(f"{path}: reason '{name}': expected a non-empty list of phrasings")
            out[name] = phrasings
        return out

    @cached_property
    def procedure(self) -> ProcedureSpec | None:
        """The procedure rules the pack declares (`data/procedure.json`, validated against the tools and tables;
        docs/procedure.md), or None when it declares none: then no procedure is measured in this domain."""
        from tau_emotion.core.procedure import load_spec

        if self._load_procedure is not None:
            raw, source = self._load_procedure(), f"domain '{self.name}' procedure"
        elif self.package is None or not self._file("data/procedure.json").is_file():
            return None
        else:
            path = self._file("data/procedure.json")
            raw, source = read_json(path), str(path)
        return None if raw is None else load_spec(self, raw, source)

    @cached_property
    def all_tasks(self) -> list[Task]:
        if self._load_tasks is not None:
            return self._load_tasks()
        return load_tasks_file(self._file("data/tasks.json"), self.name)

    def tasks(self, split: str | None = "test") -> list[Task]:
        return [t for t in self.all_tasks if split in (None, "all") or t.split == split]

    @property
    def splits(self) -> list[str]:
        return sorted({t.split for t in self.all_tasks})

    @cached_property
    def graph_edges(self) -> list[tuple[str, str]] | None:
        """Declared tool-dependency edges (None when the pack declares none)."""
        if self._graph_edges is not None:
            return self._graph_edges
        if self.package is None:
            return None
        path = self._file("data/graph.json")
        if not path.is_file():
            return None
        raw = read_json(path)
        edges = raw.get("edges", raw) if isinstance(raw, dict) else raw
        if not isinstance(edges, list) or not all(isinstance(e, list) and len(e) == 2
                                                  and all(isinstance(x, str) for x in e) for e in edges):
            raise DataError(f"{path}: expected {{\"edges\": [[tool, tool], ...]}} (pairs of tool names)")
        return [tuple(edge) for edge in edges]  # type: ignore[misc]
