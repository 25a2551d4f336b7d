"""Emotion as a designed variable: a seeded, stratified assignment of conditions to a split's tasks.

The conditions are drawn before any task is known, so they cannot depend on the tasks' structure
(their intents, their events, their length); the build only decides which task takes which of them. Within a split every emotion appears
`n // 22` or one more times, every politeness, urgency and trust value `n // 3` or one more times,
and no condition appears twice while the split is no larger than the 594 conditions. The feelings
text is then written *for* the assigned condition and must be read back to the same family and
emotion by the emotion pack's classifier (`build.py` retries and finally rejects the candidate).

Occasions carry a valence (a pack may declare `(text, stakes, valence)`): a funeral is never paired
with an enjoyment emotion, and sorrow only with an occasion that gives reason for it, so the
feelings fit the occasion. The intents' own events carry one too (`Mood.valence`, `Mood.stakes`, `Mood.days_left`):
a condition takes a task only when every slot of its feelings text has a cue sentence that fits the situation
(`feelings.feelings_misfit`: no excitement beside a misfortune, no "no rush" beside a date three days away or a
father in hospital, no begging over a trivial request).

Policy challenges and intents per task (1, 2, 3+) are stratified by family (`share_fits`): both are the
grounder's draw, independent of the condition, so a small split could give one family none of the
challenges, or most of the single-intent tasks, and its scores would measure task difficulty, not
emotion. A candidate that does not fit its condition (its events, an occasion the emotion needs, or its
family's count of challenges or of tasks with its number of intents) takes the first later condition
of the design it fits, swapped into place; only when none fits is it rejected (`feelings`, `balance`).
The design keeps every condition once, so the balance above holds whatever the order.
"""

from __future__ import annotations

import random
from collections import Counter
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from collections.abc import Callable

    from tau_emotion.core.conditions import ConditionSpace

FAMILY_VALENCE = {"enjoyment": "positive", "anger": "negative", "disgust": "negative", "fear": "negative",
                  "sadness": "negative"}
#: emotions that need an occasion of this valence to make sense (a heartbreak needs a reason)
EMOTION_NEEDS = {"sorrow": "negative"}


def _balanced(values: list[str], n: int, rng: random.Random) -> list[str]:
    """`n` draws where each value appears n // len or one more times, in a seeded order."""
    out = values * (n // len(values)) + rng.sample(values, n % len(values))
    rng.shuffle(out)
    return out


def design_conditions(n: int, key: str, space: ConditionSpace) -> list[dict[str, str]]:
    """The conditions of a split's `n` tasks, in task order (seeded by `key`), from the emotion plugin's
    vocabulary as the core's condition-space contract gives it (labels: emotion -> family; dimensions)."""
    emotions, dimensions = space.labels, space.dimensions
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
                  rng: random.Random, *, allowed: bool = True,
                  fits: Callable[[tuple[str, int, str]], bool] | None = None) -> tuple[str, int, str] | None:
    """An occasion (text, stakes, valence) that fits the condition (always one when the emotion needs it, else
    half the time).

    `allowed`: whether the task's intents may have an occasion at all (the pack's OCCASION_INTENTS); `fits`: whether
    the feelings of the condition can still be said beside it (no "no rush" beside a father in hospital).
    """
    if not occasions or not allowed:
        return None
    fitting = [o for o in occasions if (condition is None or occasion_fits(o[2], condition))
               and (fits is None or fits(o))]
    must = condition is not None and needs_occasion(condition)
    if not fitting or (not must and rng.random() >= 0.5):
        return None
    return rng.choice(fitting)


#: how far (in tasks) a family's count of a stratum (policy challenges; tasks of 1, 2 or 3+ intents; a gold-length bin) may
#: stray from the split's running share of it times the family's size when the build accepts a task
#: (`build.py`, rejection `balance`); below the audit's 1.5 so that the shares moving after a family filled up leave room
CHALLENGE_SLACK = 0.75
#: intents per task are stratified as 1, 2 and this many or more
INTENT_STRATA = 3


def share_fits(counts: dict[str, Counter], family: str, value: Any, slack: float = CHALLENGE_SLACK) -> bool:
    """Whether accepting a task of `family` whose stratum is `value` keeps the family's count of every
    stratum within `slack` tasks of the split's running share of it times the family's size.

    `counts` maps each family to a Counter of the strata of its tasks accepted so far. A family the running
    shares have left further away than `slack` (they move as other families take tasks) takes any task that
    brings it closer: one more task of another stratum may not be enough on its own to bring it back.
    """
    totals: Counter = Counter()
    for tally in counts.values():
        totals.update(tally)
    total = sum(totals.values())
    mine = counts.get(family, Counter())
    size = sum(mine.values())
    strata = set(totals) | {value}

    def worst(tally: Counter, everyone: Counter, n: int, members: int) -> float:
        return max((abs(tally[k] - everyone[k] / n * members) for k in strata), default=0.0) if n else 0.0

    after = worst(mine + Counter([value]), totals + Counter([value]), total + 1, size + 1)
    return after <= slack or after < worst(mine, totals, total, size)


#: how far (in intents) a family's count of one request kind may stray from the split's running share of it times
#: the family's size (`kinds_fit`); request kinds are many and a task has several, so a little more room
KIND_SLACK = 1.5
#: gold-call counts are stratified in these bins (up to 6 calls, 7-8, 9 or more)
LENGTH_BINS = (6, 8)


def length_bin(calls: int) -> int:
    """The stratum of a task's gold length: 0 (<= 6 calls), 1 (7-8), 2 (9+)."""
    return sum(calls > edge for edge in LENGTH_BINS)


def kinds_fit(kinds: dict[str, Counter], sizes: Counter, family: str, task_kinds: list[str],
              slack: float = KIND_SLACK) -> bool:
    """Whether accepting a task of `family` with these request kinds (one per intent) keeps the family's count of
    each of the task's kinds within `slack` of the split's running count of it times the family's share of the
    tasks, or brings the family closer. `kinds`: family -> Counter of the kinds of its accepted tasks; `sizes`: family -> tasks.

    The audit's request kind balance (a permutation test of the largest per-kind chi-square) failed by chance on
    splits the stratified build left to chance (telecom test at p=0.026); this makes the kinds a designed stratum,
    like policy challenges and intents per task.
    """
    totals: Counter = Counter()
    for tally in kinds.values():
        totals.update(tally)
    n = sum(sizes.values())
    mine, size = kinds.get(family, Counter()), sizes.get(family, 0)
    strata = set(totals) | set(task_kinds)

    def worst(tally: Counter, everyone: Counter, tasks: int, members: int) -> float:
        return max((abs(tally[k] - everyone[k] / tasks * members) for k in strata), default=0.0) if tasks else 0.0

    add = Counter(task_kinds)
    # only the task's own kinds: holding every kind of the family at once (the shares of all of them move with each
    # task) turned most candidates away in small splits, rare refusals first (telecom test fell from 12 to 5 challenges)
    strata = set(task_kinds)
    after = worst(mine + add, totals + add, n + 1, size + 1)
    return after <= slack or after < worst(mine, totals, n, size)


def challenge_fits(counts: dict[str, list[int]], family: str, challenge: bool,
                   slack: float = CHALLENGE_SLACK) -> bool:
    """Whether accepting a task of `family` (a policy challenge or not) keeps the family's challenges
    within `slack` tasks of the split's running challenge share times the family's size.

    `counts` maps each family to [tasks, challenge tasks] accepted so far. The grounder decides whether a
    task is a challenge independently of its emotion condition, so without this a small split can give one
    family none (retail test: 0 of 9 enjoyment tasks against 43% for the others) and the family's scores
    would measure task difficulty, not emotion. A task is either a challenge or not, so from a balanced
    family one of the two always fits: a condition waits for a candidate of the kind its family needs.
    """
    return share_fits({f: Counter({True: c, False: n - c}) for f, (n, c) in counts.items()}, family,
                      bool(challenge), slack)
