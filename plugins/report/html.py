"""`tau report`: one self-contained HTML file (Jinja2 with autoescape on, hand-written inline SVG, a
few lines of script for the filters) over one or more runs: success with intervals per condition value
(each of the 22 emotions, each family, politeness, urgency and trust), tokens and cost per trial and per
run, and with two or more runs each later one against the first (A vs B, paired by task).

Everything a model or user wrote reaches the page only through Jinja's escaping; the script reads
`data-*` attributes and toggles classes, never building markup from data.
"""

from __future__ import annotations

import base64
import datetime as dt
import gzip
import json
import math
import random
from collections import defaultdict
from importlib.resources import files
from typing import Any

from tau_emotion.core.statistics import score_group
from tau_emotion.plugins.report.analysis import analyze
from tau_emotion.plugins.report.compare import paired
from tau_emotion.plugins.report.procedure import procedure_view
from tau_emotion.plugins.report.reading import RunData, actions, db_diff, questions

AXES_TAGS = ("emotion.politeness", "emotion.urgency", "emotion.trust")
#: the natural order of each axis's values (low to high); values not listed follow, sorted
AXIS_ORDER = {"emotion.politeness": ("warm", "neutral", "cold"), "emotion.urgency": ("low", "moderate", "high"),
              "emotion.trust": ("trusting", "cautious", "skeptical")}
COLORS = ("#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b")
#: a task id's variant suffix (`TASK~control`): the same task played another way
VARIANT = "~"
#: characters of one message kept in the report's trajectory data (the store keeps all of it)
MESSAGE_CHARS = 4000


def run_label(data: RunData) -> str:
    """`agent/model 5b1a0a`: what a legend needs to tell runs apart (the id's random tail is unique)."""
    model = (data.meta.get("models") or {}).get("agent") or next(iter((data.meta.get("models") or {}).values()), "")
    who = f"{data.config.agent}/{model}" if model else f"{data.config.agent} vs {data.config.user}"
    return f"{who} {data.run_id.rsplit('-', 1)[-1]}"


def heat_color(value: float | None, reverse: bool = False) -> str:
    if value is None or value != value:
        return "#eeeeee"
    return f"hsl({round(120 * ((1 - value) if reverse else value))}, 65%, 72%)"


def wilson(successes: int, n: int, z: float = 1.96) -> tuple[float, float]:
    """The 95% Wilson interval of a proportion (sound at 0 and 1, unlike the normal one)."""
    if n == 0:
        return 0.0, 1.0
    p = successes / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return max(0.0, centre - half), min(1.0, centre + half)


def unsatisfied_heatmap(data: RunData, by: str) -> dict[str, Any]:
    """Share of trials ending negatively (###UNSATISFIED###), by domain and `by`; red is high."""
    groups: dict[tuple[str, str], list] = defaultdict(list)
    for r in data.results:
        if r.status == "ok":
            groups[(r.domain, r.tags.get(by, "(control)" if VARIANT in r.task_id else "(none)"))].append(r)
    rows = sorted({d for d, _ in groups})
    cols = sorted({f for _, f in groups})
    cells = []
    for i, d in enumerate(rows):
        for j, f in enumerate(cols):
            rs = groups.get((d, f), [])
            rate = sum(r.termination.negative for r in rs) / len(rs) if rs else None
            cells.append({"x": j, "y": i, "value": rate, "n": len(rs), "unit": "trials",
                          "text": "" if rate is None else f"{rate:.0%}", "color": heat_color(rate, reverse=True)})
    return {"rows": rows, "cols": cols, "cells": cells, "label": "UNSATISFIED rate"}


def heatmap(data: RunData, by: str, metric: str) -> dict[str, Any]:
    groups: dict[tuple[str, str], list] = defaultdict(list)
    for r in data.results:
        groups[(r.domain, r.tags.get(by, "(control)" if VARIANT in r.task_id else "(none)"))].append(r)
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
            cells.append({"x": j, "y": i, "value": value, "n": s["n_tasks"], "unit": "tasks",
                          "text": "-" if value is None else f"{value:.2f}", "color": heat_color(value)})
    return {"rows": rows, "cols": cols, "cells": cells, "label": "Avg@k" if metric == "avg" else f"Pass^{k}"}


def condition_tags(spaces: dict[str, Any] | None, results: list[Any]) -> list[dict[str, Any]]:
    """The tags a run's conditions are broken down by, each with its values in order: from every condition
    space (`core/conditions.py`) its group field, its label field (each label under its group, all of them,
    also those no trial had) and each dimension in the space's order; tags `BLOCK.FIELD`, as the owner tags
    its results. Without a space, the axes and values the results carry."""
    out = []
    for name, space in (spaces or {}).items():
        group_field, label_field, *dims = space.fields
        out.append({"tag": f"{name}.{group_field}", "values": list(space.groups), "groups": {}})
        out.append({"tag": f"{name}.{label_field}", "values": list(space.labels), "groups": dict(space.labels)})
        out += [{"tag": f"{name}.{d}", "values": list(space.dimensions[d]), "groups": {}} for d in dims]
    if not out:
        present = {k for r in results for k in r.tags}
        out = [{"tag": t, "values": list(AXIS_ORDER.get(t, ())), "groups": {}} for t in AXES_TAGS if t in present]
    return out


def forest_x(value: float) -> float:
    """Where a share in [0, 1] sits on a table row's interval chart (5 to 165 pixels)."""
    return round(5 + 160 * min(1.0, max(0.0, value)), 1)


def success_by(data: RunData, tag: str, values: list[str], groups: dict[str, str]) -> dict[str, Any]:
    """Success per value of `tag`: Avg@k and Pass^k with 95% bootstrap intervals over tasks, and the UNSATISFIED
    rate with its Wilson interval; every listed value gets a row (those no trial had say so), values the
    results carry that are not listed follow, sorted."""
    k = data.config.trials
    by_value: dict[str, list] = defaultdict(list)
    for r in data.results:
        if tag in r.tags:
            by_value[r.tags[tag]].append(r)
    rows = []
    for value in [*values, *sorted(v for v in by_value if v not in values)]:
        rs = by_value.get(value, [])
        row: dict[str, Any] = {"value": value, "group": groups.get(value, ""), "n_trials": len(rs)}
        if rs:
            s = score_group(rs, k, data.config.seed)
            ok = [r for r in rs if r.status == "ok"]
            quits = sum(r.termination.negative for r in ok)
            lo, hi = wilson(quits, len(ok))
            row.update(n_tasks=s["n_tasks"], avg=s["avg_at_k"], avg_ci=s["avg_at_k_ci95"],
                       pass_k=s["pass_hat_k"].get(str(k)), pass_ci=s["pass_hat_k_ci95"].get(str(k)),
                       unsat=quits / len(ok) if ok else None, unsat_ci=[lo, hi],
                       x=forest_x(s["avg_at_k"]), x_lo=forest_x(s["avg_at_k_ci95"][0]),
                       x_hi=forest_x(s["avg_at_k_ci95"][1]))
        rows.append(row)
    return {"tag": tag, "rows": rows, "k": k,
            "present": sum(1 for row in rows if row["n_trials"])}


def usage_view(data: RunData) -> dict[str, Any]:
    """Tokens and cost the run's model calls counted: per run, per trial (mean, median, max) and per domain."""
    def tokens(r: Any) -> float:
        return r.usage.get("total_tokens") or r.usage.get("prompt_tokens", 0) + r.usage.get("completion_tokens", 0)

    def block(rs: list) -> dict[str, Any]:
        per = sorted(tokens(r) for r in rs)
        cost = sum(r.usage.get("cost", 0.0) for r in rs)
        return {"trials": len(rs), "tokens": sum(per), "cost": cost,
                "prompt": sum(r.usage.get("prompt_tokens", 0.0) for r in rs),
                "completion": sum(r.usage.get("completion_tokens", 0.0) for r in rs),
                "mean_tokens": sum(per) / len(rs) if rs else 0.0, "median_tokens": per[len(per) // 2] if per else 0.0,
                "max_tokens": per[-1] if per else 0.0, "mean_cost": cost / len(rs) if rs else 0.0}

    domains: dict[str, list] = defaultdict(list)
    for r in data.results:
        domains[r.domain].append(r)
    total = block(data.results)
    return {"all": total, "by_domain": {d: block(rs) for d, rs in sorted(domains.items())},
            "counted": bool(total["tokens"] or total["cost"])}


def trial_usage(r: Any) -> str:
    """One trial's tokens and cost for its line in the report (empty when its model calls counted none)."""
    tokens = r.usage.get("total_tokens") or r.usage.get("prompt_tokens", 0) + r.usage.get("completion_tokens", 0)
    return ", ".join(([f"{tokens:,.0f} tokens"] if tokens else []) + ([f"${r.usage['cost']:.4f}"] if r.usage.get("cost") else []))


def versus(baseline: RunData, candidate: RunData, by: str, index: int) -> dict[str, Any]:
    """Run `candidate` against `baseline`, paired by task (`compare.compare`): rows per scope (all, each domain,
    each value of `by`) and metric with the delta candidate - baseline and its 95% paired bootstrap interval."""
    from tau_emotion.plugins.report.compare import UNSAT, compare

    c = compare(baseline.results, candidate.results, by, seed=baseline.config.seed)
    k = c["k"]
    scopes = [("all", c["overall"]), *((f"domain {d}", s) for d, s in c["by_domain"].items()),
              *((f"{by}={v}", s) for v, s in c["by_tag"]["groups"].items())]
    rows, chart = [], []
    for scope, s in scopes:
        if not s.get("n_tasks"):
            continue
        for metric, label in (("avg_at_k", "Avg@k"), (f"pass^{k}", f"Pass^{k}"), (UNSAT, "UNSATISFIED rate")):
            m = s[metric]
            worse = (m["ci95"][0] > 0) if metric == UNSAT else (m["ci95"][1] < 0)
            better = (m["ci95"][1] < 0) if metric == UNSAT else (m["ci95"][0] > 0)
            rows.append({"scope": scope, "n": s["n_tasks"], "metric": label, "a": m["baseline"], "b": m["candidate"],
                         "delta": m["delta"], "lo": m["ci95"][0], "hi": m["ci95"][1],
                         "verdict": "fail" if worse else ("ok" if better else ""), "mcnemar": s["mcnemar"]})
            if metric == "avg_at_k":
                chart.append({**rows[-1], "y": 22 + 22 * len(chart)})
    flipped = c["overall"].get("flipped", {})
    return {"index": index, "a": run_label(baseline), "b": run_label(candidate), "k": k, "rows": rows,
            "chart": chart, "to_failure": flipped.get("to_failure", []), "to_success": flipped.get("to_success", []),
            "only_a": len(c["only_baseline"]), "only_b": len(c["only_candidate"]),
            "n_tasks": c["overall"].get("n_tasks", 0)}


def rate_bars(data: RunData) -> list[dict[str, Any]]:
    """The UNSATISFIED rate per value of each emotion axis, in the axis's natural order, with Wilson intervals."""
    out = []
    for tag in AXES_TAGS:
        groups: dict[str, list] = defaultdict(list)
        for r in data.results:
            if tag in r.tags and r.status == "ok":
                groups[r.tags[tag]].append(r)
        if groups:
            order = AXIS_ORDER.get(tag, ())
            values = [v for v in order if v in groups] + sorted(v for v in groups if v not in order)
            bars = []
            for v in values:
                rs = groups[v]
                quits = sum(r.termination.negative for r in rs)
                lo, hi = wilson(quits, len(rs))
                bars.append({"label": v, "n": len(rs), "rate": quits / len(rs), "lo": lo, "hi": hi})
            out.append({"tag": tag, "bars": bars})
    return out


def control_deltas(data: RunData, by: str) -> list[dict[str, Any]]:
    """Emotion vs control, paired by task: each emotional task against its `~control` copy, overall, per domain
    and per `by` value; the delta (emotional - control) of Avg@k and Pass^k with a 95% paired bootstrap interval."""
    emotional: dict[str, list] = defaultdict(list)
    control: dict[str, list] = defaultdict(list)
    for r in data.results:
        base = r.task_id.split(VARIANT, 1)[0]
        (control if r.task_id != base else emotional)[f"{r.domain}/{base}"].append(r)
    tasks = sorted(set(emotional) & set(control))
    if not tasks:
        return []
    k = data.config.trials
    scopes: list[tuple[str, list[str]]] = [("all", tasks)]
    for d in sorted({t.split("/", 1)[0] for t in tasks}):
        scopes.append((f"domain {d}", [t for t in tasks if t.split("/", 1)[0] == d]))
    family = {t: emotional[t][0].tags.get(by, "") for t in tasks}
    for f in sorted(set(family.values()) - {""}):
        scopes.append((f"{by}={f}", [t for t in tasks if family[t] == f]))
    rows = []
    for scope, chosen in scopes:
        p = paired(control, emotional, chosen, k, data.config.seed)
        for metric in ("avg_at_k", f"pass^{k}"):
            m = p[metric]
            if isinstance(m["delta"], float) and m["delta"] != m["delta"]:
                continue
            rows.append({"scope": scope, "n": len(chosen), "metric": "Avg@k" if metric == "avg_at_k" else f"Pass^{k}",
                         "emotional": m["candidate"], "control": m["baseline"], "delta": m["delta"],
                         "lo": m["ci95"][0], "hi": m["ci95"][1]})
    return rows


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
        out.append({"run": run_label(d), "color": COLORS[i % len(COLORS)],
                    "points": " ".join(f"{x},{y}" for x, y in coords),
                    "dots": [{"x": x, "y": y, "k": k, "v": v} for (x, y), (k, v) in zip(coords, pts, strict=True)]})
    return out


def when(stamp: float | None) -> str:
    return dt.datetime.fromtimestamp(stamp).strftime("%Y-%m-%d %H:%M:%S") if stamp else "-"


def _cut(text: str | None) -> str:
    text = text or ""
    return text if len(text) <= MESSAGE_CHARS else f"{text[:MESSAGE_CHARS]}... ({len(text) - MESSAGE_CHARS} more characters)"


def trajectory(data: RunData, r: Any) -> dict[str, Any]:
    """What the report shows when a trajectory is opened: messages, the gold actions and the database paths
    that differ from the gold state (loaded by the page's script, shown as text, never as markup)."""
    messages = []
    for m in r.messages:
        messages.append({"role": m.role, "name": m.name, "error": m.error, "content": _cut(m.content),
                         "calls": [[c.name, _cut(c.arguments if isinstance(c.arguments, str) else
                                                 json.dumps(c.arguments, ensure_ascii=False))] for c in m.tool_calls]})
    task, domain = data.task(r), data.domains.get(r.domain)
    gold = [[a.name, json.dumps(a.arguments, ensure_ascii=False)] for a in task.gold.actions] if task else None
    diff = []
    if task is not None and domain is not None and r.parts is not None and not r.parts.db_match:
        diff = [[f"{row['table']}/{row['key']}", path, json.dumps(g, default=str), json.dumps(a, default=str)]
                for row in db_diff(domain, task, r) for path, g, a in row["paths"]]
    return {"messages": messages, "gold": gold, "outputs": [str(o) for o in task.gold.outputs] if task else [],
            "diff": diff}


def packed(trajectories: dict[str, Any]) -> str:
    """The trajectories as gzip + base64 JSON: a 1,392-trial run's conversations fit a few MB, and the page's
    script unpacks them (DecompressionStream) only when one is opened."""
    raw = json.dumps(trajectories, ensure_ascii=False, separators=(",", ":")).encode("utf-8")
    return base64.b64encode(gzip.compress(raw, compresslevel=9, mtime=0)).decode("ascii")


def render(runs: list[RunData], by: str = "emotion.family", spaces: dict[str, Any] | None = None) -> str:
    """The report of `runs` (each later run is also compared with the first: A vs B); `spaces` are the
    condition spaces installed (name -> space), which give the conditions' values in their order."""
    from jinja2 import Environment

    env = Environment(autoescape=True, trim_blocks=True, lstrip_blocks=True)
    env.filters["when"] = when
    env.filters["usage"] = trial_usage
    template = env.from_string(files(__package__).joinpath("templates/report.html.j2").read_text(encoding="utf-8"))
    views = []
    payload: dict[str, Any] = {}
    for ri, data in enumerate(runs):
        analysis = analyze(data, by)
        categories = {(t["task_id"], t["trial"]): t["category"] for t in analysis["trials"]}
        trials = []
        tasks: dict[str, dict[str, Any]] = {}
        for ti, r in enumerate(data.results):
            anchor = f"r{ri}-t{ti}"
            payload[anchor] = trajectory(data, r)
            trials.append({"anchor": anchor, "r": r, "category": categories.get((r.task_id, r.trial)),
                           "family": r.tags.get(by, "")})
            row = tasks.setdefault(r.task_id, {"task_id": r.task_id, "domain": r.domain, "family": r.tags.get(by, ""),
                                               "trials": [], "successes": 0})
            row["trials"].append(trials[-1])
            row["successes"] += int(r.success)
        views.append({
            "index": ri, "data": data, "meta": data.meta, "summary": data.summary, "color": COLORS[ri % len(COLORS)],
            "label": run_label(data),
            "heat_avg": heatmap(data, by, "avg"), "heat_pass": heatmap(data, by, "pass"),
            "heat_neg": unsatisfied_heatmap(data, by), "deltas": control_deltas(data, by),
            "rates": rate_bars(data), "scatter": scatter(data), "analysis": analysis,
            "conditions": [success_by(data, c["tag"], c["values"], c["groups"])
                           for c in condition_tags(spaces, data.results)],
            "usage": usage_view(data),
            "procedure": procedure_view(data, by),
            "tasks": list(tasks.values()), "trials": trials,
            "domains": sorted({r.domain for r in data.results}),
            "families": sorted({r.tags.get(by, "") for r in data.results} - {""}),
        })
    pairs = [versus(runs[0], other, by, i) for i, other in enumerate(runs[1:], start=1)]
    return template.render(runs=views, by=by, curves=pass_curve(runs), payload=packed(payload), pairs=pairs,
                           kmax=max([d.config.trials for d in runs] + [1]),
                           title="tau report: " + ", ".join(run_label(d) for d in runs))
