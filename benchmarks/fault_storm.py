"""256 concurrent episodes against a model server returning a random mix of faults: every trial stored once.

    python benchmarks/fault_storm.py [--episodes 256] [--fault-rate 0.35] [--seed 7]

The tool_calling agent on the mock domain talks to a real HTTP server on 127.0.0.1
(tests/openai_server.py) that answers a random share of requests with 429, 500, an HTML 503,
a timeout, a trickle, malformed JSON, empty choices, a null message, garbled, deep or NaN tool
arguments, or a dropped connection. Prints the fault counts served and the stored trial counts.
"""

from __future__ import annotations

import argparse
import collections
import os
import random
import sys
import tempfile
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

from tau_emotion.core.models import RunConfig  # noqa: E402
from tau_emotion.core.runner import prepare_run, run_sync  # noqa: E402
from tests.openai_server import ScriptedOpenAI  # noqa: E402
from tests.reliability.test_fault_server import FAULTS  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--episodes", type=int, default=256)
    parser.add_argument("--fault-rate", type=float, default=0.35)
    parser.add_argument("--seed", type=int, default=7)
    args = parser.parse_args()
    rng = random.Random(args.seed)
    lock = threading.Lock()
    served: collections.Counter[str] = collections.Counter()
    kinds = sorted(FAULTS)

    def reply(body):
        with lock:
            roll = rng.random()
            if roll < args.fault_rate:
                kind = rng.choice(kinds)
                served[kind] += 1
                return dict(FAULTS[kind][0])
            served["good"] += 1
            return {"content": "Done. ###STOP###"} if roll < 0.6 else {"content": "All done, goodbye."}

    server = ScriptedOpenAI().start()
    server.respond("agent-model", reply)
    trials = max(1, args.episodes // 4)  # the mock domain has 4 test tasks
    config = RunConfig(plugins=["mock"], agent="tool_calling", trials=trials, concurrency=args.episodes, max_steps=6,
                       options={"agent": {"agent_model": "openai/agent-model", "agent_api_base": server.base_url},
                                "progress": {"no_progress": True},
                                "model_calls": {"retry_wait": 0.05, "max_retries": 2, "model_timeout": 1.0}})
    with tempfile.TemporaryDirectory() as tmp:
        run = prepare_run(config, str(Path(tmp) / "storm.sqlite"))
        started = time.perf_counter()
        summary = run_sync(run)
        wall = time.perf_counter() - started
        rows = run.store.conn.execute("SELECT task_id, trial, status FROM trials WHERE run_id = ?",
                                      (run.run_id,)).fetchall()
        run.store.close()
    server.stop()
    pairs = [(t, k) for t, k, _ in rows]
    statuses = collections.Counter(s for _, _, s in rows)
    print(f"episodes               {len(run.pending)} ({len(run.tasks)} tasks x {trials} trials, "
          f"concurrency {args.episodes})")
    print(f"requests served        {sum(served.values())} ({served['good']} good, "
          f"{sum(served.values()) - served['good']} faults)")
    print("faults served          " + ", ".join(f"{k}={served[k]}" for k in kinds))
    print(f"trials stored          {len(rows)} rows, {len(set(pairs))} distinct (task, trial), "
          f"duplicates {len(rows) - len(set(pairs))}, missing {len(run.pending) - len(set(pairs))}")
    print(f"status                 ok={statuses['ok']} error={statuses['error']} (summary errors={summary['errors']})")
    print(f"wall time              {wall:.1f} s")
    if len(rows) != len(set(pairs)) or len(set(pairs)) != len(run.pending):
        raise SystemExit("FAIL: a trial was lost or stored twice")


if __name__ == "__main__":
    main()
