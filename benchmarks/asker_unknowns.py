"""Count the scripted user's "I don't know" replies to facts its instruction states (issue 21, item 5).

Reads one stored run (`tau run --agent asker --user scripted ...`) and, for every asker question "Could you tell
me the X?" that the user answered with a don't-know line (the neutral one or any emotion style's), decides whether X is stated in the
task's instruction: some gold-call argument named X has a value that the instruction says (verbatim, an ISO date
as "May 19", a value with underscores or spaces as words) or that is a leaf of `user.known`. Prints the totals,
the count per argument name, and the tasks where it happened.

    python benchmarks/asker_unknowns.py DB [RUN] [--tasks domain_packs/airline/data/tasks.json]
"""

from __future__ import annotations

import argparse
import json
import re
import sqlite3
from collections import Counter


def dont_know_phrases() -> list[str]:
    """The neutral scripted user's line and every emotion style's (emotion_pack/data/expression.json)."""
    from importlib.resources import files

    bank = json.loads(files("tau_emotion.emotion_pack").joinpath("data/expression.json").read_text())["dont_know"]
    return ["I don't know that"] + [p for family in bank.values() for p in family]


DONT_KNOW = dont_know_phrases()
ASK = re.compile(r"^Could you tell me the (.+)\?$")
MONTHS = "January February March April May June July August September October November December".split()


def leaves(value):
    if isinstance(value, dict):
        return [x for v in value.values() for x in leaves(v)]
    if isinstance(value, list):
        return [x for v in value for x in leaves(v)]
    return [value]


def forms(value) -> list[str]:
    text = str(value)
    out = {text, text.replace("_", " "), text.replace("_", "-")}
    m = re.fullmatch(r"(\d{4})-(\d{2})-(\d{2})", text)
    if m:
        out.add(f"{MONTHS[int(m.group(2)) - 1]} {int(m.group(3))}")
    return [f for f in out if f]


def arg_values(arguments, name: str) -> list:
    out = []
    if isinstance(arguments, dict):
        for k, v in arguments.items():
            if k == name and not isinstance(v, (dict, list)):
                out.append(v)
            out += arg_values(v, name)
    elif isinstance(arguments, list):
        for v in arguments:
            out += arg_values(v, name)
    return out


def stated(task: dict, name: str) -> bool:
    text = task["user"]["instruction"].lower()
    known = {str(v).lower() for v in leaves(task["user"]["known"])}
    for action in task["gold"]["actions"]:
        for v in arg_values(action["arguments"], name.replace(" ", "_")):
            if isinstance(v, bool) or v is None:
                continue
            if str(v).lower() in known:
                return True
            if any(len(f) >= 3 and re.search(rf"(?<!\w){re.escape(f.lower())}(?!\w)", text) for f in forms(v)):
                return True
    return False


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("db")
    parser.add_argument("run", nargs="?")
    parser.add_argument("--tasks", required=True)
    args = parser.parse_args()
    tasks = {t["id"]: t for t in json.load(open(args.tasks))}
    con = sqlite3.connect(args.db)
    run = args.run or con.execute("select run_id from runs order by created desc limit 1").fetchone()[0]
    per_name, where, total_unknown, trials = Counter(), Counter(), 0, 0
    for task_id, _trial, result in con.execute("select task_id, trial, result from trials where run_id=?", (run,)):
        trials += 1
        messages = json.loads(result).get("messages") or json.loads(result).get("transcript") or []
        for ask, reply in zip(messages, messages[1:], strict=False):
            if ask.get("role") != "assistant" or reply.get("role") != "user":
                continue
            m = ASK.match((ask.get("content") or "").strip())
            if not m or not any(p in (reply.get("content") or "") for p in DONT_KNOW):
                continue
            total_unknown += 1
            if stated(tasks[task_id], m.group(1)):
                per_name[m.group(1)] += 1
                where[task_id] += 1
    print(f"run {run}: {trials} trials, {total_unknown} don't-know replies, "
          f"{sum(per_name.values())} to a fact the instruction states")
    print("  by argument:", dict(per_name.most_common()))
    print("  tasks:", dict(sorted(where.items())))


if __name__ == "__main__":
    main()
