"""Their tools and data on our copy-on-write `State`.

Their tools are classes with `invoke(data, **kwargs)` and `get_info()`, where `data` is their
loader's `{table: {key: row}}` dict, changed in place. `ClassicData` gives them that shape over an
episode's `State`, so a trajectory changes the database exactly as in their env while a reset costs
nothing. A tool that raises gets the text their `Env.step` would produce ("Error: ..."), not a harness
error. `calculate` runs our bounded evaluator (`calculator.py`) instead of their `eval`.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Iterator, Mapping, MutableMapping
from typing import Any

from tau_emotion.core.errors import DataError
from tau_emotion.core.state import Database, State
from tau_emotion.core.tools import Tool
from tau_emotion.domain_packs.classic import calculator

VALUES_TABLE = "__values__"  # top-level entries of their data that are not {key: row} tables
# Tools named like this only read; they see the snapshot without copying rows. Anything else is a write.
READ_PREFIXES = ("get_", "find_", "list_", "search_", "check_", "calculate", "think", "transfer_", "troubleshoot_")
# Their tools that we do not run: name -> ours, with the same `(data, **kwargs)` signature and results.
REPLACEMENTS: dict[str, Callable[..., Any]] = {"calculate": calculator.calculate}
_MISSING = object()


def database_from(data: Mapping[str, Any], where: str) -> Database:
    """Their loaded data as a `Database`: dict entries are tables, anything else goes to VALUES_TABLE."""
    if VALUES_TABLE in data:
        raise DataError(f"{where}: their data has a top-level key '{VALUES_TABLE}', which the adapter reserves")
    tables = {name: rows for name, rows in data.items() if isinstance(rows, dict)}
    values = {name: value for name, value in data.items() if not isinstance(value, dict)}
    if values:
        tables[VALUES_TABLE] = values
    return Database(tables)


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
    """One of their tool classes as a core `Tool`, with their schema word for word.

    Arguments are passed as given (deep-copied, since their tools store argument lists in rows);
    their env does no validation either, so a bad call fails inside the tool, as it would there.
    """

    def __init__(self, impl: Any, *, terminal: bool = False, writes: bool | None = None):
        self.impl = impl
        self.info = impl.get_info()
        function = self.info["function"]
        self.name = function["name"]
        self.fn = REPLACEMENTS.get(self.name, impl.invoke)
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
            return self.fn(data=ClassicData(state, read_only=not self.writes), **kwargs)
        except Exception as exc:  # their Env.step turns every exception into this observation
            return f"Error: {exc}"
