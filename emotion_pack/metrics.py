"""Metrics by emotion. The per-family, per-emotion and per-dimension breakdowns come from the
core metrics' `by_tag` (the emotion plugin tags every result `emotion.family`, `emotion.emotion`,
`emotion.politeness`, ...); this adds the no-emotion control beside the emotional runs when both
were run (`--emotion-control`), and the UNSATISFIED rate."""

from __future__ import annotations

from typing import Any

from tau_emotion.core.models import EpisodeResult, RunConfig
from tau_emotion.core.statistics import score_group

FAMILY_TAG = "emotion.family"


def emotion_metrics(results: list[EpisodeResult], config: RunConfig) -> dict[str, Any]:
    out: dict[str, Any] = {
        "unsatisfied_rate": round(sum(r.termination.reason == "unsatisfied" for r in results) / len(results), 4)
        if results else 0.0,
    }
    control = [r for r in results if FAMILY_TAG not in r.tags]
    emotional = [r for r in results if FAMILY_TAG in r.tags]
    if control and emotional:
        out["emotion_vs_control"] = {"emotional": score_group(emotional, config.trials, config.seed),
                                     "control": score_group(control, config.trials, config.seed)}
    return out


def summary_rows(summary: dict[str, Any]) -> list[tuple[str, dict[str, Any]]]:
    """One row per emotion family for the printed summary; with a control arm (`--emotion-control`), a row per
    arm first, since the `all` row mixes the two."""
    arms = summary.get("emotion_vs_control") or {}
    rows = [(f"arm:{arm}", arms[arm]) for arm in ("emotional", "control") if arm in arms]
    return rows + [(f"emotion:{name}", group) for name, group in summary.get("by_tag", {}).get(FAMILY_TAG, {}).items()]
