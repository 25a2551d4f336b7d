"""The travel agency's situation check for the Tracer (`TracerHints.situation`): the task's occasion must agree
with the trip the request is about.

- "I am celebrating my birthday while away": the traveller's birthday falls within the trip's dates.
- An occasion about time off ("make the most of my time off", "I finally have some time off") is not for a work
  trip.
- A cancelled trip is one nobody goes on: no occasion but the neutral habits (plans settled early, a routine
  request) goes with it.
"""

from __future__ import annotations

from typing import Any

BIRTHDAY = "birthday while away"
TIME_OFF = "time off"
ANY_TRIP = ("settled early", "out of the ordinary")  # occasions of habit, true of any trip
#: a trip's parts: the id a goal call names -> (its table, the trip's list of them)
_PARTS = {"stay_id": ("stays", "stay_ids"), "tour_booking_id": ("tour_bookings", "tour_booking_ids"),
          "car_rental_id": ("car_rentals", "car_rental_ids")}


def trip_of(state: Any, arguments: dict) -> dict | None:
    """The trip (itinerary row) a goal call is about: its `itinerary_id`, or the trip of the stay, tour booking or
    rental it names; None when it names neither."""
    trips = state["itineraries"]
    tid = arguments.get("itinerary_id")
    if isinstance(tid, str) and tid in trips:
        return trips.peek(tid)
    for key, (table, ids) in _PARTS.items():
        rid = arguments.get(key)
        if isinstance(rid, str) and rid in state[table]:
            return next((t for _, t in trips.scan() if rid in t[ids]), None)
    return None


def _birthday_within(dob: str, start: str, end: str) -> bool:
    """Whether a birthday (its month and day) falls between two dates (at most a year apart)."""
    return any(start <= f"{year}{dob[4:]}" <= end for year in {start[:4], end[:4]})


def situation(state: Any, cand: Any) -> str | None:
    """Why the candidate's occasion contradicts the trip it is about, or None."""
    occasion = cand.occasion or ""
    if not occasion:
        return None
    traveller = state["travellers"].peek(cand.persona.entity)
    for draft in cand.drafts:
        trip = trip_of(state, draft.arguments)
        if trip is None:
            continue
        if trip["status"] == "cancelled" and not any(p in occasion for p in ANY_TRIP):
            return f"occasion '{occasion}' for trip {trip['trip_number']}, which is cancelled"
        if TIME_OFF in occasion and "work trip" in trip["name"]:
            return f"occasion '{occasion}' for trip {trip['trip_number']}, a {trip['name']}"
        if BIRTHDAY in occasion and traveller and not _birthday_within(traveller["dob"], trip["start_date"],
                                                                       trip["end_date"]):
            return (f"occasion '{occasion}' for trip {trip['trip_number']} ({trip['start_date']} to "
                    f"{trip['end_date']}), which the traveller's birthday ({traveller['dob'][5:]}) is not in")
    return None
