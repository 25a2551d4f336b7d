"""Every sqlite3 error is one line naming the database; busy is retried off the event loop; readers create nothing.

Failure 4: a corrupt, truncated or non-SQLite --db, a folder or a read-only place printed a
traceback, and a lock held by another writer for >30 s blocked the event loop, then aborted the run.
"""

from __future__ import annotations

import asyncio
import os
import sqlite3
import threading
import time

import pytest

from tau_emotion.core.errors import TauError
from tau_emotion.core.models import Message
from tau_emotion.plugins import sqlite_store
from tau_emotion.plugins.sqlite_store import SqliteStore
from tests.reliability.conftest import Agents


def _good_db(tmp_path, tau):
    db = tmp_path / "good.sqlite"
    assert tau("run", "--plugins", "mock", "--trials", "1", "--db", str(db), "--no-progress").exit_code == 0
    return db


@pytest.mark.slow
@pytest.mark.parametrize("kind", ["garbage", "truncated", "text", "folder", "empty-tables"])
def test_bad_database_files_are_one_line_for_every_command(kind, tmp_path, tau):
    db = tmp_path / "bad.sqlite"
    if kind == "garbage":
        db.write_bytes(os.urandom(8192))
    elif kind == "truncated":
        good = tmp_path / "full.sqlite"
        conn = sqlite3.connect(good)  # rollback-journal mode: every page is in the file itself
        conn.executescript(sqlite_store.SCHEMA)
        conn.executemany("INSERT INTO runs VALUES (?, 0, '{}', NULL, NULL)", [(f"r{i}" * 50,) for i in range(200)])
        conn.commit()
        conn.close()
        db.write_bytes(good.read_bytes()[:5000])
    elif kind == "text":
        db.write_text('{"this": "is json, not sqlite"}\n' * 200)
    elif kind == "folder":
        db.mkdir()
    elif kind == "empty-tables":
        sqlite3.connect(db).execute("CREATE TABLE other (x)").connection.commit()
    for args in (["runs"], ["show", "x"], ["export", "x"], ["run", "--resume", "x", "--no-progress"],
                 ["run", "--plugins", "mock", "--trials", "1", "--no-progress"]):
        result = tau(*args, "--db", str(db))
        if kind == "empty-tables" and args[0] == "run" and "--resume" not in args:
            assert result.exit_code == 0, result.output  # a SQLite file without our tables gets them
            continue
        assert result.exit_code != 0, (kind, args, result.output)
        lines = [line for line in result.output.strip().splitlines() if line.strip()]
        assert "Traceback" not in result.output, (kind, args, result.output)
        assert str(db) in lines[-1] and "--db" in lines[-1], (kind, args, result.output)


@pytest.mark.skipif(os.geteuid() == 0, reason="root writes anywhere")
def test_a_read_only_place_is_one_line(tmp_path, tau):
    ro = tmp_path / "ro"
    ro.mkdir()
    ro.chmod(0o500)
    try:
        result = tau("run", "--plugins", "mock", "--trials", "1", "--db", str(ro / "x.sqlite"), "--no-progress")
        assert result.exit_code == 1 and "Traceback" not in result.output and str(ro) in result.output
    finally:
        ro.chmod(0o700)


def test_a_read_only_file_is_one_line(tmp_path, tau):
    db = _good_db(tmp_path, tau)
    store = SqliteStore(db, create=False)
    store.conn.execute("PRAGMA query_only=ON")  # read-only regardless of the user (root ignores chmod)
    with pytest.raises(TauError, match=r"results database .*good.sqlite.*readonly|read-only|--db"):
        store.save_summary("x", {})


def test_reading_commands_never_create_a_database(tmp_path, tau):
    db = tmp_path / "nothing-here.sqlite"
    for args in (["runs"], ["show", "x"], ["export", "x"], ["run", "--resume", "x", "--no-progress"]):
        result = tau(*args, "--db", str(db))
        assert result.exit_code == 1 and "no results file" in result.output
        assert not db.exists()


def test_a_busy_database_is_retried_off_the_event_loop_and_the_run_completes(tmp_path, monkeypatch, capfd):
    from tau_emotion.core.manager import get_plugin_manager
    from tau_emotion.core.models import RunConfig
    from tau_emotion.core.runner import prepare_run, run_sync

    monkeypatch.setattr(sqlite_store, "BUSY_TIMEOUT", 0.05)
    monkeypatch.setattr(sqlite_store, "MAX_BACKOFF", 0.1)
    db = tmp_path / "busy.sqlite"
    gaps = []

    class Ticking:
        """An agent whose steps measure how long the event loop was held from them."""

        def __init__(self, episode):
            self.n = 0

        async def act(self, history):
            self.n += 1
            before = time.perf_counter()
            await asyncio.sleep(0.005)
            gaps.append(time.perf_counter() - before)
            if self.n > 40:
                return Message(role="assistant", content="bye ###STOP###")
            return Message(role="assistant", content="still here")

    pm = get_plugin_manager(["mock"], extra=[Agents(tick=Ticking)])
    run = prepare_run(RunConfig(plugins=["mock"], agent="tick", trials=3, concurrency=4, max_steps=60,
                                options={"progress": {"no_progress": True}}), str(db), pm=pm)
    holder = sqlite3.connect(db, check_same_thread=False)
    holder.execute("BEGIN IMMEDIATE")  # another writer holds the lock for 0.6 s, from the start
    threading.Timer(0.6, holder.rollback).start()
    started = time.perf_counter()
    run_sync(run)
    results = run.store.results(run.run_id)
    assert len(results) == len(run.tasks) * 3 and all(r.status == "ok" for r in results)
    assert time.perf_counter() - started >= 0.55  # the writes did wait for the lock ...
    assert max(gaps) < 0.3, max(gaps)  # ... on the writer thread: the episodes kept stepping meanwhile
    assert "is busy" in capfd.readouterr().err


@pytest.mark.slow
def test_two_writers_on_one_database_store_everything_once(tmp_path):
    db = tmp_path / "two.sqlite"
    script = (
        "import sys; from tau_emotion.core.cli import main; "
        "sys.argv=['tau','run','--plugins','mock','--trials','4','--db',sys.argv[1],'--no-progress']; main()")
    import subprocess
    import sys

    procs = [subprocess.Popen([sys.executable, "-c", script, str(db)], stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True) for _ in range(2)]
    outs = [p.communicate(timeout=120) for p in procs]
    assert all(p.returncode == 0 for p in procs), outs
    with sqlite3.connect(db) as conn:
        runs = conn.execute("SELECT COUNT(*) FROM runs").fetchone()[0]
        rows = conn.execute("SELECT run_id, task_id, trial FROM trials").fetchall()
    assert runs == 2 and len(rows) == len(set(rows)) == 2 * 4 * 4


@pytest.mark.parametrize("where", ["/proc/tau-reliability/x.sqlite", "/proc/x.sqlite", "{tmp}/a-file/x.sqlite"])
def test_places_that_cannot_hold_a_database_are_one_line(where, tmp_path, tau):
    (tmp_path / "a-file").write_text("not a folder")
    db = where.format(tmp=tmp_path)
    result = tau("run", "--plugins", "mock", "--trials", "1", "--db", db, "--no-progress")
    assert result.exit_code == 1 and "Traceback" not in result.output
    assert db in result.output.strip().splitlines()[-1] and "--db" in result.output
