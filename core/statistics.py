"""The statistics every metric shares: τ-bench's unbiased Pass^k, Avg@k and bootstrap intervals over tasks.

A contract in core, so the metrics plugins (the core figures, another pack's control comparison,
the report's charts) compute a group the same way without importing one another. Over n trials of a
task with c successes: Avg@n is the mean of c/n over tasks, Pass^k the mean of C(c,k)/C(n,k).
Errored trials count as failures; intervals resample tasks with a seeded generator, so a summary is
reproducible.
"""

from __future__ import annotations

import random
from collections import Counter, defaultdict
from collections.abc import Iterable
from math import comb, fsum
from statistics import mean
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from tau_emotion.core.models import EpisodeResult

BOOTSTRAP_SAMPLES = 1000


def pass_hat_k(c: int, n: int, k: int) -> float:
    """The chance that k trials drawn without replacement from n (c of them successes) all succeed."""
    return comb(c, k) / comb(n, k) if n >= k else float("nan")


def bootstrap_interval(values: list[float], rng: random.Random, samples: int = BOOTSTRAP_SAMPLES) -> list[float]:
    """The 95% percentile interval of the mean of `values`, from `samples` resamples drawn with `rng`."""
    if len(values) < 2:
        return [values[0], values[0]] if values else [float("nan"), float("nan")]
    n = len(values)
    means = sorted(fsum(rng.choices(values, k=n)) / n for _ in range(samples))  # statistics.mean is 10x slower
    return [round(means[int(0.025 * samples)], 4), round(means[int(0.975 * samples) - 1], 4)]


def score_group(results: Iterable[EpisodeResult], k_max: int, seed: int = 0) -> dict[str, Any]:
    """Avg@k, Pass^1..k, mean reward, intervals, terminations and counts for one group of results."""
    by_task: dict[str, list[EpisodeResult]] = defaultdict(list)
    for r in results:
        by_task[f"{r.domain}/{r.task_id}"].append(r)
    if not by_task:
        return {"n_tasks": 0, "n_trials": 0}
    rng = random.Random(seed)
    per_task_avg = [sum(r.success for r in rs) / len(rs) for rs in by_task.values()]
    out: dict[str, Any] = {
        "n_tasks": len(by_task),
        "n_trials": sum(len(rs) for rs in by_task.values()),
        "avg_at_k": round(mean(per_task_avg), 4),
        "avg_at_k_ci95": bootstrap_interval(per_task_avg, rng),
        "mean_reward": round(mean(r.reward for rs in by_task.values() for r in rs), 4),
        "pass_hat_k": {},
        "pass_hat_k_ci95": {},
    }
    for k in range(1, k_max + 1):
        values = [pass_hat_k(sum(r.success for r in rs), len(rs), k) for rs in by_task.values() if len(rs) >= k]
        if values:
            out["pass_hat_k"][str(k)] = round(mean(values), 4)
            out["pass_hat_k_ci95"][str(k)] = bootstrap_interval(values, rng)
    all_results = [r for rs in by_task.values() for r in rs]
    terminations = Counter(r.termination.reason for r in all_results)
    out["terminations"] = dict(sorted(terminations.items()))
    out["negative_end_rate"] = round(sum(r.termination.negative for r in all_results) / len(all_results), 4)
    return out
