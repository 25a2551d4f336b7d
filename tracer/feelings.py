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


def situation(cand: Candidate) -> dict[str, Any]:
    """What the feelings rest on: events, occasion, valence, stakes and time pressure."""
    moods = [d.mood for d in cand.drafts]
    valence = max((m.valence for m in moods), key=lambda v: _VALENCE_ORDER.get(v, 1), default="neutral")
    stakes = max((m.stakes for m in moods), default=1) + (cand.occasion_stakes if cand.occasion else 0) // 2
    days = [m.days_left for m in moods if m.days_left is not None]
    events: list[str] = []
    for m in moods:
        text = say(m.event, FIRST)
        if text not in events:
            events.append(text)
    return {"events": events, "occasion": say(cand.occasion, FIRST),
            "valence": valence, "stakes": min(stakes, 3), "days_left": min(days) if days else None,
            "requests": [say(d.request[0], FIRST) for d in cand.drafts]}


class TemplateFeelings:
    """Feelings text for an assigned condition: the situation, then one cue sentence per label (`feeling.j2`)."""

    name = "template"

    def describe(self, cand: Candidate, rng: random.Random, condition: dict[str, str]) -> str:
        facts = situation(cand)
        bank = cue_bank()
        # An enjoyment emotion is about what lies ahead, not about a mishap: leave bad news out of it.
        events = [] if condition["family"] == "enjoyment" and facts["valence"] == "negative" else facts["events"]
        dims = [rng.choice(bank[d][condition[d]]) for d in ("urgency", "politeness", "trust")]
        rng.shuffle(dims)
        return render("feeling.j2", events=events, occasion=facts["occasion"],
                      cue=rng.choice(bank["emotion"][condition["emotion"]]), dimension_cues=dims)


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
