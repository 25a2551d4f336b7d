"""The `tau` command line. Plugins add commands (and `tau run` options) through `tau_register_commands`."""

from __future__ import annotations

import functools
import json
import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import click

from tau_emotion.core import __version__
from tau_emotion.core.errors import DataError
from tau_emotion.core.models import RunConfig
from tau_emotion.core.plugins import PluginError, expand_suites, load_all_plugins, parse_selection
from tau_emotion.core.registry import RegistryError

DEFAULT_DB = os.environ.get("TAU_DB", ".tau/runs.sqlite")
# errors that are the user's input or environment: one line, no traceback (unless --debug)
USER_ERRORS: tuple[type[BaseException], ...] = (DataError, RegistryError, PluginError, ValueError, RuntimeError,
                                                 LookupError, OSError)


def fail(exc: BaseException) -> click.ClickException:
    return click.ClickException(str(exc).splitlines()[0] if str(exc) else type(exc).__name__)


def guarded(fn: Callable[..., Any]) -> Callable[..., Any]:
    """Turn user-facing failures into one-line errors; `--debug` (or TAU_DEBUG=1) shows tracebacks."""

    def wrapper(*args: Any, **kwargs: Any) -> Any:
        debug = kwargs.pop("debug", False) or os.environ.get("TAU_DEBUG") == "1"
        try:
            return fn(*args, **kwargs)
        except click.ClickException:
            raise
        except USER_ERRORS as exc:
            if debug:
                raise
            raise fail(exc) from None

    return functools.wraps(fn)(wrapper)


debug_option = click.option("--debug", is_flag=True, help="Show full tracebacks on errors.")
db_option = click.option("--db", "db_path", default=DEFAULT_DB, show_default=True, help="SQLite results file.")


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="tau")
def cli() -> None:
    """tau-emotion-bench: evaluate tool-calling agents against (emotional) simulated users.

    \b
    Quick start:
      tau domains                                   # what is installed
      tau run --plugins airline --agent oracle --user scripted --trials 3
      tau run --plugins emotion,airline --agent tool_calling --agent-model openai/M --agent-api-base URL \\
              --user llm --user-model openai/M --user-api-base URL
    """


def _split_ids(values: tuple[str, ...]) -> list[str]:
    return [x.strip() for v in values for x in v.split(",") if x.strip()]


@cli.command("run", context_settings={"ignore_unknown_options": False})
@click.option("--plugins", "plugins", multiple=True, help="Plugins to add to the defaults, comma separated; no:NAME blocks one. Env: TAU_PLUGINS.")
@click.option("--suite", default=None, help="A named plugin list (see `tau suites`).")
@click.option("--agent", default="oracle", show_default=True, help="Agent plugin (oracle, tool_calling, ...).")
@click.option("--agent-model", default=None, help="litellm model name for the agent, e.g. openai/Qwen3-8B.")
@click.option("--agent-api-base", default=None, help="OpenAI-compatible endpoint for the agent model.")
@click.option("--agent-temperature", default=0.0, show_default=True, type=float)
@click.option("--user", default="scripted", show_default=True, help="User simulator plugin (scripted, llm, ...).")
@click.option("--user-model", default=None, help="litellm model name for the simulated user.")
@click.option("--user-api-base", default=None, help="OpenAI-compatible endpoint for the user model.")
@click.option("--user-temperature", default=0.0, show_default=True, type=float)
@click.option("--trials", default=3, show_default=True, type=click.IntRange(1), help="Trials per task (k).")
@click.option("--tasks", "n_tasks", default=None, type=click.IntRange(1), help="Only the first N tasks of each domain.")
@click.option("--task-ids", multiple=True, help="Only these task ids (comma separated or repeated).")
@click.option("--split", default="test", show_default=True, help="Task split.")
@click.option("--concurrency", default=8, show_default=True, type=click.IntRange(1), help="Episodes in flight at once.")
@click.option("--max-steps", default=200, show_default=True, type=click.IntRange(1), help="Agent steps before an episode is cut.")
@click.option("--max-retries", default=4, show_default=True, type=click.IntRange(0), help="Retries of a failing model call.")
@click.option("--retry-wait", default=1.0, show_default=True, type=float, help="First backoff in seconds (doubles).")
@click.option("--executor", default="local", show_default=True)
@click.option("--seed", default=0, show_default=True, type=int)
@click.option("--option", "-o", "raw_options", multiple=True, help="Plugin option KEY=VALUE (repeatable).")
@click.option("--summary-json", type=click.Path(dir_okay=False), default=None, help="Write the summary here.")
@click.option("--resume", "resume_id", default=None, help="Finish an earlier run: only its missing trials run.")
@click.option("--no-progress", is_flag=True, help="No progress bar.")
@db_option
@debug_option
@guarded
def run_command(**kw: Any) -> None:
    """Run tasks x trials and score them; every finished trial is saved at once (resume with --resume)."""
    from tau_emotion.core.runner import prepare_run, resume_run, run_sync

    db_path = kw.pop("db_path")
    summary_json = kw.pop("summary_json")
    resume_id = kw.pop("resume_id")
    if resume_id:
        run = resume_run(resume_id, db_path)
        run.config.options["progress"] = not kw["no_progress"]
    else:
        run = prepare_run(config_from_options(kw), db_path)
    done = run.total - len(run.pending)
    click.echo(f"run {run.run_id}: {len(run.tasks)} tasks x {run.config.trials} trials"
               f" in {', '.join(run.domains)}" + (f" ({done} already done)" if done else ""), err=True)
    try:
        summary = run_sync(run)
    except KeyboardInterrupt:
        raise click.ClickException(f"interrupted; finished trials are saved. Resume with: tau run --resume {run.run_id} --db {db_path}") from None
    if summary_json:
        Path(summary_json).write_text(json.dumps(summary, indent=2) + "\n", encoding="utf-8")
    print_summary(summary)
    if summary.get("errors"):
        raise click.ClickException(f"{summary['errors']} trial(s) ended in error (see `tau show {run.run_id}`); "
                                   f"re-run them with: tau run --resume {run.run_id} --db {db_path}")


def config_from_options(kw: dict[str, Any]) -> RunConfig:
    plugins = [x for v in kw.pop("plugins") for x in v.split(",") if x.strip()]
    suite = kw.pop("suite")
    if suite:
        plugins = [*expand_suites([suite]), *plugins]
    if not plugins and os.environ.get("TAU_PLUGINS"):
        plugins = parse_selection(None)[0] + [f"no:{b}" for b in parse_selection(None)[1]]
    options: dict[str, Any] = {"progress": not kw.pop("no_progress"),
                               "max_retries": kw.pop("max_retries"), "retry_wait": kw.pop("retry_wait")}
    for item in kw.pop("raw_options"):
        key, sep, value = item.partition("=")
        if not sep:
            raise click.BadParameter(f"expected KEY=VALUE, got {item!r}", param_hint="--option")
        options[key.strip()] = value
    task_ids = _split_ids(kw.pop("task_ids"))
    fields = set(RunConfig.model_fields)
    direct = {k: v for k, v in kw.items() if k in fields}
    options.update({k: v for k, v in kw.items() if k not in fields and v is not None})
    return RunConfig(plugins=plugins, task_ids=task_ids, options=options, **direct)


def print_summary(summary: dict[str, Any]) -> None:
    from rich.console import Console
    from rich.table import Table

    table = Table(title=f"run {summary.get('run_id')}")
    table.add_column("scope", no_wrap=True)
    table.add_column("tasks", justify="right")
    table.add_column("Avg@k", justify="right")
    for k in summary.get("pass_hat_k", {}):
        table.add_column(f"Pass^{k}", justify="right")
    table.add_column("mean reward", justify="right")
    table.add_column("UNSAT", justify="right")

    def row(name: str, s: dict[str, Any]) -> None:
        table.add_row(name, str(s.get("n_tasks", "")), f"{s.get('avg_at_k', float('nan')):.3f}",
                      *(f"{s.get('pass_hat_k', {}).get(k, float('nan')):.3f}" for k in summary.get("pass_hat_k", {})),
                      f"{s.get('mean_reward', float('nan')):+.3f}", f"{s.get('unsatisfied_rate', 0):.1%}")

    row("all", summary)
    for name, s in summary.get("by_domain", {}).items():
        row(name, s)
    for name, s in summary.get("by_emotion_family", {}).items():
        row(f"emotion:{name}", s)
    Console().print(table)
    click.echo("terminations: " + ", ".join(f"{k}={v}" for k, v in summary.get("terminations", {}).items()))


def all_domains(extra: tuple[str, ...] = ()) -> Any:
    pm, _ = load_all_plugins([x for v in extra for x in v.split(",") if x.strip()] or parse_selection(None)[0])
    return pm.catalog("domains")


plugins_option = click.option("--plugins", "extra_plugins", multiple=True,
                              help="Also load these plugins (module paths of packs that are not installed).")


@cli.command("plugins")
@click.option("--json", "as_json", is_flag=True)
@debug_option
@guarded
def plugins_command(as_json: bool) -> None:
    """List installed plugins, their distribution and version, and the hooks they implement."""
    _, report = load_all_plugins()
    rows = [vars(info) for info in report.values()]
    if as_json:
        click.echo(json.dumps(rows, indent=2))
        return
    for info in report.values():
        where = f"{info.distribution or '?'} {info.version or ''}".strip()
        if info.error:
            click.echo(f"{info.name:14} {where:28} UNAVAILABLE: {info.error}")
        else:
            click.echo(f"{info.name:14} {where:28} {', '.join(info.hooks)}")


@cli.command("domains")
@click.option("--json", "as_json", is_flag=True)
@plugins_option
@debug_option
@guarded
def domains_command(as_json: bool, extra_plugins: tuple[str, ...]) -> None:
    """List installed domains with their tools and task counts per split."""
    catalog = all_domains(extra_plugins)
    rows = []
    for name, entry in catalog.items():
        domain = entry.load()
        try:
            splits = {s: len(domain.tasks(s)) for s in domain.splits}
            tools = len(domain.toolset.tools)
        except Exception as exc:  # a broken pack is listed with its problem, not fatal to the listing
            splits, tools = {"error": str(exc).splitlines()[0]}, 0
        rows.append({"name": name, "plugin": entry.owner, "tools": tools, "tasks": splits,
                     "description": domain.description})
    if as_json:
        click.echo(json.dumps(rows, indent=2))
        return
    for r in rows:
        tasks = ", ".join(f"{k}={v}" for k, v in r["tasks"].items())
        click.echo(f"{r['name']:22} tools={r['tools']:<3} {tasks}  {r['description']}")


@cli.command("suites")
@debug_option
@guarded
def suites_command() -> None:
    """List suites: named plugin lists for `tau run --suite`."""
    pm, _ = load_all_plugins()
    for name, entry in pm.catalog("suites").items():
        click.echo(f"{name:14} {','.join(entry.load())}")


@cli.command("tasks")
@click.argument("domain")
@click.option("--split", default="test", show_default=True, help="Split, or 'all'.")
@click.option("--json", "as_json", is_flag=True, help="The tasks as a JSON list (for scripts).")
@click.option("--check", is_flag=True, help="Replay every gold trajectory and list the tasks that do not score 1.")
@plugins_option
@debug_option
@guarded
def tasks_command(domain: str, split: str, as_json: bool, check: bool, extra_plugins: tuple[str, ...]) -> None:
    """Show a domain's tasks."""
    dom = all_domains(extra_plugins).get(domain)
    tasks = dom.tasks(split)
    if check:
        from tau_emotion.core.reward import check_task

        problems = [p for p in (check_task(dom, t) for t in tasks) if p]
        for problem in problems:
            click.echo(problem)
        click.echo(f"{len(tasks) - len(problems)} of {len(tasks)} task(s) in {domain}/{split} score 1 "
                   f"with their gold trajectory; {len(problems)} do not", err=True)
        return
    if as_json:
        click.echo(json.dumps([t.model_dump(mode="json") for t in tasks], indent=2))
        return
    for t in tasks:
        click.echo(f"{t.id:18} {t.split:6} actions={len(t.gold.actions):<3} outputs={len(t.gold.outputs)}  "
                   f"{t.user.instruction[:80]}")
    click.echo(f"{len(tasks)} task(s)", err=True)


def _store(db_path: str) -> Any:
    from tau_emotion.plugins.sqlite_store import SqliteStore

    if not Path(db_path).exists():
        raise click.ClickException(f"no results file at {db_path} (use --db)")
    return SqliteStore(db_path)


@cli.command("runs")
@db_option
@debug_option
@guarded
def runs_command(db_path: str) -> None:
    """List stored runs."""
    for r in _store(db_path).runs():
        s = r["summary"] or {}
        click.echo(f"{r['run_id']}  trials={r['n_trials']:<5} plugins={','.join(r['config']['plugins'])}  "
                   f"avg@k={s.get('avg_at_k', '-')}")


@cli.command("show")
@click.argument("run_id")
@click.option("--json", "as_json", is_flag=True)
@db_option
@debug_option
@guarded
def show_command(run_id: str, as_json: bool, db_path: str) -> None:
    """Show a run's summary and per-trial results."""
    store = _store(db_path)
    if store.run_config(run_id) is None:
        raise click.ClickException(f"no run '{run_id}' in {db_path}")
    summary = store.summary(run_id) or {}
    results = store.results(run_id)
    if as_json:
        click.echo(json.dumps({"summary": summary, "trials": [
            {"task_id": r.task_id, "trial": r.trial, "reward": r.reward, "status": r.status,
             "termination": r.termination.reason, "error": r.error} for r in results]}, indent=2))
        return
    if summary:
        print_summary(summary)
    for r in results:
        extra = f" error={r.error}" if r.error else ""
        click.echo(f"{r.task_id:22} trial={r.trial} reward={r.reward:+.0f} {r.termination.reason}{extra}")


@cli.command("export")
@click.argument("run_id")
@click.option("--format", "fmt", type=click.Choice(["jsonl"]), default="jsonl", show_default=True)
@click.option("--out", type=click.Path(dir_okay=False), default=None, help="File (default: stdout).")
@db_option
@debug_option
@guarded
def export_command(run_id: str, fmt: str, out: str | None, db_path: str) -> None:
    """Export a run's trials (messages included) as JSON lines."""
    store = _store(db_path)
    if store.run_config(run_id) is None:
        raise click.ClickException(f"no run '{run_id}' in {db_path}")
    lines = [r.model_dump_json() for r in store.results(run_id)]
    text = "\n".join(lines) + ("\n" if lines else "")
    if out:
        Path(out).write_text(text, encoding="utf-8")
        click.echo(f"wrote {len(lines)} trials to {out}", err=True)
    else:
        sys.stdout.write(text)


def build_cli() -> click.Group:
    """The `tau` group with every installed plugin's commands (broken plugins are reported by `tau plugins`)."""
    if not getattr(cli, "_tau_plugins_added", False):
        pm, _ = load_all_plugins()
        pm.hook.tau_register_commands(cli=cli)
        cli._tau_plugins_added = True  # type: ignore[attr-defined]
    return cli


def main() -> None:
    build_cli()(prog_name="tau")
