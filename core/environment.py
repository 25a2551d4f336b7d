"""The executable environment: a database with cheap per-episode copies, and typed tools.

`Database` holds the immutable initial snapshot of a domain: a mapping of table name to a
mapping of row key to a JSON-like row. Each episode works on a `State`, a copy-on-write
overlay: a row is copied the first time it is read through the state and every change stays
in the overlay, so a reset costs nothing and memory grows only with what an episode touched.

The content hash is a sum of per-row SHA-256 digests (mod 2**256). Summation makes it
independent of key order and lets a state's hash be updated from the rows it changed,
instead of re-hashing the whole database as tau-bench does after every episode.

`Toolset` turns typed Python functions into JSON schemas (docstring -> description) and
validates agent arguments with pydantic before calling the function.
"""

from __future__ import annotations

import copy
import hashlib
import inspect
import json
import re
from collections.abc import Callable, Iterator, Mapping, MutableMapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, get_type_hints

from pydantic import ConfigDict, Field, ValidationError, create_model

_MOD = 1 << 256
_DELETED = object()


class ToolError(Exception):
    """Raised by a tool for a request it refuses; the message is returned to the agent."""


class DataError(ValueError):
    """A domain data file is malformed; the message names the file and the field."""


def canonical_json(value: Any) -> str:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str)


def _row_digest(table: str, key: str, row: Any) -> int:
    data = f"{table}\x00{key}\x00{canonical_json(row)}".encode()
    return int.from_bytes(hashlib.sha256(data).digest(), "big")


class Database:
    """An immutable initial snapshot: {table: {key: row}}."""

    def __init__(self, tables: Mapping[str, Mapping[str, Any]]):
        self._tables: dict[str, dict[str, Any]] = {name: dict(rows) for name, rows in tables.items()}
        self._digests: dict[str, dict[str, int]] | None = None
        self._hash: int | None = None

    @classmethod
    def from_json(cls, path: str | Path | Any) -> Database:
        """Load `{table: {key: row}}` (or `{table: [row, ...]}` with an `id` field) from a JSON file."""
        name = str(path)
        try:
            text = path.read_text(encoding="utf-8")
            raw = json.loads(text)
        except json.JSONDecodeError as exc:
            raise DataError(f"{name}: invalid JSON at line {exc.lineno} column {exc.colno}: {exc.msg}") from None
        except OSError as exc:
            raise DataError(f"{name}: cannot read ({exc.strerror})") from None
        if not isinstance(raw, dict):
            raise DataError(f"{name}: top level must be an object of tables, got {type(raw).__name__}")
        tables: dict[str, dict[str, Any]] = {}
        for table, rows in raw.items():
            if isinstance(rows, dict):
                tables[table] = rows
            elif isinstance(rows, list):
                keyed = {}
                for i, row in enumerate(rows):
                    if not isinstance(row, dict) or "id" not in row:
                        raise DataError(f"{name}: table '{table}' row {i} has no 'id' field")
                    keyed[str(row["id"])] = row
                tables[table] = keyed
            else:
                raise DataError(f"{name}: table '{table}' must be an object or a list, got {type(rows).__name__}")
        return cls(tables)

    @property
    def tables(self) -> Mapping[str, Mapping[str, Any]]:
        return self._tables

    def _ensure_digests(self) -> None:
        if self._digests is None:
            digests = {t: {k: _row_digest(t, k, r) for k, r in rows.items()} for t, rows in self._tables.items()}
            self._hash = sum(d for rows in digests.values() for d in rows.values()) % _MOD
            self._digests = digests

    def row_digest(self, table: str, key: str) -> int | None:
        self._ensure_digests()
        assert self._digests is not None
        return self._digests.get(table, {}).get(key)

    @property
    def content_hash(self) -> str:
        self._ensure_digests()
        return f"{self._hash:064x}"

    def state(self) -> State:
        """A fresh per-episode copy (copy-on-write; costs nothing until rows are touched)."""
        return State(self)

    def to_dict(self) -> dict[str, dict[str, Any]]:
        return copy.deepcopy(self._tables)


class Table(MutableMapping[str, Any]):
    """One table of a `State`. Reading a row copies it into the overlay, so tools may mutate it."""

    __slots__ = ("_name", "_base", "_overlay")

    def __init__(self, name: str, base: Mapping[str, Any], overlay: dict[str, Any]):
        self._name = name
        self._base = base
        self._overlay = overlay

    def __getitem__(self, key: str) -> Any:
        row = self._overlay.get(key)
        if row is _DELETED:
            raise KeyError(key)
        if row is None:
            if key not in self._base:
                raise KeyError(key)
            row = copy.deepcopy(self._base[key])
            self._overlay[key] = row
        return row

    def peek(self, key: str, default: Any = None) -> Any:
        """Read a row without copying it; the caller must not mutate what it gets."""
        row = self._overlay.get(key)
        if row is _DELETED:
            return default
        if row is not None:
            return row
        return self._base.get(key, default)

    def __contains__(self, key: object) -> bool:
        row = self._overlay.get(key)  # type: ignore[call-overload]
        if row is _DELETED:
            return False
        return row is not None or key in self._base

    def __setitem__(self, key: str, value: Any) -> None:
        self._overlay[key] = value

    def __delitem__(self, key: str) -> None:
        if key not in self:
            raise KeyError(key)
        self._overlay[key] = _DELETED

    def __iter__(self) -> Iterator[str]:
        for key in self._base:
            if self._overlay.get(key) is not _DELETED:
                yield key
        for key, row in self._overlay.items():
            if key not in self._base and row is not _DELETED:
                yield key

    def __len__(self) -> int:
        return sum(1 for _ in self)

    def scan(self) -> Iterator[tuple[str, Any]]:
        """Iterate (key, row) without copying rows; for searches that only read."""
        for key in self:
            yield key, self.peek(key)


class State(Mapping[str, Table]):
    """A per-episode view of a `Database`: `state["users"]["u1"]` reads (and copies) a row."""

    def __init__(self, db: Database):
        self._db = db
        self._overlays: dict[str, dict[str, Any]] = {}
        self._tables: dict[str, Table] = {}

    def __getitem__(self, name: str) -> Table:
        table = self._tables.get(name)
        if table is None:
            base = self._db.tables.get(name)
            if base is None:
                base = {}
            overlay = self._overlays.setdefault(name, {})
            table = self._tables[name] = Table(name, base, overlay)
        return table

    def __iter__(self) -> Iterator[str]:
        names = dict.fromkeys(self._db.tables)
        names.update(dict.fromkeys(k for k, v in self._overlays.items() if v))
        return iter(names)

    def __len__(self) -> int:
        return sum(1 for _ in self)

    @property
    def database(self) -> Database:
        return self._db

    def changed(self) -> dict[str, dict[str, Any]]:
        """Rows whose content differs from the snapshot ({table: {key: row or None if deleted}})."""
        out: dict[str, dict[str, Any]] = {}
        for table, overlay in self._overlays.items():
            base = self._db.tables.get(table, {})
            for key, row in overlay.items():
                if row is _DELETED:
                    if key in base:
                        out.setdefault(table, {})[key] = None
                elif key not in base or canonical_json(row) != canonical_json(base[key]):
                    out.setdefault(table, {})[key] = row
        return out

    @property
    def content_hash(self) -> str:
        db = self._db
        total = int(db.content_hash, 16)
        for table, overlay in self._overlays.items():
            for key, row in overlay.items():
                old = db.row_digest(table, key)
                if old is not None:
                    total -= old
                if row is not _DELETED:
                    total += _row_digest(table, key, row)
        return f"{total % _MOD:064x}"

    def to_dict(self) -> dict[str, dict[str, Any]]:
        return {name: {k: copy.deepcopy(self[name].peek(k)) for k in self[name]} for name in self}


# --------------------------------------------------------------------------- tools


@dataclass(frozen=True)
class ToolInfo:
    writes: bool = False
    terminal: bool = False


def tool(fn: Callable | None = None, *, writes: bool = False, terminal: bool = False) -> Any:
    """Mark a domain function as a tool. `writes`: it changes the database; `terminal`: it ends the episode."""

    def mark(f: Callable) -> Callable:
        f.__tau_tool__ = ToolInfo(writes=writes, terminal=terminal)  # type: ignore[attr-defined]
        return f

    return mark(fn) if fn is not None else mark


_PARAM_LINE = re.compile(r"^\s*(\w+)\s*(?:\([^)]*\))?\s*:\s*(.+)$")


def _parse_docstring(doc: str) -> tuple[str, dict[str, str]]:
    """Split a Google-style docstring into (description, {param: description})."""
    lines = inspect.cleandoc(doc or "").splitlines()
    desc: list[str] = []
    params: dict[str, str] = {}
    section = "desc"
    current: str | None = None
    for line in lines:
        stripped = line.strip()
        if stripped in ("Args:", "Arguments:", "Parameters:"):
            section, current = "args", None
            continue
        if stripped in ("Returns:", "Raises:", "Example:", "Examples:"):
            section = "other"
            continue
        if section == "desc":
            desc.append(stripped)
        elif section == "args":
            m = _PARAM_LINE.match(line)
            if m and not line.startswith(" " * 8):
                current = m.group(1)
                params[current] = m.group(2).strip()
            elif current and stripped:
                params[current] += " " + stripped
    return " ".join(x for x in desc if x).strip(), params


class Tool:
    """A typed function with its derived JSON schema and argument model."""

    def __init__(self, fn: Callable, name: str | None = None):
        self.fn = fn
        self.name = name or fn.__name__
        info: ToolInfo = getattr(fn, "__tau_tool__", ToolInfo())
        self.writes = info.writes
        self.terminal = info.terminal
        self.description, param_docs = _parse_docstring(fn.__doc__ or "")
        if not self.description:
            raise DataError(f"tool '{self.name}' has no docstring; its docstring is the description agents see")
        sig = inspect.signature(fn)
        hints = get_type_hints(fn)
        params = list(sig.parameters.values())
        if not params or params[0].name not in ("db", "state"):
            raise DataError(f"tool '{self.name}': the first parameter must be the database state ('db')")
        fields: dict[str, Any] = {}
        for p in params[1:]:
            annotation = hints.get(p.name, Any)
            default = ... if p.default is inspect.Parameter.empty else p.default
            fields[p.name] = (annotation, Field(default, description=param_docs.get(p.name)))
        self.model = create_model(
            f"{self.name}_args", __config__=ConfigDict(extra="forbid", strict=False), **fields
        )
        schema = self.model.model_json_schema()
        schema.pop("title", None)
        for prop in schema.get("properties", {}).values():
            prop.pop("title", None)
        schema.setdefault("required", [])
        self.parameters = schema
        self._plain = {p.name for p in params[1:]}

    @property
    def schema(self) -> dict[str, Any]:
        return {
            "type": "function",
            "function": {"name": self.name, "description": self.description, "parameters": self.parameters},
        }

    def validate(self, arguments: Mapping[str, Any]) -> dict[str, Any]:
        model = self.model.model_validate(arguments)
        return {k: getattr(model, k) for k in self._plain}

    def __call__(self, state: State, **kwargs: Any) -> Any:
        return self.fn(state, **kwargs)


def _format_validation_error(tool_name: str, exc: ValidationError) -> str:
    parts = []
    for err in exc.errors():
        loc = ".".join(str(x) for x in err.get("loc", ())) or "(arguments)"
        parts.append(f"{loc}: {err.get('msg')}")
    return f"Error: invalid arguments for {tool_name}: " + "; ".join(parts)


class Toolset:
    """The tools of a domain, by name."""

    def __init__(self, functions: list[Callable] | Mapping[str, Callable]):
        items = functions.items() if isinstance(functions, Mapping) else ((None, f) for f in functions)
        self.tools: dict[str, Tool] = {}
        for name, fn in items:
            t = fn if isinstance(fn, Tool) else Tool(fn, name)
            if t.name in self.tools:
                raise DataError(f"duplicate tool name '{t.name}'")
            self.tools[t.name] = t

    def __contains__(self, name: str) -> bool:
        return name in self.tools

    def __getitem__(self, name: str) -> Tool:
        return self.tools[name]

    @property
    def schemas(self) -> list[dict[str, Any]]:
        return [t.schema for t in self.tools.values()]

    def is_terminal(self, name: str) -> bool:
        t = self.tools.get(name)
        return bool(t and t.terminal)

    def call(self, state: State, name: str, arguments: Mapping[str, Any] | str) -> tuple[str, bool]:
        """Execute one call; returns (result text, is_error). Never raises for agent mistakes."""
        tool_ = self.tools.get(name)
        if tool_ is None:
            known = ", ".join(sorted(self.tools))
            return f"Error: unknown tool '{name}'. Available tools: {known}", True
        if isinstance(arguments, str):
            try:
                arguments = json.loads(arguments) if arguments.strip() else {}
            except json.JSONDecodeError as exc:
                return f"Error: arguments for {name} are not valid JSON ({exc.msg} at position {exc.pos})", True
        if not isinstance(arguments, Mapping):
            return f"Error: arguments for {name} must be a JSON object", True
        try:
            kwargs = tool_.validate(arguments)
        except ValidationError as exc:
            return _format_validation_error(name, exc), True
        try:
            result = tool_(state, **kwargs)
        except ToolError as exc:
            return f"Error: {exc}", True
        except (KeyError, ValueError, TypeError, LookupError, ArithmeticError) as exc:
            return f"Error: {type(exc).__name__}: {exc}", True
        return render_result(result), False


def render_result(result: Any) -> str:
    if isinstance(result, str):
        return result
    return json.dumps(result, ensure_ascii=False, default=str)
