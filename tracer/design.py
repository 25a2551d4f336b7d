"""Emotion as a designed variable: a seeded, stratified assignment of conditions to a split's tasks.

The conditions are drawn before any task is known, so they cannot depend on the tasks' structure
(their intents, their events, their length); the build only decides which task takes which of them. Within a split every emotion appears
`n // 22` or one more times, every politeness, urgency and trust value `n // 3` or one more times,
and no condition appears twice while the split is no larger than the 594 conditions. The feelings
text is then written *for* the assigned condition and must be read back to the same family and
emotion by the emotion pack's classifier (`build.py` retries and finally rejects the candidate).

Occasions carry a valence (a pack may declare `(text, stakes, valence)`): a funeral is never paired
with an enjoyment emotion, and sorrow only with an occasion that gives reason for it, so the
feelings fit the occasion. The intents' own events carry one too (`Mood.valence`, `Mood.stakes`): an
enjoyment condition takes no task with a misfortune, a negative event of stakes 3 (`events_fit`).

Policy challenges are stratified by family (`challenge_fits`): whether a task is a challenge is the
grounder's draw, independent of the condition, so a small split could give one family none of them and
its scores would measure task difficulty, not emotion. A candidate that does not fit its condition (its
events, an occasion the emotion needs, or its family's challenge count) takes the first later condition
of the design it fits, swapped into place; only when none fits is it rejected (`feelings`, `balance`).
The design keeps every condition once, so the balance above holds whatever the order.
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


#: how far (in tasks) a family's policy challenges may stray from the split's running share times the
#: family's size when the build accepts a task (`build.py`, rejection `balance`)
CHALLENGE_SLACK = 1.0


def challenge_fits(counts: dict[str, list[int]], family: str, challenge: bool,
                   slack: float = CHALLENGE_SLACK) -> bool:
    """Whether accepting a task of `family` (a policy challenge or not) keeps the family's challenges
    within `slack` tasks of the split's running challenge share times the family's size.

    `counts` maps each family to [tasks, challenge tasks] accepted so far. The grounder decides whether a
    task is a challenge independently of its emotion condition, so without this a small split can give one
    family none (retail test: 0 of 9 enjoyment tasks against 43% for the others) and the family's scores
    would measure task difficulty, not emotion. A task is either a challenge or not, so one of the two
    always fits: a condition waits for a candidate of the kind its family needs. A family the running share
    has left further away than `slack` (the share moves as other families take tasks) takes any task that
    brings it closer: one more task without a challenge may not be enough on its own to bring it back.
    """
    total = sum(n for n, _ in counts.values())
    challenges = sum(c for _, c in counts.values())
    n, c = counts.get(family, [0, 0])
    after = abs(c + int(challenge) - (challenges + int(challenge)) / (total + 1) * (n + 1))
    before = abs(c - challenges / total * n) if total else 0.0
    return after <= slack or after < before
