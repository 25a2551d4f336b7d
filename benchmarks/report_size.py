"""Size and time of `tau report` for the emotion suite run with its control arm.

    python benchmarks/report_size.py [--trials 3] [--agent asker]

Runs `tau run --plugins emotion,airline,retail,telecom,telehealth --emotion-control --agent AGENT
--user scripted --trials K` into a temporary results file (4 domains x 58 tasks x 2 arms x K
trials: 1,392 trials at K=3), then `tau report` of it, and prints the trials, the run's and the
report's seconds, and the report's size in MB (trajectories are one gzip + base64 block in it).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

TAU = [sys.executable, "-c", "from tau_emotion.core.cli import main; main()"]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trials", type=int, default=3)
    parser.add_argument("--agent", default="asker")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        env = {**os.environ, "TAU_DB": str(Path(tmp) / "runs.db"), "OMP_NUM_THREADS": "1"}
        started = time.perf_counter()
        subprocess.run([*TAU, "run", "--plugins", "emotion,airline,retail,telecom,telehealth", "--emotion-control",
                        "--agent", args.agent, "--user", "scripted", "--trials", str(args.trials), "--no-progress",
                        "--summary-json", str(Path(tmp) / "s.json")], env=env, check=True, capture_output=True)
        ran = time.perf_counter() - started
        summary = json.loads((Path(tmp) / "s.json").read_text())
        started = time.perf_counter()
        out = Path(tmp) / "report.html"
        subprocess.run([*TAU, "report", "latest", "--out", str(out)], env=env, check=True, capture_output=True)
        reported = time.perf_counter() - started
        trials = summary["n_tasks"] * summary["trials"]
        print(f"| trials | run s | report s | report MB |\n|---:|---:|---:|---:|\n"
              f"| {trials} | {ran:.1f} | {reported:.1f} | {out.stat().st_size / 1e6:.2f} |")


if __name__ == "__main__":
    main()
