"""A pack's data files, broken the ways a hand edit breaks them, fail `tau run` in one line naming the file and the
cause (issue 35 item 5); a tool that prints writes into the trial's log, not the CLI's stdout.

Each case renders the `tau new-pack` scaffold into a temporary folder, breaks one file and runs it as a real
`tau` process with the pack on PYTHONPATH."""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from tau_emotion.core.errors import DataError
from tau_emotion.core.state import Database, read_json
from tau_emotion.plugins.new_pack import render_pack

MODULE = "tau_emotion_acme"


@pytest.fixture
def pack(tmp_path):
    return render_pack("acme", tmp_path)


def run_pack(pack: Path, *extra: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(pack), "TAU_DB": str(pack.parent / "runs.db"),
           "LITELLM_LOCAL_MODEL_COST_MAP": "True"}
    env.pop("TAU_PLUGINS", None)
    return subprocess.run([sys.executable, "-c", "from tau_emotion.core.cli import main; main()", "run", "--plugins",
                           MODULE, "--split", "hand", "--agent", "oracle", "--trials", "1", "--no-progress", *extra],
                          env=env, capture_output=True, text=True, timeout=300)


def data(pack: Path, name: str) -> Path:
    return pack / MODULE / "data" / name


def error_line(done: subprocess.CompletedProcess[str]) -> str:
    assert done.returncode != 0, done.stdout
    lines = [line for line in done.stderr.splitlines() if line.strip()]
    errors = [line for line in lines if line.startswith("Error:")]
    assert len(errors) == 1 and "Traceback" not in done.stderr, done.stderr
    return errors[0]


@pytest.mark.parametrize("bad,shown", [("NaN", "NaN"), ("Infinity", "Infinity"), ("-Infinity", "-Infinity"),
                                       ("1e400", "1e400")])
def test_a_non_finite_number_in_db_json_is_refused_at_load(pack, bad, shown):
    path = data(pack, "db.json")
    text = path.read_text()
    path.write_text(text.replace('"monthly_fee": 25', f'"monthly_fee": {bad}', 1))
    assert bad in path.read_text()
    with pytest.raises(DataError, match=f"holds {shown}, which is not a finite number"):
        Database.from_json(path)
    if bad == "NaN":  # and the run says so before any trial, in one line naming the file
        line = error_line(run_pack(pack))
        assert "db.json" in line and "NaN" in line


def test_a_huge_exponent_that_is_finite_still_loads(tmp_path):
    path = tmp_path / "db.json"
    path.write_text('{"t": {"a": {"x": 1e300, "y": 2.5e-310}}}')
    assert read_json(path) == {"t": {"a": {"x": 1e300, "y": 2.5e-310}}}


@pytest.mark.parametrize("graph,why", [('{"edges": [["get_member", "change_plan"]', "invalid JSON"),
                                       ('{"edges": [[1, 2]]}', "pairs of tool names"),
                                       ('{"edges": "get_member"}', "pairs of tool names")])
def test_a_malformed_graph_json_fails_the_run_in_one_line(pack, graph, why):
    data(pack, "graph.json").write_text(graph)
    line = error_line(run_pack(pack))
    assert "graph.json" in line and why in line


def test_tables_given_as_lists_name_the_cause(pack):
    path = data(pack, "db.json")
    db = json.loads(path.read_text())
    db["members"] = [{"id": i, **row} for i, row in enumerate(db["members"].values())]  # keyed 0, 1, ... not M001
    path.write_text(json.dumps(db))
    line = error_line(run_pack(pack))
    assert "member M001 not found" in line
    assert "table 'members' is a list, so its rows are keyed by their 'id' field (0, 1, 2)" in line


def test_what_a_tool_prints_goes_to_the_trials_log_not_stdout(pack):
    tools = pack / MODULE / "tools.py"
    text = tools.read_text()
    tools.write_text(text.replace('    if member_id not in db["members"]:',
                                  '    print("DEBUG looking up", member_id)\n'
                                  '    import sys; print("WARN on stderr", file=sys.stderr)\n'
                                  '    if member_id not in db["members"]:', 1))
    done = run_pack(pack)
    assert done.returncode == 0, done.stderr
    assert "DEBUG" not in done.stdout and "WARN" not in done.stdout and "WARN" not in done.stderr
    with sqlite3.connect(pack.parent / "runs.db") as db:
        rows = [json.loads(r[0]) for r in db.execute("SELECT result FROM trials")]
    logs = [line for r in rows for line in r["log"]]
    assert any(line.startswith("tool get_member printed: DEBUG looking up M00") and "WARN on stderr" in line
               for line in logs), logs
