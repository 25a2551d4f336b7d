"""Tools of the airline domain: look-ups, bookings, changes, cancellations and compensation.

Every tool is a typed function over the episode's database `State`. Tools execute what they are
asked when it is mechanically possible (the flight exists and has seats, the payment method holds
enough money, the reservation is still active) and raise `ToolError` otherwise; whether an action
is *allowed* by the policy is the agent's call, checked separately by the pack's `rules.py`.

Tools never read the clock or draw random numbers: the current time is the constant `NOW`, and
new ids are derived from a hash of the request and the rows that already exist, so replaying the
same calls always produces the same database.
"""

from __future__ import annotations

import datetime as _dt
from typing import Any, Literal

from typing_extensions import TypedDict

from tau_emotion.core.state import State
from tau_emotion.core.tools import ToolError, find_row, tool
from tau_emotion.domain_packs.values import arithmetic
from tau_emotion.domain_packs.values import digest as _digest
from tau_emotion.domain_packs.values import money as _money

NOW = "2024-05-15T15:00:00"
BAG_FEE = 50
INSURANCE_PER_PASSENGER = 30
MAX_PASSENGERS = 5
CABINS = ("basic_economy", "economy", "business")
# Free checked bags per passenger: FREE_BAGS[membership][cabin].
FREE_BAGS = {
    "regular": {"basic_economy": 0, "economy": 1, "business": 2},
    "silver": {"basic_economy": 1, "economy": 2, "business": 3},
    "gold": {"basic_economy": 2, "economy": 3, "business": 4},
}
FLOWN = ("landed", "flying")
ID_CHARS = "ABCDEFGHJKLMNPQRSTUVWXYZ0123456789"

Cabin = Literal["basic_economy", "economy", "business"]


class FlightRef(TypedDict):
    """One flight of an itinerary: the flight number and the date it departs."""

    flight_number: str
    date: str


class Passenger(TypedDict):
    """A traveller as written on the ticket."""

    first_name: str
    last_name: str
    dob: str


class Payment(TypedDict):
    """Part of a booking's payment: a payment method id from the user's profile and the amount it covers."""

    payment_id: str
    amount: float


# --------------------------------------------------------------------------- helpers


def _user(db: State, user_id: str, *, write: bool = False) -> dict:
    return find_row(db, "users", user_id, "user", write=write)


def _reservation(db: State, reservation_id: str, *, write: bool = False) -> dict:
    return find_row(db, "reservations", reservation_id, "reservation", write=write)


def _flight(db: State, flight_number: str) -> dict:
    row = db["flights"].peek(flight_number)
    if row is None:
        raise ToolError(f"flight '{flight_number}' not found")
    return row


def _flight_date(db: State, flight_number: str, date: str) -> dict:
    entry = _flight(db, flight_number)["dates"].get(date)
    if entry is None:
        raise ToolError(f"flight {flight_number} does not operate on {date}")
    return entry


def _bookable(db: State, flight_number: str, date: str, cabin: str, seats: int) -> dict:
    """The date entry of a flight that can take `seats` more passengers in `cabin`."""
    entry = _flight_date(db, flight_number, date)
    if entry["status"] != "available":
        raise ToolError(f"flight {flight_number} on {date} is not available for booking (status: {entry['status']})")
    if entry["available_seats"][cabin] < seats:
        raise ToolError(
            f"flight {flight_number} on {date} has only {entry['available_seats'][cabin]} {cabin} seat(s) left, "
            f"{seats} needed"
        )
    return entry


def _move_seats(db: State, flight_number: str, date: str, cabin: str, delta: int) -> None:
    """Take (delta < 0) or give back (delta > 0) seats; only open flights keep a seat count."""
    peeked = db["flights"].peek(flight_number)
    if peeked is None or peeked["dates"].get(date, {}).get("status") != "available":
        return
    db["flights"][flight_number]["dates"][date]["available_seats"][cabin] += delta


def _charge(db: State, user: dict, payment_id: str, amount: float) -> None:
    """Charge (amount > 0) or refund (amount < 0) a credit card or gift card from the user's profile."""
    method = user["payment_methods"].get(payment_id)
    if method is None:
        raise ToolError(f"payment method '{payment_id}' is not in the profile of user '{user['user_id']}'")
    if method["source"] == "certificate":
        raise ToolError("a travel certificate can only be used when booking a new reservation")
    if method["source"] == "gift_card":
        if amount > method["amount"] + 1e-9:
            raise ToolError(f"gift card '{payment_id}' has a balance of {method['amount']}, less than {_money(amount)}")
        method["amount"] = _money(method["amount"] - amount)


def _new_reservation_id(db: State, *parts: Any) -> str:
    table = db["reservations"]
    for attempt in range(1000):
        number = int(_digest(attempt, *parts), 16)
        rid = ""
        for _ in range(6):
            number, digit = divmod(number, len(ID_CHARS))
            rid += ID_CHARS[digit]
        if rid not in table:
            return rid
    raise ToolError("could not allocate a reservation id")  # pragma: no cover


def _leg(db: State, flight_number: str, date: str, price: float) -> dict:
    flight = _flight(db, flight_number)
    return {
        "flight_number": flight_number,
        "origin": flight["origin"],
        "destination": flight["destination"],
        "date": date,
        "price": price,
    }


def _search_row(flight: dict, date: str, entry: dict) -> dict:
    return {
        "flight_number": flight["flight_number"],
        "origin": flight["origin"],
        "destination": flight["destination"],
        "date": date,
        "scheduled_departure_time_est": flight["scheduled_departure_time_est"],
        "scheduled_arrival_time_est": flight["scheduled_arrival_time_est"],
        "status": entry["status"],
        "available_seats": dict(entry["available_seats"]),
        "prices": dict(entry["prices"]),
    }


def _minutes(clock: str) -> int:
    hms, _, plus = clock.partition("+")
    hours, minutes, _seconds = (int(x) for x in hms.split(":"))
    return hours * 60 + minutes + 24 * 60 * int(plus or 0)


def _shift(date: str, days: int) -> str:
    return (_dt.date.fromisoformat(date) + _dt.timedelta(days=days)).isoformat()


def _check_date(date: str) -> None:
    try:
        _dt.date.fromisoformat(date)
    except ValueError:
        raise ToolError(f"date '{date}' must be written as YYYY-MM-DD") from None


# --------------------------------------------------------------------------- look-ups


@tool
def get_user_details(db: State, user_id: str) -> dict:
    """Get a user's profile: name, address, email, date of birth, membership tier, payment methods, saved passengers and reservation ids.

    Args:
        user_id: The user's id, such as 'sara_bauer_9711'.
    """
    return _user(db, user_id)


@tool
def get_reservation_details(db: State, reservation_id: str) -> dict:
    """Get a reservation: route, trip type, cabin, flights with dates and prices, passengers, payments, baggage, insurance and status.

    Args:
        reservation_id: The six-character reservation id, such as 'ZTGLR0'.
    """
    return _reservation(db, reservation_id)


@tool
def list_user_reservations(db: State, user_id: str) -> list:
    """List a user's reservations in short form (route, dates, cabin, status) to find the one they mean.

    Args:
        user_id: The user's id, such as 'sara_bauer_9711'.
    """
    out = []
    for rid in _user(db, user_id)["reservations"]:
        res = db["reservations"].peek(rid)
        if res is None:
            continue
        out.append(
            {
                "reservation_id": rid,
                "origin": res["origin"],
                "destination": res["destination"],
                "flight_type": res["flight_type"],
                "cabin": res["cabin"],
                "first_flight_date": res["flights"][0]["date"],
                "last_flight_date": res["flights"][-1]["date"],
                "status": res["status"],
            }
        )
    return out


@tool
def list_all_airports(db: State) -> list:
    """List every airport the airline serves, with its IATA code, name and city."""
    return [{"iata": code, "name": row["name"], "city": row["city"]} for code, row in db["airports"].scan()]


@tool
def search_direct_flight(db: State, origin: str, destination: str, date: str) -> list:
    """Search nonstop flights between two airports on a date that are open for booking, with seats left and prices per cabin.

    Args:
        origin: IATA code of the departure airport, such as 'JFK'.
        destination: IATA code of the arrival airport, such as 'SFO'.
        date: Departure date as YYYY-MM-DD.
    """
    _check_date(date)
    out = []
    for _code, flight in db["flights"].scan():
        if flight["origin"] == origin and flight["destination"] == destination:
            entry = flight["dates"].get(date)
            if entry is not None and entry["status"] == "available":
                out.append(_search_row(flight, date, entry))
    return out


@tool
def search_onestop_flight(db: State, origin: str, destination: str, date: str) -> list:
    """Search itineraries with one connection between two airports, open for booking; each result is a pair of flights.

    The second flight leaves the connecting airport at least one hour after the first arrives.

    Args:
        origin: IATA code of the departure airport, such as 'JFK'.
        destination: IATA code of the final arrival airport, such as 'SFO'.
        date: Departure date of the first flight as YYYY-MM-DD.
    """
    _check_date(date)
    flights = db["flights"]
    by_origin: dict[str, list[dict]] = {}
    for _code, flight in flights.scan():
        by_origin.setdefault(flight["origin"], []).append(flight)
    out = []
    for first in by_origin.get(origin, []):
        if first["destination"] == destination:
            continue
        entry1 = first["dates"].get(date)
        if entry1 is None or entry1["status"] != "available":
            continue
        arrival = _minutes(first["scheduled_arrival_time_est"])
        days, arrival_clock = divmod(arrival, 24 * 60)
        second_date = _shift(date, days)
        for second in by_origin.get(first["destination"], []):
            if second["destination"] != destination:
                continue
            if _minutes(second["scheduled_departure_time_est"]) < arrival_clock + 60:
                continue
            entry2 = second["dates"].get(second_date)
            if entry2 is None or entry2["status"] != "available":
                continue
            out.append([_search_row(first, date, entry1), _search_row(second, second_date, entry2)])
    return out


@tool
def get_flight_status(db: State, flight_number: str, date: str) -> dict:
    """Get the status of a flight on a date (available, on time, delayed, flying, landed or cancelled) with its times.

    Args:
        flight_number: The flight number, such as 'SKY230'.
        date: The date as YYYY-MM-DD.
    """
    _check_date(date)
    flight = _flight(db, flight_number)
    entry = _flight_date(db, flight_number, date)
    return {
        "flight_number": flight_number,
        "origin": flight["origin"],
        "destination": flight["destination"],
        "date": date,
        "scheduled_departure_time_est": flight["scheduled_departure_time_est"],
        "scheduled_arrival_time_est": flight["scheduled_arrival_time_est"],
        **{k: v for k, v in entry.items() if k not in ("available_seats", "prices")},
    }


# --------------------------------------------------------------------------- changes


@tool(writes=True)
def book_reservation(
    db: State,
    user_id: str,
    origin: str,
    destination: str,
    flight_type: Literal["one_way", "round_trip"],
    cabin: Cabin,
    flights: list[FlightRef],
    passengers: list[Passenger],
    payment_methods: list[Payment],
    total_baggages: int,
    nonfree_baggages: int,
    insurance: Literal["yes", "no"],
) -> dict:
    """Book a new reservation for a user and charge it to payment methods from their profile.

    The total is the sum of the current prices of all flights in the cabin times the number of
    passengers, plus 30 per passenger for travel insurance, plus 50 per non-free checked bag. The
    payment amounts must add up to exactly that total.

    Args:
        user_id: The id of the user who books, such as 'sara_bauer_9711'.
        origin: IATA code of the trip's origin.
        destination: IATA code of the trip's destination (the turnaround point of a round trip).
        flight_type: 'one_way' or 'round_trip'.
        cabin: 'basic_economy', 'economy' or 'business'; the same for every flight.
        flights: Every flight of the trip in order, each as {flight_number, date}.
        passengers: Every traveller, each as {first_name, last_name, dob}.
        payment_methods: How the total is split, each as {payment_id, amount}.
        total_baggages: Checked bags for the whole reservation.
        nonfree_baggages: How many of those bags are charged the fee.
        insurance: 'yes' to buy travel insurance for every passenger, else 'no'.
    """
    user = _user(db, user_id, write=True)
    if not flights:
        raise ToolError("a reservation needs at least one flight")
    if not passengers:
        raise ToolError("a reservation needs at least one passenger")
    if not 0 <= nonfree_baggages <= total_baggages:
        raise ToolError("nonfree_baggages must be between 0 and total_baggages")
    n = len(passengers)
    legs = []
    for ref in flights:
        entry = _bookable(db, ref["flight_number"], ref["date"], cabin, n)
        legs.append(_leg(db, ref["flight_number"], ref["date"], entry["prices"][cabin]))
    total = sum(leg["price"] for leg in legs) * n + BAG_FEE * nonfree_baggages
    total += INSURANCE_PER_PASSENGER * n if insurance == "yes" else 0
    paid = sum(p["amount"] for p in payment_methods)
    if abs(paid - total) > 0.005:
        raise ToolError(f"the payments add up to {_money(paid)} but the total price is {_money(total)}")
    for p in payment_methods:
        method = user["payment_methods"].get(p["payment_id"])
        if method is None:
            raise ToolError(f"payment method '{p['payment_id']}' is not in the profile of user '{user_id}'")
        if p["amount"] <= 0:
            raise ToolError("every payment amount must be positive")
        if method["source"] in ("gift_card", "certificate") and p["amount"] > method["amount"] + 1e-9:
            raise ToolError(f"{method['source'].replace('_', ' ')} '{p['payment_id']}' has only {method['amount']}")
    for p in payment_methods:
        method = user["payment_methods"][p["payment_id"]]
        if method["source"] == "gift_card":
            method["amount"] = _money(method["amount"] - p["amount"])
        elif method["source"] == "certificate":
            del user["payment_methods"][p["payment_id"]]  # single use: what is left of it is forfeited
    for leg in legs:
        _move_seats(db, leg["flight_number"], leg["date"], cabin, -n)
    rid = _new_reservation_id(db, user_id, flights, passengers, len(user["reservations"]))
    reservation = {
        "reservation_id": rid,
        "user_id": user_id,
        "origin": origin,
        "destination": destination,
        "flight_type": flight_type,
        "cabin": cabin,
        "flights": legs,
        "passengers": [dict(p) for p in passengers],
        "payment_history": [{"payment_id": p["payment_id"], "amount": _money(p["amount"])} for p in payment_methods],
        "created_at": NOW,
        "total_baggages": total_baggages,
        "nonfree_baggages": nonfree_baggages,
        "insurance": insurance,
        "status": "active",
    }
    db["reservations"][rid] = reservation
    user["reservations"].append(rid)
    return reservation


@tool(writes=True)
def cancel_reservation(db: State, reservation_id: str) -> dict:
    """Cancel a whole reservation and refund what was paid to the original payment methods.

    Credit card refunds arrive in 5 to 7 business days; gift card balances are restored at once;
    amounts paid with a travel certificate are not refunded. A trip of which a flight has already
    departed cannot be cancelled.

    Args:
        reservation_id: The six-character reservation id.
    """
    res = _reservation(db, reservation_id, write=True)
    if res["status"] == "cancelled":
        raise ToolError(f"reservation {reservation_id} is already cancelled")
    for leg in res["flights"]:
        status = db["flights"].peek(leg["flight_number"], {}).get("dates", {}).get(leg["date"], {}).get("status")
        if status in FLOWN:
            raise ToolError(f"flight {leg['flight_number']} on {leg['date']} has already departed ({status})")
    net: dict[str, float] = {}
    for p in res["payment_history"]:
        net[p["payment_id"]] = net.get(p["payment_id"], 0) + p["amount"]
    user = _user(db, res["user_id"], write=True)
    refunds = []
    for payment_id, amount in net.items():
        if amount <= 0 or payment_id.startswith("certificate_"):
            continue
        refunds.append({"payment_id": payment_id, "amount": _money(-amount)})
        method = user["payment_methods"].get(payment_id)
        if method is not None and method["source"] == "gift_card":
            method["amount"] = _money(method["amount"] + amount)
    res["payment_history"].extend(refunds)
    for leg in res["flights"]:
        _move_seats(db, leg["flight_number"], leg["date"], res["cabin"], len(res["passengers"]))
    res["status"] = "cancelled"
    return {**res, "refund_total": _money(-sum(r["amount"] for r in refunds))}


@tool(writes=True)
def update_reservation_flights(
    db: State, reservation_id: str, cabin: Cabin, flights: list[FlightRef], payment_id: str
) -> dict:
    """Replace a reservation's flights and/or cabin; the fare difference is charged to or refunded to one payment method.

    Pass the complete new list of flights, including the ones that stay. A flight that stays in
    the same cabin keeps the price paid; a new flight, or any flight when the cabin changes, is
    priced at today's fare. The difference, times the number of passengers, is charged (or
    refunded) to `payment_id`, which must be a credit card or gift card from the user's profile.

    Args:
        reservation_id: The six-character reservation id.
        cabin: The cabin for every flight after the change.
        flights: Every flight of the trip after the change, in order, each as {flight_number, date}.
        payment_id: The credit card or gift card that pays or receives the difference.
    """
    res = _reservation(db, reservation_id, write=True)
    if res["status"] == "cancelled":
        raise ToolError(f"reservation {reservation_id} is cancelled")
    if not flights:
        raise ToolError("a reservation needs at least one flight")
    n = len(res["passengers"])
    old = {(leg["flight_number"], leg["date"]): leg for leg in res["flights"]}
    legs, kept = [], set()
    for ref in flights:
        key = (ref["flight_number"], ref["date"])
        if key in old and cabin == res["cabin"]:
            legs.append(dict(old[key]))
            kept.add(key)
        else:
            entry = _bookable(db, ref["flight_number"], ref["date"], cabin, n)
            legs.append(_leg(db, ref["flight_number"], ref["date"], entry["prices"][cabin]))
    diff = (sum(leg["price"] for leg in legs) - sum(leg["price"] for leg in res["flights"])) * n
    user = _user(db, res["user_id"], write=True)
    _charge(db, user, payment_id, diff)
    for leg in res["flights"]:
        if (leg["flight_number"], leg["date"]) not in kept:
            _move_seats(db, leg["flight_number"], leg["date"], res["cabin"], n)
    for leg in legs:
        if (leg["flight_number"], leg["date"]) not in kept:
            _move_seats(db, leg["flight_number"], leg["date"], cabin, -n)
    if diff:
        res["payment_history"].append({"payment_id": payment_id, "amount": _money(diff)})
    res["cabin"] = cabin
    res["flights"] = legs
    return res


@tool(writes=True)
def update_reservation_passengers(db: State, reservation_id: str, passengers: list[Passenger]) -> dict:
    """Replace the passenger details of a reservation; the number of passengers cannot change.

    Args:
        reservation_id: The six-character reservation id.
        passengers: Every passenger after the change, each as {first_name, last_name, dob}.
    """
    res = _reservation(db, reservation_id, write=True)
    if res["status"] == "cancelled":
        raise ToolError(f"reservation {reservation_id} is cancelled")
    if len(passengers) != len(res["passengers"]):
        raise ToolError(
            f"reservation {reservation_id} has {len(res['passengers'])} passenger(s); "
            f"the number of passengers cannot change"
        )
    res["passengers"] = [dict(p) for p in passengers]
    return res


@tool(writes=True)
def update_reservation_baggages(
    db: State, reservation_id: str, total_baggages: int, nonfree_baggages: int, payment_id: str
) -> dict:
    """Set the number of checked bags on a reservation; each additional non-free bag costs 50.

    Args:
        reservation_id: The six-character reservation id.
        total_baggages: The new total number of checked bags.
        nonfree_baggages: How many of them are charged the bag fee.
        payment_id: The credit card or gift card that pays the fee.
    """
    res = _reservation(db, reservation_id, write=True)
    if res["status"] == "cancelled":
        raise ToolError(f"reservation {reservation_id} is cancelled")
    if not 0 <= nonfree_baggages <= total_baggages:
        raise ToolError("nonfree_baggages must be between 0 and total_baggages")
    if nonfree_baggages < res["nonfree_baggages"]:
        raise ToolError("bag fees already paid are not refunded; nonfree_baggages cannot go down")
    fee = BAG_FEE * (nonfree_baggages - res["nonfree_baggages"])
    user = _user(db, res["user_id"], write=True)
    _charge(db, user, payment_id, fee)
    if fee:
        res["payment_history"].append({"payment_id": payment_id, "amount": fee})
    res["total_baggages"] = total_baggages
    res["nonfree_baggages"] = nonfree_baggages
    return res


@tool(writes=True)
def send_certificate(db: State, user_id: str, amount: int, reservation_id: str | None = None) -> str:
    """Add a travel certificate of the given amount to a user's profile, as compensation.

    Args:
        user_id: The user's id.
        amount: The certificate's value in dollars.
        reservation_id: The reservation the compensation is for (optional; it must belong to the user).
    """
    if amount <= 0:
        raise ToolError("the certificate amount must be positive")
    if reservation_id is not None and _reservation(db, reservation_id)["user_id"] != user_id:
        raise ToolError(f"reservation {reservation_id} does not belong to user '{user_id}'")
    user = _user(db, user_id, write=True)
    methods = user["payment_methods"]
    attempt = 0
    while True:
        pid = f"certificate_{int(_digest(user_id, amount, len(methods), attempt), 16) % 9000000 + 1000000}"
        if pid not in methods:
            break
        attempt += 1
    methods[pid] = {"source": "certificate", "id": pid, "amount": amount}
    return f"Certificate {pid} worth {amount} added to the profile of {user_id}."


# --------------------------------------------------------------------------- utilities


@tool
def calculate(db: State, expression: str) -> str:
    """Evaluate an arithmetic expression with numbers, + - * / and parentheses; the result is rounded to 2 decimals.

    Args:
        expression: The expression, such as '(135 + 177) * 2 + 30'.
    """
    return str(arithmetic(expression))


@tool(terminal=True)
def transfer_to_human_agents(db: State, summary: str) -> str:
    """Hand the conversation to a human agent, with a short summary of the user's issue; this ends your part.

    Use it only when the request is outside what you can do under the policy and the user asks for a person.

    Args:
        summary: What the user needs and what has been done so far.
    """
    return "Transfer successful"
