"""Gold replay + reward throughput, per-episode reset time and memory for a domain's test tasks.

    python benchmarks/replay.py [DOMAIN] [--repeat N]

Per task: a fresh state (reset), every gold action through the Toolset, the final hash, and
the reward (db match against the cached gold hash + outputs). tau-bench's own airline env takes
about 1.9 s per task for the same work (it reloads and hashes the whole database each time).
"""

from __future__ import annotations

import argparse
import gc
import statistics
import time
import tracemalloc

from tau_emotion.core.manager import load_all_plugins
from tau_emotion.core.models import Message, Termination
from tau_emotion.core.reward import expected_hash, gold_statement, replay, score

TAU_BENCH_AIRLINE_S_PER_TASK = 1.9


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("domain", nargs="?", default="airline")
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--split", default="test")
    args = parser.parse_args()
    pm = load_all_plugins()
    domain = pm.catalog("domains").get(args.domain)
    t0 = time.perf_counter()
    db = domain.database
    _ = db.content_hash
    load_s = time.perf_counter() - t0
    tasks = domain.tasks(args.split)
    for task in tasks:  # warm the gold-hash cache, as a run does once per task
        expected_hash(domain, task)
    stop = Termination(reason="user_stop")
    # a perfect agent tells every gold output and explains every refusal with one declared phrasing
    said = {t.id: [Message(role="assistant", content=gold_statement(domain, t)),
                   *(Message(role="tool", name=a.name, content="ok") for a in t.gold.actions)] for t in tasks}

    resets: list[float] = []
    per_task: list[float] = []
    for _ in range(args.repeat):
        for task in tasks:
            start = time.perf_counter()
            db.state()
            resets.append(time.perf_counter() - start)
            final = replay(domain, task)
            reward, _ = score(domain, task, final, said[task.id], stop)
            per_task.append(time.perf_counter() - start)
            assert reward == 1.0, task.id
    total = sum(per_task)
    print(f"domain                 {args.domain} ({len(tasks)} {args.split} tasks x {args.repeat})")
    print(f"database load + hash   {load_s * 1000:.1f} ms once ({sum(len(r) for r in db.tables.values())} rows)")
    print(f"reset (new state)      median {statistics.median(resets) * 1e6:.1f} us")
    print(f"replay + reward        median {statistics.median(per_task) * 1000:.2f} ms/task, "
          f"p95 {sorted(per_task)[int(0.95 * len(per_task)) - 1] * 1000:.2f} ms/task")
    print(f"throughput             {len(per_task) / total:.0f} tasks/s")
    if args.domain == "airline":
        print(f"vs tau-bench airline   {TAU_BENCH_AIRLINE_S_PER_TASK / statistics.median(per_task):.0f}x faster "
              f"(tau-bench ~{TAU_BENCH_AIRLINE_S_PER_TASK} s/task, measured by others on this machine type)")

    # memory: N concurrent episodes each replaying a task cost only what they touched
    gc.collect()
    tracemalloc.start()
    base, _ = tracemalloc.get_traced_memory()
    states = [replay(domain, tasks[i % len(tasks)]) for i in range(200)]
    used, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    print(f"memory, 200 live episodes  {(used - base) / 1024:.0f} KiB in all, "
          f"{(used - base) / 1024 / len(states):.1f} KiB per episode (peak {(peak - base) / 1024:.0f} KiB)")


if __name__ == "__main__":
    main()
