"""Comparing two runs task by task: deltas of Avg@k and Pass^k (overall, by domain, by a tag) with
paired bootstrap intervals over the tasks both runs hold, McNemar's exact test on per-task success
(a task succeeds when every trial did), the tasks that flipped, and the regression gate."""

from __future__ import annotations

import random
from collections import defaultdict
from math import comb
from statistics import mean
from typing import Any
from xml.sax.saxutils import quoteattr

from tau_emotion.core.models import EpisodeResult

SAMPLES = 2000


def per_task(results: list[EpisodeResult]) -> dict[str, list[EpisodeResult]]:
    out: dict[str, list[EpisodeResult]] = defaultdict(list)
    for r in results:
        out[f"{r.domain}/{r.task_id}"].append(r)
    return out


def task_scores(rs: list[EpisodeResult], k: int) -> dict[str, float]:
    n, c = len(rs), sum(r.success for r in rs)
    return {"avg_at_k": c / n, f"pass^{k}": comb(c, k) / comb(n, k) if n >= k else float("nan")}


def mcnemar(b: int, c: int) -> float:
    """Exact two-sided McNemar p-value for b and c discordant pairs."""
    n = b + c
    if n == 0:
        return 1.0
    tail = sum(comb(n, i) for i in range(min(b, c) + 1)) / 2 ** n
    return min(1.0, 2 * tail)


def paired(a: dict[str, list[EpisodeResult]], b: dict[str, list[EpisodeResult]], tasks: list[str], k: int,
           seed: int = 0) -> dict[str, Any]:
    out: dict[str, Any] = {"n_tasks": len(tasks)}
    if not tasks:
        return out
    sa = {t: task_scores(a[t], k) for t in tasks}
    sb = {t: task_scores(b[t], k) for t in tasks}
    rng = random.Random(seed)
    samples = [rng.choices(tasks, k=len(tasks)) for _ in range(SAMPLES)]
    for metric in ("avg_at_k", f"pass^{k}"):
        diffs = {t: sb[t][metric] - sa[t][metric] for t in tasks}
        means = sorted(mean(diffs[t] for t in s) for s in samples)
        lo, hi = means[int(0.025 * SAMPLES)], means[int(0.975 * SAMPLES) - 1]
        out[metric] = {"baseline": round(mean(sa[t][metric] for t in tasks), 4),
                       "candidate": round(mean(sb[t][metric] for t in tasks), 4),
                       "delta": round(mean(diffs.values()), 4), "ci95": [round(lo, 4), round(hi, 4)]}
    won = [t for t in tasks if all(r.success for r in b[t]) and not all(r.success for r in a[t])]
    lost = [t for t in tasks if all(r.success for r in a[t]) and not all(r.success for r in b[t])]
    out["mcnemar"] = {"lost": len(lost), "won": len(won), "p_value": round(mcnemar(len(lost), len(won)), 6)}
    out["flipped"] = {"to_failure": lost, "to_success": won}
    return out


def compare(a: list[EpisodeResult], b: list[EpisodeResult], by: str = "emotion.family", seed: int = 0) -> dict[str, Any]:
    ta, tb = per_task(a), per_task(b)
    common = sorted(set(ta) & set(tb))
    k = min(min((len(v) for v in ta.values()), default=1), min((len(v) for v in tb.values()), default=1))
    out: dict[str, Any] = {"k": k, "only_baseline": sorted(set(ta) - set(tb)), "only_candidate": sorted(set(tb) - set(ta)),
                           "overall": paired(ta, tb, common, k, seed), "by_domain": {}, "by_tag": {"tag": by, "groups": {}}}
    for domain in sorted({t.split("/", 1)[0] for t in common}):
        out["by_domain"][domain] = paired(ta, tb, [t for t in common if t.split("/", 1)[0] == domain], k, seed)
    values = {t: ta[t][0].tags.get(by) for t in common}
    for value in sorted({v for v in values.values() if v is not None}):
        out["by_tag"]["groups"][value] = paired(ta, tb, [t for t in common if values[t] == value], k, seed)
    return out


def gate(comparison: dict[str, Any], max_drop: float) -> list[dict[str, Any]]:
    """One check per (scope, metric): failed when the drop exceeds `max_drop` and the interval of the
    delta lies wholly below zero (a significant drop)."""
    k = comparison["k"]
    scopes = [("overall", comparison["overall"])] + [(f"domain {d}", s) for d, s in comparison["by_domain"].items()]
    checks = []
    for scope, s in scopes:
        for metric in ("avg_at_k", f"pass^{k}"):
            if metric not in s:
                continue
            m = s[metric]
            failed = m["delta"] < -max_drop and m["ci95"][1] < 0
            checks.append({"scope": scope, "metric": metric, "failed": failed, **m,
                           "message": f"{scope}: {metric} {m['baseline']:.3f} -> {m['candidate']:.3f} "
                                      f"(delta {m['delta']:+.3f}, 95% CI [{m['ci95'][0]:+.3f}, {m['ci95'][1]:+.3f}], "
                                      f"allowed drop {max_drop})"})
    return checks


def _xml_text(text: str) -> str:
    """`text` with what XML 1.0 cannot hold (control characters, lone surrogates) shown escaped."""
    from tau_emotion.core.terminal import safe

    return safe(text)


def junit(checks: list[dict[str, Any]], name: str = "tau-gate") -> str:
    checks = [{**c, "scope": _xml_text(str(c["scope"])), "metric": _xml_text(str(c["metric"])),
               "message": _xml_text(str(c["message"]))} for c in checks]
    failures = sum(c["failed"] for c in checks)
    lines = ['<?xml version="1.0" encoding="utf-8"?>',
             f'<testsuite name={quoteattr(name)} tests="{len(checks)}" failures="{failures}" errors="0">']
    for c in checks:
        case = f'  <testcase classname={quoteattr(name)} name={quoteattr(c["scope"] + " " + c["metric"])}'
        if c["failed"]:
            lines += [case + ">", f'    <failure message={quoteattr("significant drop: " + c["message"])}/>', "  </testcase>"]
        else:
            lines.append(case + "/>")
    lines.append("</testsuite>")
    return "\n".join(lines) + "\n"
