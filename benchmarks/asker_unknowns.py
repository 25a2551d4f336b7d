"""Count the scripted user's "I don't know" replies to facts its instruction states (issue 21, item 5).

Reads one stored run (`tau run --agent asker --user scripted ...`) and, for every asker question "Could you tell
me the X?" that the user answered with a don't-know line (the neutral one or any emotion style's), decides whether X is stated in the
task's instruction: some gold-call argument named X has a value that the instruction says (verbatim, an ISO date
as "May 19", a value with underscores or spaces as words) or that is a leaf of `user.known`. Prints the totals,
the count per argument name, and the tasks where it happened.

It also counts answers with another request's value: a question about an argument of the current request's gold
calls (the user is on request k once its line, `user.intents[k]`, was said) answered with a value that another
request's line or gold calls name and the current one's do not (airline-003 giving the other reservation's
origin). Questions only later requests' calls take (an agent asking ahead) are left aside there; among the
don't-knows to stated facts they are counted apart ("asked ahead"): the user answers them "I don't know" on purpose.

And it counts answers with a near namesake's value: the question names a fact the user knows (asked "date of
birth?", `user.known["date_of_birth"]`) and the reply states another fact ("My date is 2025-06-20.") without
the asked one's value or any value a gold call passes under that name (telehealth's appointment date given for
the caller's date of birth).

And it counts three things a customer would not say (issue 33), each to be 0:
- a don't-know to a question about the id or code of something the user knows by name (the plan's fact gives that
  argument by name: "model code?" while it knows "Galaxy A55");
- "I've said this already" (the emotion styles' `friction_repeat` lines) in a reply to a question whose answer the
  user had not said before (no known value of the reply in an earlier user turn);
- duplicated or placeholder facts: a user turn that states one known value in two sentences of its own (the
  request lines and the feelings text set aside: "My party size is 4. My new party size is 4."), or a fact whose
  value is its own key's word ("My card is card.").

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


def said_already_phrases() -> list[str]:
    """The emotion styles' complaints that say the caller told it already (emotion_pack/data/expression.json)."""
    from importlib.resources import files

    return json.loads(files("tau_emotion.emotion_pack").joinpath("data/expression.json").read_text())["friction_repeat"]


DONT_KNOW = dont_know_phrases()
SAID_ALREADY = said_already_phrases()
WORD = re.compile(r"[a-z0-9]+")
SENTENCE = re.compile(r"(?<=[.!?])\s+")
ASK = re.compile(r"^Could you tell me the (.+)\?$")
STATED = re.compile(r"\bmy [a-z ]+? (?:is|are) ([^.]*(?:\.\d+[^.]*)?)\.")
STATED_KEY = re.compile(r"\bmy ([a-z ]+?) (?:is|are) ([^.]*(?:\.\d+[^.]*)?)\.")
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
    if isinstance(value, float) and value.is_integer():  # 250.0 is said "250"
        out.add(str(int(value)))
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


def parts(task: dict) -> list[dict] | None:
    """Per request, its gold calls and fact keys: from the task's plan (or the `meta.intent_gold` of an older file)."""
    plan = task.get("plan")
    if plan:
        return [{"actions": r.get("actions", []), "facts": [f["key"] for f in r.get("facts", [])]}
                for r in plan["requests"]]
    return task.get("meta", {}).get("intent_gold")


def by_name(task: dict, name: str, position: int) -> bool:
    """Whether the user, on request `position`, knows by name the thing whose id the argument `name` takes."""
    plan = task.get("plan") or {}
    requests = plan.get("requests") or []
    facts = (requests[position].get("facts", []) if position < len(requests) else []) + plan.get("caller", [])
    arg = name.replace(" ", "_")
    return any(any(a.rpartition(".")[2] == arg for a in f.get("names", [])) for f in facts)


def _words(text: str) -> list[str]:
    return WORD.findall(text.lower())


def _in_words(value, text_words: list[str]) -> bool:
    want = _words(str(value)) if not isinstance(value, float) or not value.is_integer() else [str(int(value))]
    return bool(want) and any(text_words[i:i + len(want)] == want for i in range(len(text_words)))


def known_values(task: dict) -> list:
    return [v for v in leaves(task["user"]["known"]) if v is not None and not isinstance(v, bool) and str(v).strip()]


def plan_facts(task: dict) -> list[dict]:
    plan = task.get("plan") or {}
    return [f for r in plan.get("requests", []) for f in r.get("facts", [])] + plan.get("caller", [])


def said_before(task: dict, messages: list[dict], at: int) -> bool:
    """Whether the reply at `at` states a known value that an earlier user turn stated (as the value, or in the
    plan's words for that fact: "I want the card unfrozen" said the card status)."""
    reply = _words(messages[at].get("content") or "")
    earlier = [m.get("content") or "" for m in messages[:at] if m.get("role") == "user"]
    for v in known_values(task):
        # a date is said either way: "2025-09-16" or "September 16"
        if any(_in_words(f, reply) for f in forms(v)) and any(_in_words(f, _words(e)) for f in forms(v) for e in earlier):
            return True
    return any(f.get("words") and any(_in_words(v, reply) for v in leaves(f["value"]))
               and any(f["words"].lower() in e.lower() for e in earlier) for f in plan_facts(task))


def duplicated(task: dict, text: str) -> str | None:
    """A sentence of the user's own (the request lines and the feelings text are the task's) that states only known
    values the turn already states (its request line, or an earlier sentence of its own: "My party size is 4. My new
    party size is 4."), or a placeholder fact ("My card is card."); None when neither. Values of one or two letters
    (a state code that reads as "me") are left aside."""
    text = " ".join(text.split())
    feeling = " ".join(((task.get("plan") or {}).get("situation") or {}).get("feeling", "").split()).rstrip(".")
    lines = [x for x in (" ".join(y.split()).rstrip(".") for y in [*(task["user"].get("intents") or []), feeling])
             if x and x in text]
    for line in lines:
        text = text.replace(line, " | ")
    for key, value in STATED_KEY.findall(text.lower()):
        if set(_words(value)) and set(_words(value)) <= set(_words(key)):
            return f"placeholder: my {key} is {value}"
    values = [v for v in known_values(task) if not (str(v).isalpha() and len(str(v)) < 3)]
    seen = [v for v in values if any(_in_words(v, _words(line)) for line in lines if line != feeling)]
    for sentence in (s for chunk in text.split("|") for s in SENTENCE.split(chunk) if s.strip()):
        named = [v for v in values if _in_words(v, _words(sentence))]
        if named and all(v in seen for v in named):
            return f"duplicated: {', '.join(map(str, named))}"
        seen += named
    return None


def stated(task: dict, name: str, position: int | None = None) -> bool:
    """Whether a gold argument `name` has a value the instruction states. With `position` (the request the user is
    on) and a question about that request's calls, it is what the instruction states for that request: a value of
    those calls said in the request's line or among its facts (`meta.intent_gold[i].facts`). A request known by its
    trip's words, asked for its reservation id, does not know the id the next request states: 'I don't know' is
    the right answer there, and that request's id would be another request's value."""
    text = task["user"]["instruction"].lower()
    known = {str(v).lower() for v in leaves(task["user"]["known"])}
    actions = task["gold"]["actions"]
    split = parts(task)
    lines = task["user"].get("intents") or []
    if position is not None and isinstance(split, list) and position < len(split) and len(lines) == len(split):
        mine = [actions[j] for j in split[position].get("actions", []) if j < len(actions)]
        if any(arg_values(a["arguments"], name.replace(" ", "_")) for a in mine):
            actions = mine
            facts = [task["user"]["known"][k] for k in split[position].get("facts", []) if k in task["user"]["known"]]
            known = {str(v).lower() for v in leaves(facts)}
            text = lines[position].lower()
    for action in actions:
        for v in arg_values(action["arguments"], name.replace(" ", "_")):
            if isinstance(v, bool) or v is None:
                continue
            if str(v).lower() in known:
                return True
            if any(len(f) >= 3 and re.search(rf"(?<!\w){re.escape(f.lower())}(?!\w)", text) for f in forms(v)):
                return True
    return False


def _said(value, text: str) -> bool:
    return any(len(f) >= 3 and re.search(rf"(?<!\w){re.escape(f.lower())}(?!\w)", text) for f in forms(value))


def request_values(task: dict) -> list[tuple[str, set[str]]]:
    """Per request: its line (lowered) and the argument names of its gold calls, from `meta.intent_gold`."""
    lines = task["user"].get("intents") or []
    split = parts(task)
    if not isinstance(split, list) or len(split) != len(lines):
        return []
    actions = task["gold"]["actions"]
    out = []
    for line, part in zip(lines, split, strict=True):
        calls = [actions[j] for j in part.get("actions", []) if j < len(actions)]
        names = {n for a in calls for n in _names(a["arguments"])}
        text = (line + " " + json.dumps([a["arguments"] for a in calls])).lower()
        out.append((text, names))
    return out


def _names(value) -> list[str]:
    if isinstance(value, dict):
        return [n for k, v in value.items() for n in [k, *_names(v)]]
    if isinstance(value, list):
        return [n for v in value for n in _names(v)]
    return []


def foreign_values(task: dict, messages: list[dict]) -> list[str]:
    """Values the user gave, to a question about the current request, that belong to another request only."""
    requests = request_values(task)
    if len(requests) < 2:
        return []
    lines = [line.lower() for line in task["user"]["intents"]]
    values = {str(v) for v in leaves(task["user"]["known"]) if not isinstance(v, bool) and v is not None}
    position, found = 0, []
    for ask, reply in zip(messages, messages[1:], strict=False):
        if ask.get("role") == "user":
            said = (ask.get("content") or "").lower()
            position = max([position] + [k for k, line in enumerate(lines) if line and line in said])
        if ask.get("role") != "assistant" or reply.get("role") != "user":
            continue
        m = ASK.match((ask.get("content") or "").strip())
        if not m or m.group(1).replace(" ", "_") not in requests[position][1]:
            continue
        # only the facts stated ("My trip origin is Miami."), not the style's words ("my business elsewhere")
        answer = " | ".join(STATED.findall((reply.get("content") or "").lower()))
        mine = requests[position][0]
        for v in values:
            if not _said(v, answer) or _said(v, mine):
                continue
            if any(_said(v, text) for k, (text, _) in enumerate(requests) if k != position):
                found.append(f"{m.group(1)}={v}")
    return found


def namesake(task: dict, question: str, reply: str) -> str | None:
    """'asked=stated' when the reply to "Could you tell me the X?" states another fact than the known X and does not
    say X's value ("date of birth=date"); None otherwise (X not known, or nothing stated)."""
    m = ASK.match(question.strip())
    known = task["user"].get("known") or {}
    if not m or m.group(1).replace(" ", "_") not in known:
        return None
    asked = m.group(1)
    value = known[asked.replace(" ", "_")]
    if isinstance(value, (dict, list, bool)) or value is None:
        return None
    stated_keys = STATED_KEY.findall(reply.lower())
    if not stated_keys or any(k == asked for k, _ in stated_keys) or _said(value, reply.lower()):
        return None
    # a value some gold call passes under that name is a right answer for some call ("the first name?" with the new
    # passenger's, "the zip?" with the new address's): the question is ambiguous there, not answered wrongly
    gold = [v for a in task["gold"]["actions"] for v in arg_values(a["arguments"], asked.replace(" ", "_"))]
    if any(_said(v, said) or str(v).lower() == said.strip() for v in gold for _, said in stated_keys):
        return None
    return f"{asked}={stated_keys[0][0]}"


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
    foreign, foreign_where, wrong, wrong_where, ahead = Counter(), Counter(), Counter(), Counter(), Counter()
    named, early, dupes = Counter(), Counter(), Counter()  # issue 33: each must be 0
    for task_id, _trial, result in con.execute("select task_id, trial, result from trials where run_id=?", (run,)):
        trials += 1
        messages = json.loads(result).get("messages") or json.loads(result).get("transcript") or []
        for hit in foreign_values(tasks[task_id], messages):
            foreign[hit.split("=")[0]] += 1
            foreign_where[task_id] += 1
        lines = [line.lower() for line in tasks[task_id]["user"].get("intents") or []]
        position = 0
        for at, message in enumerate(messages):
            if message.get("role") == "user":
                hit = duplicated(tasks[task_id], message.get("content") or "")
                dupes.update([f"{task_id}: {hit}"] if hit else [])
                said = message.get("content") or ""
                if any(p in said for p in SAID_ALREADY) and not said_before(tasks[task_id], messages, at):
                    early[task_id] += 1
        for ask, reply in zip(messages, messages[1:], strict=False):
            if ask.get("role") == "user":
                said = (ask.get("content") or "").lower()
                position = max([position] + [k for k, line in enumerate(lines) if line and line in said])
            if ask.get("role") != "assistant" or reply.get("role") != "user":
                continue
            hit = namesake(tasks[task_id], ask.get("content") or "", reply.get("content") or "")
            if hit:
                wrong[hit] += 1
                wrong_where[task_id] += 1
            m = ASK.match((ask.get("content") or "").strip())
            if not m or not any(p in (reply.get("content") or "") for p in DONT_KNOW):
                continue
            total_unknown += 1
            if by_name(tasks[task_id], m.group(1), position):
                named[m.group(1)] += 1
            if stated(tasks[task_id], m.group(1), position):
                per_name[m.group(1)] += 1
                where[task_id] += 1
                requests = request_values(tasks[task_id])
                if requests and position < len(requests) and m.group(1).replace(" ", "_") not in requests[position][1]:
                    ahead[m.group(1)] += 1
    print(f"run {run}: {trials} trials, {total_unknown} don't-know replies, "
          f"{sum(per_name.values())} to a fact the instruction states")
    print("  by argument:", dict(per_name.most_common()))
    print(f"  of which {sum(ahead.values())} asked ahead (no argument of the current request's calls; another "
          "request's fact):", dict(ahead.most_common()))
    print("  tasks:", dict(sorted(where.items())))
    print(f"  {sum(foreign.values())} answers with another request's value, by argument:", dict(foreign.most_common()))
    print("  tasks:", dict(sorted(foreign_where.items())))
    print(f"  {sum(wrong.values())} answers with a near namesake's value (asked=stated):", dict(wrong.most_common()))
    print("  tasks:", dict(sorted(wrong_where.items())))
    print(f"  {sum(named.values())} don't-knows to the id of a thing known by name:", dict(named.most_common()))
    print(f"  {sum(early.values())} 'said already' before it was said:", dict(sorted(early.items())))
    print(f"  {sum(dupes.values())} duplicated or placeholder facts:", dict(dupes.most_common(5)))


if __name__ == "__main__":
    main()
