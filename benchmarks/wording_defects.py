"""Count the wording defects of issue 34 item 7 in task files (a measurement, never asserted in tests).

    python benchmarks/wording_defects.py [FILE_OR_PACK ...] [--split test] [--examples 2]

A pack name reads its committed data/tasks.json; a path reads that file. Per file it prints, over the split's
Tracer-built tasks, how many tasks carry each defect:

- `rule`: a decision rule whose subject is an embedded question ("If how much of the tuition is not refunded is ...",
  "Should what the tickets cost you come to ...");
- `restated`: an instruction sentence every content word of which an earlier sentence already says ("... with express
  delivery. ... You want express delivery.");
- `relation`: a caller acting for someone introduced as a form would ("The patient is Lena Evans and you are calling
  for your parent.") or a bare "Your reservation number is ..." sentence;
- `known_dup`: `user.known` holding one value under two keys (`date` beside `travel_date`, `city` beside
  `new_address_city`, `check_out` beside `check_outs`; `tau_emotion.tracer.refine.known_defects`);
- `known_placeholder`: a known value that only repeats its key (`"card": "card"`);
- `repeat_read`: the gold repeats an identical read (same tool and arguments) with no write between.
"""

from __future__ import annotations

import argparse
import json
import re
from collections import Counter
from pathlib import Path

PACKS = "airline retail telecom telehealth restaurant bank school travel movie basketball".split()
ROOT = Path(__file__).resolve().parents[1]
RULE = re.compile(r"\b(?:if|should) (?:what|how much|how many|whether|which)\b", re.I)
RELATION = re.compile(r"\bThe patient is [^.]* calling for your \w+|(?:^|\. )Your reservation number is ")
_LEAD = re.compile(r"^(?:you (?:want|prefer|would like|need|would rather|use)(?: to)?|make sure|please) ", re.I)
_STOP = frozenset("with that this your from have will would about also then next after once when what them they "
                  "their there which into more than less".split())


def _content(sentence: str) -> set[str]:
    return {w for w in re.findall(r"[a-z0-9$.-]+", _LEAD.sub("", sentence.lower())) if len(w) >= 4 and w not in _STOP}


def restated(instruction: str) -> str | None:
    """The first sentence all of whose (two or more) content words an earlier sentence of the instruction says."""
    sentences = [s.strip() for s in re.split(r"(?<=[.!?])\s+", instruction) if s.strip()]
    for i, s in enumerate(sentences[1:], 1):
        words = _content(s)
        if len(words) >= 2 and any(words <= _content(earlier) for earlier in sentences[1:i]):
            return s
    return None


def repeated_read(task: dict, writes: set[str]) -> str | None:
    seen: set[str] = set()
    for action in task["gold"]["actions"]:
        if action["name"] in writes:
            seen.clear()
            continue
        key = json.dumps([action["name"], action["arguments"]], sort_keys=True)
        if key in seen:
            return action["name"]
        seen.add(key)
    return None


def _writes(pack: str) -> set[str]:
    from tau_emotion.core.manager import load_all_plugins

    domain = load_all_plugins().catalog("domains").get(pack)
    return {name for name, tool in domain.toolset.tools.items() if tool.writes}


def count(path: Path, split: str, examples: int) -> dict[str, int]:
    from tau_emotion.tracer.refine import known_defects

    rows = [t for t in json.loads(path.read_text(encoding="utf-8"))
            if t.get("split") == split and (t.get("meta") or {}).get("source") == "tracer"]
    writes = _writes(rows[0]["domain"]) if rows else set()
    found: dict[str, list[str]] = {k: [] for k in
                                   ("rule", "restated", "relation", "known_dup", "known_placeholder", "repeat_read")}
    for t in rows:
        text = " ".join([t["user"]["instruction"], *t["user"].get("intents", [])])
        if m := RULE.search(text):
            found["rule"].append(f"{t['id']}: ...{text[m.start():m.start() + 90]}...")
        if s := restated(t["user"]["instruction"]):
            found["restated"].append(f"{t['id']}: {s}")
        if m := RELATION.search(t["user"]["instruction"]):
            found["relation"].append(f"{t['id']}: {m.group(0).strip('. ')}")
        dups, holders = known_defects(t["user"]["known"])
        if dups:
            found["known_dup"].append(f"{t['id']}: {dups[0]}")
        if holders:
            found["known_placeholder"].append(f"{t['id']}: {holders[0]}")
        if r := repeated_read(t, writes):
            found["repeat_read"].append(f"{t['id']}: {r}")
    print(f"{path} ({len(rows)} {split} tasks): " + ", ".join(f"{k} {len(v)}" for k, v in found.items()))
    for k, v in found.items():
        for line in v[:examples]:
            print(f"    {k}: {line}")
    return {k: len(v) for k, v in found.items()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("files", nargs="*", help="pack names or task files (default: every pack's committed file)")
    parser.add_argument("--split", default="test")
    parser.add_argument("--examples", type=int, default=0)
    args = parser.parse_args()
    total: Counter[str] = Counter()
    for name in args.files or PACKS:
        path = ROOT / "domain_packs" / name / "data" / "tasks.json" if name in PACKS else Path(name)
        total.update(count(path, args.split, args.examples))
    print("all: " + ", ".join(f"{k} {v}" for k, v in total.items()))


if __name__ == "__main__":
    main()
