"""Seeded generator of the restaurant database (`data/db.json`).

    python -m tau_emotion.domain_packs.restaurant.generate_db --seed 0 [--guests 600] [--out PATH]

The same seed always writes the same bytes. The eight restaurants of the group are fixed; guests,
their cards, bookings (three months of history and two months ahead) and waitlist entries are drawn
around `tools.NOW`, with enough full seatings, large parties with deposits, set-menu pre-orders,
bookings inside the change and cancellation windows and restaurants without step-free access for
every policy rule to matter.
"""

from __future__ import annotations

import argparse
import datetime as _dt
import json
import random
from importlib.resources import files
from pathlib import Path
from typing import Any

from tau_emotion.domain_packs.restaurant.tools import (
    BOOKING_ALPHABET,
    DEPOSIT_ABOVE,
    LATE_FEE_PER_GUEST,
    TODAY,
    WEEKDAYS,
    hours_until,
)

LUNCH, DINNER = ["12:00", "13:30"], ["17:30", "19:00", "20:30"]
RESTAURANTS = [  # code, name, cuisine, neighbourhood, seatings, closed on, tables, step-free, deposit/guest, set menus
    ("R_OLIVA", "Oliva Trattoria", "Italian", "North End", LUNCH + DINNER, ["Monday"],
     {2: 5, 4: 5, 6: 2, 8: 1, 12: 1}, True, 20,
     [("OLIVA_FAMIGLIA", "Famiglia sharing menu", 55, ["vegetarian"]),
      ("OLIVA_TASTING", "Chef's tasting menu", 85, [])]),
    ("R_SAKURA", "Sakura House", "Japanese", "Cambridge", DINNER, ["Tuesday"],
     {2: 6, 4: 4, 6: 2, 10: 1}, True, 25,
     [("SAKURA_OMAKASE", "Omakase", 95, ["dairy_free"]),
      ("SAKURA_IZAKAYA", "Izakaya sharing menu", 60, ["vegetarian", "dairy_free"])]),
    ("R_EMBER", "Ember & Oak", "Steakhouse", "Back Bay", DINNER, ["Sunday"],
     {2: 4, 4: 6, 6: 3, 8: 2, 14: 1}, True, 30,
     [("EMBER_CLASSIC", "Classic steak dinner", 70, ["gluten_free"]),
      ("EMBER_FEAST", "Butcher's feast", 90, ["gluten_free"])]),
    ("R_VERDE", "Casa Verde", "Mexican", "Somerville", LUNCH + DINNER, [],
     {2: 4, 4: 6, 6: 2, 8: 1}, False, 15,
     [("VERDE_FIESTA", "Fiesta sharing menu", 45, ["gluten_free"]),
      ("VERDE_HUERTA", "Huerta vegetarian menu", 40, ["vegetarian", "vegan", "gluten_free"])]),
    ("R_LOTUS", "Lotus Garden", "Thai", "Brookline", LUNCH + DINNER, ["Monday"],
     {2: 6, 4: 5, 6: 2, 10: 1}, True, 15,
     [("LOTUS_BANQUET", "Royal banquet", 50, ["dairy_free"]),
      ("LOTUS_GREEN", "Green garden menu", 45, ["vegetarian", "vegan", "dairy_free"])]),
    ("R_BISTRO", "Le Petit Bistro", "French", "Beacon Hill", DINNER, ["Sunday", "Monday"],
     {2: 6, 4: 3, 6: 1, 8: 1}, False, 25,
     [("BISTRO_PRIX_FIXE", "Prix fixe", 65, []),
      ("BISTRO_DEGUSTATION", "Degustation menu", 110, [])]),
    ("R_SPICE", "Spice Route", "Indian", "Central Square", LUNCH + DINNER, [],
     {2: 4, 4: 6, 6: 3, 8: 1, 12: 1}, True, 15,
     [("SPICE_THALI", "Royal thali", 42, ["vegetarian", "halal"]),
      ("SPICE_FEAST", "Maharaja feast", 58, ["halal"])]),
    ("R_HARBOR", "Harbor Oyster Bar", "Seafood", "Seaport", LUNCH + DINNER, ["Tuesday"],
     {2: 5, 4: 5, 6: 2, 10: 1}, True, 25,
     [("HARBOR_RAW_BAR", "Raw bar tasting", 75, ["gluten_free"]),
      ("HARBOR_CLAMBAKE", "New England clambake", 68, ["gluten_free"])]),
]
FIRST = ["Aisha", "Ben", "Carla", "Diego", "Elena", "Farid", "Grace", "Hiro", "Ines", "Jonas", "Kemal", "Lena",
         "Marco", "Nadia", "Omar", "Priya", "Quinn", "Rosa", "Samir", "Tara", "Umar", "Vera", "Wen", "Ximena",
         "Yusuf", "Zoe", "Amara", "Bruno", "Chloe", "Dev", "Esme", "Felix", "Gita", "Hugo", "Ivy", "Jamal", "Kira",
         "Liam", "Maya", "Noah", "Olga", "Pablo", "Rhea", "Sven", "Tomas", "Uma", "Viktor", "Wanda", "Yara", "Zane",
         "Anika", "Caleb", "Daria", "Emil", "Fatima", "Gabriel", "Hana", "Isaac", "Julia", "Kofi"]
LAST = ["Abbott", "Banerjee", "Castro", "Dubois", "Eriksen", "Fischer", "Garcia", "Haddad", "Ito", "Jensen",
        "Kowalski", "Lindqvist", "Moreau", "Nakamura", "Okafor", "Petrov", "Quintero", "Rossi", "Schmidt", "Tanaka",
        "Ueda", "Varga", "Walsh", "Xu", "Yilmaz", "Zimmer", "Alvarez", "Brennan", "Costa", "Dias", "Evans", "Ferro",
        "Gupta", "Hughes", "Iqbal", "Kim", "Lopez", "Murphy", "Novak", "Olsen", "Park", "Reyes", "Sato", "Thompson"]
AREAS = ["617", "857", "781", "339"]
BRANDS = ["visa", "mastercard", "amex", "discover"]
DIETARY = ["vegetarian", "vegan", "gluten_free", "dairy_free", "nut_allergy", "shellfish_allergy", "halal", "kosher"]
HISTORY_START, HORIZON_END = "2025-03-01", "2025-08-12"
FULL_DATES = (TODAY, "2025-06-14", "2025-06-20", "2025-06-21")  # their 19:00 seatings are fully booked everywhere


def _unique(rng: random.Random, used: set[str], make: Any) -> str:
    while True:
        value = make(rng)
        if value not in used:
            used.add(value)
            return value


def _occupancy(date: _dt.date, time: str) -> float:
    """The share of a seating's tables booked: busy weekends and dinners, fading with the days ahead."""
    weekday = WEEKDAYS[date.weekday()]
    weekend = weekday in ("Friday", "Saturday")
    base = (0.92 if time == "19:00" else 0.65) if weekend and time in DINNER else (0.35 if time in DINNER else 0.2)
    ahead = (date - _dt.date.fromisoformat(TODAY)).days
    if ahead < 0:
        return base * 0.12  # the history keeps only a sample of past visits
    fade = 1.0 if ahead <= 8 else 0.6 if ahead <= 16 else 0.25 if ahead <= 30 else 0.07
    return base * fade


def _party_for(rng: random.Random, table: int) -> int:
    if table == 2:
        return rng.choice([1, 2, 2, 2])
    if table == 4:
        return rng.choice([3, 4, 4])
    if table == 6:
        return rng.choice([5, 6, 6])
    if table == 8:
        return rng.choice([7, 8, 8])
    return rng.choice([8, 9, 10, 10])


def generate(seed: int = 0, guests: int = 600) -> dict[str, Any]:
    rng = random.Random(seed)
    db: dict[str, Any] = {"restaurants": {}, "guests": {}, "bookings": {}, "waitlist": {}}
    for code, name, cuisine, area, seatings, closed, tables, step_free, deposit, menus in RESTAURANTS:
        db["restaurants"][code] = {
            "restaurant_code": code, "name": name, "cuisine": cuisine, "neighbourhood": area, "seatings": seatings,
            "closed_on": closed, "tables": {str(size): n for size, n in tables.items()},
            "step_free_access": step_free, "deposit_per_guest": deposit,
            "set_menus": [{"set_menu_code": c, "name": n, "price_per_guest": p, "suitable_for": s}
                          for c, n, p, s in menus]}
    ids: set[str] = set()
    phones: set[str] = set()
    for _ in range(guests):
        gid = _unique(rng, ids, lambda r: f"G{r.randrange(100000, 1000000)}")
        first, last = rng.choice(FIRST), rng.choice(LAST)
        cards = {}
        for _ in range(rng.choice([1, 1, 2, 2, 3])):
            cid = _unique(rng, ids, lambda r: f"card_{r.randrange(1000000, 10000000)}")
            cards[cid] = {"card_id": cid, "brand": rng.choice(BRANDS), "last_four": f"{rng.randrange(10000):04d}"}
        db["guests"][gid] = {
            "guest_id": gid, "first_name": first, "last_name": last,
            "phone_number": _unique(rng, phones, lambda r: f"{r.choice(AREAS)}-555-{r.randrange(10000):04d}"),
            "email": f"{first.lower()}.{last.lower()}{rng.randrange(100)}@example.com",
            "member_since": f"{rng.randrange(2016, 2025)}-{rng.randrange(1, 13):02d}-01",
            "dietary_profile": sorted(rng.sample(DIETARY, 1)) if rng.random() < 0.2 else [],
            "cards": cards, "booking_ids": [], "waitlist_ids": []}
    _bookings(rng, db, ids)
    return db


def _bookings(rng: random.Random, db: dict[str, Any], ids: set[str]) -> None:
    guest_ids = list(db["guests"])
    busy: set[tuple[str, str]] = set()  # (guest, date) with a confirmed or completed booking
    numbers: set[str] = set()
    day = _dt.date.fromisoformat(HISTORY_START)
    end = _dt.date.fromisoformat(HORIZON_END)
    while day <= end:
        date = day.isoformat()
        for restaurant in db["restaurants"].values():
            if WEEKDAYS[day.weekday()] in restaurant["closed_on"]:
                continue
            for time in restaurant["seatings"]:
                tables = [int(s) for s, n in restaurant["tables"].items() for _ in range(n)]
                share = _occupancy(day, time)
                taken = [t for t in tables if rng.random() < share]
                if time == "19:00" and date in FULL_DATES:
                    taken = tables
                for table in taken:
                    gid = next((g for g in (rng.choice(guest_ids) for _ in range(20)) if (g, date) not in busy), None)
                    if gid is None:
                        continue
                    busy.add((gid, date))
                    _booking(rng, db, ids, numbers, gid, restaurant, date, time, table)
                if time == "19:00" and len(taken) == len(tables) and date >= TODAY:
                    _waitlist(rng, db, ids, guest_ids, restaurant, date, time)
        day += _dt.timedelta(days=1)


def _booking(rng: random.Random, db: dict, ids: set[str], numbers: set[str], gid: str, restaurant: dict, date: str,
             time: str, table: int) -> None:
    guest = db["guests"][gid]
    bid = _unique(rng, ids, lambda r: f"BK{r.randrange(100000, 1000000)}")
    number = _unique(rng, numbers, lambda r: "".join(r.choice(BOOKING_ALPHABET) for _ in range(6)))
    party = _party_for(rng, table)
    past = hours_until(date, time) <= 0
    status = "confirmed"
    if past:
        status = rng.choices(["completed", "no_show", "cancelled"], [86, 4, 10])[0]
    elif rng.random() < 0.04:
        status = "cancelled"
    menus = restaurant["set_menus"]
    set_menu = rng.choice(menus)["set_menu_code"] if party > 8 or rng.random() < 0.12 else None
    dietary = list(guest["dietary_profile"])
    if rng.random() < 0.15:
        dietary = sorted(set(dietary) | {rng.choice(DIETARY)})
    access = []
    if rng.random() < 0.08:
        access = [rng.choice(["wheelchair", "ground_floor"] if restaurant["step_free_access"] else ["high_chair"])]
    elif rng.random() < 0.06:
        access = [rng.choice(["high_chair", "quiet_table"])]
    deposit = restaurant["deposit_per_guest"] * party if party > DEPOSIT_ABOVE else 0
    created = _dt.date.fromisoformat(date) - _dt.timedelta(days=rng.randrange(1, 40))
    charges = [{"kind": "deposit", "amount": deposit, "date": created.isoformat()}] if deposit else []
    if status == "no_show" and not deposit:
        charges.append({"kind": "no_show_fee", "amount": LATE_FEE_PER_GUEST * party, "date": date})
    if status == "cancelled" and deposit:
        charges.append({"kind": "deposit_refund", "amount": deposit, "date": min(date, TODAY)})
        deposit = 0
    db["bookings"][bid] = {
        "booking_id": bid, "booking_number": number, "guest_id": gid, "restaurant_code": restaurant["restaurant_code"],
        "date": date, "time": time, "party_size": party, "table_size": table, "status": status,
        "set_menu_code": set_menu, "dietary_requirements": dietary, "accessibility_requests": access,
        "card_id": rng.choice(list(guest["cards"])), "deposit": deposit, "charges": charges,
        "created_on": min(created.isoformat(), TODAY)}
    guest["booking_ids"].append(bid)


def _waitlist(rng: random.Random, db: dict, ids: set[str], guest_ids: list[str], restaurant: dict, date: str,
              time: str) -> None:
    for position in range(1, rng.choice([2, 3, 4]) + 1):
        gid = rng.choice(guest_ids)
        wid = _unique(rng, ids, lambda r: f"WL{r.randrange(100000, 1000000)}")
        db["waitlist"][wid] = {"waitlist_id": wid, "guest_id": gid, "restaurant_code": restaurant["restaurant_code"],
                               "date": date, "time": time, "party_size": rng.choice([2, 2, 3, 4, 4, 6]),
                               "position": position, "status": "waiting",
                               "created_on": (_dt.date.fromisoformat(date) - _dt.timedelta(days=rng.randrange(1, 6))
                                              ).isoformat() if date > TODAY else TODAY}
        db["guests"][gid]["waitlist_ids"].append(wid)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--guests", type=int, default=600)
    parser.add_argument("--out", type=Path, default=None)
    args = parser.parse_args(argv)
    out = args.out or Path(str(files("tau_emotion.domain_packs.restaurant") / "data" / "db.json"))
    db = generate(args.seed, args.guests)
    out.write_text(json.dumps(db, separators=(",", ":"), sort_keys=False) + "\n")
    counts = ", ".join(f"{len(rows)} {name}" for name, rows in db.items())
    print(f"wrote {out} ({out.stat().st_size // 1024} KiB): {counts}")


if __name__ == "__main__":
    main()
