"""The report plugin's commands: `tau show RUN TASK` / `--failed` (added to the core `show`),
`tau analyze`, `tau report`, `tau compare` and `tau gate`. Every one reads through the stores
catalog (`--store`, `--db`, `--plugins` as the core reading commands)."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import click

from tau_emotion.core.cli import (
    command_pm,
    db_option,
    debug_option,
    guarded,
    plugins_option,
    store_option,
    writable_parent,
)
from tau_emotion.core.terminal import safe


def _open(db_path: str, store: str | None, extra: tuple[str, ...]) -> tuple[Any, Any]:
    from tau_emotion.core.runner import open_store

    pm = command_pm(extra)
    return open_store(pm, store, db_path, create=False), pm


def _load(run_id: str, db_path: str, store: str | None, extra: tuple[str, ...]) -> Any:
    from tau_emotion.plugins.report.reading import load_run

    opened, pm = _open(db_path, store, extra)
    return load_run(opened, run_id, pm, db_path)


# ----------------------------------------------------------------------------- tau show RUN TASK


def extend_show(cli: click.Group) -> None:
    """`tau show RUN [TASK] [--trial N] [--failed]`: the core listing, or the conversations of trials."""
    show = cli.commands.get("show")
    if show is None or getattr(show, "_tau_report", False):
        return
    show.params.insert(1, click.Argument(["task_id"], required=False))
    show.params[2:2] = [
        click.Option(["--trial", "trial"], type=int, default=None, help="Only this trial of TASK."),
        click.Option(["--failed", "failed"], is_flag=True, help="The conversations of every failed or errored trial."),
    ]
    plain = show.callback

    @guarded
    def callback(**kw: Any) -> None:
        task_id, trial, failed = kw.pop("task_id"), kw.pop("trial"), kw.pop("failed")
        if task_id is None and not failed:
            if trial is not None:
                raise click.UsageError("--trial needs a TASK")
            return plain(**kw)
        show_trials(kw["run_id"], task_id, trial, failed, kw["as_json"], kw["db_path"], kw["store"], kw["extra_plugins"])

    show.callback = callback
    show.help = (show.help or "") + " With TASK (and --trial N), or --failed: the conversations, reward parts " \
                                    "and database differences from the gold state."
    show._tau_report = True  # type: ignore[attr-defined]


def show_trials(run_id: str, task_id: str | None, trial: int | None, failed: bool, as_json: bool, db_path: str,
                store: str | None, extra: tuple[str, ...]) -> None:
    from tau_emotion.plugins.report.analysis import error_category
    from tau_emotion.plugins.report.reading import db_diff, trial_text

    data = _load(run_id, db_path, store, extra)
    chosen = [r for r in data.results
              if (task_id is None or r.task_id == task_id) and (trial is None or r.trial == trial)
              and (not failed or not r.success)]
    if task_id is not None and not chosen:
        known = sorted({r.task_id for r in data.results})
        from tau_emotion.core.registry import suggest

        raise click.ClickException(f"no trial of task '{task_id}'" + (f" #{trial}" if trial is not None else "")
                                   + f" in run {run_id}.{suggest(task_id, known)}")
    if as_json:
        out = []
        for r in chosen:
            task, domain = data.task(r), data.domains.get(r.domain)
            diff = db_diff(domain, task, r) if task and domain and r.parts and not r.parts.db_match else []
            out.append({**r.model_dump(mode="json"), "category": error_category(data, r), "db_diff": diff})
        click.echo(json.dumps(out, indent=2, default=str))
        return
    for r in chosen:
        click.echo(safe(trial_text(data, r, error_category(data, r)), multiline=True))  # model text: shown, not run
    click.echo(f"{len(chosen)} trial(s)" + (" failed" if failed else ""), err=True)


# ----------------------------------------------------------------------------- analyze


def print_analysis(result: dict[str, Any]) -> None:
    click.echo(f"run {result['run_id']}")
    cats = result["error_categories"]
    click.echo("error categories of failed trials: " + (", ".join(f"{k}={v}" for k, v in cats.items()) or "none"))
    audit = result["unsatisfied_audit"]
    click.echo(f"UNSATISFIED audit by {audit['by']}:")
    for name, g in audit["groups"].items():
        fq = "-" if g["false_quit_rate"] is None else f"{g['false_quit_rate']:.1%}"
        mq = "-" if g["missed_quit_rate"] is None else f"{g['missed_quit_rate']:.1%}"
        click.echo(f"  {name:16} trials={g['trials']:<4} quits={g['quits']:<4} quit rate={g['quit_rate']:.1%}  "
                   f"false quits={g['false_quits']} ({fq} of quits)  missed quits={g['missed_quits']} ({mq} of tolerated)")
    h = result["hallucination_audit"]
    rate = "-" if h["rate"] is None else f"{h['rate']:.1%}"
    click.echo(f"user-hallucination audit: {h['flagged_messages']} of {h['user_messages']} user messages ({rate}) "
               f"state ids or numbers not in the task's facts" + (f": {', '.join(h['trials'][:10])}" if h["trials"] else ""))
    if "judge" in result:
        j = result["judge"]
        click.echo(f"judge {j['model']} on {j['judged']} failed trial(s): "
                   + ", ".join(f"{k}={v}" for k, v in j["counts"].items()))
    tq = result["tool_calls_vs_questions"]
    if tq["more_tool_calls_than_questions"] is not None:
        click.echo(f"trajectories with more tool calls than questions: {tq['more_tool_calls_than_questions']:.1%}")


# ----------------------------------------------------------------------------- registration


def register(cli: click.Group) -> None:
    extend_show(cli)
    for command in (analyze_command, report_command, compare_command, gate_command):
        if command.name not in cli.commands:
            cli.add_command(command)


by_option = click.option("--by", default="emotion.family", show_default=True,
                         help="The result tag to break the audits and comparisons down by.")


@click.command("analyze")
@click.argument("run_id")
@click.option("--json", "as_json", is_flag=True)
@click.option("--judge-model", default=None, help="Also ask this model, per failed trial, about intent misreading "
                                                  "and emotion neglect.")
@click.option("--judge-api-base", default=None, help="The judge model's endpoint (OpenAI-compatible).")
@click.option("--judge-api-key", default=None, help="The judge model's key (or TAU_API_KEY); never stored.")
@click.option("--judge-client", default=None, help="Model-client plugin for the judge (default: the default client).")
@by_option
@store_option
@db_option
@plugins_option
@debug_option
@guarded
def analyze_command(run_id: str, as_json: bool, judge_model: str | None, judge_api_base: str | None,
                    judge_api_key: str | None, judge_client: str | None, by: str, db_path: str, store: str | None,
                    extra_plugins: tuple[str, ...]) -> None:
    """Error categories of failed trials, the UNSATISFIED audit and the user-hallucination audit
    (with --judge-model, an LLM's verdicts on intent misreading and emotion neglect too)."""
    from tau_emotion.plugins.report.analysis import analyze

    data = _load(run_id, db_path, store, extra_plugins)
    result = analyze(data, by)
    if judge_model:
        import asyncio

        from tau_emotion.core.models import ModelSettings
        from tau_emotion.plugins.report.judge import judge

        settings = ModelSettings.for_role("judge", judge_model, judge_api_base, judge_api_key, client=judge_client)
        result["judge"] = asyncio.run(judge(command_pm(extra_plugins), settings, data))
    if as_json:
        click.echo(json.dumps(result, indent=2))
    else:
        print_analysis(result)


@click.command("report")
@click.argument("run_ids", nargs=-1, required=True)
@click.option("--out", type=click.Path(dir_okay=False), default="report.html", show_default=True)
@by_option
@store_option
@db_option
@plugins_option
@debug_option
@guarded
def report_command(run_ids: tuple[str, ...], out: str, by: str, db_path: str, store: str | None,
                   extra_plugins: tuple[str, ...]) -> None:
    """One self-contained HTML file: summaries, heat maps, audits, curves and a trajectory viewer."""
    from tau_emotion.plugins.report.html import render

    writable_parent(out, "--out")
    runs = [_load(run_id, db_path, store, extra_plugins) for run_id in run_ids]
    Path(out).write_text(render(runs, by), encoding="utf-8")
    click.echo(f"wrote {out}", err=True)


def _compare(baseline: str, candidate: str, by: str, db_path: str, store: str | None, extra: tuple[str, ...]) -> dict:
    from tau_emotion.plugins.report.compare import compare
    from tau_emotion.plugins.report.reading import load_run

    opened, pm = _open(db_path, store, extra)
    a, b = (load_run(opened, r, None, db_path) for r in (baseline, candidate))
    return {"baseline": baseline, "candidate": candidate, **compare(a.results, b.results, by)}


def _line(scope: str, s: dict[str, Any], k: int) -> str:
    if not s.get("n_tasks"):
        return f"  {scope:22} no common tasks"
    parts = [f"{scope:22} tasks={s['n_tasks']:<4}"]
    for metric in ("avg_at_k", f"pass^{k}"):
        m = s[metric]
        parts.append(f"{metric} {m['baseline']:.3f}->{m['candidate']:.3f} ({m['delta']:+.3f} "
                     f"[{m['ci95'][0]:+.3f}, {m['ci95'][1]:+.3f}])")
    mc = s["mcnemar"]
    parts.append(f"McNemar lost={mc['lost']} won={mc['won']} p={mc['p_value']:.3g}")
    return "  " + "  ".join(parts)


@click.command("compare")
@click.argument("baseline")
@click.argument("candidate")
@click.option("--json", "as_json", is_flag=True)
@by_option
@store_option
@db_option
@plugins_option
@debug_option
@guarded
def compare_command(baseline: str, candidate: str, as_json: bool, by: str, db_path: str, store: str | None,
                    extra_plugins: tuple[str, ...]) -> None:
    """Deltas of Avg@k and Pass^k (candidate - baseline) with paired bootstrap intervals, McNemar, flipped tasks."""
    result = _compare(baseline, candidate, by, db_path, store, extra_plugins)
    if as_json:
        click.echo(json.dumps(result, indent=2))
        return
    k = result["k"]
    click.echo(f"{candidate} vs {baseline} (k={k}; delta = candidate - baseline, 95% paired bootstrap over tasks)")
    click.echo(_line("all", result["overall"], k))
    for name, s in result["by_domain"].items():
        click.echo(_line(f"domain {name}", s, k))
    for name, s in result["by_tag"]["groups"].items():
        click.echo(_line(f"{by}={name}", s, k))
    flipped = result["overall"].get("flipped", {})
    click.echo("flipped to failure: " + (", ".join(flipped.get("to_failure", [])) or "none"))
    click.echo("flipped to success: " + (", ".join(flipped.get("to_success", [])) or "none"))
    for side in ("only_baseline", "only_candidate"):
        if result[side]:
            click.echo(f"{side.replace('_', ' ')}: {len(result[side])} task(s) not compared")


@click.command("gate")
@click.option("--baseline", required=True, help="The run to hold the candidate to.")
@click.option("--candidate", required=True, help="The run under test.")
@click.option("--max-drop", default=0.02, show_default=True, type=click.FloatRange(0),
              help="The largest drop of a metric allowed before a significant drop fails the gate.")
@click.option("--junit", "junit_path", type=click.Path(dir_okay=False), default=None, help="Write JUnit XML here.")
@by_option
@store_option
@db_option
@plugins_option
@debug_option
@guarded
def gate_command(baseline: str, candidate: str, max_drop: float, junit_path: str | None, by: str, db_path: str,
                 store: str | None, extra_plugins: tuple[str, ...]) -> None:
    """Exit 1 when Avg@k or Pass^k (overall or in a domain) drops by more than --max-drop, significantly."""
    from tau_emotion.plugins.report.compare import gate, junit

    if not math.isfinite(max_drop):  # NaN compares false with everything: a gate that always passes
        raise click.BadParameter(f"{max_drop} is not a finite number", param_hint="--max-drop")
    if junit_path:
        writable_parent(junit_path, "--junit")

    result = _compare(baseline, candidate, by, db_path, store, extra_plugins)
    if not result["overall"].get("n_tasks"):
        raise click.ClickException(f"runs {baseline} and {candidate} share no tasks: nothing to gate")
    checks = gate(result, max_drop)
    if junit_path:
        Path(junit_path).write_text(junit(checks), encoding="utf-8")
    for c in checks:
        click.echo(("FAIL " if c["failed"] else "ok   ") + c["message"])
    failed = [c for c in checks if c["failed"]]
    if failed:
        click.echo(f"gate failed: {len(failed)} significant drop(s): "
                   + "; ".join(f"{c['scope']} {c['metric']} {c['delta']:+.3f}" for c in failed), err=True)
        raise SystemExit(1)
    click.echo(f"gate passed: no metric of {candidate} drops more than {max_drop} below {baseline}", err=True)
