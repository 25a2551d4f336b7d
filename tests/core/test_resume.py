"""A run killed with SIGKILL halfway and resumed ends with every trial exactly once."""

import os
import signal
import sqlite3
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

SLOW_AGENT = """
import asyncio
from tau_emotion.core import hookimpl
from tau_emotion.plugins.oracle_agent import OracleAgent


class SlowOracle(OracleAgent):
    async def act(self, messages):
        await asyncio.sleep(0.05)
        return await super().act(messages)


@hookimpl
def tau_register_agents(register):
    register("slow_oracle", SlowOracle)
"""


def _tau(*args, env):
    return [sys.executable, "-c", "from tau_emotion.core.cli import main; main()", *args]


def _count(db):
    if not db.exists():
        return 0
    try:
        with sqlite3.connect(db) as conn:
            return conn.execute("SELECT COUNT(*) FROM trials").fetchone()[0]
    except sqlite3.OperationalError:
        return 0


@pytest.mark.slow
def test_sigkill_then_resume_runs_every_trial_exactly_once(tmp_path: Path):
    (tmp_path / "slow_agent_plugin.py").write_text(textwrap.dedent(SLOW_AGENT))
    env = {**os.environ, "PYTHONPATH": str(tmp_path) + os.pathsep + os.environ.get("PYTHONPATH", "")}
    db = tmp_path / "runs.sqlite"
    args = ["run", "--plugins", "mock,slow_agent_plugin", "--agent", "slow_oracle", "--trials", "6",
            "--concurrency", "2", "--db", str(db), "--no-progress"]
    proc = subprocess.Popen(_tau(*args, env=env), env=env, cwd=tmp_path,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    deadline = time.monotonic() + 60
    while _count(db) < 5 and time.monotonic() < deadline and proc.poll() is None:
        time.sleep(0.02)
    assert proc.poll() is None, proc.communicate()
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    done_before = _count(db)
    assert 5 <= done_before < 24
    with sqlite3.connect(db) as conn:
        [run_id] = [r[0] for r in conn.execute("SELECT run_id FROM runs")]
    resumed = subprocess.run(_tau("run", "--resume", run_id, "--db", str(db), "--no-progress", env=env),
                             env=env, cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert resumed.returncode == 0, resumed.stderr
    assert f"({done_before} already done)" in resumed.stderr
    with sqlite3.connect(db) as conn:
        rows = conn.execute("SELECT task_id, trial, status, reward FROM trials").fetchall()
    pairs = [(t, k) for t, k, _, _ in rows]
    assert len(pairs) == len(set(pairs)) == 24
    assert all(status == "ok" and reward == 1.0 for _, _, status, reward in rows)
