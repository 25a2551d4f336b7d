"""Requests true of the world (issue 34 item 5) and outputs read before they are told (item 6): the check functions
the `Validator` calls (`Validator.check_world`), each returning why a candidate fails, or None.

- `replay`: no refused call breaks two policy rules (the gold names one reason, and an agent giving the other fails);
  every gold write changes the database (a write that sets what is already true leaves its hash as it
  was); what a write changes that the entity already held (a tour departure booked twice, an absence excused
  again) is the pack's to say.
- `unread_output`: every figure the user asks for (`Output.ask`) is in the result of a gold call of that intent or
  an earlier one: a number that only the policy happens to write (a $500 limit) is no reading of the user's loan.
- the pack's own judge (`TracerHints.world`), given the state before and after the gold calls: moods and reasons
  true of the records (a balance to pay, an absence not yet excused), a refund said to reach whoever it reaches, a
  corrected value that agrees with the database's other records of that person, an itinerary that holds together.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from tau_emotion.core.models import Action
from tau_emotion.tracer.provenance import Knowledge, leaves, norm, parse_result, phrase_in

if TYPE_CHECKING:
    from tau_emotion.core.domain import Domain
    from tau_emotion.tracer.grounding import Candidate

#: (state before the gold calls, state after them, candidate) -> why the request is not true of the world, or None
WorldJudge = Callable[[Any, Any, Any], str | None]


def replay(domain: Domain, cand: Candidate) -> tuple[Any, list[str]]:
    """The state after the gold calls, and each write that left the database as it was (empty when every write
    changed something)."""
    state = domain.database.state()
    idle: list[str] = []
    for i, step in enumerate([*cand.steps, None]):
        for refusal in (r for r in cand.refusals if r.at == i):
            rules = sorted({v.rule for v in domain.violations(state, Action(name=refusal.name,
                                                                            arguments=refusal.arguments))})
            if len(rules) > 1:
                idle.append(f"refused {refusal.name} breaks {len(rules)} policy rules ({', '.join(rules)}): the gold "
                            f"names one reason and the scorer wants the one it names")
        if step is None:
            break
        tool = domain.toolset.tools.get(step.name)
        if tool is None:
            break
        before = state.content_hash if tool.writes else None
        domain.toolset.call(state, step.name, step.arguments)
        if before is not None and state.content_hash == before:
            idle.append(f"gold call {i} ({step.name}) changes nothing in the database: it sets what is already true")
    return state, idle


def told_from_reads(draft: Any) -> set[tuple[str, Any]]:
    """The figures of an intent the user asks for that a read must show: each `Output` with an `ask` and no refusal
    reason, but not a value the pack derives from the policy (`IntentDraft.policy_values`: a fee per copy times the
    copies)."""
    derived = {k for _, v in leaves(list(draft.policy_values)) if (k := norm(v)) is not None}
    return {k for o in draft.outputs if o.ask is not None and o.reason is None
            and (k := norm(o.text)) is not None and k not in derived}


def unread_output(cand: Candidate, policy: str = "") -> str | None:
    """A figure the user asks for that no gold call of its intent (or an earlier one) returned; a phrase of the
    written `policy` ("48 hours") is told from the policy, as the grounder treats it."""
    read = Knowledge()
    last = -1
    for i, draft in enumerate(cand.drafts):
        for j, step in enumerate(cand.steps):
            if last < j and step.intent <= i:
                read.add_result(j, parse_result(step.text))
                last = j
        for output in draft.outputs:
            k = norm(output.text)
            if k in told_from_reads(draft) and k not in read.results and not (k[0] == "s" and phrase_in(output.text,
                                                                                                       policy)):
                return (f"{draft.kind}: the agent tells {output.text!r} ({str(output.ask).replace('{{my}}', 'my')}), "
                        f"which no gold read shows")
    return None


def world_problems(domain: Domain, cand: Candidate, judge: WorldJudge | None) -> str | None:
    """The first reason the candidate's requests are not true of the world, or None."""
    state, idle = replay(domain, cand)
    if idle:
        return idle[0]
    if judge is not None:
        return judge(domain.database.state(), state, cand)
    return None
