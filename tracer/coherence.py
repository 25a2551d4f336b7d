"""The coherence audit: does a task's feelings text (and the anchor its simulated user gets) have a cause in the task's
situation?

The build keeps a feelings text when the emotion pack's classifier reads its five labels back; that cannot see a
feeling with no cause ("I'm begging you, I'm desperate." over swapping a notebook), a history the situation does not
have ("I've heard promises like that before" on a first contact), two tempos at once ("relaxed and at peace" beside
"It's urgent") or a sentence that leans on nothing ("Even so, I'm not in a hurry."). This module reads the text against
the situation the Tracer recorded (`tracer.feelings.situation`: events, valence, stakes, days left, what is refused),
with lexicons kept as data in `coherence.json`, and names each defect with the words that show it. It is independent of
the cue bank and of the classifier: it was written from the defects a skeptical reading found, and its tests hold that
corpus and a clean one (tests/tracer/test_coherence.py).
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass
from functools import cache
from importlib.resources import files
from typing import Any

#: a date this near makes "time is running out" or "it's close" true (tracer.feelings.DEADLINE_DAYS)
CLOSE_DAYS = 7
#: a date this near makes a deadline "within the next hour or two" or "by tonight" true
IMMINENT_DAYS = 1
#: stakes (0-3) from which a feeling may be extreme, and from which a negative event is a threat or an offence
HIGH_STAKES = 3
REAL_STAKES = 2

_SENTENCE = re.compile(r"(?<=[.!?])\s+")
_DATE = re.compile(r"\b(today|tomorrow|tonight|this (morning|afternoon|evening|week|weekend)|next (week|month)|"
                   r"in \w+ days?|on (mon|tues|wednes|thurs|fri|satur|sun)day|\d{1,2} (jan|feb|mar|apr|may|jun|jul|aug|"
                   r"sep|oct|nov|dec)\w*|(jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)\w* \d{1,2})\b")


@dataclass(frozen=True)
class Finding:
    """One coherence defect: the rule, which text (`feeling` or `anchor`) and the words that show it."""

    rule: str
    text: str
    quote: str

    def __str__(self) -> str:
        return f"{self.rule} in the {self.text}: \"{self.quote}\""


@cache
def lexicon() -> dict[str, Any]:
    raw = json.loads(files(__package__).joinpath("coherence.json").read_text(encoding="utf-8"))
    out: dict[str, Any] = {}
    for name, entry in raw.items():
        if isinstance(entry, dict) and "patterns" in entry:
            out[name] = {**entry, "regex": re.compile("|".join(f"(?:{p})" for p in entry["patterns"]), re.I)}
    out["openers"] = tuple(raw["dangling_openers"])
    out["pronoun"] = re.compile(raw["pronoun_object"], re.I)
    out["exclusive"] = [tuple(re.compile(p, re.I) for p in pair) for pair in raw["exclusive"]]
    out["disputes"] = re.compile("|".join(f"(?:{p})" for p in raw["dispute_events"]), re.I)
    return out


def grounds(situation: Mapping[str, Any]) -> dict[str, bool]:
    """What the situation gives a feeling to rest on (the `needs` of `coherence.json`)."""
    valence = situation.get("valence", "neutral")
    stakes = int(situation.get("stakes") or 0)
    days = situation.get("days_left")
    refused = bool(situation.get("refused"))
    misfortune = bool(situation.get("misfortune"))
    negative = valence == "negative"
    pressing = bool(situation.get("pressing"))
    disputed = any(lexicon()["disputes"].search(e) for e in [*(situation.get("events") or []), situation.get("occasion") or ""])
    return {
        "history": bool(situation.get("history")),
        "refused": refused,
        "contested": (refused or disputed) and not situation.get("accepts_refusal"),
        "no_near_date": days is None or days > CLOSE_DAYS,
        "close_date": days is not None and days <= CLOSE_DAYS,
        "imminent": days is not None and days <= IMMINENT_DAYS,
        "not_imminent": days is None or days > IMMINENT_DAYS,
        # a real setback (a broken phone) gives "it's urgent" its reason without forbidding a patient customer
        "pressing": pressing or bool(situation.get("setback")) or (days is not None and days <= CLOSE_DAYS),
        "not_pressing": not pressing,
        "obstacle": negative or refused,
        "loss": bool(situation.get("loss", misfortune and negative)),
        "threat": bool(situation.get("threat", negative and (stakes >= REAL_STAKES or pressing))),
        "offence": refused or (negative and stakes >= REAL_STAKES),
        "no_misfortune": not negative and not misfortune,
        "never": False,  # a clash of feeling and cause inside one sentence has no situation that excuses it
        "high_stakes": stakes >= HIGH_STAKES or misfortune,
    }


def _normal(text: str) -> str:
    return " ".join(text.replace("\u2019", "'").replace("\u2018", "'").split())


def _quote(text: str, match: re.Match[str], width: int = 40) -> str:
    start, end = max(0, match.start() - width), min(len(text), match.end() + width)
    return ("..." if start else "") + text[start:end].strip() + ("..." if end < len(text) else "")


def check_text(text: str, situation: Mapping[str, Any], kind: str = "feeling") -> list[Finding]:
    """Every coherence defect of one text (a feelings text or an anchor) against `situation`."""
    text = _normal(text)
    if not text:
        return []
    lex, have = lexicon(), grounds(situation)
    found: list[Finding] = []
    for name in ("presupposition", "insistence", "exception", "deadline", "imminent", "few_days", "pressing", "calm", "ahead",
                 "obstacle", "loss", "threat", "offence", "good_fortune", "extreme", "clash"):
        rule = lex[name]
        match = rule["regex"].search(text)
        if match and not have[rule["needs"]]:
            found.append(Finding(_RULE_NAMES[name], kind, _quote(text, match)))
    calm, urgent = lex["calm"]["regex"].search(text), (lex["pressing"]["regex"].search(text)
                                                       or lex["deadline"]["regex"].search(text)
                                                       or lex["imminent"]["regex"].search(text))
    if calm and urgent:
        found.append(Finding("contradiction", kind, f"{calm.group(0)} ... {urgent.group(0)}"))
    for left, right in lex["exclusive"]:
        a, b = left.search(text), right.search(text)
        if a and b:
            found.append(Finding("contradiction", kind, f"{a.group(0)} ... {b.group(0)}"))
    found.extend(_dangling(text, situation, kind))
    return found


_RULE_NAMES = {"presupposition": "presupposition", "insistence": "presupposition", "exception": "presupposition",
               "deadline": "urgency against situation",
               "imminent": "urgency against situation", "few_days": "urgency against situation", "clash": "contradiction",
               "pressing": "urgency against situation", "calm": "urgency against situation", "ahead": "urgency against situation",
               "obstacle": "missing cause", "loss": "missing cause", "threat": "missing cause", "offence": "missing cause",
               "good_fortune": "contradiction", "extreme": "intensity against stakes"}


def _dangling(text: str, situation: Mapping[str, Any], kind: str) -> list[Finding]:
    """A sentence that leans on something no earlier sentence says: a concessive opener ("Even so") after a sentence
    with nothing to concede, or "it"/"that" as what a feeling is about when the text states no event."""
    lex = lexicon()
    sentences = [s for s in _SENTENCE.split(text) if s]
    has_event = bool(situation.get("events") or situation.get("occasion")) and kind == "feeling"
    found = []
    pressure = [lex[n]["regex"] for n in ("deadline", "imminent", "pressing", "obstacle", "threat", "offence", "loss", "extreme")]
    for i, sentence in enumerate(sentences):
        low = sentence.lower()
        opener = next((o for o in lex["openers"] if low.startswith(o + (" " if not o.endswith(",") else ""))
                       or low.startswith(o + ",")), None)
        if opener:
            before = sentences[i - 1] if i else ""
            if not before or not (any(r.search(before) for r in pressure) or _DATE.search(before.lower())):
                found.append(Finding("dangling reference", kind, sentence[:80]))
                continue
        pronoun = lex["pronoun"].search(sentence)
        if pronoun and not has_event and not _antecedent(sentences[:i]):
            found.append(Finding("dangling reference", kind, sentence[:80]))
            continue
        day = _THAT_DAY.search(sentence)
        if day and not _DATE.search(" ".join([*sentences[:i], sentence[:day.start()]]).lower()):
            found.append(Finding("dangling reference", kind, sentence[:80]))  # "my plans for that day": which day?
    return found


_THAT_DAY = re.compile(r"\b(that|the) day\b|\bthat date\b", re.I)


_THING = re.compile(r"\b(my|the|a|an|our|your) \w+", re.I)


def _antecedent(previous: list[str]) -> bool:
    """Whether an earlier sentence names a thing a pronoun could point back to (a noun phrase, not only a feeling)."""
    return any(_THING.search(s) and not s.lower().startswith(("i'm", "i am", "honestly")) for s in previous)


def check_task_feelings(feeling: str | None, anchor: str | None, situation: Mapping[str, Any]) -> list[Finding]:
    """The coherence defects of a task's feelings text and of the anchor its simulated user is given."""
    return [*check_text(feeling or "", situation, "feeling"), *check_text(anchor or "", situation, "anchor")]
