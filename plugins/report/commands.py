"""The report plugin's commands: `tau show RUN TASK` / `--failed` (added to the core `show`),
`tau analyze`, `tau report`, `tau compare` and `tau gate`. Every one reads through the stores
catalog (`--store`, `--db`, `--plugins` as the core reading commands)."""

from __future__ import annotations

import json
import math
import re
from typing import Any

import click

from tau_emotion.core.outputs import write_output
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
    print_procedure(result.get("procedure") or {})


#: violations listed one a line before the rest are only counted
MAX_VIOLATION_LINES = 40


def print_procedure(audit: dict[str, Any]) -> None:
    """The procedure audit: trials that followed the procedure, violations per rule, then each violation with its
    turn and message index."""
    if not audit.get("trials"):
        return
    click.echo(f"procedure followed in {audit['followed']} of {audit['trials']} trial(s); violations: "
               + (", ".join(f"{k}={v}" for k, v in audit["by_rule"].items()) or "none"))
    shown = audit["violations"][:MAX_VIOLATION_LINES]
    for v in shown:
        tool = f" {v['tool']}" if v["tool"] else ""
        click.echo(safe(f"  {v['task_id']} #{v['trial']} turn {v['turn']} (message {v['message']}) {v['rule']}{tool}: "
                        f"{v['detail']}"))
    if len(audit["violations"]) > len(shown):
        click.echo(f"  ... and {len(audit['violations']) - len(shown)} more (--json lists all)")


# ----------------------------------------------------------------------------- registration


def register(cli: click.Group) -> None:
    extend_show(cli)
    for command in (analyze_command, report_command, compare_command, gate_command, tag_command):
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
    """One self-contained HTML file: summaries, success per condition (each emotion, family, politeness, urgency
    and trust) with intervals, tokens and cost, heat maps, audits, curves and a trajectory viewer; with two or
    more runs, each later one against the first (paired deltas by domain and by --by)."""
    from tau_emotion.core.conditions import CATALOG, condition_space
    from tau_emotion.plugins.report.html import render
    from tau_emotion.plugins.report.reading import load_run

    writable_parent(out, "--out")
    opened, pm = _open(db_path, store, extra_plugins)
    runs = [load_run(opened, run_id, pm, db_path) for run_id in run_ids]
    spaces = {name: condition_space(pm, name) for name in pm.catalog(CATALOG).names()}
    write_output(out, render(runs, by, spaces))
    click.echo(f"wrote {out}", err=True)
    lost = {data.run_id: unreadable(data.results) for data in runs}
    if any(lost.values()):  # its figures count those rows as errored trials
        raise unreadable_error(sum(lost.values()), ",".join(k for k, v in lost.items() if v), "the report's figures")


scoring_option = click.option(
    "--scoring", type=click.Choice(["paper", "strict"]), default=None,
    help="Compare both runs under this scoring (from their stored parts); needed when they were run under two.")


def _compare(baseline: str, candidate: str, by: str, db_path: str, store: str | None, extra: tuple[str, ...],
             scoring: str | None = None) -> dict:
    from tau_emotion.plugins.report.compare import compare
    from tau_emotion.plugins.report.reading import load_run

    opened, pm = _open(db_path, store, extra)
    a, b = (load_run(opened, r, None, db_path) for r in (baseline, candidate))
    scoring, ra, rb = _one_scoring(a, b, scoring)
    return {"baseline": a.run_id, "candidate": b.run_id, "scoring": scoring, **compare(ra, rb, by)}


def _one_scoring(a: Any, b: Any, scoring: str | None) -> tuple[str, list[Any], list[Any]]:
    """Both runs' results under one scoring: the one given, else the one both were run under; two runs made under
    two scorings are not compared silently (docs/procedure.md)."""
    from tau_emotion.core.errors import TauError
    from tau_emotion.core.procedure import results_under

    sa, sb = (getattr(r.config, "scoring", "paper") if r.config is not None else "paper" for r in (a, b))
    if scoring is None:
        if sa != sb:
            raise TauError(f"run {a.run_id} was scored '{sa}' and run {b.run_id} '{sb}': pass --scoring paper "
                           f"or --scoring strict to compare both under one")
        return sa, a.results, b.results
    return scoring, results_under(a.results, scoring), results_under(b.results, scoring)  # type: ignore[arg-type]


SCOPE_WIDTH = 22
#: the comparison's key of the UNSATISFIED rate (compare.UNSAT; imported lazily there)
UNSAT = "unsat_rate"


def _lines(scope: str, s: dict[str, Any], k: int) -> list[str]:
    """One scope of a comparison as rows of at most 80 columns: a row per metric, then McNemar."""
    if not s.get("n_tasks"):
        return [f"{scope[:SCOPE_WIDTH]:{SCOPE_WIDTH}} no common tasks"]
    head = [] if len(scope) <= SCOPE_WIDTH else [scope]  # a long scope gets its own line
    first = f"{scope if not head else '':{SCOPE_WIDTH}} {s['n_tasks']:>5}"
    rows = []
    for i, (metric, label) in enumerate((("avg_at_k", "Avg@k"), (f"pass^{k}", f"Pass^{k}"), (UNSAT, "UNSAT"))):
        if metric not in s:
            continue
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
@scoring_option
@by_option
@store_option
@db_option
@plugins_option
@debug_option
@guarded
def compare_command(baseline: str, candidate: str, as_json: bool, scoring: str | None, by: str, db_path: str,
                    store: str | None, extra_plugins: tuple[str, ...]) -> None:
    """Deltas of Avg@k and Pass^k (candidate - baseline) with paired bootstrap intervals, McNemar, flipped tasks."""
    result = _compare(baseline, candidate, by, db_path, store, extra_plugins, scoring)
    baseline, candidate = result["baseline"], result["candidate"]
    if as_json:
        click.echo(json.dumps(result, indent=2))
        return
    k = result["k"]
    click.echo(f"candidate {candidate} vs baseline {baseline}")
    click.echo(f"(k={k}, {result['scoring']}; delta = candidate - baseline, 95% bootstrap over tasks)")
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
@click.option("--baseline", "baseline_opt", default=None,
              help="The run to hold the candidate to (or the first argument): an id, a prefix, or tag:NAME.")
@click.option("--candidate", "candidate_opt", default=None, help="The run under test (or the second argument).")
@click.option("--max-drop", default=0.02, show_default=True, type=click.FloatRange(0),
              help="The largest drop of Avg@k or Pass^k allowed before a significant drop fails the gate.")
@click.option("--max-unsat-rise", default=0.02, show_default=True, type=click.FloatRange(0),
              help="The largest rise of the UNSATISFIED rate (negative endings) allowed before a significant rise "
                   "fails the gate.")
@click.option("--per-tag/--no-per-tag", default=True, show_default=True,
              help="Also gate each value of --by (each emotion family), not only overall and each domain.")
@click.option("--junit", "junit_path", type=click.Path(dir_okay=False), default=None, help="Write JUnit XML here.")
@scoring_option
@by_option
@store_option
@db_option
@plugins_option
@debug_option
@guarded
def gate_command(runs: tuple[str, ...], baseline_opt: str | None, candidate_opt: str | None, max_drop: float,
                 max_unsat_rise: float, per_tag: bool, junit_path: str | None, scoring: str | None, by: str,
                 db_path: str, store: str | None, extra_plugins: tuple[str, ...]) -> None:
    """Exit 1 when Avg@k or Pass^k drops by more than --max-drop, or the UNSATISFIED rate rises by more than
    --max-unsat-rise, significantly (95% paired bootstrap over tasks), overall, in a domain or in a value of
    --by (an emotion family).

    Runs are given as `compare` takes them (`tau gate BASELINE CANDIDATE`; ids, `latest`, unique prefixes, or
    `tag:NAME` for the newest run tagged NAME with `tau tag`); `--baseline A --candidate B` still works.
    `--scoring strict` gates on the strict reward of both."""
    from tau_emotion.plugins.report.compare import gate, junit

    for value, hint in ((max_drop, "--max-drop"), (max_unsat_rise, "--max-unsat-rise")):
        if not math.isfinite(value):  # NaN compares false with everything: a gate that always passes
            raise click.BadParameter(f"{value} is not a finite number", param_hint=hint)
    if junit_path:
        writable_parent(junit_path, "--junit")
    given = [*runs]
    if baseline_opt:
        given.insert(0, baseline_opt)
    if candidate_opt:
        given.append(candidate_opt)
    if len(given) != 2:
        raise click.UsageError("give two runs: tau gate BASELINE CANDIDATE (or --baseline A --candidate B)")
    result = _compare(given[0], given[1], by, db_path, store, extra_plugins, scoring)
    baseline, candidate = result["baseline"], result["candidate"]
    if not result["overall"].get("n_tasks"):
        raise click.ClickException(f"runs {baseline} and {candidate} share no tasks: nothing to gate")
    checks = gate(result, max_drop, max_unsat_rise, per_tag)
    if junit_path:
        write_output(junit_path, junit(checks))
    click.echo(f"candidate {candidate} vs baseline {baseline} (k={result['k']}; {result['overall']['n_tasks']} tasks)")
    for c in checks:
        click.echo(safe(("FAIL " if c["failed"] else "ok   ") + c["message"]))
    failed = [c for c in checks if c["failed"]]
    if failed:
        click.echo(safe(f"gate failed: {len(failed)} significant change(s): "
                        + "; ".join(f"{c['scope']} {c['metric']} {c['delta']:+.3f}" for c in failed)), err=True)
        raise SystemExit(1)
    click.echo(f"gate passed: no success metric of {candidate} drops more than {max_drop} below {baseline}, and no "
               f"UNSATISFIED rate rises more than {max_unsat_rise}, significantly ({result['scoring']} scoring)",
               err=True)


TAG_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$")


@click.command("tag")
@click.argument("run_id")
@click.argument("names", nargs=-1, required=True)
@click.option("--remove", is_flag=True, help="Take the tags off the run instead.")
@store_option
@db_option
@plugins_option
@debug_option
@guarded
def tag_command(run_id: str, names: tuple[str, ...], remove: bool, db_path: str, store: str | None,
                extra_plugins: tuple[str, ...]) -> None:
    """Tag a stored run (`tau tag latest baseline`), so every command that reads a run can name it `tag:NAME`:
    the newest run carrying the tag (`tau gate tag:baseline latest`)."""
    from tau_emotion.core.runner import resolve_run, run_tags

    for name in names:
        if not TAG_NAME.match(name):
            raise click.BadParameter(f"'{safe(name)}' is not a tag: letters, digits, '_', '.', '-', at most 64",
                                     param_hint="NAMES")
    opened, _ = _open(db_path, store, extra_plugins)
    if not hasattr(opened, "save_run_meta"):
        raise click.ClickException(f"store '{store or 'default'}' keeps no run metadata: it cannot hold tags")
    run_id = resolve_run(opened, run_id, db_path)
    meta = dict(opened.run_meta(run_id) or {})
    tags = [t for t in run_tags(meta) if not (remove and t in names)]
    tags += [] if remove else [n for n in names if n not in tags]
    meta["tags"] = tags
    opened.save_run_meta(run_id, meta)
    close = getattr(opened, "close", None)
    if close is not None:
        close()  # the writer thread commits before the process ends
    click.echo(f"run {run_id}: tags {', '.join(tags) or 'none'}", err=True)
