"""Plugin discovery and selection: one fresh pluggy manager per run.

Every plugin, built-in or third-party, is an entry point in the `tau_emotion` group. A run
loads DEFAULT_PLUGINS plus what `--plugins` (or TAU_PLUGINS) names; `no:NAME` blocks one; a
dotted module path loads that module directly. A module may declare `tau_requires = [...]` to
pull in other plugins. An entry point may name an object (`module:attr`) instead of a module; a
plugin object or module with `check_available()` may raise `PluginUnavailable` with an install
hint (`tau plugins` then lists it as unavailable). `check_pending()` runs after loading, so a misspelt hookimpl fails loudly.
"""

from __future__ import annotations

import importlib
import importlib.util
import os
from dataclasses import dataclass, field
from importlib.metadata import EntryPoint, entry_points
from typing import Any

import pluggy

from tau_emotion.core import PROJECT, hookspecs
from tau_emotion.core.registry import Register, Registry, suggest

DEFAULT_PLUGINS = ("oracle", "tool_calling", "null", "scripted", "llm_user", "stop", "metrics", "sqlite", "local", "progress")

CATALOGS = ("domains", "agents", "users", "metrics", "executors", "stores", "trainers", "suites")


class PluginError(RuntimeError):
    """A plugin could not be found or loaded; the message names it and says what to do."""


class PluginUnavailable(ImportError):
    """Raised at import by a plugin whose optional dependency is missing; the message is the install hint."""


def installed_entry_points() -> dict[str, EntryPoint]:
    return {ep.name: ep for ep in entry_points(group=PROJECT)}


def parse_selection(spec: str | list[str] | tuple[str, ...] | None) -> tuple[list[str], list[str]]:
    """'emotion,airline,no:unsatisfied' -> (['emotion', 'airline'], ['unsatisfied'])."""
    items: list[str] = []
    if spec is None:
        spec = os.environ.get("TAU_PLUGINS", "")
    for part in [spec] if isinstance(spec, str) else spec:
        items.extend(x.strip() for x in part.split(",") if x.strip())
    selected = [x for x in items if not x.startswith("no:")]
    blocked = [x[3:] for x in items if x.startswith("no:")]
    return selected, blocked


@dataclass
class PluginInfo:
    name: str
    module: str
    distribution: str | None = None
    version: str | None = None
    hooks: list[str] = field(default_factory=list)
    error: str | None = None


class PluginManager(pluggy.PluginManager):
    """pluggy's manager plus the catalogs that the `tau_register_*` hooks fill."""

    def __init__(self) -> None:
        super().__init__(PROJECT)
        self.add_hookspecs(hookspecs)
        # historic: plugins registered later still get the call, so their hookspecs exist before check_pending
        self.hook.tau_addhooks.call_historic(kwargs={"pluginmanager": self})
        self.infos: dict[str, PluginInfo] = {}
        self._catalogs: dict[str, Registry[Any]] = {}

    def catalog(self, kind: str) -> Registry[Any]:
        """The registry for one catalog (filled on first use by calling each plugin's hook)."""
        if kind not in self._catalogs:
            registry: Registry[Any] = Registry(kind.rstrip("s"))
            hook = getattr(self.hook, f"tau_register_{kind}")
            for impl in reversed(hook.get_hookimpls()):
                impl.function(Register(registry, lambda impl=impl: impl.plugin_name))
            self._catalogs[kind] = registry
        return self._catalogs[kind]

    def plugin_info(self, name: str) -> PluginInfo | None:
        return self.infos.get(name)


def _importable(module_name: str) -> bool:
    """A plugin may also be named by module path, as pytest's `-p` allows."""
    try:
        return importlib.util.find_spec(module_name) is not None
    except (ImportError, ValueError):
        return False


def _load_module(name: str, eps: dict[str, EntryPoint]) -> tuple[Any, PluginInfo]:
    ep = eps.get(name)
    if ep is None and _importable(name.partition(":")[0]):
        module_name = name.partition(":")[0]
        info = PluginInfo(name=name, module=module_name)
    elif ep is None:
        installed = ", ".join(sorted(eps)) or "none"
        raise PluginError(f"unknown plugin '{name}'.{suggest(name, sorted(eps))} Installed plugins: {installed}")
    else:
        module_name = ep.value.partition(":")[0]
        dist = ep.dist
        info = PluginInfo(name=name, module=module_name, distribution=dist.name if dist else None,
                          version=dist.version if dist else None)
    target = ep.value if ep is not None else name
    try:
        module: Any = importlib.import_module(module_name)
        attr = target.partition(":")[2]
        for part in attr.split(".") if attr else ():
            module = getattr(module, part)
        check = getattr(module, "check_available", None)
        if callable(check):
            check()
    except PluginUnavailable as exc:
        raise PluginError(f"plugin '{name}' is unavailable: {exc}") from None
    except Exception as exc:  # a broken third-party plugin must not take the harness down silently
        raise PluginError(f"plugin '{name}' ({target}) failed to import: {type(exc).__name__}: {exc}") from None
    return module, info


def get_plugin_manager(
    selected: list[str] | tuple[str, ...] = (),
    blocked: list[str] | tuple[str, ...] = (),
    *,
    defaults: bool = True,
    extra: list[Any] = (),  # type: ignore[assignment]
) -> PluginManager:
    """A fresh manager with DEFAULT_PLUGINS (unless `defaults=False`), `selected` and their `tau_requires`."""
    eps = installed_entry_points()
    pm = PluginManager()
    from tau_emotion.core import episode as core_episode

    pm.register(core_episode, name="core")
    blocked_set = set(blocked)
    queue = [*(DEFAULT_PLUGINS if defaults else ()), *selected]
    seen: set[str] = set()
    while queue:
        name = queue.pop(0)
        if name in seen or name in blocked_set:
            continue
        seen.add(name)
        module, info = _load_module(name, eps)
        if pm.is_registered(module):
            continue
        pm.register(module, name=name)
        info.hooks = sorted(impl.name for impl in pm.get_hookcallers(module) or [])
        pm.infos[name] = info
        queue.extend(getattr(module, "tau_requires", ()))
    for obj in extra:
        pm.register(obj)
    try:
        pm.check_pending()
    except pluggy.PluginValidationError as exc:
        raise PluginError(f"plugin '{getattr(exc, 'plugin_name', '?')}': {exc}") from None
    return pm


def load_all_plugins(extra: list[str] | tuple[str, ...] = ()) -> tuple[PluginManager, dict[str, PluginInfo]]:
    """Every installed plugin (for `tau plugins` and command registration); broken ones are reported, not raised.

    `extra` names plugins that are not installed entry points (module paths); those must load.
    """
    eps = installed_entry_points()
    pm = PluginManager()
    from tau_emotion.core import episode as core_episode

    pm.register(core_episode, name="core")
    report: dict[str, PluginInfo] = {}
    for name in sorted(eps):
        try:
            module, info = _load_module(name, eps)
        except PluginError as exc:
            ep = eps[name]
            dist = ep.dist
            report[name] = PluginInfo(name=name, module=ep.value, distribution=dist.name if dist else None,
                                      version=dist.version if dist else None, error=str(exc))
            continue
        if not pm.is_registered(module):
            pm.register(module, name=name)
        info.hooks = sorted(impl.name for impl in pm.get_hookcallers(module) or [])
        pm.infos[name] = info
        report[name] = info
    for name in extra:
        if name not in report:
            module, info = _load_module(name, eps)
            if not pm.is_registered(module):
                pm.register(module, name=name)
            report[name] = pm.infos[name] = info
    return pm, report


def expand_suites(selected: list[str]) -> list[str]:
    """Replace suite names in a selection by their plugin lists."""
    names = [x for x in selected]
    if not names:
        return names
    pm, _ = load_all_plugins()
    suites = pm.catalog("suites")
    out: list[str] = []
    for name in names:
        if name in suites:
            out.extend(suites.get(name))
        else:
            out.append(name)
    return out
