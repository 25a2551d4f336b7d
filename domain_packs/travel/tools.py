"""Tools of the travel domain: a travel agency's travellers, trips, hotel stays, tours, car rentals and points.

Every tool is a typed function over the episode's database `State`. Tools do what they are asked
when it is mechanically possible (a room of that type is free for those nights, the tour departure
has places, the driver is on the traveller's profile, the points are there) and raise `ToolError`
otherwise; whether an action is *allowed* by the policy (non-refundable rates, cancellation windows,
driver ages, one-way rentals, points redemption) is the agent's call, checked separately by the
pack's `rules.py`. Fees and prices are the tools' arithmetic: a date change costs `CHANGE_FEE`, a
one-way rental `ONE_WAY_FEE`, a driver under 25 `YOUNG_DRIVER_FEE` a day.

Tools never read the clock or draw random numbers: today is the constant `TODAY`, and new ids are
derived from a hash of the request and the rows that already exist, so replaying the same calls
always produces the same database.
"""

from __future__ import annotations

import datetime as _dt
from typing import Literal

from tau_emotion.core.state import State
from tau_emotion.core.tools import ToolError, find_row, tool
from tau_emotion.domain_packs.values import arithmetic
from tau_emotion.domain_packs.values import money as _money
from tau_emotion.domain_packs.values import new_id as _new_id

TODAY = "2025-09-10"
POINT_VALUE = 0.01  # one loyalty point is worth one cent
CHANGE_FEE = 30  # per date change of a flexible hotel stay
ONE_WAY_FEE = 75  # a car returned in another city
YOUNG_DRIVER_AGE = 25
YOUNG_DRIVER_FEE = 20  # per rental day, for a driver under YOUNG_DRIVER_AGE at pick-up

RoomType = Literal["standard", "deluxe", "suite"]
RatePlan = Literal["FLEX", "SAVER"]


# --------------------------------------------------------------------------- helpers


def _date(value: str, what: str) -> _dt.date:
    try:
        return _dt.date.fromisoformat(value)
    except (TypeError, ValueError):
        raise ToolError(f"{what} '{value}' is not a date 'YYYY-MM-DD'") from None


def days_until(date: str) -> int:
    """Days from `TODAY` to a date; 0 on the day, negative after."""
    return (_dt.date.fromisoformat(date) - _dt.date.fromisoformat(TODAY)).days


def age_on(dob: str, date: str) -> int:
    """A person's age in whole years on a date."""
    born, day = _dt.date.fromisoformat(dob), _dt.date.fromisoformat(date)
    return day.year - born.year - ((day.month, day.day) < (born.month, born.day))


def _nights(check_in: str, check_out: str) -> int:
    nights = (_date(check_out, "check-out") - _date(check_in, "check-in")).days
    if nights < 1:
        raise ToolError("check-out must be after check-in")
    if days_until(check_in) < 0:
        raise ToolError(f"check-in {check_in} is in the past")
    return nights


def _room(hotel: dict, room_type: str) -> dict:
    room = next((r for r in hotel["rooms"] if r["room_type"] == room_type), None)
    if room is None:
        raise ToolError(f"hotel {hotel['hotel_code']} has no {room_type} rooms")
    return room


def _hotel_room(stay: dict) -> tuple[str, str, str]:
    """What `rooms_free` looks stays up by (the stays table is indexed on it once per database)."""
    return stay["hotel_code"], stay["room_type"], stay["status"]


def rooms_free(db: State, hotel_code: str, room_type: str, check_in: str, check_out: str, skip: str = "") -> int:
    """Rooms of a type free on every night of a stay (`skip`: a stay not to count, when it moves)."""
    hotel = db["hotels"].peek(hotel_code)
    used = sum(1 for sid, s in db["stays"].where(_hotel_room, (hotel_code, room_type, "confirmed"))
               if sid != skip and s["check_in"] < check_out and check_in < s["check_out"])
    return _room(hotel, room_type)["rooms"] - used


def nightly_rate(db: State, hotel_code: str, room_type: str, rate_plan: str) -> float:
    hotel = db["hotels"].peek(hotel_code)
    plan = db["rate_plans"].peek(rate_plan)
    if plan is None:
        raise ToolError(f"rate plan '{rate_plan}' not found")
    return _money(_room(hotel, room_type)["nightly_rate"] * (1 - plan["discount"]))


def _traveller_of(db: State, itinerary_id: str, *, write: bool = False) -> tuple[dict, dict]:
    trip = find_row(db, "itineraries", itinerary_id, "itinerary", write=write)
    return trip, db["travellers"][trip["traveller_id"]]


def _card(traveller: dict, payment_id: str) -> None:
    if payment_id not in traveller["payment_methods"]:
        raise ToolError(f"payment method '{payment_id}' is not in the profile of traveller '{traveller['traveller_id']}'")


def _redeem(traveller: dict, points: int, price: float) -> float:
    """Take `points` from the traveller's balance; the card pays the rest of `price`."""
    if points < 0:
        raise ToolError("points cannot be negative")
    if points > traveller["loyalty"]["points"]:
        raise ToolError(f"traveller {traveller['traveller_id']} has {traveller['loyalty']['points']} points")
    if points * POINT_VALUE > price + 1e-9:
        raise ToolError(f"{points} points are worth more than the price {price}")
    traveller["loyalty"]["points"] -= points
    return _money(price - points * POINT_VALUE)


def _refund_points(db: State, row: dict) -> int:
    points = row.get("points_used", 0)
    if points:
        traveller = db["travellers"][db["itineraries"].peek(row["itinerary_id"])["traveller_id"]]
        traveller["loyalty"]["points"] += points
    return points


def driver_dob(traveller: dict, name: str) -> str:
    """The date of birth of the traveller or a companion named `name` (ToolError when nobody on the profile is)."""
    people = [{"name": f"{traveller['name']['first_name']} {traveller['name']['last_name']}", "dob": traveller["dob"]},
              *traveller["companions"]]
    for person in people:
        if person["name"].lower() == " ".join(name.split()).lower():
            return person["dob"]
    raise ToolError(f"'{name}' is not the traveller or a companion on profile {traveller['traveller_id']}")


def _stretch(trip: dict, first: str, last: str) -> None:
    """Widen a trip's dates to cover a booking from `first` to `last`."""
    trip["start_date"], trip["end_date"] = min(trip["start_date"], first), max(trip["end_date"], last)


def _component_summary(db: State, trip: dict) -> dict:
    stays = [db["stays"].peek(s) for s in trip["stay_ids"]]
    tours = [db["tour_bookings"].peek(t) for t in trip["tour_booking_ids"]]
    cars = [db["car_rentals"].peek(c) for c in trip["car_rental_ids"]]
    return {"stays": stays, "tours": tours, "car_rentals": cars}


# --------------------------------------------------------------------------- look-ups


@tool
def find_traveller_by_email(db: State, email: str) -> dict:
    """Find a traveller by the email address on their profile.

    Args:
        email: The traveller's email address, such as 'ines.costa41@example.com'.
    """
    wanted = email.strip().lower()
    for _, traveller in db["travellers"].scan():
        if traveller["email"] == wanted:
            return {"traveller_id": traveller["traveller_id"], "first_name": traveller["name"]["first_name"],
                    "last_name": traveller["name"]["last_name"]}
    raise ToolError(f"no traveller with email '{email}'")


@tool
def get_traveller_details(db: State, traveller_id: str) -> dict:
    """Get a traveller's profile: name, date of birth, email, companions (name and date of birth), loyalty number and points, payment cards, and their trips (id, trip number, name, dates, status).

    Args:
        traveller_id: The traveller's id, such as 'TR104233'.
    """
    traveller = find_row(db, "travellers", traveller_id, "traveller")
    trips = []
    for tid in traveller["itinerary_ids"]:
        trip = db["itineraries"].peek(tid)
        trips.append({k: trip[k] for k in ("itinerary_id", "trip_number", "name", "start_date", "end_date", "status")})
    return {**{k: v for k, v in traveller.items() if k != "itinerary_ids"}, "trips": trips}


@tool
def get_itinerary_details(db: State, itinerary_id: str) -> dict:
    """Get a trip with everything in it: hotel stays (hotel, room, rate plan, dates, guests, price, points used, status), tour bookings (tour, date, participants, price, status) and car rentals (car class, cities, dates, driver, fees, price, status).

    Args:
        itinerary_id: The trip's id, such as 'IT500172'.
    """
    trip = find_row(db, "itineraries", itinerary_id, "itinerary")
    return {**{k: v for k, v in trip.items() if not k.endswith("_ids")}, **_component_summary(db, trip)}


@tool
def search_hotels(db: State, city: str, check_in: str, check_out: str) -> list:
    """List a city's hotels for a stay: each room type with its capacity, rooms free for those nights, and the nightly rate and total under each rate plan (FLEX refundable, SAVER non-refundable and cheaper).

    Args:
        city: The city, such as 'Lisbon'.
        check_in: The check-in date, 'YYYY-MM-DD'.
        check_out: The check-out date, 'YYYY-MM-DD'.
    """
    nights = _nights(check_in, check_out)
    out = []
    for code, hotel in db["hotels"].scan():
        if hotel["city"].lower() != city.strip().lower():
            continue
        rooms = []
        for room in hotel["rooms"]:
            plans = {p: {"nightly_rate": (r := nightly_rate(db, code, room["room_type"], p)), "total": _money(r * nights)}
                     for p, _ in db["rate_plans"].scan()}
            rooms.append({"room_type": room["room_type"], "capacity": room["capacity"],
                          "rooms_free": rooms_free(db, code, room["room_type"], check_in, check_out), "rate_plans": plans})
        out.append({"hotel_code": code, "name": hotel["name"], "stars": hotel["stars"], "nights": nights, "rooms": rooms})
    if not out:
        raise ToolError(f"no hotels in '{city}'")
    return out


@tool
def search_tours(db: State, city: str, date: str) -> list:
    """List the tour and activity departures in a city on a date: departure id, tour, start time, duration, price per person and places left.

    Args:
        city: The city, such as 'Seville'.
        date: The date, 'YYYY-MM-DD'.
    """
    out = []
    for did, dep in db["departures"].scan():
        tour = db["tours"].peek(dep["tour_code"])
        if dep["date"] == date and tour["city"].lower() == city.strip().lower():
            out.append({"departure_id": did, "tour_code": tour["tour_code"], "tour": tour["name"], "date": dep["date"],
                        "start_time": dep["start_time"], "hours": tour["hours"],
                        "price_per_person": tour["price_per_person"], "places_left": dep["places_left"]})
    return sorted(out, key=lambda d: (d["start_time"], d["tour"]))


@tool
def get_rental_cars(db: State) -> dict:
    """List the rental car classes (code, example model, seats, daily rate, minimum driver age), the cities with rental desks and their countries, and the rental fees (one-way fee, young driver fee per day)."""
    return {"car_classes": [row for _, row in db["car_classes"].scan()],
            "rental_cities": [{"city": c["city"], "country": c["country"]} for _, c in db["cities"].scan()],
            "one_way_fee": ONE_WAY_FEE, "young_driver_fee_per_day": YOUNG_DRIVER_FEE,
            "young_driver_age": YOUNG_DRIVER_AGE}


# --------------------------------------------------------------------------- changes


@tool(writes=True)
def book_hotel_stay(db: State, itinerary_id: str, hotel_code: str, room_type: RoomType, rate_plan: RatePlan,
                    check_in: str, check_out: str, guests: int, payment_id: str, points: int = 0) -> dict:
    """Add a hotel stay to a trip: one room of a type for the nights from check-in to check-out under a rate plan; loyalty points (1 point = 0.01) pay part of the price and a card from the profile the rest.

    Args:
        itinerary_id: The trip's id.
        hotel_code: The hotel's code, such as 'HTL_LIS_ALFAMA'.
        room_type: 'standard', 'deluxe' or 'suite'.
        rate_plan: 'FLEX' (refundable) or 'SAVER' (non-refundable).
        check_in: The check-in date, 'YYYY-MM-DD'.
        check_out: The check-out date, 'YYYY-MM-DD'.
        guests: How many guests stay in the room.
        payment_id: The card from the traveller's profile that pays.
        points: Loyalty points to redeem (0 for none).
    """
    trip, traveller = _traveller_of(db, itinerary_id, write=True)
    hotel = find_row(db, "hotels", hotel_code, "hotel")
    _card(traveller, payment_id)
    nights = _nights(check_in, check_out)
    room = _room(hotel, room_type)
    if not 1 <= guests <= room["capacity"]:
        raise ToolError(f"a {room_type} room at {hotel['name']} sleeps 1 to {room['capacity']} guests")
    if rooms_free(db, hotel_code, room_type, check_in, check_out) < 1:
        raise ToolError(f"no {room_type} room is free at {hotel['name']} from {check_in} to {check_out}")
    price = _money(nightly_rate(db, hotel_code, room_type, rate_plan) * nights)
    charged = _redeem(traveller, points, price)
    stay_id = _new_id(db, "stays", "HS", itinerary_id, hotel_code, room_type, check_in, check_out)
    db["stays"][stay_id] = {"stay_id": stay_id, "itinerary_id": itinerary_id, "hotel_code": hotel_code,
                            "hotel": hotel["name"], "city": hotel["city"], "room_type": room_type,
                            "rate_plan": rate_plan, "check_in": check_in, "check_out": check_out, "nights": nights,
                            "guests": guests, "price": price, "points_used": points, "payment_id": payment_id,
                            "fees": 0, "status": "confirmed"}
    trip["stay_ids"].append(stay_id)
    _stretch(trip, check_in, check_out)
    return {"stay_id": stay_id, "hotel": hotel["name"], "nights": nights, "price": price, "points_used": points,
            "charged": charged, "payment_id": payment_id}


@tool(writes=True)
def change_hotel_stay_dates(db: State, stay_id: str, check_in: str, check_out: str) -> dict:
    """Move a hotel stay to new dates (same hotel, room type and rate plan): the price difference plus a change fee of 30 is charged to the stay's card, or a lower price refunded to it less the fee.

    Args:
        stay_id: The stay's id.
        check_in: The new check-in date, 'YYYY-MM-DD'.
        check_out: The new check-out date, 'YYYY-MM-DD'.
    """
    stay = find_row(db, "stays", stay_id, "stay", write=True)
    if stay["status"] != "confirmed":
        raise ToolError(f"stay {stay_id} is {stay['status']}")
    if (check_in, check_out) == (stay["check_in"], stay["check_out"]):
        raise ToolError(f"stay {stay_id} already runs from {check_in} to {check_out}")
    nights = _nights(check_in, check_out)
    if rooms_free(db, stay["hotel_code"], stay["room_type"], check_in, check_out, skip=stay_id) < 1:
        raise ToolError(f"no {stay['room_type']} room is free at {stay['hotel']} from {check_in} to {check_out}")
    price = _money(nightly_rate(db, stay["hotel_code"], stay["room_type"], stay["rate_plan"]) * nights)
    difference = _money(price - stay["price"])
    _stretch(db["itineraries"][stay["itinerary_id"]], check_in, check_out)
    stay.update(check_in=check_in, check_out=check_out, nights=nights, price=price,
                fees=_money(stay["fees"] + CHANGE_FEE))
    return {"stay_id": stay_id, "check_in": check_in, "check_out": check_out, "nights": nights, "new_price": price,
            "price_difference": difference, "change_fee": CHANGE_FEE, "charged": _money(difference + CHANGE_FEE),
            "payment_id": stay["payment_id"]}


@tool(writes=True)
def cancel_hotel_stay(db: State, stay_id: str) -> dict:
    """Cancel a hotel stay: its price goes back, the card part to the stay's card and the points part to the traveller's loyalty balance; fees already paid are not refunded.

    Args:
        stay_id: The stay's id.
    """
    stay = find_row(db, "stays", stay_id, "stay", write=True)
    if stay["status"] != "confirmed":
        raise ToolError(f"stay {stay_id} is {stay['status']}")
    points = _refund_points(db, stay)
    stay["status"] = "cancelled"
    return {"stay_id": stay_id, "status": "cancelled", "refunded": _money(stay["price"] - points * POINT_VALUE),
            "points_returned": points, "payment_id": stay["payment_id"]}


@tool(writes=True)
def book_tour(db: State, itinerary_id: str, departure_id: str, participants: int, payment_id: str,
              points: int = 0) -> dict:
    """Add a tour or activity to a trip: places for the participants on one departure; loyalty points (1 point = 0.01) pay part of the price and a card from the profile the rest.

    Args:
        itinerary_id: The trip's id.
        departure_id: The departure's id, from search_tours.
        participants: How many people take part.
        payment_id: The card from the traveller's profile that pays.
        points: Loyalty points to redeem (0 for none).
    """
    trip, traveller = _traveller_of(db, itinerary_id, write=True)
    dep = find_row(db, "departures", departure_id, "departure", write=True)
    tour = db["tours"].peek(dep["tour_code"])
    _card(traveller, payment_id)
    if days_until(dep["date"]) < 0:
        raise ToolError(f"departure {departure_id} was on {dep['date']}")
    if not 1 <= participants <= dep["places_left"]:
        raise ToolError(f"departure {departure_id} has {dep['places_left']} places left")
    price = _money(tour["price_per_person"] * participants)
    charged = _redeem(traveller, points, price)
    dep["places_left"] -= participants
    booking_id = _new_id(db, "tour_bookings", "TB", itinerary_id, departure_id)
    db["tour_bookings"][booking_id] = {"tour_booking_id": booking_id, "itinerary_id": itinerary_id,
                                       "departure_id": departure_id, "tour_code": tour["tour_code"],
                                       "tour": tour["name"], "city": tour["city"], "date": dep["date"],
                                       "start_time": dep["start_time"], "participants": participants,
                                       "price": price, "points_used": points, "payment_id": payment_id,
                                       "status": "confirmed"}
    trip["tour_booking_ids"].append(booking_id)
    _stretch(trip, dep["date"], dep["date"])
    return {"tour_booking_id": booking_id, "tour": tour["name"], "date": dep["date"], "participants": participants,
            "price": price, "points_used": points, "charged": charged, "payment_id": payment_id}


@tool(writes=True)
def cancel_tour_booking(db: State, tour_booking_id: str) -> dict:
    """Cancel a tour booking: the places are released and its price goes back (card part to the card, points part to the loyalty balance).

    Args:
        tour_booking_id: The tour booking's id.
    """
    booking = find_row(db, "tour_bookings", tour_booking_id, "tour booking", write=True)
    if booking["status"] != "confirmed":
        raise ToolError(f"tour booking {tour_booking_id} is {booking['status']}")
    db["departures"][booking["departure_id"]]["places_left"] += booking["participants"]
    points = _refund_points(db, booking)
    booking["status"] = "cancelled"
    return {"tour_booking_id": tour_booking_id, "status": "cancelled",
            "refunded": _money(booking["price"] - points * POINT_VALUE), "points_returned": points,
            "payment_id": booking["payment_id"]}


@tool(writes=True)
def book_car_rental(db: State, itinerary_id: str, car_code: str, pickup_city: str, dropoff_city: str,
                    pickup_date: str, dropoff_date: str, driver_name: str, payment_id: str, points: int = 0) -> dict:
    """Add a car rental to a trip: a car class picked up and dropped off in rental cities on two dates, for a driver on the traveller's profile (the traveller or a companion).

    The price is the daily rate times the days, plus the one-way fee (75) when the cities differ and the
    young driver fee (20 a day) for a driver under 25 at pick-up; points (1 point = 0.01) may pay part.

    Args:
        itinerary_id: The trip's id.
        car_code: The car class's code, such as 'CAR_COMPACT'.
        pickup_city: Where the car is picked up, such as 'Lisbon'.
        dropoff_city: Where it is returned.
        pickup_date: The pick-up date, 'YYYY-MM-DD'.
        dropoff_date: The return date, 'YYYY-MM-DD'.
        driver_name: The driver's full name as on the profile, such as 'Ines Costa'.
        payment_id: The card from the traveller's profile that pays.
        points: Loyalty points to redeem (0 for none).
    """
    trip, traveller = _traveller_of(db, itinerary_id, write=True)
    car = find_row(db, "car_classes", car_code, "car class")
    _card(traveller, payment_id)
    cities = {c["city"].lower(): c["city"] for _, c in db["cities"].scan()}
    for city in (pickup_city, dropoff_city):
        if city.strip().lower() not in cities:
            raise ToolError(f"no rental desk in '{city}'")
    pickup, dropoff = cities[pickup_city.strip().lower()], cities[dropoff_city.strip().lower()]
    days = (_date(dropoff_date, "drop-off date") - _date(pickup_date, "pick-up date")).days
    if days < 1:
        raise ToolError("the car is returned at least one day after pick-up")
    if days_until(pickup_date) < 0:
        raise ToolError(f"pick-up date {pickup_date} is in the past")
    driver = driver_dob(traveller, driver_name)
    age = age_on(driver, pickup_date)
    young = YOUNG_DRIVER_FEE * days if age < YOUNG_DRIVER_AGE else 0
    one_way = ONE_WAY_FEE if pickup != dropoff else 0
    price = _money(car["daily_rate"] * days + young + one_way)
    charged = _redeem(traveller, points, price)
    rental_id = _new_id(db, "car_rentals", "CR", itinerary_id, car_code, pickup_date)
    db["car_rentals"][rental_id] = {"car_rental_id": rental_id, "itinerary_id": itinerary_id, "car_code": car_code,
                                    "pickup_city": pickup, "dropoff_city": dropoff, "pickup_date": pickup_date,
                                    "dropoff_date": dropoff_date, "days": days, "driver_name": driver_name.strip(),
                                    "driver_age": age, "one_way_fee": one_way, "young_driver_fee": young,
                                    "price": price, "points_used": points, "payment_id": payment_id,
                                    "status": "confirmed"}
    trip["car_rental_ids"].append(rental_id)
    _stretch(trip, pickup_date, dropoff_date)
    return {"car_rental_id": rental_id, "car": car["example_model"], "days": days, "one_way_fee": one_way,
            "young_driver_fee": young, "price": price, "points_used": points, "charged": charged,
            "payment_id": payment_id}


@tool(writes=True)
def cancel_car_rental(db: State, car_rental_id: str) -> dict:
    """Cancel a car rental: its price goes back (card part to the card, points part to the loyalty balance).

    Args:
        car_rental_id: The car rental's id.
    """
    rental = find_row(db, "car_rentals", car_rental_id, "car rental", write=True)
    if rental["status"] != "confirmed":
        raise ToolError(f"car rental {car_rental_id} is {rental['status']}")
    points = _refund_points(db, rental)
    rental["status"] = "cancelled"
    return {"car_rental_id": car_rental_id, "status": "cancelled",
            "refunded": _money(rental["price"] - points * POINT_VALUE), "points_returned": points,
            "payment_id": rental["payment_id"]}


# --------------------------------------------------------------------------- utilities


@tool
def calculate(db: State, expression: str) -> str:
    """Evaluate an arithmetic expression with numbers, + - * / and parentheses; the result is rounded to 2 decimals.

    Args:
        expression: The expression, such as '4 * 129 + 75'.
    """
    return str(arithmetic(expression))


@tool(terminal=True)
def transfer_to_human_agents(db: State, summary: str) -> str:
    """Hand the conversation to a human agent, with a short summary of the traveller's issue; this ends your part.

    Use it only when the request is outside what you can do under the policy and the traveller asks for a person.

    Args:
        summary: What the traveller needs and what has been done so far.
    """
    return "Transfer successful"
