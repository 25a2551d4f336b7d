"""Tools of the bank domain: identity, customers, accounts and loans, transactions and statements, payments,
cards, disputes, fee refunds and standing orders.

Every tool is a typed function over the episode's database `State`. The tools enforce one thing
themselves: nothing is read or changed before a caller has passed `verify_identity` (the session
remembers who). Beyond that they do what they are asked when it is mechanically possible (the money
is there, the card is not blocked, the payee belongs to the account's holders) and raise
`ToolError` otherwise; whether an action is *allowed* by the policy (whose account it is and in
which role, daily limits, savings withdrawals, dispute windows, settled payments, fee-refund
allowances, card limits, fraud holds) is the agent's call, checked separately by `rules.py`.

Tools never read the clock or draw random numbers: now is the constant `NOW`, and new ids are
derived from a hash of the request and the rows that already exist, so replaying the same calls
always produces the same database.
"""

from __future__ import annotations

import datetime as _dt
from typing import Any, Literal

from tau_emotion.core.state import State
from tau_emotion.core.tools import ToolError, find_row, tool
from tau_emotion.domain_packs.values import digest as _digest
from tau_emotion.domain_packs.values import money as _money

TODAY = "2025-09-17"  # a Wednesday
NOW = "2025-09-17T17:25"
CUT_OFF = "17:00"  # payments to payees sent after this are dated the next business day
NEXT_BUSINESS_DAY = "2025-09-18"
EXPRESS_CARD_FEE = 15  # express delivery of a replacement card; free for premier customers
MONTHS = ("2025-06", "2025-07", "2025-08", "2025-09")

CardStatus = Literal["frozen", "active"]
ReplaceReason = Literal["lost", "stolen", "damaged"]
DisputeReason = Literal["not_recognised", "not_received", "duplicate", "wrong_amount"]
Frequency = Literal["weekly", "monthly"]


# --------------------------------------------------------------------------- helpers (rules use them too)


def _new_key(rows: Any, prefix: str, *parts: Any) -> str:
    for attempt in range(1000):
        key = f"{prefix}{int(_digest(attempt, *parts), 16) % 90000000 + 10000000}"
        if key not in rows:
            return key
    raise ToolError("could not allocate a new id")  # pragma: no cover


def caller_id(db: State) -> str | None:
    """The customer id the caller proved to be, or None before verification."""
    session = db["session"].peek("current")
    return session["caller_id"] if session else None


def _verified(db: State) -> str:
    caller = caller_id(db)
    if caller is None:
        raise ToolError("the caller's identity is not verified: verify it with verify_identity first")
    return caller


def role_of(db: State, account: dict, customer_id: str | None) -> str | None:
    """The customer's role on an account ('owner', 'joint_owner', 'authorised_user'), or None."""
    return next((h["role"] for h in account["holders"] if h["customer_id"] == customer_id), None)


def _post(db: State, account: dict, kind: str, description: str, amount: float, status: str = "settled",
          date: str = TODAY, **extra: Any) -> dict:
    """Add a transaction to an account and move its balance."""
    tid = _new_key(db["transactions"], "tx", account["account_id"], kind, description, amount, date,
                   len(account["transaction_ids"]))
    row = {"transaction_id": tid, "account_id": account["account_id"], "date": date, "type": kind,
           "description": description, "amount": _money(amount), "status": status, "card_id": None,
           "disputed": False, "refunded": False, **extra}
    db["transactions"][tid] = row
    account["transaction_ids"].append(tid)
    account["balance"] = _money(account["balance"] + amount)
    return row


def available(account: dict) -> float:
    return _money(account["balance"] + account.get("overdraft_limit", 0))


def _debit_check(account: dict, amount: float) -> None:
    if amount <= 0:
        raise ToolError("the amount must be positive")
    if account["type"] == "loan":
        raise ToolError(f"account {account['account_number']} is a loan: money cannot be sent from it")
    if account["status"] != "open":
        raise ToolError(f"account {account['account_number']} is {account['status']}")
    if amount > available(account) + 1e-9:
        raise ToolError(f"account {account['account_number']} has {available(account)} available, less than {_money(amount)}")


# --------------------------------------------------------------------------- identity and look-ups


@tool
def verify_identity(db: State, phone_number: str, date_of_birth: str, zip_code: str) -> dict:
    """Verify who the caller is by their phone number, date of birth and ZIP code; the match becomes the verified caller of this conversation.

    Args:
        phone_number: The caller's phone number as 'NNN-NNN-NNNN'.
        date_of_birth: The caller's date of birth as 'YYYY-MM-DD'.
        zip_code: The ZIP code of the caller's home address, such as '02139'.
    """
    for customer_id, row in db["customers"].scan():
        if row["phone_number"] == phone_number:
            if row["date_of_birth"] != date_of_birth or row["address"]["zip"] != zip_code:
                break
            db["session"]["current"] = {"caller_id": customer_id}
            return {"verified": True, "customer_id": customer_id, "first_name": row["first_name"],
                    "last_name": row["last_name"]}
    raise ToolError("the details do not match our records: identity not verified")


@tool
def get_customer_profile(db: State, customer_id: str) -> dict:
    """Get a customer's profile: name, tier, contact details, their accounts (id, number, type, their role), their cards, payees, standing orders and fee refunds of the last year.

    Args:
        customer_id: The customer's id, such as 'CU104233'.
    """
    _verified(db)
    customer = find_row(db, "customers", customer_id, "customer")
    accounts = []
    for account_id in customer["account_ids"]:
        a = db["accounts"].peek(account_id)
        accounts.append({"account_id": account_id, "account_number": a["account_number"], "type": a["type"],
                         "product": a["product"], "role": role_of(db, a, customer_id), "status": a["status"]})
    cards = []
    for card_id in customer["card_ids"]:
        c = db["cards"].peek(card_id)
        cards.append({"card_id": card_id, "last_four": c["last_four"], "account_id": c["account_id"],
                      "status": c["status"]})
    payees = [db["payees"].peek(p) for p in customer["payee_ids"]]
    return {**{k: v for k, v in customer.items() if k not in ("account_ids", "card_ids", "payee_ids")},
            "accounts": accounts, "cards": cards, "payees": payees}


@tool
def get_account_details(db: State, account_id: str) -> dict:
    """Get an account: number, type and product, holders and their roles, balance, available balance, overdraft limit, interest rate, loan terms, standing orders and this month's withdrawals.

    Args:
        account_id: The account's id, such as 'AC10423311'.
    """
    _verified(db)
    account = find_row(db, "accounts", account_id, "account")
    holders = []
    for h in account["holders"]:
        c = db["customers"].peek(h["customer_id"])
        holders.append({**h, "name": f"{c['first_name']} {c['last_name']}"})
    orders = [db["standing_orders"].peek(s) for s in account["standing_order_ids"]]
    withdrawals = sum(1 for t in account["transaction_ids"]
                      if (row := db["transactions"].peek(t))["date"][:7] == TODAY[:7] and row["type"] == "transfer_out"
                      and row["status"] != "reversed")
    return {**{k: v for k, v in account.items() if k not in ("transaction_ids", "standing_order_ids")},
            "holders": holders, "available_balance": available(account) if account["type"] != "loan" else 0,
            "standing_orders": orders, "transfers_out_this_month": withdrawals}


@tool
def get_transactions(db: State, account_id: str) -> list:
    """List an account's transactions since June 1, newest first: date, type, description, amount (negative for money out), status (pending, settled or reversed), card used, and whether disputed or refunded.

    Args:
        account_id: The account's id, such as 'AC10423311'.
    """
    _verified(db)
    account = find_row(db, "accounts", account_id, "account")
    rows = [db["transactions"].peek(t) for t in account["transaction_ids"]]
    return sorted(rows, key=lambda r: (r["date"], r["transaction_id"]), reverse=True)


@tool
def get_statement(db: State, account_id: str, month: str) -> dict:
    """Get an account's statement for a month: opening and closing balance, money in, money out, fees and interest.

    Args:
        account_id: The account's id, such as 'AC10423311'.
        month: The month as 'YYYY-MM', from '2025-06' to the current month.
    """
    _verified(db)
    account = find_row(db, "accounts", account_id, "account")
    if month not in MONTHS:
        raise ToolError(f"statements exist for {', '.join(MONTHS)}, not '{month}'")
    rows = [r for t in account["transaction_ids"] if (r := db["transactions"].peek(t))["status"] != "reversed"]
    later = sum(r["amount"] for r in rows if r["date"][:7] > month)
    inside = [r for r in rows if r["date"][:7] == month]
    closing = _money(account["balance"] - later)
    opening = _money(closing - sum(r["amount"] for r in inside))
    return {"account_id": account_id, "account_number": account["account_number"], "month": month,
            "opening_balance": opening, "closing_balance": closing,
            "money_in": _money(sum(r["amount"] for r in inside if r["amount"] > 0 and r["type"] != "interest")),
            "money_out": _money(-sum(r["amount"] for r in inside if r["amount"] < 0 and r["type"] != "fee")),
            "fees": _money(-sum(r["amount"] for r in inside if r["type"] == "fee")),
            "interest": _money(sum(r["amount"] for r in inside if r["type"] == "interest")),
            "transactions": len(inside)}


@tool
def get_card_details(db: State, card_id: str) -> dict:
    """Get a card: last four digits, cardholder, linked account, status (active, frozen, blocked, replaced), who froze it, daily spending limit and expiry.

    Args:
        card_id: The card's id, such as 'card_10423311'.
    """
    _verified(db)
    return find_row(db, "cards", card_id, "card")


# --------------------------------------------------------------------------- money


@tool(writes=True)
def transfer_between_accounts(db: State, from_account_id: str, to_account_id: str, amount: float) -> dict:
    """Move money at once between two accounts that share a holder; to a loan account it is a repayment that lowers what is owed.

    Args:
        from_account_id: The account the money leaves.
        to_account_id: The account (or loan) it goes to.
        amount: The amount.
    """
    _verified(db)
    source = find_row(db, "accounts", from_account_id, "account", write=True)
    target = find_row(db, "accounts", to_account_id, "account", write=True)
    if from_account_id == to_account_id:
        raise ToolError("the two accounts are the same")
    if not {h["customer_id"] for h in source["holders"]} & {h["customer_id"] for h in target["holders"]}:
        raise ToolError("the two accounts share no holder: use pay_payee for someone else's account")
    _debit_check(source, amount)
    if target["type"] == "loan" and amount > target["balance"] + 1e-9:
        raise ToolError(f"the loan {target['account_number']} has {target['balance']} left to repay")
    out = _post(db, source, "transfer_out", f"Transfer to {target['account_number']}", -amount)
    if target["type"] == "loan":
        target["balance"] = _money(target["balance"] - amount)
        tid = _new_key(db["transactions"], "tx", to_account_id, "repayment", out["transaction_id"])
        db["transactions"][tid] = {"transaction_id": tid, "account_id": to_account_id, "date": TODAY,
                                   "type": "loan_payment", "description": f"Repayment from {source['account_number']}",
                                   "amount": _money(-amount), "status": "settled", "card_id": None,
                                   "disputed": False, "refunded": False}
        target["transaction_ids"].append(tid)
    else:
        _post(db, target, "transfer_in", f"Transfer from {source['account_number']}", amount)
    return {"from_account_id": from_account_id, "to_account_id": to_account_id, "amount": _money(amount),
            "from_balance": source["balance"], "to_balance": target["balance"]}


@tool(writes=True)
def pay_payee(db: State, from_account_id: str, payee_id: str, amount: float) -> dict:
    """Send money from an account to one of its holders' saved payees; sent after the 17:00 cut-off it is dated the next business day and stays pending until then.

    Args:
        from_account_id: The account the money leaves.
        payee_id: The saved payee, such as 'py10423311'.
        amount: The amount.
    """
    _verified(db)
    source = find_row(db, "accounts", from_account_id, "account", write=True)
    payee = find_row(db, "payees", payee_id, "payee")
    if payee["customer_id"] not in {h["customer_id"] for h in source["holders"]}:
        raise ToolError(f"payee {payee_id} is not saved by a holder of account {source['account_number']}")
    _debit_check(source, amount)
    date = NEXT_BUSINESS_DAY if NOW[11:] > CUT_OFF else TODAY
    row = _post(db, source, "payee_payment", f"Payment to {payee['name']}", -amount, status="pending", date=date,
                payee_id=payee_id, sent_on=TODAY)
    return {"transaction_id": row["transaction_id"], "payee": payee["name"], "amount": _money(amount),
            "value_date": date, "status": "pending", "balance": source["balance"]}


@tool(writes=True)
def reverse_payment(db: State, transaction_id: str) -> dict:
    """Reverse (recall) a payment to a payee and return the money to the account.

    Args:
        transaction_id: The payment's transaction id.
    """
    _verified(db)
    row = find_row(db, "transactions", transaction_id, "transaction", write=True)
    if row["type"] != "payee_payment":
        raise ToolError(f"transaction {transaction_id} is not a payment to a payee")
    if row["status"] == "reversed":
        raise ToolError(f"transaction {transaction_id} is already reversed")
    account = db["accounts"][row["account_id"]]
    row["status"] = "reversed"
    account["balance"] = _money(account["balance"] - row["amount"])
    return {"transaction_id": transaction_id, "status": "reversed", "returned": _money(-row["amount"]),
            "balance": account["balance"]}


@tool(writes=True)
def refund_fee(db: State, transaction_id: str) -> dict:
    """Refund a fee charged to an account (a monthly, overdraft, ATM or foreign-transaction fee); it counts toward the account owner's fee refunds of the year.

    Args:
        transaction_id: The fee's transaction id.
    """
    _verified(db)
    row = find_row(db, "transactions", transaction_id, "transaction", write=True)
    if row["type"] != "fee":
        raise ToolError(f"transaction {transaction_id} is not a fee")
    if row["refunded"]:
        raise ToolError(f"the fee {transaction_id} was already refunded")
    account = db["accounts"][row["account_id"]]
    owner = next(h["customer_id"] for h in account["holders"] if h["role"] == "owner")
    row["refunded"] = True
    refund = _post(db, account, "fee_refund", f"Refund: {row['description']}", -row["amount"])
    customer = db["customers"][owner]
    customer["fee_refunds"].append({"transaction_id": transaction_id, "amount": _money(-row["amount"]), "date": TODAY})
    return {"fee_transaction_id": transaction_id, "refund_transaction_id": refund["transaction_id"],
            "amount": refund["amount"], "balance": account["balance"]}


@tool(writes=True)
def dispute_transaction(db: State, transaction_id: str, reason: DisputeReason) -> dict:
    """Open a dispute on a card transaction; the amount is credited back provisionally while the dispute is investigated.

    Args:
        transaction_id: The card transaction's id.
        reason: 'not_recognised', 'not_received', 'duplicate' or 'wrong_amount'.
    """
    _verified(db)
    row = find_row(db, "transactions", transaction_id, "transaction", write=True)
    if row["disputed"]:
        raise ToolError(f"transaction {transaction_id} is already disputed")
    if row["amount"] >= 0:
        raise ToolError(f"transaction {transaction_id} is money in, not a charge")
    account = db["accounts"][row["account_id"]]
    row["disputed"] = True
    dispute_id = _new_key(db["disputes"], "dp", transaction_id, reason)
    credit = _post(db, account, "provisional_credit", f"Provisional credit: {row['description']}", -row["amount"])
    db["disputes"][dispute_id] = {"dispute_id": dispute_id, "transaction_id": transaction_id,
                                  "account_id": account["account_id"], "amount": _money(-row["amount"]),
                                  "reason": reason, "status": "open", "opened_on": TODAY}
    return {"dispute_id": dispute_id, "status": "open", "provisional_credit": credit["amount"],
            "balance": account["balance"]}


# --------------------------------------------------------------------------- cards


@tool(writes=True)
def set_card_status(db: State, card_id: str, status: CardStatus) -> dict:
    """Freeze a card (no new payments or withdrawals until it is unfrozen) or unfreeze it (status 'active').

    Args:
        card_id: The card's id.
        status: 'frozen' to freeze, 'active' to unfreeze.
    """
    _verified(db)
    card = find_row(db, "cards", card_id, "card", write=True)
    if card["status"] not in ("active", "frozen"):
        raise ToolError(f"card ending {card['last_four']} is {card['status']} and cannot change")
    if card["status"] == status:
        raise ToolError(f"card ending {card['last_four']} is already {status}")
    card["status"] = status
    card["frozen_by"] = "customer" if status == "frozen" else None
    return {"card_id": card_id, "status": status}


@tool(writes=True)
def replace_card(db: State, card_id: str, reason: ReplaceReason, express: bool) -> dict:
    """Block a card and order its replacement on the same account, with the same limit; express delivery (2 days instead of 7) costs 15, free for premier customers, charged to the linked account.

    Args:
        card_id: The card to replace.
        reason: 'lost', 'stolen' or 'damaged'.
        express: Whether to send the new card by express delivery.
    """
    _verified(db)
    card = find_row(db, "cards", card_id, "card", write=True)
    if card["status"] in ("blocked", "replaced", "expired"):
        raise ToolError(f"card ending {card['last_four']} is {card['status']}")
    holder = db["customers"][card["cardholder_id"]]
    new_id = _new_key(db["cards"], "card_", card_id, reason)
    digest = int(_digest("last_four", new_id), 16)
    card["status"] = "blocked" if reason in ("lost", "stolen") else "replaced"
    card["replaced_by"] = new_id
    db["cards"][new_id] = {**{k: card[k] for k in ("account_id", "cardholder_id", "daily_limit")}, "card_id": new_id,
                           "last_four": f"{digest % 10000:04d}", "status": "active", "frozen_by": None,
                           "expires": "2029-09", "issued_on": TODAY, "replaced_by": None}
    holder["card_ids"].append(new_id)
    fee = 0 if not express or holder["tier"] == "premier" else EXPRESS_CARD_FEE
    if fee:
        _post(db, db["accounts"][card["account_id"]], "fee", "Express card delivery", -fee, fee_kind="card_delivery")
    return {"old_card_id": card_id, "old_status": card["status"], "new_card_id": new_id,
            "new_last_four": db["cards"][new_id]["last_four"], "delivery_days": 2 if express else 7, "fee": fee}


@tool(writes=True)
def set_card_limit(db: State, card_id: str, daily_limit: int) -> dict:
    """Set a card's daily spending limit (purchases and cash together).

    Args:
        card_id: The card's id.
        daily_limit: The new daily limit in dollars.
    """
    _verified(db)
    card = find_row(db, "cards", card_id, "card", write=True)
    if daily_limit < 0:
        raise ToolError("the limit cannot be negative")
    old, card["daily_limit"] = card["daily_limit"], daily_limit
    return {"card_id": card_id, "old_daily_limit": old, "daily_limit": daily_limit}


# --------------------------------------------------------------------------- standing orders


@tool(writes=True)
def create_standing_order(db: State, from_account_id: str, payee_id: str, amount: float, frequency: Frequency,
                          start_date: str) -> dict:
    """Set up a standing order: a fixed payment to a saved payee, weekly or monthly from a start date.

    Args:
        from_account_id: The account the payments leave.
        payee_id: The saved payee.
        amount: The amount of each payment.
        frequency: 'weekly' or 'monthly'.
        start_date: The first payment's date as 'YYYY-MM-DD'.
    """
    _verified(db)
    account = find_row(db, "accounts", from_account_id, "account", write=True)
    payee = find_row(db, "payees", payee_id, "payee")
    if payee["customer_id"] not in {h["customer_id"] for h in account["holders"]}:
        raise ToolError(f"payee {payee_id} is not saved by a holder of account {account['account_number']}")
    if account["type"] == "loan" or amount <= 0:
        raise ToolError("a standing order pays a positive amount from a checking or savings account")
    try:
        _dt.date.fromisoformat(start_date)
    except ValueError:
        raise ToolError(f"'{start_date}' is not a date (YYYY-MM-DD)") from None
    order_id = _new_key(db["standing_orders"], "so", from_account_id, payee_id, amount, frequency, start_date)
    db["standing_orders"][order_id] = {"standing_order_id": order_id, "account_id": from_account_id,
                                       "payee_id": payee_id, "payee_name": payee["name"], "amount": _money(amount),
                                       "frequency": frequency, "start_date": start_date, "status": "active"}
    account["standing_order_ids"].append(order_id)
    return db["standing_orders"][order_id]


@tool(writes=True)
def cancel_standing_order(db: State, standing_order_id: str) -> dict:
    """Cancel an active standing order; no further payments are made.

    Args:
        standing_order_id: The standing order's id, such as 'so10423311'.
    """
    _verified(db)
    order = find_row(db, "standing_orders", standing_order_id, "standing order", write=True)
    if order["status"] != "active":
        raise ToolError(f"standing order {standing_order_id} is {order['status']}")
    order["status"] = "cancelled"
    return order


@tool(terminal=True)
def transfer_to_human_agents(db: State, summary: str) -> str:
    """Hand the conversation to a human agent, with a short summary of the customer's request; this ends your part.

    Use it only when the request is outside what you can do under the policy and the customer asks for a person.

    Args:
        summary: What the customer needs and what has been done so far.
    """
    return "Transfer successful"
