"""Hand-made Tracer candidates: run given calls on a fresh state and wrap them as a validated-to-be task."""

from __future__ import annotations

from typing import Any

from tau_emotion.core.models import Action, Gold, Task, UserSpec
from tau_emotion.tracer.grounding import Candidate, Refusal, Step
from tau_emotion.tracer.hints import IntentDraft, Persona


def make_candidate(domain, known: dict[str, Any], calls: list[tuple[str, dict[str, Any]]], *,
                   outputs: list[str] = (), drafts: list[IntentDraft] = (), refusals: list[Refusal] = (),
                   evidence: list[str] = (), instruction: str = "You want help.",
                   intents: list[str] = ("Please help me.",)) -> Candidate:
    """Run `calls` in order (each must succeed) and return the candidate they make."""
    state = domain.database.state()
    steps = []
    for name, arguments in calls:
        text, is_error = domain.toolset.call(state, name, arguments)
        assert not is_error, (name, text)
        role = "goal" if domain.toolset[name].writes else "read"
        steps.append(Step(name=name, arguments=arguments, text=text, intent=0, role=role))
    cand = Candidate(domain=domain.name, split="test", index=0, persona=Persona(name="Test User", facts={}),
                     drafts=list(drafts), steps=steps, refusals=list(refusals), walk=[n for n, _ in calls],
                     known=dict(known), outputs=list(outputs), evidence=list(evidence), end_hash=state.content_hash)
    cand.task = Task(id=f"{domain.name}-hand-made", domain=domain.name,
                     user=UserSpec(instruction=instruction, known=dict(known), intents=list(intents)),
                     gold=Gold(actions=[Action(name=n, arguments=a) for n, a in calls], outputs=list(outputs)))
    return cand
