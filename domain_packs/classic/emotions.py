"""τ-Emotion-Bench's task conditions as our `emotion` block.

Their task records carry `emotion_family`, `emotion_leaf` and `dimension_politeness`,
`dimension_urgency`, `dimension_trust_in_agent`, in our own vocabulary: every value in the release's
test, train and dev splits is one of our 5 families, 22 emotions and 3x3 dimension values (checked
against the release by `tests/domain_packs/test_tauemo.py`), so there is no synonym table; a value
outside it is noted, never guessed. The leaf decides the emotion, and the family is ours for that
emotion: their family/leaf pairs are not always consistent (leaf `peace` under family `sadness`), so
a family of theirs that differs is recorded (`meta.emotion_source`) and noted in `meta.notes`, which
`tau tasks --check` reports, not silently fixed. An unknown dimension value takes our default, noted.

The vocabulary is the emotion plugin's, reached through the core's condition-space contract: the
plugin registers it as the space of its `emotion` block, and the domain gets it from the plugin manager
that registers the domain. Without that plugin there is no space, so no block (and no notes about
the condition); the emotion paragraph still leaves the instruction, so a run without the plugin has no emotion.

Their instruction ends with the emotion in their words, a paragraph `Emotion Instruction: ...`
(every emotional task of their test and train splits; their no-emotion twins lack it). That paragraph
is the block's anchor and leaves the instruction, so the emotion plugin's user prompt states it once
and the instruction is the twin's; a task without it gets an anchor from our bank, seeded by its id.
"""

from __future__ import annotations

import random
import re
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from tau_emotion.core.conditions import ConditionSpace

BLOCK = "emotion"  # the emotion plugin's task block
# our dimension -> the field of their task record that holds it
DIMENSION_FIELDS: dict[str, str] = {"politeness": "dimension_politeness", "urgency": "dimension_urgency",
                                    "trust": "dimension_trust_in_agent"}
_EMOTION_INSTRUCTION = re.compile(r"\s*\bEmotion Instruction:\s*")


def has_condition(get: Callable[[str], Any]) -> bool:
    """Whether a task record (read through `get(field)`) carries their emotion fields."""
    return bool(get("emotion_leaf"))


def split_instruction(instruction: str) -> tuple[str, str | None]:
    """(the instruction without its `Emotion Instruction:` paragraph, that paragraph's text or None)."""
    parts = _EMOTION_INSTRUCTION.split(instruction, maxsplit=1)
    if len(parts) == 1 or not parts[1].strip():
        return instruction, None
    return parts[0].rstrip(), parts[1].strip()


def _norm(value: Any) -> str:
    return str(value or "").strip().lower().replace(" ", "_").replace("-", "_")


def emotion_block(space: ConditionSpace, get: Callable[[str], Any], task_id: str,
                  anchor: str | None = None) -> tuple[dict[str, Any] | None, dict[str, Any], list[str]]:
    """(our `emotion` block as a dict or None, `meta.emotion_source`, notes) for one of their task records.

    `space` is the emotion plugin's condition space (families are its groups, emotions its labels).
    `anchor` is the task's own emotion text (its `Emotion Instruction:`), else one comes from our bank.
    """
    FAMILIES, EMOTIONS, DIMENSIONS = space.groups, space.labels, space.dimensions

    their_family, emotion = _norm(get("emotion_family")), _norm(get("emotion_leaf"))
    source: dict[str, Any] = {"family": get("emotion_family"), "leaf": get("emotion_leaf")}
    if emotion not in EMOTIONS:
        source["unmapped_leaf"] = True
        return None, source, [f"{task_id}: emotion leaf '{get('emotion_leaf')}' is none of ours; no emotion block"]
    notes: list[str] = []
    family = EMOTIONS[emotion]
    if their_family != family:
        source["family_mismatch"] = True
        notes.append(f"{task_id}: family/leaf mismatch: their family '{get('emotion_family')}' with leaf "
                     f"'{get('emotion_leaf')}'; ours is '{family}.{emotion}'"
                     + ("" if their_family in FAMILIES else " (unknown family)"))
    dims: dict[str, str] = {}
    for dim, field in DIMENSION_FIELDS.items():
        value = _norm(get(field))
        if value in DIMENSIONS[dim]:
            dims[dim] = value
        else:
            dims[dim] = space.default(dim)
            notes.append(f"{task_id}: {field} '{get(field)}' is none of ours; taken as '{dims[dim]}'")
    condition = space.condition(family=family, emotion=emotion, **dims)
    source["anchor"] = "instruction" if anchor else "bank"
    anchor = anchor or space.anchor(condition, random.Random(f"anchor/{task_id}"))
    return {**condition, "anchor": anchor}, source, notes
