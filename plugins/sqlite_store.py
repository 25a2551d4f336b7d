"""The `sqlite` result store: one row per run (config, summary) and one per finished trial.

WAL mode and a commit per trial: a killed run keeps every trial that finished. A trial is keyed
by (run, task, trial); re-running an errored trial replaces its row. Run metadata lives in its own
table (`run_meta`, added without touching the others), so files written before it stay readable.
"""

from __future__ import annotations

import json
import sqlite3
import time
from pathlib import Path
from typing import Any

from tau_emotion.core import hookimpl
from tau_emotion.core.errors import TauError
from tau_emotion.core.models import EpisodeResult, RunConfig

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


class SqliteStore:
    """A `protocols.Store` in one SQLite file (the default store)."""

    def __init__(self, path: str | Path, *, create: bool = True):
        self.path = Path(path)
        if not create and str(path) != ":memory:" and not self.path.is_file():
            raise TauError(f"no results file at {path} (use --db, or --store for another store)")
        if create and str(path) != ":memory:":
            self.path.parent.mkdir(parents=True, exist_ok=True)
        self.conn = sqlite3.connect(self.path, timeout=30)
        self.conn.execute("PRAGMA journal_mode=WAL")
        self.conn.execute("PRAGMA synchronous=NORMAL")
        self.conn.executescript(SCHEMA)
        self.conn.commit()

    def create_run(self, run_id: str, config: RunConfig) -> None:
        with self.conn:
            self.conn.execute("INSERT INTO runs (run_id, created, config) VALUES (?, ?, ?)",
                              (run_id, time.time(), config.model_dump_json()))

    def run_config(self, run_id: str) -> RunConfig | None:
        row = self.conn.execute("SELECT config FROM runs WHERE run_id = ?", (run_id,)).fetchone()
        return RunConfig.model_validate_json(row[0]) if row else None

    def run_ids(self) -> list[str]:
        return [r[0] for r in self.conn.execute("SELECT run_id FROM runs ORDER BY created")]

    def runs(self) -> list[dict[str, Any]]:
        rows = self.conn.execute(
            "SELECT r.run_id, r.created, r.config, r.summary, COUNT(t.task_id) FROM runs r "
            "LEFT JOIN trials t ON t.run_id = r.run_id GROUP BY r.run_id ORDER BY r.created")
        metas = dict(self.conn.execute("SELECT run_id, meta FROM run_meta").fetchall())
        return [{"run_id": r[0], "created": r[1], "config": json.loads(r[2]),
                 "summary": json.loads(r[3]) if r[3] else None, "n_trials": r[4],
                 "meta": json.loads(metas[r[0]]) if r[0] in metas else None} for r in rows]

    def save_run_meta(self, run_id: str, meta: dict[str, Any]) -> None:
        with self.conn:
            self.conn.execute("INSERT OR REPLACE INTO run_meta VALUES (?, ?)", (run_id, json.dumps(meta)))

    def run_meta(self, run_id: str) -> dict[str, Any] | None:
        row = self.conn.execute("SELECT meta FROM run_meta WHERE run_id = ?", (run_id,)).fetchone()
        return json.loads(row[0]) if row else None

    def delete_run(self, run_id: str) -> None:
        with self.conn:
            for table in ("trials", "run_meta", "runs"):
                self.conn.execute(f"DELETE FROM {table} WHERE run_id = ?", (run_id,))

    def done_trials(self, run_id: str) -> set[tuple[str, int]]:
        rows = self.conn.execute("SELECT task_id, trial FROM trials WHERE run_id = ? AND status = 'ok'", (run_id,))
        return {(r[0], r[1]) for r in rows}

    def save_result(self, run_id: str, result: EpisodeResult) -> None:
        with self.conn:
            self.conn.execute(
                "INSERT OR REPLACE INTO trials VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (run_id, result.task_id, result.trial, result.domain, result.reward, result.status,
                 result.termination.reason, result.model_dump_json(), time.time()),
            )

    def results(self, run_id: str) -> list[EpisodeResult]:
        rows = self.conn.execute("SELECT result FROM trials WHERE run_id = ? ORDER BY task_id, trial", (run_id,))
        return [EpisodeResult.model_validate_json(r[0]) for r in rows]

    def save_summary(self, run_id: str, summary: dict[str, Any]) -> None:
        with self.conn:
            self.conn.execute("UPDATE runs SET summary = ?, finished = ? WHERE run_id = ?",
                              (json.dumps(summary), time.time(), run_id))

    def summary(self, run_id: str) -> dict[str, Any] | None:
        row = self.conn.execute("SELECT summary FROM runs WHERE run_id = ?", (run_id,)).fetchone()
        return json.loads(row[0]) if row and row[0] else None

    def close(self) -> None:
        self.conn.close()


@hookimpl
def tau_register_stores(register):
    register("sqlite", SqliteStore, default=True)
