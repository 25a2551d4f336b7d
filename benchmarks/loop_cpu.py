"""CPU time per episode of the core loop: a domain's test tasks, one trial each, an agent plugin and the scripted user.

    python benchmarks/loop_cpu.py [DOMAIN] [--agent oracle] [--repeat 7]

Every trial goes through the runner's `run_one` (views, the loop, tools on copy-on-write state, scoring) into an
in-memory store. The figure is process CPU time, not wall-clock time, so other users of a shared machine
distort it less; compare two versions by running them alternately.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import time

from tau_emotion.core.models import RunConfig
from tau_emotion.core.runner import prepare_run, run_one


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("domain", nargs="?", default="airline")
    parser.add_argument("--agent", default="oracle")
    parser.add_argument("--repeat", type=int, default=7)
    args = parser.parse_args()
    config = RunConfig(plugins=[args.domain], agent=args.agent, trials=1, options={"progress": {"no_progress": True}})
    run = prepare_run(config, ":memory:")

    async def every_task() -> None:
        for task in run.tasks:
            await run_one(run, task, 0)

    asyncio.run(every_task())  # warm: gold hashes, frozen task copies, imports
    samples = []
    for _ in range(args.repeat):
        started = time.process_time()
        asyncio.run(every_task())
        samples.append((time.process_time() - started) / len(run.tasks) * 1e3)
    print(f"{args.domain} {args.agent}: {len(run.tasks)} episodes, CPU per episode median "
          f"{statistics.median(samples):.2f} ms (min {min(samples):.2f} ms, {args.repeat} repeats)")


if __name__ == "__main__":
    main()
