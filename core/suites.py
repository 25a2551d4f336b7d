"""What a suite (a named plugin list, `tau_register_suites`) holds: its domains and their tasks per split.

Generic over every suite and pack: the core's `tau run --suite` and `tau suites` use it to name a pack whose
split is not built yet instead of silently running fewer tasks.
"""

from __future__ import annotations

from typing import Any


def suite_domains(pm: Any, plugins: list[str]) -> dict[str, Any]:
    """The domains the suite's plugins register (name -> catalog entry), in the suite's order.

    A plugin that registers no domain (a user-condition plugin) contributes none; one that is not installed or not
    available is left out here (`tau plugins` says why).
    """
    catalog = pm.catalog("domains")
    owned: dict[str, list[str]] = {}
    for name, entry in catalog.items():
        owned.setdefault(entry.owner, []).append(name)
    out: dict[str, Any] = {}
    for plugin in plugins:
        for name in owned.get(plugin, [plugin] if plugin in catalog else []):
            out[name] = catalog.entry(name)
    return out


def split_counts(domains: dict[str, Any]) -> dict[str, dict[str, int]]:
    """Tasks per split per domain: {split: {domain: n}}, with 0 for a domain that lacks a split others have;
    `test` (what `tau run` takes by default) is always there."""
    from tau_emotion.core.domain import Domain

    per_domain: dict[str, dict[str, int]] = {name: {} for name in domains}
    for name, entry in domains.items():
        obj = entry.load()
        domain = obj if isinstance(obj, Domain) else obj()
        for split in domain.splits:
            per_domain[name][split] = len(domain.tasks(split))
    splits = sorted({"test", *(s for counts in per_domain.values() for s in counts)}) if domains else []
    return {s: {name: per_domain[name].get(s, 0) for name in domains} for s in splits}


def missing_split(domains: dict[str, Any], split: str) -> list[str]:
    """The domains with no task in `split`."""
    return [name for name, n in split_counts(domains).get(split, dict.fromkeys(domains, 0)).items() if n == 0]
