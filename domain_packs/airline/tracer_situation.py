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

from datetime import timedelta
from typing import Any

from tau_emotion.domain_packs.airline.tools import FLOWN, NOW

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


def birth_records(state: Any, user_id: str, first: str, last: str, skip: str | None = None) -> set[str]:
    """The dates of birth the database gives a person of the user's household: the user's own profile, their saved
    passengers and the passengers of their reservations (all but `skip`)."""
    user = state["users"].peek(user_id) or {}
    people = [{**user.get("name", {}), "dob": user.get("dob")}, *user.get("saved_passengers", [])]
    for rid in user.get("reservations", []):
        if rid != skip and (res := state["reservations"].peek(rid)) is not None:
            people.extend(res["passengers"])
    return {p["dob"] for p in people if p.get("first_name") == first and p.get("last_name") == last and p.get("dob")}


def cancellable_unflown(state: Any, res: dict) -> bool:
    """Whether the policy would let the reservation be cancelled were none of it flown (booked within 24 hours, a
    flight cancelled by the airline, business cabin, or insured): a refusal of a partly flown one then has one ground."""
    from tau_emotion.domain_packs.airline.rules import _NOW, _status

    recent = res["created_at"] >= (_NOW - timedelta(hours=24)).isoformat()
    cancelled = any(_status(state, leg["flight_number"], leg["date"]) == "cancelled" for leg in res["flights"])
    return recent or cancelled or res["cabin"] == "business" or res["insurance"] == "yes"


def world(before: Any, after: Any, cand: Any) -> str | None:
    """Why a request is not true of the database (`TracerHints.world`), or None: a date of birth "corrected" to one
    that the database's other records of that person contradict; a refused cancellation with two policy grounds
    (partly flown, and no ground for a refund either), while the gold names one and the scorer wants what it names."""
    for draft in cand.drafts:
        rid = draft.arguments.get("reservation_id")
        res = before["reservations"].peek(rid) if isinstance(rid, str) else None
        if res is None:
            continue
        if draft.goal == "update_reservation_passengers" and not draft.refused:
            for old, new in zip(res["passengers"], draft.arguments.get("passengers", []), strict=False):
                if (old["first_name"], old["last_name"]) != (new.get("first_name"), new.get("last_name")) \
                        or old["dob"] == new.get("dob"):
                    continue
                records = birth_records(before, res["user_id"], old["first_name"], old["last_name"], skip=rid)
                if records and new.get("dob") not in records:
                    return (f"{draft.kind}: corrects {old['first_name']} {old['last_name']}'s date of birth to "
                            f"{new.get('dob')}, but the database records {', '.join(sorted(records))}")
        from tau_emotion.domain_packs.airline.rules import _status

        flown = any(_status(before, leg["flight_number"], leg["date"]) in FLOWN for leg in res["flights"])
        if draft.goal == "cancel_reservation" and draft.refused and flown and not cancellable_unflown(before, res):
            return (f"{draft.kind}: reservation {rid} is refused on two grounds (partly flown, and no ground for a "
                    f"refunded cancellation), but the gold names one")
    return None
