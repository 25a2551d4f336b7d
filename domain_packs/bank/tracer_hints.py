"""Tracer hints for the bank pack (see `tau_emotion.tracer.hints`): the caller verified by phone number, date of birth
and ZIP code names an account by its type (and last digits when they hold two of a type), a card by its last four
digits, a payee by name and a transaction by its merchant or payee, date and amount; the agent finds the ids. A goal
per write tool; a challenge per policy rule of `rules.py` a caller runs into (all but `own_records_only`).
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
from tau_emotion.domain_packs.bank.tracer_situation import situation
from tau_emotion.tracer.hints import (
    Choice,
    GroundingContext,
    IntentDraft,
    Mood,
    Option,
    Output,
    Persona,
    Rate,
    Rates,
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
    # every customer's payroll still arrives (a deposit this month): no lost job, but a bill can leave anyone short
    ("a big car repair left {{me}} short this month and every dollar counts", 2, "negative"),
    ("{{I}} {{am}} sorting out {{my}} late father's bills", 3, "negative"),
    ("{{my}} mother died last month and {{I}} {{am}} putting {{my}} own finances in order", 3, "negative"),
    ("{{I}} {{am}} travelling for work this week", 1, "neutral"),
    ("{{I}} {{am}} going through a divorce and untangling {{my}} finances", 2, "negative"),
    ("{{I}} {{am}} getting married next month", 2, "positive"),
    ("{{I}} run a small business and keep a close eye on {{my}} cash", 2, "neutral"),
    ("it is just a routine matter", 0, "neutral"),  # every occasion intent here is a request, not a question
]

#: dispute reason -> (the instruction's words, what the caller found)
_REASONS = {"not_recognised": ("you do not recognise it", "a charge {{I}} do not recognise"),
            "not_received": ("you never received what you paid for", "a charge for something {{I}} never received"),
            "duplicate": ("you were charged twice for it", "a charge {{I}} paid twice"),
            "wrong_amount": ("you were charged the wrong amount", "a charge for the wrong amount")}
_OWNERS = ("owner", "joint_owner")

class BankRates(Rates):
    #: shares of the callers drawn among authorised users of an account, and among loan holders (the rest: anyone)
    authorised_user_persona: Rate = 0.08
    loan_persona: Rate = 0.52
    #: a transfer goes to one of the caller's loans when they have one; it pays the loan off when the money is there
    loan_transfer: Rate = 0.85
    loan_payoff: Rate = 0.35
    #: a payment or standing order repeats the caller's last payment to that payee (the agent looks the amount up)
    repeat_payment: Rate = 0.9
    repeat_standing_order: Rate = 0.85
    #: challenges most callers can make, kept from crowding out the others: over the daily payee limit, reversing a
    #: settled payment, a card limit over the tier's maximum, a standing order starting today
    daily_limit_challenge: Rate = 0.25
    settled_reversal_challenge: Rate = 0.5
    card_limit_challenge: Rate = 0.4
    start_today_challenge: Rate = 0.5
    #: a refused caller insists on a person (as the task's last request): a payment over the limit, a settled
    #: reversal, a card on fraud hold
    payment_insists: Rate = 0.3
    reversal_insists: Rate = 0.4
    fraud_hold_insists: Rate = 0.5
    #: a replacement card goes by express delivery
    express_card: Rate = 0.5

_AUTHORISED = Refusal("authorised_user", "authorised user")

fact_phrase = fact_wording({
    "account": ("the account is your {}", "the accounts are your {} respectively"),
    "from_account": ("the money comes from your {}", "the money comes from your {} respectively"),
    "to_account": ("the money goes to your {}", "the money goes to your {} respectively"),
    "amount": ("the amount is ${}", "the amounts are ${} respectively"),
    "payee": ("the payee is {}", "the payees are {} respectively"),
    "merchant": ("the charge is from {}", "the charges are from {} respectively"),
    "charge_date": ("it is dated {}", "they are dated {} respectively", month_day),
    "charge_amount": ("it is for ${}", "they are for ${} respectively"),
    "payment_date": ("you sent the payment on {}", "you sent the payments on {} respectively", month_day),
    "fee": ("the fee is the {}", "the fees are the {} respectively"),
    "dispute_reason": ("the reason is that {}", "the reasons are that {}", {k: v[0] for k, v in _REASONS.items()}),
    "card_last_four": ("the card ends in {}", "the cards end in {} respectively"),
    "card_problem": ("the card was {}", "the cards were {} respectively"),
    "delivery": ("you want {} delivery", "you want {} delivery respectively", {"True": "express", "False": "standard"}),
    "card_status": ("you want the card {}", "you want the cards {}", {"frozen": "frozen", "active": "unfrozen"}),
    "daily_limit": ("the daily limit you want is ${}", "the daily limits you want are ${} respectively"),
    "frequency": ("it is paid {}", "they are paid {} respectively"),
    "start_date": ("the first payment is on {}", "the first payments are on {} respectively", month_day),
}, unsaid=("card_status",))  # a freeze or unfreeze request says what the card should become

def _people(db: Any) -> tuple[list[str], list[str], list[str]]:
    """(customers with an open checking or savings account, those of them with a loan, authorised users)."""
    mine = {cid: [db.tables["accounts"][a] for a in c["account_ids"]] for cid, c in db.tables["customers"].items()}
    everyone = [cid for cid, rows in mine.items() if any(a["type"] != "loan" and a["status"] == "open" for a in rows)]
    users = [cid for cid in everyone if any({"customer_id": cid, "role": "authorised_user"} in a["holders"]
                                            for a in mine[cid])]
    return everyone, [cid for cid in everyone if any(a["type"] == "loan" for a in mine[cid])], users

def _customer(ctx: GroundingContext) -> dict:
    return ctx.state["customers"].peek(ctx.persona.entity)

def _role(ctx: GroundingContext, account: dict) -> str | None:
    return role_of(ctx.state, account, ctx.persona.entity)

def _accounts(ctx: GroundingContext, *roles: str) -> list[dict]:
    """The caller's accounts (in the given roles, default any), in their profile's order."""
    return [a for a in ctx.rows("accounts", _customer(ctx)["account_ids"]) if not roles or _role(ctx, a) in roles]

def _spending(ctx: GroundingContext, *roles: str) -> list[dict]:
    """The caller's open checking and savings accounts no earlier intent touched."""
    rows = ctx.fresh(_accounts(ctx, *roles), "account_id", reads=True)
    return [a for a in rows if a["type"] != "loan" and a["status"] == "open"]

def _account_ref(ctx: GroundingContext, account: dict, key: str = "account") -> Reference:
    """An account as the caller names it: by its type, and the last digits of its number when that is not enough."""
    options = [Option(a["account_id"], {"type": a["type"], "last_four": a["account_number"][-4:]})
               for a in _accounts(ctx)]
    wanted = {"type": account["type"], "last_four": account["account_number"][-4:]}
    choice = need(settle("account", account["account_id"], options, wanted, [("type",), ("type", "last_four")]))
    words = f"{account['type']} account" + (f" ending in {wanted['last_four']}" * ("last_four" in choice.selectors))
    return Reference(f"{{{{my}}}} {words}", facts={key: words}, choices=[choice], evidence=["get_account_details"],
                     reads={"get_account_details": [{"account_id": account["account_id"]}]})

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
    rows = _rows(ctx, account, row["type"])
    # a payment is dated by the day it was sent (a pending one carries its later value date)
    options = [Option(t["transaction_id"], {"name": t["description"].removeprefix("Payment to "),
                                            "date": t.get("sent_on") or t["date"], "amount": money(-t["amount"])})
               for t in rows]
    said = options[rows.index(row)].attrs
    choice = need(settle(what, row["transaction_id"], options, said, [("name", "date"), ("name", "date", "amount")]))
    name = said["name"][0].lower() + said["name"][1:] if what == "fee" else said["name"]
    facts = {{"charge": "merchant", "payment": "payee", "fee": "fee"}[what]: name,
             ("payment_date" if what == "payment" else "charge_date"): said["date"]}
    amount = f" of ${said['amount']}" if "amount" in choice.selectors else ""
    if amount:
        facts["charge_amount"] = said["amount"]
    acc = _account_ref(ctx, account)
    day = "today" if said["date"] == TODAY else month_day(said["date"])
    phrase = {"charge": f"the {name} charge{amount} of {day} on {acc.phrase}",
              "payment": f"the payment{amount} {{{{I}}}} sent to {name} {'' if day == 'today' else 'on '}{day} "
                         f"from {acc.phrase}",
              "fee": f"the {name}{amount} charged to {acc.phrase} on {day}"}[what]
    return Reference(phrase, facts={**acc.facts, **facts}, choices=[*acc.choices, choice],
                     reads={**acc.reads, "get_transactions": [{"account_id": account["account_id"]}]},
                     evidence=[*acc.evidence, "get_transactions"])

def _payees(ctx: GroundingContext) -> list[dict]:
    named = used_by_earlier_intents(ctx, "payee")  # no payment recalled, then another sent to the same payee
    return [p for p in ctx.fresh(ctx.rows("payees", _customer(ctx)["payee_ids"]), "payee_id", reads=True)
            if p["name"] not in named]

def _payee_choice(ctx: GroundingContext, payee: dict) -> Choice:
    return Choice.among("payee", payee, ctx.rows("payees", _customer(ctx)["payee_ids"]), "payee_id", "name")

def _standing_to(ctx: GroundingContext, payee: dict) -> bool:
    """Whether an active standing order on the caller's accounts already pays `payee` (by name: a joint owner's
    payee of that name is the same person)."""
    return any(o["status"] == "active" and o["payee_name"] == payee["name"] for a in _accounts(ctx)
               for o in (ctx.state["standing_orders"].peek(s) for s in a["standing_order_ids"]))

def _last_payment(ctx: GroundingContext, account: dict, payee: dict) -> float | None:
    """What the caller last paid `payee`, when that payment left `account`, no other payment was the same day and no
    standing order pays them (its amount would be a second 'last payment')."""
    if _standing_to(ctx, payee):
        return None
    paid = [t for a in _accounts(ctx) for t in _rows(ctx, a, "payee_payment")
            if t.get("payee_id") == payee["payee_id"] and t["status"] != "reversed"] or [{"sent_on": ""}]
    last = [t for t in paid if t["sent_on"] == max(p["sent_on"] for p in paid)]
    return -last[0]["amount"] if len(last) == 1 and last[0].get("account_id") == account["account_id"] else None

def _same_as_last(ctx: GroundingContext, account: dict, payee: dict, amount: float) -> dict[str, Any]:
    """An intent's fields when its amount is the caller's last payment to `payee` (the agent looks it up)."""
    return {"choices": [_payee_choice(ctx, payee)], "evidence": ["get_transactions"],
            "reads": {"get_transactions": [{"account_id": account["account_id"]}]},
            "outputs": [Output(money(amount), "the amount of {{my}} last payment to " + payee["name"])],
            "policy_values": [amount]}  # the payment's amount is its row's, negated

def persona(ctx: GroundingContext) -> Persona | None:
    everyone, loans, users = per_database(ctx, _people)
    cid = ctx.rng.choice((users, loans, everyone)[ctx.band("authorised_user_persona", "loan_persona")])
    c = ctx.state["customers"].peek(cid)
    said = {"phone_number": c["phone_number"], "date_of_birth": c["date_of_birth"], "zip_code": c["address"]["zip"]}
    return Persona(name=f"{c['first_name']} {c['last_name']}",
                   facts={"first_name": c["first_name"], "last_name": c["last_name"], **said},
                   reads={"verify_identity": [said], "get_customer_profile": [{"customer_id": cid}]},
                   entity=cid, identified={"session": {"current": {"caller_id": cid}}})

def ground_transfer_between_accounts(ctx: GroundingContext) -> IntentDraft | None:
    if ctx.want_challenge:
        source = ctx.choose([a for a in _spending(ctx) if a["type"] == "savings" or _role(ctx, a) == "authorised_user"])
    else:
        source = ctx.choose(_spending(ctx, *_OWNERS))
    targets = [a for a in _accounts(ctx, *_OWNERS) if a["account_id"] != source["account_id"] and a["status"] == "open"]
    loans = [a for a in targets if a["type"] == "loan"]
    target = ctx.choose(loans if loans and ctx.chance("loan_transfer") else targets)
    loan = target["type"] == "loan"
    payoff = loan and ctx.chance("loan_payoff") and target["balance"] <= available(source)
    amount = (target["balance"] if payoff else target["loan"]["monthly_payment"]) if loan else \
        ctx.rng.choice([100, 200, 250, 500, 750, 1000, 1500])
    args = {"from_account_id": source["account_id"], "to_account_id": target["account_id"], "amount": amount}
    need(amount <= available(source))
    refusal = ctx.challenged("transfer_between_accounts", args, {"owner_or_joint_owner": _AUTHORISED,
                             "savings_transfer_limit": Refusal("savings_withdrawals", "6 transfers", "savings_limit")})
    src, dst = _account_ref(ctx, source, "from_account"), _account_ref(ctx, target, "to_account")
    ref = Reference(src.phrase, {**src.facts, **dst.facts}, [*src.choices, *dst.choices],
                    {"get_account_details": [*src.reads["get_account_details"], *dst.reads["get_account_details"]]},
                    ["get_account_details"])
    what = ("pay off" if payoff else "make next month's payment on") if loan else f"move ${money(amount)} to"
    request = [f"{what} {dst.phrase} from {src.phrase}", f"use {src.phrase} to {what} {dst.phrase}"]
    ask = "what is left to pay on {{my}} loan" if payoff else "the monthly payment on {{my}} loan"
    outputs, facts = ([Output(money(amount), ask, noun="the amount left on {{my}} loan" if payoff else None)], {}) if loan else ([], {"amount": money(amount)})
    mood = Mood("{{I}} want to " + ("be free of {{my}} loan" if payoff else "get ahead on {{my}} loan"), "positive",
                2 if payoff else 1, None) if loan else Mood("{{I}} need to move some money around", "neutral", 1, None)
    if refusal:
        return draft("transfer_authorised_user", "transfer_between_accounts", args, request, ref, refusal=refusal,
                     facts=facts, mood=mood)
    kind = "loan_payoff" if payoff else "loan_payment" if loan else "transfer"
    return draft(kind, "transfer_between_accounts", args, request, ref, facts=facts, outputs=outputs, mood=mood,
                 decline="leave the loan as it is" if loan else None)

def ground_pay_payee(ctx: GroundingContext) -> IntentDraft | None:
    payee = ctx.choose(_payees(ctx))
    account = ctx.choose(_spending(ctx))
    left = DAILY_PAYEE_LIMIT[owner_tier(ctx.state, account)] - sum(-t["amount"] for t in _rows(
        ctx, account, "payee_payment") if t["sent_on"] == TODAY and t["status"] != "reversed")
    last = _last_payment(ctx, account, payee)
    same = not ctx.want_challenge and last is not None and ctx.chance("repeat_payment")
    if ctx.want_challenge and _role(ctx, account) != "authorised_user":
        need(ctx.chance("daily_limit_challenge"))
        amount = ctx.choose([a for a in (left + 250, left + 500, left + 1000, 2 * left) if 0 < a <= available(account)])
        amount = round(amount / 100) * 100 + 100
    else:
        amount = last if same else ctx.rng.choice([40, 75, 120, 200, 350, 500, 800])
    args = {"from_account_id": account["account_id"], "payee_id": payee["payee_id"], "amount": amount}
    need(amount <= available(account))
    refusal = ctx.challenged("pay_payee", args, {"owner_or_joint_owner": _AUTHORISED, "daily_payee_limit": Refusal(
        "daily_limit", "daily payment limit", "over_daily_limit")})
    ref = _account_ref(ctx, account, "from_account")
    mood = Mood("{{I}} need to pay " + payee["name"], "neutral", 1, 1)
    if same:
        return draft("pay_same", "pay_payee", args,
                     [f"send {payee['name']} the same amount as {{{{my}}}} last payment to them, from {ref.phrase}"],
                     ref, facts={"payee": payee["name"]}, decline="not send anything today", mood=mood,
                     **_same_as_last(ctx, account, payee, amount))
    request = [f"pay {payee['name']} ${money(amount)} from {ref.phrase}",
               f"send ${money(amount)} to {payee['name']} from {ref.phrase}"]
    facts = {"payee": payee["name"], "amount": money(amount)}
    if refusal:
        return draft("pay_authorised_user", "pay_payee", args, request, ref, refusal=refusal,
                     facts=facts, choices=[_payee_choice(ctx, payee)], evidence=["get_transactions"],
                     reads={"get_transactions": [{"account_id": account["account_id"]}]}, mood=mood,
                     **ctx.handoff("payment_insists", f"caller wants to pay {payee['name']} {money(amount)}, refused by policy"))
    return draft("pay", "pay_payee", args, request, ref, facts=facts, choices=[_payee_choice(ctx, payee)], mood=mood)

def ground_reverse_payment(ctx: GroundingContext) -> IntentDraft | None:
    need(not ctx.want_challenge or ctx.chance("settled_reversal_challenge"))
    status = "settled" if ctx.want_challenge else "pending"
    used = used_by_earlier_intents(ctx, "transaction_id")
    account, row = ctx.choose([(a, t) for a in _accounts(ctx, *_OWNERS) for t in _rows(ctx, a, "payee_payment")
                               if t["status"] == status and days_between(t["date"], TODAY) <= 40
                               and t["transaction_id"] not in used
                               and t.get("payee_id") in _customer(ctx)["payee_ids"]])  # the caller's own payee
    args = {"transaction_id": row["transaction_id"]}
    refusal = ctx.challenged("reverse_payment", args, Refusal("payment_settled", "cannot be reversed", "reverse_settled"))
    ref = _tx_ref(ctx, account, row, "payment")
    request = [f"stop {ref.phrase} and get the money back", f"recall {ref.phrase}"]
    mood = Mood("{{I}} sent a payment by mistake", "negative", 2, 0)
    return draft("reverse", "reverse_payment", args, request, ref, mood=mood,
                 refusal=refusal, outputs=[] if refusal else [Output(money(-row["amount"]), "how much comes back",
                                                                     from_goal=True)],
                 **ctx.handoff("reversal_insists", "caller wants a settled payment reversed", ctx.want_challenge))

def ground_refund_fee(ctx: GroundingContext) -> IntentDraft | None:
    account, row = ctx.choose([(a, t) for a in ctx.fresh(_accounts(ctx, *_OWNERS), "account_id", reads=True)
                               for t in _rows(ctx, a, "fee")
                               if not t["refunded"] and t["date"] >= "2025-08-01" and t.get("fee_kind") != "monthly"])
    args = {"transaction_id": row["transaction_id"]}
    refusal = ctx.challenged("refund_fee", args, Refusal("fee_refund_used", "allowance", "refund_used"))
    ref = _tx_ref(ctx, account, row, "fee")
    request = [f"have {ref.phrase} refunded", f"get a refund of {ref.phrase}"]
    mood = Mood("{{I}} think the fee was unfair", "negative", 1, None)
    return draft("refund", "refund_fee", args, request, ref, refusal=refusal, mood=mood,
                 outputs=[] if refusal else [Output(money(-row["amount"]), "how much is refunded", from_goal=True)])

def ground_dispute_transaction(ctx: GroundingContext) -> IntentDraft | None:
    kind = ctx.rng.choice(["dispute_window", "transaction_pending"]) if ctx.want_challenge else None
    ages = {None: (3, DISPUTE_WINDOW_DAYS - 5), "dispute_window": (DISPUTE_WINDOW_DAYS + 1, 100),
            "transaction_pending": (0, 5)}[kind]
    account, row = ctx.choose([(a, t) for a in ctx.fresh(_accounts(ctx, *_OWNERS), "account_id", reads=True)
                               for t in _rows(ctx, a, "card") if not t["disputed"] and -t["amount"] >= 15
                               and (t["status"] == "pending") == (kind == "transaction_pending")
                               and t.get("card_id") in _customer(ctx)["card_ids"]  # a charge on the caller's card
                               and ages[0] <= days_between(t["date"], TODAY) <= ages[1]])
    twice = sum(t["description"] == row["description"] and t["amount"] == row["amount"] for t in _rows(ctx, account, "card"))
    reason = ctx.rng.choice(sorted(r for r in _REASONS if r != "duplicate" or twice > 1))  # "charged twice": two there
    args = {"transaction_id": row["transaction_id"], "reason": reason}
    ctx.challenged("dispute_transaction", args)
    ref = _tx_ref(ctx, account, row, "charge")
    request = [f"dispute {ref.phrase}", f"open a dispute on {ref.phrase}"]
    mood = Mood("{{I}} found " + _REASONS[reason][1] + " on {{my}} account", "negative",
                2 if -row["amount"] > 200 else 1, None)
    refusal = {"dispute_window": Refusal("dispute_window", "60 days", "dispute_too_old"),
               "transaction_pending": Refusal("transaction_pending", "pending charge", "dispute_pending")}.get(kind)
    credit = Output(money(-row["amount"]), "how much is credited back while it is investigated", from_goal=True)
    return draft("dispute", "dispute_transaction", args, request, ref, refusal=refusal,
                 facts={"dispute_reason": reason}, outputs=[] if refusal else [credit], mood=mood)

def _cards(ctx: GroundingContext, *statuses: str, frozen_by: str | None = None) -> list[dict]:
    return [c for c in ctx.fresh(ctx.rows("cards", _customer(ctx)["card_ids"]), "card_id", reads=True)
            if c["status"] in statuses and (frozen_by is None or c["frozen_by"] == frozen_by)]

def ground_set_card_status(ctx: GroundingContext) -> IntentDraft | None:
    if ctx.want_challenge:
        card = ctx.choose(_cards(ctx, "frozen", frozen_by="fraud_team"))
        ref = _card_ref(ctx, card)
        return draft("unfreeze_fraud_hold", "set_card_status", {"card_id": card["card_id"], "status": "active"},
                     [f"unfreeze {ref.phrase}", f"take the freeze off {ref.phrase}"], ref,
                     facts={"card_status": "active"}, refusal=Refusal("fraud_hold", "fraud team"),
                     mood=Mood("{{my}} card was blocked and {{I}} cannot pay for anything", "negative", 2, 0),
                     **ctx.handoff("fraud_hold_insists", "caller wants a card on fraud hold unfrozen"))
    card = ctx.choose(_cards(ctx, "active") + _cards(ctx, "frozen", frozen_by="customer"))
    ref = _card_ref(ctx, card)
    if card["status"] == "frozen":
        return draft("unfreeze", "set_card_status", {"card_id": card["card_id"], "status": "active"},
                     [f"unfreeze {ref.phrase}", f"turn {ref.phrase} back on"], ref, facts={"card_status": "active"},
                     mood=Mood("{{I}} found the card {{I}} thought {{I}} had lost", "positive", 1, 0))
    return draft("freeze", "set_card_status", {"card_id": card["card_id"], "status": "frozen"},
                 [f"freeze {ref.phrase}", f"put a freeze on {ref.phrase} for now"], ref,
                 facts={"card_status": "frozen"}, mood=Mood("{{I}} cannot find {{my}} card", "negative", 2, 0))

_LOST = {"lost": ("{{I}} lost {{my}} card", 2), "stolen": ("{{my}} wallet was stolen", 3),
         "damaged": ("{{my}} card snapped in two", 1)}

def ground_replace_card(ctx: GroundingContext) -> IntentDraft | None:
    card = ctx.choose(_cards(ctx, "active", "frozen"))
    reason = ctx.rng.choice(sorted(_LOST))
    express = ctx.chance("express_card")
    ref = _card_ref(ctx, card, account=express)
    fee = EXPRESS_CARD_FEE if express and _customer(ctx)["tier"] != "premier" else 0
    args = {"card_id": card["card_id"], "reason": reason, "express": express}
    need(not ctx.violations("replace_card", args))
    how = "express" if express else "standard"
    return draft(f"replace_{how}", "replace_card", args,
                 [f"replace {ref.phrase}, which was {reason}, with {how} delivery",
                  f"have {ref.phrase} replaced because it was {reason}, with the new one sent by {how} delivery"], ref,
                 facts={"card_problem": reason, "delivery": express}, policy_values=[fee] if express else [],
                 outputs=[Output(money(fee), "what express delivery costs", noun="the express delivery fee")] if express else [],
                 mood=Mood(_LOST[reason][0], "negative", _LOST[reason][1], 0))

def ground_set_card_limit(ctx: GroundingContext) -> IntentDraft | None:
    card = ctx.choose(_cards(ctx, "active"))
    account = ctx.state["accounts"].peek(card["account_id"])
    top = CARD_LIMIT_MAX[owner_tier(ctx.state, account)]
    user = _role(ctx, account) == "authorised_user"
    if ctx.want_challenge:
        need(user or ctx.chance("card_limit_challenge"))
        limit = top if user else ctx.rng.choice([top + 500, top + 1000, 2 * top])
    else:
        limit = ctx.choose([v for v in (300, 500, 750, 1000, 1500, 2000, 2500, 4000, 5000)
                            if v <= top and v != card["daily_limit"]])
    args = {"card_id": card["card_id"], "daily_limit": limit}
    refusal = ctx.challenged("set_card_limit", args, Refusal("authorised_user", "authorised user", "limit_authorised_user")
                             if user else Refusal("limit_above_tier", "daily spending limit", "limit_above_tier"))
    ref = _card_ref(ctx, card, account=True)
    request = [f"set the daily limit of {ref.phrase} to ${limit}",
               f"change the daily spending limit on {ref.phrase} to ${limit}"]
    up = limit > card["daily_limit"]
    mood = Mood("{{I}} have " + ("a big purchase coming up" if up else "been spending too much"), "neutral", 1, None)
    return draft("limit_up" if up else "limit_down", "set_card_limit", args, request, ref, refusal=refusal, facts={"daily_limit": limit}, mood=mood)

def ground_create_standing_order(ctx: GroundingContext) -> IntentDraft | None:
    payee = ctx.choose(_payees(ctx))
    need(not _standing_to(ctx, payee))  # a second standing order to the same payee would duplicate the first
    account = ctx.choose([a for a in _spending(ctx, *_OWNERS) if a["type"] == "checking"])
    frequency = ctx.rng.choice(["weekly", "monthly", "monthly"])
    amount = ctx.rng.choice([25, 50, 100, 150, 250, 400] if frequency == "weekly" else [100, 250, 500, 850, 1200])
    last = _last_payment(ctx, account, payee)
    same = not ctx.want_challenge and last is not None and ctx.chance("repeat_standing_order")
    if same:
        frequency, amount = "monthly", last
    need(not ctx.want_challenge or ctx.chance("start_today_challenge"))
    start = TODAY if ctx.want_challenge else shift_date(TODAY, ctx.rng.randint(2, 40))
    args = {"from_account_id": account["account_id"], "payee_id": payee["payee_id"], "amount": amount,
            "frequency": frequency, "start_date": start}
    refusal = ctx.challenged("create_standing_order", args,
                             Refusal("standing_order_start_date", "after today", "standing_order_today"))
    ref = _account_ref(ctx, account, "from_account")
    when = "today" if start == TODAY else f"on {month_day(start)}"
    facts = {"payee": payee["name"], "frequency": frequency, "start_date": start}
    mood = Mood("{{I}} want {{my}} regular payments to " + payee["name"] + " to run by themselves", "neutral", 1, None)
    if same:
        return draft("standing_order_same", "create_standing_order", args,
                     [f"set up a monthly payment to {payee['name']} from {ref.phrase}, starting {when}, for the same "
                      f"amount as {{{{my}}}} last payment to them"], ref, facts=facts, mood=mood,
                     decline="not set up the standing order", **_same_as_last(ctx, account, payee, amount))
    request = [f"set up a {frequency} payment of ${amount} to {payee['name']} from {ref.phrase}, starting {when}",
               f"pay {payee['name']} ${amount} {frequency} from {ref.phrase}, the first payment {when}"]
    return draft("standing_order", "create_standing_order", args, request, ref,
                 refusal=refusal, facts={**facts, "amount": money(amount)}, choices=[_payee_choice(ctx, payee)],
                 mood=mood)

def ground_cancel_standing_order(ctx: GroundingContext) -> IntentDraft | None:
    found = [(a, o) for a in _accounts(ctx, *_OWNERS) for s in a["standing_order_ids"]
             if (o := ctx.state["standing_orders"].peek(s))["status"] == "active"]
    used = used_by_earlier_intents(ctx, "standing_order_id")
    account, order = ctx.choose([f for f in found if f[1]["standing_order_id"] not in used])
    name = order["payee_name"]
    need(sum(o["payee_name"] == name for _, o in found) == 1)
    ref = _account_ref(ctx, account, "from_account")
    args = {"standing_order_id": order["standing_order_id"]}
    need(not ctx.violations("cancel_standing_order", args))
    options = [Option(o["standing_order_id"], {"payee": o["payee_name"]}) for _, o in found]
    return draft("cancel_standing_order", "cancel_standing_order", args,
                 [f"cancel the standing order to {name} on {ref.phrase}",
                  f"stop the regular payments to {name} from {ref.phrase}"], ref, facts={"payee": name},
                 choices=[Choice("standing order", order["standing_order_id"], options, {"payee": name})],
                 mood=Mood("{{my}} regular payments to " + name + " are no longer needed", "neutral", 1, None))

HINTS = TracerHints(
    persona=persona,
    goals=goals_in(globals()),  # each ground_<tool> function above grounds <tool>
    # loan payments and repeat payments carry the decision rules; few cards are frozen, few fees refundable
    goal_weights={"transfer_between_accounts": 2.4, "pay_payee": 2.0, "dispute_transaction": 1.0, "refund_fee": 1.3,
                  "reverse_payment": 0.8, "cancel_standing_order": 0.7, "set_card_status": 0.7, "replace_card": 0.6,
                  "create_standing_order": 0.7, "set_card_limit": 0.7},
    entry_tools=["verify_identity"],
    occasions=OCCASIONS,
    occasion_intents=["loan_payoff", "loan_payment", "transfer", "pay", "pay_same", "standing_order",
                      "standing_order_same", "limit_up", "over_daily_limit", "savings_limit", "limit_above_tier"],
    fact_phrase=fact_phrase,
    # an occasion must agree with the caller (no first home for a mortgage holder) and the task's requests
    situation=situation,
    rates=BankRates(),
    decision_rate=0.9,  # amount-bearing requests are a minority (payments, transfers, loans): train fell to 112/600
)
