"""Classic suites: τ-bench-style environment packages (`tau-trait` from PyPI, `tau_bench` from source) as domains.

Each domain is a plugin object (`tautrait_airline`, ..., `taubench_retail`) named by an entry point. It
reads the package's env module (`<package>/envs/<env>/env.py`) as source, without importing it: the env
constructor names the data loader, the tool classes, the wiki, the rules, the task module of every split
and the terminal tools. The pieces are then imported on their own, with the package `__init__`s skipped,
because those import litellm and create OpenAI clients (tau-trait's cannot even be imported without
OPENAI_API_KEY set). So listing or running a classic domain imports no model library and calls no model.

Their tools are run unchanged on our copy-on-write `State` through a dict-like view of the tables. A tool
that raises gets the text their `Env.step` would produce ("Error: ..."), not a harness error, so a trajectory
changes the database exactly as in their env and our reward agrees with their `calculate_reward`: the
final database must equal the gold replay's, and every gold output must have been told. Deliberate
differences stay, all from core's scorer: outputs match on word boundaries ("10" does not match "100"),
when the gold ends in a transfer the agent must have called it, and a user who gives up scores -1.

`native_env` and `native_reward` build and score their own env (with a silent user), for the parity tests
and `benchmarks/replay_vs_classic.py`.
"""

from __future__ import annotations

import ast
import copy
import importlib
import importlib.util
import inspect
import os
import re
import sys
from collections.abc import Iterable, Iterator, Mapping, MutableMapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from tau_emotion.core import hookimpl
from tau_emotion.core.domain import Domain
from tau_emotion.core.errors import DataError
from tau_emotion.core.models import Task
from tau_emotion.core.plugins import PluginUnavailable
from tau_emotion.core.state import Database, State
from tau_emotion.core.tools import Tool, Toolset

RESPOND = "respond"  # their pseudo-tool for "say this to the user"
VALUES_TABLE = "__values__"  # top-level entries of their data that are not {key: row} tables
# Tools named like this only read; they see the snapshot without copying rows. Anything else is a write.
READ_PREFIXES = ("get_", "find_", "list_", "search_", "check_", "calculate", "think", "transfer_", "troubleshoot_")
_MISSING = object()


# --------------------------------------------------------------------------- importing their pieces


def _parent_packages(module: str) -> list[str]:
    parts = module.split(".")
    return [".".join(parts[:i]) for i in range(1, len(parts))]


@contextmanager
def _without_package_inits(packages: list[str]) -> Iterator[None]:
    """Import submodules of `packages` without running the packages' own `__init__`.

    An empty module object with the package's `__path__` stands in while the submodules load, then
    goes, so a later ordinary `import` of the package runs its `__init__` as usual (and finds the
    submodules already loaded).
    """
    added: dict[str, Any] = {}
    try:
        for name in packages:
            if name in sys.modules:
                continue
            spec = importlib.util.find_spec(name)
            if spec is None or spec.submodule_search_locations is None:
                raise ImportError(f"{name} is not an installed package")
            added[name] = sys.modules[name] = importlib.util.module_from_spec(spec)
        yield
    finally:
        for name, stub in added.items():
            if sys.modules.get(name) is stub:
                del sys.modules[name]


def _resolve(ref: str) -> Any:
    module, _, attr = ref.partition(":")
    return getattr(importlib.import_module(module), attr)


@dataclass
class EnvSource:
    """What a τ-bench-style env's constructor passes to `Env.__init__`, read from its source."""

    module: str
    class_name: str
    refs: dict[str, Any]  # data_load_func / tools / wiki / rules: "module:attr" or a literal
    splits: dict[str, str]  # split -> "module:attr" of its task list
    terminate_tools: list[str] = field(default_factory=list)


def _absolute(node: ast.ImportFrom, package: str) -> str:
    if node.level:
        return importlib.util.resolve_name("." * node.level + (node.module or ""), package)
    return node.module or ""


def _split_label(test: ast.AST) -> str | None:
    """`task_split == "test"` -> "test"."""
    if isinstance(test, ast.Compare) and len(test.ops) == 1 and isinstance(test.ops[0], ast.Eq):
        for side in (test.left, test.comparators[0]):
            if isinstance(side, ast.Constant) and isinstance(side.value, str):
                return side.value
    return None


def _split_imports(body: list[ast.stmt], package: str, split: str | None, out: dict[str, str]) -> None:
    """Collect `from M import TASKS as tasks` under `match task_split: case "x":` or `if task_split == "x":`."""
    for node in body:
        if isinstance(node, ast.Match):
            for case in node.cases:
                pattern = case.pattern
                label = (pattern.value.value if isinstance(pattern, ast.MatchValue)
                         and isinstance(pattern.value, ast.Constant) else None)
                _split_imports(case.body, package, label, out)
        elif isinstance(node, ast.If):
            _split_imports(node.body, package, _split_label(node.test) or split, out)
            _split_imports(node.orelse, package, split, out)
        elif isinstance(node, ast.ImportFrom) and split is not None:
            for alias in node.names:
                out[split] = f"{_absolute(node, package)}:{alias.name}"


def _reference(value: ast.expr, imports: dict[str, str], constants: dict[str, Any], where: str) -> Any:
    """An argument of their `Env.__init__` call: an imported name ("module:attr") or a literal."""
    if isinstance(value, ast.Name) and value.id in imports:
        return imports[value.id]
    if isinstance(value, ast.Name) and value.id in constants:
        return constants[value.id]
    try:
        return ast.literal_eval(value)
    except ValueError:
        raise DataError(f"{where}={ast.unparse(value)} cannot be read without importing the env") from None


def read_env_source(module: str) -> EnvSource:
    """Read the env class of `module` (e.g. `tau_trait.envs.airline.env`) without importing it."""
    spec = importlib.util.find_spec(module)
    if spec is None or not spec.origin:
        raise DataError(f"{module}: module not found")
    package = module.rpartition(".")[0]
    with open(spec.origin, encoding="utf-8") as f:
        tree = ast.parse(f.read(), filename=spec.origin)
    imports: dict[str, str] = {}
    constants: dict[str, Any] = {}
    for node in tree.body:
        if isinstance(node, ast.ImportFrom):
            for alias in node.names:
                imports[alias.asname or alias.name] = f"{_absolute(node, package)}:{alias.name}"
        elif isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            try:
                constants[node.targets[0].id] = ast.literal_eval(node.value)
            except ValueError:
                pass
    for cls in (n for n in tree.body if isinstance(n, ast.ClassDef)):
        init = next((n for n in cls.body if isinstance(n, ast.FunctionDef) and n.name == "__init__"), None)
        if init is None:
            continue
        refs: dict[str, Any] = {}
        terminate: list[str] = []
        for node in ast.walk(init):
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "__init__":
                for kw in node.keywords:
                    if kw.arg in ("data_load_func", "tools", "wiki", "rules"):
                        refs[kw.arg] = _reference(kw.value, imports, constants, f"{spec.origin}: {kw.arg}")
            if isinstance(node, ast.Assign) and any(isinstance(t, ast.Attribute) and t.attr == "terminate_tools"
                                                    for t in node.targets):
                terminate = list(ast.literal_eval(node.value))
        splits: dict[str, str] = {}
        _split_imports(init.body, package, None, splits)
        if {"data_load_func", "tools"} <= refs.keys() and splits:
            return EnvSource(module, cls.name, refs, splits, terminate)
    raise DataError(f"{spec.origin}: no τ-bench-style env class found (an __init__ that passes data_load_func "
                    "and tools to Env.__init__ and imports its tasks per task_split)")


@contextmanager
def _placeholder_credentials() -> Iterator[None]:
    """Their user module builds OpenAI clients at import; it needs a key to exist, never to work."""
    added = "OPENAI_API_KEY" not in os.environ
    os.environ.setdefault("OPENAI_API_KEY", "unused-by-tau-emotion")
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    try:
        yield
    finally:
        if added:
            os.environ.pop("OPENAI_API_KEY", None)


# --------------------------------------------------------------------------- their tools on our state


class _ReadTable(Mapping[str, Any]):
    """A table as read-only tools see it: rows straight from the snapshot or the episode's overlay, uncopied."""

    __slots__ = ("_table",)

    def __init__(self, table: Any):
        self._table = table

    def __getitem__(self, key: str) -> Any:
        row = self._table.peek(key, _MISSING)
        if row is _MISSING:
            raise KeyError(key)
        return row

    def __contains__(self, key: object) -> bool:
        return key in self._table

    def __iter__(self) -> Iterator[str]:
        return iter(self._table)

    def __len__(self) -> int:
        return len(self._table)


class ClassicData(MutableMapping[str, Any]):
    """The `data` argument their tools get: `{table: {key: row}}` over an episode's `State`.

    Write tools get the state's tables (a row is copied into the episode's overlay when read, so
    in-place changes stay in the episode); read-only tools get uncopied rows. Top-level entries that
    are not tables live in the VALUES_TABLE under their own name.
    """

    __slots__ = ("_state", "_read_only")

    def __init__(self, state: State, read_only: bool = False):
        self._state = state
        self._read_only = read_only

    def _is_table(self, name: str) -> bool:
        return name != VALUES_TABLE and name in self._state.database.tables

    def __getitem__(self, name: str) -> Any:
        if self._is_table(name):
            table = self._state[name]
            return _ReadTable(table) if self._read_only else table
        values = self._state[VALUES_TABLE]
        if name not in values:
            raise KeyError(name)
        return values.peek(name) if self._read_only else values[name]

    def __setitem__(self, name: str, value: Any) -> None:
        if self._is_table(name):
            table = self._state[name]
            for key in list(table):
                del table[key]
            table.update(value)
        else:
            self._state[VALUES_TABLE][name] = value

    def __delitem__(self, name: str) -> None:
        if self._is_table(name):
            raise TypeError(f"cannot delete table '{name}'")
        del self._state[VALUES_TABLE][name]

    def __iter__(self) -> Iterator[str]:
        yield from (name for name in self._state.database.tables if name != VALUES_TABLE)
        yield from self._state[VALUES_TABLE]

    def __len__(self) -> int:
        return sum(1 for _ in self)


class ClassicTool(Tool):
    """One of their tool classes (`invoke(data, **kwargs)` + `get_info()`) as a core `Tool`.

    Arguments are passed as given (deep-copied, since their tools store argument lists in rows);
    their env does no validation either, so a bad call fails inside the tool, as it would there.
    """

    def __init__(self, impl: Any, *, terminal: bool = False, writes: bool | None = None):
        self.impl = impl
        self.info = impl.get_info()
        function = self.info["function"]
        self.fn = impl.invoke
        self.name = function["name"]
        self.description = function.get("description", "")
        self.parameters = function.get("parameters") or {"type": "object", "properties": {}}
        self.terminal = terminal
        self.writes = (not self.name.startswith(READ_PREFIXES)) if writes is None else writes

    @property
    def schema(self) -> dict[str, Any]:
        return self.info

    def validate(self, arguments: Mapping[str, Any]) -> dict[str, Any]:
        return copy.deepcopy(dict(arguments))

    def __call__(self, state: State, /, **kwargs: Any) -> Any:
        try:
            return self.impl.invoke(data=ClassicData(state, read_only=not self.writes), **kwargs)
        except Exception as exc:  # their Env.step turns every exception into this observation
            return f"Error: {exc}"


# --------------------------------------------------------------------------- tasks


_EMAIL = re.compile(r"[\w.+-]+@[\w-]+(?:\.[\w-]+)+")
_ZIP = re.compile(r"(?:\bzip code(?: is)?|\bzip(?: is)?|\bin|,)\s+(\d{5})\b", re.IGNORECASE)
_NAME = re.compile(r"\bYou(?:r)? (?:are|name is) ([A-Z][a-z]+(?: [A-Z][a-z]+)+)")


def known_facts(instruction: str, user_id: str) -> dict[str, Any]:
    """Facts the instruction gives the user, for the scripted user to answer with.

    The user id is only known when the instruction states it: in τ-bench retail the user
    authenticates by email or name and zip code, and an LLM user told its id would skip that.
    """
    known: dict[str, Any] = {}
    if user_id and user_id in instruction:
        known["user_id"] = user_id
    for key, pattern in (("name", _NAME), ("email", _EMAIL), ("zip_code", _ZIP)):
        m = pattern.search(instruction)
        if m:
            known[key] = (m.group(1) if m.groups() else m.group(0)).rstrip(".")
    return known


def _get(obj: Any, name: str, default: Any = None) -> Any:
    return obj.get(name, default) if isinstance(obj, Mapping) else getattr(obj, name, default)


def convert_task(raw: Any, *, domain: str, split: str, index: int, source: str, tools: set[str]) -> Task:
    """One of their task records (`user_id`, `instruction`, `actions`, `outputs`) as our `Task`.

    Gold actions that name no tool do nothing in their env ("Unknown action"), so they are dropped
    (kept in meta); a gold `respond` is not a tool call either.
    """
    actions: list[dict[str, Any]] = []
    dropped: list[dict[str, Any]] = []
    for i, action in enumerate(_get(raw, "actions") or []):
        name = _get(action, "name")
        kwargs = copy.deepcopy(dict(_get(action, "kwargs", None) or _get(action, "arguments", None) or {}))
        if name in tools:
            actions.append({"name": name, "arguments": kwargs})
        else:
            dropped.append({"index": i, "name": name, "arguments": kwargs})
    user_id = str(_get(raw, "user_id") or "")
    instruction = _get(raw, "instruction") or ""
    meta: dict[str, Any] = {"source": source, "task_index": index, "user_id": user_id}
    if _get(raw, "annotator") is not None:
        meta["annotator"] = str(_get(raw, "annotator"))
    if dropped:
        meta["dropped_gold_actions"] = dropped
    return Task.model_validate({
        "id": f"{domain}-{split}-{index:03d}",
        "domain": domain,
        "split": split,
        "user": {"instruction": instruction, "known": known_facts(instruction, user_id), "intents": []},
        "gold": {"actions": actions, "outputs": [str(o) for o in _get(raw, "outputs") or []]},
        "meta": meta,
    })


# --------------------------------------------------------------------------- the plugin


class SilentUser:
    """Stands in for their user simulator in `native_env`, so their env never calls a model."""

    def reset(self, instruction: str | None = None) -> str:
        return ""

    def step(self, content: str) -> str:
        return ""

    def get_total_cost(self) -> float:
        return 0.0


class ClassicPlugin:
    """The plugin for one classic domain, e.g. `tautrait-airline` from `tau_trait.envs.airline`."""

    def __init__(self, name: str, package: str, env: str, source: str, hint: str, title: str):
        self.name = name
        self.package = package
        self.env = env
        self.source = source
        self.hint = hint
        self.title = title
        self.module = f"{package}.envs.{env}.env"
        self._domain: Domain | None = None
        self._env_source: EnvSource | None = None
        self._tool_classes: list[Any] | None = None
        self.skipped_splits: dict[str, str] = {}

    def __repr__(self) -> str:
        return f"ClassicPlugin({self.name!r})"

    def check_available(self) -> None:
        try:
            found = importlib.util.find_spec(self.package) is not None
        except (ImportError, ValueError):
            found = False
        if not found:
            raise PluginUnavailable(self.hint)

    @hookimpl
    def tau_register_domains(self, register: Any) -> None:
        register(self.domain())

    # the pieces, imported lazily and without the package __init__s
    def _light(self) -> Any:
        return _without_package_inits(_parent_packages(self.module))

    def env_source(self) -> EnvSource:
        if self._env_source is None:
            with self._light():
                self._env_source = read_env_source(self.module)
        return self._env_source

    def _ref(self, key: str, default: Any = None) -> Any:
        ref = self.env_source().refs.get(key, default)
        if isinstance(ref, str) and ":" in ref:
            with self._light():
                return _resolve(ref)
        return ref

    def tool_classes(self) -> list[Any]:
        if self._tool_classes is None:
            self._tool_classes = list(self._ref("tools"))
        return self._tool_classes

    def toolset(self) -> Toolset:
        terminal = set(self.env_source().terminate_tools)
        return Toolset([ClassicTool(cls, terminal=cls.get_info()["function"]["name"] in terminal)
                        for cls in self.tool_classes()])

    def load_data(self) -> dict[str, Any]:
        """Their data loader's output: `{name: {key: row}}` (a fresh copy on every call)."""
        return self._ref("data_load_func")()

    def database(self) -> Database:
        data = self.load_data()
        if VALUES_TABLE in data:
            raise DataError(f"{self.name}: their data has a top-level key '{VALUES_TABLE}', which the adapter reserves")
        tables = {name: rows for name, rows in data.items() if isinstance(rows, dict)}
        values = {name: value for name, value in data.items() if not isinstance(value, dict)}
        if values:
            tables[VALUES_TABLE] = values
        return Database(tables)

    def policy(self) -> str:
        return str(self._ref("wiki", ""))

    def raw_tasks(self, split: str) -> list[Any]:
        ref = self.env_source().splits[split]
        with self._light():
            return list(_resolve(ref))

    def tasks(self) -> list[Task]:
        names = {cls.get_info()["function"]["name"] for cls in self.tool_classes()}
        out: list[Task] = []
        for split in self.env_source().splits:
            try:
                raw = self.raw_tasks(split)
            except Exception as exc:  # e.g. tau-trait's telecom dev split names a list its module lacks
                self.skipped_splits[split] = f"{type(exc).__name__}: {exc}"
                continue
            out.extend(convert_task(r, domain=self.name, split=split, index=i, source=self.source, tools=names)
                       for i, r in enumerate(raw))
        if self._domain is not None and self.skipped_splits:
            self._domain.meta["skipped_splits"] = dict(self.skipped_splits)
            self._domain.description = self.title + "".join(
                f" [split '{s}' unavailable: {why}]" for s, why in self.skipped_splits.items())
        return out

    def domain(self) -> Domain:
        """The domain, made once per process: its loaders run on first use and are cached."""
        if self._domain is None:
            self._domain = Domain(
                self.name, self.toolset, description=self.title,
                load_database=self.database, load_policy=self.policy, load_tasks=self.tasks,
                meta={"source": self.source, "env": self.module, "classic": True, "verbatim_schemas": True},
            )
        return self._domain

    # their own env, for parity checks and benchmarks
    def native_env(self, split: str = "test") -> Any:
        """Their env class for `split`, with a silent user (imports their package in full)."""
        source = self.env_source()
        with _placeholder_credentials():
            cls = getattr(importlib.import_module(source.module), source.class_name)
        kwargs: dict[str, Any] = {"user_strategy": "human", "user_model": "none", "task_split": split}
        if "task_index" in inspect.signature(cls).parameters:
            kwargs["task_index"] = 0
        for _ in range(100):  # without task_index, old versions pick randint(0, len(tasks)), one past the end
            try:
                env = cls(**kwargs)
                break
            except IndexError:
                continue
        else:
            raise RuntimeError(f"{source.module}.{source.class_name}: could not be constructed")
        env.user = SilentUser()
        return env

    def native_action(self, name: str, kwargs: dict[str, Any]) -> Any:
        return importlib.import_module(f"{self.package}.types").Action(name=name, kwargs=copy.deepcopy(kwargs))


def native_reward(plugin: ClassicPlugin, env: Any, task_index: int, calls: Iterable[tuple[str, dict[str, Any]]],
                  said: Iterable[str] = ()) -> float:
    """Their `calculate_reward` for a trajectory: the agent says `said`, then makes `calls`, in their env.

    A terminal call ends their episode and scores it there, as in their `Env.step`.
    """
    env.reset(task_index=task_index)
    for content in said:
        env.step(plugin.native_action(RESPOND, {"content": content}))
    for name, kwargs in calls:
        response = env.step(plugin.native_action(name, kwargs))
        if response.done:
            return float(response.reward)
    return float(env.calculate_reward().reward)


_TAU_TRAIT_HINT = "pip install 'tau-emotion-bench[classic]'"
_TAU_BENCH_HINT = "install tau-bench from source: pip install git+https://github.com/sierra-research/tau-bench"

tautrait_airline = ClassicPlugin("tautrait-airline", "tau_trait", "airline", "tau-trait", _TAU_TRAIT_HINT,
                                "τ-Trait airline (classic env from the tau-trait package)")
tautrait_retail = ClassicPlugin("tautrait-retail", "tau_trait", "retail", "tau-trait", _TAU_TRAIT_HINT,
                               "τ-Trait retail (classic env from the tau-trait package)")
tautrait_telecom = ClassicPlugin("tautrait-telecom", "tau_trait", "telecom", "tau-trait", _TAU_TRAIT_HINT,
                                "τ-Trait telecom (classic env from the tau-trait package)")
tautrait_telehealth = ClassicPlugin("tautrait-telehealth", "tau_trait", "telehealth", "tau-trait", _TAU_TRAIT_HINT,
                                   "τ-Trait telehealth (classic env from the tau-trait package)")
taubench_airline = ClassicPlugin("taubench-airline", "tau_bench", "airline", "tau-bench", _TAU_BENCH_HINT,
                                "τ-bench airline (classic env from the tau_bench package)")
taubench_retail = ClassicPlugin("taubench-retail", "tau_bench", "retail", "tau-bench", _TAU_BENCH_HINT,
                               "τ-bench retail (classic env from the tau_bench package)")

PLUGINS = [tautrait_airline, tautrait_retail, tautrait_telecom, tautrait_telehealth, taubench_airline, taubench_retail]
