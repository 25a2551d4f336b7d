"""The `sqlite` result store: one row per run (config, summary) and one per finished trial.

WAL mode and a commit per trial: a killed run keeps every trial that finished. A trial is keyed
by (run, task, trial); re-running an errored trial replaces its row. Run metadata lives in its own
table (`run_meta`, added without touching the others), so files written before it stay readable.

Every `sqlite3` error becomes one line (a `TauError`) naming the database and what to do. A
database another writer holds busy is retried with backoff for as long as it takes (with a
warning), never ending the run; the runner calls `save_result` on a writer thread, so the
waiting never blocks the episodes in flight.
"""

from __future__ import annotations

import functools
import json
import sqlite3
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from tau_emotion.core import hookimpl
from tau_emotion.core.errors import TauError
from tau_emotion.core.limits import redact, scrub_literals
from tau_emotion.core.models import EpisodeResult, RunConfig, Termination
from tau_emotion.core.protocols import UNREADABLE

SCHEMA = """
CREATE TABLE IF NOT EXISTS runs (
    run_id TEXT PRIMARY KEY,
    created REAL NOT NULL,
    config TEXT NOT NULL,
    summary TEXT,
    finished REAL
);
CREATE TABLE IF NOT EXISTS trials (
    run_id TEXT NOT NULL REFERENCES runs(run_id),
    task_id TEXT NOT NULL,
    trial INTEGER NOT NULL,
    domain TEXT NOT NULL,
    reward REAL NOT NULL,
    status TEXT NOT NULL,
    termination TEXT NOT NULL,
    result TEXT NOT NULL,
    finished REAL NOT NULL,
    PRIMARY KEY (run_id, task_id, trial)
);
CREATE TABLE IF NOT EXISTS run_meta (
    run_id TEXT PRIMARY KEY,
    meta TEXT NOT NULL
);
"""


#: seconds sqlite itself waits on a lock before we back off and retry (short: the retry loop warns and waits)
BUSY_TIMEOUT = 2.0
#: longest pause between retries of a busy database
MAX_BACKOFF = 2.0


class DatabaseError(TauError):
    """The results database cannot be used; the message names it and says what to do."""


def database_error(path: Any, exc: BaseException) -> DatabaseError:
    """One line for a `sqlite3` error: the database, what went wrong, what to do."""
    text = str(exc) or type(exc).__name__
    lowered = text.lower()
    if "not a database" in lowered or "malformed" in lowered or "corrupt" in lowered:
        hint = "it is not a SQLite results database or it is damaged: pass another --db, or move the file away"
    elif "readonly" in lowered or "read-only" in lowered:
        hint = "it is read-only here: pass a writable --db"
    elif "disk is full" in lowered or ("disk i/o" in lowered and _no_room(path)):
        hint = "the disk holding it is full (or a file-size limit, ulimit -f, was reached): free space, or pass --db elsewhere"
    elif "disk i/o" in lowered:
        hint = ("a read or write of it failed (a full disk, a file-size limit such as ulimit -f, a failing or "
                "network disk?): free space or pass --db elsewhere")
    elif "unable to open" in lowered:
        hint = "it cannot be opened (a folder, a missing or unwritable directory?): pass a writable file with --db"
    elif "locked" in lowered or "busy" in lowered:
        hint = "another process holds it: wait for it, or pass another --db"
    elif "no such table" in lowered or "no such column" in lowered:
        hint = "it is not a results database of this tool: pass another --db"
    else:
        hint = "check the file, or pass another --db"
    return DatabaseError(f"results database {path}: {text}; {hint}")


def _no_room(path: Any) -> bool:
    """Whether the folder of `path` has (almost) no free space: SQLite says "disk I/O error" for a full disk."""
    import shutil

    try:
        return shutil.disk_usage(Path(str(path)).expanduser().resolve().parent).free < (1 << 20)
    except (OSError, ValueError):
        return False


def _busy(exc: sqlite3.Error) -> bool:
    return isinstance(exc, sqlite3.OperationalError) and any(w in str(exc).lower() for w in ("locked", "busy"))


def _one_line_errors(method: Callable[..., Any]) -> Callable[..., Any]:
    @functools.wraps(method)
    def wrapper(self: SqliteStore, *args: Any, **kwargs: Any) -> Any:
        try:
            return method(self, *args, **kwargs)
        except sqlite3.Error as exc:
            raise database_error(self.path, exc) from None

    return wrapper


class SqliteStore:
    """A `protocols.Store` in one SQLite file (the default store)."""

    def __init__(self, path: str | Path, *, create: bool = True):
        self.path = Path(path)
        if not create and str(path) != ":memory:" and not self.path.is_file():
            where = "is a folder, not a results file" if self.path.is_dir() else "does not exist"
            raise TauError(f"no results file at {path}: it {where} (use --db, or --store for another store)")
        if self.path.is_dir():
            raise DatabaseError(f"results database {path} is a folder: pass a file path with --db")
        try:
            if create and str(path) != ":memory:":
                self.path.parent.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise DatabaseError(f"results database {path}: cannot create its folder ({exc.strerror}); "
                                "pass a writable --db") from None
        try:
            # the runner writes from one writer thread; reads happen before and after it runs
            self.conn = sqlite3.connect(self.path, timeout=BUSY_TIMEOUT, check_same_thread=False)
            self._retry(lambda: self._setup(create))
        except sqlite3.Error as exc:
            raise database_error(path, exc) from None

    def _setup(self, create: bool) -> None:
        if create:
            self.conn.execute("PRAGMA journal_mode=WAL")
            self.conn.execute("PRAGMA synchronous=NORMAL")
            self.conn.executescript(SCHEMA)
            self.conn.commit()
        else:  # reading: touch nothing, but fail now (one line) when the file is no results database
            self.conn.execute("SELECT run_id FROM runs LIMIT 1").fetchall()

    def _retry(self, action: Callable[[], Any]) -> Any:
        """Run `action`, retrying with backoff while another writer holds the database; other errors raise."""
        wait, warned = 0.05, False
        while True:
            try:
                return action()
            except sqlite3.Error as exc:
                if not _busy(exc):
                    raise
                if self.conn.in_transaction:
                    self.conn.rollback()
                if not warned:
                    print(f"tau: results database {self.path} is busy (another writer holds it); retrying",
                          file=sys.stderr)
                    warned = True
                time.sleep(wait)
                wait = min(wait * 2, MAX_BACKOFF)

    def _write(self, sql: str, params: tuple[Any, ...]) -> None:
        def once() -> None:
            with self.conn:
                self.conn.execute(sql, params)

        try:
            self._retry(once)
        except sqlite3.Error as exc:
            raise database_error(self.path, exc) from None

    def create_run(self, run_id: str, config: RunConfig) -> None:
        self._write("INSERT INTO runs (run_id, created, config) VALUES (?, ?, ?)",
                    (run_id, time.time(), config.model_dump_json()))

    @_one_line_errors
    def run_config(self, run_id: str) -> RunConfig | None:
        row = self.conn.execute("SELECT config FROM runs WHERE run_id = ?", (run_id,)).fetchone()
        if not row:
            return None
        try:
            return RunConfig.model_validate_json(row[0])
        except (ValueError, TypeError) as exc:
            raise DatabaseError(f"results database {self.path}: run '{run_id}': its stored config cannot be read "
                                f"({str(exc).splitlines()[0][:200]}); start a new run") from None

    @_one_line_errors
    def run_ids(self) -> list[str]:
        return [r[0] for r in self.conn.execute("SELECT run_id FROM runs ORDER BY created")]

    @_one_line_errors
    def runs(self) -> list[dict[str, Any]]:
        check = _LOOKS_READABLE if _has_json(self.conn) else "1"  # an SQLite without JSON functions: unchecked
        rows = self.conn.execute(
            f"SELECT r.run_id, r.created, r.config, r.summary, COUNT(t.task_id), "
            f"SUM(CASE WHEN t.task_id IS NULL OR {check} THEN 0 ELSE 1 END) FROM runs r "
            "LEFT JOIN trials t ON t.run_id = r.run_id GROUP BY r.run_id ORDER BY r.created")
        metas = dict(self.conn.execute("SELECT run_id, meta FROM run_meta").fetchall()) if self._has_meta() else {}
        return [{"run_id": r[0], "created": r[1], "config": redact(_object(r[2]) or {}),
                 "summary": _object(r[3]), "n_trials": r[4], "n_unreadable": r[5] or 0,
                 "meta": _object(metas.get(r[0]))} for r in rows]

    def _has_meta(self) -> bool:
        """Files written before run metadata existed have no `run_meta` table (reading never adds it)."""
        return self.conn.execute("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'run_meta'").fetchone() \
            is not None

    def save_run_meta(self, run_id: str, meta: dict[str, Any]) -> None:
        self._write("INSERT OR REPLACE INTO run_meta VALUES (?, ?)", (run_id, json.dumps(redact(meta))))

    @_one_line_errors
    def run_meta(self, run_id: str) -> dict[str, Any] | None:
        if not self._has_meta():
            return None
        row = self.conn.execute("SELECT meta FROM run_meta WHERE run_id = ?", (run_id,)).fetchone()
        return _object(row[0]) if row else None

    def delete_run(self, run_id: str) -> None:
        for table in ("trials", "run_meta", "runs") if self._has_meta() else ("trials", "runs"):
            self._write(f"DELETE FROM {table} WHERE run_id = ?", (run_id,))

    @_one_line_errors
    def done_trials(self, run_id: str) -> set[tuple[str, int]]:
        """Trials with an ok row that reads back (a row no reader can parse is not done: `--resume` runs it again)."""
        rows = self.conn.execute("SELECT task_id, trial, result FROM trials WHERE run_id = ? AND status = 'ok'", (run_id,))
        return {(r[0], r[1]) for r in rows if _readable(r[2])}

    def save_result(self, run_id: str, result: EpisodeResult) -> None:
        # first: a result that cannot be serialised, or whose JSON would not read back (a value the
        # serialiser writes as null), raises before any write; the runner stores that trial's error instead
        payload = scrub_literals(result.model_dump_json())  # a secret the run was given, echoed by a server
        EpisodeResult.model_validate_json(payload)
        self._write("INSERT OR REPLACE INTO trials VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                    (run_id, result.task_id, result.trial, result.domain, result.reward, result.status,
                     result.termination.reason, payload, time.time()))

    @_one_line_errors
    def results(self, run_id: str) -> list[EpisodeResult]:
        rows = self.conn.execute("SELECT result, task_id, domain, trial FROM trials WHERE run_id = ? "
                                 "ORDER BY task_id, trial", (run_id,))
        return [_read_result(*r) for r in rows]

    def save_summary(self, run_id: str, summary: dict[str, Any]) -> None:
        self._write("UPDATE runs SET summary = ?, finished = ? WHERE run_id = ?",
                    (json.dumps(redact(summary)), time.time(), run_id))

    @_one_line_errors
    def summary(self, run_id: str) -> dict[str, Any] | None:
        row = self.conn.execute("SELECT summary FROM runs WHERE run_id = ?", (run_id,)).fetchone()
        return _object(row[0]) if row else None

    def close(self) -> None:
        self.conn.close()


#: a trial row that is a JSON object with the fields every reader needs, checked in SQL: `tau runs` counts the
#: rows failing it without reading every transcript (the readers that read rows validate them whole)
_LOOKS_READABLE = ("(json_valid(t.result) AND json_type(t.result, '$.task_id') = 'text' "
                   "AND json_type(t.result, '$.reward') IN ('integer', 'real') "
                   "AND json_type(t.result, '$.termination') = 'object' AND json_type(t.result, '$.success') IN "
                   "('true', 'false'))")


def _has_json(conn: sqlite3.Connection) -> bool:
    try:
        conn.execute("SELECT json_valid('{}')").fetchone()
    except sqlite3.OperationalError:
        return False
    return True


def _object(text: Any) -> dict[str, Any] | None:
    """A stored JSON object, or None when it is missing or cannot be read (a damaged or foreign row is
    shown as unknown by the readers, never a traceback)."""
    if not text:
        return None
    try:
        value = json.loads(text)
    except (ValueError, TypeError, RecursionError):
        return None
    return value if isinstance(value, dict) else None


def _readable(payload: str) -> bool:
    try:
        EpisodeResult.model_validate_json(payload)
    except (ValueError, TypeError):
        return False
    return True


def _read_result(payload: str, task_id: str, domain: str, trial: int) -> EpisodeResult:
    """A stored trial; a row that no longer validates is listed as that trial's error, not a crash of the reader."""
    try:
        return EpisodeResult.model_validate_json(payload)
    except (ValueError, TypeError) as exc:
        reason = f"task '{task_id}' trial {trial}: the stored result cannot be read back: {str(exc).splitlines()[0]}"
        return EpisodeResult(task_id=task_id, domain=domain, trial=trial, reward=0.0, success=False, status="error",
                             termination=Termination(reason=UNREADABLE, by="store", detail=reason), error=reason)


@hookimpl
def tau_register_stores(register):
    register("sqlite", SqliteStore, default=True)
