"""The database side of the environment: an immutable snapshot and cheap per-episode copies.

`Database` holds the immutable initial snapshot of a domain: a mapping of table name to a
mapping of row key to a JSON-like row, frozen when it is loaded (`FrozenDict`, `FrozenList`: a
change raises TypeError), so nothing any plugin or tool does to a row it reads changes another
trial. Each episode works on a `State`, a copy-on-write overlay: a row is copied (thawed into
plain dicts and lists) the first time it is read through the state for writing and every change
stays in the overlay, so a reset costs nothing and memory grows only with what an episode touched.

The content hash is a sum of per-row SHA-256 digests (mod 2**256). Summation makes it
independent of key order and lets a state's hash be updated from the rows it changed,
instead of re-hashing the whole database as tau-bench does after every episode.
"""


from __future__ import annotations

import copy
import hashlib
import json
import math
import re
import stat
from collections.abc import Callable, Hashable, Iterator, Mapping, MutableMapping
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from tau_emotion.core.errors import DataError

_MOD = 1 << 256
_DELETED = object()
_ABSENT = object()  # in a savepoint's journal: the row had no overlay entry
_SCALARS = (str, int, float, bool, type(None))


def _refuse(self: Any, *args: Any, **kwargs: Any) -> Any:
    raise TypeError("this value belongs to the shared database snapshot and cannot be changed; "
                    "a tool reads a row to change with `state[table][key]`, which gives the episode its own copy")


class FrozenDict(dict):
    """A dict that refuses changes: rows of the snapshot. JSON, `==` with dicts and `isinstance(x, dict)`
    work as for a dict; `copy.deepcopy` and `thaw` give a plain, changeable copy; hashable by content."""

    __slots__ = ("_hash",)
    __setitem__ = __delitem__ = clear = pop = popitem = setdefault = update = __ior__ = _refuse

    def __hash__(self) -> int:  # type: ignore[override]
        try:
            return self._hash
        except AttributeError:
            self._hash: int = hash(frozenset(self.items()))
            return self._hash

    def __reduce__(self) -> Any:
        return FrozenDict, (dict(self),)

    def __copy__(self) -> dict:
        return dict(self)

    def __deepcopy__(self, memo: Any) -> Any:
        return thaw(self)


class FrozenList(list):
    """A list that refuses changes (see `FrozenDict`); slicing or `list(x)` gives a plain list."""

    __slots__ = ("_hash",)
    __setitem__ = __delitem__ = __iadd__ = __imul__ = append = extend = insert = pop = remove = clear = sort = \
        reverse = _refuse

    def __hash__(self) -> int:  # type: ignore[override]
        try:
            return self._hash
        except AttributeError:
            self._hash: int = hash(tuple(self))
            return self._hash

    def __reduce__(self) -> Any:
        return FrozenList, (list(self),)

    def __copy__(self) -> list:
        return list(self)

    def __deepcopy__(self, memo: Any) -> Any:
        return thaw(self)


def freeze(value: Any) -> Any:
    """`value` (JSON-like) with every dict and list made a `FrozenDict` / `FrozenList`; scalars as they are."""
    kind = type(value)
    if kind is dict:
        return FrozenDict({k: v if type(v) in _SCALARS else freeze(v) for k, v in value.items()})
    if kind is list:
        return FrozenList([v if type(v) in _SCALARS else freeze(v) for v in value])
    if kind in _SCALARS or kind is FrozenDict or kind is FrozenList:
        return value
    if isinstance(value, dict):
        return FrozenDict({k: freeze(v) for k, v in value.items()})
    if isinstance(value, (list, tuple)):
        return FrozenList([freeze(v) for v in value])
    return value


def thaw(value: Any) -> Any:
    """A plain, changeable deep copy of a JSON-like `value` (frozen or not), faster than `copy.deepcopy`."""
    kind = type(value)
    if kind in _SCALARS:
        return value
    if kind is dict or kind is FrozenDict:
        return {k: v if type(v) in _SCALARS else thaw(v) for k, v in value.items()}
    if kind is list or kind is FrozenList:
        return [v if type(v) in _SCALARS else thaw(v) for v in value]
    return copy.deepcopy(value)


def canonical_json(value: Any) -> str:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str)


def _row_digest(table: str, key: str, row: Any) -> int:
    data = f"{table}\x00{key}\x00{canonical_json(row)}".encode()
    return int.from_bytes(hashlib.sha256(data).digest(), "big")


def not_a_regular_file(path: Any) -> str | None:
    """Why `path` (a file-system path) cannot be read as a data file, or None: a FIFO or a device would block
    the reader forever, a folder is no file. Package resources that are not paths are not checked."""
    if not isinstance(path, Path):
        return None
    try:
        mode = path.stat().st_mode
    except OSError:
        return None  # reading says why, in the reader's words
    if stat.S_ISDIR(mode):
        return "is a folder, not a file"
    if not stat.S_ISREG(mode):
        return "is not a regular file (a pipe or a device?): refusing to read it"
    return None


def write_text_atomic(path: str | Path, text: str) -> None:
    """Write `text` to `path` so that a reader (or a crash, a full disk, `ulimit -f`) sees the old file or the
    new one, never half of it (`outputs.write_output`; an `OSError` is one line)."""
    from tau_emotion.core.outputs import write_output

    write_output(path, text)


class _NonFinite(ValueError):
    """A data file's NaN, Infinity or a number too large for a float: the scorer's hashes and the tools'
    arithmetic would carry it silently (NaN equals nothing, not even itself)."""


def _refuse_constant(name: str) -> Any:
    raise _NonFinite(name)


#: a number whose exponent has three or more digits: only such text can parse to infinity
_HUGE_EXPONENT = re.compile(r"[0-9.][eE][+]?[0-9]{3}")


def _finite_float(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):
        raise _NonFinite(text)
    return value


def read_json(path: str | Path | Any) -> Any:
    """A JSON data file (a path string, a `Path` or a package resource); any problem is a DataError naming it."""
    if isinstance(path, str):
        path = Path(path)
    problem = not_a_regular_file(path)
    if problem:
        raise DataError(f"{path}: {problem}")
    try:
        text = path.read_text(encoding="utf-8")
        return json.loads(text, parse_constant=_refuse_constant,
                          parse_float=_finite_float if _HUGE_EXPONENT.search(text) else None)
    except _NonFinite as exc:
        raise DataError(f"{path}: holds {exc}, which is not a finite number: JSON data files hold none "
                        f"(write null, or a finite number)") from None
    except json.JSONDecodeError as exc:
        raise DataError(f"{path}: invalid JSON at line {exc.lineno} column {exc.colno}: {exc.msg}") from None
    except RecursionError:
        raise DataError(f"{path}: the JSON nests too deep to read") from None
    except UnicodeDecodeError as exc:
        raise DataError(f"{path}: not UTF-8 text (byte {exc.start}: {exc.reason})") from None
    except OSError as exc:
        raise DataError(f"{path}: cannot read ({exc.strerror})") from None
    except ValueError as exc:  # an integer of thousands of digits
        raise DataError(f"{path}: cannot read: {str(exc).splitlines()[0][:200]}") from None


class Database:
    """An immutable initial snapshot: {table: {key: row}}, frozen (rows, tables and the mapping of tables).

    The row digests it caches are frozen too and its attributes cannot be set: every trial's hash is made from
    them, so a plugin handed a state (`view.scratch_state().database`) must not be able to change them."""

    __slots__ = ("_tables", "_digests", "_hash", "listed", "_indexes", "__weakref__")

    def __init__(self, tables: Mapping[str, Mapping[str, Any]]):
        tables = FrozenDict({name: FrozenDict({k: freeze(r) for k, r in rows.items()})
                             for name, rows in tables.items()})  # once per load: ~0.1 s per 150k values
        object.__setattr__(self, "_tables", tables)
        object.__setattr__(self, "_digests", None)
        object.__setattr__(self, "_hash", None)
        #: table -> key function -> {key value: row keys}: the snapshot's rows indexed for `Table.where`, built on
        #: first use (derived from the frozen rows, like the digests, so it never goes stale)
        object.__setattr__(self, "_indexes", {})
        #: table -> how its file gave it as a list of rows (keyed by `id`), for errors that lookups by key hit
        object.__setattr__(self, "listed", FrozenDict())

    def __setattr__(self, name: str, value: Any = None) -> None:
        raise AttributeError(f"a Database is an immutable snapshot: '{name}' cannot be set")

    __delattr__ = __setattr__

    def __getstate__(self) -> dict[str, Any]:  # pickling (an executor sending a domain to a worker)
        return {name: getattr(self, name) for name in ("_tables", "_digests", "_hash", "listed")}

    def __setstate__(self, state: dict[str, Any]) -> None:
        object.__setattr__(self, "_indexes", {})  # rebuilt on first use (key functions are not sent)
        for name, value in state.items():
            object.__setattr__(self, name, value)

    @classmethod
    def from_json(cls, path: str | Path | Any) -> Database:
        """Load `{table: {key: row}}` (or `{table: [row, ...]}` with an `id` field) from a JSON file."""
        name = str(path)
        raw = read_json(path)
        if not isinstance(raw, dict):
            raise DataError(f"{name}: top level must be an object of tables, got {type(raw).__name__}")
        tables: dict[str, dict[str, Any]] = {}
        listed: list[str] = []
        for table, rows in raw.items():
            if isinstance(rows, dict):
                tables[table] = rows
            elif isinstance(rows, list):
                listed.append(table)
                keyed = {}
                for i, row in enumerate(rows):
                    if not isinstance(row, dict) or "id" not in row:
                        raise DataError(f"{name}: table {table!r} row {i} has no 'id' field")
                    keyed[str(row["id"])] = row
                tables[table] = keyed
            else:
                raise DataError(f"{name}: table {table!r} must be an object or a list, got {type(rows).__name__}")
        database = cls(tables)
        object.__setattr__(database, "listed", FrozenDict({t: f"{name}: table '{t}' is a list, so its rows are keyed by their 'id' field "
                              f"({', '.join(list(tables[t])[:3]) or 'none'}); tools look rows up by key: write it "
                              f"as an object of rows by the key the tools use ({{\"KEY\": {{...}}, ...}})"
                           for t in listed}))
        return database

    @property
    def tables(self) -> Mapping[str, Mapping[str, Any]]:
        return self._tables

    def _ensure_digests(self) -> None:
        if self._digests is None:
            digests = FrozenDict({t: FrozenDict({k: _row_digest(t, k, r) for k, r in rows.items()})
                                  for t, rows in self._tables.items()})
            object.__setattr__(self, "_hash", sum(d for rows in digests.values() for d in rows.values()) % _MOD)
            object.__setattr__(self, "_digests", digests)

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
        return thaw(self._tables)


def _unfrozen(value: Any) -> Any:
    """`value` with every frozen part replaced by a plain copy, in place where it is plain already (a tool that
    stores a new row and keeps changing it must see its changes in the state)."""
    kind = type(value)
    if kind is FrozenDict or kind is FrozenList:
        return thaw(value)
    if kind is dict:
        for k, v in value.items():
            if type(v) not in _SCALARS:
                value[k] = _unfrozen(v)
    elif kind is list:
        for i, v in enumerate(value):
            if type(v) not in _SCALARS:
                value[i] = _unfrozen(v)
    return value


class Table(MutableMapping[str, Any]):
    """One table of a `State`. Reading a row copies it into the overlay, so tools may mutate it."""

    __slots__ = ("_name", "_base", "_overlay", "_saves", "_indexes")

    def __init__(self, name: str, base: Mapping[str, Any], overlay: dict[str, Any], saves: list[dict] | None = None,
                 indexes: dict[Any, dict[Hashable, list[str]]] | None = None):
        self._name = name
        self._base = base
        self._overlay = overlay
        self._saves: list[dict[tuple[str, str], Any]] = [] if saves is None else saves
        #: key function -> index of the snapshot's rows (`where`); shared by every state of one database
        self._indexes: dict[Any, dict[Hashable, list[str]]] = {} if indexes is None else indexes

    def _keep(self, key: str) -> None:
        """Inside a savepoint: remember the row's overlay entry as it was before the first change could reach it."""
        journal = self._saves[-1]
        where = (self._name, key)
        if where not in journal:
            row = self._overlay.get(key, _ABSENT)
            journal[where] = row if row is _ABSENT or row is _DELETED else thaw(row)

    def __getitem__(self, key: str) -> Any:
        row = self._overlay.get(key)
        if row is _DELETED:
            raise KeyError(key)
        if self._saves:
            self._keep(key)
        if row is None:
            if key not in self._base:
                raise KeyError(key)
            row = thaw(self._base[key])
            self._overlay[key] = row
        return row

    def peek(self, key: str, default: Any = None) -> Any:
        """Read a row without copying it: a snapshot row is frozen; one this episode changed is its own."""
        row = self._overlay.get(key)
        if row is _DELETED:
            return default
        if row is not None:
            if self._saves:  # the episode's own row: a tool could change what it peeked
                self._keep(key)
            return row
        return self._base.get(key, default)

    def __contains__(self, key: object) -> bool:
        row = self._overlay.get(key)  # type: ignore[call-overload]
        if row is _DELETED:
            return False
        return row is not None or key in self._base

    def __setitem__(self, key: str, value: Any) -> None:
        if self._saves:
            self._keep(key)
        self._overlay[key] = _unfrozen(value)

    def __delitem__(self, key: str) -> None:
        if key not in self:
            raise KeyError(key)
        if self._saves:
            self._keep(key)
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

    def where(self, key: Callable[[Any], Hashable], value: Hashable) -> Iterator[tuple[str, Any]]:
        """The (key, row) pairs of `scan` whose `key(row) == value`, without looking at the others: the snapshot's
        rows through an index built once per database and key function, then the rows this state changed or
        added (checked one by one). The same rows as filtering `scan`, the unchanged ones first. `key` must be one
        function for every call (a module-level one): the index is kept per function."""
        index = self._indexes.get(key)
        if index is None:
            index = {}
            for k, row in self._base.items():
                index.setdefault(key(row), []).append(k)
            self._indexes[key] = index
        overlay = self._overlay
        for k in index.get(value, ()):
            if k not in overlay:
                yield k, self._base[k]
        for k, row in list(overlay.items()):
            if row is not _DELETED and key(row) == value:
                yield k, self.peek(k)


class State(Mapping[str, Table]):
    """A per-episode view of a `Database`: `state["users"]["u1"]` reads (and copies) a row."""

    def __init__(self, db: Database):
        self._db = db
        self._overlays: dict[str, dict[str, Any]] = {}
        self._tables: dict[str, Table] = {}
        #: open savepoints, innermost last: each maps (table, key) to the row's overlay entry before it
        self._saves: list[dict[tuple[str, str], Any]] = []

    def __getitem__(self, name: str) -> Table:
        table = self._tables.get(name)
        if table is None:
            base = self._db.tables.get(name)
            if base is None:
                base = {}
            overlay = self._overlays.setdefault(name, {})
            indexes = getattr(self._db, "_indexes", None)
            table = self._tables[name] = Table(name, base, overlay, self._saves,
                                               None if indexes is None else indexes.setdefault(name, {}))
        return table

    @contextmanager
    def atomic(self) -> Iterator[None]:
        """All or nothing: when the block raises (anything, a timeout included) every row is as before it.

        A savepoint of the overlay: the first time the block can reach a row (reading it to change, peeking
        at one this episode already changed, setting or deleting it) its entry is kept, so the cost is one
        row copy per row touched, and nothing for rows the block leaves alone. Savepoints nest: an inner one
        that succeeds hands what it kept to the outer one."""
        journal: dict[tuple[str, str], Any] = {}
        self._saves.append(journal)
        try:
            yield
        except BaseException:
            self._saves.pop()
            for (table, key), row in journal.items():
                overlay = self._overlays.setdefault(table, {})
                if row is _ABSENT:
                    overlay.pop(key, None)
                else:
                    overlay[key] = row
            raise
        self._saves.pop()
        if self._saves:
            outer = self._saves[-1]
            for where, row in journal.items():
                outer.setdefault(where, row)

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
        return {name: {k: thaw(self[name].peek(k)) for k in self[name]} for name in self}
