"""The `suites` plugin: named plugin lists for `tau run --suite NAME`."""

from __future__ import annotations

from tau_emotion.core import hookimpl

SUITES = {
    # grows with the domain packs; every listed plugin must be installed for the suite to run
    "tau-emotion": ["emotion", "airline", "retail", "telecom", "telehealth"],
    "tau-bench": ["taubench-airline", "taubench-retail"],
    "tau-trait": ["tautrait-airline", "tautrait-retail", "tautrait-telecom", "tautrait-telehealth"],
    # the public τ-Emotion-Bench release (installed from source), its own conditions as emotion blocks
    "tau-emotion-public": ["emotion", "tauemo-airline", "tauemo-retail", "tauemo-telecom", "tauemo-telehealth"],
}


@hookimpl
def tau_register_suites(register):
    for name, plugins in SUITES.items():
        register(name, plugins)
