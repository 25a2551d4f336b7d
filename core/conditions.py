"""The user-condition contract: a space of conditions a simulated user can be put in, shared by the
plugin that defines its vocabulary and the plugins that design, write or adapt tasks for it.

A condition is one label, which belongs to one group, crossed with one value of each dimension; it
is handed around as a plain dict of field -> value (`fields`: the group field, the label field, then one field
per dimension). The plugin that owns the vocabulary registers its space through
`tau_register_condition_spaces`, named after the task block its conditions are stored in; every other
plugin obtains it from its plugin manager with `condition_space(pm, name)` and imports nothing of the
owner. A task builder draws balanced designs from `labels`, `groups` and `dimensions`, words texts
with `lexicon`, reads them back with `classifier()` and gives each condition an `anchor`; an adapter
of a released benchmark checks the release's values against the same vocabulary (`condition`,
`default`). Validation errors are `TauError`s naming the valid values.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

from tau_emotion.core.registry import RegistryError

if TYPE_CHECKING:
    import random

#: the catalog the spaces are registered in (`pm.catalog(CATALOG)`)
CATALOG = "condition_spaces"


@runtime_checkable
class ConditionSpace(Protocol):
    """What `tau_register_condition_spaces` registers; every mapping keeps the space's own order."""

    #: a condition's field names in order: the group field, the label field, then one per dimension
    fields: tuple[str, ...]
    #: group -> its labels
    groups: Mapping[str, tuple[str, ...]]
    #: label -> the group it belongs to
    labels: Mapping[str, str]
    #: dimension -> its values
    dimensions: Mapping[str, tuple[str, ...]]

    def condition(self, **values: str) -> dict[str, str]:
        """The validated condition of `values` (one per field) as a dict; a `TauError` names a bad value."""
        ...

    def default(self, dimension: str) -> str:
        """The value a dimension takes when nothing says otherwise."""
        ...

    def lexicon(self, label: str) -> list[str]:
        """Words and phrases people use for `label`, likeliest first."""
        ...

    def anchor(self, condition: Mapping[str, str], rng: random.Random) -> str:
        """A short instruction that puts a simulated user in `condition`, drawn with `rng`."""
        ...

    def classifier(self) -> Callable[[str], dict[str, str]]:
        """A reader of texts: text -> the condition it most likely expresses. Loading it may take a while."""
        ...


#: what a space must have (the protocol's members)
MEMBERS = ("fields", "groups", "labels", "dimensions", "condition", "default", "lexicon", "anchor", "classifier")


def condition_space(pm: Any, name: str, *, missing_ok: bool = False) -> ConditionSpace | None:
    """The condition space registered as `name` in `pm`'s catalog.

    An unknown name is a `RegistryError` listing what is installed (with the nearest name), or None
    with `missing_ok` (for a plugin that works without one); a registered object that lacks a member of
    the protocol is a `RegistryError` naming the plugin that registered it and what it lacks.
    """
    catalog = pm.catalog(CATALOG)
    if missing_ok and name not in catalog:
        return None
    entry = catalog.entry(name)
    space = entry.load()
    missing = [member for member in MEMBERS if not hasattr(space, member)]
    if missing:
        raise RegistryError(f"condition space '{name}' (registered by plugin '{entry.owner}') is not a "
                            f"ConditionSpace: it lacks {', '.join(missing)}")
    return space
