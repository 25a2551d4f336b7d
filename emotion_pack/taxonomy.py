"""The emotion taxonomy: 5 families, 22 emotions and three expression dimensions, read from data.

Everything here derives from `data/taxonomy.json`, so adding a synonym or a description is a data
edit. A condition is one emotion crossed with one value of each dimension (politeness, urgency,
trust); its id `family.emotion/politeness/urgency/trust` is stable and is what tasks, anchors,
reports and the CLI use. Unknown ids fail with a `ConditionError` that lists the valid values and
suggests the nearest one. `SPACE` is this vocabulary as the core's condition-space contract
(`tau_emotion.core.conditions`), which the plugin registers so the Tracer and the τ-Emotion-Bench
adapter reach it without importing this pack.
"""

from __future__ import annotations

import difflib
import json
import random
from collections.abc import Callable, Mapping
from functools import cache
from importlib.resources import files
from typing import Any

from pydantic import BaseModel, ConfigDict, model_validator

from tau_emotion.core.errors import TauError

DIMENSION_NAMES = ("politeness", "urgency", "trust")


class ConditionError(TauError, ValueError):
    """An unknown condition id, emotion, family or dimension value; the message is meant for people."""


@cache
def taxonomy_data() -> dict[str, Any]:
    """The parsed `data/taxonomy.json` (cached; treat as read-only)."""
    return json.loads(files(__package__).joinpath("data", "taxonomy.json").read_text(encoding="utf-8"))


def _build() -> tuple[dict[str, tuple[str, ...]], dict[str, str], dict[str, tuple[str, ...]]]:
    data = taxonomy_data()
    families = {name: tuple(fam["emotions"]) for name, fam in data["families"].items()}
    emotions = {emotion: family for family, names in families.items() for emotion in names}
    dimensions = {name: tuple(data["dimensions"][name]["values"]) for name in DIMENSION_NAMES}
    return families, emotions, dimensions


#: family -> its emotions, in taxonomy order
FAMILIES: dict[str, tuple[str, ...]]
#: emotion -> family
EMOTIONS: dict[str, str]
#: dimension -> its values, in taxonomy order (politeness, urgency, trust)
DIMENSIONS: dict[str, tuple[str, ...]]
FAMILIES, EMOTIONS, DIMENSIONS = _build()


_CONDITION_FIELDS = ("family", "emotion", *DIMENSION_NAMES)


def _check_condition(values: dict[str, Any]) -> None:
    _check_value("family", values.get("family"), list(FAMILIES))
    _check_value(f"emotion for family '{values['family']}'", values.get("emotion"), list(FAMILIES[values["family"]]))
    for dim in DIMENSION_NAMES:
        _check_value(dim, values.get(dim), list(DIMENSIONS[dim]))


class Condition(BaseModel):
    """One emotion condition, e.g. `fear.anxiety/warm/high/cautious`: the one condition model of the pack.

    Positional construction follows the id's order (`Condition("fear", "anxiety", "warm", "high",
    "cautious")`); an invalid value raises `ConditionError` naming the valid ones.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    family: str
    emotion: str
    politeness: str
    urgency: str
    trust: str

    def __init__(self, *args: str, **kwargs: Any) -> None:
        kwargs.update(zip(_CONDITION_FIELDS, args, strict=False))
        if all(isinstance(kwargs.get(f), str) for f in _CONDITION_FIELDS):
            _check_condition(kwargs)
        super().__init__(**kwargs)

    @model_validator(mode="after")
    def _valid(self) -> Condition:
        _check_condition(self.model_dump())
        return self

    @property
    def id(self) -> str:
        return f"{self.family}.{self.emotion}/{self.politeness}/{self.urgency}/{self.trust}"

    @property
    def condition(self) -> Condition:
        """The bare condition (without what a subclass adds, such as a block's anchor)."""
        return self if type(self) is Condition else Condition(**self.to_dict())

    def to_dict(self) -> dict[str, str]:
        """The five condition fields."""
        return {f: getattr(self, f) for f in _CONDITION_FIELDS}

    def __lt__(self, other: Condition) -> bool:
        return tuple(self.to_dict().values()) < tuple(other.to_dict().values())

    def __str__(self) -> str:
        return self.id


class EmotionBlock(Condition):
    """A task's `emotion` block: its condition plus the anchor instruction the user is given."""

    anchor: str | None = None


def _suggest(value: str, choices: list[str]) -> str:
    close = difflib.get_close_matches(value, choices, n=1, cutoff=0.5)
    return f"; did you mean '{close[0]}'?" if close else ""


def _check_value(what: str, value: str, choices: list[str]) -> None:
    if value not in choices:
        raise ConditionError(
            f"unknown {what} '{value}' (valid: {', '.join(choices)}){_suggest(value, choices)}"
        )


@cache
def _all_conditions() -> tuple[Condition, ...]:
    return tuple(
        Condition(family, emotion, politeness, urgency, trust)
        for family, emotions in FAMILIES.items()
        for emotion in emotions
        for politeness in DIMENSIONS["politeness"]
        for urgency in DIMENSIONS["urgency"]
        for trust in DIMENSIONS["trust"]
    )


def all_conditions() -> list[Condition]:
    """All 594 conditions in a stable order (taxonomy order: family, emotion, politeness, urgency, trust)."""
    return list(_all_conditions())


def condition_ids() -> list[str]:
    return [c.id for c in _all_conditions()]


def parse_condition(text: str) -> Condition:
    """A full condition id (`family.emotion/politeness/urgency/trust`) -> `Condition`.

    Case and surrounding spaces are ignored. A wrong family for a known emotion, an unknown
    emotion or an unknown dimension value raises `ConditionError` naming the valid values and the
    nearest one.
    """
    raw = text.strip().lower()
    parts = [p.strip() for p in raw.split("/")]
    if len(parts) != 4 or "." not in parts[0]:
        example = "fear.anxiety/warm/high/cautious"
        close = difflib.get_close_matches(raw, condition_ids(), n=1, cutoff=0.6)
        hint = f"; did you mean '{close[0]}'?" if close else ""
        raise ConditionError(
            f"malformed condition id '{text}': expected family.emotion/politeness/urgency/trust, e.g. '{example}'{hint}"
        )
    family, _, emotion = parts[0].partition(".")
    if emotion not in EMOTIONS:
        _check_value("emotion", emotion, list(EMOTIONS))
    if family != EMOTIONS[emotion]:
        raise ConditionError(
            f"emotion '{emotion}' belongs to family '{EMOTIONS[emotion]}', not '{family}'; "
            f"did you mean '{EMOTIONS[emotion]}.{emotion}/{'/'.join(parts[1:])}'?"
        )
    return Condition(family, emotion, *parts[1:])


def conditions_in_family(family: str) -> list[Condition]:
    _check_value("family", family, list(FAMILIES))
    return [c for c in _all_conditions() if c.family == family]


def resolve_condition_spec(spec: str, rng: random.Random) -> Condition | None:
    """Resolve the `--emotion` flag: `CONDITION_ID | random | family:NAME | emotion:NAME | none`.

    `none` gives None (no emotion); `random` any condition; `family:fear` a random condition of
    that family; `emotion:anxiety` a random condition of that emotion; anything else must be a
    full condition id. Random choices come from `rng`, so a seeded run is reproducible.
    """
    value = spec.strip().lower()
    if value in ("", "none"):
        return None
    if value == "random":
        return rng.choice(_all_conditions())
    if value.startswith("family:"):
        return rng.choice(conditions_in_family(value.partition(":")[2].strip()))
    if value.startswith("emotion:"):
        emotion = value.partition(":")[2].strip()
        _check_value("emotion", emotion, list(EMOTIONS))
        return rng.choice([c for c in _all_conditions() if c.emotion == emotion])
    prefix, colon, rest = value.partition(":")
    if colon and "/" not in value:
        # `famly:fear`: a misspelt prefix; name the prefix it most likely meant, with the rest kept
        close = difflib.get_close_matches(prefix.strip(), ["family", "emotion"], n=1, cutoff=0.5)
        hint = f"; did you mean '{close[0]}:{rest.strip()}'?" if close else ""
        raise ConditionError(
            f"unknown emotion spec '{spec}': '{prefix.strip()}:' is not a prefix (use 'family:NAME', families: "
            f"{', '.join(FAMILIES)}; or 'emotion:NAME'){hint}"
        )
    if "/" not in value and ":" not in value:
        # A bare word is most likely a family or emotion typed without its prefix.
        prefixed = {**{f: f"family:{f}" for f in FAMILIES}, **{e: f"emotion:{e}" for e in EMOTIONS}}
        close = difflib.get_close_matches(value, list(prefixed), n=1, cutoff=0.5)
        hint = f"; did you mean '{prefixed[close[0]]}'?" if close else ""
        raise ConditionError(
            f"unknown emotion spec '{spec}': use a condition id, 'random', 'none', 'family:NAME' "
            f"(families: {', '.join(FAMILIES)}) or 'emotion:NAME'{hint}"
        )
    return parse_condition(value)


def emotion_description(emotion: str) -> str:
    _check_value("emotion", emotion, list(EMOTIONS))
    return taxonomy_data()["families"][EMOTIONS[emotion]]["emotions"][emotion]["description"]


def family_description(family: str) -> str:
    _check_value("family", family, list(FAMILIES))
    return taxonomy_data()["families"][family]["description"]


def emotion_lexicon(emotion: str) -> list[str]:
    """Words and phrases people use for `emotion` (synonyms included)."""
    _check_value("emotion", emotion, list(EMOTIONS))
    return list(taxonomy_data()["families"][EMOTIONS[emotion]]["emotions"][emotion]["lexicon"])


def family_lexicon(family: str) -> list[str]:
    """Family-level words ('angry', 'scared') that say the family but not which emotion."""
    _check_value("family", family, list(FAMILIES))
    return list(taxonomy_data()["families"][family].get("lexicon", []))


def dimension_lexicon(dimension: str, value: str) -> list[str]:
    _check_value("dimension", dimension, list(DIMENSIONS))
    _check_value(dimension, value, list(DIMENSIONS[dimension]))
    return list(taxonomy_data()["dimensions"][dimension]["values"][value]["lexicon"])


def dimension_description(dimension: str, value: str) -> str:
    _check_value("dimension", dimension, list(DIMENSIONS))
    _check_value(dimension, value, list(DIMENSIONS[dimension]))
    return taxonomy_data()["dimensions"][dimension]["values"][value]["description"]


def dimension_default(dimension: str) -> str:
    """The value assumed when text carries no cue for `dimension` (the middle one)."""
    _check_value("dimension", dimension, list(DIMENSIONS))
    return taxonomy_data()["dimensions"][dimension]["default"]


class EmotionSpace:
    """The taxonomy as a `tau_emotion.core.conditions.ConditionSpace`: families are its groups, emotions its
    labels, politeness, urgency and trust its dimensions; anchors and the feelings classifier load on use."""

    fields = _CONDITION_FIELDS
    groups: Mapping[str, tuple[str, ...]] = FAMILIES
    labels: Mapping[str, str] = EMOTIONS
    dimensions: Mapping[str, tuple[str, ...]] = DIMENSIONS

    def condition(self, **values: str) -> dict[str, str]:
        return Condition(**values).to_dict()

    def default(self, dimension: str) -> str:
        return dimension_default(dimension)

    def lexicon(self, label: str) -> list[str]:
        return emotion_lexicon(label)

    def anchor(self, condition: Mapping[str, str], rng: random.Random) -> str:
        from tau_emotion.emotion_pack.anchors import anchor_for

        return anchor_for(Condition(**condition), rng)

    def classifier(self) -> Callable[[str], dict[str, str]]:
        from tau_emotion.emotion_pack.classifier import FeelingsClassifier

        model = FeelingsClassifier.load()
        return lambda text: model.classify(text).condition.to_dict()


#: what the emotion plugin registers as the condition space of its `emotion` block
SPACE = EmotionSpace()
