"""What a set of environments shares: the plugin manager, the domain and the conditioned tasks, made the
way `tau run` makes them (`prepare`), without a result store.

Plugin options are passed by field name, as `tau run -o FIELD=VALUE` takes them (`condition="random"`
style keywords); the plugin that owns a field is loaded with it, so a keyword alone selects its
plugin. The manager is narrowed with the runner's own `Selection`, options are checked with its
`check_options`, tasks are selected and modified (`tau_modify_tasks`) with its `select_tasks`, and
every task's gold must replay (`broken_gold`), so an environment scores exactly what a run scores.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from pydantic import ValidationError

from tau_emotion.core.domain import Domain, format_validation_error
from tau_emotion.core.env.bridge import AGENT, EnvError, EnvHooks
from tau_emotion.core.models import RunConfig, Task
from tau_emotion.core.registry import suggest
from tau_emotion.core.runner import (
    Run,
    RunError,
    Selection,
    broken_gold,
    check_options,
    get_plugin_manager,
    installed_entry_points,
    select_tasks,
    selected_domains,
)

#: plugins a run without a store or a terminal does not want: the progress bar draws per run
QUIET = ("no:progress",)


@dataclass
class Session:
    """A prepared run without a store: many environments step episodes of it at once."""

    run: Run
    tasks: dict[str, Task] = field(default_factory=dict)

    @property
    def config(self) -> RunConfig:
        return self.run.config

    @property
    def domain(self) -> Domain:
        return next(iter(self.run.domains.values()))

    @property
    def task_ids(self) -> list[str]:
        return list(self.tasks)

    def task(self, task_id: str) -> Task:
        try:
            return self.tasks[task_id]
        except KeyError:
            raise EnvError(f"no task '{task_id}' in split '{self.config.split}' of '{self.domain.name}'."
                           f"{suggest(task_id, list(self.tasks))}") from None


def _option_groups(options: dict[str, Any], pm: Any) -> tuple[dict[str, dict[str, Any]], list[str]]:
    """Route field=value options to their plugin's group; returns the groups and the plugins to load for them."""
    grouped: dict[str, dict[str, Any]] = {}
    owners: list[str] = []
    if not options:
        return grouped, owners
    fields: dict[str, tuple[str, str]] = {}
    for catalog_pm in (pm, None):
        if catalog_pm is None:  # a field no selected plugin owns: look through every installed plugin
            from tau_emotion.core.manager import load_all_plugins

            catalog_pm = load_all_plugins()
        for group, entry in catalog_pm.catalog("options").items():
            for name in entry.load().model_fields:
                fields.setdefault(name, (group, entry.owner))
        if all(name in fields for name in options):
            break
    for name, value in options.items():
        if name not in fields:
            raise EnvError(f"unknown option '{name}': no installed plugin takes it.{suggest(name, sorted(fields))}")
        group, owner = fields[name]
        grouped.setdefault(group, {})[name] = value
        owners.append(owner)
    return grouped, owners


def prepare(domain: str, *, split: str = "test", user: str = "scripted", seed: int = 0,
            plugins: str | Iterable[str] = (), task_ids: Iterable[str] = (), n_tasks: int | None = None,
            max_steps: int = 200, max_tool_errors: int = 10, tool_timeout: float = 10.0,
            skip_broken: bool = False, scoring: str = "paper", **options: Any) -> Session:
    """Load the plugins, the domain and its conditioned tasks as `tau run --plugins DOMAIN,...` would."""
    base = Selection.parse([plugins] if isinstance(plugins, str) else list(plugins))
    items = [*base.items(), *([domain] if domain in installed_entry_points() else []), *QUIET]
    pm = get_plugin_manager(*_selected(items), extra=[EnvHooks()])
    grouped, owners = _option_groups(options, pm)
    if any(pm.get_plugin(owner) is None for owner in owners):
        items = [*items, *owners]
        pm = get_plugin_manager(*_selected(items), extra=[EnvHooks()])
    try:
        config = RunConfig(plugins=Selection.parse(items).items(), domains=[domain], split=split, user=user, agent=AGENT,
                           seed=seed, trials=1, max_steps=max_steps, max_tool_errors=max_tool_errors,
                           tool_timeout=tool_timeout, task_ids=list(task_ids), n_tasks=n_tasks,
                           skip_broken=skip_broken, scoring=scoring, options=grouped,
                           # the caller is the agent and takes its time between steps (a training step):
                           # no wall-clock deadline on the episode (`--trial-timeout` is for plugin agents)
                           trial_timeout=1e7)
    except ValidationError as exc:
        raise EnvError(f"bad environment setting: {format_validation_error(exc)}") from None
    check_options(pm, config)
    pm.hook.tau_configure(config=config)
    catalog = pm.catalog("domains")
    if domain not in catalog.names():
        from tau_emotion.core.manager import load_all_plugins

        known = sorted({*catalog.names(), *load_all_plugins().catalog("domains").names()})
        raise EnvError(f"unknown domain '{domain}'.{suggest(domain, known)} Installed: {', '.join(known) or 'none'}")
    pm.catalog("users").entry(user)  # an unknown user fails here, naming the nearest
    domains = selected_domains(pm, config)
    tasks = select_tasks(pm, config, domains)
    if not tasks:
        raise RunError(f"no tasks in split '{split}' of domain '{domain}' (splits: {', '.join(domains[domain].splits) or 'none'})")
    broken = broken_gold(domains, tasks)
    if broken and not skip_broken:
        raise RunError(f"{len(broken)} task(s) have gold that does not replay, so they cannot be scored: "
                       + "; ".join(broken.values()) + " (pass skip_broken=True to drop them)")
    tasks = [t for t in tasks if t.id not in broken]
    run = Run(run_id=f"env-{domain}-{split}-{seed}", config=config, pm=pm, store=None, domains=domains, tasks=tasks,
              skipped=list(broken.values()), prior_rows=False)
    return Session(run=run, tasks={t.id: t for t in tasks})


def _selected(items: list[str]) -> tuple[tuple[str, ...], tuple[str, ...]]:
    sel = Selection.parse(items)
    return sel.selected, sel.blocked
