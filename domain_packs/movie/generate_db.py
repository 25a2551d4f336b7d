"""Seeded generator of the movie database (`data/db.json`).

    python -m tau_emotion.domain_packs.movie.generate_db --seed 0 [--customers 600] [--out PATH]

The same seed always writes the same bytes. The catalogue (films, theatres and screens, ticket
prices by format, concessions, membership tiers) is fixed; showtimes (June 10-21, 2025, around
`tools.NOW`), customers, memberships and bookings are drawn, with enough started showtimes, R-rated
films, IMAX and 3D showings, exchanged bookings, group bookings, paused memberships and tiers changed
this month for every policy rule to matter. The database obeys its own policy.
"""

from __future__ import annotations

import argparse
import datetime as _dt
import json
import random
from importlib.resources import files
from pathlib import Path
from typing import Any

from tau_emotion.domain_packs.movie.tools import CODE_CHARS, GROUP_DISCOUNT, GROUP_SIZE, NOW, screen_seats

FILMS = [  # code, title, rating, runtime minutes, genre
    ("FLM_ORBIT", "Orbit of Ash", "PG-13", 142, "science fiction"),
    ("FLM_PAWS", "Paws and Whiskers", "G", 94, "animation"),
    ("FLM_NIGHTDESK", "The Night Desk", "R", 118, "thriller"),
    ("FLM_SUMMERLAKE", "Summer at Willow Lake", "PG", 105, "family"),
    ("FLM_IRONTIDE", "Iron Tide", "PG-13", 131, "action"),
    ("FLM_HOLLOW", "Hollow Creek", "R", 101, "horror"),
    ("FLM_LASTWALTZ", "The Last Waltz in Lisbon", "PG-13", 124, "romance"),
    ("FLM_DRAGONKITE", "Dragon Kite", "PG", 98, "animation"),
    ("FLM_REDLEDGER", "Red Ledger", "R", 137, "crime"),
    ("FLM_AFTERGLOW", "Afterglow", "NC-17", 112, "drama"),
    ("FLM_BIGSHOT", "Big Shot", "PG-13", 109, "comedy"),
    ("FLM_STARFALL", "Starfall Academy", "PG", 116, "adventure"),
    ("FLM_DEEPQUIET", "The Deep Quiet", "PG-13", 127, "documentary"),
    ("FLM_NEONHEIST", "Neon Heist", "R", 121, "action"),
]
THEATRES = [  # code, name, city, screens (screen, format, rows, seats per row)
    ("TH_HARBOR", "Harbor Point Cinemas", "Seattle",
     [("1", "imax", 12, 16), ("2", "3d", 10, 14), ("3", "standard", 9, 12), ("4", "standard", 8, 10)]),
    ("TH_MIDTOWN", "Midtown Picture House", "Seattle",
     [("1", "standard", 10, 14), ("2", "3d", 9, 12), ("3", "standard", 8, 12), ("4", "standard", 7, 10)]),
    ("TH_RIVERSIDE", "Riverside Screens", "Tacoma",
     [("1", "imax", 11, 16), ("2", "standard", 10, 12), ("3", "standard", 8, 10), ("4", "3d", 8, 12)]),
    ("TH_NORTHGATE", "Northgate Stadium 4", "Everett",
     [("1", "standard", 10, 14), ("2", "standard", 9, 12), ("3", "3d", 9, 12), ("4", "standard", 7, 10)]),
]
FORMATS = [  # format, adult, child, senior
    ("standard", 15, 10, 11),
    ("3d", 18, 13, 14),
    ("imax", 21, 16, 17),
]
CONCESSIONS = [  # code, name, price
    ("CON_POPCORN_S", "Small popcorn", 6),
    ("CON_POPCORN_L", "Large popcorn", 9),
    ("CON_SODA_M", "Medium soda", 5),
    ("CON_SODA_L", "Large soda", 6.5),
    ("CON_NACHOS", "Nachos with cheese", 8),
    ("CON_HOTDOG", "Hot dog", 7),
    ("CON_CANDY", "Candy box", 4.5),
    ("CON_WATER", "Bottled water", 3),
    ("CON_COMBO", "Combo: large popcorn and two medium sodas", 17),
]
TIERS = [  # code, name, monthly fee, monthly credits, credits per showtime, concession discount
    ("TIER_STANDARD", "Standard", 12, 2, 1, 0.1),
    ("TIER_PREMIUM", "Premium", 22, 4, 2, 0.2),
]
DAYS = [(_dt.date(2025, 6, 10) + _dt.timedelta(days=i)).isoformat() for i in range(12)]
SLOTS = ["12:10", "13:00", "15:40", "16:30", "19:00", "19:45", "21:50", "22:15"]
FIRST = ["Aisha", "Ben", "Carla", "Diego", "Elena", "Farid", "Grace", "Hiro", "Ines", "Jonas", "Kemal", "Lena",
         "Marco", "Nadia", "Omar", "Priya", "Quinn", "Rosa", "Samir", "Tara", "Umar", "Vera", "Wen", "Ximena",
         "Yusuf", "Zoe", "Amara", "Bruno", "Chloe", "Dev", "Esme", "Felix", "Gita", "Hugo", "Ivy", "Jamal", "Kira",
         "Liam", "Maya", "Noah", "Olga", "Pablo", "Rhea", "Sven", "Tomas", "Uma", "Viktor", "Wanda", "Yara", "Zane"]
LAST = ["Abbott", "Banerjee", "Castro", "Dubois", "Eriksen", "Fischer", "Garcia", "Haddad", "Ito", "Jensen",
        "Kowalski", "Lindqvist", "Moreau", "Nakamura", "Okafor", "Petrov", "Quintero", "Rossi", "Schmidt", "Tanaka",
        "Ueda", "Varga", "Walsh", "Xu", "Yilmaz", "Zimmer", "Alvarez", "Brennan", "Costa", "Dias", "Evans", "Ferro",
        "Gupta", "Hughes", "Iqbal", "Kim", "Lopez", "Murphy", "Novak", "Olsen"]
BRANDS = ["visa", "mastercard", "amex", "discover"]


def _unique(rng: random.Random, used: set[str], make: Any) -> str:
    while True:
        value = make(rng)
        if value not in used:
            used.add(value)
            return value


def _money(value: float) -> float | int:
    value = round(value + 0.0, 2)
    return int(value) if value == int(value) else value


def generate(seed: int = 0, customers: int = 600) -> dict[str, Any]:
    rng = random.Random(seed)
    db: dict[str, Any] = {
        "films": {c: {"film_code": c, "title": t, "rating": r, "runtime_minutes": m, "genre": g}
                  for c, t, r, m, g in FILMS},
        "theatres": {c: {"theatre_code": c, "name": n, "city": city,
                         "screens": [{"screen": s, "format": f, "rows": r, "seats_per_row": p} for s, f, r, p in scr]}
                     for c, n, city, scr in THEATRES},
        "formats": {f: {"format": f, "adult": a, "child": ch, "senior": s} for f, a, ch, s in FORMATS},
        "concessions": {c: {"item_code": c, "name": n, "price": p} for c, n, p in CONCESSIONS},
        "tiers": {c: {"tier_code": c, "name": n, "monthly_fee": fee, "monthly_credits": mc,
                      "credits_per_showtime": cap, "concession_discount": d} for c, n, fee, mc, cap, d in TIERS},
        "showtimes": {}, "customers": {}, "memberships": {}, "bookings": {},
    }
    ids: set[str] = set()
    for day in DAYS:
        for code, _, _, screens in THEATRES:
            for screen, fmt, _, _ in screens:
                for slot in sorted(rng.sample(SLOTS, 3)):
                    sid = _unique(rng, ids, lambda r: f"S{r.randrange(100000, 1000000)}")
                    film = rng.choice([f for f in FILMS if fmt == "standard" or f[2] != "NC-17"])[0]
                    db["showtimes"][sid] = {"showtime_id": sid, "film_code": film, "theatre_code": code,
                                            "screen": screen, "format": fmt, "start": f"{day}T{slot}", "taken": []}
    shows = list(db["showtimes"].values())
    seats_of = {s["showtime_id"]: screen_seats(db["theatres"][s["theatre_code"]], s["screen"]) for s in shows}
    codes: set[str] = set()
    emails: set[str] = set()
    for _ in range(customers):
        _customer(rng, db, ids, emails, codes, shows, seats_of)
    for show in shows:  # walk-in and box-office sales fill the rest, some showtimes almost sold out
        seats = seats_of[show["showtime_id"]]
        free = [s for s in seats if s not in set(show["taken"])]
        share = rng.choice([0.1, 0.25, 0.4, 0.55, 0.7, 0.85, 0.97])
        extra = max(0, int(len(seats) * share) - len(show["taken"]))
        show["taken"] = sorted([*show["taken"], *rng.sample(free, min(extra, len(free)))])
    return db


def _customer(rng: random.Random, db: dict, ids: set[str], emails: set[str], codes: set[str], shows: list[dict],
              seats_of: dict[str, list[str]]) -> None:
    cid = _unique(rng, ids, lambda r: f"CU{r.randrange(100000, 1000000)}")
    first, last = rng.choice(FIRST), rng.choice(LAST)
    email = _unique(rng, emails, lambda r: f"{first.lower()}.{last.lower()}{r.randrange(100)}@example.com")
    methods: dict[str, dict] = {}
    for _ in range(rng.choice([1, 1, 2, 2, 3])):
        if rng.random() < 0.75:
            pid = _unique(rng, ids, lambda r: f"card_{r.randrange(1000000, 10000000)}")
            methods[pid] = {"payment_id": pid, "source": "credit_card", "brand": rng.choice(BRANDS),
                            "last_four": f"{rng.randrange(10000):04d}"}
        else:
            pid = _unique(rng, ids, lambda r: f"gift_{r.randrange(1000000, 10000000)}")
            methods[pid] = {"payment_id": pid, "source": "gift_card", "balance": rng.choice([5, 12.5, 25, 40, 60, 100]),
                            "last_four": f"{rng.randrange(10000):04d}"}
    customer = {"customer_id": cid, "name": {"first_name": first, "last_name": last}, "email": email,
                "phone": f"206-555-{rng.randrange(10000):04d}",
                "dob": f"{rng.randrange(1945, 2006)}-{rng.randrange(1, 13):02d}-{rng.randrange(1, 29):02d}",
                "payment_methods": methods, "membership_id": None, "booking_ids": []}
    db["customers"][cid] = customer
    membership = None
    if rng.random() < 0.35:
        mid = _unique(rng, ids, lambda r: f"MB{r.randrange(100000, 1000000)}")
        tier = rng.choice(["TIER_STANDARD", "TIER_STANDARD", "TIER_PREMIUM"])
        changed = (f"2025-06-{rng.randrange(1, 14):02d}" if rng.random() < 0.2 else
                   f"{rng.choice(['2024', '2025'])}-0{rng.randrange(1, 6)}-{rng.randrange(1, 29):02d}")
        membership = {"membership_id": mid, "member_number": f"CM-{rng.randrange(100000, 1000000)}",
                      "customer_id": cid, "tier_code": tier,
                      "status": "paused" if rng.random() < 0.12 else "active",
                      "credits_left": db["tiers"][tier]["monthly_credits"], "credits_used_this_month": 0,
                      "joined_on": f"{rng.randrange(2021, 2025)}-{rng.randrange(1, 13):02d}-{rng.randrange(1, 29):02d}",
                      "renews_on": f"2025-07-{rng.randrange(1, 29):02d}", "tier_changed_on": changed}
        db["memberships"][mid] = membership
        customer["membership_id"] = mid
    for _ in range(rng.choice([1, 2, 3, 3, 4, 5, 6])):
        _booking(rng, db, customer, membership, ids, codes, shows, seats_of)


def _booking(rng: random.Random, db: dict, customer: dict, membership: dict | None, ids: set[str], codes: set[str],
             shows: list[dict], seats_of: dict[str, list[str]]) -> None:
    show = rng.choice(shows)
    film = db["films"][show["film_code"]]
    group = rng.random() < 0.05
    n = rng.randrange(GROUP_SIZE, 17) if group else rng.choice([1, 2, 2, 2, 3, 4, 4, 5])
    if film["rating"] in ("R", "NC-17"):
        types = ["adult" if rng.random() < 0.85 else "senior" for _ in range(n)]
    else:
        types = ["adult", *[rng.choice(["adult", "child", "child", "senior"]) for _ in range(n - 1)]]
    taken = set(show["taken"])
    layout = seats_of[show["showtime_id"]]
    rows = sorted({s[0] for s in layout})
    seats: list[str] = []
    for row in rng.sample(rows, len(rows)):
        free = [s for s in layout if s[0] == row and s not in taken]
        if len(free) >= n:
            start = rng.randrange(len(free) - n + 1)
            seats = free[start:start + n]
            break
    if not seats:
        return
    prices = db["formats"][show["format"]]
    factor = 1 - GROUP_DISCOUNT if group else 1
    credits = 0
    if (membership and membership["status"] == "active" and not group and show["format"] == "standard"
            and membership["credits_left"] and rng.random() < 0.6):
        cap = db["tiers"][membership["tier_code"]]["credits_per_showtime"]
        credits = min(cap, n, membership["credits_left"])
        membership["credits_left"] -= credits
        membership["credits_used_this_month"] += credits
    credited = set(sorted(range(n), key=lambda i: -prices[types[i]])[:credits])  # the dearest, as the tool does
    tickets = [{"seat": s, "type": t, "price": 0 if i in credited else _money(prices[t] * factor),
                "paid_with": "credit" if i in credited else "card"} for i, (s, t) in enumerate(zip(seats, types, strict=True))]
    concessions = []
    discount = db["tiers"][membership["tier_code"]]["concession_discount"] if (
        membership and membership["status"] == "active") else 0
    for _ in range(rng.choice([0, 0, 0, 1, 1, 2])):
        item = db["concessions"][rng.choice(list(db["concessions"]))]
        qty = rng.choice([1, 1, 2])
        concessions.append({"item_code": item["item_code"], "name": item["name"], "quantity": qty,
                            "price": _money(item["price"] * qty * (1 - discount))})
    payment = rng.choice([p for p, m in customer["payment_methods"].items() if m["source"] == "credit_card"]
                         or list(customer["payment_methods"]))
    start = _dt.datetime.fromisoformat(show["start"])
    booked = min(start - _dt.timedelta(hours=rng.randrange(2, 200)), _dt.datetime.fromisoformat(NOW)
                 - _dt.timedelta(hours=rng.randrange(1, 48)))
    refunded = rng.random() < 0.07 and not credits
    exchanged = 1 if rng.random() < 0.12 else 0
    total = _money(sum(t["price"] for t in tickets) + sum(c["price"] for c in concessions)
                   + (0 if membership and membership["status"] == "active" else 2 * n * exchanged))
    bid = _unique(rng, ids, lambda r: f"BK{r.randrange(100000, 1000000)}")
    code = _unique(rng, codes, lambda r: "".join(r.choice(CODE_CHARS) for _ in range(6)))
    db["bookings"][bid] = {"booking_id": bid, "confirmation_code": code, "customer_id": customer["customer_id"],
                           "showtime_id": show["showtime_id"], "tickets": tickets, "concessions": concessions,
                           "payment_id": payment, "total": total, "status": "refunded" if refunded else "confirmed",
                           "exchanges": exchanged, "booked_at": booked.isoformat(timespec="minutes")}
    customer["booking_ids"].append(bid)
    if not refunded:
        show["taken"] = sorted([*show["taken"], *seats])


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--customers", type=int, default=600)
    parser.add_argument("--out", type=Path, default=None)
    args = parser.parse_args(argv)
    out = args.out or Path(str(files("tau_emotion.domain_packs.movie") / "data" / "db.json"))
    db = generate(args.seed, args.customers)
    out.write_text(json.dumps(db, separators=(",", ":"), sort_keys=False) + "\n")
    counts = ", ".join(f"{len(rows)} {name}" for name, rows in db.items())
    print(f"wrote {out} ({out.stat().st_size // 1024} KiB): {counts}")


if __name__ == "__main__":
    main()
