"""Metrics by emotion: every figure broken down by family, emotion and each dimension, with the
no-emotion control beside the emotional runs when both were run (`--emotion-control`)."""

from __future__ import annotations

from collections import Counter
from typing import Any

from tau_emotion.core.models import EpisodeResult, RunConfig
from tau_emotion.plugins.metrics import breakdown, score_group

DIMENSIONS = ("emotion", "politeness", "urgency", "trust")


def _emotion(r: EpisodeResult, key: str) -> str | None:
    return r.emotion.get(key) if r.emotion else None


def emotion_metrics(results: list[EpisodeResult], config: RunConfig) -> dict[str, Any]:
    k = config.trials
    terminations = Counter(r.termination.reason for r in results)
    out: dict[str, Any] = {
        "terminations": {"unsatisfied": 0, **dict(sorted(terminations.items()))},
        "by_emotion_family": breakdown(results, lambda r: _emotion(r, "family"), k, config.seed),
        "by_emotion_dimension": {
            dim: breakdown(results, lambda r, dim=dim: _emotion(r, dim), k, config.seed) for dim in DIMENSIONS
        },
    }
    control = [r for r in results if r.emotion is None]
    emotional = [r for r in results if r.emotion is not None]
    if control and emotional:
        out["emotion_vs_control"] = {"emotional": score_group(emotional, k, config.seed),
                                     "control": score_group(control, k, config.seed)}
    return out
