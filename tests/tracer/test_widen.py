"""A build whose candidates run out short of its design widens once (`build.widen`): an open condition may take
another emotion of its family or another urgency, within the design's band, and nothing else changes."""

from __future__ import annotations

from collections import Counter

from tau_emotion.tracer.build import WIDEN_DRIFT, Widening, condition_id
from tau_emotion.tracer.validate import Reject

EMOTIONS = {"dread": "fear", "anxiety": "fear", "nervousness": "fear", "sorrow": "sadness"}


def _row(emotion: str, urgency: str = "moderate", politeness: str = "neutral") -> dict[str, str]:
    return {"family": EMOTIONS[emotion], "emotion": emotion, "politeness": politeness, "urgency": urgency,
            "trust": "cautious"}


class _Takes:
    """A candidate that can take only the conditions `ok` says (the `Fits.misfit` contract: None when it can)."""

    def __init__(self, ok):
        self.ok = ok

    def misfit(self, condition):
        return None if self.ok(condition) else Reject("feelings", "no cause")


def _widening(design):
    return Widening(EMOTIONS, Counter(r["urgency"] for r in design))


def test_an_open_dread_becomes_an_emotion_of_its_family_the_candidate_can_take():
    design = [_row("dread", politeness=p) for p in ("warm", "neutral", "cold")] + \
        [_row("anxiety"), _row("anxiety", "high"), _row("nervousness"), _row("nervousness", "low"), _row("sorrow"),
         _row("sorrow", "high")]
    taken = Counter(condition_id(r) for r in design)
    assert _widening(design).change(design, 0, _Takes(lambda c: c["emotion"] == "nervousness"), taken)
    assert design[0] == {**_row("nervousness", politeness="warm")}
    # dread now has 2 rows, the least any emotion has: it gives no more away
    assert not _widening(design).change(design, 1, _Takes(lambda c: c["emotion"] != "dread"), taken)
    # no emotion outside the family, however well the candidate takes it
    assert not _widening(design).change(design, 7, _Takes(lambda c: c["family"] == "fear"), taken)


def test_an_open_condition_takes_another_urgency_only_within_the_drift_of_its_designed_count():
    design = [_row("sorrow", "low", p) for p in ("warm", "neutral", "cold")] + \
        [{**_row("sorrow", "high"), "trust": "trusting"}] * 3
    widening = _widening(design)
    taken = Counter(condition_id(r) for r in design)
    moved = []
    for j in range(3):  # three "no rush" sorrows; the candidate takes a sorrow at any other urgency (high)
        moved.append(widening.change(design, j, _Takes(lambda c: c["urgency"] != "low"), taken))
    assert moved == [True] * WIDEN_DRIFT + [False] * (3 - WIDEN_DRIFT)
    assert Counter(r["urgency"] for r in design)["low"] == 3 - WIDEN_DRIFT
