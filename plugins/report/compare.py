"""Comparing two runs task by task: deltas of Avg@k, Pass^k and the UNSATISFIED rate (the share of trials
that ended negatively) overall, by domain and by a tag, with paired bootstrap intervals over the tasks
both runs hold, McNemar's exact test on per-task success (a task succeeds when every trial did), the
tasks that flipped, and the regression gate (a significant drop of a success metric, or a significant
rise of the UNSATISFIED rate, in any scope)."""

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


#: the metric key of the UNSATISFIED rate in a comparison (a rise is the regression)
UNSAT = "unsat_rate"


def task_scores(rs: list[EpisodeResult], k: int) -> dict[str, float]:
    n, c = len(rs), sum(r.success for r in rs)
    return {"avg_at_k": c / n, f"pass^{k}": comb(c, k) / comb(n, k) if n >= k else float("nan"),
            UNSAT: sum(r.termination.negative for r in rs) / n}


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
    for metric in ("avg_at_k", f"pass^{k}", UNSAT):
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


#: a scope with fewer paired tasks than this never fails the gate: the bootstrap interval of one or two tasks is a
#: point ([-1, -1] for a single task that went from solved to failed), not evidence of a significant change
MIN_GATE_TASKS = 3


def gate(comparison: dict[str, Any], max_drop: float, max_unsat_rise: float | None = None,
         by_tag: bool = True) -> list[dict[str, Any]]:
    """One check per (scope, metric), the scopes being overall, each domain and (with `by_tag`) each value of the
    comparison's tag (an emotion family). Avg@k and Pass^k fail when the drop exceeds `max_drop` and the
    paired interval of the delta lies wholly below zero (a significant drop); the UNSATISFIED rate (unless
    `max_unsat_rise` is None) fails when it rises by more than `max_unsat_rise` and the interval lies wholly
    above zero. A scope of fewer than MIN_GATE_TASKS tasks is reported and never fails."""
    k = comparison["k"]
    scopes = [("overall", comparison["overall"])] + [(f"domain {d}", s) for d, s in comparison["by_domain"].items()]
    if by_tag:
        tag = comparison["by_tag"]["tag"]
        scopes += [(f"{tag}={v}", s) for v, s in comparison["by_tag"]["groups"].items()]
    checks = []
    for scope, s in scopes:
        metrics = [("avg_at_k", max_drop), (f"pass^{k}", max_drop)]
        if max_unsat_rise is not None:
            metrics.append((UNSAT, max_unsat_rise))
        for metric, allowed in metrics:
            if metric not in s:
                continue
            m = s[metric]
            if metric == UNSAT:
                failed, what = m["delta"] > allowed and m["ci95"][0] > 0, f"allowed rise {allowed}"
            else:
                failed, what = m["delta"] < -allowed and m["ci95"][1] < 0, f"allowed drop {allowed}"
            if failed and s["n_tasks"] < MIN_GATE_TASKS:
                failed, what = False, f"{what}; too few tasks to judge (fewer than {MIN_GATE_TASKS})"
            checks.append({"scope": scope, "metric": metric, "failed": failed, "n_tasks": s["n_tasks"], **m,
                           "message": f"{scope}: {metric} {m['baseline']:.3f} -> {m['candidate']:.3f} "
                                      f"(delta {m['delta']:+.3f}, 95% CI [{m['ci95'][0]:+.3f}, {m['ci95'][1]:+.3f}], "
                                      f"{s['n_tasks']} tasks, {what})"})
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
            what = "significant rise: " if c["metric"] == UNSAT else "significant drop: "
            lines += [case + ">", f'    <failure message={quoteattr(what + c["message"])}/>', "  </testcase>"]
        else:
            lines.append(case + "/>")
    lines.append("</testsuite>")
    return "\n".join(lines) + "\n"
