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

import datetime as _dt
import json
from typing import Any

from tau_emotion.domain_packs.telecom.rules import (
    CREDIT_LIMIT,
    CREDIT_WINDOW_DAYS,
    MAX_SUSPENSION_DAYS,
)
from tau_emotion.domain_packs.telecom.tools import CYCLE_START, DEDUCTIBLE, PROTECTION_ADDON, TODAY
from tau_emotion.tracer.hints import (
    Choice,
    GroundingContext,
    IntentDraft,
    Mood,
    Option,
    Output,
    Persona,
    Reference,
    TracerHints,
    draft,
    fact_wording,
    money,
    per_database,
    pick_fresh,
    pick_instrument,
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
    ("it is just a routine question", 0, "neutral"),
]

MONTHS = {"2024-12": "December", "2025-01": "January", "2025-02": "February"}


# --------------------------------------------------------------------------- lookups


def _customers(db: Any) -> list[str]:
    return [cid for cid, c in db.tables["customers"].items() if c["account_ids"]]


def _customer(ctx: GroundingContext) -> dict:
    return ctx.state["customers"].peek(ctx.persona.entity)


def _accounts(ctx: GroundingContext) -> list[dict]:
    return [ctx.state["accounts"].peek(a) for a in _customer(ctx)["account_ids"]]


def _lines(ctx: GroundingContext) -> list[dict]:
    return [ctx.state["lines"].peek(lid) for a in _accounts(ctx) for lid in a["line_ids"]]


def _plan(ctx: GroundingContext, plan_id: str) -> dict:
    return ctx.state["plans"].peek(plan_id)


def _catalogue_choice(ctx: GroundingContext, table: str, key: str, value: str, what: str) -> Choice:
    options = [Option(k, {"name": row["name"]}) for k, row in ctx.state[table].scan()]
    return Choice(what, value, options, {"name": ctx.state[table].peek(value)["name"]})


def _line_ref(ctx: GroundingContext, line: dict) -> Reference:
    """How the caller points at one of their lines: by its phone number."""
    account = ctx.state["accounts"].peek(line["account_id"])
    phone = line["phone_number"]
    options = [Option(lid, {"phone_number": ctx.state["lines"].peek(lid)["phone_number"]}) for lid in account["line_ids"]]
    return Reference(f"{{{{my}}}} line {phone}",
                     facts={} if phone == ctx.persona.facts["phone_number"] else {"line_phone_number": phone},
                     choices=[Choice("line", line["line_id"], options, {"phone_number": phone})],
                     reads={"get_account_details": [{"account_id": account["account_id"]}],
                            "get_line_details": [{"line_id": line["line_id"]}]}, evidence=["get_line_details"])


def _pick(ctx: GroundingContext, lines: list[dict]) -> dict | None:
    return pick_fresh(ctx, lines, "line_id", "line")


def _payment(ctx: GroundingContext) -> tuple[str, Choice, dict, str] | None:
    """A payment method of the caller, worded so it is the only fit: (id, choice, facts, words)."""
    methods = _customer(ctx)["payment_methods"]
    options = []
    for pid, m in methods.items():
        if m["source"] == "credit_card":
            options.append(Option(pid, {"kind": "credit card", "brand": m["brand"], "last_four": m["last_four"]}))
        else:
            options.append(Option(pid, {"kind": "bank account", "brand": m["bank"], "last_four": m["last_four"]}))
    picked = pick_instrument(ctx, "payment method", options)
    if picked is None:
        return None
    pick, choice, words = picked
    if pick.attrs["kind"] == "bank account" and "brand" in choice.selectors:
        words = f"{pick.attrs['brand']} bank account"
    facts = {"payment_method": words}
    if "last_four" in choice.selectors:
        facts["payment_last_four_digits"] = pick.attrs["last_four"]
    return pick.value, choice, facts, words


def _days_to_cycle_end() -> int:
    return (_dt.date(2025, 3, 31) - _dt.date.fromisoformat(TODAY)).days


# --------------------------------------------------------------------------- wording of facts




# the caller's own words for a suspension (the known fact) -> the instruction's second person
_SUSPENSION_WORDS = {"my phone was stolen": "your phone was stolen", "I am travelling abroad": "you are travelling abroad",
                     "a long hospital treatment": "you are going into hospital for a long treatment"}


def _word(key: str, value: Any) -> str:
    value = str(value)
    if key == "suspension_reason":
        return _SUSPENSION_WORDS.get(value, value)
    if key == "problem":  # 'no signal at home' is a noun phrase, 'calls keep dropping' a clause
        return value if value.startswith(("no ", "very ")) else f"that {value}"
    return value


#: the instruction's wording of a known fact ("the line is 305-555-1799", "your February bill")
fact_phrase = fact_wording({
    "line_phone_number": ("the line is {}", "the lines are {}"),
    "new_plan": ("the plan you want is {}", "the plan you want is {}"),
    "add_on": ("the add-on you want is {}", "the add-ons you want are {}"),
    "add_on_to_remove": ("the add-on to remove is {}", "the add-ons to remove are {}"),
    "new_phone_model": ("the phone you want is the {}", "the phone you want is the {}"),
    # two intents, two methods: in the intents' order
    "payment_method": lambda said: f"you pay with your {' and your '.join(said)}" + (" respectively" if len(said) > 1 else ""),
    "suspension_reason": ("the reason is that {}", "the reason is that {}"),
    "suspension_days": ("you want it suspended for {} days", "you want it suspended for {} days respectively"),
    "problem": ("the problem is {}", "the problem is {}"),
    "bill_month": ("the bill is your {} bill", "the bills are your {} bills"),
    "disputed_charge": ("the charge you dispute is {}", "the charge you dispute is {}"),
}, _word, unsaid=["payment_last_four_digits"])  # the payment method's words say it ("credit card ending in 3132")


# --------------------------------------------------------------------------- persona


def persona(ctx: GroundingContext) -> Persona | None:
    cid = ctx.rng.choice(per_database(ctx, _customers))
    customer = ctx.state["customers"].peek(cid)
    lines = [ctx.state["lines"].peek(lid) for a in customer["account_ids"]
             for lid in ctx.state["accounts"].peek(a)["line_ids"]]
    if not lines:
        return None
    phone = ctx.rng.choice(lines)["phone_number"]
    name = customer["name"]
    return Persona(name=f"{name['first_name']} {name['last_name']}",
                   facts={"first_name": name["first_name"], "last_name": name["last_name"], "phone_number": phone},
                   reads={"find_customer_by_phone": [{"phone_number": phone}],
                          "get_customer_details": [{"customer_id": cid}]}, entity=cid)


# --------------------------------------------------------------------------- plans


def ground_change_line_plan(ctx: GroundingContext) -> IntentDraft | None:
    lines = _lines(ctx)
    plans = [p for _, p in ctx.state["plans"].scan()]
    if ctx.want_challenge:
        options = []
        for line in lines:
            current = _plan(ctx, line["plan_id"])
            for plan in plans:
                if plan["plan_id"] == line["plan_id"]:
                    continue
                found = ctx.violations("change_line_plan", {"line_id": line["line_id"], "plan_code": plan["plan_id"]})
                if len(found) != 1:
                    continue
                if line["status"] == "suspended":
                    options.append((line, plan, "line_suspended", "suspended", "plan_on_suspended_line"))
                elif line["plan_changed_on"] and line["plan_changed_on"] >= CYCLE_START:
                    options.append((line, plan, "plan_changed_this_cycle", "billing cycle", "plan_changed_this_cycle"))
                elif plan["monthly_price"] < current["monthly_price"]:
                    options.append((line, plan, "contract_term", "contract", "downgrade_under_contract"))
        options = [o for o in options if o[0]["line_id"] not in used_by_earlier_intents(ctx, "line_id")]
        if not options:
            return None
        line, plan, reason, keyword, kind = ctx.rng.choice(options)
        ref = _line_ref(ctx, line)
        return draft(kind, "change_line_plan", {"line_id": line["line_id"], "plan_code": plan["plan_id"]},
                     [f"move {ref.phrase} to the {plan['name']} plan", f"switch {ref.phrase} to {plan['name']}"], ref,
                     facts={"new_plan": plan["name"]}, refused=True, outputs=[Output(keyword, reason=reason)],
                     mood=Mood("{{I}} want a plan that suits {{me}} better", "neutral", 1, None))
    items = []
    for line in lines:
        if ctx.violations("change_line_plan", {"line_id": line["line_id"], "plan_code": "PLAN_BASIC5"}) and \
                ctx.violations("change_line_plan", {"line_id": line["line_id"], "plan_code": "PLAN_UNLPREM"}):
            continue
        items.append(line)
    line = _pick(ctx, items)
    if line is None:
        return None
    allowed = [p for p in plans if p["plan_id"] != line["plan_id"]
               and not ctx.violations("change_line_plan", {"line_id": line["line_id"], "plan_code": p["plan_id"]})]
    if not allowed:
        return None
    plan = ctx.rng.choice(allowed)
    old = _plan(ctx, line["plan_id"])["monthly_price"]
    new = plan["monthly_price"]
    high, low = max(old, new), min(old, new)
    ref = _line_ref(ctx, line)
    more = new > old
    return draft("change_plan", "change_line_plan", {"line_id": line["line_id"], "plan_code": plan["plan_id"]},
                 [f"move {ref.phrase} to the {plan['name']} plan", f"switch {ref.phrase} to the {plan['name']} plan"],
                 ref, facts={"new_plan": plan["name"]},
                 reads={"get_catalogue": [{}], "calculate": [{"expression": f"{high} - {low}"}]},
                 choices=[_catalogue_choice(ctx, "plans", "plan_id", plan["plan_id"], "plan")],
                 outputs=[Output(money(high - low), "how much the monthly price changes")],
                 decline="keep {{my}} current plan" if more else None,
                 mood=Mood("{{I}} need " + ("more data" if more else "to spend less each month"),
                           "neutral", 1 if more else 2, None))


# --------------------------------------------------------------------------- add-ons


def ground_add_addon(ctx: GroundingContext) -> IntentDraft | None:
    lines = _lines(ctx)
    addons = [a for _, a in ctx.state["addons"].scan()]
    if ctx.want_challenge:
        options = []
        for line in lines:
            for addon in addons:
                if addon["addon_id"] in line["addons"]:
                    continue
                found = ctx.violations("add_addon", {"line_id": line["line_id"], "addon_code": addon["addon_id"]})
                if len(found) != 1:
                    continue
                if line["status"] == "suspended":
                    options.append((line, addon, "line_suspended", "suspended", "addon_on_suspended_line"))
                else:
                    options.append((line, addon, "overdue_balance", "overdue", "roaming_overdue"))
        options = [o for o in options if o[0]["line_id"] not in used_by_earlier_intents(ctx, "line_id")]
        if not options:
            return None
        line, addon, reason, keyword, kind = ctx.rng.choice(options)
        ref = _line_ref(ctx, line)
        reads = {"get_bills": [{"account_id": line["account_id"]}]} if reason == "overdue_balance" else {}
        return draft(kind, "add_addon", {"line_id": line["line_id"], "addon_code": addon["addon_id"]},
                     [f"add {addon['name']} to {ref.phrase}", f"get {addon['name']} on {ref.phrase}"], ref,
                     facts={"add_on": addon["name"]}, refused=True, outputs=[Output(keyword, reason=reason)],
                     reads=reads, evidence=["get_bills"] if reads else [],
                     mood=Mood("{{I}} need " + addon["name"] + " soon", "neutral", 2, 3))
    options = [(line, addon) for line in lines for addon in addons
               if addon["addon_id"] not in line["addons"] and addon["monthly_price"] >= 10
               and not ctx.violations("add_addon", {"line_id": line["line_id"], "addon_code": addon["addon_id"]})
               and line["line_id"] not in used_by_earlier_intents(ctx, "line_id")]
    if not options:
        return None
    line, addon = ctx.rng.choice(options)
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
    lines = [line for line in _lines(ctx) if line["addons"]]
    line = _pick(ctx, lines)
    if line is None:
        return None
    addon_id = ctx.rng.choice(line["addons"])
    addon = ctx.state["addons"].peek(addon_id)
    ref = _line_ref(ctx, line)
    options = [Option(a, {"name": ctx.state["addons"].peek(a)["name"]}) for a in line["addons"]]
    return draft("remove_addon", "remove_addon", {"line_id": line["line_id"], "addon_code": addon_id},
                 [f"remove {addon['name']} from {ref.phrase}", f"cancel the {addon['name']} add-on on {ref.phrase}"],
                 ref, facts={"add_on_to_remove": addon["name"]}, reads={"get_catalogue": [{}]},
                 evidence=["get_catalogue"],
                 choices=[Choice("add-on", addon_id, options, {"name": addon["name"]})],
                 mood=Mood("{{I}} no longer use " + addon["name"], "neutral", 0, None))


# --------------------------------------------------------------------------- suspensions

_SUSPEND = {
    "lost_or_stolen": ("{{my}} phone was stolen", "my phone was stolen", "negative", 3),
    "travel": ("{{I}} will be abroad for a long time", "I am travelling abroad", "neutral", 1),
    "medical": ("{{I}} {{am}} going into hospital for a long treatment", "a long hospital treatment", "negative", 3),
}


def ground_suspend_line(ctx: GroundingContext) -> IntentDraft | None:
    lines = [line for line in _lines(ctx) if line["status"] == "active"]
    line = _pick(ctx, lines)
    if line is None:
        return None
    reason = ctx.rng.choice(sorted(MAX_SUSPENSION_DAYS))
    limit = MAX_SUSPENSION_DAYS[reason]
    event, said, valence, stakes = _SUSPEND[reason]
    ref = _line_ref(ctx, line)
    if ctx.want_challenge:
        days = ctx.rng.choice([limit + 15, limit + 30, 2 * limit])
        return draft("suspend_too_long", "suspend_line", {"line_id": line["line_id"], "reason": reason, "days": days},
                     [f"suspend {ref.phrase} for {days} days"], ref,
                     facts={"suspension_reason": said, "suspension_days": days}, refused=True, context=event,
                     outputs=[Output("maximum duration", reason="suspension_too_long")], policy_values=[reason],
                     mood=Mood(event, valence, stakes, None))
    days = ctx.rng.choice(sorted({7, 14, limit // 2, limit}))
    return draft("suspend", "suspend_line", {"line_id": line["line_id"], "reason": reason, "days": days},
                 [f"suspend {ref.phrase} for {days} days", f"put {ref.phrase} on hold for {days} days"], ref,
                 facts={"suspension_reason": said, "suspension_days": days}, context=event, policy_values=[reason],
                 mood=Mood(event, valence, stakes, None))


def ground_resume_line(ctx: GroundingContext) -> IntentDraft | None:
    lines = [line for line in _lines(ctx) if line["status"] == "suspended"]
    line = _pick(ctx, lines)
    if line is None:
        return None
    ref = _line_ref(ctx, line)
    return draft("resume", "resume_line", {"line_id": line["line_id"]},
                 [f"resume {ref.phrase}", f"turn {ref.phrase} back on"], ref,
                 mood=Mood("{{I}} need {{my}} line working again", "positive", 1, 0))


# --------------------------------------------------------------------------- devices


def ground_replace_device(ctx: GroundingContext) -> IntentDraft | None:
    lines = [line for line in _lines(ctx) if line["status"] == "active"]
    line = _pick(ctx, lines)
    if line is None:
        return None
    current = ctx.state["devices"].peek(line["device_id"])["model_id"] if line["device_id"] else None
    models = [m for _, m in ctx.state["device_models"].scan() if m["model_id"] != current]
    model = ctx.rng.choice(models)
    protected = PROTECTION_ADDON in line["addons"]
    charge = min(DEDUCTIBLE, model["price"]) if protected else model["price"]
    paid = _payment(ctx)
    if paid is None:
        return None
    pid, pay_choice, pay_facts, words = paid
    ref = _line_ref(ctx, line)
    return draft("replace_device", "replace_device",
                 {"line_id": line["line_id"], "model_code": model["model_id"], "payment_id": pid},
                 [f"replace the phone on {ref.phrase} with {'an' if model['name'][0] in 'AEIOUi' else 'a'} {model['name']}",
                  f"get a new {model['name']} for {ref.phrase}"], ref,
                 facts={"new_phone_model": model["name"], **pay_facts}, reads={"get_catalogue": [{}]},
                 choices=[_catalogue_choice(ctx, "device_models", "model_id", model["model_id"], "device model"),
                          pay_choice],
                 outputs=[Output(money(charge), "what the new phone costs {{me}}")],
                 policy_values=[DEDUCTIBLE] if protected and charge == DEDUCTIBLE else [],
                 preferences=[f"pay with {{{{my}}}} {words}"], decline="keep {{my}} current phone",
                 mood=Mood("{{my}} phone broke", "negative", 2, None))


# --------------------------------------------------------------------------- bills


def _bills(ctx: GroundingContext) -> list[dict]:
    if len(_accounts(ctx)) != 1:
        return []  # a month names one bill only when the caller has one account
    return [ctx.state["bills"].peek(b) for b in _accounts(ctx)[0]["bill_ids"]]


def _bill_choice(ctx: GroundingContext, bill: dict) -> Choice:
    options = [Option(b["bill_id"], {"month": MONTHS[b["period"]]}) for b in _bills(ctx)]
    return Choice("bill", bill["bill_id"], options, {"month": MONTHS[bill["period"]]})


def ground_pay_bill(ctx: GroundingContext) -> IntentDraft | None:
    bills = [b for b in _bills(ctx) if b["balance"] > 0]
    bill = pick_fresh(ctx, bills, "bill_id", "bill")
    if bill is None:
        return None
    paid = _payment(ctx)
    if paid is None:
        return None
    pid, pay_choice, pay_facts, words = paid
    month = MONTHS[bill["period"]]
    return draft("pay_bill", "pay_bill", {"bill_id": bill["bill_id"], "payment_id": pid, "amount": bill["balance"]},
                 [f"pay {{{{my}}}} {month} bill in full", f"settle what {{{{I}}}} owe on {{{{my}}}} {month} bill"],
                 facts={"bill_month": month, **pay_facts},
                 reads={"get_account_details": [{"account_id": bill["account_id"]}],
                        "get_bills": [{"account_id": bill["account_id"]}]},
                 evidence=["get_bills"], choices=[_bill_choice(ctx, bill), pay_choice],
                 outputs=[Output(money(bill["balance"]), "the amount due")],
                 preferences=[f"pay with {{{{my}}}} {words}"], decline="pay it later",
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
                problems = ctx.violations("issue_bill_credit", args)
                if len(problems) == (1 if ctx.want_challenge else 0) and not bill["credits"]:
                    found.append((bill, item, args))
    found = [f for f in found if f[0]["bill_id"] not in used_by_earlier_intents(ctx, "bill_id")]
    if not found:
        return None
    bill, item, args = ctx.rng.choice(found)
    # one disputed charge of its kind on the bill, or "the overage charge" names nothing
    if sum(i["description"] == item["description"] for i in bill["items"]) != 1:
        return None
    month = MONTHS[bill["period"]]
    words = _DISPUTES[item["description"]][1]
    request = [f"get a refund of {words} on {{{{my}}}} {month} bill", f"have {words} on {{{{my}}}} {month} bill credited back"]
    reads = {"get_account_details": [{"account_id": bill["account_id"]}], "get_bills": [{"account_id": bill["account_id"]}]}
    mood = Mood("{{I}} think {{I}} was charged unfairly on {{my}} " + month + " bill", "negative", 1, None)
    if ctx.want_challenge:
        old = (_dt.date.fromisoformat(TODAY) - _dt.date.fromisoformat(bill["issue_date"])).days > CREDIT_WINDOW_DAYS
        reason, keyword, kind = ("credit_window", "credit window", "credit_too_old") if old else (
            "credit_limit", "credit limit", "credit_over_limit")
        if not old and item["amount"] <= CREDIT_LIMIT:
            return None
        return draft(kind, "issue_bill_credit", args, request, facts={"bill_month": month, "disputed_charge": words},
                     reads=reads, evidence=["get_bills"], choices=[_bill_choice(ctx, bill)], refused=True,
                     outputs=[Output(keyword, reason=reason)], mood=mood)
    return draft("bill_credit", "issue_bill_credit", args, request, facts={"bill_month": month, "disputed_charge": words},
                 reads=reads, evidence=["get_bills"], choices=[_bill_choice(ctx, bill)], policy_values=[args["reason"]],
                 outputs=[Output(money(item["amount"]), "how much is credited")], mood=mood)


# --------------------------------------------------------------------------- network faults and usage


def ground_run_troubleshooting_step(ctx: GroundingContext) -> IntentDraft | None:
    line = _pick(ctx, [line for line in _lines(ctx) if line.get("issue")])
    if line is None:
        return None
    issue = line["issue"]
    ref = _line_ref(ctx, line)
    return draft("troubleshoot", "run_troubleshooting_step", {"line_id": line["line_id"], "step": issue["fix"]},
                 [f"fix {ref.phrase}: {issue['symptom']}", f"sort out a problem with {ref.phrase} ({issue['symptom']})"],
                 ref, facts={"problem": issue["symptom"]}, reads={"diagnose_line": [{"line_id": line["line_id"]}]},
                 evidence=["diagnose_line"], outputs=[Output("fault cleared", "whether the problem is fixed", from_goal=True)],
                 mood=Mood("{{my}} phone service is not working properly", "negative", 2, 0))


def ground_get_data_usage(ctx: GroundingContext) -> IntentDraft | None:
    lines = [line for line in _lines(ctx) if line["status"] == "active"]
    line = _pick(ctx, lines)
    if line is None:
        return None
    text, is_error = ctx.domain.toolset.call(ctx.state, "get_data_usage", {"line_id": line["line_id"]})
    if is_error:
        return None
    usage = json.loads(text)
    ref = _line_ref(ctx, line)
    return draft("data_usage", "get_data_usage", {"line_id": line["line_id"]},
                 [f"find out how much data is left on {ref.phrase} this month",
                  f"check the data {{{{I}}}} have left on {ref.phrase}"], ref,
                 outputs=[Output(str(usage["data_left_gb"]), "how many GB of data are left", from_goal=True)],
                 mood=Mood("{{I}} worry {{I}} will run out of data before the month ends", "negative", 1,
                           _days_to_cycle_end()))


HINTS = TracerHints(
    persona=persona,
    goals={
        "change_line_plan": ground_change_line_plan,
        "add_addon": ground_add_addon,
        "remove_addon": ground_remove_addon,
        "suspend_line": ground_suspend_line,
        "resume_line": ground_resume_line,
        "replace_device": ground_replace_device,
        "pay_bill": ground_pay_bill,
        "issue_bill_credit": ground_issue_bill_credit,
        "run_troubleshooting_step": ground_run_troubleshooting_step,
        "get_data_usage": ground_get_data_usage,
    },
    # few lines have a fault or a disputable charge: draw those goals a little more often
    goal_weights={"run_troubleshooting_step": 1.3, "issue_bill_credit": 1.5, "resume_line": 0.7, "remove_addon": 0.7,
                  "get_data_usage": 0.7},
    entry_tools=["find_customer_by_phone"],
    handoff_tool="transfer_to_human_agents",
    # the policy: diagnose before troubleshooting, read the line before changing it, the bills before crediting
    policy_edges=[("diagnose_line", "run_troubleshooting_step"), ("get_line_details", "change_line_plan"),
                  ("get_line_details", "suspend_line"), ("get_bills", "issue_bill_credit")],
    occasions=OCCASIONS,
    occasion_intents=["change_plan", "downgrade_under_contract", "plan_changed_this_cycle", "add_addon",
                      "roaming_overdue", "replace_device", "data_usage", "troubleshoot", "pay_bill"],
    fact_phrase=fact_phrase,
    # customer, account, line, bill and payment records are internal: a customer says phone numbers and months
    visible_ids=frozenset(),
)
