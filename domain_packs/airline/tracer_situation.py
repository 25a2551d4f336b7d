"""The airline's situation check for the Tracer (`TracerHints.situation`): a request's reason and the task's
occasion must agree with the database.

- A reason that says the traveller changed their mind ("would rather not travel", "no longer need to travel",
  "plans changed") is for a trip that has not started: no leg dated before today.
- A reason about what is left of a trip ("I no longer need the rest of my trip") needs a leg still ahead: a trip
  flown in full has no rest.
- A reason about the caller's own body or travel ("I am sick", "my doctor says I should not fly", "I no longer
  need to travel", "I would rather not travel after all") and the task's occasion ("this trip is my honeymoon",
  "a job interview at the other end") need the caller on the reservation the request is about.
"""

from __future__ import annotations

from typing import Any

from tau_emotion.domain_packs.airline.tools import NOW

TODAY = NOW[:10]
CHANGED_MIND = ("rather not travel", "no longer need to travel", "plans changed")
ABOUT_ME = ("sick", "doctor", "should not fly", "no longer need to travel", "rather not travel")
WHAT_IS_LEFT = ("rest of",)


def _on_board(res: dict, persona: Any) -> bool:
    first, last = persona.facts.get("first_name"), persona.facts.get("last_name")
    return any(p.get("first_name") == first and p.get("last_name") == last for p in res.get("passengers", []))


def situation(state: Any, cand: Any) -> str | None:
    """Why the candidate's reasons or occasion contradict the database, or None."""
    table = state["reservations"]
    for draft in cand.drafts:
        rid = draft.arguments.get("reservation_id")
        res = table.peek(rid) if isinstance(rid, str) and rid in table else None
        if res is None:
            continue
        context = (draft.context or "").lower()
        started = [leg["date"] for leg in res["flights"] if leg["date"] < TODAY]
        if started and any(p in context for p in CHANGED_MIND):
            return (f"{draft.kind}: '{draft.context}' for reservation {rid}, whose trip started on "
                    f"{min(started)}")
        if any(p in context for p in WHAT_IS_LEFT) and not any(leg["date"] >= TODAY for leg in res["flights"]):
            return f"{draft.kind}: '{draft.context}' for reservation {rid}, whose every flight is before {TODAY}"
        if any(p in context for p in ABOUT_ME) and not _on_board(res, cand.persona):
            return f"{draft.kind}: '{draft.context}' for reservation {rid}, which the caller does not fly on"
        if cand.occasion and draft.goal != "book_reservation" and not _on_board(res, cand.persona):
            return f"occasion '{cand.occasion}' for reservation {rid}, which the caller does not fly on"
    return None
