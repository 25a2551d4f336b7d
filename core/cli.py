"""The `tau` command line. Plugins add commands through `tau_register_commands` and `tau run`
options through `tau_register_options`.

`main()` builds one plugin manager with every installed plugin (so `--help` is complete) and
hands it to the command as click's `obj`; `tau run` narrows that same manager to the plugins the
run selects. A `TauError` is printed as one line; anything else is a bug and keeps its traceback.
"""

from __future__ import annotations

import functools
import json
import os
import sys
import types
import typing
from collections.abc import Callable
from pathlib import Path
from typing import Any

import click
from click.core import ParameterSource
from pydantic import BaseModel, ValidationError

from tau_emotion.core import __version__
from tau_emotion.core.errors import TauError
from tau_emotion.core.limits import is_secret_name
from tau_emotion.core.models import RunConfig
from tau_emotion.core.plugins import PluginManager, Selection, load_all_plugins
from tau_emotion.core.terminal import cell, safe

DEFAULT_DB = os.environ.get("TAU_DB", ".tau/runs.db")
OPTION_PREFIX = "opt__"


def fail(exc: BaseException) -> click.ClickException:
    from tau_emotion.core.limits import scrub

    return click.ClickException(safe(scrub(str(exc).splitlines()[0])) if str(exc) else type(exc).__name__)


def guarded(fn: Callable[..., Any]) -> Callable[..., Any]:
    """Print a `TauError` as one line; `--debug` (or TAU_DEBUG=1) shows its traceback. Other errors are bugs
    and propagate with theirs."""

    def wrapper(*args: Any, **kwargs: Any) -> Any:
        debug = kwargs.pop("debug", False) or os.environ.get("TAU_DEBUG") == "1"
        try:
            return fn(*args, **kwargs)
        except TauError as exc:
            if debug:
                raise
            raise fail(exc) from None

    return functools.wraps(fn)(wrapper)


debug_option = click.option("--debug", is_flag=True, help="Show full tracebacks on errors.")
db_option = click.option("--db", "db_path", default=DEFAULT_DB, show_default=True,
                         help="Where results are kept (a file or folder, as the store wants). Env: TAU_DB.")
store_option = click.option("--store", "store", default=None,
                            help="Result store plugin (default: the installed default store).")
plugins_option = click.option("--plugins", "extra_plugins", multiple=True,
                              help="Also load these plugins (module paths of packs that are not installed).")


def command_pm(extra: tuple[str, ...] | list[str] = ()) -> PluginManager:
    """The command's plugin manager (every installed plugin), made once per command, plus `extra`."""
    ctx = click.get_current_context(silent=True)
    root = ctx.find_root() if ctx is not None else None
    pm = root.obj if root is not None and isinstance(root.obj, PluginManager) else None
    if pm is None:
        pm = load_all_plugins()
        if root is not None:
            root.obj = pm
    names = Selection.parse(list(extra)).selected if extra else Selection.parse(None).selected
    for name in names:
        if pm.get_plugin(name) is None:
            pm.add(name)
    return pm


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="tau")
def cli() -> None:
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


#: `tau run` parameters a config file does not hold (they name an action or this invocation)
NOT_IN_CONFIG = ("config", "print_config", "resume_id", "debug")


def _config_file(ctx: click.Context, param: click.Parameter, value: str | None) -> str | None:
    """`--config FILE`: a TOML file whose keys are `tau run` flags (`agent_model = "..."` or `agent-model`);
    it sets their defaults, so a flag on the command line still wins."""
    if not value:
        return value
    import tomllib

    from tau_emotion.core.registry import suggest

    try:
        data = tomllib.loads(Path(value).read_text(encoding="utf-8"))
    except (OSError, tomllib.TOMLDecodeError) as exc:
        raise click.BadParameter(f"{value}: {exc}", param_hint="--config") from None
    except UnicodeDecodeError as exc:  # a binary file
        raise click.BadParameter(f"{value}: not a UTF-8 TOML file (byte {exc.start})", param_hint="--config") from None
    params = {p.opts[0].lstrip("-").replace("-", "_"): p for p in ctx.command.params
              if isinstance(p, click.Option) and p.name not in NOT_IN_CONFIG}
    defaults: dict[str, Any] = {}
    for key, item in data.items():
        target = params.get(key.replace("-", "_"))
        if target is None:
            raise click.BadParameter(f"{value}: unknown key '{key}'.{suggest(key.replace('-', '_'), sorted(params))}",
                                     param_hint="--config")
        if isinstance(item, dict):
            item = json.dumps(item)  # a JSON-object option (--agent-args) written as a TOML table
        defaults[target.name] = list(item) if target.multiple and isinstance(item, list) else (
            [item] if target.multiple else item)
    ctx.default_map = {**(ctx.default_map or {}), **defaults}
    return value


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


@cli.command("run")
@click.option("--config", "config", type=click.Path(dir_okay=False, exists=True), default=None, is_eager=True,
              expose_value=True, callback=_config_file,
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
@click.option("--executor", default="local", show_default=True)
@click.option("--seed", default=0, show_default=True, type=int)
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
        try:
            run = prepare_run(config, db_path, pm=pm)
        except NoDomainSelected as exc:
            raise NoDomainSelected(f"{exc}; installed domains: {', '.join(installed) or 'none'}") from None
    with run_lock(db_path, run.run_id):  # a second process resuming the same run is refused
        summary = execute_run(run, "run", f"tau run --resume {run.run_id} --db {db_path}")
    if summary_json:
        Path(summary_json).write_text(json.dumps(summary, indent=2) + "\n", encoding="utf-8")
    print_summary(summary, pm)
    if summary.get("errors"):
        raise click.ClickException(f"{summary['errors']} trial(s) ended in error (see `tau show {run.run_id}`); "
                                   f"re-run them with: tau run --resume {run.run_id} --db {db_path}")


def writable_parent(path: str, flag: str) -> None:
    """Make `path`'s folder, or fail in one line naming `flag`: output folders exist before any work starts."""
    try:
        Path(path).expanduser().resolve().parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise click.BadParameter(f"cannot create the folder of {path}: {exc.strerror or exc}", param_hint=flag) from None
    if Path(path).is_dir():
        raise click.BadParameter(f"{path} is a folder: give a file path", param_hint=flag)


def execute_run(run: Any, verb: str, resume_command: str) -> dict[str, Any]:
    """Announce a prepared run on stderr, run it, and turn Ctrl-C into the command that resumes it."""
    from tau_emotion.core.runner import run_sync

    for reason in run.skipped:
        click.echo(f"skipping (--skip-broken): {reason}", err=True)
    done = run.total - len(run.pending)
    click.echo(f"{verb} {run.run_id}: {len(run.tasks)} tasks x {run.config.trials} trials"
               f" in {', '.join(run.domains)}" + (f" ({done} already done)" if done else ""), err=True)
    try:
        return run_sync(run)
    except KeyboardInterrupt:
        raise click.ClickException(f"interrupted; finished trials are saved. Resume with: {resume_command}") from None


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


def _field_type(annotation: Any) -> Any:
    """The click type of a pydantic field: Optional[X] -> X; bool -> a flag."""
    args = [a for a in typing.get_args(annotation) if a is not type(None)]
    if typing.get_origin(annotation) in (typing.Union, types.UnionType) and len(args) == 1:
        annotation = args[0]
    if typing.get_origin(annotation) is typing.Literal:
        return click.Choice([str(a) for a in typing.get_args(annotation)])
    return {int: int, float: float, bool: bool, str: str}.get(annotation, str)


def _bounded(kind: Any, metadata: list[Any]) -> Any:
    """An int or float click type narrowed to the field's pydantic bounds (ge, gt, le, lt), so click rejects
    `--retry-wait -5` with the allowed range."""
    if kind not in (int, float):
        return kind
    bounds: dict[str, Any] = {}
    for item in metadata:
        for attr, key, is_open in (("ge", "min", False), ("gt", "min", True), ("le", "max", False), ("lt", "max", True)):
            if getattr(item, attr, None) is not None:
                bounds[key] = getattr(item, attr)
                bounds[f"{key}_open"] = is_open
    if not bounds:
        return kind
    return (click.IntRange if kind is int else click.FloatRange)(**bounds)


def option_params(pm: PluginManager) -> list[click.Option]:
    """One click option per field of every registered option model, named --field-name."""
    params: list[click.Option] = []
    seen: dict[str, str] = {}
    for group, entry in pm.catalog("options").items():
        model: type[BaseModel] = entry.load()
        for name, info in model.model_fields.items():
            flag = "--" + name.replace("_", "-")
            if flag in seen:
                raise TauError(f"option {flag} is registered twice: by '{seen[flag]}' and by '{group}'")
            seen[flag] = group
            kind = _bounded(_field_type(info.annotation), info.metadata)
            default = info.get_default(call_default_factory=True)
            help_text = f"[{entry.owner}] {info.description or ''}".strip()
            if kind is bool:
                params.append(click.Option([flag, f"{OPTION_PREFIX}{group}__{name}"], is_flag=True, default=None,
                                           help=help_text))
            else:
                shown = f" [default: {default}]" if default not in (None, "") else ""
                params.append(click.Option([flag, f"{OPTION_PREFIX}{group}__{name}"], type=kind, default=None,
                                           help=help_text + shown))
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


def raw_plugin_options(pm: PluginManager, items: tuple[str, ...] | list[str]) -> list[tuple[str, str, str, str]]:
    """`-o KEY=VALUE` items as (group, field, value, key); KEY is a field of some plugin's options, or GROUP.FIELD."""
    catalog = pm.catalog("options")
    fields = {name: group for group, entry in catalog.items() for name in entry.load().model_fields}
    parsed = []
    for item in items:
        key, sep, value = item.partition("=")
        key = key.strip()
        group, dot, name = key.rpartition(".")
        if not dot:
            group, name = fields.get(key, ""), key
        if not sep or group not in catalog:
            known = ", ".join(sorted(fields)) or "none"
            raise click.BadParameter(f"expected KEY=VALUE with a plugin option as KEY, got {item!r} (options: {known})",
                                     param_hint="--option")
        parsed.append((group, name, value, key))
    return parsed


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
    """The summary as a table: all tasks, each domain, then the rows plugins add (`tau_summary_rows`)."""
    from rich.console import Console
    from rich.table import Table

    table = Table(title=cell(f"run {summary.get('run_id')}"))
    table.add_column("scope", no_wrap=True)
    table.add_column("tasks", justify="right")
    table.add_column("Avg@k", justify="right")
    for k in summary.get("pass_hat_k", {}):
        table.add_column(f"Pass^{k}", justify="right")
    table.add_column("mean reward", justify="right")
    table.add_column("neg. end", justify="right")

    def row(name: str, s: dict[str, Any]) -> None:
        table.add_row(cell(name), str(s.get("n_tasks", "")), f"{s.get('avg_at_k', float('nan')):.3f}",
                      *(f"{s.get('pass_hat_k', {}).get(k, float('nan')):.3f}" for k in summary.get("pass_hat_k", {})),
                      f"{s.get('mean_reward', float('nan')):+.3f}", f"{s.get('negative_end_rate', 0):.1%}")

    row("all", summary)
    for name, s in summary.get("by_domain", {}).items():
        row(name, s)
    for rows in (pm.hook.tau_summary_rows(summary=summary) if pm is not None else []):
        for name, s in rows or []:
            row(name, s)
    Console().print(table)
    if summary.get("errors"):
        click.echo(f"errors: {summary['errors']} trial(s) ended in error (counted as failures above, not as scores)")
    click.echo("terminations: " + ", ".join(f"{k}={v}" for k, v in summary.get("terminations", {}).items()))


def all_domains(extra: tuple[str, ...] = ()) -> Any:
    """The domains catalog of the command's manager (every installed plugin, plus `extra` module paths)."""
    return command_pm(extra).catalog("domains")


@cli.command("plugins")
@click.option("--json", "as_json", is_flag=True)
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


@cli.command("suites")
@debug_option
@guarded
def suites_command() -> None:
    """List suites: named plugin lists for `tau run --suite`."""
    for name, entry in command_pm().catalog("suites").items():
        click.echo(f"{name:20} {','.join(entry.load())}")


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
        noted = [t for t in tasks if t.meta.get("notes")]  # a pack's findings about its source data
        for note in (n for t in noted for n in t.meta["notes"]):
            click.echo(f"note: {note}")
        if noted:
            click.echo(f"{len(noted)} of {len(tasks)} task(s) in {domain}/{split} carry notes from their pack "
                       "(meta.notes; reported, not failed)", err=True)
        if problems:
            click.get_current_context().exit(1)
        return
    if as_json:
        click.echo(json.dumps([t.model_dump(mode="json") for t in tasks], indent=2))
        return
    for t in tasks:
        click.echo(safe(f"{t.id:18} {t.split:6} actions={len(t.gold.actions):<3} outputs={len(t.gold.outputs)}  "
                        f"{t.user.instruction[:80]}"))
    click.echo(f"{len(tasks)} task(s)", err=True)


def _store(db_path: str, store: str | None, extra: tuple[str, ...] = ()) -> Any:
    """Open the results for reading through the stores catalog; nothing is created."""
    from tau_emotion.core.runner import open_store

    return open_store(command_pm(extra), store, db_path, create=False)


def _run_exists(store: Any, run_id: str, db_path: str) -> None:
    if store.run_config(run_id) is None:
        known = ", ".join(store.run_ids()[-5:]) or "none"
        raise click.ClickException(f"no run '{run_id}' in {db_path} (latest runs: {known})")


@cli.command("runs")
@click.option("--json", "as_json", is_flag=True, help="One JSON object per run, metadata included.")
@click.option("--delete", "delete_id", default=None, metavar="RUN", help="Delete this run and its trials.")
@store_option
@db_option
@plugins_option
@debug_option
@guarded
def runs_command(as_json: bool, delete_id: str | None, db_path: str, store: str | None,
                 extra_plugins: tuple[str, ...]) -> None:
    """List stored runs: agent, user, models, status, trials, errors and Avg@k (or delete one)."""
    opened = _store(db_path, store, extra_plugins)
    if delete_id:
        from tau_emotion.core.runner import run_holder

        _run_exists(opened, delete_id, db_path)
        holder = run_holder(db_path, delete_id)
        if holder:
            raise click.ClickException(f"run '{delete_id}' is running now (process {holder}): stop it first, "
                                       "then delete it")
        opened.delete_run(delete_id)
        click.echo(f"deleted run {delete_id} from {db_path}", err=True)
        return
    runs = opened.runs()
    if as_json:
        click.echo(json.dumps([{**r, "status": run_status(r)} for r in runs], indent=2))
        return
    from rich.console import Console
    from rich.table import Table

    table = Table(title=cell(f"runs in {db_path}"))
    for name in ("run", "started", "status", "agent", "user", "models", "plugins", "trials", "errors", "Avg@k"):
        table.add_column(name, justify="right" if name in ("trials", "errors", "Avg@k") else "left")
    for r in runs:
        meta, s, config = r.get("meta") or {}, r["summary"] or {}, r["config"]
        started = meta.get("started") or r.get("created")
        expected = (meta.get("n_tasks") or s.get("n_tasks") or 0) * config.get("trials", 0)
        table.add_row(*map(cell, (  # data is shown, never parsed as markup (a model named "[/]")
            r["run_id"], _when(started), run_status(r), config.get("agent", "?"), config.get("user", "?"),
            " ".join(f"{k}={v}" for k, v in (meta.get("models") or {}).items()) or "-",
            ",".join(config.get("plugins", [])), f"{r['n_trials']}/{expected or '?'}",
            str(s.get("errors", "-")), f"{s['avg_at_k']:.3f}" if "avg_at_k" in s else "-")))
    Console(width=200).print(table)


def _when(stamp: float | None) -> str:
    import datetime as dt

    return dt.datetime.fromtimestamp(stamp).strftime("%Y-%m-%d %H:%M") if stamp else "-"


def _died(meta: dict[str, Any]) -> bool:
    """A run recorded as running by a process of this host that no longer exists (killed, e.g. SIGKILL)."""
    import socket

    if meta.get("host") != socket.gethostname() or not isinstance(meta.get("pid"), int):
        return False
    try:
        os.kill(meta["pid"], 0)
    except ProcessLookupError:
        return True
    except OSError:
        return False
    return False


def run_status(run: dict[str, Any]) -> str:
    """running, complete, interrupted or errored (from the run's metadata; older runs from their summary)."""
    meta = run.get("meta") or {}
    if meta.get("status") == "running" and _died(meta):
        return "interrupted"
    if meta.get("status"):
        return meta["status"]
    s = run.get("summary")
    if not s:
        return "unknown"
    if run.get("n_trials", 0) < s.get("n_tasks", 0) * s.get("trials", 0):
        return "interrupted"
    return "errored" if s.get("errors") else "complete"


@cli.command("show")
@click.argument("run_id")
@click.option("--json", "as_json", is_flag=True)
@store_option
@db_option
@plugins_option
@debug_option
@guarded
def show_command(run_id: str, as_json: bool, db_path: str, store: str | None, extra_plugins: tuple[str, ...]) -> None:
    """Show a run's summary and per-trial results."""
    store = _store(db_path, store, extra_plugins)
    _run_exists(store, run_id, db_path)
    summary = store.summary(run_id) or {}
    meta = (store.run_meta(run_id) if hasattr(store, "run_meta") else None) or {}
    results = store.results(run_id)
    if as_json:
        click.echo(json.dumps({"meta": meta, "summary": summary, "trials": [
            {"task_id": r.task_id, "trial": r.trial, "reward": r.reward, "status": r.status,
             "termination": r.termination.reason, "error": r.error} for r in results]}, indent=2))
        return
    if meta:
        models = " ".join(f"{k}={v}" for k, v in (meta.get("models") or {}).items())
        click.echo(safe(f"run {run_id}: {meta.get('status', '?')}; agent={meta.get('agent')} user={meta.get('user')} "
                        f"{models} seed={meta.get('seed')} started {_when(meta.get('started'))} "
                        f"ended {_when(meta.get('ended'))} harness {meta.get('harness_version')} "
                        f"{meta.get('git_commit') or ''}".rstrip()))
    if summary:
        print_summary(summary, command_pm())
    for r in results:
        if r.status == "error":  # an errored trial is not a score of 0
            click.echo(safe(f"{r.task_id:22} trial={r.trial} ERROR {r.error or ''}"))
            continue
        click.echo(safe(f"{r.task_id:22} trial={r.trial} reward={r.reward:+.0f} {r.termination.reason}"))


@cli.command("export")
@click.argument("run_id")
@click.option("--format", "fmt", type=click.Choice(["jsonl"]), default="jsonl", show_default=True)
@click.option("--out", type=click.Path(dir_okay=False), default=None, help="File (default: stdout).")
@store_option
@db_option
@plugins_option
@debug_option
@guarded
def export_command(run_id: str, fmt: str, out: str | None, db_path: str, store: str | None,
                   extra_plugins: tuple[str, ...]) -> None:
    """Export a run's trials (messages included) as JSON lines."""
    store = _store(db_path, store, extra_plugins)
    _run_exists(store, run_id, db_path)
    lines = [r.model_dump_json() for r in store.results(run_id)]
    text = "\n".join(lines) + ("\n" if lines else "")
    if out:
        writable_parent(out, "--out")
        Path(out).write_text(text, encoding="utf-8")
        click.echo(f"wrote {len(lines)} trials to {out}", err=True)
    else:
        sys.stdout.write(text)


def build_cli(pm: PluginManager | None = None) -> click.Group:
    """The `tau` group with every installed plugin's commands and `tau run` options (once per process)."""
    if not getattr(cli, "_tau_plugins_added", False):
        pm = pm or load_all_plugins()
        pm.hook.tau_register_commands(cli=cli)
        run = cli.commands["run"]
        run.params[-3:-3] = option_params(pm)  # before --store, --db and --debug
        cli._tau_plugins_added = True  # type: ignore[attr-defined]
    return cli


def main() -> None:
    from tau_emotion.core.containment import exit_despite_threads

    pm = load_all_plugins()
    try:
        build_cli(pm).main(prog_name="tau", obj=pm)
    except SystemExit as exc:  # click always ends this way; a plugin's leftover thread must not hold the exit
        exit_despite_threads(exc.code)
        raise
