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

#: the causes a twice-stalled build may replace by any setback (`cause`): anger only; frustration at whatever is in the
#: way is natural, while disgust, an argument or fear each need their own kind of cause however long the build stalls
FALLBACK = frozenset({"obstacle"})
#: the needs of the pleasant emotions (enjoyment): even a stalled build never rests them on a negative event
PLEASANT = frozenset({"calm", "good", "upcoming"})
#: from this intensity a feeling rests on the request's own event or the occasion it is for, not on a circumstance of
#: the customer's life (no "I'm desperate, I lost my job" beside a standing order); a loss (sorrow) is the exception
EVENT_INTENSITY = 3
#: the relax of a build that attaches no emotion condition: any event will do (`cause`)
ANY_CAUSE = 3


@cache
def appraisal_data() -> dict[str, Any]:
    """`appraisal.json`: per emotion its need and intensity; the stakes each intensity needs; fault words."""
    return json.loads(files(__package__).joinpath("appraisal.json").read_text(encoding="utf-8"))


def _says(text: str, words: str) -> bool:
    low = f" {text.lower()} "
    return any(f" {w}" in low for w in appraisal_data()[words])


def candidates(facts: Mapping[str, Any]) -> dict[str, list[dict[str, Any]]]:
    """Each ground of `appraisal.json` -> the causes in the situation that supply it, strongest first.

    A cause is one of `facts["causes"]` (an event or the occasion: text, valence, stakes, source). Its kind is read
    from its words: a fault names what someone else did or charged (`fault_words`), an offence what is unfair or wrong
    (`offence_words`), a threat is a harm still ahead (not a settled change of plan, `settled_words`), a setback one
    that has happened (not only a worry, `uncertain_words`), and a pleasant feeling never rests on an event that says
    something is in the way (`obstacle_words`)."""
    causes = sorted(facts.get("causes") or [], key=lambda c: -c["stakes"])
    negative = [c for c in causes if c["valence"] == "negative"]
    positive = [c for c in causes if c["valence"] == "positive" and not _says(c["text"], "obstacle_words")]
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
    calm = [c for c in causes if c["valence"] != "negative" and not _says(c["text"], "obstacle_words")]
    return {
        "obstacle": blocked + refusal,
        "setback": [c for c in negative if not _says(c["text"], "uncertain_words")],
        # what dislike and aversion are about: something unwelcome still there (a fault, a supply running out, a
        # refusal), not a change of plan the customer has settled ("my plans fell through" gives no distaste)
        "unwelcome": [c for c in blocked if not _says(c["text"], "settled_words")] + refusal,
        "fault": fault + refusal,
        # repugnance at a refusal needs a request that matters (stakes 2+): no "I'd find a refusal repugnant" over
        # spending less on a game ticket (basketball-test-054)
        "offence": [c for c in fault if _says(c["text"], "offence_words")] + [c for c in refusal if c["stakes"] >= 2],
        # a request the user will insist on when refused (told so by the instruction), or an event they blame
        "contested": ([{"text": insisted, "valence": "negative", "stakes": stakes, "source": "refusal"}]
                      if insisted and not facts.get("accepts_refusal") else fault),
        "threat": [c for c in negative if (c["stakes"] >= 2 or pressing) and not _says(c["text"], "settled_words")],
        "loss": [c for c in negative if _says(c["text"], "loss_words") and (c["source"] == "occasion" or c["stakes"] >= 3)],
        "stake": [c for c in causes if (c["stakes"] >= 1 or near) and not _says(c["text"], "settled_words")],
        # pride and relief need something that matters: not "I'm proud to be on top of things" beside "I am thinking
        # of buying something" (retail-test-008, stakes 0)
        "good": [] if misfortune or negative else ([c for c in positive if c["stakes"] >= 1]
                                                     or [c for c in calm if c["stakes"] >= 1]),
        "upcoming": [] if misfortune or negative else positive,
        "calm": [] if misfortune or pressing or negative else calm,
        "any": causes,
    }


def grounds(facts: Mapping[str, Any]) -> dict[str, dict[str, Any] | None]:
    """Each ground of `appraisal.json` -> the strongest cause in the situation that supplies it, or None."""
    return {ground: found[0] if found else None for ground, found in candidates(facts).items()}


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
    """The cause the situation gives `condition`'s emotion at its intensity, or None.

    A stalled build (`facts["relax"]`) accepts a cause one intensity step weaker, and after twice as long lets anger
    rest on any setback or refusal (`FALLBACK`); it never changes what kind of cause fear, sadness or disgust need."""
    entry = appraisal_data()["emotions"][condition["emotion"]]
    relax = int(facts.get("relax") or 0)
    ways = candidates(facts)
    found = list(ways[entry["needs"]])
    if relax >= 2 and entry["needs"] in FALLBACK:
        # any setback, but no anger at a bereavement or a stay in hospital ("It's exasperating that my father is in
        # hospital", basketball-test-047)
        found += [c for c in ways["setback"] + ways["obstacle"] if not _says(c["text"], "loss_words")]
    if relax >= ANY_CAUSE:
        # a build that attaches no condition (`--no-emotion`): any event of the emotion's own valence will do
        pleasant = entry["needs"] in PLEASANT
        if not (pleasant and (facts.get("misfortune") or facts.get("valence") == "negative")):
            found += [c for c in ways["any"] if (c["valence"] != "negative") == pleasant or c["valence"] == "neutral"]
        return next(iter(found), None)
    need = appraisal_data()["min_stakes"][str(max(1, entry["intensity"] - min(relax, 1)))]
    if entry["intensity"] >= EVENT_INTENSITY and entry["needs"] != "loss":
        # however long the build stalls, a strong feeling needs a real matter ("I feel hopeless" over a friend who
        # moves away, basketball-test-027, is not one)
        need = max(need, appraisal_data()["min_stakes"][str(EVENT_INTENSITY)])
        # a strong feeling: the request's own event, or the occasion it is for, carries it at its own stakes; a
        # circumstance of the customer's life the request is not about does not (`circumstance_words`)
        return next((c for c in found if c["stakes"] >= need
                     and not (c["source"] == "occasion" and _says(c["text"], "circumstance_words"))), None)
    # the stakes of the whole situation (its strongest event, raised by a weighty occasion) carry the intensity
    return next((c for c in found if max(c["stakes"], int(facts.get("stakes") or 0)) >= need), None)


def misfit(condition: Mapping[str, str], facts: Mapping[str, Any]) -> str | None:
    """Why the situation cannot carry `condition` (None when it can): no cause of the emotion's kind at its
    intensity, or an urgency the situation's dates and stakes contradict."""
    emotion = condition["emotion"]
    if cause(condition, facts) is None:
        entry = appraisal_data()["emotions"][emotion]
        return (f"{emotion} needs {entry['needs']} of stakes {appraisal_data()['min_stakes'][str(entry['intensity'])]}"
                f"+ ({'; '.join(c['text'] for c in facts.get('causes') or [])[:80] or 'no event'})")
    return urgency_misfit(condition["urgency"], facts)
