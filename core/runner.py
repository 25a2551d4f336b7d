"""Tasks x trials -> executor -> store -> metrics, with resume.

Every finished trial is written to the store the moment it ends, so a crash or Ctrl-C loses at
most the trials in flight; `resume_run` re-runs exactly the (task, trial) pairs that have no
successful row yet.
"""

from __future__ import annotations

import asyncio
import datetime as _dt
import inspect
import secrets
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from pydantic import BaseModel, ValidationError

from tau_emotion.core.domain import Domain, format_validation_error
from tau_emotion.core.episode import Episode
from tau_emotion.core.errors import DataError, TauError
from tau_emotion.core.models import EpisodeResult, RunConfig, Task
from tau_emotion.core.plugins import PluginManager, Selection, get_plugin_manager, installed_entry_points
from tau_emotion.core.registry import suggest


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
    results: list[EpisodeResult] = field(default_factory=list)

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
        domains[name] = obj if isinstance(obj, Domain) else obj()
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
    installed = sorted(installed_entry_points())
    tasks = [validate_blocks(pm, t, installed) for t in tasks]
    pm.hook.tau_modify_tasks(tasks=tasks, config=config, pluginmanager=pm)
    return tasks


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


def prepare_run(config: RunConfig, db_path: str, run_id: str | None = None, pm: PluginManager | None = None) -> Run:
    pm = pm or build_plugin_manager(config)
    check_options(pm, config)
    pm.hook.tau_configure(config=config)
    domains = selected_domains(pm, config)
    if not domains:
        raise NoDomainSelected("no domain selected: add one with --plugins (`tau domains` lists the installed ones)")
    tasks = select_tasks(pm, config, domains)
    if not tasks:
        raise RunError(f"no tasks in split '{config.split}' for domain(s) {', '.join(domains)}")
    # fail before any trial runs if the agent, user or executor is unknown
    for kind, name in (("agents", config.agent), ("users", config.user), ("executors", config.executor)):
        pm.catalog(kind).entry(name)
    store = open_store(pm, config.store, db_path)
    if run_id is None:
        run_id = new_run_id()
        store.create_run(run_id, config.without_secrets())  # credentials never reach the results
    done = store.done_trials(run_id)
    run = Run(run_id=run_id, config=config, pm=pm, store=store, domains=domains, tasks=tasks)
    run.pending = [(t, k) for t in tasks for k in range(config.trials) if (t.id, k) not in done]
    return run


def resume_run(run_id: str, db_path: str, store: str | None = None, pm: PluginManager | None = None) -> Run:
    """Finish run `run_id`: its stored config, its plugins, only the trials with no successful row.

    `pm` is a manager holding at least the store plugin (the CLI passes its all-plugins manager);
    it is narrowed to the run's own plugin list.
    """
    pm = pm or get_plugin_manager()
    opened = open_store(pm, store, db_path, create=False)
    config = opened.run_config(run_id)
    if config is None:
        known = ", ".join(opened.run_ids()[-5:]) or "none"
        raise RunError(f"no run '{run_id}' in {db_path} (latest runs: {known})")
    opened.close()
    config.store = store_name(pm, config.store or store)
    sel = Selection.parse(config.plugins)
    return prepare_run(config, db_path, run_id=run_id, pm=pm.select(sel))


def make_episode(run: Run, task: Task, trial: int) -> Episode:
    ep = Episode(task=task, domain=run.domains[task.domain], trial=trial, config=run.config, pm=run.pm, run=run)
    ep.agent = run.pm.catalog("agents").get(run.config.agent)(ep)
    ep.user = run.pm.catalog("users").get(run.config.user)(ep)
    return ep


async def first_answer(answers: list[Any]) -> Any:
    """Await hook answers in order and return the first that is not None; close the rest unawaited."""
    found = None
    for answer in answers:
        if found is None:
            found = await answer if inspect.isawaitable(answer) else answer
        elif inspect.iscoroutine(answer):
            answer.close()
    return found


async def run_one(run: Run, task: Task, trial: int) -> EpisodeResult:
    ep = make_episode(run, task, trial)
    run.pm.hook.tau_episode_start(episode=ep)
    result: EpisodeResult | None = await first_answer(run.pm.hook.tau_run_episode(episode=ep))
    if result is None:
        raise RunError("no plugin ran the episode (every tau_run_episode implementation declined)")
    run.pm.hook.tau_episode_end(episode=ep, result=result)
    return result


def summarize(run: Run, results: list[EpisodeResult]) -> dict[str, Any]:
    summary: dict[str, Any] = {
        "run_id": run.run_id,
        "plugins": run.config.plugins,
        "n_tasks": len(run.tasks),
        "trials": run.config.trials,
    }
    summary["errors"] = sum(r.status == "error" for r in results)
    given_by = {key: "core" for key in summary}
    for name, entry in run.pm.catalog("metrics").items():
        for key, value in (entry.load()(results, run.config) or {}).items():
            if key in given_by:
                raise RunError(f"metric '{name}' (plugin '{entry.owner}') and '{given_by[key]}' both give "
                               f"summary key '{key}'")
            given_by[key] = name
            summary[key] = value
    summary.setdefault("terminations", dict(Counter(r.termination.reason for r in results)))
    return summary


async def execute(run: Run) -> dict[str, Any]:
    """Run every pending trial, store each as it ends, and return the summary over all stored trials."""
    executor = run.pm.catalog("executors").get(run.config.executor)(run.config.concurrency)
    run.pm.hook.tau_run_start(run=run)

    def on_result(result: EpisodeResult) -> None:
        run.store.save_result(run.run_id, result)
        run.results.append(result)

    jobs = [(lambda t=t, k=k: run_one(run, t, k)) for t, k in run.pending]
    try:
        await executor.run(jobs, on_result)
    finally:
        stored = run.store.results(run.run_id)
        summary = summarize(run, stored)
        run.store.save_summary(run.run_id, summary)
        run.pm.hook.tau_run_end(run=run, summary=summary)
    return summary


def run_sync(run: Run) -> dict[str, Any]:
    return asyncio.run(execute(run))
