"""Tasks x trials -> executor -> store -> metrics, with resume.

Every finished trial is written to the store the moment it ends, so a crash or Ctrl-C loses at
most the trials in flight; `resume_run` re-runs exactly the (task, trial) pairs that have no
successful row yet.
"""

from __future__ import annotations

import asyncio
import datetime as _dt
import gc
import inspect
import os
import secrets
import signal
import sys
import threading
from collections import Counter
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager, suppress
from dataclasses import dataclass, field
from typing import Any

from pydantic import BaseModel, ValidationError

from tau_emotion.core.containment import (
    GRACE,
    LoopBlocked,
    abandoned,
    block_deadline,
    guarded,
    interrupts,
    is_interruption,
    run_abandonable,
)
from tau_emotion.core.domain import Domain, format_validation_error
from tau_emotion.core.episode import Episode
from tau_emotion.core.errors import DataError, TauError
from tau_emotion.core.limits import (
    MAX_ERROR_TEXT,
    REDACTED,
    holds_redacted,
    redact,
    redact_options,
    remember_secrets,
    scrub,
    truncate,
)
from tau_emotion.core.manager import PluginManager, Selection, get_plugin_manager, installed_entry_points
from tau_emotion.core.models import EVAL_KIND, EpisodeResult, RunConfig, Task, Termination
from tau_emotion.core.registry import suggest
from tau_emotion.core.roles import defining_changes, env_api_key


class RunError(TauError):
    """A run cannot start; the message says why and what to do."""


class NoDomainSelected(RunError):
    """The selected plugins register no domain."""


def new_run_id() -> str:
    return _dt.datetime.now().strftime("%Y%m%d-%H%M%S-") + secrets.token_hex(3)


@dataclass
class Run:
    run_id: str
    config: RunConfig
    pm: PluginManager
    store: Any
    domains: dict[str, Domain]
    tasks: list[Task]
    pending: list[tuple[Task, int]] = field(default_factory=list)
    #: this process's stored results, without their transcripts (`messages`: read them from the store)
    results: list[EpisodeResult] = field(default_factory=list)
    #: tasks dropped by --skip-broken, with why their gold does not replay
    skipped: list[str] = field(default_factory=list)
    #: the store may hold rows of this run that this process did not write (a resumed run)
    prior_rows: bool = True

    @property
    def total(self) -> int:
        return len(self.tasks) * self.config.trials


def build_plugin_manager(config: RunConfig) -> PluginManager:
    sel = Selection.parse(config.plugins)
    return get_plugin_manager(sel.selected, sel.blocked)


def selected_domains(pm: PluginManager, config: RunConfig) -> dict[str, Domain]:
    catalog = pm.catalog("domains")
    names = config.domains or catalog.names()
    domains: dict[str, Domain] = {}
    for name in names:
        obj = catalog.get(name)
        domains[name] = domain = obj if isinstance(obj, Domain) else obj()
        domain.graph_edges  # noqa: B018 - a malformed graph.json is one line now, not silence until a graph is walked
    return domains


def select_tasks(pm: PluginManager, config: RunConfig, domains: dict[str, Domain]) -> list[Task]:
    tasks: list[Task] = []
    for domain in domains.values():
        chosen = domain.tasks(config.split)
        if config.n_tasks is not None:
            chosen = chosen[: config.n_tasks]
        tasks.extend(chosen)
    if config.task_ids:
        wanted = set(config.task_ids)
        known = {t.id for d in domains.values() for t in d.tasks(config.split)}
        unknown = sorted(wanted - known)
        if unknown:
            raise RunError(f"unknown task id(s) in split '{config.split}': {', '.join(unknown)}")
        tasks = [t for d in domains.values() for t in d.tasks(config.split) if t.id in wanted]
    refuse_shared_ids(tasks)
    installed = sorted(installed_entry_points())
    tasks = [validate_blocks(pm, t, installed) for t in tasks]
    with plugin_hook("tau_modify_tasks"):
        pm.hook.tau_modify_tasks(tasks=tasks, config=config, pluginmanager=pm)
    return tasks


def refuse_shared_ids(tasks: list[Task]) -> None:
    """A trial is stored under (run, task id, trial): two selected domains with the same task id would
    overwrite each other's rows (16 trials ran, 8 were stored). Refused before anything runs."""
    first: dict[str, Task] = {}
    clashes: list[str] = []
    for task in tasks:
        other = first.setdefault(task.id, task)
        if other is not task:
            clashes.append(f"'{task.id}' in {other.domain} ({other.source or 'tasks'}) and {task.domain} "
                           f"({task.source or 'tasks'})")
    if clashes:
        raise RunError(f"{len(clashes)} task id(s) are in more than one selected domain, so their results would "
                       f"overwrite each other: {'; '.join(clashes[:5])}{' ...' if len(clashes) > 5 else ''} "
                       "(run those domains separately, or give the tasks distinct ids)")


def validate_blocks(pm: PluginManager, task: Task, installed: list[str] | None = None) -> Task:
    """Validate each block of `task` through the model its plugin registered (`tau_register_blocks`).

    A block whose plugin is installed but not loaded stays as raw data; a block no installed
    plugin owns is an error naming it.
    """
    if not task.blocks:
        return task
    catalog = pm.catalog("blocks")
    where = f"{task.source or 'tasks'}: task '{task.id}'"
    blocks: dict[str, Any] = {}
    for name, value in task.blocks.items():
        if name in catalog:
            model: type[BaseModel] = catalog.get(name)
            try:
                blocks[name] = value if isinstance(value, model) else model.model_validate(value)
            except ValidationError as exc:
                raise DataError(f"{where}: block '{name}': {format_validation_error(exc)}") from None
            continue
        installed = sorted(installed_entry_points()) if installed is None else installed
        if name not in installed:
            known = sorted({*catalog.names(), *installed})
            raise DataError(f"{where}: unknown block '{name}': no installed plugin owns it.{suggest(name, known)}")
        blocks[name] = value
    copy = task.model_copy(update={"blocks": blocks})
    copy._source = task.source
    return copy


def store_name(pm: PluginManager, name: str | None) -> str:
    """`name`, or the store registered as the default."""
    if name:
        return name
    default = pm.catalog("stores").default()
    if default is None:
        raise RunError("no result store is installed as the default: pass --store NAME")
    return default


def open_store(pm: PluginManager, name: str | None, path: str, *, create: bool = True) -> Any:
    return pm.catalog("stores").get(store_name(pm, name))(path, create=create)


def check_options(pm: PluginManager, config: RunConfig) -> None:
    """Every option group belongs to a loaded plugin, and its values validate against that plugin's model."""
    catalog = pm.catalog("options")
    for group, values in list(config.options.items()):
        if group not in catalog:
            raise RunError(f"options for '{group}' were given, but no loaded plugin takes them: "
                           f"add the plugin with --plugins {group}")
        model: type[BaseModel] = catalog.get(group)
        try:
            config.options[group] = model.model_validate(values).model_dump(mode="json", exclude_unset=True)
        except ValidationError as exc:
            raise RunError(f"plugin options '{group}': {format_validation_error(exc)}") from None
        bad = non_finite(config.options[group])
        if bad:  # NaN passes every range check (it compares false), inf sleeps or waits forever
            raise RunError(f"plugin options '{group}': {bad} is not a finite number")


def non_finite(values: Any, where: str = "") -> str | None:
    """The name of the first non-finite float in `values` (options, nested), or None."""
    import math

    if isinstance(values, float) and not math.isfinite(values):
        return where or "a value"
    if isinstance(values, dict):
        for key, value in values.items():
            found = non_finite(value, f"{where}.{key}" if where else str(key))
            if found:
                return found
    if isinstance(values, list):
        for i, value in enumerate(values):
            found = non_finite(value, f"{where}[{i}]")
            if found:
                return found
    return None


@contextmanager
def plugin_hook(name: str) -> Iterator[None]:
    """A hook that runs before any trial (`tau_configure`, `tau_modify_tasks`): a plugin's bug there is one
    line naming the hook (a TauError a plugin raised on purpose passes through as it is)."""
    try:
        yield
    except (TauError, KeyboardInterrupt):
        raise
    except Exception as exc:
        # one line for people; the plugin's traceback stays the cause (`--debug` shows it)
        raise RunError(scrub(f"plugin hook {name} failed: {type(exc).__name__}: {exc}")[:MAX_ERROR_TEXT]) from exc


def prepare_run(config: RunConfig, db_path: str, run_id: str | None = None, pm: PluginManager | None = None) -> Run:
    pm = pm or build_plugin_manager(config)
    check_options(pm, config)
    remember_secrets(config.options)  # their literal values are scrubbed from every text from now on
    with plugin_hook("tau_configure"):
        pm.hook.tau_configure(config=config)
    remember_secrets(config.options)  # and those a plugin set (a managed server's endpoint)
    domains = selected_domains(pm, config)
    if not domains:
        raise NoDomainSelected("no domain selected: add one with --plugins (`tau domains` lists the installed ones)")
    tasks = select_tasks(pm, config, domains)
    if not tasks:
        raise RunError(f"no tasks in split '{config.split}' for domain(s) {', '.join(domains)}")
    broken = broken_gold(domains, tasks)
    if broken and not config.skip_broken:
        raise RunError(f"{len(broken)} task(s) have gold that does not replay, so they cannot be scored: "
                       + "; ".join(broken.values()) + " (fix the task file, or pass --skip-broken to drop them)")
    tasks = [t for t in tasks if t.id not in broken]
    if not tasks:
        raise RunError("every selected task has broken gold: " + "; ".join(broken.values()))
    # fail before any trial runs if the agent, user or executor is unknown
    for kind, name in (("agents", config.agent), ("users", config.user), ("executors", config.executor)):
        pm.catalog(kind).entry(name)
    store = open_store(pm, config.store, db_path)
    prior_rows = run_id is not None
    if run_id is None:
        run_id = new_run_id()
        # keys, tokens and passwords are used for this run but never stored
        store.create_run(run_id, config.model_copy(update={"options": redact_options(config.options)}))
    done = store.done_trials(run_id)
    run = Run(run_id=run_id, config=config, pm=pm, store=store, domains=domains, tasks=tasks,
              skipped=list(broken.values()), prior_rows=prior_rows)
    run.pending = [(t, k) for t in tasks for k in range(config.trials) if (t.id, k) not in done]
    return run


def broken_gold(domains: dict[str, Domain], tasks: list[Task]) -> dict[str, str]:
    """Task id -> why its gold does not replay (file, task id, action index, reason), for every selected task.

    Each gold replays once here (milliseconds; the hash is cached for scoring), so broken gold stops
    a run before its first trial instead of failing every trial of that task at scoring time.
    """
    from tau_emotion.core.reward import expected_hash

    broken: dict[str, str] = {}
    for task in tasks:
        try:
            expected_hash(domains[task.domain], task)
        except Exception as exc:  # GoldReplayError names the action; anything else is a broken pack
            broken[task.id] = str(exc) if isinstance(exc, RuntimeError) and "gold action" in str(exc) \
                else f"{task.source or task.domain}: task '{task.id}': gold replay failed: {type(exc).__name__}: {exc}"
    return broken


#: the run reference that means the newest stored run
LATEST = "latest"


def run_kind(store: Any, run_id: str) -> str:
    """The kind of a stored run (`eval` for runs stored before runs had kinds)."""
    config = store.run_config(run_id)
    return config.kind if config is not None else EVAL_KIND


#: a run reference by tag: `tag:baseline` is the newest run whose metadata lists that tag (`tau tag`)
TAG_PREFIX = "tag:"


def run_tags(meta: dict[str, Any] | None) -> list[str]:
    """The tags a run's metadata lists (`tags`, written by the command that tags runs)."""
    tags = (meta or {}).get("tags")
    return [str(t) for t in tags] if isinstance(tags, list) else []


def resolve_run(store: Any, ref: str, where: str = "") -> str:
    """The stored run id that `ref` names: an exact id, `latest` (the newest evaluation, a run of kind `eval`, or
    the newest run when none is stored),
    `latest:KIND` (the newest run of that kind, `latest:play`), `tag:NAME` (the newest run tagged NAME), or a
    unique prefix of an id or of its random tail (`20261201-1426` or `c52f`). Anything else is one error
    listing candidates."""
    ids = store.run_ids()
    if store.run_config(ref) is not None:
        return ref
    if ref.startswith(TAG_PREFIX):
        name = ref[len(TAG_PREFIX):].strip()
        rows = store.runs()
        tagged = [r["run_id"] for r in rows if name in run_tags(r.get("meta"))]
        if tagged:
            return tagged[-1]
        known = sorted({t for r in rows for t in run_tags(r.get("meta"))})
        raise RunError(f"no run tagged '{name}' in {where or 'the results'} (tags: {', '.join(known) or 'none'}; "
                       f"tag a run with: tau tag RUN {name})")
    if (ref == LATEST or ref.startswith(LATEST + ":")) and ids:
        kind = ref.partition(":")[2].strip() or EVAL_KIND
        for run_id in reversed(ids):
            if run_kind(store, run_id) == kind:
                return run_id
        if ref == LATEST:  # no evaluation stored at all: the newest run is the one meant
            return ids[-1]
        newest = run_kind(store, ids[-1])
        raise RunError(f"no run of kind '{kind}' in {where or 'the results'} (the latest run, {ids[-1]}, is of kind "
                       f"'{newest}': `{LATEST}:{newest}` names it; `tau runs` shows each run's kind)")
    found = [i for i in ids if i.startswith(ref) or i.rsplit("-", 1)[-1].startswith(ref)] if ref else []
    if len(found) == 1:
        return found[0]
    where = where or "the results"
    if found:
        raise RunError(f"run reference '{ref}' is ambiguous in {where}: it matches {', '.join(found[-5:])}"
                       + (f" and {len(found) - 5} more" if len(found) > 5 else "") + "; give more characters")
    known = ", ".join(ids[-5:]) or "none"
    raise RunError(f"no run '{ref}' in {where} (latest runs: {known}; `latest` or a unique prefix also works)")


def restore_secrets(run_id: str, config: RunConfig, given: dict[str, dict[str, Any]] | None) -> None:
    """Put back the secret options a stored config holds as [REDACTED]: from `given` (flags of this
    command), else the environment (TAU_<NAME>; a role's key as `roles.env_api_key` finds it); a missing
    one is an error."""
    for group, values in config.options.items():
        for name, value in list(values.items()):
            if not holds_redacted(value):
                continue
            env = f"TAU_{name.upper()}"
            if (given or {}).get(group, {}).get(name) not in (None, REDACTED) \
                    and not holds_redacted((given or {}).get(group, {}).get(name)):
                values[name] = given[group][name]  # type: ignore[index]
            elif os.environ.get(env):
                values[name] = os.environ[env]
            elif name == f"{group}_api_key" and env_api_key(group):
                del values[name]  # the roles contract finds the key in the environment again
            else:
                flag = "--" + name.replace("_", "-")
                raise RunError(f"run '{run_id}' used {flag}, which is not stored: pass {flag} again "
                               f"(or set {env}) with --resume")


#: what defines a run: a resume that changes one of these would mix two experiments in one run
DEFINING = ("agent", "user", "trials", "seed", "split", "n_tasks", "task_ids", "max_steps", "scoring")
#: fields a resume may change (the run's infrastructure, not its experiment)
ADJUSTABLE = ("concurrency", "executor", "tool_timeout", "trial_timeout", "block_timeout")


def check_resume_changes(run_id: str, config: RunConfig, given: dict[str, Any],
                         options: dict[str, dict[str, Any]] | None, pm: PluginManager | None = None) -> None:
    """Refuse a resume that changes what defines run `run_id` (its agent, user, tasks, trials, seed, and the
    plugin options their owners mark with `defines_run()`: the roles' models)."""
    changed = [f"--{k.replace('_', '-')} {getattr(config, k)!r} -> {v!r}" for k, v in given.items()
               if k in DEFINING and v != getattr(config, k)]
    catalog = pm.catalog("options") if pm is not None else None
    for group, values in (options or {}).items():
        if catalog is not None and group in catalog:
            changed += defining_changes(catalog.get(group), config.options.get(group, {}), values)
    if changed:
        raise RunError(f"--resume {run_id} cannot change what defines the run ({'; '.join(changed)}); endpoints, "
                       "model arguments and concurrency may change. Start a new run for the others")


def run_holder(db_path: str, run_id: str) -> str | None:
    """The pid of the process running run `run_id` now (it holds the run's lock), or None."""
    import fcntl

    path = f"{db_path}.{run_id}.lock"
    try:
        handle = open(path, encoding="utf-8")  # noqa: SIM115 - closed below
    except OSError:
        return None
    with handle:
        try:
            fcntl.flock(handle, fcntl.LOCK_SH | fcntl.LOCK_NB)
        except OSError:
            return handle.read().strip() or "?"
    return None


@contextmanager
def run_lock(db_path: str, run_id: str) -> Iterator[None]:
    """Hold run `run_id` for this process: a second process running or resuming it refuses while this one lives.

    An `flock` on `<db>.<run>.lock` (released by the kernel when the process dies, so a crash never
    leaves a stale lock); the file holds the pid for the message."""
    import fcntl

    path = f"{db_path}.{run_id}.lock"
    handle = open(path, "a+", encoding="utf-8")  # noqa: SIM115 - held for the whole run
    try:
        fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        handle.seek(0)
        pid = handle.read().strip() or "?"
        handle.close()
        raise RunError(f"run '{run_id}' is being run by process {pid} (lock {path}); wait for it or stop it "
                       "before resuming") from None
    try:
        handle.seek(0)
        handle.truncate()
        handle.write(str(os.getpid()))
        handle.flush()
        yield
    finally:
        handle.close()
        with suppress(OSError):
            os.unlink(path)


def resume_run(run_id: str, db_path: str, store: str | None = None, pm: PluginManager | None = None,
               options: dict[str, dict[str, Any]] | None = None, skip_broken: bool = False,
               given: dict[str, Any] | None = None) -> Run:
    """Finish run `run_id`: its stored config, its plugins, only the trials with no successful row.

    `given` holds the core settings passed again on the command line: those that define the run
    must equal the stored ones (`check_resume_changes`); `ADJUSTABLE` ones replace them.

    `pm` is a manager holding at least the store plugin (the CLI passes its all-plugins manager);
    it is narrowed to the run's own plugin list. `options` given now (e.g. --no-progress, a key that
    was not stored) win over the stored ones; `skip_broken` lets a run whose gold broke since it
    started finish without those tasks.
    """
    pm = pm or get_plugin_manager()
    opened = open_store(pm, store, db_path, create=False)
    run_id = resolve_run(opened, run_id, db_path)
    config = opened.run_config(run_id)
    opened.close()
    check_resume_changes(run_id, config, given or {}, options, pm)
    restore_secrets(run_id, config, options)
    config.skip_broken = config.skip_broken or skip_broken
    for name, value in (given or {}).items():
        if name in ADJUSTABLE:
            setattr(config, name, value)
    for group, values in (options or {}).items():
        config.options.setdefault(group, {}).update(values)
    config.store = store_name(pm, config.store or store)
    sel = Selection.parse(config.plugins)
    return prepare_run(config, db_path, run_id=run_id, pm=pm.select(sel))


async def first_answer(answers: list[Any]) -> Any:
    """Await hook answers in order and return the first that is not None; close the rest unawaited."""
    found = None
    for answer in answers:
        if found is None:
            found = await answer if inspect.isawaitable(answer) else answer
        elif inspect.iscoroutine(answer):
            answer.close()
    return found


def failed_result(task_id: str, domain: str, trial: int, stage: str, exc: BaseException) -> EpisodeResult:
    """The `error` row of a trial that failed outside the episode loop: it names task, trial, stage and reason."""
    reason = truncate(scrub(f"task '{task_id}' trial {trial}: {stage}: {type(exc).__name__}: {exc}"), MAX_ERROR_TEXT)
    return EpisodeResult(task_id=task_id, domain=domain, trial=trial, reward=0.0, success=False, status="error",
                         termination=Termination(reason="error", detail=reason), error=reason)


async def run_one(run: Run, task: Task, trial: int) -> EpisodeResult:
    """One trial; whatever goes wrong in it (building its agent or user, the loop, scoring, hooks) fails it alone.

    Plugin code runs under containment (`core/containment.py`): a `BaseException` it raises is this
    trial's error (a real Ctrl-C still interrupts), a stretch of it that holds the event loop past
    `--block-timeout` is stopped, and the whole trial is stopped (or abandoned) at `--trial-timeout`."""
    where: dict[str, Any] = {"stage": "building the episode", "episode": None}
    try:
        return await run_abandonable(_contained_trial(run, task, trial, where), run.config.trial_timeout)
    except Exception as exc:  # the trial deadline
        return _trial_failed(run, task, trial, where, exc)
    finally:
        if where["episode"] is not None:  # observers had it at tau_episode_end; nothing reads a finished episode
            where["episode"].release()


async def _contained_trial(run: Run, task: Task, trial: int, where: dict[str, Any]) -> EpisodeResult:
    # everything is caught here, inside the trial's task: a SystemExit or KeyboardInterrupt reaching
    # an asyncio task is re-raised out of the event loop and would end the run
    try:
        return await guarded(_trial(run, task, trial, where), run.config.block_timeout)
    except BaseException as exc:
        if is_interruption(exc):
            raise
        return _trial_failed(run, task, trial, where, exc)


def _trial_failed(run: Run, task: Task, trial: int, where: dict[str, Any], exc: BaseException) -> EpisodeResult:
    failed = failed_result(task.id, task.domain, trial, where["stage"], exc)
    ep, where["stage"] = where["episode"], "finished"
    if ep is not None:
        with suppress(Exception, LoopBlocked), block_deadline(run.config.block_timeout):
            run.pm.hook.tau_episode_end(episode=ep, result=failed)  # progress bars still see the trial end
    return failed


async def _trial(run: Run, task: Task, trial: int, where: dict[str, Any]) -> EpisodeResult:
    ep = where["episode"] = Episode(task=task, domain=run.domains[task.domain], trial=trial, config=run.config,
                                    pm=run.pm, run=run)
    # agents and users are built with a narrow view each, not the episode (nor one another's handle)
    where["stage"] = f"building agent '{run.config.agent}'"
    ep.agent = run.pm.catalog("agents").get(run.config.agent)(ep.view())
    where["stage"] = f"building user '{run.config.user}'"
    ep.user = run.pm.catalog("users").get(run.config.user)(ep.view())
    where["stage"] = "tau_episode_start"
    run.pm.hook.tau_episode_start(episode=ep)
    where["stage"] = "running the episode"
    result: EpisodeResult | None = await first_answer(run.pm.hook.tau_run_episode(episode=ep))
    if result is None:
        raise RunError("no plugin ran the episode (every tau_run_episode implementation declined)")
    where["stage"] = "tau_episode_end"
    run.pm.hook.tau_episode_end(episode=ep, result=result)
    where["stage"] = "finished"
    return result


@dataclass(frozen=True)
class TrialJob:
    """One pending trial, a `protocols.Job`: `await job()` runs it here; an executor that runs trials in other
    processes rebuilds it from `run_id`, `config`, `task` and `trial`."""

    run: Run = field(repr=False)
    task: Task
    trial: int

    @property
    def run_id(self) -> str:
        return self.run.run_id

    @property
    def config(self) -> RunConfig:
        return self.run.config

    def __call__(self) -> Any:
        return run_one(self.run, self.task, self.trial)


def summarize(run: Run, results: list[EpisodeResult]) -> dict[str, Any]:
    """The run summary: core counts plus every metric's keys, over `results` (the run's stored trials).

    `results` may come without their transcripts (`stored_results`); a metric registered with
    `transcripts=True` gets them, read back from the store once.
    """
    summary: dict[str, Any] = {
        "run_id": run.run_id,
        "plugins": run.config.plugins,
        "n_tasks": len(run.tasks),
        "trials": run.config.trials,
    }
    summary["errors"] = sum(r.status == "error" for r in results)
    given_by = {key: "core" for key in summary}
    full: list[EpisodeResult] | None = None
    for name, entry in run.pm.catalog("metrics").items():
        given = results
        if entry.meta.get("transcripts"):
            full = run.store.results(run.run_id) if full is None else full
            given = full
        try:
            with block_deadline(run.config.block_timeout):
                computed = entry.load()(given, run.config) or {}
        except (Exception, LoopBlocked) as exc:  # every trial is stored: one broken metric must not lose the summary
            text = truncate(scrub(f"metric '{name}' (plugin '{entry.owner}'): {type(exc).__name__}: {exc}"),
                            MAX_ERROR_TEXT)
            print(f"tau: {text}", file=sys.stderr)
            summary.setdefault("metric_errors", []).append(text)
            continue
        for key, value in computed.items():
            if key in given_by:
                raise RunError(f"metric '{name}' (plugin '{entry.owner}') and '{given_by[key]}' both give "
                               f"summary key '{key}'")
            given_by[key] = name
            summary[key] = value
    summary.setdefault("terminations", dict(Counter(r.termination.reason for r in results)))
    return summary


def stored_results(run: Run) -> list[EpisodeResult]:
    """The run's stored trials as `store.results` gives them (one per task and trial, by task id and trial),
    without their transcripts (`messages` empty).

    Holding every transcript of a run at once is what a summary must not do: 256 episodes of 200
    steps are hundreds of MB, and parsing them back cost more CPU than running them. A run whose
    every row was written by this process summarises the results it kept (`Run.results`); each
    makes the JSON round trip a stored row makes, so metrics see what a re-read gives. A resumed
    run, or a result whose round trip fails (the store lists such a row as an error), reads the store.
    """
    if run.prior_rows:
        return [_without_transcript(r) for r in run.store.results(run.run_id)]
    latest = {(r.task_id, r.trial): r for r in run.results}  # a row rewritten later replaces the earlier
    out = []
    for key in sorted(latest):
        try:
            out.append(EpisodeResult.model_validate_json(latest[key].model_dump_json(exclude={"messages"})))
        except ValueError:  # what the store would list as an unreadable row: let it say so
            return [_without_transcript(r) for r in run.store.results(run.run_id)]
    return out


def _without_transcript(result: EpisodeResult) -> EpisodeResult:
    result.messages = []
    return result


@contextmanager
def frozen_heap() -> Iterator[None]:
    """Keep the objects that exist before the trials start (modules, domains, tasks) out of garbage collection
    while they run: they live for the whole run, and collections traversing them again and again cost ~10% of
    the harness's CPU at 256 concurrent episodes (`benchmarks/load.py`). Nothing is frozen when another
    caller froze the heap already."""
    if gc.get_freeze_count():
        yield
        return
    gc.freeze()
    try:
        yield
    finally:
        gc.unfreeze()


async def execute(run: Run) -> dict[str, Any]:
    """Run every pending trial, store each as it ends, and return the summary over all stored trials.

    Store writes run on one writer thread, so a slow disk or a busy database never blocks the event
    loop (and the episodes in flight); a result that cannot be serialised is stored as that trial's error.
    """
    with frozen_heap():
        return await _execute(run)


async def _execute(run: Run) -> dict[str, Any]:
    executor = run.pm.catalog("executors").get(run.config.executor)(run.config.concurrency)
    try:
        with block_deadline(run.config.block_timeout), plugin_hook("tau_run_start"):
            run.pm.hook.tau_run_start(run=run)  # model endpoints are checked here (preflight)
    except LoopBlocked as exc:
        if not run.prior_rows:
            with suppress(Exception):
                run.store.delete_run(run.run_id)
        raise RunError(f"a tau_run_start hook held the run: {exc}") from None
    except BaseException:
        if not run.prior_rows:  # a run that never started (a dead endpoint) is not left behind in `tau runs`
            with suppress(Exception):
                run.store.delete_run(run.run_id)
        raise
    loop = asyncio.get_running_loop()
    writer = ThreadPoolExecutor(max_workers=1, thread_name_prefix="tau-store")

    async def store(result: EpisodeResult) -> None:
        try:
            await loop.run_in_executor(writer, run.store.save_result, run.run_id, result)
        except TauError:
            raise  # the store itself is unusable (its message says what to do): stop the run
        except Exception as exc:  # this result cannot be serialised (depth, a foreign object): store why
            result = failed_result(result.task_id, result.domain, result.trial, "storing the result", exc)
            await loop.run_in_executor(writer, run.store.save_result, run.run_id, result)
        # kept for the summary without its transcript, which is in the store (memory: 200-step runs)
        run.results.append(result.model_copy(update={"messages": []}))

    writes: list[asyncio.Task[None]] = []

    def on_result(result: EpisodeResult) -> asyncio.Task[None]:
        """Start storing `result`; an executor may await the returned task, and the run awaits every one."""
        writes.append(asyncio.ensure_future(store(result)))
        return writes[-1]

    jobs = [TrialJob(run, t, k) for t, k in run.pending]
    try:
        await executor.run(jobs, on_result)
        await asyncio.gather(*writes)
    finally:
        for pending in writes:
            if not pending.done():
                pending.cancel()
        writer.shutdown(wait=True)
        summary = summarize(run, stored_results(run))
        if run.skipped:
            summary["skipped_tasks"] = run.skipped
        summary = redact(summary)
        run.store.save_summary(run.run_id, summary)
        run_end(run, summary)
    return redact(summary)  # hooks may have added to it (run metadata): it is printed and written as JSON


def run_end(run: Run, summary: dict[str, Any]) -> None:
    """`tau_run_end`, contained: every trial is stored and the summary saved by now, so a hook that raises or
    holds the loop is reported on stderr (and in the summary's `hook_errors`), and every other plugin's
    `tau_run_end` still runs (each is called on its own, in pluggy's order: the run metadata that marks
    the run complete is written even when another plugin's hook failed). Each call goes through pluggy
    (a caller holding that one plugin), so hook-call monitoring and tracing see it."""
    errors = []
    impls = list(reversed(run.pm.hook.tau_run_end.get_hookimpls()))
    for impl in impls:
        alone = run.pm.subset_hook_caller("tau_run_end", [other.plugin for other in impls if other is not impl])
        try:
            with block_deadline(run.config.block_timeout):
                alone(run=run, summary=summary)
        except (Exception, LoopBlocked, SystemExit, GeneratorExit) as exc:
            text = truncate(scrub(f"tau_run_end of '{impl.plugin_name}': {type(exc).__name__}: {exc}"), MAX_ERROR_TEXT)
            print(f"tau: a plugin hook failed after the run: {text}", file=sys.stderr)
            errors.append(text)
    if errors:
        summary.setdefault("hook_errors", []).extend(errors)
        with suppress(Exception):
            run.store.save_summary(run.run_id, summary)


def run_sync(run: Run) -> dict[str, Any]:
    """`execute(run)` on a fresh event loop. Like `asyncio.run`, a first Ctrl-C cancels the run (a second
    raises at once); unlike it, a plugin calling `loop.stop()` does not end the run (the loop goes on), and
    trial tasks abandoned at their deadline do not hold the shutdown."""
    loop = asyncio.new_event_loop()
    main = loop.create_task(execute(run))
    interrupts[0] = count_before = 0  # this run's Ctrl-Cs only: a KeyboardInterrupt a plugin raises is no interrupt

    def on_sigint(signum: int, frame: Any) -> None:
        interrupts[0] += 1
        if interrupts[0] - count_before == 1 and not main.done():
            main.cancel()
            loop.call_soon_threadsafe(lambda: None)
            return
        raise KeyboardInterrupt

    swap = threading.current_thread() is threading.main_thread()  # whatever handler was there, restored after
    previous = signal.signal(signal.SIGINT, on_sigint) if swap else None
    try:
        for _ in range(1000):  # a plugin may stop the loop; the run goes on until it is done
            try:
                loop.run_until_complete(main)
                break
            except RuntimeError as exc:
                if main.done() or "stopped before" not in str(exc):
                    raise
        else:
            raise RunError("a plugin stopped the event loop over and over; the run was given up")
        return main.result()
    except asyncio.CancelledError:
        if interrupts[0] > count_before:
            raise KeyboardInterrupt from None
        raise
    finally:
        if swap:
            signal.signal(signal.SIGINT, previous if previous is not None else signal.default_int_handler)
        _close_loop(loop)


def _close_loop(loop: asyncio.AbstractEventLoop) -> None:
    """Cancel what is left on `loop` and close it, waiting at most `GRACE` seconds for tasks to end
    (abandoned ones are not waited for) and for the default executor's threads."""
    left = [t for t in asyncio.all_tasks(loop) if not t.done()]
    finishing = [t for t in left if t not in abandoned]  # cleanups a plugin scheduled at run end (closing a session)
    if finishing:
        with suppress(BaseException):
            loop.run_until_complete(asyncio.wait(finishing, timeout=1.0))
    for task in left:
        task.cancel()
    waited = [t for t in left if t not in abandoned]
    with suppress(BaseException):
        if waited:
            loop.run_until_complete(asyncio.wait(waited, timeout=GRACE))
        loop.run_until_complete(loop.shutdown_asyncgens())
    for task in left:  # retrieved, so none is reported as "never retrieved"
        if task.done() and not task.cancelled():
            task.exception()
        elif not task.done():
            task._log_destroy_pending = False  # type: ignore[attr-defined]  # abandoned on purpose
            # kept referenced (in `abandoned`) for the life of the process: closing its coroutine would
            # run plugin code that ignored its cancellation once already, at a moment nothing bounds it
    loop.close()
