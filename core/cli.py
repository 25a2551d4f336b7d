"""The `tau` command line. Plugins add commands through `tau_register_commands` and `tau run`
options through `tau_register_options`.

`main()` builds one plugin manager with every installed plugin (so `--help` is complete) and
hands it to the command as click's `obj`; `tau run` narrows that same manager to the plugins the
run selects. `build_cli` makes a new `tau` group per call, so nothing is patched per process.
A `TauError` is printed as one line; anything else is a bug and keeps its traceback. Plugins that
add commands use `tau_emotion.core.plugin_cli`, not this module.
"""

from __future__ import annotations

import copy
import json
import os
import sys
from typing import Any

import click
from click.core import ParameterSource
from pydantic import BaseModel, ValidationError

from tau_emotion.core import __version__
from tau_emotion.core.errors import TauError
from tau_emotion.core.limits import is_secret_name
from tau_emotion.core.manager import PluginManager, Selection, load_all_plugins
from tau_emotion.core.models import EVAL_KIND, RunConfig, task_set_hash
from tau_emotion.core.plugin_cli import (
    INTERRUPTED,
    NOT_IN_CONFIG,
    all_domains,
    command_pm,
    config_file,
    db_option,
    debug_option,
    execute_run,
    guarded,
    insert_params,
    model_params,
    open_results,
    plugins_option,
    raw_plugin_options,
    require_run,
    store_option,
    unreadable,
    unreadable_error,
    writable_parent,
)
from tau_emotion.core.terminal import cell, safe
from tau_emotion.core.terminal import reward as terminal_reward

OPTION_PREFIX = "opt__"


def _tau() -> None:
    """tau-emotion: evaluate tool-calling agents against simulated users whose conditions you control.

    \b
    Quick start:
      tau domains                                   # the installed domains
      tau suites                                    # named plugin lists, for --suite
      tau run --plugins DOMAIN --agent oracle --user scripted --trials 3
      tau run --plugins PLUGIN,DOMAIN --agent tool_calling --agent-model MODEL --agent-api-base URL \\
              --user llm --user-model MODEL --user-api-base URL
      tau run --help                                # every option, with the plugin that owns it
    """


def _split_ids(values: tuple[str, ...]) -> list[str]:
    return [x.strip() for v in values for x in v.split(",") if x.strip()]


def _toml_value(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return repr(value)
    if isinstance(value, list | tuple):
        return "[" + ", ".join(_toml_value(v) for v in value) + "]"
    return json.dumps(str(value), ensure_ascii=False)  # a JSON string is a valid TOML basic string


def _redacted_value(value: Any) -> Any:
    """A flag's value as `--print-config` writes it: secrets inside it (a JSON object's nested keys, URL
    credentials, `--api-key X` in arguments) replaced by [REDACTED]."""
    from tau_emotion.core.limits import redact

    if isinstance(value, list | tuple):
        return [_redacted_value(v) for v in value]
    if isinstance(value, str) and value.lstrip().startswith("{"):
        try:
            return json.dumps(redact(json.loads(value)))
        except ValueError:
            pass
    name, equals, rest = value.partition("=") if isinstance(value, str) else ("", "", "")
    if equals and rest.lstrip().startswith("{"):  # -o agent_args={...}
        return f"{name}={_redacted_value(rest)}"
    return redact(value)


def config_toml(ctx: click.Context, kw: dict[str, Any]) -> str:
    """Every `tau run` setting of this invocation as a `--config` file (plugin options only when set)."""
    lines = ["# tau run --config FILE; a flag on the command line wins over this file"]
    for param in ctx.command.params:
        if not isinstance(param, click.Option) or param.name in NOT_IN_CONFIG or param.name not in kw:
            continue
        value = kw[param.name]
        if value is None or (param.multiple and not value):
            continue
        key = param.opts[0].lstrip("-").replace("-", "_")
        if is_secret_name(key):
            lines.append(f"# {key}: not written (a secret: give it as a flag or TAU_{key.upper()})")
            continue
        if param.name == "raw_options":  # -o NAME=VALUE: a secret NAME is left out like its flag
            secret = [v for v in value if is_secret_name(str(v).partition("=")[0])]
            lines += [f"# {str(v).partition('=')[0]}: not written (a secret)" for v in secret]
            value = [v for v in value if v not in secret]
            if not value:
                continue
        lines.append(f"{key} = {_toml_value(_redacted_value(value))}")
    return "\n".join(lines) + "\n"


@click.command("run")
@click.option("--config", "config", type=click.Path(dir_okay=False, exists=True), default=None, is_eager=True,
              expose_value=True, callback=config_file,
              help="A TOML file holding any of these flags (`--print-config` writes one); flags given win.")
@click.option("--print-config", "print_config", is_flag=True,
              help="Print this invocation's settings as a --config file and exit.")
@click.option("--plugins", "plugins", multiple=True, help="Plugins to add to the defaults, comma separated; no:NAME blocks one. Env: TAU_PLUGINS.")
@click.option("--suite", default=None, help="A named plugin list (see `tau suites`).")
@click.option("--agent", default="oracle", show_default=True, help="Agent plugin (oracle, tool_calling, ...).")
@click.option("--user", default="scripted", show_default=True, help="User simulator plugin (scripted, llm, ...).")
@click.option("--trials", default=3, show_default=True, type=click.IntRange(1, 100_000), help="Trials per task (k).")
@click.option("--tasks", "n_tasks", default=None, type=click.IntRange(1), help="Only the first N tasks of each domain.")
@click.option("--task-ids", multiple=True, help="Only these task ids (comma separated or repeated).")
@click.option("--split", default="test", show_default=True, help="Task split.")
@click.option("--concurrency", default=8, show_default=True, type=click.IntRange(1), help="Episodes in flight at once.")
@click.option("--max-steps", default=200, show_default=True, type=click.IntRange(1), help="Agent steps before an episode is cut.")
@click.option("--tool-timeout", default=10.0, show_default=True, type=click.FloatRange(0, min_open=True),
              help="Seconds one tool call may run before it is stopped (a tool error for the agent).")
@click.option("--trial-timeout", default=3600.0, show_default=True, type=click.FloatRange(0, 1e7, min_open=True),
              help="Seconds one trial may run before it is stopped as that trial's error.")
@click.option("--block-timeout", default=60.0, show_default=True, type=click.FloatRange(0, 1e7, min_open=True),
              help="Seconds plugin code (agent, user, hook) may hold the event loop before its trial is stopped.")
@click.option("--skip-broken", is_flag=True, help="Drop tasks whose gold does not replay (named) instead of refusing to start.")
@click.option("--scoring", type=click.Choice(["paper", "strict"]), default="paper", show_default=True,
              help="paper: the paper's reward; strict: 0 unless the domain's procedure held too (docs/procedure.md).")
@click.option("--skip-missing", is_flag=True,
              help="With --suite: run the domains that have the split, leaving out (named) those that do not.")
@click.option("--executor", default="local", show_default=True, help="Executor plugin that runs the trials (local, ray).")
@click.option("--seed", default=0, show_default=True, type=int,
              help="Seed of every random choice (random draws of plugins, user wording); a run repeats with it.")
@click.option("--option", "-o", "raw_options", multiple=True,
              help="A plugin option as KEY=VALUE (repeatable), e.g. -o agent_api_key=...; see the options below.")
@click.option("--summary-json", type=click.Path(dir_okay=False), default=None, help="Write the summary here.")
@click.option("--resume", "resume_id", default=None, help="Finish an earlier run: only its missing trials run.")
@store_option
@db_option
@debug_option
@guarded
def run_command(**kw: Any) -> None:
    """Run tasks x trials and score them; every finished trial is saved at once (resume with --resume)."""
    from tau_emotion.core.runner import NoDomainSelected, prepare_run, resume_run, run_lock

    ctx = click.get_current_context()
    kw.pop("config")
    if kw.pop("print_config"):
        click.echo(config_toml(ctx, kw), nl=False)
        return
    pm = command_pm(kw["plugins"])  # a store or pack named by module path must be there before --resume opens it
    installed = pm.catalog("domains").names()
    db_path, store = kw.pop("db_path"), kw.pop("store")
    summary_json = kw.pop("summary_json")
    if summary_json:  # its folder is made (or refused) before the run, not after it
        writable_parent(summary_json, "--summary-json")
    resume_id = kw.pop("resume_id")
    skip_missing, suite = kw.pop("skip_missing"), kw["suite"]
    suite_plugins = pm.catalog("suites").get(suite) if suite and not resume_id else []
    options, owners = plugin_options(ctx, pm, kw)
    if resume_id:
        given = {k: v for k, v in kw.items() if ctx.get_parameter_source(k) not in (None, ParameterSource.DEFAULT)
                 and k in RunConfig.model_fields}
        if "task_ids" in given:
            given["task_ids"] = _split_ids(given["task_ids"])
        run = resume_run(resume_id, db_path, store, pm=pm, options=options,  # options given now win
                         skip_broken=kw["skip_broken"], given=given)
    else:
        try:
            config = config_from_options(kw, pm, options, store)
        except ValidationError as exc:
            from tau_emotion.core.domain import format_validation_error

            raise click.UsageError(f"invalid run settings: {format_validation_error(exc)}") from None
        check_option_owners(pm.select(Selection.parse(config.plugins)), options, owners)
        if suite and not config.domains and not config.task_ids:
            suite_split_check(pm, suite, suite_plugins, config, skip_missing)
        try:
            run = prepare_run(config, db_path, pm=pm)
        except NoDomainSelected as exc:
            raise NoDomainSelected(f"{exc}; installed domains: {', '.join(installed) or 'none'}") from None
    with run_lock(db_path, run.run_id):  # a second process resuming the same run is refused
        summary = execute_run(run, "run", f"tau run --resume {run.run_id} --db {db_path}")
    if summary_json:
        from tau_emotion.core.outputs import write_output

        write_output(summary_json, json.dumps(summary, indent=2) + "\n")
    print_summary(summary, pm)
    if summary.get("errors"):
        raise click.ClickException(f"{summary['errors']} trial(s) ended in error (see `tau show {run.run_id}`); "
                                   f"re-run them with: tau run --resume {run.run_id} --db {db_path}")


def suite_split_check(pm: PluginManager, suite: str, plugins: list[str], config: RunConfig, skip_missing: bool) -> None:
    """A suite whose packs lack the split is refused in one line naming them, or run without them (--skip-missing)."""
    from tau_emotion.core.suites import missing_split, suite_domains

    domains = suite_domains(pm, plugins)
    missing = missing_split(domains, config.split)
    if not missing:
        return
    what = f"{len(missing)} of {len(domains)} domain(s) of suite '{suite}' have no '{config.split}' split: {', '.join(missing)}"
    if not skip_missing or len(missing) == len(domains):
        hint = "; pass --skip-missing to run the others" if len(missing) < len(domains) else ""
        raise TauError(f"{what} (`tau suites` lists the splits){hint}")
    click.echo(f"note: {what}; running the other {len(domains) - len(missing)} (--skip-missing)", err=True)
    config.domains = [d for d in domains if d not in missing]


def config_from_options(kw: dict[str, Any], pm: PluginManager, options: dict[str, dict[str, Any]],
                        store: str | None) -> RunConfig:
    items = [v for v in kw.pop("plugins")] or ([] if kw.get("suite") else [os.environ.get("TAU_PLUGINS", "")])
    suite = kw.pop("suite")
    if suite:
        items = [*pm.catalog("suites").get(suite), *items]
    task_ids = _split_ids(kw.pop("task_ids"))
    fields = set(RunConfig.model_fields)
    direct = {k: v for k, v in kw.items() if k in fields}
    return RunConfig(plugins=Selection.parse(items).items(), task_ids=task_ids, options=options, store=store, **direct)


# ----------------------------------------------------------------------------- plugin options


def option_params(pm: PluginManager) -> list[click.Option]:
    """One click option per field of every registered option model, named --field-name, its help saying its owner."""
    params: list[click.Option] = []
    seen: dict[str, str] = {}
    for group, entry in pm.catalog("options").items():
        model: type[BaseModel] = entry.load()
        for name in model.model_fields:
            flag = "--" + name.replace("_", "-")
            if flag in seen:
                raise TauError(f"option {flag} is registered twice: by '{seen[flag]}' and by '{group}'")
            seen[flag] = group
        params += model_params(model, dest=lambda name, group=group: f"{OPTION_PREFIX}{group}__{name}", owner=entry.owner)
    return params


def plugin_options(ctx: click.Context, pm: PluginManager, kw: dict[str, Any]) -> tuple[dict[str, dict[str, Any]], dict[str, str]]:
    """The plugin options given on the command line (flags and -o KEY=VALUE), by group, and the flag each came from."""
    catalog = pm.catalog("options")
    options: dict[str, dict[str, Any]] = {}
    given_as: dict[str, str] = {}
    for key in [k for k in kw if k.startswith(OPTION_PREFIX)]:
        value = kw.pop(key)
        if ctx.get_parameter_source(key) in (None, ParameterSource.DEFAULT):
            continue
        group, _, name = key[len(OPTION_PREFIX):].partition("__")
        options.setdefault(group, {})[name] = value
        given_as[group] = "--" + name.replace("_", "-")
    for group, name, value, key in raw_plugin_options(pm, kw.pop("raw_options", ())):
        options.setdefault(group, {})[name] = value
        given_as.setdefault(group, f"-o {key}")
    return options, {group: (flag, catalog.entry(group).owner) for group, flag in given_as.items()}


def check_option_owners(pm: PluginManager, options: dict[str, dict[str, Any]],
                        owners: dict[str, tuple[str, str]]) -> None:
    """Options of plugins the run does not load are a usage error (exit 2) naming the plugin to add."""
    loaded = pm.catalog("options")
    for group in options:
        if group not in loaded:
            flag, plugin = owners[group]
            raise click.UsageError(f"{flag} is an option of plugin '{plugin}', which this run does not load: "
                                   f"add it with --plugins {plugin}")


def print_summary(summary: dict[str, Any], pm: PluginManager | None = None) -> None:
    """The summary as a table whose rows (`tau_summary_rows`) and columns (`tau_summary_columns`) plugins give,
    then the core's own counts: errored trials and terminations."""
    from rich import box
    from rich.console import Console
    from rich.table import Table

    columns = [c for cols in (pm.hook.tau_summary_columns(summary=summary) if pm is not None else []) for c in cols or []]
    rows = [r for got in (pm.hook.tau_summary_rows(summary=summary) if pm is not None else []) for r in got or []]
    if rows and columns:
        # 80 columns: no box lines, one space between columns; a long scope folds, figures never wrap
        table = Table(title=cell(f"run {summary.get('run_id')}"), box=box.SIMPLE_HEAD, padding=(0, 1), pad_edge=False,
                      show_edge=False, collapse_padding=True)
        table.add_column("scope", max_width=20, overflow="fold")
        for header, _ in columns:
            table.add_column(cell(header), justify="right", no_wrap=True)
        if any(header.startswith("P^") for header, _ in columns):
            table.caption = "P^k = Pass^k; reward = mean reward; neg.end = share of negative endings"
        for name, group in rows:  # data is shown, never parsed as markup (a domain named "[/]")
            table.add_row(cell(name), *(cell(text_of(group)) for _, text_of in columns))
        Console().print(table)
    else:
        click.echo(safe(f"run {summary.get('run_id')}: no plugin gives summary rows (the metrics plugin is not loaded)"))
    if summary.get("errors"):
        click.echo(f"errors: {summary['errors']} trial(s) ended in error (counted as failures above, not as scores)")
    click.echo("terminations: " + ", ".join(f"{k}={v}" for k, v in summary.get("terminations", {}).items()))


@click.command("plugins")
@click.option("--json", "as_json", is_flag=True, help="The plugins as a JSON list (for scripts).")
@debug_option
@guarded
def plugins_command(as_json: bool) -> None:
    """List installed plugins, their distribution and version, and the hooks they implement."""
    infos = command_pm().infos
    if as_json:
        click.echo(json.dumps([vars(info) for info in infos.values()], indent=2))
        return
    for info in infos.values():
        where = f"{info.distribution or '?'} {info.version or ''}".strip()
        if info.error:
            click.echo(f"{info.name:20} {where:28} UNAVAILABLE: {info.error}")
        else:
            click.echo(f"{info.name:20} {where:28} {', '.join(info.hooks)}")


@click.command("domains")
@click.option("--json", "as_json", is_flag=True, help="The domains as a JSON list (for scripts).")
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
        except TauError as exc:  # a broken pack is listed with its problem, not fatal to the listing
            splits, tools = {"error": str(exc).splitlines()[0]}, 0
        rows.append({"name": name, "plugin": entry.owner, "tools": tools, "tasks": splits,
                     "description": domain.description})
    if as_json:
        click.echo(json.dumps(rows, indent=2))
        return
    for r in rows:
        tasks = ", ".join(f"{k}={v}" for k, v in r["tasks"].items())
        click.echo(f"{r['name']:22} tools={r['tools']:<3} {tasks}  {r['description']}")


@click.command("suites")
@click.option("--json", "as_json", is_flag=True, help="The suites as a JSON list (for scripts).")
@debug_option
@guarded
def suites_command(as_json: bool) -> None:
    """List suites (named plugin lists for `tau run --suite`) with their tasks per split and domain."""
    from tau_emotion.core.suites import split_counts, suite_domains

    pm = command_pm()
    rows = []
    for name, entry in pm.catalog("suites").items():
        plugins = list(entry.load())
        absent = [p for p in plugins if p not in pm.infos or pm.infos[p].error]
        try:
            counts = split_counts(suite_domains(pm, plugins))
        except TauError as exc:  # a broken pack is named, not fatal to the listing
            counts = {"error": {str(exc).splitlines()[0]: 0}}
        rows.append({"name": name, "plugins": plugins, "unavailable": absent, "tasks": counts})
    if as_json:
        click.echo(json.dumps(rows, indent=2))
        return
    for r in rows:
        click.echo(f"{r['name']:20} {','.join(r['plugins'])}")
        if r["unavailable"]:
            click.echo(f"  unavailable: {', '.join(r['unavailable'])} (`tau plugins` says why)")
        for split, per in r["tasks"].items():
            have = {d: n for d, n in per.items() if n}
            line = f"  {split:6} {sum(have.values()):5}  " + ", ".join(f"{d} {n}" for d, n in have.items())
            if len(have) < len(per):
                line += ("; " if have else "") + f"no '{split}' split: {', '.join(d for d in per if d not in have)}"
            click.echo(line)


@click.command("tasks")
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
        noted = [t for t in tasks if t.meta.get("notes")]  # a pack's findings about its source data
        for note in (n for t in noted for n in t.meta["notes"]):
            click.echo(f"note: {note}")
        if noted:
            click.echo(f"{len(noted)} of {len(tasks)} task(s) in {domain}/{split} carry notes from their pack "
                       "(meta.notes; reported, not failed)", err=True)
        if problems:
            click.get_current_context().exit(1)
        return
    if as_json:  # each with its content hash, which a results file records to show what was run
        click.echo(json.dumps([{**t.model_dump(mode="json"), "content_hash": t.content_hash} for t in tasks], indent=2))
        return
    for t in tasks:
        click.echo(safe(f"{t.id:18} {t.split:6} actions={len(t.gold.actions):<3} outputs={len(t.gold.outputs)}  "
                        f"{t.user.instruction[:80]}"))
    click.echo(f"{len(tasks)} task(s); content hash of the set {task_set_hash(tasks)}", err=True)


@click.command("runs")
@click.option("--json", "as_json", is_flag=True, help="One JSON object per run, metadata included.")
@click.option("--kind", default=None, metavar="KIND",
              help="Only runs of this kind: eval (tau run), play (tau play), or another command's.")
@click.option("--delete", "delete_id", default=None, metavar="RUN", help="Delete this run and its trials.")
@store_option
@db_option
@plugins_option
@debug_option
@guarded
def runs_command(as_json: bool, kind: str | None, delete_id: str | None, db_path: str, store: str | None,
                 extra_plugins: tuple[str, ...]) -> None:
    """List stored runs: kind, agent, user, models, status, trials, errors, tokens, cost and Avg@k (or delete one)."""
    opened = open_results(db_path, store, extra_plugins)
    if delete_id:
        from tau_emotion.core.runner import run_holder

        delete_id = require_run(opened, delete_id, db_path)
        holder = run_holder(db_path, delete_id)
        if holder:
            raise click.ClickException(f"run '{delete_id}' is running now (process {holder}): stop it first, "
                                       "then delete it")
        opened.delete_run(delete_id)
        click.echo(f"deleted run {delete_id} from {db_path}", err=True)
        return
    runs = [r for r in opened.runs() if kind is None or run_kind_of(r) == kind]
    pm = command_pm(extra_plugins)
    rows = [run_row(pm, r) for r in runs]
    damaged = {r["run_id"]: r["n_unreadable"] for r in runs if r.get("n_unreadable")}
    if as_json:
        click.echo(json.dumps([{**r, **{k: v for k, v in row.items() if k not in CORE_RUN_COLUMNS}}
                               for r, row in zip(runs, rows, strict=True)], indent=2))
    else:
        print_runs(rows, db_path)
    if damaged:  # their trials and errors (and a summary made before the damage) would be wrong figures
        raise unreadable_error(sum(damaged.values()), ",".join(damaged), "the trials and errors figures")


def print_runs(rows: list[dict[str, str]], db_path: str) -> None:
    """`tau runs`' table: the core's cells and the plugins' (`run_row`)."""
    from rich.console import Console
    from rich.table import Table

    table = Table(title=cell(f"runs in {db_path}"))
    names = list(dict.fromkeys(name for row in rows for name in row)) or list(CORE_RUN_COLUMNS)
    for name in names:
        table.add_column(cell(name), justify="right" if name in RIGHT_ALIGNED else "left")
    for row in rows:  # data is shown, never parsed as markup (a model named "[/]")
        table.add_row(*(cell(row.get(name, "-")) for name in names))
    Console(width=200).print(table)  # its columns come from plugins (tau_run_row): wider than 80


#: the `tau runs` columns the core fills from what the store keeps of every run
CORE_RUN_COLUMNS = ("run", "kind", "agent", "user", "plugins", "trials", "errors")
RIGHT_ALIGNED = ("trials", "errors", "tokens", "cost")


def run_kind_of(run: dict[str, Any]) -> str:
    """A `runs()` row's kind (`eval` for runs stored before runs had kinds)."""
    return str((run.get("config") or {}).get("kind") or EVAL_KIND)


def run_row(pm: PluginManager, run: dict[str, Any]) -> dict[str, str]:
    """One run's `tau runs` cells: the core's, then what plugins add (`tau_run_row`)."""
    s, config = run.get("summary") or {}, run.get("config") or {}
    planned = (s.get("n_tasks") or 0) * config.get("trials", 0)
    row = {"run": run["run_id"], "kind": run_kind_of(run), "agent": config.get("agent", "?"),
           "user": config.get("user", "?"), "plugins": ",".join(config.get("plugins", [])),
           "trials": f"{run.get('n_trials', 0)}/{planned or '?'}", "errors": str(s.get("errors", "-"))}
    if run.get("n_unreadable"):
        row["errors"] += f" +{run['n_unreadable']} unreadable"
    first = {"run": row.pop("run"), "kind": row.pop("kind")}
    extra: dict[str, str] = {}
    for cells in pm.hook.tau_run_row(run=run):
        for name, value in (cells or {}).items():
            if name in row:
                row[name] = str(value)
            else:
                extra.setdefault(name, str(value))
    return {**first, **extra, **row}


@click.command("show")
@click.argument("run_id")
@click.option("--json", "as_json", is_flag=True, help="Metadata, summary and trials (or with TASK, the trials) as JSON.")
@store_option
@db_option
@plugins_option
@debug_option
@guarded
def show_command(run_id: str, as_json: bool, db_path: str, store: str | None, extra_plugins: tuple[str, ...]) -> None:
    """Show a run's summary and per-trial results."""
    store = open_results(db_path, store, extra_plugins)
    run_id = require_run(store, run_id, db_path)
    summary = store.summary(run_id) or {}
    meta = (store.run_meta(run_id) if hasattr(store, "run_meta") else None) or {}
    results = store.results(run_id)
    if as_json:
        click.echo(json.dumps({"meta": meta, "summary": summary, "trials": [
            {"task_id": r.task_id, "trial": r.trial, "reward": r.reward, "status": r.status,
             "termination": r.termination.reason, "error": r.error, "usage": r.usage} for r in results]}, indent=2))
        return
    record = next((r for r in store.runs() if r["run_id"] == run_id), {"run_id": run_id})
    for lines in command_pm(extra_plugins).hook.tau_run_header(run=record):
        for line in lines or []:
            click.echo(safe(line))
    if summary:
        print_summary(summary, command_pm(extra_plugins))
    for r in results:
        if r.status == "error":  # an errored trial is not a score of 0
            click.echo(safe(f"{r.task_id:22} trial={r.trial} ERROR {r.error or ''}{usage_cells(r.usage)}"))
            continue
        click.echo(safe(f"{r.task_id:22} trial={r.trial} reward={terminal_reward(r.reward)} {r.termination.reason}"
                        f"{usage_cells(r.usage)}"))


def usage_cells(usage: dict[str, float]) -> str:
    """` tokens=1234 cost=$0.0012` of one trial (what its model calls counted); empty when none was counted."""
    tokens = usage.get("total_tokens") or usage.get("prompt_tokens", 0) + usage.get("completion_tokens", 0)
    return (f" tokens={tokens:.0f}" if tokens else "") + (f" cost=${usage['cost']:.4f}" if usage.get("cost") else "")


@click.command("export")
@click.argument("run_id")
@click.option("--format", "fmt", type=click.Choice(["jsonl"]), default="jsonl", show_default=True,
              help="Output format: one JSON object per trial, messages included (for SFT/DPO data: tau export-sft).")
@click.option("--out", type=click.Path(dir_okay=False), default=None, help="File (default: stdout).")
@store_option
@db_option
@plugins_option
@debug_option
@guarded
def export_command(run_id: str, fmt: str, out: str | None, db_path: str, store: str | None,
                   extra_plugins: tuple[str, ...]) -> None:
    """Export a run's trials (messages included) as JSON lines."""
    store = open_results(db_path, store, extra_plugins)
    run_id = require_run(store, run_id, db_path)
    results = store.results(run_id)
    lost = unreadable(results)
    lines = [r.model_dump_json() for r in results if not (lost and unreadable([r]))]
    text = "\n".join(lines) + ("\n" if lines else "")
    if out:
        from tau_emotion.core.outputs import write_output

        writable_parent(out, "--out")
        write_output(out, text)
        click.echo(f"wrote {len(lines)} trials to {out}", err=True)
    else:
        sys.stdout.write(text)
    if lost:
        raise unreadable_error(lost, run_id, "the export")


#: the core's own commands, copied into every `tau` group `build_cli` makes
CORE_COMMANDS = (run_command, plugins_command, domains_command, suites_command, tasks_command, runs_command,
                 show_command, export_command)


def build_cli(pm: PluginManager | None = None) -> click.Group:
    """A new `tau` group: the core's commands (fresh copies, so a plugin that extends one changes only this group),
    every installed plugin's commands (`tau_register_commands`), and the plugins' `tau run` options, added by
    name in front of `--store`."""
    pm = pm or load_all_plugins()
    group = click.version_option(__version__, prog_name="tau")(_tau)
    group = click.group("tau", context_settings={"help_option_names": ["-h", "--help"]})(group)
    for command in CORE_COMMANDS:
        fresh = copy.copy(command)
        fresh.params = list(command.params)
        group.add_command(fresh)
    pm.hook.tau_register_commands(cli=group)
    insert_params(group.commands["run"], option_params(pm), before="store")
    return group


def main() -> None:
    """`tau`: click's standalone handling, except that Ctrl-C exits 130 (click's own `Abort` exits 1); at the
    exit, threads a plugin left running (not daemons) or an abandoned trial do not hold the process."""
    from tau_emotion.core.containment import exit_despite_threads

    pm = load_all_plugins()
    try:
        try:
            code = build_cli(pm).main(prog_name="tau", obj=pm, standalone_mode=False)
        except click.ClickException as exc:
            exc.show()
            sys.exit(exc.exit_code)
        except click.exceptions.Abort as exc:
            interrupted = isinstance(exc.__cause__ or exc.__context__, KeyboardInterrupt)
            click.echo("\nInterrupted." if interrupted else "Aborted!", err=True)
            sys.exit(INTERRUPTED if interrupted else 1)
        sys.exit(code if isinstance(code, int) else 0)
    except SystemExit as exc:  # every way out; a plugin's leftover thread must not hold the exit
        exit_despite_threads(exc.code)
        raise
