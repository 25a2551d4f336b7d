"""Emotion as a designed variable: a seeded, stratified assignment of conditions to a split's tasks.

The condition of task k is drawn before any task is known, so it cannot depend on the task's
structure (its intents, its events, its length). Within a split every emotion appears
`n // 22` or one more times, every politeness, urgency and trust value `n // 3` or one more times,
and no condition appears twice while the split is no larger than the 594 conditions. The feelings
text is then written *for* the assigned condition and must be read back to the same family and
emotion by the emotion pack's classifier (`build.py` retries and finally rejects the candidate).

Occasions carry a valence (a pack may declare `(text, stakes, valence)`): a funeral is never paired
with an enjoyment emotion, and sorrow only with an occasion that gives reason for it, so the
feelings fit the occasion. The intents' own events carry one too (`Mood.valence`, `Mood.stakes`): an
enjoyment condition takes no task with a misfortune, a negative event of stakes 3 (`events_fit`); the
build rejects the candidate and offers the condition to the next one.
"""

from __future__ import annotations

import random
from collections import Counter
from typing import Any

FAMILY_VALENCE = {"enjoyment": "positive", "anger": "negative", "disgust": "negative", "fear": "negative",
                  "sadness": "negative"}
#: emotions that need an occasion of this valence to make sense (a heartbreak needs a reason)
EMOTION_NEEDS = {"sorrow": "negative"}


def _taxonomy() -> tuple[dict[str, str], dict[str, tuple[str, ...]]]:
    from tau_emotion.emotion_pack.taxonomy import DIMENSIONS, EMOTIONS

    return EMOTIONS, DIMENSIONS


def _balanced(values: list[str], n: int, rng: random.Random) -> list[str]:
    """`n` draws where each value appears n // len or one more times, in a seeded order."""
    out = values * (n // len(values)) + rng.sample(values, n % len(values))
    rng.shuffle(out)
    return out


def design_conditions(n: int, key: str) -> list[dict[str, str]]:
    """The conditions of a split's `n` tasks, in task order (seeded by `key`)."""
    emotions, dimensions = _taxonomy()
    rng = random.Random(f"design/{key}")
    picks = _balanced(list(emotions), n, rng)
    dims = {d: _balanced(list(values), n, rng) for d, values in dimensions.items()}
    rows = [{"family": emotions[e], "emotion": e, **{d: dims[d][i] for d in dims}} for i, e in enumerate(picks)]
    _spread_duplicates(rows, rng, limit=-(-n // (len(emotions) * 27)))
    return rows


def condition_id(row: dict[str, Any]) -> str:
    return f"{row['family']}.{row['emotion']}/{row['politeness']}/{row['urgency']}/{row['trust']}"


def _spread_duplicates(rows: list[dict[str, str]], rng: random.Random, limit: int) -> None:
    """Swap dimension values between tasks (keeping every count) until no condition exceeds `limit`."""
    for _ in range(200 * len(rows)):
        counts = Counter(condition_id(r) for r in rows)
        over = [i for i, r in enumerate(rows) if counts[condition_id(r)] > limit]
        if not over:
            return
        i, j = rng.choice(over), rng.randrange(len(rows))
        dim = rng.choice(("politeness", "urgency", "trust"))
        rows[i][dim], rows[j][dim] = rows[j][dim], rows[i][dim]
        after = Counter(condition_id(r) for r in rows)
        if max(after.values()) > max(counts.values()) or sum(v > limit for v in after.values()) > \
                sum(v > limit for v in counts.values()):
            rows[i][dim], rows[j][dim] = rows[j][dim], rows[i][dim]


def occasion_fits(occasion_valence: str, condition: dict[str, str]) -> bool:
    """Whether feelings of `condition` fit an occasion of this valence (no excitement at a funeral)."""
    need = EMOTION_NEEDS.get(condition["emotion"])
    if need is not None:
        return occasion_valence == need
    return not (FAMILY_VALENCE[condition["family"]] == "positive" and occasion_valence == "negative")


#: a negative event this serious is a misfortune (a stolen phone, a hospital stay, an airline-cancelled
#: flight), as every negative occasion is; milder negative moods are worries about the request itself
#: ("it may already be on its way"), which most policy challenges carry
MISFORTUNE_STAKES = 3


def events_fit(moods: list[tuple[str, int]], condition: dict[str, str]) -> bool:
    """Whether feelings of `condition` fit the task's own events, given as (valence, stakes) per intent.

    The instruction states every intent's reason, so relief or excitement beside a stolen phone or a
    hospital stay would make one user text say two things: a positive-family condition takes no task
    with a misfortune. Milder negative moods stay allowed: ruling them out too left enjoyment
    conditions with a third of the policy challenges of the other families (airline train: 6% against
    20%), confounding emotion with difficulty. Negative feelings fit any event.
    """
    return not (FAMILY_VALENCE[condition["family"]] == "positive"
                and any(valence == "negative" and stakes >= MISFORTUNE_STAKES for valence, stakes in moods))


def needs_occasion(condition: dict[str, str]) -> bool:
    return condition["emotion"] in EMOTION_NEEDS


def normalise_occasions(raw: list[Any]) -> list[tuple[str, int, str]]:
    """A pack's OCCASIONS as (text, stakes, valence); a bare string has stakes 1 and neutral valence."""
    out = []
    for item in raw:
        item = item if isinstance(item, tuple) else (item,)
        text, stakes, valence = (*item, 1, "neutral")[:3] if len(item) == 1 else (*item, "neutral")[:3]
        out.append((text, int(stakes), valence))
    return out


def pick_occasion(occasions: list[tuple[str, int, str]], condition: dict[str, str] | None,
                  rng: random.Random, *, allowed: bool = True) -> tuple[str, int] | None:
    """An occasion that fits the condition (always one when the emotion needs it, else half the time).

    `allowed`: whether the task's intents may have an occasion at all (the pack's OCCASION_INTENTS).
    """
    if not occasions or not allowed:
        return None
    fitting = [o for o in occasions if condition is None or occasion_fits(o[2], condition)]
    must = condition is not None and needs_occasion(condition)
    if not fitting or (not must and rng.random() >= 0.5):
        return None
    text, stakes, _ = rng.choice(fitting)
    return text, stakes
