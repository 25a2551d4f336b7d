"""Tracer's collection step: run an agent model against the emotional user on a train split and keep
the trajectories that earned reward +1.

Collection is an ordinary run (`core/runner.py`): every trial is stored as it ends, so `--resume`,
the progress bar and the model client's retries all work as for `tau run`. What this module adds is
the paper's defaults (50 agent steps, the user simulator at temperature 0), the choice of domains
(`--preset high|low`), the selection of what is kept (+1 only, at most `cap` per domain, drawn
round-robin over emotion families so under-represented families are kept first), and the
interaction statistics the paper reports per trajectory (tool calls, the agent's follow-up
questions, whether tool calls outnumber questions). The selection is saved in the run's summary
under `collect`, where `tau export-sft` finds it.
"""

from __future__ import annotations

import random
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from typing import Any

from tau_emotion.core.errors import TauError
from tau_emotion.core.models import EpisodeResult, Message

#: the paper's seen domains (Tracer-Low's training data) and unseen ones (held out for transfer); the `suites`
#: plugin names the same packs in its tau-emotion-seen/-unseen suites (tests/tracer/test_mixture.py checks they agree)
SEEN = ("airline", "retail", "telecom", "telehealth")
UNSEEN = ("restaurant", "bank", "school", "travel", "movie", "basketball")
#: the paper's low-resource set; a name matches an installed domain of that name or ending in "-NAME"
LOW_PRESET = SEEN
#: the domains of each preset: high is the paper's ten (Tracer-High), low its four seen ones (Tracer-Low)
PRESET_DOMAINS = {"high": (*SEEN, *UNSEEN), "low": LOW_PRESET}
PRESETS = tuple(PRESET_DOMAINS)
MAX_STEPS = 50
SUMMARY_KEY = "collect"
FAMILY_TAG = "emotion.family"
NO_FAMILY = "(none)"


class CollectError(TauError):
    """Collection cannot start: no domain, no train split, a bad preset."""


def is_question(message: Message) -> bool:
    """An agent message to the user (no tool call) that asks something."""
    return message.role == "assistant" and not message.tool_calls and "?" in (message.content or "")


@dataclass(frozen=True)
class TrajectoryStats:
    tool_calls: int
    questions: int

    @property
    def tools_outnumber_questions(self) -> bool:
        return self.tool_calls > self.questions

    @classmethod
    def of(cls, result: EpisodeResult) -> TrajectoryStats:
        calls = sum(len(m.tool_calls) for m in result.messages if m.role == "assistant")
        return cls(tool_calls=calls, questions=sum(is_question(m) for m in result.messages))


def resolve_domains(installed: dict[str, list[str]], names: list[str], preset: str | None,
                    split: str) -> tuple[list[str], list[str]]:
    """The domains to collect from and notes on what was left out.

    `installed` maps each installed domain to its splits. `high` is the paper's ten domains, `low` its
    four seen ones (airline, retail, telecom, telehealth), each the installed domain of that name (or
    the first whose name ends in `-NAME`); one without `split` is skipped with a note.
    """
    notes: list[str] = []
    chosen = list(names)
    if preset in PRESET_DOMAINS:
        for want in PRESET_DOMAINS[preset]:
            matches = [d for d in installed if d == want] or sorted(d for d in installed if d.endswith("-" + want))
            if matches:
                chosen.append(matches[0])
            else:
                notes.append(f"preset {preset}: no installed '{want}' domain (install its pack to include it)")
    elif preset is not None:
        raise CollectError(f"unknown preset '{preset}' (choose from: {', '.join(PRESETS)})")
    out: list[str] = []
    for name in dict.fromkeys(chosen):
        if name not in installed:
            raise CollectError(f"unknown domain '{name}' (installed: {', '.join(sorted(installed)) or 'none'})")
        if split not in installed[name]:
            if name in names:
                raise CollectError(f"domain '{name}' has no '{split}' split (it has: {', '.join(installed[name])})")
            notes.append(f"{name}: no '{split}' split, skipped")
            continue
        out.append(name)
    if not out:
        raise CollectError(f"no domain to collect from: name domains or pass --preset ({', '.join(PRESETS)})")
    return out, notes


def family(result: EpisodeResult) -> str:
    return result.tags.get(FAMILY_TAG, NO_FAMILY)


def select_kept(results: list[EpisodeResult], cap: int | None, rebalance: bool = True,
                seed: int = 0) -> list[EpisodeResult]:
    """The +1 trajectories to keep: at most `cap` per domain.

    With `rebalance`, a capped domain is filled round-robin over emotion families, the family with
    the fewest kept so far first, so the cap trims the over-represented families; otherwise in
    task order.
    """
    good = [r for r in results if r.status == "ok" and r.reward == 1]
    by_domain: dict[str, list[EpisodeResult]] = defaultdict(list)
    for r in sorted(good, key=lambda r: (r.domain, r.task_id, r.trial)):
        by_domain[r.domain].append(r)
    kept: list[EpisodeResult] = []
    for domain, items in by_domain.items():
        if cap is None or len(items) <= cap:
            kept.extend(items)
        elif not rebalance:
            kept.extend(items[:cap])
        else:
            kept.extend(_round_robin(items, cap, random.Random(f"{seed}:{domain}")))
    return kept


def _round_robin(items: list[EpisodeResult], cap: int, rng: random.Random) -> list[EpisodeResult]:
    pools: dict[str, list[EpisodeResult]] = defaultdict(list)
    for r in items:
        pools[family(r)].append(r)
    for pool in pools.values():
        rng.shuffle(pool)
    taken: Counter[str] = Counter()
    out: list[EpisodeResult] = []
    while len(out) < cap:
        open_families = [f for f, pool in pools.items() if pool]
        smallest = min(open_families, key=lambda f: (taken[f], f))
        out.append(pools[smallest].pop())
        taken[smallest] += 1
    return sorted(out, key=lambda r: (r.task_id, r.trial))


@dataclass
class CollectReport:
    """What a collection run produced and kept, with the paper's interaction statistics."""

    run_id: str
    cap: int | None
    rows: list[dict[str, Any]] = field(default_factory=list)
    families: dict[str, int] = field(default_factory=dict)
    kept: list[tuple[str, int]] = field(default_factory=list)
    trajectories: list[dict[str, Any]] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        return {"cap": self.cap, "rows": self.rows, "families": self.families,
                "kept": [list(k) for k in self.kept], "trajectories": self.trajectories}


def report(run_id: str, results: list[EpisodeResult], kept: list[EpisodeResult], cap: int | None) -> CollectReport:
    rep = CollectReport(run_id=run_id, cap=cap, kept=[(r.task_id, r.trial) for r in kept])
    for r in kept:
        stats = TrajectoryStats.of(r)
        rep.trajectories.append({"task_id": r.task_id, "trial": r.trial, "domain": r.domain, "family": family(r),
                                 "tool_calls": stats.tool_calls, "questions": stats.questions,
                                 "tools_outnumber_questions": stats.tools_outnumber_questions})
    domains = sorted({r.domain for r in results})
    for scope in [*domains, "all"]:
        ran = [r for r in results if scope in ("all", r.domain)]
        chosen = [r for r in kept if scope in ("all", r.domain)]
        stats = [TrajectoryStats.of(r) for r in chosen]
        n = len(stats) or 1
        rep.rows.append({
            "domain": scope, "trials": len(ran),
            "success": sum(r.status == "ok" and r.reward == 1 for r in ran),
            "unsatisfied": sum(r.reward == -1 for r in ran),
            "errors": sum(r.status == "error" for r in ran),
            "kept": len(chosen),
            "tool_calls": round(sum(s.tool_calls for s in stats) / n, 2),
            "questions": round(sum(s.questions for s in stats) / n, 2),
            "tools_gt_questions": round(sum(s.tools_outnumber_questions for s in stats) / n, 3),
        })
    rep.families = dict(sorted(Counter(family(r) for r in kept).items(), key=lambda kv: (-kv[1], kv[0])))
    return rep


def print_report(rep: CollectReport) -> None:
    from rich.console import Console
    from rich.table import Table

    table = Table(title=f"collect {rep.run_id}" + (f" (cap {rep.cap} per domain)" if rep.cap else ""))
    for name in ("domain", "trials", "+1", "-1 (unsat.)", "errors", "kept", "tool calls", "questions",
                 "calls > questions"):
        table.add_column(name, justify="left" if name == "domain" else "right")
    for row in rep.rows:
        table.add_row(row["domain"], str(row["trials"]), str(row["success"]), str(row["unsatisfied"]),
                      str(row["errors"]), str(row["kept"]), f"{row['tool_calls']:.2f}", f"{row['questions']:.2f}",
                      f"{row['tools_gt_questions']:.1%}")
    console = Console()
    console.print(table)
    total = sum(rep.families.values()) or 1
    fams = Table(title="families kept")
    fams.add_column("family")
    fams.add_column("kept", justify="right")
    fams.add_column("share", justify="right")
    for name, count in rep.families.items():
        fams.add_row(name, str(count), f"{count / total:.1%}")
    console.print(fams)


def kept_keys(summary: dict[str, Any] | None) -> set[tuple[str, int]] | None:
    """The (task id, trial) pairs a collection kept, or None when the run was not a collection."""
    block = (summary or {}).get(SUMMARY_KEY)
    if not block:
        return None
    return {(task_id, int(trial)) for task_id, trial in block["kept"]}


def collect_config(domains: list[str], owners: list[str], *, split: str, agent: str, user: str, trials: int, max_steps: int,
                   n_tasks: int | None, task_ids: list[str], concurrency: int, seed: int,
                   options: dict[str, dict[str, Any]], extra_plugins: list[str], store: str | None) -> Any:
    """The `RunConfig` of a collection: the emotion plugin (which pulls in `unsatisfied`) and the plugins
    that own the domains."""
    from tau_emotion.core.manager import Selection
    from tau_emotion.core.models import RunConfig

    plugins = Selection.parse(["emotion", *owners, *extra_plugins]).items()
    return RunConfig(plugins=plugins, domains=domains, split=split, agent=agent, user=user, trials=trials,
                     max_steps=max_steps, n_tasks=n_tasks, task_ids=task_ids, concurrency=concurrency, seed=seed,
                     options=options, store=store)


def finish(run: Any, summary: dict[str, Any], cap: int | None, rebalance: bool) -> CollectReport:
    """Select what a finished collection keeps and save that selection in the run's summary."""
    results = run.store.results(run.run_id)
    kept = select_kept(results, cap, rebalance, seed=run.config.seed)
    rep = report(run.run_id, results, kept, cap)
    run.store.save_summary(run.run_id, {**summary, SUMMARY_KEY: rep.to_json()})
    return rep
