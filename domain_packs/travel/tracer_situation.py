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


def overlap(one: tuple[str, str], other: tuple[str, str]) -> bool:
    """Whether two (first day, last day) spans share a day."""
    return one[0] <= other[1] and other[0] <= one[1]


def stay_cities(state: Any, trip: dict) -> set[str]:
    """The cities the trip's confirmed stays are in (empty for a trip with none)."""
    return {state["stays"].peek(s)["city"] for s in trip["stay_ids"] if state["stays"].peek(s)["status"] == "confirmed"}


def _double_stay(before: Any, after: Any, cand: Any) -> str | None:
    """A stay the task asks to book or move (granted or refused) for a night another stay of the same trip holds
    (check-out day excluded): another confirmed stay once the gold has run, or another stay the task asks for."""
    asked = []  # (trip id, the stay moved or None, check-in, check-out) of every stay request
    for draft in cand.drafts:
        args = draft.arguments
        trip = trip_of(before, args) or trip_of(after, args)
        if draft.goal in STAY_WRITES and trip is not None:
            asked.append((trip["itinerary_id"], args.get("stay_id"), args.get("check_in"), args.get("check_out")))
    for k, (trip_id, moved, check_in, check_out) in enumerate(asked):
        trip = after["itineraries"].peek(trip_id)
        held = [(s["stay_id"], s["hotel"], s["check_in"], s["check_out"]) for s in _confirmed(after, "stays", trip["stay_ids"])]
        # not the stay moved, nor the stay the gold booked for this request (new, on these dates)
        others = [h for h in held if h[0] != moved and not (h[0] not in before["stays"] and (h[2], h[3]) == (check_in, check_out))] + \
            [(m, "another stay asked for", a, b) for j, (t, m, a, b) in enumerate(asked) if j != k and t == trip_id]
        for _, hotel, a, b in others:
            if a and b and check_in and check_out and check_in < b and a < check_out:
                return (f"asks for a stay from {check_in} to {check_out} on trip {trip['trip_number']}, which holds "
                        f"{hotel} from {a} to {b}")
    return None


#: the goals that add a stay to a trip or move one's nights
STAY_WRITES = frozenset({"book_hotel_stay", "change_hotel_stay_dates"})


def _confirmed(state: Any, table: str, ids: list[str]) -> list[dict]:
    return [row for i in ids if (row := state[table].peek(i)) is not None and row["status"] == "confirmed"]


def world(before: Any, after: Any, cand: Any) -> str | None:
    """Why the task's itinerary does not hold together (`TracerHints.world`), or None: a tour departure or a car for
    days the trip already holds; a car cancelled as no longer needed and another rented for the same days; a car
    picked up in a city where the trip has no stay (a tour is a day out, from any city of the trip); two stays of one
    trip for the same night, one of them booked or moved by the task (travel-test-023 added a room at Marais Atelier
    Hotel for September 21-23 and stretched the stay there to September 22)."""
    clash = _double_stay(before, after, cand)
    if clash:
        return clash
    booked_cars = [d for d in cand.drafts if d.goal == "book_car_rental"]
    for draft in cand.drafts:
        args = draft.arguments
        if draft.goal == "cancel_car_rental":
            old = before["car_rentals"].peek(args.get("car_rental_id"))
            for other in booked_cars:
                if old and other.arguments.get("itinerary_id") == old["itinerary_id"] and overlap(
                        (old["pickup_date"], old["dropoff_date"]),
                        (other.arguments["pickup_date"], other.arguments["dropoff_date"])):
                    return (f"cancels the car from {old['pickup_date']} since it is no longer needed, and rents "
                            f"another for {other.arguments['pickup_date']} to {other.arguments['dropoff_date']}")
        trip = trip_of(after, args)
        if trip is None or draft.goal not in ("book_tour", "book_car_rental"):
            continue
        cities = stay_cities(after, trip)
        if draft.goal == "book_tour":
            dep = before["departures"].peek(args.get("departure_id")) or {}
            held = [b for b in _confirmed(before, "tour_bookings", before["itineraries"].peek(trip["itinerary_id"])
                                          ["tour_booking_ids"])
                    if b["tour_code"] == dep.get("tour_code") and b["date"] == dep.get("date")]
            if held:
                return (f"books the {held[0]['tour']} on {held[0]['date']}, which trip {trip['trip_number']} already "
                        f"holds ({held[0]['tour_booking_id']})")
        else:
            span = (args.get("pickup_date"), args.get("dropoff_date"))
            for row in _confirmed(before, "car_rentals", before["itineraries"].peek(trip["itinerary_id"])
                                  ["car_rental_ids"]):
                if overlap(span, (row["pickup_date"], row["dropoff_date"])):
                    return (f"rents a car for {span[0]} to {span[1]}, while trip {trip['trip_number']} already has "
                            f"one then ({row['car_rental_id']})")
            if cities and args.get("pickup_city") not in cities:
                return (f"picks a car up in {args.get('pickup_city')}, but trip {trip['trip_number']} stays only in "
                        f"{', '.join(sorted(cities))}")
    return None
