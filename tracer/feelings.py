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
import re
from collections.abc import Callable
from functools import cache
from importlib.resources import files
from typing import TYPE_CHECKING, Any

from tau_emotion.core.errors import TauError
from tau_emotion.tracer.refine import FIRST, capfirst, render, say

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
#: the parts of a feelings text: the emotion's line (with its cause), the urgency line, the politeness/trust line
SLOTS = ("emotion", "urgency", "voice")


def _clause(text: str) -> str:
    """A first-person sentence as a clause inside another ("My card was blocked" -> "my card was blocked")."""
    text = text.strip().rstrip(".")
    if text[:2] in ("I ", "I'") or not text:
        return text
    first = text.split(" ", 1)[0]
    # a name stays a name ("Kemal cannot take part"): only a sentence's ordinary first word is lowered
    if first.lower() not in _ORDINARY_OPENERS:
        return text
    return text[:1].lower() + text[1:]


#: first words that lose their capital inside another sentence; any other capitalised first word is taken for a
#: name (a child, a film, a team) and kept
_ORDINARY_OPENERS = frozenset(
    "my the a an our we it its this that there their his her your some one two money plans something someone "
    "nothing everything what when while since because after before".split())


def situation(cand: Candidate, occasion: tuple[str, int, str] | None = None) -> dict[str, Any]:
    """What the feelings rest on: events, occasion, valence, stakes, time pressure, refusals and the causes.

    `occasion` (text, stakes, valence) stands in for the candidate's own (`cand.occasion`) when the build asks
    whether an occasion would fit before it picks one. `pressing`: a date within PRESSING_DAYS, a misfortune or a sad
    occasion (no "no rush" beside them); `setback`: a negative event of PRESSING_STAKES (a broken phone), which lets a
    high urgency say "it's urgent" but does not forbid a patient customer; `misfortune`: a negative
    event of MISFORTUNE_STAKES or a negative occasion; `upcoming`: a positive event or occasion to look forward to;
    `causes`: each event and the occasion with its valence and stakes (what `appraisal` gives an emotion as its
    cause); `refused`: a request the policy refuses; `insisted`: the event of a refused request the user insists on;
    `history`: whether the situation states an earlier contact (no pack's situation does yet: always False).
    """
    moods = [d.mood for d in cand.drafts]
    if occasion is None and cand.occasion:
        occasion = (cand.occasion, cand.occasion_stakes, getattr(cand, "occasion_valence", "neutral"))
    text, o_stakes, o_valence = occasion if occasion is not None else (None, 0, "neutral")
    valences = [m.valence for m in moods] + ([o_valence] if text else [])
    valence = max(valences, key=lambda v: _VALENCE_ORDER.get(v, 1), default="neutral")
    stakes = max((m.stakes for m in moods), default=1) + o_stakes // 2
    days = [m.days_left for m in moods if m.days_left is not None and m.days_left >= 0]
    days_left = min(days) if days else None
    misfortune = (any(m.valence == "negative" and m.stakes >= MISFORTUNE_STAKES for m in moods)
                  or (bool(text) and o_valence == "negative"))
    # a real setback (a broken phone, a flight that may not go) presses too: "no rush" would not be said beside it
    setback = any(m.valence == "negative" and m.stakes >= PRESSING_STAKES for m in moods)
    events: list[str] = []
    causes: list[dict[str, Any]] = []
    for m in moods:
        said = say(m.event, FIRST)
        if said not in events:
            events.append(said)
            causes.append({"text": said, "valence": m.valence, "stakes": m.stakes, "source": "event"})
    if text:
        causes.append({"text": say(text, FIRST), "valence": o_valence, "stakes": o_stakes, "source": "occasion"})
    insisted = next((say(d.mood.event, FIRST) for d in cand.drafts if d.refused and d.on_refusal == "transfer"), None)
    refusals = list(dict.fromkeys(say(d.mood.event, FIRST) for d in cand.drafts if d.refused))
    return {"events": events, "occasion": say(text, FIRST) if text else None,
            "valence": valence, "stakes": min(stakes, 3), "days_left": days_left,
            "pressing": misfortune or (days_left is not None and days_left <= PRESSING_DAYS), "setback": setback,
            "dates": len(set(days)),
            "misfortune": misfortune, "upcoming": "positive" in valences,
            "refused": bool(refusals), "refusals": refusals, "insisted": insisted, "history": False,
            # a user told to accept a refusal does not announce that it will dispute every point
            "accepts_refusal": any(d.refused and d.on_refusal != "transfer" for d in cand.drafts),
            "causes": causes, "requests": [say(d.request[0], FIRST) for d in cand.drafts],
            "relax": int(getattr(cand, "relax", 0))}


#: the situation's fields the task's plan keeps (`core.models.Situation`), for the coherence audit to read
RECORDED = ("events", "occasion", "valence", "stakes", "days_left", "pressing", "setback", "misfortune", "upcoming",
            "refused", "accepts_refusal", "history")


def recorded_situation(cand: Candidate, condition: dict[str, str] | None = None) -> dict[str, Any]:
    """The situation as the task's plan records it (`RECORDED`), with the cause the appraisal gave `condition`."""
    from tau_emotion.tracer.appraisal import cause

    facts = situation(cand)
    found = cause(condition, facts) if condition is not None else None
    return {**{k: facts[k] for k in RECORDED}, "cause": found["text"] if found else None}


#: when a line fits the situation (`feeling_cues.json`, field `when`)
WHEN: dict[str, Callable[[dict[str, Any]], bool]] = {
    "any": lambda f: True,
    "calm": lambda f: not f["pressing"],
    "pressing": lambda f: f["pressing"] or f["setback"],
    "near": lambda f: f["days_left"] is not None and f["days_left"] <= DEADLINE_DAYS,
    "soon": lambda f: f["days_left"] is not None and 2 <= f["days_left"] <= DEADLINE_DAYS,
    "later": lambda f: f["days_left"] is None or f["days_left"] > DEADLINE_DAYS,
    "far": lambda f: f["days_left"] is not None and f["days_left"] > DEADLINE_DAYS,
    "insists": lambda f: not f.get("accepts_refusal"),
}
# "The date is in 5 days" only where one date is in play (with two it would not say which)
WHEN.update({f"{key}_one": (lambda f, test=WHEN[key]: test(f) and f.get("dates", 1) == 1) for key in ("near", "soon", "far")})


def when_words(days_left: int | None) -> str:
    """A date `days_left` days away, as the customer says it ('today', 'tomorrow', 'in 5 days')."""
    return {None: "", 0: "today", 1: "tomorrow"}.get(days_left, f"in {days_left} days")


def _cue(entry: str | dict[str, Any]) -> dict[str, Any]:
    return {"text": entry} if isinstance(entry, str) else entry


def cue_fits(cue: dict[str, Any], condition: dict[str, str], facts: dict[str, Any]) -> bool:
    """Whether a line can be said in this situation by a user of this condition: its `when` holds, no label of
    `not_with` is the condition's and, when it has `only_with`, one of those is."""
    clash = any(condition.get(label) == value for label, value in (x.split(":", 1) for x in cue.get("not_with", ())))
    only = cue.get("only_with")
    if only and not any(condition.get(label) == value for label, value in (x.split(":", 1) for x in only)):
        return False
    return not clash and WHEN[cue.get("when", "any")](facts)


#: an event said as the customer's opinion ("I think the fee was unfair")
HEDGE = "I think "


def cue_options(condition: dict[str, str], facts: dict[str, Any]) -> dict[str, list[str]]:
    """Per part (the emotion's line with its cause, the urgency line, the politeness/trust line), the lines that
    fit, rendered; no emotion line when the situation gives the emotion no cause (`appraisal.cause`)."""
    from tau_emotion.tracer.appraisal import cause

    bank = cue_bank()
    found = cause(condition, facts)
    lines = [] if found is None else bank["if_refused" if found["source"] == "refusal" else "emotion"][condition["emotion"]]
    said = "" if found is None else _clause(found["text"])
    # "It's tacky that I think I was charged unfairly": a line that frames the cause as a fact drops the hedge
    hedged = said[len(HEDGE):] if said.startswith(HEDGE) else said
    emotion = [] if found is None else [
        c["text"].replace("that {cause}", f"that {hedged}").replace("{cause}", said).replace("{Cause}", capfirst(said))
        for c in map(_cue, lines) if cue_fits(c, condition, facts)]
    when = when_words(facts["days_left"])
    urgency = [c["text"].replace("{when}", when) for c in map(_cue, bank["urgency"][condition["urgency"]])
               if cue_fits(c, condition, facts)]
    voice = [c["text"] for c in map(_cue, bank["voice"][f"{condition['politeness']}/{condition['trust']}"])
             if cue_fits(c, condition, facts)]
    return {"emotion": emotion, "urgency": urgency, "voice": voice}


def feelings_misfit(condition: dict[str, str], facts: dict[str, Any]) -> str | None:
    """Why no coherent feelings text of `condition` fits this situation (None when one does): the appraisal finds no
    cause for the emotion at its intensity, or an urgency the dates contradict (`appraisal.misfit`), or a part
    without a line that fits."""
    return FitMemo(facts).misfit(condition)


@cache
def _labels_matter() -> bool:
    """Whether a cue line of the bank is kept from some condition label (`not_with`, `only_with`)."""
    return any(("not_with" in line or "only_with" in line) for part in cue_bank().values() if isinstance(part, dict)
               for lines in part.values() for line in lines if isinstance(line, dict))


class FitMemo:
    """`feelings_misfit` for one situation, remembered part by part: the appraisal per emotion and urgency, the lines
    per emotion, per urgency and per politeness/trust (what each part reads of the condition, `cue_options`). A build
    asks it for most of the design's conditions per candidate (`build.take_condition`)."""

    def __init__(self, facts: dict[str, Any]):
        self.facts = facts
        self._appraisal: dict[tuple[str, str], str | None] = {}
        self._empty: dict[tuple[str, str], bool] = {}

    def misfit(self, condition: dict[str, str]) -> str | None:
        from tau_emotion.tracer.appraisal import misfit

        key = (condition["emotion"], condition["urgency"])
        if key not in self._appraisal:
            self._appraisal[key] = misfit(condition, self.facts)
        if self._appraisal[key] is not None:
            return self._appraisal[key]
        parts = (("emotion", condition["emotion"]), ("urgency", condition["urgency"]),
                 ("voice", f"{condition['politeness']}/{condition['trust']}"))
        if _labels_matter():  # a line that names a label it is not said with reads the whole condition
            parts = tuple((slot, "/".join(condition[k] for k in sorted(condition))) for slot, _ in parts)
        empty = [slot for slot, part in parts if self._no_line(slot, part, condition)]
        if not empty:
            return None
        return f"no {' or '.join(empty)} line of {condition['emotion']}/{condition['urgency']} fits the situation " \
               f"({'; '.join(self.facts['events'][:2]) or 'no event'})"

    def _no_line(self, slot: str, part: str, condition: dict[str, str]) -> bool:
        """Whether no line of `slot` fits (what `cue_options` would leave empty, without rendering the lines)."""
        if (slot, part) not in self._empty:
            facts, bank = self.facts, cue_bank()
            if slot == "emotion":
                from tau_emotion.tracer.appraisal import cause

                found = cause(condition, facts)
                lines = [] if found is None else \
                    bank["if_refused" if found["source"] == "refusal" else "emotion"][condition["emotion"]]
            else:
                lines = bank[slot][condition["urgency"] if slot == "urgency"
                                   else f"{condition['politeness']}/{condition['trust']}"]
            self._empty[(slot, part)] = not any(cue_fits(_cue(c), condition, facts) for c in lines)
        return self._empty[(slot, part)]


class TemplateFeelings:
    """Feelings text for an assigned condition: the situation's other events, the emotion's line stating its cause,
    then an urgency line and a politeness/trust line (`feeling.j2`)."""

    name = "template"

    def describe(self, cand: Candidate, rng: random.Random, condition: dict[str, str]) -> str:
        from tau_emotion.tracer.appraisal import cause

        facts = situation(cand)
        options = cue_options(condition, facts)
        if not all(options.values()):  # the build asks `feelings_misfit` first; a direct caller gets the reason
            raise EmotionUnavailable(feelings_misfit(condition, facts) or "no line fits")
        said = cause(condition, facts)
        assert said is not None
        others = [e for e in [*facts["events"], *([facts["occasion"]] if facts["occasion"] else [])]
                  if e != said["text"]]
        tail = [rng.choice(options["urgency"]), rng.choice(options["voice"])]
        rng.shuffle(tail)
        return render("feeling.j2", events=others, cue=rng.choice(options["emotion"]), dimension_cues=tail)


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


#: anchors drawn for a task before the build settles for the fitting sentences of the first
ANCHOR_DRAWS = 20
_SENTENCE = re.compile(r"(?<=[.!?])\s+")


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

    def block(self, condition: dict[str, str], rng: random.Random,
              fits: Callable[[str], bool] | None = None) -> dict[str, Any]:
        """The task's `emotion` block (the emotion plugin's `EmotionBlock` fields) for an assigned condition.

        `fits`: whether an anchor fits the task's situation (no deadline, history or loss the task does not have);
        the anchor is the first of ANCHOR_DRAWS draws that fits, else the fitting sentences of the draw whose first
        sentence (the emotion's) fits and that keeps the most (an anchor is a few sentences, each about one label)."""
        drawn = [self.anchor_for(condition, rng) for _ in range(ANCHOR_DRAWS if fits is not None else 1)]
        if fits is None:
            return {**condition, "anchor": drawn[0]}
        good = next((a for a in drawn if fits(a)), None)
        if good is None:  # the draw whose emotion sentence fits and that keeps the most fitting sentences
            def kept(anchor: str) -> list[str]:
                return [x for x in _SENTENCE.split(anchor) if fits(x)]
            best = max(drawn, key=lambda a: (fits(_SENTENCE.split(a)[0]), len(kept(a))))
            sentences = kept(best)
            while len(sentences) > 1 and not fits(" ".join(sentences)):
                sentences.pop()
            good = " ".join(sentences)
        return {**condition, "anchor": good}


#: the labels a feelings text must be read back as: family and emotion, and (issue 21) the three dimensions
AGREEMENT_LABELS = ("family", "emotion", "politeness", "urgency", "trust")


def agrees(condition: dict[str, str], reading: dict[str, str]) -> bool:
    """Label agreement: the classifier reads the feelings as the assigned condition on all five labels."""
    return all(reading.get(k) == condition.get(k) for k in AGREEMENT_LABELS)
