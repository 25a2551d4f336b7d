"""The `metrics` plugin: Avg@k and Pass^k (tau-bench's unbiased estimator) with bootstrap intervals.

Over n trials of a task with c successes: Avg@n is the mean of c/n over tasks, Pass^k the mean
of C(c,k)/C(n,k). Errored trials count as failures (and are reported); intervals resample tasks.
Every figure is broken down by domain and by each result tag (`by_tag`: tag -> value -> group),
so a plugin that tags results (`tau_task_tags`) gets its breakdown without a metric of its own.
Every group also carries `transfer_rate` (the share of its trials that ended in a handover to a person)
and `unneeded_transfer_rate` (the share that handed over when the gold does not): a handover the gold does
not need scores 0, never -1, so giving up by transferring is in sight next to the rewards (docs/scoring.md).
The estimators live in `tau_emotion.core.statistics`, so other plugins compare their own groups the
same way without importing this one.
"""

from __future__ import annotations

import copy
from collections import defaultdict
from collections.abc import Callable
from statistics import mean
from typing import Any

from tau_emotion.core import hookimpl
from tau_emotion.core.models import EpisodeResult, RunConfig
from tau_emotion.core.statistics import score_group


def breakdown(results: list[EpisodeResult], key: Callable[[EpisodeResult], str | None], k_max: int,
              seed: int = 0, score: Callable[..., dict[str, Any]] = score_group) -> dict[str, Any]:
    groups: dict[str, list[EpisodeResult]] = defaultdict(list)
    for r in results:
        name = key(r)
        if name is not None:
            groups[name].append(r)
    return {name: score(rs, k_max, seed) for name, rs in sorted(groups.items())}


def handed_over(result: EpisodeResult) -> bool:
    """The trial ended in a terminal tool (a transfer to a person: the `stop` plugin's `terminal_tool`), or made
    the gold's own."""
    return result.termination.reason == "terminal_tool" or bool(result.parts and result.parts.terminal_done)


def transfer_rates(results: list[EpisodeResult]) -> dict[str, float]:
    """Handovers among the trials, and those the gold does not need (no terminal tool in it: `terminal_done` None)."""
    if not results:
        return {}
    handovers = [r for r in results if handed_over(r)]
    unneeded = [r for r in handovers if r.parts is None or r.parts.terminal_done is None]
    return {"transfer_rate": round(len(handovers) / len(results), 4),
            "unneeded_transfer_rate": round(len(unneeded) / len(results), 4)}


def _scored_once() -> Callable[..., dict[str, Any]]:
    """`score_group`, computed once per group of the same results in the same order (the one domain of a run,
    a tag every result has alike): the bootstrap is most of a summary's time, and its figures depend only
    on the group and the seed."""
    memo: dict[tuple[Any, ...], dict[str, Any]] = {}

    def score(results: list[EpisodeResult], k_max: int, seed: int = 0) -> dict[str, Any]:
        key = (*((r.domain, r.task_id, r.trial) for r in results), k_max, seed)  # one result per key in a run
        if key not in memo:
            memo[key] = {**score_group(results, k_max, seed), **transfer_rates(results)}
        return copy.deepcopy(memo[key])

    return score


def conversation_stats(results: list[EpisodeResult]) -> dict[str, Any]:
    if not results:
        return {}
    tokens = sum(r.usage.get("total_tokens", 0.0) for r in results)
    cost = sum(r.usage.get("cost", 0.0) for r in results)
    return {
        "mean_steps": round(mean(r.n_steps for r in results), 3),
        "mean_user_turns": round(mean(r.n_user_turns for r in results), 3),
        "tool_calls_per_user_turn": round(
            sum(r.n_tool_calls for r in results) / max(1, sum(r.n_user_turns for r in results)), 3),
        "total_tokens": tokens,
        "total_cost": round(cost, 6),
    }


def core_metrics(results: list[EpisodeResult], config: RunConfig) -> dict[str, Any]:
    score = _scored_once()
    overall = score(results, config.trials, config.seed)
    overall.pop("n_tasks", None)
    overall["by_domain"] = breakdown(results, lambda r: r.domain, config.trials, config.seed, score)
    tags = sorted({key for r in results for key in r.tags})
    overall["by_tag"] = {tag: breakdown(results, lambda r, tag=tag: r.tags.get(tag), config.trials, config.seed, score)
                         for tag in tags}
    overall["conversation"] = conversation_stats(results)
    return overall


def procedure_rates(results: list[EpisodeResult]) -> dict[str, Any]:
    """Of the trials whose domain declares a procedure: the share that followed it, and per rule the share with a
    violation of that rule (trials of domains that do not declare the rule are not counted for it)."""
    from tau_emotion.core.procedure import RULES

    measured = [r.parts.procedure for r in results if r.parts is not None and r.parts.procedure is not None]
    if not measured:
        return {"n_trials": 0}
    rates = {}
    for rule in RULES:
        applies = [p for p in measured if rule in p.rules]
        if applies:
            rates[rule] = round(sum(any(v.rule == rule for v in p.violations) for p in applies) / len(applies), 4)
    return {"n_trials": len(measured), "procedure_ok_rate": round(sum(p.procedure_ok for p in measured) / len(measured), 4),
            "violation_rates": rates}


def procedure_metrics(results: list[EpisodeResult], config: RunConfig) -> dict[str, Any]:
    """The `procedure` part of the summary: the run's scoring, `procedure_ok_rate` and the per-rule violation rates
    overall, by domain and by every tag (emotion family, each condition dimension), and Avg@k / Pass^k under the
    strict scoring (equal to the reward's figures in a strict run), so a paper run shows both."""
    from tau_emotion.core.procedure import results_under

    score = _scored_once()
    strict = results_under(results, "strict", strict=False)
    out: dict[str, Any] = {"scoring": config.scoring, **procedure_rates(results)}
    if not out["n_trials"]:
        return {"procedure": out}

    def figures(group: list[EpisodeResult]) -> dict[str, Any]:
        g = score(group, config.trials, config.seed)
        return {k: g[k] for k in ("avg_at_k", "pass_hat_k", "mean_reward") if k in g}

    out["strict"] = figures(strict)
    by_domain = defaultdict(list)
    for r, s in zip(results, strict, strict=True):
        by_domain[r.domain].append((r, s))
    out["by_domain"] = {d: {**procedure_rates([r for r, _ in pairs]), "strict": figures([s for _, s in pairs])}
                        for d, pairs in sorted(by_domain.items())}
    tags = sorted({key for r in results for key in r.tags})
    out["by_tag"] = {tag: {name: procedure_rates(group) for name, group in sorted(groups.items())}
                     for tag in tags if (groups := _grouped(results, tag))}
    return {"procedure": out}


def _grouped(results: list[EpisodeResult], tag: str) -> dict[str, list[EpisodeResult]]:
    groups: dict[str, list[EpisodeResult]] = defaultdict(list)
    for r in results:
        if tag in r.tags:
            groups[r.tags[tag]].append(r)
    return groups


@hookimpl
def tau_register_metrics(register):
    register("scores", core_metrics)
    register("procedure", procedure_metrics)


@hookimpl
def tau_task_tags(task):
    """Tag every result with its task's number of intents (`intents=2`): longer tasks fail more often
    under any condition, so a comparison across conditions should look at it (`by_tag["intents"]`)."""
    return {"intents": str(len(task.user.intents) or 1)}


@hookimpl(tryfirst=True)
def tau_summary_rows(summary):
    """All tasks, each domain, then one row per intent count, so the confound is in sight next to any other
    breakdown. A summary without this metric's keys (the plugin was blocked when it was made) gives none."""
    if "avg_at_k" not in summary:
        return []
    rows = [("all", summary), *summary.get("by_domain", {}).items()]
    groups = summary.get("by_tag", {}).get("intents", {})
    if len(groups) > 1:
        rows += [(f"intents={k}", g) for k, g in sorted(groups.items(), key=lambda kv: int(kv[0]))]
    return rows


@hookimpl
def tau_summary_columns(summary):
    """tasks, Avg@k, Pass^1..k, mean reward and the share of negative endings, of a group as `score_group` makes it."""
    if "avg_at_k" not in summary:
        return []
    nan = float("nan")
    ks = list(summary.get("pass_hat_k", {}))
    if len(ks) > 5:  # 80 columns hold five: 1, 2, the middle, k-1 and k (the JSON has every k)
        ks = [ks[0], ks[1], ks[len(ks) // 2], ks[-2], ks[-1]]
    short = len(ks) > 3  # "P^k" headers keep six figure columns inside 80 characters
    return [("tasks", lambda g: str(g.get("n_tasks", ""))),
            ("Avg@k", lambda g: f"{g.get('avg_at_k', nan):.3f}"),
            *((f"{'P' if short else 'Pass'}^{k}", lambda g, k=k: f"{g.get('pass_hat_k', {}).get(k, nan):.3f}")
              for k in ks),
            ("reward", lambda g: f"{g.get('mean_reward', nan):+.3f}"),
            ("neg.end", lambda g: f"{g.get('negative_end_rate', 0):.1%}"),
            *procedure_columns(summary)]


def procedure_columns(summary: dict[str, Any]) -> list[tuple[str, Callable[[dict[str, Any]], str]]]:
    """`proc.ok`: the share of trials that followed the domain's procedure, on the all and per-domain rows (the
    figures live under `summary["procedure"]`, so a row's group is found by identity); none when nothing was measured."""
    procedure = summary.get("procedure") or {}
    if not procedure.get("n_trials"):
        return []
    of = {id(summary): procedure, **{id(g): procedure.get("by_domain", {}).get(d, {})
                                     for d, g in summary.get("by_domain", {}).items()}}

    def ok(g: dict[str, Any]) -> str:
        rate = of.get(id(g), {}).get("procedure_ok_rate")
        return "" if rate is None else f"{rate:.3f}"

    return [("proc.ok", ok)]


@hookimpl
def tau_run_row(run):
    """`tau runs`' Avg@k of a finished run."""
    s = run.get("summary") or {}
    return {"Avg@k": f"{s['avg_at_k']:.3f}" if "avg_at_k" in s else "-"}
