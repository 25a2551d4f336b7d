"""Emotion: how the user of a task likely feels, and the emotion condition that follows.

A feelings generator writes a short first-person text from the situation: what happened (the
intents' moods), how much is at stake (the occasion), and how soon. `TemplateFeelings` draws an
emotion the situation makes likely (a cancelled flight to a funeral is rarely met with calm, adding
a bag rarely with dread) and phrases it with `feeling.j2`; `LLMFeelings` asks a model instead. The
emotion pack's feelings classifier then maps the text to a condition, and an anchor instruction
for that condition is attached, so the condition always comes from the classifier, never from the
generator's own pick.
"""

from __future__ import annotations

import asyncio
import random
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from tau_emotion.core.errors import TauError
from tau_emotion.tracer.refine import FIRST, render, say

if TYPE_CHECKING:
    from tau_emotion.tracer.grounding import Candidate


class EmotionUnavailable(TauError):
    """The emotion pack (classifier or anchor bank) cannot be used."""


# Emotions a situation makes likely: (valence, high stakes?) -> {family.emotion: weight}.
LIKELY: dict[tuple[str, bool], dict[str, float]] = {
    ("negative", True): {"fear.anxiety": 3, "fear.dread": 2, "fear.desperation": 1, "anger.frustration": 3,
                         "anger.exasperation": 1, "anger.bitterness": 1, "anger.argumentativeness": 1,
                         "sadness.disappointment": 2, "sadness.helplessness": 1, "sadness.sorrow": 1,
                         "sadness.hopelessness": 0.5, "disgust.repugnance": 0.5},
    ("negative", False): {"anger.annoyance": 3, "sadness.disappointment": 2, "disgust.dislike": 1.5,
                          "disgust.distaste": 1.5, "anger.argumentativeness": 1, "fear.nervousness": 1,
                          "sadness.discouragement": 1, "disgust.aversion": 0.5, "anger.frustration": 1},
    ("neutral", True): {"fear.nervousness": 2, "fear.anxiety": 1, "anger.annoyance": 1, "enjoyment.peace": 1,
                        "sadness.disappointment": 1},
    ("neutral", False): {"enjoyment.peace": 3, "anger.annoyance": 2, "fear.nervousness": 2, "enjoyment.relief": 1,
                         "disgust.dislike": 0.5},
    ("positive", True): {"enjoyment.excitement": 3, "fear.nervousness": 1, "enjoyment.pride": 1, "enjoyment.relief": 1},
    ("positive", False): {"enjoyment.excitement": 2, "enjoyment.peace": 2, "enjoyment.pride": 1, "enjoyment.relief": 1},
}
POLITENESS = {"warm": 0.4, "neutral": 0.35, "cold": 0.25}
TRUST = {"trusting": 0.35, "cautious": 0.4, "skeptical": 0.25}
_VALENCE_ORDER = {"positive": 0, "neutral": 1, "negative": 2}


def _weighted(rng: random.Random, weights: dict[str, float]) -> str:
    keys = list(weights)
    return rng.choices(keys, weights=[weights[k] for k in keys])[0]


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


def urgency_of(days_left: int | None, rng: random.Random) -> str:
    if days_left is None:
        return rng.choice(["low", "moderate"])
    if days_left <= 1:
        return "high"
    if days_left <= 5:
        return rng.choice(["moderate", "moderate", "high"])
    return rng.choice(["low", "low", "moderate"])


class TemplateFeelings:
    """Feelings text from the situation with a seeded pick of a likely emotion (`feeling.j2`)."""

    name = "template"

    def describe(self, cand: Candidate, rng: random.Random) -> str:
        facts = situation(cand)
        likely = LIKELY[(facts["valence"], facts["stakes"] >= 2)]
        family, emotion = _weighted(rng, likely).split(".")
        return render("feeling.j2", events=facts["events"], occasion=facts["occasion"], family=family,
                      emotion=emotion, urgency=urgency_of(facts["days_left"], rng),
                      politeness=_weighted(rng, POLITENESS), trust=_weighted(rng, TRUST),
                      variant=rng.randrange(720))


class LLMFeelings:
    """Feelings text written by a model from the same situation."""

    name = "llm"

    def __init__(self, client: Any):
        """`client`: a model client from the catalog (`pm.model_client(settings)`)."""
        self.client = client

    def describe(self, cand: Candidate, rng: random.Random) -> str:
        facts = situation(cand)
        lines = [*facts["events"], *([facts["occasion"]] if facts["occasion"] else []),
                 *(f"they want to {r}" for r in facts["requests"])]
        if facts["days_left"] is not None:
            lines.append(f"it matters in {facts['days_left']} day(s)")
        prompt = render("feelings_prompt.j2", situation=lines)
        return asyncio.run(self._ask(prompt))

    async def _ask(self, prompt: str) -> str:
        message = await self.client.complete([{"role": "user", "content": prompt}])
        text = (message.content or "").strip()
        if not text:
            raise EmotionUnavailable(f"the feelings model {self.client.settings.model} returned no text")
        return text


class EmotionLabeler:
    """Feelings text -> {family, emotion, politeness, urgency, trust, anchor} with the emotion pack."""

    def __init__(self, classify: Callable[[str], Any], anchor_for: Callable[[Any, random.Random], str]):
        self.classify = classify
        self.anchor_for = anchor_for

    @classmethod
    def from_emotion_pack(cls) -> EmotionLabeler:
        try:
            from tau_emotion.emotion_pack.anchors import anchor_for
            from tau_emotion.emotion_pack.classifier import FeelingsClassifier

            classifier = FeelingsClassifier.load()
        except Exception as exc:  # the pack is optional here: say why and how to build without it
            raise EmotionUnavailable(f"the emotion pack cannot classify feelings ({type(exc).__name__}: {exc}); "
                                     f"build with --no-emotion") from None
        return cls(classifier.classify, anchor_for)

    def label(self, text: str, rng: random.Random) -> dict[str, Any]:
        """The task's `emotion` block (the emotion plugin's `EmotionBlock` fields)."""
        condition = self.classify(text).condition
        return {**condition.to_dict(), "anchor": self.anchor_for(condition, rng)}
