"""Their env module, read as source and loaded piece by piece, with their package `__init__`s skipped.

A τ-bench-style env (`<package>/envs/<env>/env.py`) passes everything a domain needs to
`Env.__init__`: the data loader, the tool classes, the wiki, the rules, and the task list of each
split (imported under `match task_split:` or `if task_split == ...:`), and names its terminal tools.
τ-Emotion-Bench's envs also take `emotion_enabled` and import `tasks_<split>_no_emotion` without it:
those modules are the splits `<split>-no-emotion`, found by their import or as siblings.
`read_env_source` finds these in the module's syntax tree without importing it; `EnvModule` then
imports each piece on its own. The package `__init__`s are skipped because they import litellm and
create OpenAI clients (tau-trait's cannot even be imported without OPENAI_API_KEY set), so listing or
running a classic domain imports no model library and calls no model.
"""

from __future__ import annotations

import ast
import importlib
import importlib.util
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

from tau_emotion.core.errors import DataError
from tau_emotion.core.registry import resolve_target


def parent_packages(module: str) -> list[str]:
    """`a.b.c` -> `["a", "a.b"]`."""
    parts = module.split(".")
    return [".".join(parts[:i]) for i in range(1, len(parts))]


@contextmanager
def without_package_inits(packages: list[str]) -> Iterator[None]:
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


NO_EMOTION_MODULE = "_no_emotion"  # τ-Emotion-Bench: `tasks_test_no_emotion.py` holds `tasks_test.py`'s tasks without emotion
NO_EMOTION_SPLIT = "-no-emotion"


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
            module = _absolute(node, package)
            for alias in node.names:
                out[no_emotion_split(split) if module.endswith(NO_EMOTION_MODULE) else split] = f"{module}:{alias.name}"


def no_emotion_split(split: str) -> str:
    """`test` -> `test-no-emotion`: the split of the no-emotion twins of `split`'s tasks."""
    return split + NO_EMOTION_SPLIT


def _no_emotion_twins(splits: dict[str, str]) -> dict[str, str]:
    """Splits whose task module has a `<module>_no_emotion` sibling the env does not import by name.

    τ-Emotion-Bench's env imports `tasks_<split>_no_emotion` when built with `emotion_enabled=False`,
    possibly by a computed name; a sibling module that exists is its split, whatever the env's code.
    """
    found: dict[str, str] = {}
    for split, ref in splits.items():
        module, _, attr = ref.partition(":")
        twin = no_emotion_split(split)
        if split.endswith(NO_EMOTION_SPLIT) or twin in splits or module.endswith(NO_EMOTION_MODULE):
            continue
        try:
            exists = importlib.util.find_spec(module + NO_EMOTION_MODULE) is not None
        except (ImportError, ValueError):
            exists = False
        if exists:
            found[twin] = f"{module}{NO_EMOTION_MODULE}:{attr}"
    return found


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
        splits.update(_no_emotion_twins(splits))
        if {"data_load_func", "tools"} <= refs.keys() and splits:
            return EnvSource(module, cls.name, refs, splits, terminate)
    raise DataError(f"{spec.origin}: no τ-bench-style env class found (an __init__ that passes data_load_func "
                    "and tools to Env.__init__ and imports its tasks per task_split)")


class EnvModule:
    """One env of their package (`tau_trait`, `airline`): its pieces, each imported on first use."""

    def __init__(self, package: str, env: str):
        self.package = package
        self.env = env
        self.module = f"{package}.envs.{env}.env"

    def __repr__(self) -> str:
        return f"EnvModule({self.module!r})"

    def installed(self) -> bool:
        try:
            return importlib.util.find_spec(self.package) is not None
        except (ImportError, ValueError):  # e.g. sys.modules[package] is None
            return False

    def light(self) -> Any:
        """A context in which their env's modules import without their package `__init__`s."""
        return without_package_inits(parent_packages(self.module))

    @cached_property
    def source(self) -> EnvSource:
        with self.light():
            return read_env_source(self.module)

    def piece(self, key: str, default: Any = None) -> Any:
        """What their env passes as `key` (`tools`, `wiki`, ...): imported when it is a reference."""
        ref = self.source.refs.get(key, default)
        if isinstance(ref, str) and ":" in ref:
            with self.light():
                return resolve_target(ref)
        return ref

    @cached_property
    def tool_classes(self) -> list[Any]:
        return list(self.piece("tools"))

    def load_data(self) -> dict[str, Any]:
        """Their data loader's output: `{name: {key: row}}` (a fresh copy on every call)."""
        return self.piece("data_load_func")()

    def wiki(self) -> str:
        return str(self.piece("wiki", ""))

    @property
    def splits(self) -> list[str]:
        return list(self.source.splits)

    def raw_tasks(self, split: str) -> list[Any]:
        with self.light():
            return list(resolve_target(self.source.splits[split]))
