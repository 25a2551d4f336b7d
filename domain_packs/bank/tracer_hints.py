"""Tracer hints for the bank pack: who the caller is and how each goal tool is grounded.

The Tracer (`tau_emotion.tracer`) samples workflows from the tool graph and validates them; this
module is the banking knowledge it needs to turn a goal tool into a concrete request on the
database (see `tau_emotion.tracer.hints`). The caller proves who they are with their phone number,
date of birth and ZIP code, names an account by its type (and the last digits of its number when
they hold two of a type), a card by its last four digits, a payee by its name and a transaction by
its merchant or payee, date and amount; the agent finds the ids.

Goals: move money between own accounts (a loan payment or payoff among them), pay a payee, recall a
pending payment, refund a fee, dispute a card charge, freeze, unfreeze, replace or limit a card, set
up or cancel a standing order. Challenges: one per policy rule (`rules.py`) a caller can run into.
"""

from __future__ import annotations

from typing import Any

from tau_emotion.domain_packs.bank.rules import (
    CARD_LIMIT_MAX,
    DAILY_PAYEE_LIMIT,
    DISPUTE_WINDOW_DAYS,
    owner_tier,
)
from tau_emotion.domain_packs.bank.tools import EXPRESS_CARD_FEE, TODAY, available, role_of
from tau_emotion.tracer.hints import (
    Choice,
    GroundingContext,
    IntentDraft,
    Mood,
    Option,
    Output,
    Persona,
    Reference,
    Refusal,
    TracerHints,
    days_between,
    draft,
    fact_wording,
    goals_in,
    money,
    month_day,
    need,
    per_database,
    settle,
    shift_date,
    used_by_earlier_intents,
)

OCCASIONS = [
    ("{{I}} {{am}} saving for a deposit on {{my}} first home", 2, "positive"),
    ("{{I}} just started a new job", 1, "positive"),
    ("{{my}} daughter is starting college this month", 2, "positive"),
    ("{{I}} lost {{my}} job last month and every dollar counts", 3, "negative"),
    ("{{I}} {{am}} sorting out {{my}} late father's bills", 3, "negative"),
    ("{{I}} {{am}} travelling for work this week", 1, "neutral"),
    ("{{I}} {{am}} going through a divorce and untangling {{my}} finances", 2, "negative"),
    ("{{I}} {{am}} getting married next month", 2, "positive"),
    ("{{I}} run a small business and keep a close eye on {{my}} cash", 2, "neutral"),
    ("it is just a routine question", 0, "neutral"),
]

_REASON_WORDS = {"not_recognised": "you do not recognise it", "not_received": "you never received what you paid for",
                 "duplicate": "you were charged twice for it", "wrong_amount": "you were charged the wrong amount"}
_REASON_ASK = {"not_recognised": "a charge {{I}} do not recognise", "not_received": "a charge for something {{I}} never received",
               "duplicate": "a charge {{I}} paid twice", "wrong_amount": "a charge for the wrong amount"}


def _day(date: str) -> str:
    return month_day(date)


fact_phrase = fact_wording({
    "account": ("the account is your {}", "the accounts are your {} respectively"),
    "from_account": ("the money comes from your {}", "the money comes from your {} respectively"),
    "to_account": ("the money goes to your {}", "the money goes to your {} respectively"),
    "amount": ("the amount is ${}", "the amounts are ${} respectively"),
    "payee": ("the payee is {}", "the payees are {} respectively"),
    "merchant": ("the charge is from {}", "the charges are from {} respectively"),
    "charge_date": ("it is dated {}", "they are dated {} respectively", _day),
    "charge_amount": ("it is for ${}", "they are for ${} respectively"),
    "payment_date": ("you sent the payment on {}", "you sent the payments on {} respectively", _day),
    "fee": ("the fee is the {}", "the fees are the {} respectively"),
    "dispute_reason": ("the reason is that {}", "the reasons are that {} respectively", _REASON_WORDS),
    "card_last_four": ("the card ends in {}", "the cards end in {} respectively"),
    "card_problem": ("the card was {}", "the cards were {} respectively"),
    "delivery": ("you want {} delivery", "you want {} delivery respectively", {"True": "express", "False": "standard"}),
    "card_status": ("you want the card {}", "you want the cards {} respectively", {"frozen": "frozen", "active": "unfrozen"}),
    "daily_limit": ("the daily limit you want is ${}", "the daily limits you want are ${} respectively"),
    "frequency": ("it is paid {}", "they are paid {} respectively"),
    "start_date": ("the first payment is on {}", "the first payments are on {} respectively", _day),
})


# --------------------------------------------------------------------------- lookups


def _people(db: Any) -> tuple[list[str], list[str], list[str]]:
    """(customers with an open checking or savings account, those of them with a loan, authorised users)."""
    accounts = db.tables["accounts"]
    everyone, loans, users = [], [], []
    for cid, c in db.tables["customers"].items():
        mine = [accounts[a] for a in c["account_ids"]]
        if any(a["type"] != "loan" and a["status"] == "open" for a in mine):
            everyone.append(cid)
            loans += [cid] * any(a["type"] == "loan" for a in mine)
            users += [cid] * any(h == {"customer_id": cid, "role": "authorised_user"} for a in mine for h in a["holders"])
    return everyone, loans, users


def _customer(ctx: GroundingContext) -> dict:
    return ctx.state["customers"].peek(ctx.persona.entity)


def _accounts(ctx: GroundingContext, *roles: str) -> list[dict]:
    """The caller's accounts (in the given roles, default any), in their profile's order."""
    rows = ctx.rows("accounts", _customer(ctx)["account_ids"])
    return [a for a in rows if not roles or role_of(ctx.state, a, ctx.persona.entity) in roles]


_OWNERS = ("owner", "joint_owner")


def _fresh(ctx: GroundingContext, rows: list[dict], key: str) -> list[dict]:
    used = used_by_earlier_intents(ctx, key, reads=True)
    return [r for r in rows if r[key] not in used]


def _account_ref(ctx: GroundingContext, account: dict, key: str = "account") -> Reference:
    """An account as the caller names it: by its type, and the last digits of its number when that is not enough."""
    options = [Option(a["account_id"], {"type": a["type"], "last_four": a["account_number"][-4:]})
               for a in _accounts(ctx)]
    wanted = {"type": account["type"], "last_four": account["account_number"][-4:]}
    choice = need(settle("account", account["account_id"], options, wanted, [("type",), ("type", "last_four")]))
    words = f"{account['type']} account" + (f" ending in {wanted['last_four']}" if "last_four" in choice.selectors else "")
    return Reference(f"{{{{my}}}} {words}", facts={key: words}, choices=[choice],
                     reads={"get_account_details": [{"account_id": account["account_id"]}]}, evidence=["get_account_details"])


def _card_ref(ctx: GroundingContext, card: dict, account: bool = False) -> Reference:
    """A card by its last four digits; with `account`, its account is read too (the owner's tier, the fee's account)."""
    cards = ctx.rows("cards", _customer(ctx)["card_ids"])
    reads = {"get_card_details": [{"card_id": card["card_id"]}]}
    if account:
        reads["get_account_details"] = [{"account_id": card["account_id"]}]
    return Reference(f"{{{{my}}}} card ending in {card['last_four']}", facts={"card_last_four": card["last_four"]},
                     choices=[Choice.among("card", card, cards, "card_id", "last_four")], reads=reads,
                     evidence=["get_card_details", *(["get_account_details"] * account)], reads_first=True)


def _rows(ctx: GroundingContext, account: dict, kind: str) -> list[dict]:
    return [t for t in ctx.rows("transactions", account["transaction_ids"]) if t["type"] == kind]


def _tx_ref(ctx: GroundingContext, account: dict, row: dict, what: str) -> Reference:
    """A transaction named by its merchant (or payee or fee), its date and, when that is not enough, its amount."""
    name = row["description"].removeprefix("Payment to ")
    rows = _rows(ctx, account, row["type"])
    # a payment is dated by the day it was sent (a pending one carries its later value date)
    options = [Option(t["transaction_id"], {"name": t["description"].removeprefix("Payment to "),
                                            "date": t.get("sent_on") or t["date"], "amount": money(-t["amount"])})
               for t in rows]
    date = options[rows.index(row)].attrs["date"]
    choice = need(settle(what, row["transaction_id"], options, options[rows.index(row)].attrs,
                         [("name", "date"), ("name", "date", "amount")]))
    key = {"charge": "merchant", "payment": "payee", "fee": "fee"}[what]
    name = name[0].lower() + name[1:] if what == "fee" else name
    facts = {key: name, ("payment_date" if what == "payment" else "charge_date"): date}
    amount = f" of ${money(-row['amount'])}" if "amount" in choice.selectors else ""
    if amount:
        facts["charge_amount"] = money(-row["amount"])
    acc = _account_ref(ctx, account)
    day = "today" if date == TODAY else _day(date)
    phrase = {"charge": f"the {name} charge{amount} of {day} on {acc.phrase}",
              "payment": f"the payment{amount} {{{{I}}}} sent to {name} {'' if day == 'today' else 'on '}{day} from {acc.phrase}",
              "fee": f"the {name}{amount} charged to {acc.phrase} on {day}"}[what]
    return Reference(phrase, facts={**acc.facts, **facts}, choices=[*acc.choices, choice],
                     reads={**acc.reads, "get_transactions": [{"account_id": account["account_id"]}]},
                     evidence=[*acc.evidence, "get_transactions"])


def _payee_choice(ctx: GroundingContext, payee: dict) -> Choice:
    return Choice.among("payee", payee, ctx.rows("payees", _customer(ctx)["payee_ids"]), "payee_id", "name")


def _last_payment(ctx: GroundingContext, account: dict, payee: dict) -> float | None:
    """What the caller last paid `payee`, when that payment left `account` and no other payment was the same day."""
    paid = [t for a in _accounts(ctx) for t in _rows(ctx, a, "payee_payment")
            if t.get("payee_id") == payee["payee_id"] and t["status"] != "reversed"]
    if not paid:
        return None
    day = max(t["sent_on"] for t in paid)
    last = [t for t in paid if t["sent_on"] == day]
    return -last[0]["amount"] if len(last) == 1 and last[0]["account_id"] == account["account_id"] else None


def _sent_today(ctx: GroundingContext, account: dict) -> float:
    return sum(-t["amount"] for t in _rows(ctx, account, "payee_payment") if t.get("sent_on") == TODAY
               and t["status"] != "reversed")


# --------------------------------------------------------------------------- persona


def persona(ctx: GroundingContext) -> Persona | None:
    everyone, loans, users = per_database(ctx, _people)
    roll = ctx.rng.random()
    cid = ctx.rng.choice(users if roll < 0.08 else loans if roll < 0.45 else everyone)
    c = ctx.state["customers"].peek(cid)
    facts = {"first_name": c["first_name"], "last_name": c["last_name"], "phone_number": c["phone_number"],
             "date_of_birth": c["date_of_birth"], "zip_code": c["address"]["zip"]}
    return Persona(name=f"{c['first_name']} {c['last_name']}", facts=facts,
                   reads={"verify_identity": [{k: facts[k] for k in ("phone_number", "date_of_birth", "zip_code")}],
                          "get_customer_profile": [{"customer_id": cid}]},
                   entity=cid, identified={"session": {"current": {"caller_id": cid}}})


_AUTHORISED = Refusal("authorised_user", "authorised user")


# --------------------------------------------------------------------------- moving money


def ground_transfer_between_accounts(ctx: GroundingContext) -> IntentDraft | None:
    sources = [a for a in _fresh(ctx, _accounts(ctx), "account_id") if a["type"] != "loan" and a["status"] == "open"]
    if ctx.want_challenge:
        source = ctx.choose([a for a in sources if a["type"] == "savings"
                             or role_of(ctx.state, a, ctx.persona.entity) == "authorised_user"])
    else:
        source = ctx.choose([a for a in sources if role_of(ctx.state, a, ctx.persona.entity) in _OWNERS])
    targets = [a for a in _accounts(ctx, *_OWNERS) if a["account_id"] != source["account_id"] and a["status"] == "open"]
    loans = [a for a in targets if a["type"] == "loan"]
    target = ctx.choose(loans if loans and ctx.rng.random() < 0.7 else targets)
    loan = target["type"] == "loan"
    if loan:
        payoff = ctx.rng.random() < 0.35 and target["balance"] <= available(source)
        amount = target["balance"] if payoff else target["loan"]["monthly_payment"]
    else:
        amount = ctx.rng.choice([100, 200, 250, 500, 750, 1000, 1500])
    args = {"from_account_id": source["account_id"], "to_account_id": target["account_id"], "amount": amount}
    need(amount <= available(source))
    found = ctx.violations("transfer_between_accounts", args)
    need(len(found) == int(ctx.want_challenge))
    src, dst = _account_ref(ctx, source, "from_account"), _account_ref(ctx, target, "to_account")
    ref = Reference(src.phrase, {**src.facts, **dst.facts}, [*src.choices, *dst.choices],
                    {"get_account_details": [*src.reads["get_account_details"], *dst.reads["get_account_details"]]})
    if loan:
        what = "pay off" if payoff else "make next month's payment on"
        request = [f"{what} {dst.phrase} from {src.phrase}", f"use {src.phrase} to {what} {dst.phrase}"]
        ask = "what is left to pay on {{my}} loan" if payoff else "the monthly payment on {{my}} loan"
        mood = Mood("{{I}} want to " + ("be free of {{my}} loan" if payoff else "get ahead on {{my}} loan"),
                    "positive", 2 if payoff else 1, None)
        outputs, facts = [Output(money(amount), ask)], {}
    else:
        request = [f"move ${money(amount)} from {src.phrase} to {dst.phrase}",
                   f"transfer ${money(amount)} from {src.phrase} into {dst.phrase}"]
        mood = Mood("{{I}} need to move some money around", "neutral", 1, None)
        outputs, facts = [], {"amount": money(amount)}
    if ctx.want_challenge:
        refusal = _AUTHORISED if found[0].rule == "owner_or_joint_owner" else \
            Refusal("savings_withdrawals", "6 transfers", "savings_limit")
        need(found[0].rule in ("owner_or_joint_owner", "savings_transfer_limit"))
        return draft(refusal.kind or "transfer_authorised_user", "transfer_between_accounts", args, request, ref,
                     refusal=refusal, facts=facts, evidence=["get_account_details"], mood=mood)
    return draft("loan_payoff" if loan and payoff else "loan_payment" if loan else "transfer", "transfer_between_accounts",
                 args, request, ref, facts=facts, evidence=["get_account_details"], outputs=outputs,
                 decline="leave the loan as it is" if loan else None, mood=mood)


def ground_pay_payee(ctx: GroundingContext) -> IntentDraft | None:
    payees = _fresh(ctx, ctx.rows("payees", _customer(ctx)["payee_ids"]), "payee_id")
    payee = ctx.choose(payees)
    accounts = [a for a in _fresh(ctx, _accounts(ctx), "account_id") if a["type"] != "loan" and a["status"] == "open"]
    account = ctx.choose(accounts)
    tier = owner_tier(ctx.state, account)
    left = DAILY_PAYEE_LIMIT[tier] - _sent_today(ctx, account)
    last = _last_payment(ctx, account, payee)
    same = not ctx.want_challenge and last is not None and ctx.rng.random() < 0.8
    if ctx.want_challenge and role_of(ctx.state, account, ctx.persona.entity) != "authorised_user":
        need(ctx.rng.random() < 0.5)  # most callers can overshoot their daily limit: leave room for other challenges
        amount = ctx.choose([a for a in (left + 250, left + 500, left + 1000, 2 * left) if 0 < a <= available(account)])
        amount = round(amount / 50) * 50 + 50
    elif same:
        amount = last
    else:
        amount = ctx.rng.choice([40, 75, 120, 200, 350, 500, 800])
    args = {"from_account_id": account["account_id"], "payee_id": payee["payee_id"], "amount": amount}
    need(amount <= available(account))
    found = ctx.violations("pay_payee", args)
    need(len(found) == int(ctx.want_challenge))
    ref = _account_ref(ctx, account, "from_account")
    mood = Mood("{{I}} need to pay " + payee["name"], "neutral", 1, 1)
    if same:
        return draft("pay_same", "pay_payee", args,
                     [f"send {payee['name']} the same amount as {{{{my}}}} last payment to them, from {ref.phrase}"], ref,
                     facts={"payee": payee["name"]}, choices=[_payee_choice(ctx, payee)],
                     reads={"get_transactions": [{"account_id": account["account_id"]}]}, evidence=["get_transactions"],
                     outputs=[Output(money(amount), "the amount of {{my}} last payment to " + payee["name"])],
                     policy_values=[amount],  # the payment's amount is the row's, negated
                     decline="not send anything today", mood=mood)
    request = [f"pay {payee['name']} ${money(amount)} from {ref.phrase}", f"send ${money(amount)} to {payee['name']} from {ref.phrase}"]
    if ctx.want_challenge:
        rule = found[0].rule
        need(rule in ("owner_or_joint_owner", "daily_payee_limit"))
        refusal = _AUTHORISED if rule == "owner_or_joint_owner" else Refusal("daily_limit", "daily payment limit", "over_daily_limit")
        return draft(refusal.kind or "pay_authorised_user", "pay_payee", args, request, ref, refusal=refusal,
                     facts={"payee": payee["name"], "amount": money(amount)}, choices=[_payee_choice(ctx, payee)],
                     reads={"get_transactions": [{"account_id": account["account_id"]}]}, evidence=["get_transactions"],
                     on_refusal="transfer" if ctx.is_last and ctx.rng.random() < 0.3 else "accept",
                     handoff_summary=f"caller wants to pay {payee['name']} {money(amount)}, refused by policy", mood=mood)
    return draft("pay", "pay_payee", args, request, ref, facts={"payee": payee["name"], "amount": money(amount)},
                 choices=[_payee_choice(ctx, payee)], mood=mood)


def ground_reverse_payment(ctx: GroundingContext) -> IntentDraft | None:
    need(not ctx.want_challenge or ctx.rng.random() < 0.5)  # every payer has settled payments: leave room for others
    status = "settled" if ctx.want_challenge else "pending"
    found = [(a, t) for a in _accounts(ctx, *_OWNERS) for t in _rows(ctx, a, "payee_payment")
             if t["status"] == status and days_between(t["date"], TODAY) <= 40]
    account, row = ctx.choose([f for f in found if f[1]["transaction_id"] not in used_by_earlier_intents(ctx, "transaction_id")])
    args = {"transaction_id": row["transaction_id"]}
    need(len(ctx.violations("reverse_payment", args)) == int(ctx.want_challenge))
    ref = _tx_ref(ctx, account, row, "payment")
    request = [f"stop {ref.phrase} and get the money back", f"recall {ref.phrase}"]
    mood = Mood("{{I}} sent a payment by mistake", "negative", 2, 0)
    if ctx.want_challenge:
        return draft("reverse_settled", "reverse_payment", args, request, ref,
                     refusal=Refusal("payment_settled", "cannot be reversed"), mood=mood,
                     on_refusal="transfer" if ctx.is_last and ctx.rng.random() < 0.4 else "accept",
                     handoff_summary="caller wants a settled payment reversed")
    return draft("reverse", "reverse_payment", args, request, ref, mood=mood,
                 outputs=[Output(money(-row["amount"]), "how much comes back", from_goal=True)])


def ground_refund_fee(ctx: GroundingContext) -> IntentDraft | None:
    found = [(a, t) for a in _fresh(ctx, _accounts(ctx, *_OWNERS), "account_id") for t in _rows(ctx, a, "fee")
             if not t["refunded"] and t["date"] >= "2025-08-01" and t.get("fee_kind") != "monthly"]
    account, row = ctx.choose(found)
    args = {"transaction_id": row["transaction_id"]}
    need(len(ctx.violations("refund_fee", args)) == int(ctx.want_challenge))
    ref = _tx_ref(ctx, account, row, "fee")
    request = [f"have {ref.phrase} refunded", f"get a refund of {ref.phrase}"]
    mood = Mood("{{I}} think the fee was unfair", "negative", 1, None)
    if ctx.want_challenge:
        return draft("refund_used", "refund_fee", args, request, ref, refusal=Refusal("fee_refund_used", "allowance"),
                     mood=mood)
    return draft("refund", "refund_fee", args, request, ref, mood=mood,
                 outputs=[Output(money(-row["amount"]), "how much is refunded", from_goal=True)])


def ground_dispute_transaction(ctx: GroundingContext) -> IntentDraft | None:
    kind = ctx.rng.choice(["dispute_window", "transaction_pending"]) if ctx.want_challenge else None
    found = []
    for account in _fresh(ctx, _accounts(ctx, *_OWNERS), "account_id"):
        for t in _rows(ctx, account, "card"):
            age = days_between(t["date"], TODAY)
            fits = {None: t["status"] == "settled" and 3 <= age <= DISPUTE_WINDOW_DAYS - 5,
                    "dispute_window": t["status"] == "settled" and DISPUTE_WINDOW_DAYS < age <= 100,
                    "transaction_pending": t["status"] == "pending"}[kind]
            if fits and not t["disputed"] and -t["amount"] >= 15:
                found.append((account, t))
    account, row = ctx.choose(found)
    reason = ctx.rng.choice(sorted(_REASON_WORDS))
    args = {"transaction_id": row["transaction_id"], "reason": reason}
    need(len(ctx.violations("dispute_transaction", args)) == int(bool(kind)))
    ref = _tx_ref(ctx, account, row, "charge")
    request = [f"dispute {ref.phrase}", f"open a dispute on {ref.phrase}"]
    mood = Mood("{{I}} found " + _REASON_ASK[reason] + " on {{my}} account", "negative", 2 if -row["amount"] > 200 else 1,
                None)
    if kind:
        refusal = Refusal("dispute_window", "60 days", "dispute_too_old") if kind == "dispute_window" else \
            Refusal("transaction_pending", "pending charge", "dispute_pending")
        return draft(refusal.kind, "dispute_transaction", args, request, ref, refusal=refusal,
                     facts={"dispute_reason": reason}, mood=mood)
    return draft("dispute", "dispute_transaction", args, request, ref, facts={"dispute_reason": reason}, mood=mood,
                 outputs=[Output(money(-row["amount"]), "how much is credited back while it is investigated",
                                 from_goal=True)])


# --------------------------------------------------------------------------- cards


def _cards(ctx: GroundingContext, *statuses: str) -> list[dict]:
    cards = _fresh(ctx, ctx.rows("cards", _customer(ctx)["card_ids"]), "card_id")
    return [c for c in cards if c["status"] in statuses]


def ground_set_card_status(ctx: GroundingContext) -> IntentDraft | None:
    if ctx.want_challenge:
        card = ctx.choose([c for c in _cards(ctx, "frozen") if c["frozen_by"] == "fraud_team"])
        ref = _card_ref(ctx, card)
        return draft("unfreeze_fraud_hold", "set_card_status", {"card_id": card["card_id"], "status": "active"},
                     [f"unfreeze {ref.phrase}", f"take the freeze off {ref.phrase}"], ref, facts={"card_status": "active"},
                     refusal=Refusal("fraud_hold", "fraud team"), on_refusal="transfer" if ctx.is_last and ctx.rng.random() < 0.5 else "accept",
                     handoff_summary="caller wants a card on fraud hold unfrozen",
                     mood=Mood("{{my}} card was blocked and {{I}} cannot pay for anything", "negative", 2, 0))
    card = ctx.choose(_cards(ctx, "active") + [c for c in _cards(ctx, "frozen") if c["frozen_by"] == "customer"])
    ref = _card_ref(ctx, card)
    if card["status"] == "frozen":
        return draft("unfreeze", "set_card_status", {"card_id": card["card_id"], "status": "active"},
                     [f"unfreeze {ref.phrase}", f"turn {ref.phrase} back on"], ref, facts={"card_status": "active"},
                     mood=Mood("{{I}} found the card {{I}} thought {{I}} had lost", "positive", 1, 0))
    return draft("freeze", "set_card_status", {"card_id": card["card_id"], "status": "frozen"},
                 [f"freeze {ref.phrase}", f"put a freeze on {ref.phrase} for now"], ref, facts={"card_status": "frozen"},
                 mood=Mood("{{I}} cannot find {{my}} card", "negative", 2, 0))


_LOST = {"lost": ("lost", "{{I}} lost {{my}} card", 2), "stolen": ("stolen", "{{my}} wallet was stolen", 3),
         "damaged": ("damaged", "{{my}} card snapped in two", 1)}


def ground_replace_card(ctx: GroundingContext) -> IntentDraft | None:
    card = ctx.choose(_cards(ctx, "active", "frozen"))
    reason = ctx.rng.choice(sorted(_LOST))
    express = ctx.rng.random() < 0.5
    ref = _card_ref(ctx, card, account=express)
    said, event, stakes = _LOST[reason]
    fee = EXPRESS_CARD_FEE if express and _customer(ctx)["tier"] != "premier" else 0
    args = {"card_id": card["card_id"], "reason": reason, "express": express}
    need(not ctx.violations("replace_card", args))
    how = "express" if express else "standard"
    return draft(f"replace_{how}", "replace_card", args,
                 [f"replace {ref.phrase}, which was {said}, with {how} delivery",
                  f"have {ref.phrase} replaced because it was {said}, with the new one sent by {how} delivery"], ref,
                 facts={"card_problem": said, "delivery": express}, policy_values=[fee] if express else [],
                 outputs=[Output(money(fee), "what express delivery costs")] if express else [],
                 mood=Mood(event, "negative", stakes, 0))


def ground_set_card_limit(ctx: GroundingContext) -> IntentDraft | None:
    card = ctx.choose(_cards(ctx, "active"))
    account = ctx.state["accounts"].peek(card["account_id"])
    top = CARD_LIMIT_MAX[owner_tier(ctx.state, account)]
    user = role_of(ctx.state, account, ctx.persona.entity) == "authorised_user"
    if ctx.want_challenge:
        need(user or ctx.rng.random() < 0.4)  # any card can ask too much: leave room for other challenges
        limit = top if user else ctx.rng.choice([top + 500, top + 1000, 2 * top])
    else:
        limit = ctx.choose([v for v in (300, 500, 750, 1000, 1500, 2000, 2500, 4000, 5000) if v <= top and v != card["daily_limit"]])
    args = {"card_id": card["card_id"], "daily_limit": limit}
    found = ctx.violations("set_card_limit", args)
    need(len(found) == int(ctx.want_challenge))
    ref = _card_ref(ctx, card, account=True)
    request = [f"set the daily limit of {ref.phrase} to ${limit}", f"change the daily spending limit on {ref.phrase} to ${limit}"]
    up = limit > card["daily_limit"]
    mood = Mood("{{I}} have " + ("a big purchase coming up" if up else "been spending too much"), "neutral", 1, None)
    if ctx.want_challenge:
        refusal = _AUTHORISED if user else Refusal("limit_above_tier", "daily spending limit", "limit_above_tier")
        return draft(refusal.kind or "limit_authorised_user", "set_card_limit", args, request, ref, refusal=refusal,
                     facts={"daily_limit": limit}, mood=mood)
    return draft("limit_up" if up else "limit_down", "set_card_limit", args, request, ref, facts={"daily_limit": limit},
                 mood=mood)


# --------------------------------------------------------------------------- standing orders


def ground_create_standing_order(ctx: GroundingContext) -> IntentDraft | None:
    payee = ctx.choose(_fresh(ctx, ctx.rows("payees", _customer(ctx)["payee_ids"]), "payee_id"))
    account = ctx.choose([a for a in _accounts(ctx, *_OWNERS) if a["type"] == "checking" and a["status"] == "open"])
    frequency = ctx.rng.choice(["weekly", "monthly", "monthly"])
    amount = ctx.rng.choice([25, 50, 100, 150, 250, 400] if frequency == "weekly" else [100, 250, 500, 850, 1200])
    last = _last_payment(ctx, account, payee)
    same = not ctx.want_challenge and last is not None and ctx.rng.random() < 0.7
    if same:
        frequency, amount = "monthly", last
    start = TODAY if ctx.want_challenge else shift_date(TODAY, ctx.rng.randint(2, 40))
    args = {"from_account_id": account["account_id"], "payee_id": payee["payee_id"], "amount": amount,
            "frequency": frequency, "start_date": start}
    need(len(ctx.violations("create_standing_order", args)) == int(ctx.want_challenge))
    ref = _account_ref(ctx, account, "from_account")
    when = "today" if start == TODAY else f"on {_day(start)}"
    request = [f"set up a {frequency} payment of ${amount} to {payee['name']} from {ref.phrase}, starting {when}",
               f"pay {payee['name']} ${amount} {frequency} from {ref.phrase}, the first payment {when}"]
    facts = {"payee": payee["name"], "amount": money(amount), "frequency": frequency, "start_date": start}
    mood = Mood("{{I}} want {{my}} regular payments to " + payee["name"] + " to run by themselves", "neutral", 1, None)
    if same:
        del facts["amount"]
        return draft("standing_order_same", "create_standing_order", args,
                     [f"set up a monthly payment to {payee['name']} from {ref.phrase}, starting {when}, for the same "
                      f"amount as {{{{my}}}} last payment to them"], ref, facts=facts, choices=[_payee_choice(ctx, payee)],
                     reads={"get_transactions": [{"account_id": account["account_id"]}]}, evidence=["get_transactions"],
                     outputs=[Output(money(amount), "the amount of {{my}} last payment to " + payee["name"])],
                     policy_values=[amount], decline="not set up the standing order", mood=mood)
    if ctx.want_challenge:
        return draft("standing_order_today", "create_standing_order", args, request, ref, facts=facts,
                     choices=[_payee_choice(ctx, payee)], refusal=Refusal("standing_order_start_date", "after today"),
                     mood=mood)
    return draft("standing_order", "create_standing_order", args, request, ref, facts=facts,
                 choices=[_payee_choice(ctx, payee)], mood=mood)


def ground_cancel_standing_order(ctx: GroundingContext) -> IntentDraft | None:
    found = [(a, ctx.state["standing_orders"].peek(s)) for a in _accounts(ctx, *_OWNERS) for s in a["standing_order_ids"]]
    account, order = ctx.choose([f for f in found if f[1]["status"] == "active"
                                 and f[1]["standing_order_id"] not in used_by_earlier_intents(ctx, "standing_order_id")])
    same = [o for _, o in found if o["payee_name"] == order["payee_name"] and o["status"] == "active"]
    need(len(same) == 1)
    ref = _account_ref(ctx, account, "from_account")
    args = {"standing_order_id": order["standing_order_id"]}
    need(not ctx.violations("cancel_standing_order", args))
    options = [Option(o["standing_order_id"], {"payee": o["payee_name"]}) for _, o in found if o["status"] == "active"]
    return draft("cancel_standing_order", "cancel_standing_order", args,
                 [f"cancel the standing order to {order['payee_name']} on {ref.phrase}",
                  f"stop the regular payments to {order['payee_name']} from {ref.phrase}"], ref,
                 facts={"payee": order["payee_name"]},
                 choices=[Choice("standing order", order["standing_order_id"], options, {"payee": order["payee_name"]})],
                 evidence=["get_account_details"],
                 mood=Mood("{{my}} regular payments to " + order["payee_name"] + " are no longer needed", "neutral", 1, None))


HINTS = TracerHints(
    persona=persona,
    goals=goals_in(globals()),  # each ground_<tool> function above grounds <tool>
    # transfers (loan payments) and payments carry the decision rules; few cards are frozen or standing orders set
    goal_weights={"transfer_between_accounts": 1.6, "pay_payee": 1.5, "dispute_transaction": 1.2,
                  "reverse_payment": 0.8, "cancel_standing_order": 0.7, "set_card_status": 0.9,
                  "create_standing_order": 0.7, "set_card_limit": 0.7, "refund_fee": 1.3},
    entry_tools=["verify_identity"],
    handoff_tool="transfer_to_human_agents",
    occasions=OCCASIONS,
    occasion_intents=["loan_payoff", "loan_payment", "transfer", "pay", "pay_same", "standing_order", "standing_order_same", "limit_up",
                      "over_daily_limit", "savings_limit", "limit_above_tier"],
    fact_phrase=fact_phrase,
)
