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

from tau_emotion.core.domain import Domain
from tau_emotion.core.episode import Episode
from tau_emotion.core.models import EpisodeResult, RunConfig, Task
from tau_emotion.core.plugins import PluginManager, get_plugin_manager, parse_selection


class RunError(RuntimeError):
    """A run cannot start; the message says why and what to do."""


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
    extras: dict[str, Any] = field(default_factory=dict)

    @property
    def total(self) -> int:
        return len(self.tasks) * self.config.trials


def build_plugin_manager(config: RunConfig) -> PluginManager:
    selected, blocked = parse_selection(config.plugins)
    return get_plugin_manager(selected, blocked)


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
    for impl in reversed(pm.hook.tau_modify_tasks.get_hookimpls()):
        wanted = {"tasks": tasks, "config": config, "pluginmanager": pm}
        replaced = impl.function(**{k: wanted[k] for k in impl.argnames})
        if replaced is not None:
            tasks = replaced
    return tasks


def open_store(pm: PluginManager, config: RunConfig, path: str) -> Any:
    return pm.catalog("stores").get(config.store)(path)


def prepare_run(config: RunConfig, db_path: str, run_id: str | None = None, pm: PluginManager | None = None) -> Run:
    pm = pm or build_plugin_manager(config)
    pm.hook.tau_configure(config=config)
    domains = selected_domains(pm, config)
    if not domains:
        from tau_emotion.core.plugins import load_all_plugins

        installed = ", ".join(load_all_plugins()[0].catalog("domains").names()) or "none"
        raise RunError(f"no domain selected: add one with --plugins, e.g. --plugins airline (installed domains: {installed})")
    tasks = select_tasks(pm, config, domains)
    if not tasks:
        raise RunError(f"no tasks in split '{config.split}' for domain(s) {', '.join(domains)}")
    # fail before any trial runs if the agent, user or executor is unknown
    for kind, name in (("agents", config.agent), ("users", config.user), ("executors", config.executor)):
        pm.catalog(kind).entry(name)
    store = open_store(pm, config, db_path)
    if run_id is None:
        run_id = new_run_id()
        store.create_run(run_id, config)
    done = store.done_trials(run_id)
    run = Run(run_id=run_id, config=config, pm=pm, store=store, domains=domains, tasks=tasks)
    run.pending = [(t, k) for t in tasks for k in range(config.trials) if (t.id, k) not in done]
    return run


def resume_run(run_id: str, db_path: str, store_name: str = "sqlite") -> Run:
    pm_probe = get_plugin_manager()
    store = pm_probe.catalog("stores").get(store_name)(db_path)
    config = store.run_config(run_id)
    if config is None:
        known = ", ".join(store.run_ids()[-5:]) or "none"
        raise RunError(f"no run '{run_id}' in {db_path} (latest runs: {known})")
    return prepare_run(config, db_path, run_id=run_id)


def make_episode(run: Run, task: Task, trial: int) -> Episode:
    ep = Episode(task=task, domain=run.domains[task.domain], trial=trial, config=run.config, pm=run.pm, run=run)
    ep.agent = run.pm.catalog("agents").get(run.config.agent)(ep)
    ep.user = run.pm.catalog("users").get(run.config.user)(ep)
    return ep


async def run_one(run: Run, task: Task, trial: int) -> EpisodeResult:
    ep = make_episode(run, task, trial)
    run.pm.hook.tau_episode_start(episode=ep)
    outcome = run.pm.hook.tau_run_episode(episode=ep)
    result: EpisodeResult = await outcome if inspect.isawaitable(outcome) else outcome
    run.pm.hook.tau_episode_end(episode=ep, result=result)
    return result


def summarize(run: Run, results: list[EpisodeResult]) -> dict[str, Any]:
    summary: dict[str, Any] = {
        "run_id": run.run_id,
        "plugins": run.config.plugins,
        "n_tasks": len(run.tasks),
        "trials": run.config.trials,
    }
    for _name, entry in run.pm.catalog("metrics").items():
        summary.update(entry.load()(results, run.config) or {})
    summary["errors"] = sum(r.status == "error" for r in results)
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
