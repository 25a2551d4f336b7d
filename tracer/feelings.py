"""Feelings: a first-person text written for the emotion condition a task was assigned.

The condition comes from the split's design (`design.py`), never from the task. A feelings
generator writes the text for it from the situation (the intents' events, the occasion):
`TemplateFeelings` with cue sentences from `feeling_cues.json` (`feeling.j2`), `LLMFeelings` with a
model. `build.py` has the emotion pack's classifier read the text back (`EmotionLabeler.read`) and
keeps it only when the reading agrees on all five labels (family, emotion, politeness, urgency and
trust: `agrees`); the task records the assigned condition, the text and the reading. The vocabulary,
lexicon, anchors and classifier come from the emotion plugin's condition space, which the core's
contract hands out (`condition_space(pm)`).
"""

from __future__ import annotations

import asyncio
import json
import random
from collections.abc import Callable
from functools import cache
from importlib.resources import files
from typing import TYPE_CHECKING, Any

from tau_emotion.core.errors import TauError
from tau_emotion.tracer.refine import FIRST, render, say

if TYPE_CHECKING:
    from tau_emotion.core.conditions import ConditionSpace
    from tau_emotion.tracer.grounding import Candidate

#: the task block the Tracer writes conditions to; the emotion plugin registers its condition space under it
BLOCK = "emotion"


class EmotionUnavailable(TauError):
    """The emotion pack (classifier or anchor bank) cannot be used."""


_VALENCE_ORDER = {"positive": 0, "neutral": 1, "negative": 2}


@cache
def cue_bank() -> dict[str, Any]:
    """`feeling_cues.json`: first-person sentences per emotion and per dimension value."""
    return json.loads(files(__package__).joinpath("feeling_cues.json").read_text(encoding="utf-8"))


#: a date this close makes a situation pressing ("no rush" would contradict it)
PRESSING_DAYS = 3
#: a negative event of these stakes (a broken phone) makes a situation pressing as a close date does
PRESSING_STAKES = 2
#: "Time is running out" needs a date at most this far away
DEADLINE_DAYS = 7
#: a negative event this serious is a misfortune (design.MISFORTUNE_STAKES)
MISFORTUNE_STAKES = 3
#: the labels of a condition, the slots of a feelings text
SLOTS = ("emotion", "urgency", "politeness", "trust")


def situation(cand: Candidate, occasion: tuple[str, int, str] | None = None) -> dict[str, Any]:
    """What the feelings rest on: events, occasion, valence, stakes and time pressure.

    `occasion` (text, stakes, valence) stands in for the candidate's own (`cand.occasion`) when the build asks
    whether an occasion would fit before it picks one. `pressing`: a date within PRESSING_DAYS, a misfortune, a sad
    occasion or a setback of PRESSING_STAKES (a broken phone; no "no rush" beside them); `misfortune`: a negative
    event of MISFORTUNE_STAKES or a negative occasion; `upcoming`: a positive event or occasion to look forward to.
    """
    moods = [d.mood for d in cand.drafts]
    if occasion is None and cand.occasion:
        occasion = (cand.occasion, cand.occasion_stakes, getattr(cand, "occasion_valence", "neutral"))
    text, o_stakes, o_valence = occasion if occasion is not None else (None, 0, "neutral")
    valences = [m.valence for m in moods] + ([o_valence] if text else [])
    valence = max(valences, key=lambda v: _VALENCE_ORDER.get(v, 1), default="neutral")
    stakes = max((m.stakes for m in moods), default=1) + o_stakes // 2
    days = [m.days_left for m in moods if m.days_left is not None]
    days_left = min(days) if days else None
    misfortune = (any(m.valence == "negative" and m.stakes >= MISFORTUNE_STAKES for m in moods)
                  or (bool(text) and o_valence == "negative"))
    # a real setback (a broken phone, a flight that may not go) presses too: "no rush" would not be said beside it
    setback = any(m.valence == "negative" and m.stakes >= PRESSING_STAKES for m in moods)
    events: list[str] = []
    for m in moods:
        said = say(m.event, FIRST)
        if said not in events:
            events.append(said)
    return {"events": events, "occasion": say(text, FIRST) if text else None,
            "valence": valence, "stakes": min(stakes, 3), "days_left": days_left,
            "pressing": misfortune or setback or (days_left is not None and days_left <= PRESSING_DAYS),
            "misfortune": misfortune, "upcoming": "positive" in valences,
            # a user told to accept a refusal does not announce that it will dispute every point
            "accepts_refusal": any(d.refused and d.on_refusal != "transfer" for d in cand.drafts),
            "requests": [say(d.request[0], FIRST) for d in cand.drafts]}


#: when a cue fits the situation (`feeling_cues.json`, field `when`)
WHEN: dict[str, Callable[[dict[str, Any]], bool]] = {
    "any": lambda f: True,
    "trouble": lambda f: f["valence"] == "negative",
    "calm": lambda f: not f["pressing"],
    "upbeat": lambda f: not f["misfortune"],
    "positive": lambda f: f["upcoming"] and not f["misfortune"],
    "deadline": lambda f: f["days_left"] is not None and f["days_left"] <= DEADLINE_DAYS,
    "later": lambda f: f["days_left"] is None or f["days_left"] > PRESSING_DAYS - 1,
    "pressing": lambda f: f["pressing"],
    "insists": lambda f: not f.get("accepts_refusal"),
}


def _cue(entry: str | dict[str, Any]) -> dict[str, Any]:
    return {"text": entry} if isinstance(entry, str) else entry


def cue_fits(cue: dict[str, Any], condition: dict[str, str], facts: dict[str, Any]) -> bool:
    """Whether a cue can be said in this situation by a user of this condition: its `when` holds, the situation's
    stakes reach its `min_stakes`, and no label of `not_with` is the condition's."""
    clash = any(condition.get(label) == value for label, value in (x.split(":", 1) for x in cue.get("not_with", ())))
    return not clash and facts["stakes"] >= cue.get("min_stakes", 0) and WHEN[cue.get("when", "any")](facts)


def cue_options(condition: dict[str, str], facts: dict[str, Any]) -> dict[str, list[str]]:
    """Per slot (the emotion, then urgency, politeness and trust), the cue sentences that fit."""
    bank = cue_bank()
    rows = {"emotion": bank["emotion"][condition["emotion"]], **{d: bank[d][condition[d]] for d in SLOTS[1:]}}
    return {slot: [c["text"] for c in map(_cue, cues) if cue_fits(c, condition, facts)] for slot, cues in rows.items()}


def feelings_misfit(condition: dict[str, str], facts: dict[str, Any]) -> str | None:
    """Why no coherent feelings text of `condition` fits this situation (None when one does): a slot without a
    cue that fits (excitement beside a misfortune, desperation over a trivial request without a way to say it)."""
    empty = [slot for slot, cues in cue_options(condition, facts).items() if not cues]
    if not empty:
        return None
    return f"no {' or '.join(empty)} cue of {condition['emotion']}/{condition['urgency']} fits the situation " \
           f"({'; '.join(facts['events'][:2]) or 'no event'})"


class TemplateFeelings:
    """Feelings text for an assigned condition: the situation, then one cue sentence per label (`feeling.j2`)."""

    name = "template"

    def describe(self, cand: Candidate, rng: random.Random, condition: dict[str, str]) -> str:
        facts = situation(cand)
        options = cue_options(condition, facts)
        if not all(options.values()):  # the build asks `feelings_misfit` first; a direct caller gets the reason
            raise EmotionUnavailable(feelings_misfit(condition, facts) or "no cue fits")
        dims = [rng.choice(options[d]) for d in SLOTS[1:]]
        rng.shuffle(dims)
        return render("feeling.j2", events=facts["events"], occasion=facts["occasion"],
                      cue=rng.choice(options["emotion"]), dimension_cues=dims)


class LLMFeelings:
    """Feelings text written by a model from the same situation."""

    name = "llm"

    def __init__(self, client: Any, space: ConditionSpace):
        """`client`: a model client from the catalog (`pm.model_client(settings)`); `space`: the emotion plugin's
        condition space (its lexicon gives the emotion's words)."""
        self.client = client
        self.space = space

    def describe(self, cand: Candidate, rng: random.Random, condition: dict[str, str]) -> str:
        facts = situation(cand)
        lines = [*facts["events"], *([facts["occasion"]] if facts["occasion"] else []),
                 *(f"they want to {r}" for r in facts["requests"])]
        if facts["days_left"] is not None:
            lines.append(f"it matters in {facts['days_left']} day(s)")
        prompt = render("feelings_prompt.j2", situation=lines, condition=condition,
                        emotion_words=self.space.lexicon(condition["emotion"])[:6])
        return asyncio.run(self._ask(prompt))

    async def _ask(self, prompt: str) -> str:
        message = await self.client.complete([{"role": "user", "content": prompt}])
        text = (message.content or "").strip()
        if not text:
            raise EmotionUnavailable(f"the feelings model {self.client.settings.model} returned no text")
        return text


def condition_space(pm: Any) -> ConditionSpace:
    """The emotion plugin's condition space (the vocabulary of the `emotion` block) from `pm`'s catalog."""
    from tau_emotion.core.conditions import condition_space as registered
    from tau_emotion.core.registry import RegistryError

    try:
        space = registered(pm, BLOCK)
    except RegistryError as exc:
        raise EmotionUnavailable(f"the Tracer designs emotion conditions from the condition space of the "
                                 f"'{BLOCK}' block, which the emotion plugin registers: {exc}") from None
    assert space is not None
    return space


class EmotionLabeler:
    """The emotion plugin's classifier (feelings text -> its reading) and anchor bank (condition -> anchor),
    reached through the core's condition-space contract."""

    def __init__(self, classify: Callable[[str], dict[str, str]], anchor_for: Callable[[dict[str, str], random.Random], str]):
        self.classify = classify
        self.anchor_for = anchor_for

    @classmethod
    def from_space(cls, space: ConditionSpace) -> EmotionLabeler:
        try:
            classify = space.classifier()
        except Exception as exc:  # the classifier is optional here: say why and how to build without it
            raise EmotionUnavailable(f"the emotion pack cannot classify feelings ({type(exc).__name__}: {exc}); "
                                     f"build with --no-emotion") from None
        return cls(classify, space.anchor)

    def read(self, text: str) -> dict[str, str]:
        """The classifier's reading of a feelings text: the five condition fields."""
        return dict(self.classify(text))

    def block(self, condition: dict[str, str], rng: random.Random) -> dict[str, Any]:
        """The task's `emotion` block (the emotion plugin's `EmotionBlock` fields) for an assigned condition."""
        return {**condition, "anchor": self.anchor_for(condition, rng)}


#: the labels a feelings text must be read back as: family and emotion, and (issue 21) the three dimensions
AGREEMENT_LABELS = ("family", "emotion", "politeness", "urgency", "trust")


def agrees(condition: dict[str, str], reading: dict[str, str]) -> bool:
    """Label agreement: the classifier reads the feelings as the assigned condition on all five labels."""
    return all(reading.get(k) == condition.get(k) for k in AGREEMENT_LABELS)
