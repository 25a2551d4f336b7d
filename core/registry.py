"""Strict name registries for domains, agents, users, metrics, executors, stores, trainers and suites.

A duplicate name is an error naming both owners; an unknown name lists what is installed and
suggests the nearest; a `"module:attr"` target is imported only when first used.
"""

from __future__ import annotations

import difflib
import importlib
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from types import CodeType
from typing import Any, Generic, TypeVar

from tau_emotion.core.errors import TauError

T = TypeVar("T")


class RegistryError(TauError, LookupError):
    """An unknown or duplicate name; the message is meant for people."""


def suggest(name: str, choices: list[str]) -> str:
    close = difflib.get_close_matches(name, choices, n=1, cutoff=0.5)
    return f" Did you mean '{close[0]}'?" if close else ""


def resolve_target(target: Any) -> Any:
    """`"package.module:attr.sub"` -> that object (`"package.module"` -> the module); other values as they are.

    The one resolver of lazy targets: entry points, catalog entries and plugin names all use it.
    """
    if not isinstance(target, str):
        return target
    module, _, attr = target.partition(":")
    obj: Any = importlib.import_module(module)
    for part in attr.split(".") if attr else ():
        obj = getattr(obj, part)
    return obj


@dataclass
class Entry(Generic[T]):
    name: str
    target: Any
    owner: str
    meta: dict[str, Any] = field(default_factory=dict)
    _loaded: Any = None

    def load(self) -> T:
        if self._loaded is None:
            if isinstance(self.target, str) and ":" in self.target:
                try:
                    self._loaded = resolve_target(self.target)
                except (ImportError, AttributeError) as exc:  # a lazy target that does not import: one line
                    raise RegistryError(f"'{self.name}' (registered by plugin '{self.owner}') points to "
                                        f"{self.target}, which failed to import: {type(exc).__name__}: {exc}") from None
            else:
                self._loaded = self.target
        return self._loaded


class Registry(Generic[T]):
    """Names -> targets for one kind of thing (`kind` is used in messages: 'domain', 'agent', ...)."""

    def __init__(self, kind: str):
        self.kind = kind
        self._entries: dict[str, Entry[T]] = {}

    def add(self, name: str, target: Any, owner: str = "?", **meta: Any) -> None:
        if name in self._entries:
            other = self._entries[name].owner
            raise RegistryError(f"{self.kind} '{name}' is registered twice: by plugin '{other}' and by plugin '{owner}'")
        self._entries[name] = Entry(name, target, owner, meta)

    def __contains__(self, name: object) -> bool:
        return name in self._entries

    def __iter__(self) -> Iterator[str]:
        return iter(sorted(self._entries))

    def __len__(self) -> int:
        return len(self._entries)

    def names(self) -> list[str]:
        return sorted(self._entries)

    def entry(self, name: str) -> Entry[T]:
        try:
            return self._entries[name]
        except KeyError:
            names = self.names()
            installed = ", ".join(names) if names else "none"
            raise RegistryError(
                f"unknown {self.kind} '{name}'.{suggest(name, names)} Installed: {installed}"
            ) from None

    def get(self, name: str) -> T:
        return self.entry(name).load()

    def items(self) -> list[tuple[str, Entry[T]]]:
        return sorted(self._entries.items())

    def default(self) -> str | None:
        """The name registered with `default=True` (None when there is none)."""
        marked = [name for name, entry in self.items() if entry.meta.get("default")]
        if len(marked) > 1:
            raise RegistryError(f"several {self.kind}s claim to be the default: {', '.join(marked)}")
        return marked[0] if marked else None


class Register:
    """The callable handed to `tau_register_*` hooks: `register(name, target, **meta)` or `register(obj)`.

    The hook is called once through pluggy (hookwrappers included); the owner of each entry is
    the plugin whose hook implementation is on the call stack when `register` is called.
    """

    def __init__(self, registry: Registry, owners: dict[CodeType, list[tuple[Any, str]]] | Callable[[], str]):
        """`owners`: code object -> [(plugin object, plugin name)]; several when instances of one class are plugins."""
        self._registry = registry
        self._owners = owners

    def _owner_of(self) -> str:
        if callable(self._owners):
            return self._owners()
        frame = sys._getframe(2)
        while frame is not None:
            candidates = self._owners.get(frame.f_code)
            if candidates:
                if len(candidates) == 1:
                    return candidates[0][1]
                this = frame.f_locals.get("self")
                for plugin, name in candidates:
                    if plugin is this:
                        return name
            frame = frame.f_back  # type: ignore[assignment]
        return "?"

    def __call__(self, name: Any, target: Any = None, **meta: Any) -> None:
        if target is None:
            obj = name
            name = getattr(obj, "name", None)
            if not isinstance(name, str):
                raise RegistryError(f"register() needs a name for {obj!r}")
            target = obj
        self._registry.add(name, target, owner=self._owner_of(), **meta)
