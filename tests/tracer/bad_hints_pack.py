"""Domains whose Tracer hints are wrong in one way each, loaded with `--plugins tests.tracer.bad_hints_pack`.

- `bad_typo`: a misspelt field (`goal_weight` for `goal_weights`).
- `bad_old_style`: a field spelt as the old module attribute (`GOAL_WEIGHTS`).
- `bad_type`: a weight that is not a number.
- `bad_weight`: a weight for a goal the hints do not ground.
- `bad_module`: the old answer, a module path, instead of a `TracerHints`.
"""

from __future__ import annotations

from tau_emotion.core import hookimpl
from tau_emotion.core.domain import Domain
from tau_emotion.core.state import Database
from tau_emotion.tracer.hints import TracerHints
from tests.tracer.tiny_pack import ground_mark, look, mark, persona

NAMES = ("bad_typo", "bad_old_style", "bad_type", "bad_weight", "bad_module")


@hookimpl
def tau_register_domains(register):
    for name in NAMES:
        register(Domain(name, [look, mark], graph_edges=[("look", "mark")],
                        load_database=lambda: Database({"items": {"i1": {"label": "red box"}}}),
                        load_policy=lambda: "Notes may be written on any item.", load_tasks=lambda: []))


@hookimpl(optionalhook=True)
def tau_tracer_hints(domain):
    goals = {"mark": ground_mark}
    if domain.name == "bad_typo":
        return TracerHints(persona=persona, goals=goals, goal_weight={"mark": 2.0})
    if domain.name == "bad_old_style":
        return TracerHints(persona=persona, goals=goals, GOAL_WEIGHTS={"mark": 2.0})
    if domain.name == "bad_type":
        return TracerHints(persona=persona, goals=goals, goal_weights={"mark": "often"})
    if domain.name == "bad_weight":
        return TracerHints(persona=persona, goals=goals, goal_weights={"look": 2.0})
    if domain.name == "bad_module":
        return "tests.tracer.tiny_pack"
    return None
