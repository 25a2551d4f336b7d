"""The plugin manager: discovery and selection of plugins, one pluggy manager per command.

Every plugin, built-in or third-party, is an entry point in the `tau_emotion` group. A run
loads the defaults (declared in the `tau_emotion.defaults` entry-point group; the built-ins'
list is `tau_emotion.plugins.DEFAULT_PLUGINS`) plus what `--plugins` (or
TAU_PLUGINS) names; `no:NAME` blocks one; a dotted module path loads that module directly. A
module may declare `tau_requires = [...]` to pull in other plugins. An entry point may name an
object (`module:attr`). A plugin with `check_available()` may raise `PluginUnavailable` with an
install hint. `check_pending()` runs after loading, so a misspelt hookimpl fails loudly.

The CLI builds one manager with every installed plugin (so `--help` lists every command and
option), then `select()` narrows that same manager to what a run asked for.
"""

from __future__ import annotations

import importlib.util
import os
from dataclasses import dataclass, field
from importlib.metadata import EntryPoint, entry_points
from typing import Any

import pluggy

from tau_emotion.core import PROJECT, hookspecs
from tau_emotion.core.errors import TauError
from tau_emotion.core.registry import Register, Registry, resolve_target, suggest


class PluginError(TauError):
    """A plugin could not be found or loaded; the message names it and says what to do."""


class PluginUnavailable(ImportError):
    """Raised at import by a plugin whose optional dependency is missing; the message is the install hint."""


#: the entry-point group where a distribution declares the plugins every run loads: `NAME = "module:TUPLE"`
DEFAULTS_GROUP = f"{PROJECT}.defaults"


def default_plugins() -> tuple[str, ...]:
    """The plugins every run loads unless blocked: the union of what each `tau_emotion.defaults` entry point names
    (the built-in plugins package declares its tuple there, so the core imports no plugin to know them)."""
    names: list[str] = []
    for ep in sorted(entry_points(group=DEFAULTS_GROUP), key=lambda ep: ep.name):
        try:
            names += list(resolve_target(ep.value))
        except (ImportError, AttributeError, TypeError) as exc:
            raise PluginError(f"default plugin list '{ep.name}' ({ep.value}) cannot be read: {exc}") from None
    return tuple(dict.fromkeys(names))


def installed_entry_points() -> dict[str, EntryPoint]:
    return {ep.name: ep for ep in entry_points(group=PROJECT)}


@dataclass(frozen=True)
class Selection:
    """What a run loads beyond the defaults: `a,b,no:c` -> selected and blocked names."""

    selected: tuple[str, ...] = ()
    blocked: tuple[str, ...] = ()

    @classmethod
    def parse(cls, spec: str | list[str] | tuple[str, ...] | None) -> Selection:
        """The one parser of plugin lists; None reads TAU_PLUGINS."""
        if spec is None:
            spec = os.environ.get("TAU_PLUGINS", "")
        items = [x.strip() for part in ([spec] if isinstance(spec, str) else spec) for x in part.split(",")]
        items = [x for x in items if x]
        return cls(tuple(dict.fromkeys(x for x in items if not x.startswith("no:"))),
                   tuple(dict.fromkeys(x[3:] for x in items if x.startswith("no:"))))

    def items(self) -> list[str]:
        """Back to list form, as stored in `RunConfig.plugins`."""
        return [*self.selected, *(f"no:{x}" for x in self.blocked)]


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
        from tau_emotion.core import episode as core_episode

        self.register(core_episode, name="core")

    def catalog(self, kind: str) -> Registry[Any]:
        """The registry for one catalog, filled on first use by one pluggy call of `tau_register_<kind>`."""
        if kind not in self._catalogs:
            registry: Registry[Any] = Registry(kind.rstrip("s").replace("_", " "))
            hook = getattr(self.hook, f"tau_register_{kind}")
            owners: dict[Any, list[tuple[Any, str]]] = {}
            for impl in hook.get_hookimpls():
                if hasattr(impl.function, "__code__"):
                    owners.setdefault(impl.function.__code__, []).append((impl.plugin, impl.plugin_name))
            if kind == "roles":  # the roles of every episode are the core's own
                from tau_emotion.core.roles import CORE_ROLES, Role

                for role, description in CORE_ROLES.items():
                    registry.add(role, Role(description), owner="core")
            extra = {"pluginmanager": self} if "pluginmanager" in (hook.spec.argnames if hook.spec else ()) else {}
            hook(register=Register(registry, owners), **extra)
            if kind == "options":  # each role's model options: one option set, owned by the role's plugin
                from tau_emotion.core.roles import role_options_model

                for role, entry in self.catalog("roles").items():
                    registry.add(role, role_options_model(role, entry.load().description), owner=entry.owner)
            self._catalogs[kind] = registry
        return self._catalogs[kind]

    def plugin_info(self, name: str) -> PluginInfo | None:
        return self.infos.get(name)

    def model_client(self, settings: Any, config: Any = None) -> Any:
        """A chat-model client for `settings` (a `ModelSettings`) from the model-client catalog.

        `settings.client` names the client; without it the first client whose `serves(settings)`
        (registered as `register(name, factory, serves=fn)`) is true serves, else the default client.
        """
        catalog = self.catalog("model_clients")
        name = settings.client or next((n for n, e in catalog.items() if e.meta.get("serves") and e.meta["serves"](settings)),
                                       None) or catalog.default()
        if name is None:
            raise PluginError("no model client plugin is loaded: add one with --plugins")
        return catalog.get(name)(settings, config)

    def add(self, name: str, eps: dict[str, EntryPoint] | None = None) -> Any:
        """Load and register one plugin by entry-point name or module path; returns its module or object."""
        module, info = _load_module(name, installed_entry_points() if eps is None else eps)
        if not self.is_registered(module):
            self.register(module, name=name)
        info.hooks = sorted(impl.name for impl in self.get_hookcallers(module) or [])
        self.infos[name] = info
        self._catalogs.clear()
        return module

    def select(self, selection: Selection, *, defaults: bool = True) -> PluginManager:
        """Narrow this manager to the defaults, `selection.selected` and their `tau_requires`, minus the blocked.

        Plugins already loaded are reused; the others are unloaded, so their hooks no longer run.
        """
        eps = installed_entry_points()
        blocked = set(selection.blocked)
        queue = [*(default_plugins() if defaults else ()), *selection.selected]
        keep: set[str] = set()
        while queue:
            name = queue.pop(0)
            if name in keep or name in blocked:
                continue
            keep.add(name)
            info = self.infos.get(name)
            if info is not None and info.error is not None:
                raise PluginError(info.error)
            module = self.get_plugin(name)
            if module is None:
                module = self.add(name, eps)
            queue.extend(getattr(module, "tau_requires", ()))
        for name, plugin in list(self.list_name_plugin()):
            if name != "core" and name not in keep and plugin is not None and name in self.infos:
                self.unregister(plugin)
                del self.infos[name]
        self._catalogs.clear()
        self.check()
        return self

    def check(self) -> None:
        try:
            self.check_pending()
        except pluggy.PluginValidationError as exc:
            raise PluginError(f"plugin '{getattr(exc, 'plugin_name', '?')}': {exc}") from None


def _importable(module_name: str) -> bool:
    """A plugin may also be named by module path, as pytest's `-p` allows."""
    try:
        return importlib.util.find_spec(module_name) is not None
    except (ImportError, ValueError):
        return False


def _load_module(name: str, eps: dict[str, EntryPoint]) -> tuple[Any, PluginInfo]:
    ep = eps.get(name)
    if ep is None and _importable(name.partition(":")[0]):
        info = PluginInfo(name=name, module=name.partition(":")[0])
    elif ep is None:
        installed = ", ".join(sorted(eps)) or "none"
        raise PluginError(f"unknown plugin '{name}'.{suggest(name, sorted(eps))} Installed plugins: {installed}")
    else:
        dist = ep.dist
        info = PluginInfo(name=name, module=ep.value.partition(":")[0], distribution=dist.name if dist else None,
                          version=dist.version if dist else None)
    target = ep.value if ep is not None else name
    try:
        module = resolve_target(target)
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
    extra: list[Any] | tuple[Any, ...] = (),
) -> PluginManager:
    """A fresh manager with the defaults (unless `defaults=False`), `selected` and their `tau_requires`.

    `extra` registers plugin objects as they are (in-test plugins).
    """
    pm = PluginManager().select(Selection(tuple(selected), tuple(blocked)), defaults=defaults)
    for obj in extra:
        pm.register(obj)
    pm.check()
    return pm


def load_all_plugins(extra: list[str] | tuple[str, ...] = ()) -> PluginManager:
    """Every installed plugin (for the CLI and `tau plugins`); broken ones are recorded in `pm.infos`, not raised.

    `extra` names plugins that are not installed entry points (module paths); those must load.
    """
    eps = installed_entry_points()
    pm = PluginManager()
    for name in sorted(eps):
        try:
            pm.add(name, eps)
        except PluginError as exc:
            ep = eps[name]
            dist = ep.dist
            pm.infos[name] = PluginInfo(name=name, module=ep.value, distribution=dist.name if dist else None,
                                        version=dist.version if dist else None, error=str(exc))
    for name in extra:
        if pm.get_plugin(name) is None:
            pm.add(name, eps)
    return pm
