"""The `suites` plugin: named plugin lists for `tau run --suite NAME`.

The ten-domain benchmark and its two halves, as the paper's transfer experiment uses them:
`tau-emotion` (the emotion pack and all ten packs), `tau-emotion-seen` (the four domains Tracer-Low
trains on) and `tau-emotion-unseen` (the six it never sees). A pack whose split is not built yet
stays in its suite; `split_counts` says so, and `tau run --suite` names it instead of silently
running fewer tasks (`--skip-missing` runs the rest).
"""

from __future__ import annotations

from tau_emotion.core import hookimpl
from tau_emotion.core.suites import missing_split, split_counts, suite_domains  # noqa: F401 (their old home)

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


@hookimpl
def tau_register_suites(register):
    for name, plugins in SUITES.items():
        register(name, plugins)
