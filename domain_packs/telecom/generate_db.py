"""Seeded generator of the telecom database (`data/db.json`).

    python -m tau_emotion.domain_packs.telecom.generate_db --seed 0 [--customers 500] [--out PATH]

The same seed always writes the same bytes. The catalogue (plans, add-ons, device models) is
fixed; customers, accounts, lines, devices, bills and usage are drawn around `tools.TODAY`, with
enough lines under contract, changed plans, suspensions, overdue bills, disputable charges and open
faults for every policy rule to matter.
"""

from __future__ import annotations

import argparse
import datetime as _dt
import json
import random
from importlib.resources import files
from pathlib import Path
from typing import Any

from tau_emotion.domain_packs.telecom.tools import CYCLE_START, STEPS, TODAY

PLANS = [  # id, name, monthly price, data GB, contract months
    ("PLAN_BASIC5", "Basic 5", 30, 5, 0),
    ("PLAN_SENIOR10", "Senior 10", 35, 10, 0),
    ("PLAN_STUDENT20", "Student 20", 40, 20, 0),
    ("PLAN_ESS15", "Essential 15", 45, 15, 0),
    ("PLAN_PLUS30", "Plus 30", 60, 30, 12),
    ("PLAN_UNL", "Unlimited", 75, 100, 12),
    ("PLAN_UNLPREM", "Unlimited Premium", 90, 200, 24),
]
ADDONS = [  # id, name, monthly price, kind, extra data GB
    ("ADD_EU_PASS", "Travel Pass Europe", 25, "roaming", 0),
    ("ADD_AM_PASS", "Travel Pass Americas", 20, "roaming", 0),
    ("ADD_GLOBAL", "Global Roaming", 45, "roaming", 0),
    ("ADD_DATA5", "Extra 5 GB", 10, "data", 5),
    ("ADD_DATA20", "Extra 20 GB", 25, "data", 20),
    ("ADD_INTL_CALL", "International Calling", 15, "calling", 0),
    ("ADD_PROTECT", "Device Protection", 12, "protection", 0),
]
MODELS = [  # id, name, brand, price
    ("DM_PIXEL9", "Pixel 9", "Google", 699),
    ("DM_IPHONE16", "iPhone 16", "Apple", 829),
    ("DM_IPHONE16E", "iPhone 16e", "Apple", 599),
    ("DM_GALAXYS25", "Galaxy S25", "Samsung", 799),
    ("DM_GALAXYA55", "Galaxy A55", "Samsung", 449),
    ("DM_MOTOG", "Moto G Power", "Motorola", 249),
    ("DM_NOKIAFLIP", "Nokia Flip", "Nokia", 89),
    ("DM_FAIRPHONE5", "Fairphone 5", "Fairphone", 649),
]
SYMPTOMS = ["no mobile data", "calls keep dropping", "no signal at home", "text messages are not delivered",
            "very slow data"]
FIRST = ["Aisha", "Ben", "Carla", "Diego", "Elena", "Farid", "Grace", "Hiro", "Ines", "Jonas", "Kemal", "Lena",
         "Marco", "Nadia", "Omar", "Priya", "Quinn", "Rosa", "Samir", "Tara", "Umar", "Vera", "Wen", "Ximena",
         "Yusuf", "Zoe", "Amara", "Bruno", "Chloe", "Dev", "Esme", "Felix", "Gita", "Hugo", "Ivy", "Jamal", "Kira",
         "Liam", "Maya", "Noah", "Olga", "Pablo", "Rhea", "Sven", "Tomas", "Uma", "Viktor", "Wanda", "Yara", "Zane"]
LAST = ["Abbott", "Banerjee", "Castro", "Dubois", "Eriksen", "Fischer", "Garcia", "Haddad", "Ito", "Jensen",
        "Kowalski", "Lindqvist", "Moreau", "Nakamura", "Okafor", "Petrov", "Quintero", "Rossi", "Schmidt", "Tanaka",
        "Ueda", "Varga", "Walsh", "Xu", "Yilmaz", "Zimmer", "Alvarez", "Brennan", "Costa", "Dias", "Evans", "Ferro",
        "Gupta", "Hughes", "Iqbal", "Kim", "Lopez", "Murphy", "Novak", "Olsen"]
STREETS = ["Maple St", "Oak Ave", "Cedar Rd", "Elm St", "Pine Ln", "Harbor Blvd", "Hill Rd", "Lake Dr", "Park Ave",
           "River Rd", "Sunset Blvd", "Mission St"]
CITIES = [("San Francisco", "CA", "415"), ("Austin", "TX", "512"), ("Denver", "CO", "303"), ("Seattle", "WA", "206"),
          ("Boston", "MA", "617"), ("Chicago", "IL", "312"), ("Miami", "FL", "305"), ("Portland", "OR", "503")]
BRANDS = ["visa", "mastercard", "amex"]
BANKS = ["Chase", "Wells Fargo", "Citibank", "US Bank"]
PERIODS = [("2024-12", "2025-01-01", "2025-01-21"), ("2025-01", "2025-02-01", "2025-02-21"),
           ("2025-02", "2025-03-01", "2025-03-21")]
LATE_FEE = 15


def _day(rng: random.Random, start: str, end: str) -> str:
    a, b = _dt.date.fromisoformat(start), _dt.date.fromisoformat(end)
    return (a + _dt.timedelta(days=rng.randrange((b - a).days + 1))).isoformat()


def _unique(rng: random.Random, used: set[str], make: Any) -> str:
    while True:
        value = make(rng)
        if value not in used:
            used.add(value)
            return value


def generate(seed: int = 0, customers: int = 500) -> dict[str, Any]:
    rng = random.Random(seed)
    db: dict[str, Any] = {
        "plans": {p: {"plan_id": p, "name": n, "monthly_price": price, "data_gb": gb, "contract_months": c}
                  for p, n, price, gb, c in PLANS},
        "addons": {a: {"addon_id": a, "name": n, "monthly_price": price, "kind": kind, "extra_data_gb": gb}
                   for a, n, price, kind, gb in ADDONS},
        "device_models": {m: {"model_id": m, "name": n, "brand": b, "price": price} for m, n, b, price in MODELS},
        "customers": {}, "accounts": {}, "lines": {}, "devices": {}, "bills": {}, "usage": {},
    }
    ids: set[str] = set()
    phones: set[str] = set()
    for _ in range(customers):
        cid = _unique(rng, ids, lambda r: f"C{r.randrange(100000, 1000000)}")
        first, last = rng.choice(FIRST), rng.choice(LAST)
        city, state, area = rng.choice(CITIES)
        methods: dict[str, dict] = {}
        for _ in range(rng.choice([1, 1, 2, 2, 3])):
            if rng.random() < 0.7:
                pid = _unique(rng, ids, lambda r: f"card_{r.randrange(1000000, 10000000)}")
                methods[pid] = {"payment_id": pid, "source": "credit_card", "brand": rng.choice(BRANDS),
                                "last_four": f"{rng.randrange(10000):04d}"}
            else:
                pid = _unique(rng, ids, lambda r: f"bank_{r.randrange(1000000, 10000000)}")
                methods[pid] = {"payment_id": pid, "source": "bank_account", "bank": rng.choice(BANKS),
                                "last_four": f"{rng.randrange(10000):04d}"}
        customer = {"customer_id": cid, "name": {"first_name": first, "last_name": last},
                    "dob": _day(rng, "1948-01-01", "2004-12-31"),
                    "email": f"{first.lower()}.{last.lower()}{rng.randrange(100)}@example.com",
                    "address": {"street": f"{rng.randrange(1, 9999)} {rng.choice(STREETS)}", "city": city,
                                "state": state, "zip": f"{rng.randrange(10000, 99999)}"},
                    "account_ids": [], "payment_methods": methods}
        db["customers"][cid] = customer
        for _ in range(1 if rng.random() < 0.85 else 2):
            aid = _unique(rng, ids, lambda r: f"A{r.randrange(100000, 1000000)}")
            customer["account_ids"].append(aid)
            account = {"account_id": aid, "customer_id": cid, "status": "active",
                       "autopay_payment_id": rng.choice(list(methods)) if rng.random() < 0.4 else None,
                       "line_ids": [], "bill_ids": []}
            db["accounts"][aid] = account
            for _ in range(rng.choice([1, 1, 2, 2, 3, 4])):
                _line(rng, db, account, area, ids, phones)
            _bills(rng, db, account, ids)
    return db


def _line(rng: random.Random, db: dict, account: dict, area: str, ids: set[str], phones: set[str]) -> None:
    lid = _unique(rng, ids, lambda r: f"L{r.randrange(100000, 1000000)}")
    account["line_ids"].append(lid)
    phone = _unique(rng, phones, lambda r: f"{area}-555-{r.randrange(10000):04d}")
    plan = db["plans"][rng.choice(list(db["plans"]))]
    contract_end = None
    if plan["contract_months"] and rng.random() < 0.75:
        contract_end = _day(rng, "2025-04-01", "2026-12-31")
    elif rng.random() < 0.2:
        contract_end = _day(rng, "2024-01-01", "2025-03-10")
    changed = _day(rng, CYCLE_START, "2025-03-13") if rng.random() < 0.25 else (
        _day(rng, "2023-06-01", "2025-02-28") if rng.random() < 0.6 else None)
    extras = rng.sample(list(db["addons"]), rng.choice([0, 0, 1, 1, 2]))
    roaming = [a for a in extras if db["addons"][a]["kind"] == "roaming"]
    extras = [a for a in extras if a not in roaming[1:]]
    status, suspension = "active", None
    if rng.random() < 0.12:
        start = _day(rng, "2025-01-20", "2025-03-12")
        reason = rng.choice(["lost_or_stolen", "travel", "medical"])
        end = (_dt.date.fromisoformat(start) + _dt.timedelta(days=rng.choice([30, 45, 60, 90]))).isoformat()
        status, suspension = "suspended", {"reason": reason, "start_date": start, "end_date": max(end, "2025-03-20")}
    did = _unique(rng, ids, lambda r: f"D{r.randrange(100000, 1000000)}")
    model = rng.choice(list(db["device_models"]))
    db["devices"][did] = {"device_id": did, "line_id": lid, "model_id": model,
                          "imei": f"{rng.randrange(10**14, 10**15)}", "status": "active",
                          "registered_on": _day(rng, "2021-01-01", "2025-02-28")}
    issue = None
    if status == "active" and rng.random() < 0.3:
        issue = {"symptom": rng.choice(SYMPTOMS), "fix": rng.choice(STEPS)}
    db["lines"][lid] = {"line_id": lid, "account_id": account["account_id"], "phone_number": phone,
                        "plan_id": plan["plan_id"], "addons": extras, "device_id": did, "status": status,
                        "suspension": suspension, "contract_end_date": contract_end, "plan_changed_on": changed,
                        "activated_on": _day(rng, "2018-01-01", "2024-06-30"), "troubleshooting_log": [],
                        "issue": issue}
    allowance = plan["data_gb"] + sum(db["addons"][a]["extra_data_gb"] for a in extras)
    used = 0.0 if status == "suspended" else round(rng.uniform(0.1, 1.05) * allowance * 0.45, 1)
    db["usage"][lid] = {"data_used_gb": used,
                        "roaming_data_used_gb": round(rng.uniform(0.2, 3), 1) if roaming and rng.random() < 0.6 else 0,
                        "minutes": rng.randrange(0, 900), "texts": rng.randrange(0, 1500)}


def _bills(rng: random.Random, db: dict, account: dict, ids: set[str]) -> None:
    late_before = False
    for period, issued, due in PERIODS:
        bid = _unique(rng, ids, lambda r: f"B{r.randrange(100000, 1000000)}")
        items = []
        for lid in account["line_ids"]:
            line = db["lines"][lid]
            plan = db["plans"][line["plan_id"]]
            items.append({"line_id": lid, "description": f"{plan['name']} plan", "amount": plan["monthly_price"]})
            for a in line["addons"]:
                addon = db["addons"][a]
                items.append({"line_id": lid, "description": addon["name"], "amount": addon["monthly_price"]})
            if rng.random() < 0.12:
                items.append({"line_id": lid, "description": "Data overage", "amount": rng.choice([15, 20, 30, 45, 60, 75])})
        if late_before:
            items.append({"line_id": None, "description": "Late payment fee", "amount": LATE_FEE})
        amount = sum(i["amount"] for i in items)
        method = account["autopay_payment_id"] or next(iter(db["customers"][account["customer_id"]]["payment_methods"]))
        if period == "2025-02":
            paid = account["autopay_payment_id"] is not None or rng.random() < 0.3
        elif period == "2025-01":
            paid = rng.random() < 0.8
        else:
            paid = True
        late = period != "2025-02" and not paid
        payments = []
        if paid:
            date = due if account["autopay_payment_id"] else _day(rng, issued, due)
            if period != "2025-02" and rng.random() < 0.15:  # paid late: the next bill carries a late fee
                date = (_dt.date.fromisoformat(due) + _dt.timedelta(days=rng.randrange(3, 9))).isoformat()
                late = True
            payments.append({"payment_id": method, "amount": amount, "date": min(date, "2025-03-13")})
        status = "paid" if paid else ("overdue" if due < TODAY else "unpaid")
        db["bills"][bid] = {"bill_id": bid, "account_id": account["account_id"], "period": period,
                            "issue_date": issued, "due_date": due, "items": items, "amount": amount,
                            "payments": payments, "credits": [], "balance": 0 if paid else amount, "status": status}
        account["bill_ids"].append(bid)
        late_before = late


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--customers", type=int, default=500)
    parser.add_argument("--out", type=Path, default=None)
    args = parser.parse_args(argv)
    out = args.out or Path(str(files("tau_emotion.domain_packs.telecom") / "data" / "db.json"))
    db = generate(args.seed, args.customers)
    out.write_text(json.dumps(db, separators=(",", ":"), sort_keys=False) + "\n")
    counts = ", ".join(f"{len(rows)} {name}" for name, rows in db.items())
    print(f"wrote {out} ({out.stat().st_size // 1024} KiB): {counts}")


if __name__ == "__main__":
    main()
