"""`tau report`: one self-contained HTML file (Jinja2 with autoescape on, hand-written inline SVG, a
few lines of script for the filters) over one or more runs.

Everything a model or user wrote reaches the page only through Jinja's escaping; the script reads
`data-*` attributes and toggles classes, never building markup from data.
"""

from __future__ import annotations

import datetime as dt
import random
from collections import defaultdict
from importlib.resources import files
from typing import Any

from tau_emotion.core.statistics import score_group
from tau_emotion.plugins.report.analysis import analyze
from tau_emotion.plugins.report.reading import RunData, actions, questions

AXES_TAGS = ("emotion.politeness", "emotion.urgency", "emotion.trust")
COLORS = ("#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b")


def heat_color(value: float | None) -> str:
    if value is None or value != value:
        return "#eeeeee"
    return f"hsl({round(120 * value)}, 65%, 72%)"


def heatmap(data: RunData, by: str, metric: str) -> dict[str, Any]:
    groups: dict[tuple[str, str], list] = defaultdict(list)
    for r in data.results:
        groups[(r.domain, r.tags.get(by, "(none)"))].append(r)
    rows = sorted({d for d, _ in groups})
    cols = sorted({f for _, f in groups})
    k = data.config.trials
    cells = []
    for i, d in enumerate(rows):
        for j, f in enumerate(cols):
            rs = groups.get((d, f))
            if not rs:
                cells.append({"x": j, "y": i, "value": None, "text": "", "n": 0})
                continue
            s = score_group(rs, k, data.config.seed)
            value = s.get("avg_at_k") if metric == "avg" else s.get("pass_hat_k", {}).get(str(k))
            cells.append({"x": j, "y": i, "value": value, "n": s["n_tasks"],
                          "text": "-" if value is None else f"{value:.2f}", "color": heat_color(value)})
    return {"rows": rows, "cols": cols, "cells": cells, "label": "Avg@k" if metric == "avg" else f"Pass^{k}"}


def rate_bars(data: RunData) -> list[dict[str, Any]]:
    out = []
    for tag in AXES_TAGS:
        groups: dict[str, list] = defaultdict(list)
        for r in data.results:
            if tag in r.tags and r.status == "ok":
                groups[r.tags[tag]].append(r)
        if groups:
            bars = [{"label": v, "n": len(rs), "rate": sum(r.termination.negative for r in rs) / len(rs)}
                    for v, rs in sorted(groups.items())]
            out.append({"tag": tag, "bars": bars})
    return out


def scatter(data: RunData) -> dict[str, Any]:
    rng = random.Random(0)
    points = []
    for r in data.results:
        if r.status != "ok":
            continue
        points.append({"x": len(actions(r.messages)), "y": questions(r.messages), "ok": r.success,
                       "jx": rng.uniform(-0.25, 0.25), "jy": rng.uniform(-0.25, 0.25),
                       "label": f"{r.task_id} #{r.trial}"})
    xmax = max([p["x"] for p in points] + [1])
    ymax = max([p["y"] for p in points] + [1])
    for p in points:
        p["cx"] = round(40 + 320 * (p["x"] + p["jx"] + 0.5) / (xmax + 1), 1)
        p["cy"] = round(230 - 200 * (p["y"] + p["jy"] + 0.5) / (ymax + 1), 1)
    share = sum(p["x"] > p["y"] for p in points) / len(points) if points else None
    return {"points": points, "xmax": xmax, "ymax": ymax, "share": share,
            "xticks": [{"v": v, "pos": round(40 + 320 * (v + 0.5) / (xmax + 1), 1)} for v in range(xmax + 1)],
            "yticks": [{"v": v, "pos": round(230 - 200 * (v + 0.5) / (ymax + 1), 1)} for v in range(ymax + 1)]}


def pass_curve(runs: list[RunData]) -> list[dict[str, Any]]:
    out = []
    kmax = max([d.config.trials for d in runs] + [1])
    for i, d in enumerate(runs):
        values = {int(k): v for k, v in (d.summary.get("pass_hat_k") or {}).items()}
        pts = [(k, values[k]) for k in sorted(values)]
        coords = [(round(50 + 300 * ((k - 1) / max(1, kmax - 1)), 1), round(220 - 180 * v, 1)) for k, v in pts]
        out.append({"run": d.run_id, "color": COLORS[i % len(COLORS)],
                    "points": " ".join(f"{x},{y}" for x, y in coords),
                    "dots": [{"x": x, "y": y, "k": k, "v": v} for (x, y), (k, v) in zip(coords, pts, strict=True)]})
    return out


def when(stamp: float | None) -> str:
    return dt.datetime.fromtimestamp(stamp).strftime("%Y-%m-%d %H:%M:%S") if stamp else "-"


def render(runs: list[RunData], by: str = "emotion.family") -> str:
    from jinja2 import Environment

    env = Environment(autoescape=True, trim_blocks=True, lstrip_blocks=True)
    env.filters["when"] = when
    template = env.from_string(files(__package__).joinpath("templates/report.html.j2").read_text(encoding="utf-8"))
    views = []
    for ri, data in enumerate(runs):
        analysis = analyze(data, by)
        categories = {(t["task_id"], t["trial"]): t["category"] for t in analysis["trials"]}
        trials = []
        tasks: dict[str, dict[str, Any]] = {}
        for ti, r in enumerate(data.results):
            anchor = f"r{ri}-t{ti}"
            trials.append({"anchor": anchor, "r": r, "category": categories.get((r.task_id, r.trial)),
                           "family": r.tags.get(by, "")})
            row = tasks.setdefault(r.task_id, {"task_id": r.task_id, "domain": r.domain, "family": r.tags.get(by, ""),
                                               "trials": [], "successes": 0})
            row["trials"].append(trials[-1])
            row["successes"] += int(r.success)
        views.append({
            "index": ri, "data": data, "meta": data.meta, "summary": data.summary, "color": COLORS[ri % len(COLORS)],
            "heat_avg": heatmap(data, by, "avg"), "heat_pass": heatmap(data, by, "pass"),
            "rates": rate_bars(data), "scatter": scatter(data), "analysis": analysis,
            "tasks": list(tasks.values()), "trials": trials,
            "domains": sorted({r.domain for r in data.results}),
            "families": sorted({r.tags.get(by, "") for r in data.results} - {""}),
        })
    return template.render(runs=views, by=by, curves=pass_curve(runs),
                           kmax=max([d.config.trials for d in runs] + [1]),
                           title="tau report: " + ", ".join(d.run_id for d in runs))
