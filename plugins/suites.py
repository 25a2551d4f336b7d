"""The `suites` plugin: named plugin lists for `tau run --suite NAME`.

The ten-domain benchmark and its two halves, as the paper's transfer experiment uses them:
`tau-emotion` (the emotion pack and all ten packs), `tau-emotion-seen` (the four domains Tracer-Low
trains on) and `tau-emotion-unseen` (the six it never sees). A pack whose split is not built yet
stays in its suite; `split_counts` says so, and `tau run --suite` names it instead of silently
running fewer tasks (`--skip-missing` runs the rest).
"""

from __future__ import annotations

from typing import Any

from tau_emotion.core import hookimpl

#: the paper's seen domains (Tracer-Low's training data) and unseen domains (held out for transfer)
SEEN = ("airline", "retail", "telecom", "telehealth")
UNSEEN = ("restaurant", "bank", "school", "travel", "movie", "basketball")

SUITES = {
    # every listed plugin must be installed for the suite to run
    "tau-emotion": ["emotion", *SEEN, *UNSEEN],
    "tau-emotion-seen": ["emotion", *SEEN],
    "tau-emotion-unseen": ["emotion", *UNSEEN],
    "tau-bench": ["taubench-airline", "taubench-retail"],
    "tau-trait": ["tautrait-airline", "tautrait-retail", "tautrait-telecom", "tautrait-telehealth"],
    # the public τ-Emotion-Bench release (installed from source), its own conditions as emotion blocks
    "tau-emotion-public": ["emotion", "tauemo-airline", "tauemo-retail", "tauemo-telecom", "tauemo-telehealth"],
}


def suite_domains(pm: Any, plugins: list[str]) -> dict[str, Any]:
    """The domains the suite's plugins register (name -> catalog entry), in the suite's order.

    A plugin that registers no domain (`emotion`) contributes none; one that is not installed or not
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


@hookimpl
def tau_register_suites(register):
    for name, plugins in SUITES.items():
        register(name, plugins)
