"""τ-Emotion-Bench's task conditions as our `emotion` block.

Their task records carry `emotion_family`, `emotion_leaf` and `dimension_politeness`,
`dimension_urgency`, `dimension_trust_in_agent`. The leaf decides the emotion: one of our 22 by
name, else through the small explicit synonym table LEAF_SYNONYMS (the mapping is recorded on the
task). The family is then ours for that emotion; when their family, read through FAMILY_SYNONYMS,
names another one, the task keeps our family and records theirs (`meta.emotion_source`) plus a line
in `meta.notes`, which `tau tasks --check` reports: their family/leaf pairs are not always
consistent (the same leaf sits under two families), and that is reported, not silently fixed.
Dimension values map one to one through DIMENSION_VALUES; an unknown value takes our default and is
noted. The anchor is the task's own (ANCHOR_FIELDS) or one from our bank, seeded by the task id.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from typing import Any

BLOCK = "emotion"  # the emotion plugin's task block

# their leaf -> our emotion, for leaves that are not one of our 22 names
LEAF_SYNONYMS: dict[str, str] = {
    "irritation": "annoyance", "impatience": "frustration", "anger": "exasperation", "rage": "exasperation",
    "fury": "exasperation", "hostility": "argumentativeness", "defensiveness": "argumentativeness",
    "resentment": "bitterness", "cynicism": "bitterness",
    "contempt": "distaste", "disdain": "distaste", "revulsion": "repugnance", "disgust": "repugnance",
    "worry": "anxiety", "stress": "anxiety", "apprehension": "nervousness", "unease": "nervousness",
    "fear": "dread", "panic": "desperation", "terror": "dread",
    "sadness": "sorrow", "grief": "sorrow", "despair": "hopelessness", "overwhelm": "helplessness",
    "overwhelmed": "helplessness", "confusion": "helplessness", "resignation": "discouragement",
    "joy": "excitement", "happiness": "excitement", "enthusiasm": "excitement", "eagerness": "excitement",
    "hope": "excitement", "gratitude": "peace", "contentment": "peace", "calm": "peace", "satisfaction": "peace",
    "confidence": "pride", "triumph": "pride",
}
# their family -> ours, where the names differ
FAMILY_SYNONYMS: dict[str, str] = {"joy": "enjoyment", "happiness": "enjoyment", "anxiety": "fear",
                                   "anger_frustration": "anger", "sad": "sadness", "happy": "enjoyment"}
# our dimension -> (their field, {their value: ours}); our own value names map to themselves
DIMENSION_VALUES: dict[str, tuple[str, dict[str, str]]] = {
    "politeness": ("dimension_politeness", {
        "warm": "warm", "polite": "warm", "courteous": "warm", "friendly": "warm", "high": "warm",
        "neutral": "neutral", "medium": "neutral", "moderate": "neutral",
        "cold": "cold", "rude": "cold", "impolite": "cold", "curt": "cold", "low": "cold"}),
    "urgency": ("dimension_urgency", {
        "low": "low", "none": "low", "moderate": "moderate", "medium": "moderate", "high": "high", "urgent": "high"}),
    "trust": ("dimension_trust_in_agent", {
        "trusting": "trusting", "high": "trusting", "cautious": "cautious", "medium": "cautious",
        "moderate": "cautious", "neutral": "cautious", "skeptical": "skeptical", "low": "skeptical",
        "distrustful": "skeptical"}),
}
# fields of their task record that carry the user's emotion instruction in their own words
ANCHOR_FIELDS = ("emotion_anchor", "emotion_instruction", "emotion_description")


def has_condition(get: Callable[[str], Any]) -> bool:
    """Whether a task record (read through `get(field)`) carries their emotion fields."""
    return bool(get("emotion_leaf"))


def _norm(value: Any) -> str:
    return str(value or "").strip().lower().replace(" ", "_").replace("-", "_")


def emotion_block(get: Callable[[str], Any], task_id: str) -> tuple[dict[str, Any] | None, dict[str, Any], list[str]]:
    """(our `emotion` block as a dict or None, `meta.emotion_source`, notes) for one of their task records."""
    from tau_emotion.emotion_pack.anchors import anchor_for
    from tau_emotion.emotion_pack.taxonomy import EMOTIONS, FAMILIES, Condition, dimension_default

    their_family, leaf = _norm(get("emotion_family")), _norm(get("emotion_leaf"))
    source: dict[str, Any] = {"family": get("emotion_family"), "leaf": get("emotion_leaf")}
    notes: list[str] = []
    emotion = leaf if leaf in EMOTIONS else LEAF_SYNONYMS.get(leaf)
    if emotion is None:
        source["unmapped_leaf"] = True
        return None, source, [f"{task_id}: emotion leaf '{get('emotion_leaf')}' maps to none of ours; no emotion block"]
    if emotion != leaf:
        source["leaf_synonym"] = emotion
    family = EMOTIONS[emotion]
    theirs = FAMILY_SYNONYMS.get(their_family, their_family)
    if theirs != family:
        source["family_mismatch"] = True
        known = theirs in FAMILIES
        notes.append(f"{task_id}: family/leaf mismatch: their family '{get('emotion_family')}' with leaf "
                     f"'{get('emotion_leaf')}'; ours is '{family}.{emotion}'" + ("" if known else " (unknown family)"))
    dims: dict[str, str] = {}
    for dim, (field, table) in DIMENSION_VALUES.items():
        value = _norm(get(field))
        if value in table:
            dims[dim] = table[value]
        else:
            dims[dim] = dimension_default(dim)
            notes.append(f"{task_id}: {field} '{get(field)}' is not a known value; taken as '{dims[dim]}'")
    condition = Condition(family, emotion, dims["politeness"], dims["urgency"], dims["trust"])
    own = next((str(get(f)) for f in ANCHOR_FIELDS if get(f)), None)
    source["anchor"] = "task" if own else "bank"
    anchor = own or anchor_for(condition, random.Random(f"anchor/{task_id}"))
    return {**condition.to_dict(), "anchor": anchor}, source, notes
