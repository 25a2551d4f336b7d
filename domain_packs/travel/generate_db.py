"""Seeded generator of the travel database (`data/db.json`).

    python -m tau_emotion.domain_packs.travel.generate_db --seed 0 [--travellers 500] [--out PATH]

The same seed always writes the same bytes. The catalogue (cities, hotels with room types and
rates, rate plans, tours, car classes) is fixed; tour departures (June 2025 - January 2026),
travellers with companions and loyalty points, and their trips with hotel stays, tours and car
rentals are drawn around `tools.TODAY`, with enough non-refundable stays, stays and tours inside
their cancellation windows, young drivers, one-way rentals, points balances and completed trips for
every policy rule to matter. The database obeys its own policy.
"""

from __future__ import annotations

import argparse
import datetime as _dt
import json
import random
from importlib.resources import files
from pathlib import Path
from typing import Any

from tau_emotion.domain_packs.travel.tools import (
    ONE_WAY_FEE,
    POINT_VALUE,
    TODAY,
    YOUNG_DRIVER_AGE,
    YOUNG_DRIVER_FEE,
    age_on,
)

CITIES = [("Lisbon", "Portugal"), ("Porto", "Portugal"), ("Madrid", "Spain"), ("Barcelona", "Spain"),
          ("Seville", "Spain"), ("Rome", "Italy"), ("Florence", "Italy"), ("Paris", "France"), ("Nice", "France")]
HOTELS = [  # code, name, city, stars, standard nightly rate
    ("HTL_LIS_ALFAMA", "Alfama Terrace Hotel", "Lisbon", 4, 140), ("HTL_LIS_TEJO", "Tejo Riverside Inn", "Lisbon", 3, 95),
    ("HTL_OPO_RIBEIRA", "Ribeira Wine House", "Porto", 4, 125), ("HTL_OPO_BOLHAO", "Bolhao Rooms", "Porto", 3, 80),
    ("HTL_MAD_PRADO", "Prado Garden Hotel", "Madrid", 5, 210), ("HTL_MAD_SOL", "Puerta del Sol Suites", "Madrid", 3, 105),
    ("HTL_BCN_GRACIA", "Gracia Courtyard", "Barcelona", 4, 165), ("HTL_BCN_MAR", "Barceloneta Sea Hotel", "Barcelona", 3, 120),
    ("HTL_SVQ_GIRALDA", "Giralda Patio Hotel", "Seville", 4, 130), ("HTL_SVQ_TRIANA", "Triana Azulejo Inn", "Seville", 3, 85),
    ("HTL_ROM_TRASTE", "Trastevere House", "Rome", 4, 175), ("HTL_ROM_MONTI", "Monti Central Hotel", "Rome", 3, 115),
    ("HTL_FLR_ARNO", "Arno View Palazzo", "Florence", 5, 240), ("HTL_FLR_DUOMO", "Duomo Steps Hotel", "Florence", 3, 110),
    ("HTL_PAR_MARAIS", "Marais Atelier Hotel", "Paris", 4, 220), ("HTL_PAR_MONTM", "Montmartre Studio Hotel", "Paris", 3, 135),
    ("HTL_NCE_PROM", "Promenade Azur Hotel", "Nice", 4, 185), ("HTL_NCE_VIEUX", "Vieux Nice Guesthouse", "Nice", 2, 90),
]
ROOMS = [("standard", 1.0, 2, 10), ("deluxe", 1.45, 3, 5), ("suite", 2.2, 4, 2)]  # type, rate factor, capacity, rooms
RATE_PLANS = [  # code, name, discount, refundable, free changes and cancellation until this many days before check-in
    ("FLEX", "Flexible (refundable)", 0.0, True, 3),
    ("SAVER", "Saver (non-refundable)", 0.2, False, None),
]
TOURS = [  # code, name, city, hours, price per person, weekdays (0 = Monday)
    ("TOUR_LIS_TRAM", "Lisbon hills by vintage tram", "Lisbon", 3, 39, (1, 5)),
    ("TOUR_LIS_SINTRA", "Sintra palaces day trip", "Lisbon", 8, 95, (2, 6)),
    ("TOUR_OPO_DOURO", "Douro valley wine cruise", "Porto", 9, 129, (3, 5)),
    ("TOUR_OPO_FOOD", "Porto food walk", "Porto", 3, 55, (0, 4)),
    ("TOUR_MAD_PRADO", "Prado museum guided visit", "Madrid", 2, 45, (1, 3)),
    ("TOUR_MAD_TOLEDO", "Toledo day trip", "Madrid", 8, 85, (2, 5)),
    ("TOUR_BCN_GAUDI", "Gaudi highlights tour", "Barcelona", 4, 69, (0, 3)),
    ("TOUR_BCN_KAYAK", "Costa Brava kayaking", "Barcelona", 6, 89, (5, 6)),
    ("TOUR_SVQ_FLAMENCO", "Flamenco night in Triana", "Seville", 2, 35, (4, 5)),
    ("TOUR_SVQ_ALCAZAR", "Royal Alcazar early entry", "Seville", 2, 49, (1, 6)),
    ("TOUR_ROM_COLOSSEUM", "Colosseum underground tour", "Rome", 3, 79, (0, 2)),
    ("TOUR_ROM_VATICAN", "Vatican museums and Sistine Chapel", "Rome", 4, 89, (3, 5)),
    ("TOUR_FLR_CHIANTI", "Chianti vineyards by bike", "Florence", 7, 115, (2, 6)),
    ("TOUR_FLR_UFFIZI", "Uffizi gallery visit", "Florence", 3, 59, (1, 4)),
    ("TOUR_PAR_SEINE", "Seine dinner cruise", "Paris", 3, 119, (4, 5)),
    ("TOUR_PAR_LOUVRE", "Louvre masterpieces tour", "Paris", 3, 75, (0, 3)),
    ("TOUR_NCE_EZE", "Eze and Monaco coast trip", "Nice", 8, 99, (2, 6)),
    ("TOUR_NCE_MARKET", "Cours Saleya market and cooking class", "Nice", 4, 85, (1, 5)),
]
CARS = [  # code, example model, seats, daily rate, minimum driver age, one-way allowed
    ("CAR_ECONOMY", "Fiat 500", 4, 32, 21, True),
    ("CAR_COMPACT", "VW Golf", 5, 41, 21, True),
    ("CAR_SUV", "Peugeot 3008", 5, 64, 25, True),
    ("CAR_VAN", "Ford Tourneo (9 seats)", 9, 98, 25, False),
    ("CAR_LUXURY", "Mercedes E-Class", 5, 145, 30, False),
]
TRIP_NAMES = {  # by who travels: alone, a couple, a family with children
    "solo": ["city break", "long weekend", "work trip with a weekend", "museum tour", "food and wine trip"],
    "couple": ["city break", "long weekend", "honeymoon", "anniversary trip", "food and wine trip", "autumn getaway"],
    "family": ["family holiday", "long weekend", "city break"],
    "school": ["family holiday", "school holiday trip", "long weekend"],  # with a child under 18
}
FIRST = ["Aisha", "Ben", "Carla", "Diego", "Elena", "Farid", "Grace", "Hiro", "Ines", "Jonas", "Kemal", "Lena",
         "Marco", "Nadia", "Omar", "Priya", "Quinn", "Rosa", "Samir", "Tara", "Umar", "Vera", "Wen", "Ximena",
         "Yusuf", "Zoe", "Amara", "Bruno", "Chloe", "Dev", "Esme", "Felix", "Gita", "Hugo", "Ivy", "Jamal", "Kira",
         "Liam", "Maya", "Noah", "Olga", "Pablo", "Rhea", "Sven", "Tomas", "Uma", "Viktor", "Wanda", "Yara", "Zane"]
LAST = ["Abbott", "Banerjee", "Castro", "Dubois", "Eriksen", "Fischer", "Garcia", "Haddad", "Ito", "Jensen",
        "Kowalski", "Lindqvist", "Moreau", "Nakamura", "Okafor", "Petrov", "Quintero", "Rossi", "Schmidt", "Tanaka",
        "Ueda", "Varga", "Walsh", "Xu", "Yilmaz", "Zimmer", "Alvarez", "Brennan", "Costa", "Dias", "Evans", "Ferro",
        "Gupta", "Hughes", "Iqbal", "Kim", "Lopez", "Murphy", "Novak", "Olsen"]
BRANDS = ["visa", "mastercard", "amex"]
CODE_CHARS = "ABCDEFGHJKLMNPQRSTUVWXYZ23456789"
FIRST_DAY, LAST_DAY = _dt.date(2025, 6, 1), _dt.date(2026, 1, 31)


def _unique(rng: random.Random, used: set[str], make: Any) -> str:
    while True:
        value = make(rng)
        if value not in used:
            used.add(value)
            return value


def _money(value: float) -> float | int:
    value = round(value + 0.0, 2)
    return int(value) if value == int(value) else value


def _iso(day: _dt.date) -> str:
    return day.isoformat()


def _dob(rng: random.Random, low: int, high: int) -> str:
    return f"{rng.randrange(low, high + 1)}-{rng.randrange(1, 13):02d}-{rng.randrange(1, 29):02d}"


class _World:
    """The database being drawn, with the room-night counts that keep hotels from overbooking."""

    def __init__(self, seed: int):
        self.rng = random.Random(seed)
        self.ids: set[str] = set()
        self.codes: set[str] = set()
        self.nights: dict[tuple[str, str, str], int] = {}
        self.db: dict[str, Any] = {
            "cities": {c: {"city": c, "country": k} for c, k in CITIES},
            "hotels": {code: {"hotel_code": code, "name": n, "city": city, "stars": stars,
                              "rooms": [{"room_type": t, "capacity": cap, "rooms": count,
                                         "nightly_rate": _money(round(rate * f))} for t, f, cap, count in ROOMS]}
                       for code, n, city, stars, rate in HOTELS},
            "rate_plans": {c: {"rate_plan": c, "name": n, "discount": d, "refundable": r, "free_change_days": days}
                           for c, n, d, r, days in RATE_PLANS},
            "tours": {c: {"tour_code": c, "name": n, "city": city, "hours": h, "price_per_person": p}
                      for c, n, city, h, p, _ in TOURS},
            "car_classes": {c: {"car_code": c, "example_model": m, "seats": s, "daily_rate": r, "min_driver_age": a,
                                "one_way_allowed": ow} for c, m, s, r, a, ow in CARS},
            "departures": {}, "travellers": {}, "itineraries": {}, "stays": {}, "tour_bookings": {}, "car_rentals": {},
        }

    def new_id(self, prefix: str) -> str:
        return _unique(self.rng, self.ids, lambda r: f"{prefix}{r.randrange(100000, 1000000)}")

    def departures(self) -> None:
        rng = self.rng
        day = FIRST_DAY
        while day <= LAST_DAY:
            for code, _, _, _, _, weekdays in TOURS:
                if day.weekday() in weekdays:
                    did = self.new_id("DP")
                    capacity = rng.choice([12, 16, 20, 24])
                    self.db["departures"][did] = {"departure_id": did, "tour_code": code, "date": _iso(day),
                                                  "start_time": rng.choice(["08:30", "09:00", "10:00", "14:00", "18:30"]),
                                                  "capacity": capacity, "places_left": capacity}
            day += _dt.timedelta(days=1)


def generate(seed: int = 0, travellers: int = 500) -> dict[str, Any]:
    world = _World(seed)
    world.departures()
    by_tour_day: dict[tuple[str, str], list[dict]] = {}
    for dep in world.db["departures"].values():
        by_tour_day.setdefault((dep["tour_code"], dep["date"]), []).append(dep)
    emails: set[str] = set()
    for _ in range(travellers):
        _traveller(world, emails, by_tour_day)
    return world.db


def _traveller(world: _World, emails: set[str], by_tour_day: dict) -> None:
    rng, db = world.rng, world.db
    tid = world.new_id("TR")
    first, last = rng.choice(FIRST), rng.choice(LAST)
    email = _unique(rng, emails, lambda r: f"{first.lower()}.{last.lower()}{r.randrange(100)}@example.com")
    born = rng.randrange(1950, 2006)
    companions = []
    names = rng.sample([f for f in FIRST if f != first], 3)  # everyone on a profile has a distinct name
    if rng.random() < 0.6:
        year = min(2005, born + rng.randrange(-6, 7))
        companions.append({"name": f"{names.pop()} {last}", "relation": "partner", "dob": _dob(rng, year, year)})
    for _ in range(rng.choice([0, 0, 0, 1, 2]) if born + 22 <= 2020 else 0):  # children born to a parent of 22-45
        year = rng.randrange(born + 22, min(born + 45, 2020) + 1)
        companions.append({"name": f"{names.pop()} {last}", "relation": "child", "dob": _dob(rng, year, year)})
    cards = {}
    for _ in range(rng.choice([1, 1, 2, 3])):
        pid = world.new_id("card_")
        cards[pid] = {"payment_id": pid, "brand": rng.choice(BRANDS), "last_four": f"{rng.randrange(10000):04d}"}
    points = rng.choice([0, 1200, 3500, 8000, 15000, 26000, 42000, 60000, 90000])  # before this year's redemptions
    traveller = {"traveller_id": tid, "name": {"first_name": first, "last_name": last}, "email": email,
                 "phone": f"+1-555-{rng.randrange(10000):04d}", "dob": _dob(rng, born, born),
                 "companions": companions,
                 "loyalty": {"loyalty_number": f"LY-{rng.randrange(1000000, 10000000)}", "points": points},
                 "payment_methods": cards, "itinerary_ids": []}
    db["travellers"][tid] = traveller
    for _ in range(rng.choice([1, 1, 2, 2, 3])):
        _trip(world, traveller, by_tour_day)


def _trip(world: _World, traveller: dict, by_tour_day: dict) -> None:
    rng, db = world.rng, world.db
    today = _dt.date.fromisoformat(TODAY)
    taken = [(db["itineraries"][i]["start_date"], db["itineraries"][i]["end_date"]) for i in traveller["itinerary_ids"]]
    for _ in range(20):  # one traveller's trips never overlap
        offset = rng.choice([rng.randrange(-100, -5), rng.randrange(-4, 2), rng.randrange(1, 8), rng.randrange(8, 140)])
        start = min(max(today + _dt.timedelta(days=offset), FIRST_DAY), LAST_DAY - _dt.timedelta(days=12))
        length = rng.randrange(3, 11)
        end = start + _dt.timedelta(days=length)
        if all(_iso(end) < a or b < _iso(start) for a, b in taken):
            break
    else:
        return
    country = rng.choice(sorted({k for _, k in CITIES}))
    cities = [c for c, k in CITIES if k == country]
    route = rng.sample(cities, rng.choice([1, 1, 2]) if len(cities) > 1 else 1)
    iid = world.new_id("IT")
    trip_number = "TRV-" + _unique(rng, world.codes, lambda r: "".join(r.choice(CODE_CHARS) for _ in range(6)))
    status = "completed" if end < today else ("in_progress" if start <= today else "upcoming")
    if status == "upcoming" and rng.random() < 0.05:
        status = "cancelled"
    partner = any(c["relation"] == "partner" for c in traveller["companions"]) and rng.random() < 0.8
    children = sum(c["relation"] == "child" for c in traveller["companions"]) if rng.random() < 0.7 else 0
    party = 1 + partner + children
    minors = any(c["relation"] == "child" and age_on(c["dob"], _iso(start)) < 18 for c in traveller["companions"])
    kind = ("school" if minors else "family") if children else ("couple" if partner else "solo")
    trip = {"itinerary_id": iid, "trip_number": trip_number, "traveller_id": traveller["traveller_id"],
            "name": f"{' and '.join(route)} {rng.choice(TRIP_NAMES[kind])}", "start_date": _iso(start),
            "end_date": _iso(end), "status": status, "travellers": party, "stay_ids": [], "tour_booking_ids": [],
            "car_rental_ids": []}
    db["itineraries"][iid] = trip
    traveller["itinerary_ids"].append(iid)
    cancelled = status == "cancelled"
    legs = [(route[i], start + _dt.timedelta(days=length * i // len(route)),
             start + _dt.timedelta(days=length * (i + 1) // len(route))) for i in range(len(route))]
    card = rng.choice(list(traveller["payment_methods"]))
    for city, check_in, check_out in legs:
        _stay(world, trip, traveller, city, check_in, check_out, party, card, cancelled)
    for _ in range(rng.choice([0, 1, 1, 2])):
        city, a, b = rng.choice(legs)
        day = a + _dt.timedelta(days=rng.randrange(max(1, (b - a).days)))
        tours = [t for t in TOURS if t[2] == city and (t[0], _iso(day)) in by_tour_day
                 and t[0] not in {db["tour_bookings"][b]["tour_code"] for b in trip["tour_booking_ids"]}]
        if tours:
            _tour(world, trip, traveller, by_tour_day[(rng.choice(tours)[0], _iso(day))][0], party, card, cancelled)
    if rng.random() < 0.35:
        _car(world, trip, traveller, legs, party, card, cancelled)


def _redeemable(rng: random.Random, traveller: dict, price: float) -> int:
    """Points a booking may redeem under the policy: whole thousands, worth at most half the price."""
    if rng.random() > 0.2:
        return 0
    cap = min(traveller["loyalty"]["points"], int(price * 0.5 / POINT_VALUE)) // 1000 * 1000
    return rng.choice([p for p in (cap, cap // 2 // 1000 * 1000) if p] or [0])


def _stay(world: _World, trip: dict, traveller: dict, city: str, check_in: _dt.date, check_out: _dt.date,
          party: int, card: str, cancelled: bool) -> None:
    rng, db = world.rng, world.db
    hotels = [h for h in HOTELS if h[2] == city]
    room_type = "suite" if party >= 4 else ("deluxe" if party == 3 else rng.choice(["standard", "standard", "deluxe"]))
    for code, *_ in rng.sample(hotels, len(hotels)):
        hotel = db["hotels"][code]
        room = next(r for r in hotel["rooms"] if r["room_type"] == room_type)
        nights = [_iso(check_in + _dt.timedelta(days=i)) for i in range((check_out - check_in).days)]
        if all(world.nights.get((code, room_type, n), 0) < room["rooms"] for n in nights):
            break
    else:
        return
    plan = "SAVER" if rng.random() < 0.35 else "FLEX"
    rate = _money(room["nightly_rate"] * (1 - db["rate_plans"][plan]["discount"]))
    price = _money(rate * len(nights))
    points = _redeemable(rng, traveller, price)
    traveller["loyalty"]["points"] -= points
    status = "cancelled" if cancelled or (plan == "FLEX" and rng.random() < 0.05) else "confirmed"
    if status == "confirmed":
        for n in nights:
            world.nights[(code, room_type, n)] = world.nights.get((code, room_type, n), 0) + 1
    sid = world.new_id("HS")
    db["stays"][sid] = {"stay_id": sid, "itinerary_id": trip["itinerary_id"], "hotel_code": code, "hotel": hotel["name"],
                        "city": city, "room_type": room_type, "rate_plan": plan, "check_in": _iso(check_in),
                        "check_out": _iso(check_out), "nights": len(nights), "guests": min(party, room["capacity"]),
                        "price": price, "points_used": points, "payment_id": card, "fees": 0, "status": status}
    trip["stay_ids"].append(sid)


def _tour(world: _World, trip: dict, traveller: dict, dep: dict, party: int, card: str, cancelled: bool) -> None:
    rng, db = world.rng, world.db
    if dep["places_left"] < party:
        return
    tour = db["tours"][dep["tour_code"]]
    price = _money(tour["price_per_person"] * party)
    points = _redeemable(rng, traveller, price)
    traveller["loyalty"]["points"] -= points
    status = "cancelled" if cancelled else "confirmed"
    if status == "confirmed":
        dep["places_left"] -= party
    bid = world.new_id("TB")
    db["tour_bookings"][bid] = {"tour_booking_id": bid, "itinerary_id": trip["itinerary_id"],
                                "departure_id": dep["departure_id"], "tour_code": tour["tour_code"], "tour": tour["name"],
                                "city": tour["city"], "date": dep["date"], "start_time": dep["start_time"],
                                "participants": party, "price": price, "points_used": points, "payment_id": card,
                                "status": status}
    trip["tour_booking_ids"].append(bid)


def _car(world: _World, trip: dict, traveller: dict, legs: list, party: int, card: str, cancelled: bool) -> None:
    rng, db = world.rng, world.db
    drivers = [(f"{traveller['name']['first_name']} {traveller['name']['last_name']}", traveller["dob"])]
    drivers += [(c["name"], c["dob"]) for c in traveller["companions"] if c["relation"] == "partner"]
    name, dob = rng.choice(drivers)
    pickup, dropoff = legs[0][1], legs[-1][2]
    age = age_on(dob, _iso(pickup))
    if age < 21:
        return
    classes = [c for c in CARS if c[4] <= age and c[2] >= party]
    if not classes:
        return
    code, _, _, rate, _, one_way_ok = rng.choice(classes)
    one_way = len(legs) > 1 and one_way_ok
    days = (dropoff - pickup).days
    young = YOUNG_DRIVER_FEE * days if age < YOUNG_DRIVER_AGE else 0
    fee = ONE_WAY_FEE if one_way else 0
    rid = world.new_id("CR")
    db["car_rentals"][rid] = {"car_rental_id": rid, "itinerary_id": trip["itinerary_id"], "car_code": code,
                              "pickup_city": legs[0][0], "dropoff_city": legs[-1][0] if one_way else legs[0][0],
                              "pickup_date": _iso(pickup), "dropoff_date": _iso(dropoff), "days": days,
                              "driver_name": name, "driver_age": age, "one_way_fee": fee, "young_driver_fee": young,
                              "price": _money(rate * days + young + fee), "points_used": 0, "payment_id": card,
                              "status": "cancelled" if cancelled else "confirmed"}
    trip["car_rental_ids"].append(rid)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--travellers", type=int, default=500)
    parser.add_argument("--out", type=Path, default=None)
    args = parser.parse_args(argv)
    out = args.out or Path(str(files("tau_emotion.domain_packs.travel") / "data" / "db.json"))
    db = generate(args.seed, args.travellers)
    out.write_text(json.dumps(db, separators=(",", ":"), sort_keys=False) + "\n")
    counts = ", ".join(f"{len(rows)} {name}" for name, rows in db.items())
    print(f"wrote {out} ({out.stat().st_size // 1024} KiB): {counts}")


if __name__ == "__main__":
    main()
