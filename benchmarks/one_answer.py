"""List the tasks of a split that have a second right answer (issue 21, item 3): the validator's new checks.

For every Tracer-built task of a pack's split (or of a task file written with `tau tracer build --out`), runs
`tracer.answers.check_task`: another of the user's own rows that the user's words fit and on which the same
write (or the refused request) is legal (`ambiguous`), and a refused call with a compliant smaller variant
(`policy`). Prints one line per flagged task and the totals.

    python benchmarks/one_answer.py telecom [--split test] [--tasks /tmp/x.json]
"""

from __future__ import annotations

import argparse
import json
import sys
import time


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("domain")
    parser.add_argument("--split", default="test")
    parser.add_argument("--tasks", help="a task file (default: the pack's committed data/tasks.json)")
    args = parser.parse_args(argv)

    from tau_emotion.core.manager import load_all_plugins
    from tau_emotion.core.models import Task
    from tau_emotion.tracer.answers import check_task

    domain = load_all_plugins().catalog("domains").get(args.domain)
    if args.tasks:
        with open(args.tasks) as fh:
            tasks = [Task.model_validate(t) for t in json.load(fh)]
    else:
        tasks = domain.tasks(None)
    tasks = [t for t in tasks if t.split == args.split and t.meta.get("source") == "tracer"]
    started = time.perf_counter()
    flagged: dict[str, int] = {}
    for task in tasks:
        for check, detail in check_task(domain, task):
            flagged[check] = flagged.get(check, 0) + 1
            print(f"{task.id}  {check}: {detail}")
    print(f"{args.domain}/{args.split}: {len(tasks)} task(s) checked in {time.perf_counter() - started:.2f}s; "
          + (", ".join(f"{k} {v}" for k, v in sorted(flagged.items())) if flagged else "none flagged"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
