"""What the scorer pays an agent that lists, hedges or negates instead of answering (issue 31, item 1).

    python benchmarks/scoring_attacks.py [--packs airline,bank] [--split test] [--agents done,lister,...]

Runs the attack agents of `tests/attack_agents.py` (a third-party agent plugin, loaded by module path)
with the scripted user, one trial per task, on each pack's split, and prints a Markdown table per pack:
mean reward and successes over all tasks, over the tasks with a gold output, the read-only tasks (no
gold write) and the tasks with a refusal reason. Then the acceptance checks: the lister scores no more
than `done` (+0.02), `list_only` solves no read-only task, `gold_caller` (the gold calls plus the gold
statement) solves every task.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # `tests.attack_agents`, by module path

from tau_emotion.core.models import RunConfig  # noqa: E402
from tau_emotion.core.runner import prepare_run, run_sync  # noqa: E402

PACKS = "airline,bank,basketball,movie,restaurant,retail,school,telecom,telehealth,travel"
AGENTS = "gold_caller,done,lister,list_only,value_lister,reciter,hedger,negator"


def cell(results: list) -> str:
    if not results:
        return "-"
    mean = sum(r.reward for r in results) / len(results)
    return f"{mean:+.2f} ({sum(r.success for r in results)}/{len(results)})"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--packs", default=PACKS)
    parser.add_argument("--split", default="test")
    parser.add_argument("--agents", default=AGENTS)
    args = parser.parse_args(argv)
    db = tempfile.mkdtemp() + "/attacks.db"
    failures: list[str] = []
    for pack in args.packs.split(","):
        started = time.perf_counter()
        print(f"\n### {pack} / {args.split}\n")
        print("| agent | all | with output | read-only | with reason |")
        print("|---|---|---|---|---|")
        means: dict[str, float] = {}
        for agent in args.agents.split(","):
            config = RunConfig(plugins=["tests.attack_agents", pack], split=args.split, trials=1, agent=agent,
                               concurrency=16, options={"progress": {"no_progress": True}})
            run = prepare_run(config, db)
            run_sync(run)
            results = run.store.results(run.run_id)
            domain = run.domains[pack]
            tasks = {t.id: t for t in run.tasks}
            writes = {i for i, t in tasks.items() if any(domain.toolset[a.name].writes for a in t.gold.actions)}
            outputs = [r for r in results if tasks[r.task_id].gold.outputs]
            read_only = [r for r in results if r.task_id not in writes]
            reasons = [r for r in results if tasks[r.task_id].gold.reasons]
            print(f"| {agent} | {cell(results)} | {cell(outputs)} | {cell(read_only)} | {cell(reasons)} |", flush=True)
            means[agent] = sum(r.reward for r in results) / len(results)
            if agent == "list_only" and any(r.success for r in read_only):
                failures.append(f"{pack}: list_only solves {sum(r.success for r in read_only)} read-only task(s)")
            if agent == "gold_caller" and not all(r.success for r in results):
                failures.append(f"{pack}: gold_caller fails {sum(not r.success for r in results)} task(s)")
        if "lister" in means and "done" in means and means["lister"] > means["done"] + 0.02:
            failures.append(f"{pack}: lister {means['lister']:+.3f} > done {means['done']:+.3f} + 0.02")
        print(f"\n({time.perf_counter() - started:.0f}s)")
    print("\n" + ("\n".join(failures) if failures else "all acceptance checks hold"))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
