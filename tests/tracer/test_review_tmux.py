"""`tau tracer review` in a real terminal: tmux runs it, the test types as a reviewer would (accept one task, reject
one with a reason, edit one instruction in $EDITOR), then rebuilds the split with the review file it wrote."""

from __future__ import annotations

import json
import os
import shutil
import subprocess

import pytest

from tau_emotion.tracer.review import generated_hash, record_of
from tests.plugins.test_play import TAU, Terminal

pytestmark = pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed (apt-get install tmux)")

BUILD = ["tracer", "build", "airline", "--split", "test", "--n", "6", "--seed", "3"]


def _tasks(path):
    from tau_emotion.core.domain import load_tasks_file

    return load_tasks_file(path, "airline")


@pytest.mark.slow
def test_a_review_session_records_three_decisions_that_a_rebuild_honours(tmp_path):
    env = {**os.environ, "TAU_DB": str(tmp_path / "runs.db"), "LITELLM_LOCAL_MODEL_COST_MAP": "True"}
    env.pop("TAU_PLUGINS", None)
    built, review = tmp_path / "built.json", tmp_path / "review.jsonl"
    subprocess.run([*TAU, *BUILD, "--out", str(built)], check=True, capture_output=True, env=env)
    editor = tmp_path / "editor.sh"
    editor.write_text("#!/bin/sh\nsed -i 's/^You are /You are, as always, /' \"$1\"\n")
    editor.chmod(0o755)
    env["EDITOR"] = env["VISUAL"] = str(editor)
    t = Terminal([*TAU, "tracer", "review", "airline", "--split", "test", "--tasks", str(built), "--review",
                  str(review), "--reviewer", "tester", "--rollouts", str(tmp_path / "none.json")], str(tmp_path), env)
    try:
        screen = t.wait_for("[a]ccept  [r]eject")
        assert "[1/6]  airline-test-001" in screen and "gold calls and their results" in screen
        assert "intent plan" in screen and "condition: family=" in screen
        t.type("a")
        t.wait_for("[2/6]  airline-test-002")
        t.type("r")
        t.wait_for("reason > ")
        t.type("the agent cannot tell which booking the customer means")
        t.wait_for("[3/6]  airline-test-003")
        t.type("e")
        t.wait_for("edit which")
        t.type("i")
        t.wait_for("why (optional) > ")
        t.type("warmer opening")
        t.wait_for("[4/6]  airline-test-004")
        t.type("q")
        screen = t.wait_for("EXIT=")
        assert "EXIT=0" in screen and "3 decision(s) in" in screen
    finally:
        t.close()

    first = _tasks(built)
    rows = [json.loads(line) for line in review.read_text().splitlines()]
    assert [(r["task"], r["decision"]) for r in rows] == [("airline-test-001", "accept"), ("airline-test-002", "reject"),
                                                          ("airline-test-003", "edit")]
    assert [r["hash"] for r in rows] == [generated_hash(t) for t in first[:3]]
    assert rows[1]["reason"] == "the agent cannot tell which booking the customer means"
    assert rows[2]["edit"] == {"instruction": first[2].user.instruction.replace("You are ", "You are, as always, ", 1)}
    assert all(r["reviewer"] == "tester" and r["at"].endswith("Z") for r in rows)

    rebuilt = tmp_path / "rebuilt.json"
    done = subprocess.run([*TAU, *BUILD, "--out", str(rebuilt), "--review", str(review)], capture_output=True,
                          text=True, env=env)
    assert done.returncode == 0, done.stderr
    assert "review: accepted 1, edited 1, rejected 1" in done.stdout
    again = _tasks(rebuilt)
    assert record_of(again[0]).decision == "accept" and generated_hash(again[0]) == rows[0]["hash"]
    assert generated_hash(again[1]) != rows[1]["hash"] and record_of(again[1]).replaces == [rows[1]["hash"]]
    assert again[2].user.instruction.startswith("You are, as always, ") and record_of(again[2]).fields == ["instruction"]
    assert [t.model_dump_json() for t in again[3:]] == [t.model_dump_json() for t in first[3:]]
