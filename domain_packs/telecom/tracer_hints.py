"""Tracer hints for the telecom pack: who the caller is and how each goal tool is grounded.

The Tracer (`tau_emotion.tracer`) samples workflows from the tool graph and validates them; this
module is the telecom knowledge it needs to turn a goal tool into a concrete intent on the
database (see `tau_emotion.tracer.hints`). The caller names lines by their phone numbers, plans,
add-ons and phones by their catalogue names, bills by their month and payment methods by kind,
bank or card brand; the agent finds the ids.

Goals: change a plan, add or remove an add-on, suspend or resume a line, replace a phone, pay a
bill, credit a disputed charge, fix a network fault, data usage. Challenges: a downgrade under
contract, a second plan change in a billing cycle, changes to a suspended line, roaming with an
overdue bill, a suspension beyond its maximum, a credit over the limit or outside the window.
"""

from __future__ import annotations

from typing import Any

from tau_emotion.domain_packs.telecom.rules import CREDIT_WINDOW_DAYS, MAX_SUSPENSION_DAYS
from tau_emotion.domain_packs.telecom.tools import DEDUCTIBLE, PROTECTION_ADDON, TODAY
from tau_emotion.domain_packs.telecom.tracer_situation import addon_in_use, runs_out, situation
from tau_emotion.tracer.hints import (
    Choice,
    GroundingContext,
    Instrument,
    IntentDraft,
    Mood,
    Output,
    Persona,
    Reference,
    Refusal,
    TracerHints,
    days_between,
    difference,
    draft,
    fact_wording,
    goals_in,
    instrument_options,
    money,
    need,
    per_database,
    pick_fresh,
    pick_instrument,
    refused_calls,
    used_by_earlier_intents,
)

OCCASIONS = [
    ("{{I}} {{am}} flying abroad for {{my}} brother's wedding", 3, "positive"),
    ("{{I}} {{am}} starting a new job next week", 2, "positive"),
    ("{{I}} {{am}} caring for {{my}} mother, who is in hospital", 3, "negative"),
    ("{{I}} lost {{my}} job last month and money is tight", 3, "negative"),
    ("{{I}} work from home and depend on {{my}} phone", 2, "neutral"),
    ("{{I}} {{am}} a student on a small budget", 1, "neutral"),
    ("{{I}} {{am}} going on a long-planned holiday", 1, "positive"),
    ("{{my}} kids use {{my}} lines for school", 1, "neutral"),
    ("{{I}} run a small business from {{my}} phone", 2, "neutral"),
    ("it is just a routine matter", 0, "neutral"),  # most occasion intents are requests, not questions
]

MONTHS = {"2024-12": "December", "2025-01": "January", "2025-02": "February"}

# --------------------------------------------------------------------------- lookups

def _customers(db: Any) -> list[str]:
    return [cid for cid, c in db.tables["customers"].items() if c["account_ids"]]

def _accounts(ctx: GroundingContext, cid: str | None = None) -> list[dict]:
    return ctx.rows("accounts", ctx.peek("customers", cid or ctx.persona.entity)["account_ids"])

def _lines(ctx: GroundingContext, cid: str | None = None) -> list[dict]:
    return [ctx.peek("lines", lid) for a in _accounts(ctx, cid) for lid in a["line_ids"]]

def _catalogue_choice(ctx: GroundingContext, table: str, key: str, value: str, what: str) -> Choice:
    return Choice.among(what, ctx.state[table].peek(value), [row for _, row in ctx.state[table].scan()], key, "name")

def _line_ref(ctx: GroundingContext, line: dict) -> Reference:
    """How the caller points at one of their lines: by its phone number."""
    account = ctx.state["accounts"].peek(line["account_id"])
    phone = line["phone_number"]
    return Reference(f"{{{{my}}}} line {phone}",
                     facts={} if phone == ctx.persona.facts["phone_number"] else {"line_phone_number": phone},
                     choices=[Choice.among("line", line, ctx.rows("lines", account["line_ids"]), "line_id", "phone_number")],
                     reads={"get_account_details": [{"account_id": account["account_id"]}],
                            "get_line_details": [{"line_id": line["line_id"]}]}, evidence=["get_line_details"])

def _fresh_line(ctx: GroundingContext, lines: list[dict]) -> dict:
    return need(pick_fresh(ctx, lines, "line_id", "line"))

def _payment(ctx: GroundingContext) -> Instrument:
    """A payment method of the caller, worded so it is the only fit."""
    methods = ctx.peek("customers", ctx.persona.entity)["payment_methods"]
    return need(pick_instrument(ctx, "payment method", instrument_options(methods)))

# --------------------------------------------------------------------------- wording of facts

# the caller's own words for a suspension (the known fact) -> the instruction's second person
_SUSPENSION_WORDS = {"my phone was stolen": "your phone was stolen", "I am travelling abroad": "you are travelling abroad",
                     "a hospital treatment": "you are going into hospital for treatment"}

def _problem(value: str) -> str:  # 'no signal at home' is a noun phrase, 'calls keep dropping' a clause
    return value if value.startswith(("no ", "very ")) else f"that {value}"

#: the instruction's wording of a known fact ("the line is 305-555-1799", "your February bill")
fact_phrase = fact_wording({
    "line_phone_number": ("the line is {}", "the lines are {}"),
    "new_plan": ("the plan you want is {}", "the plan you want is {}"),
    "add_on": ("the add-on you want is {}", "the add-ons you want are {}"),
    "add_on_to_remove": ("the add-on to remove is {}", "the add-ons to remove are {}"),
    "new_phone_model": ("the phone you want is the {}", "the phone you want is the {}"),
    # two intents, two methods: in the intents' order
    "payment_method": lambda said: f"you pay with your {' and your '.join(said)}" + (" respectively" if len(said) > 1 else ""),
    "suspension_reason": ("the reason is that {}", _SUSPENSION_WORDS),
    "suspension_days": ("you want it suspended for {} days", "you want it suspended for {} days respectively"),
    "problem": ("the problem is {}", lambda v: _problem(str(v))),
    "bill_month": ("the bill is your {} bill", "the bills are your {} bills"),
    "disputed_charge": ("the charge you dispute is {}", "the charge you dispute is {}"),
}, unsaid=["payment_last_four_digits"])  # the payment method's words say it ("credit card ending in 3132")

# --------------------------------------------------------------------------- persona

def persona(ctx: GroundingContext) -> Persona | None:
    cid = ctx.rng.choice(per_database(ctx, _customers))
    customer = ctx.state["customers"].peek(cid)
    phone = ctx.choose(_lines(ctx, cid))["phone_number"]
    name = customer["name"]
    return Persona(name=f"{name['first_name']} {name['last_name']}",
                   facts={"first_name": name["first_name"], "last_name": name["last_name"], "phone_number": phone},
                   reads={"find_customer_by_phone": [{"phone_number": phone}],
                          "get_customer_details": [{"customer_id": cid}]}, entity=cid)

# --------------------------------------------------------------------------- plans

#: the policy rule that alone forbids a plan or add-on change -> how it is refused
_PLAN_REFUSALS = {"suspended_line_frozen": Refusal("line_suspended", "suspended", "plan_on_suspended_line"),
                  "plan_change_once_per_cycle": Refusal("plan_changed_this_cycle", "billing cycle", "plan_changed_this_cycle"),
                  "contract_term": Refusal("contract_term", "contract", "downgrade_under_contract")}
_ADDON_REFUSALS = {"suspended_line_frozen": Refusal("line_suspended", "suspended", "addon_on_suspended_line"),
                   "roaming_needs_clear_account": Refusal("overdue_balance", "overdue", "roaming_overdue")}

def ground_change_line_plan(ctx: GroundingContext) -> IntentDraft | None:
    lines = _lines(ctx)
    plans = [p for _, p in ctx.state["plans"].scan()]
    if ctx.want_challenge:
        calls = [((line, plan), {"line_id": line["line_id"], "plan_code": plan["plan_id"]})
                 for line in lines for plan in plans if plan["plan_id"] != line["plan_id"]]
        (line, plan), args, refusal = ctx.choose([c for c in refused_calls(ctx, "change_line_plan", calls, _PLAN_REFUSALS)
                                                  if c[0][0]["line_id"] not in used_by_earlier_intents(ctx, "line_id")])
        ref = _line_ref(ctx, line)
        return draft(refusal.kind, "change_line_plan", args,
                     [f"move {ref.phrase} to the {plan['name']} plan", f"switch {ref.phrase} to {plan['name']}"], ref,
                     facts={"new_plan": plan["name"]}, refusal=refusal,
                     mood=Mood("{{I}} want a plan that suits {{me}} better", "neutral", 1, None))
    # a line that may move to the cheapest or the dearest plan
    line = _fresh_line(ctx, [line for line in lines if not all(ctx.violations(
        "change_line_plan", {"line_id": line["line_id"], "plan_code": p}) for p in ("PLAN_BASIC5", "PLAN_UNLPREM"))])
    allowed = [p for p in plans if p["plan_id"] != line["plan_id"]
               and not ctx.violations("change_line_plan", {"line_id": line["line_id"], "plan_code": p["plan_id"]})]
    plan = ctx.choose(allowed)
    old, new = ctx.peek("plans", line["plan_id"])["monthly_price"], plan["monthly_price"]
    expression, change = difference(old, new)
    ref = _line_ref(ctx, line)
    more = plan["data_gb"] > ctx.peek("plans", line["plan_id"])["data_gb"]
    # the event says what the new plan gives: more data, or a lower bill, or (a dearer plan with less data) a fit
    event = "{{I}} need more data" if more else "{{I}} need to spend less each month" if new < old else \
        "{{I}} want a plan that suits {{me}} better"
    return draft("change_plan", "change_line_plan", {"line_id": line["line_id"], "plan_code": plan["plan_id"]},
                 [f"move {ref.phrase} to the {plan['name']} plan", f"switch {ref.phrase} to the {plan['name']} plan"],
                 ref, facts={"new_plan": plan["name"]},
                 reads={"get_catalogue": [{}], "calculate": [{"expression": expression}]},
                 choices=[_catalogue_choice(ctx, "plans", "plan_id", plan["plan_id"], "plan")],
                 outputs=[Output(money(change), "how much the monthly price changes")],
                 decline="keep {{my}} current plan" if new > old else None,
                 mood=Mood(event, "neutral", 2 if new < old else 1, None))

# --------------------------------------------------------------------------- add-ons

def ground_add_addon(ctx: GroundingContext) -> IntentDraft | None:
    lines = _lines(ctx)
    addons = [a for _, a in ctx.state["addons"].scan()]
    if ctx.want_challenge:
        calls = [((line, addon), {"line_id": line["line_id"], "addon_code": addon["addon_id"]})
                 for line in lines for addon in addons if addon["addon_id"] not in line["addons"]]
        (line, addon), args, refusal = ctx.choose([c for c in refused_calls(ctx, "add_addon", calls, _ADDON_REFUSALS)
                                                   if c[0][0]["line_id"] not in used_by_earlier_intents(ctx, "line_id")])
        ref = _line_ref(ctx, line)
        reads = {"get_bills": [{"account_id": line["account_id"]}]} if refusal.reason == "overdue_balance" else {}
        return draft(refusal.kind, "add_addon", args,
                     [f"add {addon['name']} to {ref.phrase}", f"get {addon['name']} on {ref.phrase}"], ref,
                     facts={"add_on": addon["name"]}, refusal=refusal,
                     reads=reads, evidence=["get_bills"] if reads else [],
                     mood=Mood("{{I}} need " + addon["name"] + " soon", "neutral", 2, 3))
    options = [(line, addon) for line in lines for addon in addons
               if addon["addon_id"] not in line["addons"] and addon["monthly_price"] >= 10
               and not ctx.violations("add_addon", {"line_id": line["line_id"], "addon_code": addon["addon_id"]})
               and line["line_id"] not in used_by_earlier_intents(ctx, "line_id")]
    line, addon = ctx.choose(options)
    ref = _line_ref(ctx, line)
    travel = addon["kind"] == "roaming"
    return draft("add_addon", "add_addon", {"line_id": line["line_id"], "addon_code": addon["addon_id"]},
                 [f"add {addon['name']} to {ref.phrase}", f"put the {addon['name']} add-on on {ref.phrase}"], ref,
                 facts={"add_on": addon["name"]}, reads={"get_catalogue": [{}]},
                 choices=[_catalogue_choice(ctx, "addons", "addon_id", addon["addon_id"], "add-on")],
                 outputs=[Output(money(addon["monthly_price"]), "the monthly price of the add-on")],
                 decline="skip the add-on",
                 mood=Mood("{{I}} " + ("travel soon and need {{my}} phone abroad" if travel else "want more from {{my}} line"),
                           "positive" if travel else "neutral", 2 if travel else 1, 5 if travel else None))

def ground_remove_addon(ctx: GroundingContext) -> IntentDraft | None:
    line = _fresh_line(ctx, [line for line in _lines(ctx) if line["addons"]])
    addon_id = ctx.rng.choice(line["addons"])
    addon = ctx.state["addons"].peek(addon_id)
    # an add-on the line uses this cycle is dropped to save money, not because it goes unused
    event = "{{I}} want to cut what {{I}} pay each month" if addon_in_use(ctx.state, line, addon_id) else \
        "{{I}} no longer use " + addon["name"]
    ref = _line_ref(ctx, line)
    return draft("remove_addon", "remove_addon", {"line_id": line["line_id"], "addon_code": addon_id},
                 [f"remove {addon['name']} from {ref.phrase}", f"cancel the {addon['name']} add-on on {ref.phrase}"],
                 ref, facts={"add_on_to_remove": addon["name"]}, verify={"get_catalogue": {}},
                 choices=[Choice.among("add-on", addon, ctx.rows("addons", line["addons"]), "addon_id", "name")],
                 mood=Mood(event, "neutral", 0, None))

# --------------------------------------------------------------------------- suspensions

_SUSPEND = {
    "lost_or_stolen": ("{{my}} phone was stolen", "my phone was stolen", "negative", 3),
    "travel": ("{{I}} will be travelling abroad", "I am travelling abroad", "neutral", 1),
    "medical": ("{{I}} {{am}} going into hospital for treatment", "a hospital treatment", "negative", 3),
}

def ground_suspend_line(ctx: GroundingContext) -> IntentDraft | None:
    line = _fresh_line(ctx, [line for line in _lines(ctx) if line["status"] == "active"])
    reason = ctx.rng.choice(sorted(MAX_SUSPENSION_DAYS))
    limit = MAX_SUSPENSION_DAYS[reason]
    event, said, valence, stakes = _SUSPEND[reason]
    ref = _line_ref(ctx, line)
    too_long = ctx.want_challenge
    days = ctx.rng.choice([limit + 15, limit + 30, 2 * limit] if too_long else sorted({7, 14, limit // 2, limit}))
    return draft("suspend_too_long" if too_long else "suspend", "suspend_line",
                 {"line_id": line["line_id"], "reason": reason, "days": days},
                 [f"suspend {ref.phrase} for {days} days", f"put {ref.phrase} on hold for {days} days"][:1 if too_long else 2],
                 ref, facts={"suspension_reason": said, "suspension_days": days}, context=event, policy_values=[reason],
                 refusal=Refusal("suspension_too_long", "maximum duration") if too_long else None,
                 mood=Mood(event, valence, stakes, None))

def ground_resume_line(ctx: GroundingContext) -> IntentDraft | None:
    line = _fresh_line(ctx, [line for line in _lines(ctx) if line["status"] == "suspended"])
    ref = _line_ref(ctx, line)
    return draft("resume", "resume_line", {"line_id": line["line_id"]},
                 [f"resume {ref.phrase}", f"turn {ref.phrase} back on"], ref,
                 mood=Mood("{{I}} need {{my}} line working again", "positive", 1, 0))

# --------------------------------------------------------------------------- devices

def ground_replace_device(ctx: GroundingContext) -> IntentDraft | None:
    line = _fresh_line(ctx, [line for line in _lines(ctx) if line["status"] == "active"])
    current = ctx.state["devices"].peek(line["device_id"])["model_id"] if line["device_id"] else None
    models = [m for _, m in ctx.state["device_models"].scan() if m["model_id"] != current]
    model = ctx.rng.choice(models)
    protected = PROTECTION_ADDON in line["addons"]
    charge = min(DEDUCTIBLE, model["price"]) if protected else model["price"]
    pay = _payment(ctx)
    ref = _line_ref(ctx, line)
    return draft("replace_device", "replace_device",
                 {"line_id": line["line_id"], "model_code": model["model_id"], "payment_id": pay.value},
                 [f"replace the phone on {ref.phrase} with {'an' if model['name'][0] in 'AEIOUi' else 'a'} {model['name']}",
                  f"get a new {model['name']} for {ref.phrase}"], ref,
                 facts={"new_phone_model": model["name"], **pay.facts("payment_last_four_digits")}, reads={"get_catalogue": [{}]},
                 choices=[_catalogue_choice(ctx, "device_models", "model_id", model["model_id"], "device model"),
                          pay.choice],
                 outputs=[Output(money(charge), "what the new phone costs {{me}}", noun="the price of the new phone")],
                 policy_values=[DEDUCTIBLE] if protected and charge == DEDUCTIBLE else [],
                 preferences=[f"pay with {{{{my}}}} {pay.words}"], decline="keep {{my}} current phone",
                 mood=Mood("{{my}} phone broke", "negative", 2, None))

# --------------------------------------------------------------------------- bills

def _bills(ctx: GroundingContext) -> list[dict]:
    if len(_accounts(ctx)) != 1:
        return []  # a month names one bill only when the caller has one account
    return [ctx.state["bills"].peek(b) for b in _accounts(ctx)[0]["bill_ids"]]

def _bill_choice(ctx: GroundingContext, bill: dict) -> Choice:
    return Choice.among("bill", bill, _bills(ctx), "bill_id", lambda b: {"month": MONTHS[b["period"]]})

def ground_pay_bill(ctx: GroundingContext) -> IntentDraft | None:
    bills = [b for b in _bills(ctx) if b["balance"] > 0]
    bill = need(pick_fresh(ctx, bills, "bill_id", "bill"))
    pay = _payment(ctx)
    month = MONTHS[bill["period"]]
    return draft("pay_bill", "pay_bill", {"bill_id": bill["bill_id"], "payment_id": pay.value, "amount": bill["balance"]},
                 [f"pay {{{{my}}}} {month} bill in full", f"settle what {{{{I}}}} owe on {{{{my}}}} {month} bill"],
                 facts={"bill_month": month, **pay.facts("payment_last_four_digits")},
                 reads={"get_account_details": [{"account_id": bill["account_id"]}]},
                 verify={"get_bills": {"account_id": bill["account_id"]}}, choices=[_bill_choice(ctx, bill), pay.choice],
                 outputs=[Output(money(bill["balance"]), "the amount due")],
                 preferences=[f"pay with {{{{my}}}} {pay.words}"], decline="pay it later",
                 mood=Mood("{{I}} want to clear {{my}} " + month + " bill", "neutral",
                           2 if bill["status"] == "overdue" else 1, 0 if bill["status"] == "overdue" else 7))

_DISPUTES = {"Late payment fee": ("late_fee_waiver", "the late payment fee"),
             "Data overage": ("overage_waiver", "the data overage charge")}

def ground_issue_bill_credit(ctx: GroundingContext) -> IntentDraft | None:
    found = []
    for bill in _bills(ctx):
        for item in bill["items"]:
            if item["description"] in _DISPUTES:
                args = {"bill_id": bill["bill_id"], "amount": item["amount"], "reason": _DISPUTES[item["description"]][0]}
                if ctx.fits("issue_bill_credit", args) and not bill["credits"]:
                    found.append((bill, item, args))
    bill, item, args = ctx.choose([f for f in found if f[0]["bill_id"] not in used_by_earlier_intents(ctx, "bill_id")])
    # one disputed charge of its kind on the bill, or "the overage charge" names nothing
    need(sum(i["description"] == item["description"] for i in bill["items"]) == 1)
    month = MONTHS[bill["period"]]
    words = _DISPUTES[item["description"]][1]
    request = [f"get a refund of {words} on {{{{my}}}} {month} bill", f"have {words} on {{{{my}}}} {month} bill credited back"]
    # a challenge breaks the one rule on the window or else the limit (the bill has no credits yet)
    refusal = None if not ctx.want_challenge else Refusal("credit_window", "credit window", "credit_too_old") if days_between(
        bill["issue_date"], TODAY) > CREDIT_WINDOW_DAYS else Refusal("credit_limit", "credit limit", "credit_over_limit")
    return draft(refusal.kind if refusal else "bill_credit", "issue_bill_credit", args, request,
                 facts={"bill_month": month, "disputed_charge": words},
                 reads={"get_account_details": [{"account_id": bill["account_id"]}]},
                 verify={"get_bills": {"account_id": bill["account_id"]}}, choices=[_bill_choice(ctx, bill)],
                 refusal=refusal, policy_values=[] if refusal else [args["reason"]],
                 outputs=[] if refusal else [Output(money(item["amount"]), "how much is credited")],
                 mood=Mood("{{I}} think {{I}} was charged unfairly on {{my}} " + month + " bill", "negative", 1, None))

# --------------------------------------------------------------------------- network faults and usage

def ground_run_troubleshooting_step(ctx: GroundingContext) -> IntentDraft | None:
    line = _fresh_line(ctx, [line for line in _lines(ctx) if line.get("issue")])
    issue = line["issue"]
    ref = _line_ref(ctx, line)
    return draft("troubleshoot", "run_troubleshooting_step", {"line_id": line["line_id"], "step": issue["fix"]},
                 [f"fix {ref.phrase}: {issue['symptom']}", f"sort out a problem with {ref.phrase} ({issue['symptom']})"],
                 ref, facts={"problem": issue["symptom"]}, verify={"diagnose_line": {"line_id": line["line_id"]}},
                 outputs=[Output("fault cleared", "whether the problem is fixed", from_goal=True)],
                 mood=Mood("{{my}} phone service is not working properly", "negative", 2, 0))

def ground_get_data_usage(ctx: GroundingContext) -> IntentDraft | None:
    line = _fresh_line(ctx, [line for line in _lines(ctx) if line["status"] == "active"])
    usage = ctx.call("get_data_usage", {"line_id": line["line_id"]})
    ref = _line_ref(ctx, line)
    worried = runs_out(ctx.state, line)  # a worry about running out needs a pace that runs out
    return draft("data_usage", "get_data_usage", {"line_id": line["line_id"]},
                 [f"find out how much data is left on {ref.phrase} this month",
                  f"check the data {{{{I}}}} have left on {ref.phrase}"], ref,
                 outputs=[Output(str(usage["data_left_gb"]), "how many GB of data are left", from_goal=True)],
                 mood=Mood("{{I}} worry {{I}} will run out of data before the month ends", "negative", 1,
                           days_between(TODAY, "2025-03-31")) if worried else
                 Mood("{{I}} want to know where {{I}} stand before the month ends", "neutral", 0, None))

HINTS = TracerHints(
    persona=persona,
    goals=goals_in(globals()),  # each ground_<tool> function above grounds <tool>
    # few lines have a fault or a disputable charge: draw those goals a little more often
    goal_weights={"run_troubleshooting_step": 1.3, "issue_bill_credit": 1.5, "resume_line": 0.7, "remove_addon": 0.7,
                  "get_data_usage": 0.7},
    entry_tools=["find_customer_by_phone"],
    # the policy: diagnose before troubleshooting, read the line before changing it, the bills before crediting
    policy_edges=[("diagnose_line", "run_troubleshooting_step"), ("get_line_details", "change_line_plan"),
                  ("get_line_details", "suspend_line"), ("get_bills", "issue_bill_credit")],
    occasions=OCCASIONS,
    occasion_intents=["change_plan", "downgrade_under_contract", "plan_changed_this_cycle", "add_addon",
                      "roaming_overdue", "replace_device", "data_usage", "troubleshoot", "pay_bill"],
    fact_phrase=fact_phrase,
    # events and occasions must agree with the line, plan and customer (no "no longer use" for an add-on in use)
    situation=situation,
    decision_rate=0.85,  # amount-bearing requests are a minority (plan, add-on, phone, bill): train fell to 119/600
)
