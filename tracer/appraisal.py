"""Appraisal: whether a task's situation gives an emotion condition its cause, and which event that cause is.

An emotion is a response to something (anger to an obstacle or a fault, fear to a threat, sadness to a setback or a
loss, disgust to an offence, enjoyment to a good outcome or prospect), at an intensity its cause must carry: no
"I'm begging you" over swapping a notebook. `appraisal.json` says, as data, what each of the 22 emotions needs and
where it sits on its family's intensity scale; `grounds` reads the causes a situation offers (`feelings.situation`:
its events and occasion, each with valence and stakes, its refusals and its dates); `misfit` says why a condition
does not fit (None when it does), so the design gives the condition to another task; `cause` is the event the
feelings text then states in the customer's words. Urgency is appraised the same way: high urgency needs a near
date or a pressing setback before it says "it's urgent", low urgency nothing pressing and no date within a few days.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from functools import cache
from importlib.resources import files
from typing import Any

#: the causes of anger and disgust a twice-stalled build may replace by any setback (`cause`)
FALLBACK = frozenset({"obstacle", "fault", "offence", "contested"})
#: the needs of the pleasant emotions (enjoyment): even a stalled build never rests them on a negative event
PLEASANT = frozenset({"calm", "good", "upcoming"})


@cache
def appraisal_data() -> dict[str, Any]:
    """`appraisal.json`: per emotion its need and intensity; the stakes each intensity needs; fault words."""
    return json.loads(files(__package__).joinpath("appraisal.json").read_text(encoding="utf-8"))


def _says(text: str, words: str) -> bool:
    low = f" {text.lower()} "
    return any(f" {w}" in low for w in appraisal_data()[words])


def grounds(facts: Mapping[str, Any]) -> dict[str, dict[str, Any] | None]:
    """Each ground of `appraisal.json` -> the cause in the situation that supplies it (the strongest), or None.

    A cause is one of `facts["causes"]` (an event or the occasion: text, valence, stakes, source)."""
    causes = list(facts.get("causes") or [])
    negative = sorted((c for c in causes if c["valence"] == "negative"), key=lambda c: -c["stakes"])
    positive = sorted((c for c in causes if c["valence"] == "positive"), key=lambda c: -c["stakes"])
    any_cause = sorted(causes, key=lambda c: -c["stakes"])
    misfortune, pressing = bool(facts.get("misfortune")), bool(facts.get("pressing"))
    days = facts.get("days_left")
    near = days is not None and days <= appraisal_data()["urgency"]["near_days"]
    events = [c for c in negative if c["source"] == "event"]
    fault = [c for c in events if _says(c["text"], "fault_words")]
    blocked = [c for c in events if _says(c["text"], "obstacle_words") or c in fault]
    stakes = int(facts.get("stakes") or 0)
    # a request the policy refuses: anger or disgust at it is said as conditional ("if I'm told no, ...")
    refusal = [{"text": t, "valence": "negative", "stakes": stakes, "source": "refusal"} for t in facts.get("refusals") or []]
    insisted = facts.get("insisted")
    first = lambda xs: xs[0] if xs else None  # noqa: E731
    return {
        "obstacle": first(blocked + refusal),
        "setback": first(negative),
        "fault": first(fault + refusal),
        "offence": first([c for c in fault if c["stakes"] >= 2] + refusal),
        # a request the user will insist on when refused (told so by the instruction), or an event they blame
        "contested": ({"text": insisted, "valence": "negative", "stakes": stakes, "source": "refusal"}
                      if insisted and not facts.get("accepts_refusal") else first(fault)),
        "threat": first([c for c in negative if c["stakes"] >= 2 or pressing]),
        "loss": first([c for c in negative if _says(c["text"], "loss_words")
                       and (c["source"] == "occasion" or c["stakes"] >= 3)]),
        "stake": first([c for c in any_cause if c["stakes"] >= 1 or near]),
        "good": None if misfortune or negative else first(positive or [c for c in causes if c["valence"] != "negative"]),
        "upcoming": None if misfortune or negative else first(positive),
        "calm": None if misfortune or pressing or negative else first(any_cause),
        "any": first(any_cause),
    }


def urgency_misfit(urgency: str, facts: Mapping[str, Any]) -> str | None:
    """Why this urgency cannot be said in the situation (None when it can): "no rush" needs nothing pressing and no
    date within `calm_days`. A high urgency fits any situation, but only a near date or a pressing setback lets it say
    "it's urgent" or "time is running out" (the urgency lines' `when`); otherwise it says "today if possible"."""
    days, pressing = facts.get("days_left"), bool(facts.get("pressing"))
    rules = appraisal_data()["urgency"]
    if urgency == "low" and (pressing or (days is not None and days <= rules["calm_days"])):
        return "low urgency needs nothing pressing and no date within a few days"
    return None


def cause(condition: Mapping[str, str], facts: Mapping[str, Any]) -> dict[str, Any] | None:
    """The cause the situation gives `condition`'s emotion at its intensity, or None."""
    entry = appraisal_data()["emotions"][condition["emotion"]]
    found = grounds(facts)[entry["needs"]]
    if found is None and int(facts.get("relax") or 0) >= 2 and entry["needs"] in FALLBACK:
        # stalled twice over: anger or disgust may rest on any setback or refusal the situation states
        ways = grounds(facts)
        found = ways["setback"] or ways["obstacle"]
    if found is None and int(facts.get("relax") or 0) >= 3:
        # stalled three times over: the strongest event of the emotion's own valence (no excitement over a lost
        # card, no contentment over a theft, no distress over good news); the coherence audit still reads it
        pleasant = entry["needs"] in PLEASANT
        found = next((c for c in sorted(facts.get("causes") or [], key=lambda c: -c["stakes"])
                      if (c["valence"] != "negative") == pleasant or c["valence"] == "neutral"), None)
        if pleasant and (facts.get("misfortune") or facts.get("valence") == "negative"):
            found = None
    # a build that stalls on a condition lets it rest on a cause one intensity step weaker (`facts["relax"]`)
    need = appraisal_data()["min_stakes"][str(max(1, entry["intensity"] - int(facts.get("relax") or 0)))]
    # the stakes of the whole situation (its strongest event, raised by a weighty occasion) carry the intensity
    if found is None or max(found["stakes"], int(facts.get("stakes") or 0)) < need:
        return None
    return found


def misfit(condition: Mapping[str, str], facts: Mapping[str, Any]) -> str | None:
    """Why the situation cannot carry `condition` (None when it can): no cause of the emotion's kind at its
    intensity, or an urgency the situation's dates and stakes contradict."""
    emotion = condition["emotion"]
    if cause(condition, facts) is None:
        entry = appraisal_data()["emotions"][emotion]
        return (f"{emotion} needs {entry['needs']} of stakes {appraisal_data()['min_stakes'][str(entry['intensity'])]}"
                f"+ ({'; '.join(c['text'] for c in facts.get('causes') or [])[:80] or 'no event'})")
    return urgency_misfit(condition["urgency"], facts)
