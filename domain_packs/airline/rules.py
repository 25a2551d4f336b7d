"""Machine-checkable parts of the airline policy (`data/policy.md`).

Each rule is a `Rule` (core's policy rules contract, declared with `@rule`): given the state
*before* a write action and the action's raw arguments, it returns a one-line reason when the
policy forbids that action, else None. Rules ignore actions they are not about and arguments they
cannot read (the tool itself reports those). Tools stay permissive on purpose, as in tau-bench:
the agent must apply the policy, and these rules let the Tracer reject policy-breaking gold
trajectories. Parts of the policy that depend on what the user said (the reason for a
cancellation, explicit confirmation) cannot be checked from the state and are left to the agent.
"""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

from tau_emotion.core.domain import Rule, rule
from tau_emotion.core.state import State
from tau_emotion.domain_packs.airline.tools import FLOWN, FREE_BAGS, MAX_PASSENGERS, NOW

_NOW = datetime.fromisoformat(NOW)


def _reservation(state: State, arguments: dict) -> dict | None:
    rid = arguments.get("reservation_id")
    return state["reservations"].peek(rid) if isinstance(rid, str) else None


def _status(state: State, flight_number: str, date: str) -> str | None:
    flight = state["flights"].peek(flight_number)
    return None if flight is None else flight["dates"].get(date, {}).get("status")


def _refs(arguments: dict) -> list[tuple[Any, Any]]:
    return [(f.get("flight_number"), f.get("date")) for f in arguments.get("flights") or [] if isinstance(f, dict)]


def _chain(legs: list[dict], start: str, end: str) -> bool:
    """True when the legs connect without gaps from `start` to `end`."""
    if not legs or legs[0]["origin"] != start or legs[-1]["destination"] != end:
        return False
    return all(a["destination"] == b["origin"] for a, b in zip(legs, legs[1:], strict=False))


def _itinerary_problem(
    state: State, origin: str, destination: str, flight_type: str, refs: list[tuple[Any, Any]]
) -> str | None:
    legs = []
    for number, date in refs:
        flight = state["flights"].peek(number) if isinstance(number, str) else None
        if flight is None:
            return None  # the tool reports unknown flights
        legs.append({"origin": flight["origin"], "destination": flight["destination"], "date": date})
    if any(str(a["date"]) > str(b["date"]) for a, b in zip(legs, legs[1:], strict=False)):
        return "the flights are not in date order"
    if flight_type == "one_way":
        if not _chain(legs, origin, destination):
            return f"the flights do not form a one-way trip from {origin} to {destination}"
        return None
    turn = next((i for i, leg in enumerate(legs) if leg["destination"] == destination), None)
    if (
        turn is None
        or not _chain(legs[: turn + 1], origin, destination)
        or not _chain(legs[turn + 1 :], destination, origin)
    ):
        return f"the flights do not form a round trip {origin}-{destination}-{origin}"
    return None


def _int(value: Any) -> int | None:
    try:
        return int(value)
    except (TypeError, ValueError):
        return None


def _allowance(state: State, user_id: str, cabin: str, passengers: int) -> int | None:
    user = state["users"].peek(user_id)
    if user is None or cabin not in FREE_BAGS["regular"]:
        return None
    return FREE_BAGS[user["membership"]][cabin] * passengers


# --------------------------------------------------------------------------- rules


@rule
def basic_economy_flights_fixed(state: State, action_name: str, arguments: dict) -> str | None:
    """Basic economy flights cannot be changed (a cabin upgrade keeping the same flights is fine)."""
    if action_name != "update_reservation_flights":
        return None
    res = _reservation(state, arguments)
    if res is None or res["cabin"] != "basic_economy":
        return None
    old = [(f["flight_number"], f["date"]) for f in res["flights"]]
    if _refs(arguments) != old:
        return f"reservation {res['reservation_id']} is basic economy: its flights cannot be modified"
    return None


@rule
def route_and_trip_type_kept(state: State, action_name: str, arguments: dict) -> str | None:
    """A flight change keeps the origin, destination and trip type; a booking's flights match its route."""
    if action_name == "update_reservation_flights":
        res = _reservation(state, arguments)
        if res is None:
            return None
        problem = _itinerary_problem(state, res["origin"], res["destination"], res["flight_type"], _refs(arguments))
        return f"reservation {res['reservation_id']}: {problem}" if problem else None
    if action_name == "book_reservation":
        return _itinerary_problem(
            state,
            str(arguments.get("origin")),
            str(arguments.get("destination")),
            str(arguments.get("flight_type")),
            _refs(arguments),
        )
    return None


@rule
def no_change_after_departure(state: State, action_name: str, arguments: dict) -> str | None:
    """Flights already flown stay as they are, and the cabin cannot change once any flight has been flown."""
    if action_name != "update_reservation_flights":
        return None
    res = _reservation(state, arguments)
    if res is None:
        return None
    new = set(_refs(arguments))
    for leg in res["flights"]:
        if _status(state, leg["flight_number"], leg["date"]) in FLOWN:
            if (leg["flight_number"], leg["date"]) not in new:
                return f"flight {leg['flight_number']} on {leg['date']} has already been flown and cannot be changed"
            if arguments.get("cabin") != res["cabin"]:
                return (
                    f"the cabin of reservation {res['reservation_id']} cannot change: part of the trip has been flown"
                )
    return None


@rule
def cancellation_allowed(state: State, action_name: str, arguments: dict) -> str | None:
    """Cancel only within 24 hours of booking, after an airline cancellation, in business, or with insurance."""
    if action_name != "cancel_reservation":
        return None
    res = _reservation(state, arguments)
    if res is None or res["status"] == "cancelled":
        return None
    statuses = [_status(state, leg["flight_number"], leg["date"]) for leg in res["flights"]]
    if any(s in FLOWN for s in statuses):
        return f"part of reservation {res['reservation_id']} has already been flown; it cannot be cancelled"
    recent = datetime.fromisoformat(res["created_at"]) >= _NOW - timedelta(hours=24)
    if recent or "cancelled" in statuses or res["cabin"] == "business" or res["insurance"] == "yes":
        return None
    return (
        f"reservation {res['reservation_id']} cannot be cancelled: booked more than 24 hours ago, "
        f"{res['cabin'].replace('_', ' ')} cabin, no travel insurance and no flight cancelled by the airline"
    )


@rule
def passenger_count_kept(state: State, action_name: str, arguments: dict) -> str | None:
    """Passenger details may change, the number of passengers may not."""
    if action_name != "update_reservation_passengers":
        return None
    res = _reservation(state, arguments)
    new = arguments.get("passengers")
    if res is None or not isinstance(new, list) or len(new) == len(res["passengers"]):
        return None
    return f"reservation {res['reservation_id']} has {len(res['passengers'])} passenger(s); the count cannot change"


@rule
def baggage_rules(state: State, action_name: str, arguments: dict) -> str | None:
    """Bags can be added, not removed, and only bags beyond the free allowance are charged."""
    if action_name == "update_reservation_baggages":
        res = _reservation(state, arguments)
        if res is None:
            return None
        user_id, cabin, passengers = res["user_id"], res["cabin"], len(res["passengers"])
        total = _int(arguments.get("total_baggages"))
        if total is not None and total < res["total_baggages"]:
            return "checked bags cannot be removed from a reservation"
    elif action_name == "book_reservation":
        user_id = str(arguments.get("user_id"))
        cabin = str(arguments.get("cabin"))
        passengers = len(arguments.get("passengers") or [])
    else:
        return None
    allowance = _allowance(state, user_id, cabin, passengers)
    total, nonfree = _int(arguments.get("total_baggages")), _int(arguments.get("nonfree_baggages"))
    if allowance is None or total is None or nonfree is None:
        return None  # the tool reports malformed arguments
    expected = max(0, total - allowance)
    if nonfree != expected:
        return f"with {allowance} free bag(s) allowed, nonfree_baggages should be {expected}"
    return None


@rule
def booking_limits(state: State, action_name: str, arguments: dict) -> str | None:
    """At most five passengers; at most one certificate, one credit card and three gift cards per booking."""
    if action_name != "book_reservation":
        return None
    if len(arguments.get("passengers") or []) > MAX_PASSENGERS:
        return f"a reservation can have at most {MAX_PASSENGERS} passengers"
    user = state["users"].peek(str(arguments.get("user_id")))
    if user is None:
        return None
    counts = {"credit_card": 0, "gift_card": 0, "certificate": 0}
    for p in arguments.get("payment_methods") or []:
        method = user["payment_methods"].get(p.get("payment_id")) if isinstance(p, dict) else None
        if method is None:
            return f"payment method '{p}' is not in the user's profile" if isinstance(p, dict) else None
        counts[method["source"]] += 1
    limits = {"credit_card": 1, "gift_card": 3, "certificate": 1}
    for source, limit in limits.items():
        if counts[source] > limit:
            return f"a booking may use at most {limit} {source.replace('_', ' ')}(s)"
    return None


@rule
def change_paid_by_card(state: State, action_name: str, arguments: dict) -> str | None:
    """Changes are paid with a credit card or gift card from the profile, never a certificate."""
    if action_name not in ("update_reservation_flights", "update_reservation_baggages"):
        return None
    res = _reservation(state, arguments)
    if res is None:
        return None
    user = state["users"].peek(res["user_id"])
    method = user["payment_methods"].get(arguments.get("payment_id")) if user else None
    if method is None:
        return f"payment method '{arguments.get('payment_id')}' is not in the profile of {res['user_id']}"
    if method["source"] == "certificate":
        return "a travel certificate cannot pay for a change"
    return None


@rule
def compensation_eligible(state: State, action_name: str, arguments: dict) -> str | None:
    """Certificates only for a cancelled (100 per passenger) or delayed (50 per passenger) flight,
    and only for silver/gold members, insured reservations or business cabin.

    With a `reservation_id` the certificate must fit that reservation; without one, some
    reservation of the user must qualify for that amount."""
    if action_name != "send_certificate":
        return None
    user = state["users"].peek(str(arguments.get("user_id")))
    if user is None:
        return None
    named = arguments.get("reservation_id")
    if named is not None and named not in user["reservations"]:
        return f"reservation {named} does not belong to user {user['user_id']}"
    allowed = set()
    for rid in [named] if named is not None else user["reservations"]:
        res = state["reservations"].peek(rid)
        if res is None:
            continue
        qualifies = user["membership"] in ("silver", "gold") or res["insurance"] == "yes" or res["cabin"] == "business"
        if not qualifies:
            continue
        statuses = {_status(state, leg["flight_number"], leg["date"]) for leg in res["flights"]}
        if "cancelled" in statuses:
            allowed.add(100 * len(res["passengers"]))
        if "delayed" in statuses:
            allowed.add(50 * len(res["passengers"]))
    if not allowed:
        which = f"reservation {named}" if named is not None else f"user {user['user_id']}"
        return f"{which} has no cancelled or delayed flight that qualifies for compensation"
    if arguments.get("amount") not in allowed:
        return f"a compensation certificate must be one of {sorted(allowed)}, not {arguments.get('amount')}"
    return None


RULES: list[Rule] = [
    basic_economy_flights_fixed,
    route_and_trip_type_kept,
    no_change_after_departure,
    cancellation_allowed,
    passenger_count_kept,
    baggage_rules,
    booking_limits,
    change_paid_by_card,
    compensation_eligible,
]
