"""The UNSATISFIED rate each zoo agent gets from the offline scripted user, per emotion family.

    python benchmarks/agent_zoo.py [--trials 3] [--split test] [--agents oracle,null,asker,hasty,repeater]
                                   [--packs airline,bank,...]

Every task of the split of each pack (`--packs`, airline by default; one row per pack and agent) runs once
per family (`--emotion family:X`: a seeded condition of that family per task) and once as the no-emotion
control (`--emotion none`), with `--plugins emotion,PACK`; the tasks' own conditions are set aside first (a
task that carries a condition keeps it otherwise), so each family arm covers every task. Prints a Markdown
table: the UNSATISFIED rate per family, for the control, by urgency, and for single- vs multi-intent tasks;
plus success (Avg@k) over all arms.
"""

from __future__ import annotations

import argparse
import tempfile
from collections import defaultdict

from tau_emotion.core import hookimpl
from tau_emotion.core.models import RunConfig
from tau_emotion.core.runner import build_plugin_manager, prepare_run, run_sync

FAMILIES = ("anger", "disgust", "fear", "sadness", "enjoyment")


class SetAsideConditions:
    """Drop the tasks' own emotion blocks before the emotion plugin assigns the arm's condition."""

    @hookimpl(tryfirst=True)
    def tau_modify_tasks(self, tasks, config, pluginmanager):
        tasks[:] = [t.with_block("emotion", None) for t in tasks]


def rate(results: list) -> str:
    if not results:
        return "-"
    return f"{100 * sum(r.termination.reason == 'unsatisfied' for r in results) / len(results):.0f}%"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trials", type=int, default=3)
    parser.add_argument("--split", default="test")
    parser.add_argument("--agents", default="oracle,null,repeater,asker,hasty")
    parser.add_argument("--packs", default="airline")
    args = parser.parse_args()
    db = tempfile.mkdtemp() + "/zoo.db"
    header = (["pack", "agent", *FAMILIES, "control", "urgency low", "urgency high", "1 intent", "2+ intents", "success"])
    print("| " + " | ".join(header) + " |")
    print("|" + "---|" * len(header))
    for pack, agent in [(p, a) for p in args.packs.split(",") for a in args.agents.split(",")]:
        arms: dict[str, list] = {}
        for spec in [*(f"family:{f}" for f in FAMILIES), "none"]:
            config = RunConfig(plugins=["emotion", pack], split=args.split, trials=args.trials, agent=agent,
                               concurrency=32, options={"emotion": {"emotion": spec},
                                                        "progress": {"no_progress": True}})
            pm = build_plugin_manager(config)
            pm.register(SetAsideConditions())
            run = prepare_run(config, db, pm=pm)
            run_sync(run)
            arms[spec] = run.store.results(run.run_id)
        emotional = [r for f in FAMILIES for r in arms[f"family:{f}"]]
        by: dict[str, list] = defaultdict(list)
        for r in emotional:
            by["urgency " + r.tags.get("emotion.urgency", "")].append(r)
            by["1 intent" if r.tags.get("intents") == "1" else "2+ intents"].append(r)
        everything = emotional + arms["none"]
        success = f"{100 * sum(r.success for r in everything) / len(everything):.0f}%"
        cells = [rate(arms[f"family:{f}"]) for f in FAMILIES] + [rate(arms["none"])]
        cells += [rate(by[k]) for k in ("urgency low", "urgency high", "1 intent", "2+ intents")]
        print("| " + " | ".join([pack, agent, *cells, success]) + " |", flush=True)


if __name__ == "__main__":
    main()
