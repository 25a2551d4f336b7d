"""A reward that is huge, or not a number at all, never prints as a long integer (issue 35 item 8): `tau score`
showed a stored reward of 1e308 as a 309-digit integer (`f"{1e308:+.0f}"`)."""

from __future__ import annotations

import json
import os
import re
import sqlite3
import subprocess
import sys

import pytest

from tau_emotion.core.terminal import reward

TAU = [sys.executable, "-c", "from tau_emotion.core.cli import main; main()"]
LONG_NUMBER = re.compile(r"\d{16,}")


@pytest.mark.parametrize("value,shown", [(1, "+1"), (-1.0, "-1"), (0, "+0"), (0.5, "+0.5"), (1e308, "+1e+308"),
                                         (-1e308, "-1e+308"), (float("nan"), "nan"), (float("inf"), "+inf"),
                                         (float("-inf"), "-inf"), (10**400, "+huge"), (123456789.0, "+1.235e+08"),
                                         (True, "True"), ("n/a", "n/a"), (None, "None")])
def test_reward_text_is_short(value, shown):
    assert reward(value) == shown


def test_tau_score_and_show_print_a_huge_stored_reward_briefly(tmp_path):
    env = {**os.environ, "TAU_DB": str(tmp_path / "runs.db"), "LITELLM_LOCAL_MODEL_COST_MAP": "True"}
    env.pop("TAU_PLUGINS", None)
    made = subprocess.run([*TAU, "run", "--plugins", "mock", "--agent", "oracle", "--trials", "1", "--no-progress"],
                          env=env, capture_output=True, text=True)
    assert made.returncode == 0, made.stderr
    with sqlite3.connect(tmp_path / "runs.db") as db:  # a plugin's scorer stored an absurd, finite reward
        (run_id, task_id, result), *_ = db.execute("SELECT run_id, task_id, result FROM trials ORDER BY task_id")
        row = json.loads(result)
        row["reward"] = 1e308
        db.execute("UPDATE trials SET result = ?, reward = ? WHERE run_id = ? AND task_id = ?",
                   (json.dumps(row), 1e308, run_id, task_id))
    scored = subprocess.run([*TAU, "score", run_id], env=env, capture_output=True, text=True)
    assert scored.returncode == 0, scored.stderr
    assert "+1e+308 -> +1" in scored.stdout and not LONG_NUMBER.search(scored.stdout), scored.stdout
    shown = subprocess.run([*TAU, "show", run_id], env=env, capture_output=True, text=True)
    assert shown.returncode == 0, shown.stderr
    assert "reward=+1e+308" in shown.stdout and not LONG_NUMBER.search(shown.stdout.replace(run_id, "")), shown.stdout
