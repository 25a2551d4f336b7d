"""Seeded generator for the airline pack's initial database (`data/db.json`).

Run `python -m tau_emotion.domain_packs.airline.generate_db --seed 0` to rewrite the file.
Only `random.Random(seed)` is used, and every choice is made from ordered lists, so the same
seed always yields a byte-identical file. The clock is frozen at `TODAY` (2024-05-15 15:00 EST):
flight dates before it have landed (or were cancelled), today's flights are flying, landed, on
time or delayed, and later dates are open for booking with seats and prices per cabin.
"""

from __future__ import annotations

import argparse
import json
import math
import random
from datetime import date, datetime, timedelta
from pathlib import Path

from tau_emotion.domain_packs.airline.tools import BAG_FEE, CABINS, FREE_BAGS, ID_CHARS, INSURANCE_PER_PASSENGER, NOW

TODAY = datetime.fromisoformat(NOW)
FIRST_DATE = date(2024, 5, 1)
N_DATES = 30
N_USERS = 500
N_RESERVATIONS = 2000

# code, name, city, state, latitude, longitude
AIRPORTS = [
    ("ATL", "Hartsfield-Jackson Atlanta International", "Atlanta", "GA", 33.64, -84.43),
    ("BOS", "Boston Logan International", "Boston", "MA", 42.36, -71.01),
    ("BWI", "Baltimore/Washington International", "Baltimore", "MD", 39.18, -76.67),
    ("CLT", "Charlotte Douglas International", "Charlotte", "NC", 35.21, -80.94),
    ("DEN", "Denver International", "Denver", "CO", 39.86, -104.67),
    ("DFW", "Dallas/Fort Worth International", "Dallas", "TX", 32.90, -97.04),
    ("DTW", "Detroit Metropolitan Wayne County", "Detroit", "MI", 42.21, -83.35),
    ("EWR", "Newark Liberty International", "Newark", "NJ", 40.69, -74.17),
    ("IAD", "Washington Dulles International", "Washington", "DC", 38.95, -77.46),
    ("IAH", "George Bush Intercontinental", "Houston", "TX", 29.99, -95.34),
    ("JFK", "John F. Kennedy International", "New York", "NY", 40.64, -73.78),
    ("LAS", "Harry Reid International", "Las Vegas", "NV", 36.08, -115.15),
    ("LAX", "Los Angeles International", "Los Angeles", "CA", 33.94, -118.41),
    ("LGA", "LaGuardia", "New York", "NY", 40.78, -73.87),
    ("MCO", "Orlando International", "Orlando", "FL", 28.43, -81.31),
    ("MIA", "Miami International", "Miami", "FL", 25.80, -80.29),
    ("MSP", "Minneapolis-Saint Paul International", "Minneapolis", "MN", 44.88, -93.22),
    ("ORD", "Chicago O'Hare International", "Chicago", "IL", 41.98, -87.90),
    ("PDX", "Portland International", "Portland", "OR", 45.59, -122.60),
    ("PHL", "Philadelphia International", "Philadelphia", "PA", 39.87, -75.24),
    ("PHX", "Phoenix Sky Harbor International", "Phoenix", "AZ", 33.43, -112.01),
    ("SAN", "San Diego International", "San Diego", "CA", 32.73, -117.19),
    ("SEA", "Seattle-Tacoma International", "Seattle", "WA", 47.45, -122.31),
    ("SFO", "San Francisco International", "San Francisco", "CA", 37.62, -122.38),
    ("SLC", "Salt Lake City International", "Salt Lake City", "UT", 40.79, -111.98),
]

# fmt: off
FIRST_NAMES = [
    "Aaliyah", "Aarav", "Abigail", "Adrian", "Aisha", "Alejandro", "Amara", "Amelia", "Anya", "Arjun",
    "Ava", "Benjamin", "Bianca", "Caleb", "Camila", "Chen", "Chloe", "Daniel", "Daria", "Diego",
    "Elena", "Elijah", "Emeka", "Emma", "Ethan", "Fatima", "Felix", "Gabriel", "Grace", "Hana",
    "Hiroshi", "Imani", "Isabella", "Ivan", "Jamal", "Jasmine", "Javier", "Kai", "Keiko", "Leila",
    "Leo", "Liam", "Lucia", "Malik", "Maya", "Mei", "Mateo", "Nadia", "Noah", "Nora",
    "Olivia", "Omar", "Priya", "Rafael", "Ravi", "Rosa", "Samuel", "Sara", "Sofia", "Tariq",
    "Theo", "Valentina", "Wei", "Yara", "Yusuf", "Zara", "Zoe", "Marcus", "Ingrid", "Tomas",
]
LAST_NAMES = [
    "Abbott", "Adeyemi", "Alvarez", "Anderson", "Bauer", "Becker", "Brennan", "Castillo", "Chen", "Cohen",
    "Dubois", "Eriksen", "Fernandes", "Fischer", "Garcia", "Gupta", "Hansen", "Haddad", "Ibrahim", "Ito",
    "Jensen", "Kaur", "Kim", "Kowalski", "Larsen", "Lopez", "Mendoza", "Moreau", "Murphy", "Nakamura",
    "Nguyen", "Novak", "Okafor", "Olsen", "Patel", "Petrov", "Quinn", "Reyes", "Rossi", "Sato",
    "Schmidt", "Silva", "Singh", "Sokolov", "Tanaka", "Torres", "Vargas", "Walsh", "Weber", "Yamamoto",
    "Zhang", "Khan", "Ortiz", "Park", "Romero", "Hughes", "Lindqvist", "Mwangi", "Costa", "Brooks",
]
STREETS = [
    "Maple Avenue", "Oak Street", "Cedar Lane", "Elm Drive", "Pine Road", "Lakeview Terrace", "Hillcrest Way",
    "River Road", "Sunset Boulevard", "Park Place", "Willow Court", "Birch Street", "Chestnut Avenue",
    "Harbor Drive", "Meadow Lane", "Spring Street", "Washington Avenue", "Highland Road", "Forest Way",
    "Cherry Street",
]
CITIES = [
    ("Austin", "TX", "787"), ("Denver", "CO", "802"), ("Seattle", "WA", "981"), ("Boston", "MA", "021"),
    ("Chicago", "IL", "606"), ("Phoenix", "AZ", "850"), ("San Diego", "CA", "921"), ("Portland", "OR", "972"),
    ("Atlanta", "GA", "303"), ("Miami", "FL", "331"), ("Charlotte", "NC", "282"), ("Detroit", "MI", "482"),
    ("Minneapolis", "MN", "554"), ("Philadelphia", "PA", "191"), ("New York", "NY", "100"),
    ("Houston", "TX", "770"), ("Orlando", "FL", "328"), ("Salt Lake City", "UT", "841"),
    ("Las Vegas", "NV", "891"), ("San Francisco", "CA", "941"),
]
# fmt: on
CARD_BRANDS = ["visa", "mastercard", "amex", "discover"]


def _distance_miles(a: tuple, b: tuple) -> float:
    lat1, lon1, lat2, lon2 = map(math.radians, (a[4], a[5], b[4], b[5]))
    h = math.sin((lat2 - lat1) / 2) ** 2 + math.cos(lat1) * math.cos(lat2) * math.sin((lon2 - lon1) / 2) ** 2
    return 3959 * 2 * math.asin(math.sqrt(h))


def _clock(minutes: int) -> str:
    """'HH:MM:SS', with '+1' when the time falls on the next day."""
    day, rest = divmod(minutes, 24 * 60)
    text = f"{rest // 60:02d}:{rest % 60:02d}:00"
    return text + (f"+{day}" if day else "")


def _stamp(day: date, minutes: int) -> str:
    return (datetime(day.year, day.month, day.day) + timedelta(minutes=minutes)).strftime("%Y-%m-%dT%H:%M:%S")


def _dates() -> list[date]:
    return [FIRST_DATE + timedelta(days=i) for i in range(N_DATES)]


def _airports() -> dict:
    return {
        code: {"iata": code, "name": name, "city": city, "state": state}
        for code, name, city, state, _lat, _lon in AIRPORTS
    }


def _flight_dates(rng: random.Random, dep: int, arr: int, base: dict[str, int]) -> dict:
    """Per-date entries for one flight number, shaped by where the date lies relative to TODAY."""
    out = {}
    now = TODAY.hour * 60 + TODAY.minute
    for day in _dates():
        key = day.isoformat()
        if day < TODAY.date():
            if rng.random() < 0.04:
                out[key] = {"status": "cancelled"}
            else:
                delay = rng.choice([0, 0, 0, 5, 10, 15, 30, 45, 90])
                out[key] = {
                    "status": "landed",
                    "actual_departure_time_est": _stamp(day, dep + delay),
                    "actual_arrival_time_est": _stamp(day, arr + delay + rng.choice([-10, -5, 0, 5, 10])),
                }
        elif day == TODAY.date():
            if arr <= now:
                out[key] = {
                    "status": "landed",
                    "actual_departure_time_est": _stamp(day, dep),
                    "actual_arrival_time_est": _stamp(day, arr + rng.choice([-5, 0, 10])),
                }
            elif dep <= now:
                out[key] = {
                    "status": "flying",
                    "actual_departure_time_est": _stamp(day, dep),
                    "estimated_arrival_time_est": _stamp(day, arr),
                }
            else:
                roll = rng.random()
                if roll < 0.06:
                    out[key] = {"status": "cancelled"}
                elif roll < 0.30:
                    delay = rng.choice([45, 60, 90, 120, 180])
                    out[key] = {
                        "status": "delayed",
                        "estimated_departure_time_est": _stamp(day, dep + delay),
                        "estimated_arrival_time_est": _stamp(day, arr + delay),
                    }
                else:
                    out[key] = {
                        "status": "on time",
                        "estimated_departure_time_est": _stamp(day, dep),
                        "estimated_arrival_time_est": _stamp(day, arr),
                    }
        else:
            if rng.random() < 0.03:
                out[key] = {"status": "cancelled"}
                continue
            factor = rng.uniform(0.7, 1.35)
            out[key] = {
                "status": "available",
                "available_seats": {cabin: rng.randint(0, 20) for cabin in CABINS},
                "prices": {cabin: max(35, round(base[cabin] * factor * rng.uniform(0.93, 1.07))) for cabin in CABINS},
            }
    return out


def _flights(rng: random.Random) -> dict:
    pairs = []
    for i, a in enumerate(AIRPORTS):
        for b in AIRPORTS[i + 1 :]:
            miles = _distance_miles(a, b)
            if miles >= 200:
                pairs.append((a, b, miles))
    rng.shuffle(pairs)
    legs = []
    for i, (a, b, miles) in enumerate(pairs[:130]):
        for _ in range(2 if i < 20 else 1):
            legs.append((a, b, miles))
            legs.append((b, a, miles))
    flights = {}
    numbers = rng.sample(range(100, 1000), len(legs))
    for (a, b, miles), number in zip(legs, numbers, strict=True):
        duration = int(round((35 + miles / 7.5) / 5) * 5)
        dep = rng.randrange(5 * 60, 22 * 60, 5)
        arr = dep + duration
        economy = 60 + miles * 0.11
        base = {
            "basic_economy": economy * rng.uniform(0.55, 0.75),
            "economy": economy * rng.uniform(0.95, 1.1),
            "business": economy * rng.uniform(2.4, 3.6),
        }
        code = f"SKY{number}"
        flights[code] = {
            "flight_number": code,
            "origin": a[0],
            "destination": b[0],
            "scheduled_departure_time_est": _clock(dep),
            "scheduled_arrival_time_est": _clock(arr),
            "dates": _flight_dates(rng, dep, arr, base),
            "_base": base,
        }
    return dict(sorted(flights.items()))


def _minutes(clock: str) -> int:
    hms, _, plus = clock.partition("+")
    h, m, _s = (int(x) for x in hms.split(":"))
    return h * 60 + m + 24 * 60 * int(plus or 0)


def _dob(rng: random.Random, lo: int = 1948, hi: int = 2005) -> str:
    return date(rng.randint(lo, hi), rng.randint(1, 12), rng.randint(1, 28)).isoformat()


def _users(rng: random.Random) -> dict:
    users = {}
    used_numbers: set[int] = set()

    def pm_number() -> int:
        while True:
            n = rng.randint(1000000, 9999999)
            if n not in used_numbers:
                used_numbers.add(n)
                return n

    while len(users) < N_USERS:
        first, last = rng.choice(FIRST_NAMES), rng.choice(LAST_NAMES)
        uid = f"{first.lower()}_{last.lower()}_{rng.randint(1000, 9999)}"
        if uid in users:
            continue
        city, state, zip3 = rng.choice(CITIES)
        methods = {}
        n_cards = rng.choices([0, 1, 2], weights=[1, 6, 3])[0]
        n_gift = rng.choices([0, 1, 2], weights=[5, 4, 1])[0] if n_cards else rng.randint(1, 2)
        n_cert = rng.choices([0, 1, 2], weights=[6, 3, 1])[0]
        for _ in range(n_cards):
            pid = f"credit_card_{pm_number()}"
            methods[pid] = {
                "source": "credit_card",
                "id": pid,
                "brand": rng.choice(CARD_BRANDS),
                "last_four": f"{rng.randint(0, 9999):04d}",
            }
        for _ in range(n_gift):
            pid = f"gift_card_{pm_number()}"
            methods[pid] = {"source": "gift_card", "id": pid, "amount": rng.randint(0, 400)}
        for _ in range(n_cert):
            pid = f"certificate_{pm_number()}"
            methods[pid] = {"source": "certificate", "id": pid, "amount": rng.choice([100, 150, 200, 250, 500])}
        saved = []
        for _ in range(rng.choices([0, 1, 2, 3], weights=[3, 4, 2, 1])[0]):
            saved.append(
                {
                    "first_name": rng.choice(FIRST_NAMES),
                    "last_name": rng.choice([last, rng.choice(LAST_NAMES)]),
                    "dob": _dob(rng),
                }
            )
        users[uid] = {
            "user_id": uid,
            "name": {"first_name": first, "last_name": last},
            "address": {
                "address1": f"{rng.randint(1, 9999)} {rng.choice(STREETS)}",
                "address2": rng.choice(["", "", "", f"Apt {rng.randint(1, 40)}", f"Suite {rng.randint(100, 900)}"]),
                "city": city,
                "state": state,
                "zip": f"{zip3}{rng.randint(0, 99):02d}",
                "country": "USA",
            },
            "email": f"{first.lower()}.{last.lower()}{rng.randint(1, 99)}@example.com",
            "dob": _dob(rng, 1950, 2004),
            "membership": rng.choices(["regular", "silver", "gold"], weights=[5, 3, 2])[0],
            "payment_methods": methods,
            "saved_passengers": saved,
            "reservations": [],
        }
    return users


def _itineraries(flights: dict) -> tuple[dict, dict]:
    """Routes as lists of flight-number chains: direct[(o, d)] and onestop[(o, d)]."""
    direct: dict[tuple[str, str], list[list[str]]] = {}
    by_origin: dict[str, list[str]] = {}
    for code, f in flights.items():
        direct.setdefault((f["origin"], f["destination"]), []).append([code])
        by_origin.setdefault(f["origin"], []).append(code)
    onestop: dict[tuple[str, str], list[list[str]]] = {}
    for code, f in flights.items():
        arrive = _minutes(f["scheduled_arrival_time_est"])
        if arrive >= 24 * 60:
            continue
        for nxt in by_origin.get(f["destination"], []):
            g = flights[nxt]
            if g["destination"] != f["origin"] and _minutes(g["scheduled_departure_time_est"]) >= arrive + 60:
                onestop.setdefault((f["origin"], g["destination"]), []).append([code, nxt])
    return direct, onestop


def _leg_price(rng: random.Random, flight: dict, day: str, cabin: str) -> int:
    entry = flight["dates"].get(day, {})
    if "prices" in entry:
        return entry["prices"][cabin]
    return max(35, round(flight["_base"][cabin] * rng.uniform(0.75, 1.3)))


def _reservations(rng: random.Random, users: dict, flights: dict) -> dict:
    direct, onestop = _itineraries(flights)
    direct_keys = sorted(direct)
    onestop_keys = sorted(onestop)
    user_ids = list(users)
    days = _dates()
    reservations: dict[str, dict] = {}
    while len(reservations) < N_RESERVATIONS:
        rid = "".join(rng.choice(ID_CHARS) for _ in range(6))
        if rid in reservations:
            continue
        uid = rng.choice(user_ids)
        user = users[uid]
        round_trip = rng.random() < 0.55
        use_direct = rng.random() < 0.7
        keys, table = (direct_keys, direct) if use_direct else (onestop_keys, onestop)
        origin, destination = rng.choice(keys)
        outbound = rng.choice(table[(origin, destination)])
        back_table = direct if use_direct else onestop
        inbound = None
        if round_trip:
            options = back_table.get((destination, origin)) or direct.get((destination, origin))
            if not options:
                round_trip = False
            else:
                inbound = rng.choice(options)
        stay = rng.randint(1, 6)
        out_day = rng.choice(days[: N_DATES - (stay if round_trip else 0)])
        legs = [(code, out_day) for code in outbound]
        if inbound:
            legs += [(code, out_day + timedelta(days=stay)) for code in inbound]
        cabin = rng.choices(CABINS, weights=[3, 4, 3])[0]
        passengers = []
        n_pax = rng.choices([1, 2, 3, 4], weights=[5, 3, 1, 1])[0]
        if rng.random() < 0.7:
            passengers.append({**user["name"], "dob": user["dob"]})
        candidates = list(user["saved_passengers"])
        while len(passengers) < n_pax:
            if candidates and rng.random() < 0.6:
                passengers.append(dict(candidates.pop(0)))
            else:
                passengers.append(
                    {"first_name": rng.choice(FIRST_NAMES), "last_name": rng.choice(LAST_NAMES), "dob": _dob(rng)}
                )
        flight_rows = [
            {
                "flight_number": code,
                "origin": flights[code]["origin"],
                "destination": flights[code]["destination"],
                "date": day.isoformat(),
                "price": _leg_price(rng, flights[code], day.isoformat(), cabin),
            }
            for code, day in legs
        ]
        first_departure = datetime(out_day.year, out_day.month, out_day.day) + timedelta(
            minutes=_minutes(flights[outbound[0]]["scheduled_departure_time_est"])
        )
        latest = min(first_departure - timedelta(hours=2), TODAY - timedelta(minutes=1))
        if latest > TODAY - timedelta(hours=24) and rng.random() < 0.12:
            earliest = TODAY - timedelta(hours=23)
        else:
            earliest = latest - timedelta(days=45)
            latest = min(latest, TODAY - timedelta(hours=25))
        span = max(0, int((latest - earliest).total_seconds() // 60))
        created = earliest + timedelta(minutes=rng.randint(0, span))
        insurance = "yes" if rng.random() < 0.4 else "no"
        allowance = FREE_BAGS[user["membership"]][cabin] * n_pax
        total_bags = rng.randint(0, allowance + 1) if rng.random() < 0.7 else 0
        nonfree = max(0, total_bags - allowance)
        total = sum(f["price"] for f in flight_rows) * n_pax
        total += INSURANCE_PER_PASSENGER * n_pax * (insurance == "yes") + BAG_FEE * nonfree
        payments = []
        methods = list(user["payment_methods"].values())
        cards = [m for m in methods if m["source"] in ("credit_card", "gift_card")]
        if rng.random() < 0.1 or not cards:
            cert_amount = min(total, rng.choice([100, 150, 200, 250]))
            payments.append({"payment_id": f"certificate_{rng.randint(1000000, 9999999)}", "amount": cert_amount})
            rest = total - cert_amount
            if rest:
                method = rng.choice(cards) if cards else None
                pid = method["id"] if method else f"credit_card_{rng.randint(1000000, 9999999)}"
                payments.append({"payment_id": pid, "amount": rest})
        else:
            payments.append({"payment_id": rng.choice(cards)["id"], "amount": total})
        status = "active"
        if rng.random() < 0.06:
            status = "cancelled"
            payments += [
                {"payment_id": p["payment_id"], "amount": -p["amount"]}
                for p in list(payments)
                if not p["payment_id"].startswith("certificate_")
            ]
        reservations[rid] = {
            "reservation_id": rid,
            "user_id": uid,
            "origin": origin,
            "destination": destination,
            "flight_type": "round_trip" if inbound else "one_way",
            "cabin": cabin,
            "flights": flight_rows,
            "passengers": passengers,
            "payment_history": payments,
            "created_at": created.strftime("%Y-%m-%dT%H:%M:%S"),
            "total_baggages": total_bags,
            "nonfree_baggages": nonfree,
            "insurance": insurance,
            "status": status,
        }
        user["reservations"].append(rid)
    return reservations


def generate(seed: int = 0) -> dict:
    """Build the whole database as {table: {key: row}}."""
    rng = random.Random(seed)
    flights = _flights(rng)
    users = _users(rng)
    reservations = _reservations(rng, users, flights)
    for f in flights.values():
        del f["_base"]
    return {"users": users, "flights": flights, "reservations": reservations, "airports": _airports()}


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description="Regenerate the airline pack's data/db.json.")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", type=Path, default=Path(__file__).parent / "data" / "db.json")
    args = parser.parse_args(argv)
    db = generate(args.seed)
    args.out.write_text(json.dumps(db, separators=(",", ":"), ensure_ascii=False) + "\n", encoding="utf-8")
    sizes = ", ".join(f"{name} {len(rows)}" for name, rows in db.items())
    print(f"wrote {args.out} ({args.out.stat().st_size / 1e6:.2f} MB): {sizes}")


if __name__ == "__main__":
    main()
