"""The public helpers for plugins that add `tau` commands (`tau_register_commands`).

A plugin's command uses these so it behaves like the core's own: `guarded` prints a `TauError` as
one line (`--debug` shows the traceback); `command_pm` is the command's one plugin manager;
`db_option`, `store_option`, `plugins_option` and `debug_option` are the shared flags of reading
commands; `model_params` turns a pydantic model into click options (how `tau run` options and
`tau train NAME` flags are made); `insert_params` adds options to another command by name;
`role_model_params` and `role_settings_from` give a command one role's model flags (`--judge-model`,
`--judge-api-base`, ...) from the roles contract; `raw_plugin_options` reads `-o KEY=VALUE` items and
`execute_run` runs a prepared run as `tau run` does (for commands that run trials); `open_results`,
`require_run` and `all_domains` are how the reading commands reach stored runs and domains;
`writable_parent` makes (or refuses) an output file's folder before any work. Everything here is stable API: plugins import it,
never `tau_emotion.core.cli`.
"""

from __future__ import annotations

import functools
import json
import os
import types
import typing
from collections.abc import Callable
from pathlib import Path
from typing import Any

import click
from pydantic import BaseModel

from tau_emotion.core.errors import TauError
from tau_emotion.core.manager import PluginManager, Selection, load_all_plugins

__all__ = ["INTERRUPTED", "NOT_IN_CONFIG", "all_domains", "bounded_type", "command_pm", "config_file", "db_option", "debug_option", "default_db", "execute_run", "fail",
           "field_type", "guarded", "insert_params", "model_params", "open_results", "plugins_option",
           "raw_plugin_options", "require_run", "role_model_params", "role_settings_from", "store_option", "writable_parent"]

#: the results file of an earlier version: relative to the working directory, still read where one exists
LEGACY_DB = ".tau/runs.db"
DEFAULT_DB_HELP = "TAU_DB, else $XDG_DATA_HOME/tau/runs.db (~/.local/share/tau/runs.db)"
#: the exit status of a command stopped by Ctrl-C (SIGINT), as shells report 128 + 2
INTERRUPTED = 130


def default_db() -> str:
    """Where results are kept when `--db` is not given: `TAU_DB`; else `./.tau/runs.db` where the working
    directory holds one (what earlier versions wrote; a note says so); else one file per user,
    `$XDG_DATA_HOME/tau/runs.db`, so runs made anywhere are visible from anywhere."""
    if os.environ.get("TAU_DB"):
        return os.environ["TAU_DB"]
    if os.path.isfile(LEGACY_DB):
        click.echo(f"note: using {LEGACY_DB} of this folder (an earlier default); move it to {user_db()} "
                   "or set TAU_DB to reach it from anywhere", err=True)
        return LEGACY_DB
    return user_db()


def user_db() -> str:
    base = os.environ.get("XDG_DATA_HOME") or os.path.join(os.path.expanduser("~"), ".local", "share")
    return os.path.join(base, "tau", "runs.db")


def fail(exc: BaseException) -> click.ClickException:
    """`exc` as the one-line error click prints, scrubbed of keys and fit for a terminal (`core/terminal.py`)."""
    from tau_emotion.core.limits import scrub
    from tau_emotion.core.terminal import safe

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
db_option = click.option("--db", "db_path", default=default_db, show_default=DEFAULT_DB_HELP,
                         help="Where results are kept (a file or folder, as the store wants).")
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
        click.echo(f"Error: interrupted; finished trials are saved. Resume with: {resume_command}", err=True)
        raise SystemExit(INTERRUPTED) from None


#: `tau run` parameters a config file does not hold (they name an action or this invocation)
NOT_IN_CONFIG = ("config", "print_config", "resume_id", "debug")


def config_file(ctx: click.Context, param: click.Parameter, value: str | None) -> str | None:
    """`--config FILE` (an eager option's callback): a TOML file whose keys are the command's flags (`agent_model = "..."` or `agent-model`);
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


def all_domains(extra: tuple[str, ...] = ()) -> Any:
    """The domains catalog of the command's manager (every installed plugin, plus `extra` module paths)."""
    return command_pm(extra).catalog("domains")


def open_results(db_path: str, store: str | None, extra: tuple[str, ...] = ()) -> Any:
    """Open the results for reading through the stores catalog (`--store`, `--db`); nothing is created."""
    from tau_emotion.core.runner import open_store

    return open_store(command_pm(extra), store, db_path, create=False)


def unreadable(results: list[Any]) -> int:
    """How many of a run's results are rows its store could not read back (`protocols.UNREADABLE`)."""
    from tau_emotion.core.protocols import UNREADABLE

    return sum(1 for r in results if r.status == "error" and r.termination.reason == UNREADABLE)


def unreadable_error(count: int, run_ids: str, what: str) -> click.ClickException:
    """The one-line failure of a reader whose figures leave out `count` rows it could not read."""
    return click.ClickException(f"{count} unreadable trial row(s) in run {run_ids}: {what} leave(s) them out "
                                f"(`tau show {run_ids.split(',')[0]} --failed` lists them)")


def require_run(store: Any, run_id: str, db_path: str) -> str:
    """The stored run id that `run_id` names (an id, `latest` or a unique prefix of the id or its random tail);
    a one-line error naming the latest runs (or the candidates of an ambiguous prefix) otherwise."""
    from tau_emotion.core.runner import resolve_run

    return resolve_run(store, run_id, db_path)


def field_type(annotation: Any) -> Any:
    """The click type of a pydantic field: Optional[X] -> X; a Literal -> a choice; bool -> bool (a flag)."""
    args = [a for a in typing.get_args(annotation) if a is not type(None)]
    if typing.get_origin(annotation) in (typing.Union, types.UnionType) and len(args) == 1:
        annotation = args[0]
    if typing.get_origin(annotation) is typing.Literal:
        return click.Choice([str(a) for a in typing.get_args(annotation)])
    return {int: int, float: float, bool: bool, str: str}.get(annotation, str)


def bounded_type(kind: Any, metadata: list[Any]) -> Any:
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


def model_params(model: type[BaseModel], *, dest: Callable[[str], str] = str, owner: str | None = None,
                 defaults: bool = False, skip: tuple[str, ...] = ()) -> list[click.Option]:
    """One click option `--field-name` per field of `model` (its description the help, bounds checked by click).

    `dest(field)` names the parameter (default: the field name); `owner` prefixes the help with `[owner]`.
    With `defaults=False` every option defaults to None (so a caller sees only what was given) and the
    field's default is shown in the help; with `defaults=True` it is the option's default and a required
    field is a required option. A bool field is a flag (`--x/--no-x` with `defaults=True`).
    """
    params: list[click.Option] = []
    for name, info in model.model_fields.items():
        if name in skip:
            continue
        flag = "--" + name.replace("_", "-")
        kind = bounded_type(field_type(info.annotation), info.metadata)
        help_text = f"[{owner}] {info.description or ''}".strip() if owner else info.description
        if kind is bool:
            decls = [f"{flag}/--no-{flag[2:]}" if defaults else flag, dest(name)]
            params.append(click.Option(decls, is_flag=True, default=None, help=help_text))
        elif defaults and info.is_required():
            params.append(click.Option([flag, dest(name)], type=kind, required=True, help=help_text))
        elif defaults:
            params.append(click.Option([flag, dest(name)], type=kind, default=info.get_default(call_default_factory=True), show_default=True,
                                       help=help_text))
        else:
            default = info.get_default(call_default_factory=True)
            shown = f" [default: {default}]" if default not in (None, "", {}) else ""
            params.append(click.Option([flag, dest(name)], type=kind, default=None, help=(help_text or "") + shown))
    return params


def insert_params(command: click.Command, params: list[click.Parameter], *, before: str) -> None:
    """Add `params` to `command` in front of its parameter named `before` (a `TauError` when it has none)."""
    names = [p.name for p in command.params]
    if before not in names:
        raise TauError(f"command '{command.name}' has no parameter '{before}' to add options before "
                       f"(it has: {', '.join(str(n) for n in names)})")
    at = names.index(before)
    command.params[at:at] = params


def role_model_params(role: str, description: str = "") -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """A decorator giving a command the roles contract's options of `role` (`--ROLE-model`, `--ROLE-api-base`,
    `--ROLE-api-key`, `--ROLE-temperature`, `--ROLE-client`, `--ROLE-args`); read them with `role_settings_from`."""
    from tau_emotion.core.roles import role_options_model

    params = model_params(role_options_model(role, description))

    def decorate(fn: Callable[..., Any]) -> Callable[..., Any]:
        # as click's own option decorators do: they collect on the function, in reverse, until the command is made
        memo = fn.__dict__.setdefault("__click_params__", [])
        memo.extend(reversed(params))
        return fn

    return decorate


def role_settings_from(role: str, kw: dict[str, Any]) -> Any:
    """Pop `role`'s model options from a command's keyword arguments: its `ModelSettings` (keys as the roles
    contract finds them), or None when `--ROLE-model` was not given."""
    from tau_emotion.core.models import RunConfig
    from tau_emotion.core.roles import FIELDS, role_settings

    values = {f"{role}_{name}": kw.pop(f"{role}_{name}", None) for name in FIELDS}
    if not values[f"{role}_model"]:
        return None
    return role_settings(RunConfig(options={role: {k: v for k, v in values.items() if v is not None}}), role)
