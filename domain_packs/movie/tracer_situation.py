"""The cinema's situation check for the Tracer (`TracerHints.situation`): the task's occasion must fit the
tickets it is about.

An occasion names the party ("my son's ninth birthday", "taking my partner out", "my parents are visiting",
"a night out for my book club"); the tickets of the booking the request is about (or the tickets it books)
must seat that party: a child's ticket for a child's treat (a film rated for adults is then the refusal the
task is about), at least two seats for an outing with someone, at least three for a group. An occasion is about a showing still ahead: a booking
whose showing has started has none.
"""

from __future__ import annotations

from typing import Any

from tau_emotion.domain_packs.movie.tools import hours_until

#: occasion words -> (fewest tickets, a child's ticket needed)
PARTY = {"son's ninth birthday": (2, True), "promised {{my}} niece": (2, True), "wedding anniversary": (2, False),
         "parents are visiting": (3, False), "grandmother": (2, False), "book club": (3, False),
         "daughter is seriously ill": (2, True), "recovering from a long illness": (2, False)}


def _tickets_and_show(state: Any, draft: Any) -> tuple[list[dict], dict] | None:
    """The tickets a draft books or holds, and their showtime (None: the draft names neither)."""
    args = draft.arguments
    if "tickets" in args and "showtime_id" in args:
        show = state["showtimes"].peek(args["showtime_id"]) if args["showtime_id"] in state["showtimes"] else None
        return (list(args["tickets"]), show) if show else None
    bid = args.get("booking_id")
    if isinstance(bid, str) and bid in state["bookings"]:
        booking = state["bookings"].peek(bid)
        show = state["showtimes"].peek(booking["showtime_id"])
        if "new_showtime_id" in args and args["new_showtime_id"] in state["showtimes"]:
            show = state["showtimes"].peek(args["new_showtime_id"])  # the showing the party will see
        return list(booking["tickets"]), show
    return None


def situation(state: Any, cand: Any) -> str | None:
    """Why the candidate's occasion contradicts the tickets it is about, or None."""
    occasion = cand.occasion or ""
    if not occasion:
        return None
    for draft in cand.drafts:
        found = _tickets_and_show(state, draft)
        if found is None:
            continue
        tickets, show = found
        if "booking_id" in draft.arguments and hours_until(show["start"]) < 0:
            return f"occasion '{occasion}' for booking {draft.arguments['booking_id']}, whose showing has started"
        for words, (fewest, child) in PARTY.items():
            if words not in occasion:
                continue
            if len(tickets) < fewest:
                return f"occasion '{occasion}' on {draft.kind} of {len(tickets)} ticket(s)"
            if child and not any(t["type"] == "child" for t in tickets):
                return f"occasion '{occasion}' on {draft.kind} without a child's ticket"
    return None
