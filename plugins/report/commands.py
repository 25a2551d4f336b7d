"""The report plugin's commands: `tau show RUN TASK` / `--failed` (added to the core `show`),
`tau analyze`, `tau report`, `tau compare` and `tau gate`. Every one reads through the stores
catalog (`--store`, `--db`, `--plugins` as the core reading commands)."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import click

from tau_emotion.core.plugin_cli import (
    command_pm,
    db_option,
    debug_option,
    guarded,
    insert_params,
    plugins_option,
    role_model_params,
    role_settings_from,
    store_option,
    unreadable,
    unreadable_error,
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
    insert_params(show, [click.Argument(["task_id"], required=False),
                         click.Option(["--trial", "trial"], type=int, default=None, help="Only this trial of TASK."),
                         click.Option(["--failed", "failed"], is_flag=True,
                                      help="The conversations of every failed or errored trial.")], before="as_json")
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
@click.option("--json", "as_json", is_flag=True, help="The analyses as JSON.")
@role_model_params("judge")
@by_option
@store_option
@db_option
@plugins_option
@debug_option
@guarded
def analyze_command(run_id: str, as_json: bool, by: str, db_path: str, store: str | None,
                    extra_plugins: tuple[str, ...], **judge_options: Any) -> None:
    """Error categories of failed trials, the UNSATISFIED audit and the user-hallucination audit
    (with --judge-model, an LLM's verdicts on intent misreading and emotion neglect too)."""
    from tau_emotion.plugins.report.analysis import analyze

    data = _load(run_id, db_path, store, extra_plugins)
    result = analyze(data, by)
    settings = role_settings_from("judge", judge_options)
    if settings is not None:
        import asyncio

        from tau_emotion.plugins.report.judge import judge

        result["judge"] = asyncio.run(judge(command_pm(extra_plugins), settings, data))
    if as_json:
        click.echo(json.dumps(result, indent=2))
    else:
        print_analysis(result)


@click.command("report")
@click.argument("run_ids", nargs=-1, required=True)
@click.option("--out", type=click.Path(dir_okay=False), default="report.html", show_default=True,
              help="The HTML file to write.")
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
    lost = {data.run_id: unreadable(data.results) for data in runs}
    if any(lost.values()):  # its figures count those rows as errored trials
        raise unreadable_error(sum(lost.values()), ",".join(k for k, v in lost.items() if v), "the report's figures")


def _compare(baseline: str, candidate: str, by: str, db_path: str, store: str | None, extra: tuple[str, ...]) -> dict:
    from tau_emotion.plugins.report.compare import compare
    from tau_emotion.plugins.report.reading import load_run

    opened, pm = _open(db_path, store, extra)
    a, b = (load_run(opened, r, None, db_path) for r in (baseline, candidate))
    return {"baseline": a.run_id, "candidate": b.run_id, **compare(a.results, b.results, by)}


SCOPE_WIDTH = 22


def _lines(scope: str, s: dict[str, Any], k: int) -> list[str]:
    """One scope of a comparison as rows of at most 80 columns: a row per metric, then McNemar."""
    if not s.get("n_tasks"):
        return [f"{scope[:SCOPE_WIDTH]:{SCOPE_WIDTH}} no common tasks"]
    head = [] if len(scope) <= SCOPE_WIDTH else [scope]  # a long scope gets its own line
    first = f"{scope if not head else '':{SCOPE_WIDTH}} {s['n_tasks']:>5}"
    rows = []
    for i, (metric, label) in enumerate((("avg_at_k", "Avg@k"), (f"pass^{k}", f"Pass^{k}"))):
        m = s[metric]
        rows.append(f"{first if i == 0 else '':{SCOPE_WIDTH + 6}}  {label:7} {m['baseline']:6.3f} {m['candidate']:6.3f} "
                    f"{m['delta']:+7.3f}  [{m['ci95'][0]:+.3f}, {m['ci95'][1]:+.3f}]")
    mc = s["mcnemar"]
    rows.append(f"{'':{SCOPE_WIDTH + 6}}  McNemar lost={mc['lost']} won={mc['won']} p={mc['p_value']:.3g}")
    return head + rows


@click.command("compare")
@click.argument("baseline")
@click.argument("candidate")
@click.option("--json", "as_json", is_flag=True, help="The comparison as JSON.")
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
    baseline, candidate = result["baseline"], result["candidate"]
    if as_json:
        click.echo(json.dumps(result, indent=2))
        return
    k = result["k"]
    click.echo(f"candidate {candidate} vs baseline {baseline}")
    click.echo(f"(k={k}; delta = candidate - baseline, 95% paired bootstrap over tasks)")
    click.echo(f"{'scope':{SCOPE_WIDTH}} {'tasks':>5}  {'metric':7} {'base':>6} {'cand':>6} {'delta':>7}  95% CI")
    scopes = [("all", result["overall"]), *((f"domain {n}", s) for n, s in result["by_domain"].items()),
              *((f"{by}={n}", s) for n, s in result["by_tag"]["groups"].items())]
    for name, s in scopes:
        for line in _lines(name, s, k):
            click.echo(line)
    flipped = result["overall"].get("flipped", {})
    click.echo("flipped to failure: " + (", ".join(flipped.get("to_failure", [])) or "none"))
    click.echo("flipped to success: " + (", ".join(flipped.get("to_success", [])) or "none"))
    for side in ("only_baseline", "only_candidate"):
        if result[side]:
            click.echo(f"{side.replace('_', ' ')}: {len(result[side])} task(s) not compared")


@click.command("gate")
@click.argument("runs", nargs=-1, metavar="BASELINE CANDIDATE")
@click.option("--baseline", "baseline_opt", default=None, help="The run to hold the candidate to (or the first argument).")
@click.option("--candidate", "candidate_opt", default=None, help="The run under test (or the second argument).")
@click.option("--max-drop", default=0.02, show_default=True, type=click.FloatRange(0),
              help="The largest drop of a metric allowed before a significant drop fails the gate.")
@click.option("--junit", "junit_path", type=click.Path(dir_okay=False), default=None, help="Write JUnit XML here.")
@by_option
@store_option
@db_option
@plugins_option
@debug_option
@guarded
def gate_command(runs: tuple[str, ...], baseline_opt: str | None, candidate_opt: str | None, max_drop: float,
                 junit_path: str | None, by: str, db_path: str, store: str | None, extra_plugins: tuple[str, ...]) -> None:
    """Exit 1 when Avg@k or Pass^k (overall or in a domain) drops by more than --max-drop, significantly.

    Runs are given as `compare` takes them (`tau gate BASELINE CANDIDATE`; ids, `latest` or unique prefixes);
    `--baseline A --candidate B` still works."""
    from tau_emotion.plugins.report.compare import gate, junit

    if not math.isfinite(max_drop):  # NaN compares false with everything: a gate that always passes
        raise click.BadParameter(f"{max_drop} is not a finite number", param_hint="--max-drop")
    if junit_path:
        writable_parent(junit_path, "--junit")
    given = [*runs]
    if baseline_opt:
        given.insert(0, baseline_opt)
    if candidate_opt:
        given.append(candidate_opt)
    if len(given) != 2:
        raise click.UsageError("give two runs: tau gate BASELINE CANDIDATE (or --baseline A --candidate B)")
    result = _compare(given[0], given[1], by, db_path, store, extra_plugins)
    baseline, candidate = result["baseline"], result["candidate"]
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
