"""Machine-checkable parts of the bank policy (`data/policy.md`).

Each rule has the signature `rule(state, action_name, arguments) -> str | None`: given the state
*before* an action and the action's raw arguments, it returns a one-line reason when the policy
forbids that action, else None. Rules ignore actions they are not about and arguments they cannot
read (the tool itself reports those). The tools enforce only that a caller is verified; who that
caller is, and what they may do, is for these rules, which let the Tracer reject policy-breaking
gold trajectories and ground the refusals.
"""

from __future__ import annotations

import datetime as _dt

from tau_emotion.core.domain import Rule, rule
from tau_emotion.core.state import State
from tau_emotion.domain_packs.bank.tools import TODAY, caller_id, role_of

DAILY_PAYEE_LIMIT = {"standard": 2000, "plus": 5000, "premier": 10000}  # payments to payees sent per account per day
CARD_LIMIT_MAX = {"standard": 1000, "plus": 2500, "premier": 5000}  # highest daily card limit
FEE_REFUNDS_PER_YEAR = {"standard": 1, "plus": 2, "premier": 4}  # fee refunds per account owner in 365 days
SAVINGS_TRANSFERS_PER_MONTH = 6  # transfers and payments out of a savings account per calendar month
DISPUTE_WINDOW_DAYS = 60  # a card charge is disputed within this many days of its date
STANDING_ORDER_MAX_DAYS = 365  # a standing order starts after today and within a year

#: writes that move or manage an account's money: only its owner or a joint owner may make them
OWNER_ACTIONS = ("transfer_between_accounts", "pay_payee", "reverse_payment", "refund_fee", "dispute_transaction",
                 "create_standing_order", "cancel_standing_order", "set_card_limit")


def _row(state: State, table: str, arguments: dict, key: str) -> dict | None:
    value = arguments.get(key)
    return state[table].peek(value) if isinstance(value, str) else None


def account_of(state: State, action_name: str, arguments: dict) -> dict | None:
    """The account an action reads or changes (the source account of a transfer), or None."""
    if isinstance(arguments.get("from_account_id"), str):
        return _row(state, "accounts", arguments, "from_account_id")
    if isinstance(arguments.get("account_id"), str):
        return _row(state, "accounts", arguments, "account_id")
    for table, key in (("transactions", "transaction_id"), ("standing_orders", "standing_order_id"),
                       ("cards", "card_id")):
        row = _row(state, table, arguments, key)
        if row is not None:
            return state["accounts"].peek(row["account_id"])
    return None


def owner_tier(state: State, account: dict) -> str:
    owner = next(h["customer_id"] for h in account["holders"] if h["role"] == "owner")
    return state["customers"].peek(owner)["tier"]


# --------------------------------------------------------------------------- rules


@rule
def own_records_only(state: State, action_name: str, arguments: dict) -> str | None:
    """The verified caller reads and acts only on their own profile, accounts and cards (both accounts of a transfer)."""
    caller = caller_id(state)
    if caller is None or action_name in ("verify_identity", "transfer_to_human_agents"):
        return None
    customer_id = arguments.get("customer_id")
    if isinstance(customer_id, str) and customer_id != caller:
        return "the verified caller may only see their own profile"
    card = _row(state, "cards", arguments, "card_id")
    if card is not None and card["cardholder_id"] == caller:
        return None
    accounts = [a for a in (account_of(state, action_name, arguments), _row(state, "accounts", arguments, "to_account_id"))
                if a is not None]
    for account in accounts:
        if role_of(state, account, caller) is None:
            return f"account {account['account_number']} is not held by the verified caller"
    return None


@rule
def owner_or_joint_owner(state: State, action_name: str, arguments: dict) -> str | None:
    """An authorised user may view an account and manage their own card, but only an owner or joint owner moves or manages its money."""
    caller = caller_id(state)
    account = account_of(state, action_name, arguments)
    if action_name not in OWNER_ACTIONS or caller is None or account is None:
        return None
    if role_of(state, account, caller) != "authorised_user":
        return None
    return f"the caller is an authorised user of account {account['account_number']}: only its owners may do this"


@rule
def daily_payee_limit(state: State, action_name: str, arguments: dict) -> str | None:
    """Payments to payees sent from one account in one day total at most the owner's tier limit (2,000 / 5,000 / 10,000)."""
    account, amount = account_of(state, action_name, arguments), arguments.get("amount")
    if action_name != "pay_payee" or account is None or not isinstance(amount, (int, float)):
        return None
    limit = DAILY_PAYEE_LIMIT[owner_tier(state, account)]
    sent = sum(-t["amount"] for tid in account["transaction_ids"]
               if (t := state["transactions"].peek(tid))["type"] == "payee_payment" and t.get("sent_on") == TODAY
               and t["status"] != "reversed")
    if sent + amount <= limit + 1e-9:
        return None
    return f"payments to payees from account {account['account_number']} may total {limit} a day; {sent:g} already sent today"


@rule
def savings_transfer_limit(state: State, action_name: str, arguments: dict) -> str | None:
    """At most 6 transfers or payments leave a savings account per calendar month."""
    account = account_of(state, action_name, arguments)
    if action_name not in ("transfer_between_accounts", "pay_payee") or account is None or account["type"] != "savings":
        return None
    used = sum(1 for tid in account["transaction_ids"]
               if (t := state["transactions"].peek(tid))["type"] in ("transfer_out", "payee_payment")
               and t["date"][:7] == TODAY[:7] and t["status"] != "reversed")
    if used < SAVINGS_TRANSFERS_PER_MONTH:
        return None
    return f"savings account {account['account_number']} already made {used} transfers out this month (at most 6)"


@rule
def dispute_window(state: State, action_name: str, arguments: dict) -> str | None:
    """A card charge is disputed within 60 days of its date."""
    row = _row(state, "transactions", arguments, "transaction_id")
    if action_name != "dispute_transaction" or row is None:
        return None
    age = (_dt.date.fromisoformat(TODAY) - _dt.date.fromisoformat(row["date"])).days
    if age <= DISPUTE_WINDOW_DAYS:
        return None
    return f"the charge of {row['date']} is {age} days old: disputes are opened within {DISPUTE_WINDOW_DAYS} days"


@rule
def dispute_settled_card_charges_only(state: State, action_name: str, arguments: dict) -> str | None:
    """Only a settled card purchase is disputed (a pending one is not yet final; payments and fees are not card charges)."""
    row = _row(state, "transactions", arguments, "transaction_id")
    if action_name != "dispute_transaction" or row is None:
        return None
    if row["type"] != "card":
        return f"transaction {row['transaction_id']} is a {row['type'].replace('_', ' ')}, not a card purchase"
    if row["status"] == "pending":
        return f"the card charge {row['transaction_id']} is still pending: it can be disputed once it settles"
    return None


@rule
def no_reversal_after_settlement(state: State, action_name: str, arguments: dict) -> str | None:
    """A payment to a payee is reversed only while it is pending; a settled payment is final."""
    row = _row(state, "transactions", arguments, "transaction_id")
    if action_name != "reverse_payment" or row is None or row["status"] != "settled":
        return None
    return f"the payment {row['transaction_id']} settled on {row['date']}: settled payments cannot be reversed"


@rule
def fee_refund_allowance(state: State, action_name: str, arguments: dict) -> str | None:
    """An account owner gets at most 1 (standard), 2 (plus) or 4 (premier) fee refunds in 365 days."""
    account = account_of(state, action_name, arguments)
    if action_name != "refund_fee" or account is None:
        return None
    owner = state["customers"].peek(next(h["customer_id"] for h in account["holders"] if h["role"] == "owner"))
    since = (_dt.date.fromisoformat(TODAY) - _dt.timedelta(days=365)).isoformat()
    used = sum(1 for r in owner["fee_refunds"] if r["date"] > since)
    allowed = FEE_REFUNDS_PER_YEAR[owner["tier"]]
    if used < allowed:
        return None
    return f"a {owner['tier']} customer gets {allowed} fee refund(s) a year; {used} already given"


@rule
def card_limit_by_tier(state: State, action_name: str, arguments: dict) -> str | None:
    """A card's daily limit is at most 1,000 (standard), 2,500 (plus) or 5,000 (premier), by the account owner's tier."""
    account, limit = account_of(state, action_name, arguments), arguments.get("daily_limit")
    if action_name != "set_card_limit" or account is None or not isinstance(limit, int):
        return None
    tier = owner_tier(state, account)
    if limit <= CARD_LIMIT_MAX[tier]:
        return None
    return f"a {tier} account's cards have a daily limit of at most {CARD_LIMIT_MAX[tier]}"


@rule
def fraud_hold(state: State, action_name: str, arguments: dict) -> str | None:
    """A card the fraud team froze is not unfrozen by the agent (the fraud team releases it)."""
    card = _row(state, "cards", arguments, "card_id")
    if action_name != "set_card_status" or card is None or arguments.get("status") != "active":
        return None
    if card["frozen_by"] != "fraud_team":
        return None
    return f"the card ending {card['last_four']} is frozen by the fraud team: only they can release it"


@rule
def standing_order_start(state: State, action_name: str, arguments: dict) -> str | None:
    """A standing order's first payment is after today and within a year."""
    start = arguments.get("start_date")
    if action_name != "create_standing_order" or not isinstance(start, str):
        return None
    try:
        days = (_dt.date.fromisoformat(start) - _dt.date.fromisoformat(TODAY)).days
    except ValueError:
        return None
    if 0 < days <= STANDING_ORDER_MAX_DAYS:
        return None
    return f"a standing order starts after today and within {STANDING_ORDER_MAX_DAYS} days, not on {start}"


RULES: list[Rule] = [
    own_records_only,
    owner_or_joint_owner,
    daily_payee_limit,
    savings_transfer_limit,
    dispute_window,
    dispute_settled_card_charges_only,
    no_reversal_after_settlement,
    fee_refund_allowance,
    card_limit_by_tier,
    fraud_hold,
    standing_order_start,
]


def violations(state: State, action_name: str, arguments: dict) -> list[str]:
    """Every rule's complaint about one action (empty when the action is policy-valid)."""
    return [msg for r in RULES if (msg := r(state, action_name, arguments))]
