"""The report's procedure section: per-rule violation rates by domain and by a tag (the emotion family), and
Pass^1 under the paper's and the strict scoring side by side, read from each trial's stored procedure part
(core/procedure.py), so a run made under either scoring shows both."""

from __future__ import annotations

from collections import defaultdict
from typing import Any

from tau_emotion.core.models import EpisodeResult
from tau_emotion.core.procedure import RULES, rescored
from tau_emotion.plugins.report.reading import RunData


def _rates(results: list[EpisodeResult]) -> dict[str, Any]:
    measured = [r for r in results if r.status == "ok" and r.parts is not None and r.parts.procedure is not None]
    if not measured:
        return {"trials": 0}
    out: dict[str, Any] = {"trials": len(measured),
                           "ok": sum(r.parts.procedure.procedure_ok for r in measured) / len(measured)}
    for rule in RULES:
        applies = [r.parts.procedure for r in measured if rule in r.parts.procedure.rules]
        out[rule] = sum(any(v.rule == rule for v in p.violations) for p in applies) / len(applies) if applies else None
    for scoring in ("paper", "strict"):
        rewards = [rescored(r.reward, r.parts, scoring) for r in measured]
        known = [x for x in rewards if x is not None]
        out[scoring] = sum(x == 1.0 for x in known) / len(known) if known else None
    return out


def procedure_view(data: RunData, by: str) -> dict[str, Any]:
    """Rows for the section: the whole run, each domain, each (domain, `by` value); empty when nothing was measured."""
    overall = _rates(data.results)
    if not overall["trials"]:
        return {"rows": []}
    by_domain: dict[str, list[EpisodeResult]] = defaultdict(list)
    by_pair: dict[tuple[str, str], list[EpisodeResult]] = defaultdict(list)
    for r in data.results:
        by_domain[r.domain].append(r)
        by_pair[(r.domain, r.tags.get(by, "(none)"))].append(r)
    rows = [{"scope": "all", "group": "", **overall}]
    rows += [{"scope": d, "group": "", **_rates(rs)} for d, rs in sorted(by_domain.items())]
    rows += [{"scope": d, "group": g, **_rates(rs)} for (d, g), rs in sorted(by_pair.items())]
    return {"rows": [r for r in rows if r["trials"]], "rules": list(RULES),
            "scoring": getattr(data.config, "scoring", "paper") if data.config is not None else "paper"}
