"""Machine-checkable parts of the travel policy (`data/policy.md`).

Each rule has the signature `rule(state, action_name, arguments) -> str | None`: given the state
*before* a write action and the action's raw arguments, it returns a one-line reason when the
policy forbids that action, else None. Rules ignore actions they are not about and arguments they
cannot read (the tool itself reports those). Tools stay permissive on purpose: the agent must
apply the policy, and these rules let the Tracer reject policy-breaking gold trajectories.
Each rule's docstring names the refusal reason (`data/refusals.json`) an agent gives for it.
"""

from __future__ import annotations

from tau_emotion.core.domain import Rule, rule
from tau_emotion.core.state import State
from tau_emotion.domain_packs.travel.tools import POINT_VALUE, age_on, days_until

TOUR_CANCELLATION_DAYS = 2  # a tour is cancelled at least this many days (48 hours) before it departs
POINTS_BLOCK = 1000  # points are redeemed in whole thousands
POINTS_SHARE = 0.5  # points pay at most this share of a booking's price
BOOKINGS = ("book_hotel_stay", "book_tour", "book_car_rental")


def _row(state: State, table: str, arguments: dict, key: str) -> dict | None:
    value = arguments.get(key)
    return state[table].peek(value) if isinstance(value, str) else None


def _plan(state: State, stay: dict) -> dict:
    return state["rate_plans"].peek(stay["rate_plan"])


def _points(arguments: dict) -> int | None:
    points = arguments.get("points", 0)
    return points if isinstance(points, int) and points > 0 else None


def _price(state: State, action_name: str, arguments: dict) -> float | None:
    """The price of a stay or tour a booking asks for (None when the arguments do not say)."""
    try:
        if action_name == "book_hotel_stay":
            hotel = state["hotels"].peek(arguments["hotel_code"])
            room = next(r for r in hotel["rooms"] if r["room_type"] == arguments["room_type"])
            plan = state["rate_plans"].peek(arguments["rate_plan"])
            nights = days_until(arguments["check_out"]) - days_until(arguments["check_in"])
            return round(room["nightly_rate"] * (1 - plan["discount"]), 2) * nights
        if action_name == "book_tour":
            dep = state["departures"].peek(arguments["departure_id"])
            return state["tours"].peek(dep["tour_code"])["price_per_person"] * arguments["participants"]
    except (KeyError, TypeError, ValueError, StopIteration):
        return None
    return None


# --------------------------------------------------------------------------- rules


@rule
def non_refundable_rate(state: State, action_name: str, arguments: dict) -> str | None:
    """A stay on a non-refundable (SAVER) rate is never cancelled or moved (`non_refundable`)."""
    if action_name not in ("cancel_hotel_stay", "change_hotel_stay_dates"):
        return None
    stay = _row(state, "stays", arguments, "stay_id")
    if stay is None or _plan(state, stay)["refundable"]:
        return None
    return f"stay {stay['stay_id']} is on the non-refundable {stay['rate_plan']} rate: no cancellation or date change"


@rule
def stay_change_window(state: State, action_name: str, arguments: dict) -> str | None:
    """A refundable stay is cancelled or moved only until 3 days before check-in (`cancellation_window`)."""
    if action_name not in ("cancel_hotel_stay", "change_hotel_stay_dates"):
        return None
    stay = _row(state, "stays", arguments, "stay_id")
    if stay is None or not _plan(state, stay)["refundable"]:
        return None
    window = _plan(state, stay)["free_change_days"]
    if days_until(stay["check_in"]) >= window:
        return None
    return f"stay {stay['stay_id']} checks in on {stay['check_in']}, less than {window} days from now"


@rule
def tour_cancellation_window(state: State, action_name: str, arguments: dict) -> str | None:
    """A tour booking is cancelled only until 48 hours (2 days) before the tour (`tour_cancellation_window`)."""
    if action_name != "cancel_tour_booking":
        return None
    booking = _row(state, "tour_bookings", arguments, "tour_booking_id")
    if booking is None or days_until(booking["date"]) >= TOUR_CANCELLATION_DAYS:
        return None
    return f"the tour of booking {booking['tour_booking_id']} is on {booking['date']}, within 48 hours"


@rule
def rental_started(state: State, action_name: str, arguments: dict) -> str | None:
    """A car rental is cancelled only before its pick-up date (`rental_started`)."""
    if action_name != "cancel_car_rental":
        return None
    rental = _row(state, "car_rentals", arguments, "car_rental_id")
    if rental is None or days_until(rental["pickup_date"]) > 0:
        return None
    return f"car rental {rental['car_rental_id']} was picked up on {rental['pickup_date']}: no cancellation"


@rule
def driver_age(state: State, action_name: str, arguments: dict) -> str | None:
    """The driver must be at least the car class's minimum age at pick-up (21, 25 or 30) (`driver_age`)."""
    if action_name != "book_car_rental":
        return None
    trip = _row(state, "itineraries", arguments, "itinerary_id")
    car = _row(state, "car_classes", arguments, "car_code")
    name, pickup = arguments.get("driver_name"), arguments.get("pickup_date")
    if trip is None or car is None or not isinstance(name, str) or not isinstance(pickup, str):
        return None
    traveller = state["travellers"].peek(trip["traveller_id"])
    people = {f"{traveller['name']['first_name']} {traveller['name']['last_name']}".lower(): traveller["dob"]}
    people.update({c["name"].lower(): c["dob"] for c in traveller["companions"]})
    dob = people.get(" ".join(name.split()).lower())
    try:
        age = age_on(dob, pickup) if dob else None
    except ValueError:
        return None
    if age is None or age >= car["min_driver_age"]:
        return None
    return f"{name} is {age} at pick-up; a {car['car_code']} driver must be at least {car['min_driver_age']}"


@rule
def one_way_rentals(state: State, action_name: str, arguments: dict) -> str | None:
    """A one-way rental stays within one country, and vans and luxury cars return where they started (`one_way_not_allowed`)."""
    if action_name != "book_car_rental":
        return None
    car = _row(state, "car_classes", arguments, "car_code")
    cities = {c.lower(): row for c, row in ((k, v) for k, v in state["cities"].scan())}
    a, b = (cities.get(str(arguments.get(k, "")).strip().lower()) for k in ("pickup_city", "dropoff_city"))
    if car is None or a is None or b is None or a["city"] == b["city"]:
        return None
    if a["country"] != b["country"]:
        return f"a one-way rental from {a['city']} to {b['city']} crosses a border"
    if not car["one_way_allowed"]:
        return f"a {car['car_code']} must be returned where it was picked up"
    return None


@rule
def points_at_most_half(state: State, action_name: str, arguments: dict) -> str | None:
    """Points pay at most half the price of a stay or tour (`points_limit`)."""
    points = _points(arguments)
    price = _price(state, action_name, arguments) if points else None
    if price is None or points * POINT_VALUE <= price * POINTS_SHARE + 1e-9:
        return None
    return f"{points} points are worth {points * POINT_VALUE:.2f}, more than half the price {price:.2f}"


@rule
def points_in_blocks(state: State, action_name: str, arguments: dict) -> str | None:
    """Points are redeemed in whole thousands (`points_blocks`)."""
    points = _points(arguments) if action_name in BOOKINGS else None
    if points is None or points % POINTS_BLOCK == 0:
        return None
    return f"{points} points is not a whole number of thousands"


@rule
def points_not_for_cars(state: State, action_name: str, arguments: dict) -> str | None:
    """Points never pay for car rentals (`points_not_for_cars`)."""
    if action_name != "book_car_rental" or _points(arguments) is None:
        return None
    return "loyalty points cannot pay for a car rental"


@rule
def trip_open(state: State, action_name: str, arguments: dict) -> str | None:
    """Nothing is added to a completed or cancelled trip (`trip_closed`)."""
    if action_name not in BOOKINGS:
        return None
    trip = _row(state, "itineraries", arguments, "itinerary_id")
    if trip is None or trip["status"] not in ("completed", "cancelled"):
        return None
    return f"trip {trip['trip_number']} is {trip['status']}: nothing can be added to it"


RULES: list[Rule] = [
    non_refundable_rate,
    stay_change_window,
    tour_cancellation_window,
    rental_started,
    driver_age,
    one_way_rentals,
    points_at_most_half,
    points_in_blocks,
    points_not_for_cars,
    trip_open,
]


def violations(state: State, action_name: str, arguments: dict) -> list[str]:
    """Every rule's complaint about one action (empty when the action is policy-valid)."""
    return [msg for r in RULES if (msg := r(state, action_name, arguments))]
