"""Seeded generator of the bank database (`data/db.json`).

    python -m tau_emotion.domain_packs.bank.generate_db --seed 0 [--customers 400] [--out PATH]

The same seed always writes the same bytes. Customers of three tiers hold checking accounts (some
joint, some with an authorised user), savings accounts and loans; cards, saved payees, standing
orders and three and a half months of transactions (salaries, card purchases, payments, transfers,
fees, interest, loan repayments) are drawn around `tools.NOW`, with enough pending and old card
charges, payments sent today, busy savings accounts, refunded fees and fraud holds for every policy
rule to matter.
"""

from __future__ import annotations

import argparse
import datetime as _dt
import json
import random
from importlib.resources import files
from pathlib import Path
from typing import Any

from tau_emotion.domain_packs.bank.tools import NEXT_BUSINESS_DAY, TODAY

FIRST = ["Aisha", "Ben", "Carla", "Diego", "Elena", "Farid", "Grace", "Hiro", "Ines", "Jonas", "Kemal", "Lena",
         "Marco", "Nadia", "Omar", "Priya", "Quinn", "Rosa", "Samir", "Tara", "Umar", "Vera", "Wen", "Ximena",
         "Yusuf", "Zoe", "Amara", "Bruno", "Chloe", "Dev", "Esme", "Felix", "Gita", "Hugo", "Ivy", "Jamal", "Kira",
         "Liam", "Maya", "Noah", "Olga", "Pablo", "Rhea", "Sven", "Tomas", "Uma", "Viktor", "Wanda", "Yara", "Zane"]
LAST = ["Abbott", "Banerjee", "Castro", "Dubois", "Eriksen", "Fischer", "Garcia", "Haddad", "Ito", "Jensen",
        "Kowalski", "Lindqvist", "Moreau", "Nakamura", "Okafor", "Petrov", "Quintero", "Rossi", "Schmidt", "Tanaka",
        "Ueda", "Varga", "Walsh", "Xu", "Yilmaz", "Zimmer", "Alvarez", "Brennan", "Costa", "Dias", "Evans", "Ferro",
        "Gupta", "Hughes", "Iqbal", "Kim", "Lopez", "Murphy", "Novak", "Olsen"]
TOWNS = [("Cambridge", "02139"), ("Somerville", "02144"), ("Boston", "02118"), ("Brookline", "02446"),
         ("Newton", "02458"), ("Quincy", "02169"), ("Medford", "02155"), ("Arlington", "02474")]
STREETS = ["Maple St", "Oak Ave", "Elm St", "Harvard St", "Beacon St", "Summer St", "Pearl St", "Main St"]
TIERS = {"standard": ("Everyday Checking", 250, 1000, 12), "plus": ("Plus Checking", 500, 2000, 0),
         "premier": ("Premier Checking", 1000, 3000, 0)}  # product, overdraft limit, card limit, monthly fee
MERCHANTS = [("Whole Foods Market", 25, 180), ("Shell", 30, 75), ("Amazon", 12, 260), ("Target", 15, 140),
             ("Starbucks", 4, 15), ("CVS Pharmacy", 6, 60), ("Uber", 9, 45), ("Netflix", 15.49, 15.49),
             ("Apple Store", 99, 1299), ("Home Depot", 20, 420), ("Delta Air Lines", 180, 740),
             ("Best Buy", 40, 900), ("Trader Joe's", 20, 120), ("Spotify", 11.99, 11.99), ("Hotel Marlowe", 190, 560)]
PAYEES = ["Eversource Energy", "Comcast Xfinity", "City of Cambridge Water", "Verizon Wireless", "Harbor Property Mgmt",
          "Liberty Mutual", "Bright Horizons Daycare", "MA Dept of Revenue"]
LOANS = [("personal", "Personal Loan", 3000, 25000, 8.9), ("auto", "Auto Loan", 8000, 38000, 6.4),
         ("mortgage", "Mortgage", 180000, 620000, 5.9)]
START = "2025-06-01"


def _day(rng: random.Random, start: str, end: str) -> str:
    a, b = _dt.date.fromisoformat(start), _dt.date.fromisoformat(end)
    return (a + _dt.timedelta(days=rng.randrange((b - a).days + 1))).isoformat()


def _unique(rng: random.Random, used: set[str], make: Any) -> str:
    while True:
        value = make(rng)
        if value not in used:
            used.add(value)
            return value


class _Builder:
    def __init__(self, rng: random.Random):
        self.rng = rng
        self.ids: set[str] = set()
        self.db: dict[str, Any] = {"session": {"current": {"caller_id": None}}, "customers": {}, "accounts": {},
                                   "cards": {}, "payees": {}, "standing_orders": {}, "transactions": {},
                                   "disputes": {}}

    def key(self, make: Any) -> str:
        return _unique(self.rng, self.ids, make)

    def tx(self, account: dict, date: str, kind: str, description: str, amount: float, status: str = "settled",
           **extra: Any) -> dict:
        tid = self.key(lambda r: f"tx{r.randrange(10000000, 100000000)}")
        row = {"transaction_id": tid, "account_id": account["account_id"], "date": date, "type": kind,
               "description": description, "amount": round(amount, 2), "status": status, "card_id": None,
               "disputed": False, "refunded": False, **extra}
        self.db["transactions"][tid] = row
        account["transaction_ids"].append(tid)
        return row

    def account(self, customer: dict, kind: str, product: str, **fields: Any) -> dict:
        aid = self.key(lambda r: f"AC{r.randrange(10000000, 100000000)}")
        number = self.key(lambda r: f"{r.randrange(10**9, 10**10)}")
        row = {"account_id": aid, "account_number": number, "type": kind, "product": product, "status": "open",
               "holders": [{"customer_id": customer["customer_id"], "role": "owner"}], "balance": 0,
               "overdraft_limit": 0, "interest_rate": 0, "opened_on": _day(self.rng, "2012-01-01", "2025-05-01"),
               "loan": None, "transaction_ids": [], "standing_order_ids": [], **fields}
        self.db["accounts"][aid] = row
        customer["account_ids"].append(aid)
        return row

    def card(self, account: dict, holder: dict, limit: int, status: str = "active", frozen_by: str | None = None) -> dict:
        cid = self.key(lambda r: f"card_{r.randrange(10000000, 100000000)}")
        row = {"card_id": cid, "last_four": f"{self.rng.randrange(10000):04d}", "account_id": account["account_id"],
               "cardholder_id": holder["customer_id"], "status": status, "frozen_by": frozen_by, "daily_limit": limit,
               "expires": f"20{self.rng.randrange(26, 30)}-{self.rng.randrange(1, 13):02d}",
               "issued_on": _day(self.rng, "2022-01-01", "2025-05-01"), "replaced_by": None}
        self.db["cards"][cid] = row
        holder["card_ids"].append(cid)
        return row


def generate(seed: int = 0, customers: int = 400) -> dict[str, Any]:
    rng = random.Random(seed)
    b = _Builder(rng)
    db = b.db
    phones: set[str] = set()
    for _ in range(customers):
        cid = b.key(lambda r: f"CU{r.randrange(100000, 1000000)}")
        first, last = rng.choice(FIRST), rng.choice(LAST)
        town, zip_code = rng.choice(TOWNS)
        tier = rng.choices(list(TIERS), [60, 28, 12])[0]
        db["customers"][cid] = {
            "customer_id": cid, "first_name": first, "last_name": last,
            "date_of_birth": _day(rng, "1950-01-01", "2005-06-30"),
            "phone_number": _unique(rng, phones, lambda r: f"{r.choice(['617', '857', '781'])}-555-{r.randrange(10000):04d}"),
            "email": f"{first.lower()}.{last.lower()}{rng.randrange(100)}@example.com",
            "address": {"street": f"{rng.randrange(1, 400)} {rng.choice(STREETS)}", "city": town, "state": "MA",
                        "zip": zip_code},
            "tier": tier, "customer_since": _day(rng, "2008-01-01", "2025-04-01"),
            "account_ids": [], "card_ids": [], "payee_ids": [], "fee_refunds": []}
    everyone = list(db["customers"].values())
    for customer in everyone:
        _customer_products(b, customer, everyone)
    return db


def _customer_products(b: _Builder, customer: dict, everyone: list[dict]) -> None:
    rng, db = b.rng, b.db
    tier = customer["tier"]
    product, overdraft, card_limit, monthly_fee = TIERS[tier]
    names: set[str] = set()
    for _ in range(rng.choice([1, 2, 2, 3, 4])):
        pid = b.key(lambda r: f"py{r.randrange(10000000, 100000000)}")
        name = _unique(rng, names, lambda r: r.choice(PAYEES) if r.random() < 0.6 else f"{r.choice(FIRST)} {r.choice(LAST)}")
        db["payees"][pid] = {"payee_id": pid, "customer_id": customer["customer_id"], "name": name,
                             "account_last_four": f"{rng.randrange(10000):04d}"}
        customer["payee_ids"].append(pid)
    checking = b.account(customer, "checking", product, overdraft_limit=overdraft)
    card = b.card(checking, customer, card_limit)
    if rng.random() < 0.1:
        old = b.card(checking, customer, card_limit, status=rng.choice(["blocked", "replaced"]))
        old["replaced_by"] = card["card_id"]
    roll = rng.random()
    if roll < 0.05:
        card["status"], card["frozen_by"] = "frozen", "customer"
    elif roll < 0.08:
        card["status"], card["frozen_by"] = "frozen", "fraud_team"
    others = [c for c in everyone if c is not customer]
    extra_roll = rng.random()
    if extra_roll < 0.2:  # a joint owner or an authorised user with a card of their own
        partner = rng.choice(others)
        role = "joint_owner" if extra_roll < 0.14 else "authorised_user"
        checking["holders"].append({"customer_id": partner["customer_id"], "role": role})
        partner["account_ids"].append(checking["account_id"])
        b.card(checking, partner, min(card_limit, 500) if role == "authorised_user" else card_limit)
    savings = None
    if rng.random() < 0.6:
        savings = b.account(customer, "savings", "High-Yield Savings" if tier != "standard" else "Savings",
                            interest_rate=3.8 if tier != "standard" else 1.2)
    loan = None
    if rng.random() < 0.22:
        kind, name, low, high, rate = rng.choice(LOANS)
        principal = round(rng.uniform(low, high), -2)
        owed = round(principal * rng.uniform(0.3, 0.95), 2)
        payment = round(principal * (0.004 if kind == "mortgage" else 0.025), 2)
        loan = b.account(customer, "loan", name, interest_rate=rate,
                         loan={"kind": kind, "principal": principal, "monthly_payment": payment,
                               "next_payment_date": "2025-10-01", "term_end": _day(rng, "2027-01-01", "2054-12-31")})
        loan["balance"] = owed
    _history(b, customer, checking, savings, loan, monthly_fee)
    if rng.random() < 0.35:
        pid = rng.choice(customer["payee_ids"])
        sid = b.key(lambda r: f"so{r.randrange(10000000, 100000000)}")
        db["standing_orders"][sid] = {"standing_order_id": sid, "account_id": checking["account_id"], "payee_id": pid,
                                      "payee_name": db["payees"][pid]["name"],
                                      "amount": float(rng.choice([50, 100, 150, 250, 400, 1200, 1850])),
                                      "frequency": rng.choice(["monthly", "monthly", "weekly"]),
                                      "start_date": _day(rng, "2023-01-01", "2025-08-31"),
                                      "status": rng.choice(["active", "active", "active", "cancelled"])}
        checking["standing_order_ids"].append(sid)
    if tier != "standard" or rng.random() < 0.3:
        fees = [t for t in checking["transaction_ids"] if db["transactions"][t]["type"] == "fee"]
        if fees and rng.random() < 0.5:
            fee = db["transactions"][rng.choice(fees)]
            fee["refunded"] = True
            b.tx(checking, fee["date"], "fee_refund", f"Refund: {fee['description']}", -fee["amount"])
            customer["fee_refunds"].append({"transaction_id": fee["transaction_id"], "amount": -fee["amount"],
                                            "date": fee["date"]})


def _history(b: _Builder, customer: dict, checking: dict, savings: dict | None, loan: dict | None,
             monthly_fee: int) -> None:
    rng, db = b.rng, b.db
    salary = round(rng.uniform(1800, 6500), -1)
    opening = round(rng.uniform(300, 6000), 2)
    savings_opening = round(rng.uniform(500, 40000), 2) if savings else 0
    rows: list[tuple[dict, str, str, str, float, str, dict]] = []
    card_id = next(c for c in customer["card_ids"] if db["cards"][c]["account_id"] == checking["account_id"])
    for month in ("06", "07", "08", "09"):
        first = f"2025-{month}-01"
        if month != "09" or TODAY >= first:
            rows.append((checking, f"2025-{month}-{rng.choice(['01', '15'])}", "deposit", "Payroll deposit", salary,
                         "settled", {}))
        if monthly_fee:
            rows.append((checking, first, "fee", "Monthly maintenance fee", -monthly_fee, "settled",
                         {"fee_kind": "monthly"}))
        last_day = "2025-09-17" if month == "09" else f"2025-{month}-28"
        for _ in range(rng.choice([1, 2, 3, 3])):
            name, low, high = rng.choice(MERCHANTS)
            date = _day(rng, first, last_day)
            amount = round(rng.uniform(low, high), 2)
            status = "pending" if date >= "2025-09-16" else "settled"
            rows.append((checking, date, "card", name, -amount, status, {"card_id": card_id}))
            if rng.random() < 0.04:
                rows.append((checking, date, "fee", "Foreign transaction fee", -round(amount * 0.03, 2), "settled",
                             {"fee_kind": "foreign_transaction"}))
        if rng.random() < 0.5:
            payee = rng.choice(customer["payee_ids"])
            date = _day(rng, first, last_day)
            rows.append((checking, date, "payee_payment", f"Payment to {db['payees'][payee]['name']}",
                         -round(rng.uniform(40, 900), 2), "settled", {"payee_id": payee, "sent_on": date}))
        if opening < 1500 and rng.random() < 0.25:  # a thin account dips below zero now and then
            rows.append((checking, _day(rng, first, last_day), "fee", "Overdraft fee", -35, "settled",
                         {"fee_kind": "overdraft"}))
        if rng.random() < 0.1:
            rows.append((checking, _day(rng, first, last_day), "fee", "Out-of-network ATM fee", -3, "settled",
                         {"fee_kind": "atm"}))
        if savings and month != "09":
            rows.append((savings, f"2025-{month}-28", "interest", "Interest", round(savings_opening * savings["interest_rate"] / 1200, 2),
                         "settled", {}))
        if loan and month != "09":
            rows.append((loan, f"2025-{month}-01", "loan_payment", "Monthly repayment", -loan["loan"]["monthly_payment"],
                         "settled", {}))
    if savings and rng.random() < 0.2:  # a busy savings month: its six transfers out are used up
        for _ in range(6 if rng.random() < 0.6 else rng.choice([3, 4, 5])):
            amount = round(rng.uniform(50, 600), 2)
            date = _day(rng, "2025-09-01", "2025-09-16")
            rows.append((savings, date, "transfer_out", f"Transfer to {checking['account_number']}", -amount, "settled", {}))
            rows.append((checking, date, "transfer_in", f"Transfer from {savings['account_number']}", amount, "settled", {}))
    if rng.random() < 0.1:  # payments already sent today count toward the daily limit
        payee = rng.choice(customer["payee_ids"])
        amount = round(rng.uniform(300, 1900), 2)
        opening += amount
        rows.append((checking, NEXT_BUSINESS_DAY, "payee_payment", f"Payment to {db['payees'][payee]['name']}", -amount,
                     "pending", {"payee_id": payee, "sent_on": TODAY}))
    rows.sort(key=lambda r: (r[1], r[3]))
    balances = {checking["account_id"]: opening, **({savings["account_id"]: savings_opening} if savings else {})}
    for account, date, kind, description, amount, status, extra in rows:
        b.tx(account, date, kind, description, amount, status, **extra)
        if account is not loan:
            balances[account["account_id"]] += amount
    charges = [t for t in checking["transaction_ids"] if db["transactions"][t]["type"] == "card"
               and db["transactions"][t]["status"] == "settled"]
    if charges and rng.random() < 0.12:  # an earlier dispute, decided
        charge = db["transactions"][rng.choice(charges)]
        charge["disputed"] = True
        did = b.key(lambda r: f"dp{r.randrange(10000000, 100000000)}")
        db["disputes"][did] = {"dispute_id": did, "transaction_id": charge["transaction_id"],
                               "account_id": checking["account_id"], "amount": -charge["amount"],
                               "reason": rng.choice(["not_recognised", "not_received", "duplicate", "wrong_amount"]),
                               "status": rng.choice(["resolved_refunded", "resolved_declined"]),
                               "opened_on": charge["date"]}
    for account in (checking, savings):
        if account is not None:
            balance = round(balances[account["account_id"]], 2)
            if balance < 0:  # a gift that keeps the account within its means
                b.tx(account, START, "deposit", "Mobile check deposit", -balance + 200)
                balance = 200.0
            account["balance"] = balance


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--customers", type=int, default=400)
    parser.add_argument("--out", type=Path, default=None)
    args = parser.parse_args(argv)
    out = args.out or Path(str(files("tau_emotion.domain_packs.bank") / "data" / "db.json"))
    db = generate(args.seed, args.customers)
    out.write_text(json.dumps(db, separators=(",", ":"), sort_keys=False) + "\n")
    counts = ", ".join(f"{len(rows)} {name}" for name, rows in db.items())
    print(f"wrote {out} ({out.stat().st_size // 1024} KiB): {counts}")


if __name__ == "__main__":
    main()
