"""Seeded generator of the basketball database (`data/db.json`).

    python -m tau_emotion.domain_packs.basketball.generate_db --seed 0 [--fans 600] [--out PATH]

The same seed always writes the same bytes. The catalogue (sections, game pricing tiers, the 41
home games of the 2025-26 season, membership tiers, youth programs, shop items) is fixed; fans,
season memberships, youth players and registrations, ticket orders and shop orders are drawn
around `tools.TODAY`, with enough games today and tomorrow, transferred and listed orders, members
behind on payments or already relocated, players without waivers or near an age boundary, programs
about to start or already running, and old or final-sale shop orders for every policy rule to
matter. The database obeys its own policy.
"""

from __future__ import annotations

import argparse
import datetime as _dt
import json
import random
from importlib.resources import files
from pathlib import Path
from typing import Any

from tau_emotion.domain_packs.basketball.tools import SEATS_PER_ROW, TODAY, age_on, days_until

SECTIONS = [  # code, name, level, base price per game, capacity per game
    ("SEC_COURTSIDE", "Courtside", "courtside", 260, 40),
    ("SEC_LOWER_101", "Lower 101 (baseline)", "lower", 85, 300),
    ("SEC_LOWER_102", "Lower 102 (center)", "lower", 115, 300),
    ("SEC_LOWER_103", "Lower 103 (center)", "lower", 115, 300),
    ("SEC_LOWER_104", "Lower 104 (baseline)", "lower", 85, 300),
    ("SEC_UPPER_201", "Upper 201", "upper", 35, 500),
    ("SEC_UPPER_202", "Upper 202 (center)", "upper", 48, 500),
    ("SEC_UPPER_203", "Upper 203", "upper", 35, 500),
]
GAME_TIERS = [("regular", 1.0), ("premium", 1.25), ("rivalry", 1.5)]
OPPONENTS = [  # code, name, tier
    ("DEN", "Denver Summit", "regular"), ("POR", "Portland Pines", "rivalry"), ("SAC", "Sacramento Kings of Clay", "regular"),
    ("PHX", "Phoenix Firebirds", "premium"), ("LAX", "Los Angeles Stars", "premium"), ("SLC", "Salt Lake Peaks", "regular"),
    ("ANC", "Anchorage Aurora", "regular"), ("BOI", "Boise Broncs", "regular"), ("SFO", "San Francisco Fog", "premium"),
    ("VAN", "Vancouver Orcas", "rivalry"), ("OKC", "Oklahoma Storm", "regular"), ("DAL", "Dallas Drillers", "premium"),
    ("MIN", "Minneapolis Lakers of Ice", "regular"), ("CHI", "Chicago Winds", "premium"),
]
MEMBERSHIP_TIERS = [  # code, name, levels a seat may be in, guest passes
    ("TIER_COURTSIDE", "Courtside Club", ["courtside", "lower"], 8),
    ("TIER_LOWER", "Lower Bowl", ["lower"], 4),
    ("TIER_UPPER", "Upper Bowl", ["upper"], 2),
]
PROGRAMS = [  # code, name, kind, min age, max age, start, end, fee, capacity
    ("CAMP_FALL_SKILLS", "Fall skills academy", "camp", 9, 14, "2025-11-01", "2025-12-13", 240, 40),
    ("CAMP_THANKS_MINI", "Thanksgiving mini camp", "camp", 6, 10, "2025-11-14", "2025-11-15", 95, 30),
    ("CLINIC_SHOOTING", "Saturday shooting clinic", "camp", 9, 15, "2025-11-22", "2025-11-22", 45, 36),
    ("CAMP_HOLIDAY_U12", "Holiday camp (ages 8-12)", "camp", 8, 12, "2025-12-22", "2025-12-24", 180, 60),
    ("CAMP_HOLIDAY_TEEN", "Holiday camp (ages 13-17)", "camp", 13, 17, "2025-12-27", "2025-12-29", 195, 48),
    ("LEAGUE_WINTER_U10", "Winter league U10", "league", 7, 10, "2026-01-10", "2026-03-14", 160, 80),
    ("LEAGUE_WINTER_U12", "Winter league U12", "league", 11, 12, "2026-01-10", "2026-03-14", 170, 64),
    ("LEAGUE_WINTER_U14", "Winter league U14", "league", 13, 14, "2026-01-11", "2026-03-15", 180, 64),
    ("LEAGUE_WINTER_U17", "Winter league U17", "league", 15, 17, "2026-01-11", "2026-03-15", 190, 48),
    ("CAMP_SPRING_U12", "Spring break camp (ages 8-12)", "camp", 8, 12, "2026-04-06", "2026-04-10", 260, 60),
    ("CAMP_SPRING_TEEN", "Spring break camp (ages 13-17)", "camp", 13, 17, "2026-04-06", "2026-04-10", 275, 40),
]
MERCH = [  # sku, name, price, final sale
    ("SKU_HOME_JERSEY", "Home jersey", 110, False), ("SKU_AWAY_JERSEY", "Away jersey", 110, False),
    ("SKU_HOODIE", "Herons hoodie", 70, False), ("SKU_CAP", "Snapback cap", 32, False),
    ("SKU_SCARF", "Knit scarf", 25, False), ("SKU_MINI_BALL", "Mini basketball", 20, False),
    ("SKU_KIDS_TEE", "Kids tee", 24, False), ("SKU_MUG", "Arena mug", 16, False),
    ("SKU_WORN_SHOES", "Game-worn shoes", 450, True), ("SKU_SIGNED_BALL", "Signed team ball", 280, True),
    ("SKU_CLEARANCE_TEE", "Last season tee (clearance)", 12, True),
]
FIRST = ["Aisha", "Ben", "Carla", "Diego", "Elena", "Farid", "Grace", "Hiro", "Ines", "Jonas", "Kemal", "Lena",
         "Marco", "Nadia", "Omar", "Priya", "Quinn", "Rosa", "Samir", "Tara", "Umar", "Vera", "Wen", "Ximena",
         "Yusuf", "Zoe", "Amara", "Bruno", "Chloe", "Dev", "Esme", "Felix", "Gita", "Hugo", "Ivy", "Jamal", "Kira",
         "Liam", "Maya", "Noah", "Olga", "Pablo", "Rhea", "Sven", "Tomas", "Uma", "Viktor", "Wanda", "Yara", "Zane"]
LAST = ["Abbott", "Banerjee", "Castro", "Dubois", "Eriksen", "Fischer", "Garcia", "Haddad", "Ito", "Jensen",
        "Kowalski", "Lindqvist", "Moreau", "Nakamura", "Okafor", "Petrov", "Quintero", "Rossi", "Schmidt", "Tanaka",
        "Ueda", "Varga", "Walsh", "Xu", "Yilmaz", "Zimmer", "Alvarez", "Brennan", "Costa", "Dias", "Evans", "Ferro",
        "Gupta", "Hughes", "Iqbal", "Kim", "Lopez", "Murphy", "Novak", "Olsen"]
BRANDS = ["visa", "mastercard", "amex", "discover"]
SEASON_GAMES = 41
FULL_PROGRAMS = {"LEAGUE_WINTER_U12", "CAMP_HOLIDAY_TEEN"}


def _unique(rng: random.Random, used: set[str], make: Any) -> str:
    while True:
        value = make(rng)
        if value not in used:
            used.add(value)
            return value


def _money(value: float) -> float | int:
    value = round(value + 0.0, 2)
    return int(value) if value == int(value) else value


def _dob(rng: random.Random, low: int, high: int) -> str:
    return f"{rng.randrange(low, high + 1)}-{rng.randrange(1, 13):02d}-{rng.randrange(1, 29):02d}"


def _schedule(rng: random.Random) -> dict[str, dict]:
    """41 home games from Oct 22 to Apr 12, one today and one tomorrow, each opponent visiting two or three times."""
    first, last = _dt.date(2025, 10, 22), _dt.date(2026, 4, 12)
    today = _dt.date.fromisoformat(TODAY)
    days = {today, today + _dt.timedelta(days=1), first, last}
    while len(days) < SEASON_GAMES:
        day = first + _dt.timedelta(days=rng.randrange((last - first).days))
        if all(abs((day - d).days) >= 2 for d in days):
            days.add(day)
    opponents = [OPPONENTS[i % len(OPPONENTS)] for i in range(SEASON_GAMES)]
    rng.shuffle(opponents)
    games = {}
    for day, (abbr, name, tier) in zip(sorted(days), opponents, strict=True):
        code = f"G{day.month:02d}{day.day:02d}_{abbr}"
        weekend = day.weekday() >= 5
        games[code] = {"game_code": code, "date": day.isoformat(), "tip_off": "13:00" if weekend else "19:30",
                       "opponent": name, "tier": tier}
    return games


class _World:
    def __init__(self, seed: int):
        self.rng = random.Random(seed)
        self.ids: set[str] = set()
        self.numbers: set[str] = set()
        rng = self.rng
        games = _schedule(rng)
        self.db: dict[str, Any] = {
            "sections": {c: {"section_code": c, "name": n, "level": lvl, "base_price": p, "capacity": cap,
                             "season_price": round(p * SEASON_GAMES * 0.8), "member_seats_taken": 0}
                         for c, n, lvl, p, cap in SECTIONS},
            "game_tiers": {t: {"tier": t, "multiplier": m} for t, m in GAME_TIERS},
            "games": games,
            "inventory": {f"{g}:{c}": {"game_code": g, "section_code": c, "capacity": cap, "sold": 0}
                          for g in games for c, _, _, _, cap in SECTIONS},
            "membership_tiers": {c: {"tier_code": c, "name": n, "levels": lv, "guest_passes": gp}
                                 for c, n, lv, gp in MEMBERSHIP_TIERS},
            "programs": {c: {"program_code": c, "name": n, "kind": k, "min_age": lo, "max_age": hi, "start_date": s,
                             "end_date": e, "fee": fee, "capacity": cap, "enrolled": 0}
                         for c, n, k, lo, hi, s, e, fee, cap in PROGRAMS},
            "merch_items": {s: {"sku": s, "name": n, "price": p, "final_sale": f} for s, n, p, f in MERCH},
            "fans": {}, "memberships": {}, "players": {}, "registrations": {}, "ticket_orders": {}, "merch_orders": {},
        }

    def new_id(self, prefix: str) -> str:
        return _unique(self.rng, self.ids, lambda r: f"{prefix}{r.randrange(100000, 1000000)}")

    def number(self, prefix: str) -> str:
        return _unique(self.rng, self.numbers, lambda r: f"{prefix}-{r.randrange(1000000, 10000000)}")

    def price(self, game_code: str, section: str) -> float:
        game = self.db["games"][game_code]
        return _money(self.db["sections"][section]["base_price"] * self.db["game_tiers"][game["tier"]]["multiplier"])

    def seats(self, game_code: str, section: str, n: int) -> list[str] | None:
        stock = self.db["inventory"][f"{game_code}:{section}"]
        if stock["capacity"] - stock["sold"] < n:
            return None
        first = stock["sold"]
        stock["sold"] += n
        return [f"{section.split('_')[-1]}-{chr(ord('A') + i // SEATS_PER_ROW)}-{i % SEATS_PER_ROW + 1}"
                for i in range(first, first + n)]


def generate(seed: int = 0, fans: int = 600) -> dict[str, Any]:
    world = _World(seed)
    emails: set[str] = set()
    for _ in range(fans):
        _fan(world, emails)
    fan_ids = list(world.db["fans"])
    for fid in fan_ids:
        for _ in range(world.rng.choice([0, 1, 2, 2, 3, 4])):
            _ticket_order(world, fid, fan_ids)
    for program in world.db["programs"].values():  # places taken by families who enrolled at the desk
        full = program["program_code"] in FULL_PROGRAMS
        program["enrolled"] = program["capacity"] if full else int(program["capacity"] * world.rng.choice([0.1, 0.2, 0.3]))
    for fid in fan_ids:
        if world.rng.random() < 0.55:
            _family(world, fid, fan_ids)
    for stock in world.db["inventory"].values():  # box office and other channels sell the rest
        share = world.rng.choice([0.3, 0.5, 0.7, 0.85, 0.95, 1.0])
        stock["sold"] = max(stock["sold"], int(stock["capacity"] * share))
    return world.db


def _fan(world: _World, emails: set[str]) -> None:
    rng, db = world.rng, world.db
    fid = world.new_id("FN")
    first, last = rng.choice(FIRST), rng.choice(LAST)
    email = _unique(rng, emails, lambda r: f"{first.lower()}.{last.lower()}{r.randrange(100)}@example.com")
    cards = {}
    for _ in range(rng.choice([1, 1, 2, 3])):
        pid = world.new_id("card_")
        cards[pid] = {"payment_id": pid, "brand": rng.choice(BRANDS), "last_four": f"{rng.randrange(10000):04d}"}
    fan = {"fan_id": fid, "name": {"first_name": first, "last_name": last}, "email": email,
           "phone": f"206-555-{rng.randrange(10000):04d}", "dob": _dob(rng, 1945, 2005), "payment_methods": cards,
           "membership_id": None, "player_ids": [], "ticket_order_ids": [], "merch_order_ids": []}
    db["fans"][fid] = fan
    if rng.random() < 0.25:
        _membership(world, fan)
    for _ in range(rng.choice([0, 0, 1, 1, 2])):
        _merch_order(world, fan)


def _membership(world: _World, fan: dict) -> None:
    rng, db = world.rng, world.db
    tier = rng.choice(["TIER_COURTSIDE", "TIER_LOWER", "TIER_LOWER", "TIER_UPPER", "TIER_UPPER", "TIER_UPPER"])
    levels = db["membership_tiers"][tier]["levels"]
    section = db["sections"][rng.choice([c for c, _, lvl, _, _ in SECTIONS if lvl == levels[0]])]
    index = section["member_seats_taken"]
    section["member_seats_taken"] += 1
    monthly = rng.random() < 0.55
    paid = rng.choice([1, 2, 2, 2]) if monthly else 1  # October, and November when on time
    installments = 8 if monthly else 1
    price = section["season_price"]
    mid = world.new_id("SM")
    db["memberships"][mid] = {
        "membership_id": mid, "member_number": world.number("SM"), "fan_id": fan["fan_id"], "tier_code": tier,
        "section_code": section["section_code"], "row": chr(ord("A") + index // SEATS_PER_ROW),
        "seat": index % SEATS_PER_ROW + 1, "season_price": price, "payment_plan": "monthly" if monthly else "full",
        "installments_paid": paid, "installments_total": installments,
        "installment_amount": _money(price / installments),
        "next_due_date": ("2025-11-01" if paid == 1 else "2025-12-01") if monthly else None,
        "balance": _money(price - price / installments * paid),
        "status": "past_due" if monthly and paid == 1 else "active",
        "relocations_this_season": 1 if rng.random() < 0.15 else 0,
    }
    fan["membership_id"] = mid


def _ticket_order(world: _World, fan_id: str, fan_ids: list[str]) -> None:
    rng, db = world.rng, world.db
    game = rng.choice(list(db["games"].values()))
    section = rng.choice([c for c, _, lvl, _, _ in SECTIONS if lvl != "courtside" or rng.random() < 0.2])
    fan = db["fans"][fan_id]
    held = sum(len(db["ticket_orders"][o]["seats"]) for o in fan["ticket_order_ids"]
               if db["ticket_orders"][o]["game_code"] == game["game_code"])
    n = min(rng.choice([1, 2, 2, 2, 3, 4, 4, 5, 6]), 8 - held)
    seats = world.seats(game["game_code"], section, n) if n > 0 else None
    if not seats:
        return
    price = world.price(game["game_code"], section)
    oid = world.new_id("TO")
    order = {"order_id": oid, "order_number": world.number("HT"), "fan_id": fan_id, "game_code": game["game_code"],
             "section_code": section, "seats": seats, "face_value": price, "total_paid": _money(price * n),
             "payment_id": rng.choice(list(fan["payment_methods"])), "status": "active", "transfers": 0,
             "resale_price": None, "upgraded": False}
    future = days_until(game["date"]) >= 1
    if future and rng.random() < 0.1:
        order.update(status="listed", resale_price=_money(price * rng.choice([0.8, 0.9, 1.0])))
    holder = fan
    if future and rng.random() < 0.12:  # given to a friend: the order now sits with the recipient
        holder = db["fans"][rng.choice([f for f in fan_ids if f != fan_id])]
        order.update(fan_id=holder["fan_id"], transfers=1, status="active", resale_price=None)
    db["ticket_orders"][oid] = order
    holder["ticket_order_ids"].append(oid)


def _family(world: _World, fan_id: str, fan_ids: list[str]) -> None:
    """Youth players with this fan as guardian, sometimes another fan (a grandparent, a neighbour) as contact."""
    rng, db = world.rng, world.db
    parent = db["fans"][fan_id]
    born = int(parent["dob"][:4])
    if not 1963 <= born <= 1995:  # a parent of a child born 2008-2019, at 22 to 45
        return
    for _ in range(rng.choice([1, 1, 2, 3])):
        pid = world.new_id("PL")
        used = {db["players"][p]["name"] for p in parent["player_ids"]}
        first = rng.choice([f for f in FIRST if f != parent["name"]["first_name"] and
                            f"{f} {parent['name']['last_name']}" not in used])
        contact = rng.choice([f for f in fan_ids if f != fan_id]) if rng.random() < 0.35 else None
        player = {"player_id": pid, "name": f"{first} {parent['name']['last_name']}",
                  "dob": _dob(rng, max(born + 22, 2008), min(born + 45, 2019)), "guardian_fan_id": fan_id,
                  "contact_fan_id": contact, "waiver_signed": rng.random() < 0.7, "registration_ids": []}
        db["players"][pid] = player
        parent["player_ids"].append(pid)
        if contact:
            db["fans"][contact]["player_ids"].append(pid)
        if player["waiver_signed"]:
            eligible = [p for p in db["programs"].values()
                        if p["min_age"] <= age_on(player["dob"], p["start_date"]) <= p["max_age"]]
            for program in rng.sample(eligible, min(len(eligible), rng.choice([0, 1, 1, 2, 2, 3]))):
                _registration(world, player, parent, program)


def _registration(world: _World, player: dict, parent: dict, program: dict) -> None:
    rng, db = world.rng, world.db
    age = age_on(player["dob"], program["start_date"])
    if not program["min_age"] <= age <= program["max_age"] or program["enrolled"] >= program["capacity"]:
        return
    program["enrolled"] += 1
    rid = world.new_id("RG")
    db["registrations"][rid] = {"registration_id": rid, "player_id": player["player_id"],
                                "program_code": program["program_code"], "registered_by": parent["fan_id"],
                                "fee_paid": program["fee"], "payment_id": rng.choice(list(parent["payment_methods"])),
                                "status": "registered", "refund": None}
    player["registration_ids"].append(rid)


def _merch_order(world: _World, fan: dict) -> None:
    rng, db = world.rng, world.db
    items = []
    for sku in rng.sample(list(db["merch_items"]), rng.choice([1, 1, 2, 3])):
        item = db["merch_items"][sku]
        if item["final_sale"] and rng.random() < 0.6:
            continue
        qty = rng.choice([1, 1, 2])
        items.append({"sku": sku, "name": item["name"], "quantity": qty, "price": _money(item["price"] * qty),
                      "final_sale": item["final_sale"]})
    if not items:
        return
    placed = _dt.date.fromisoformat(TODAY) - _dt.timedelta(days=rng.randrange(0, 90))
    age = (_dt.date.fromisoformat(TODAY) - placed).days
    status, delivered = "processing", None
    if age > 6:
        status, delivered = "delivered", (placed + _dt.timedelta(days=rng.randrange(3, 7))).isoformat()
        if rng.random() < 0.08:
            status = "returned"
    elif age > 1:
        status = "shipped"
    oid = world.new_id("MO")
    db["merch_orders"][oid] = {"order_id": oid, "order_number": world.number("SO"), "fan_id": fan["fan_id"],
                               "items": items, "total": _money(sum(i["price"] for i in items)),
                               "payment_id": rng.choice(list(fan["payment_methods"])), "placed_on": placed.isoformat(),
                               "status": status, "delivered_on": delivered}
    fan["merch_order_ids"].append(oid)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--fans", type=int, default=600)
    parser.add_argument("--out", type=Path, default=None)
    args = parser.parse_args(argv)
    out = args.out or Path(str(files("tau_emotion.domain_packs.basketball") / "data" / "db.json"))
    db = generate(args.seed, args.fans)
    out.write_text(json.dumps(db, separators=(",", ":"), sort_keys=False) + "\n")
    counts = ", ".join(f"{len(rows)} {name}" for name, rows in db.items())
    print(f"wrote {out} ({out.stat().st_size // 1024} KiB): {counts}")


if __name__ == "__main__":
    main()
