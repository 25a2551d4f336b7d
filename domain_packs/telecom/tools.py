"""Tools of the telecom domain: customers, accounts, lines, plans, add-ons, devices, bills and repairs.

Every tool is a typed function over the episode's database `State`. Tools execute what they are
asked when it is mechanically possible (the line exists, the add-on is not already on it, the bill
still has a balance) and raise `ToolError` otherwise; whether an action is *allowed* by the policy
(contract terms, one plan change per billing cycle, credit limits, suspension lengths) is the
agent's call, checked separately by the pack's `rules.py`.

Tools never read the clock or draw random numbers: today is the constant `TODAY`, and new ids are
derived from a hash of the request and the rows that already exist, so replaying the same calls
always produces the same database.
"""

from __future__ import annotations

import datetime as _dt
from typing import Literal

from tau_emotion.core.state import State
from tau_emotion.core.tools import ToolError, find_row, tool
from tau_emotion.domain_packs.values import arithmetic
from tau_emotion.domain_packs.values import digest as _digest
from tau_emotion.domain_packs.values import money as _money
from tau_emotion.domain_packs.values import new_id as _new_id

TODAY = "2025-03-14"
CYCLE_START = "2025-03-01"  # every account bills by calendar month
CYCLE_END = "2025-03-31"
DEDUCTIBLE = 99  # what a replacement costs on a line with the Device Protection add-on
PROTECTION_ADDON = "ADD_PROTECT"
STEPS = ("restart_device", "toggle_airplane_mode", "reset_network_settings", "reprovision_sim", "update_carrier_settings")

Step = Literal["restart_device", "toggle_airplane_mode", "reset_network_settings", "reprovision_sim",
               "update_carrier_settings"]
SuspensionReason = Literal["lost_or_stolen", "travel", "medical"]
CreditReason = Literal["late_fee_waiver", "overage_waiver", "service_outage", "billing_error"]


# --------------------------------------------------------------------------- helpers


def _payment_method(db: State, account: dict, payment_id: str) -> dict:
    customer = db["customers"].peek(account["customer_id"])
    method = customer["payment_methods"].get(payment_id)
    if method is None:
        raise ToolError(f"payment method '{payment_id}' is not in the profile of customer '{customer['customer_id']}'")
    return method


# --------------------------------------------------------------------------- look-ups


@tool
def find_customer_by_phone(db: State, phone_number: str) -> dict:
    """Find the customer who owns a phone line, by the line's number.

    Args:
        phone_number: The line's number as 'NNN-NNN-NNNN', such as '415-555-0142'.
    """
    for _line_id, line in db["lines"].scan():
        if line["phone_number"] == phone_number:
            account = db["accounts"].peek(line["account_id"])
            customer = db["customers"].peek(account["customer_id"])
            return {"customer_id": customer["customer_id"], "first_name": customer["name"]["first_name"],
                    "last_name": customer["name"]["last_name"]}
    raise ToolError(f"no line with phone number '{phone_number}'")


@tool
def get_customer_details(db: State, customer_id: str) -> dict:
    """Get a customer's profile: name, date of birth, email, address, account ids and payment methods.

    Args:
        customer_id: The customer's id, such as 'C104233'.
    """
    return find_row(db, "customers", customer_id, "customer")


@tool
def get_account_details(db: State, account_id: str) -> dict:
    """Get an account: its owner, status, autopay card, its lines (id, phone number, plan, status) and bill ids.

    Args:
        account_id: The account's id, such as 'A500172'.
    """
    account = find_row(db, "accounts", account_id, "account")
    lines = []
    for line_id in account["line_ids"]:
        line = db["lines"].peek(line_id)
        lines.append({"line_id": line_id, "phone_number": line["phone_number"], "plan_id": line["plan_id"],
                      "status": line["status"]})
    return {**account, "lines": lines}


@tool
def get_line_details(db: State, line_id: str) -> dict:
    """Get a line: phone number, plan, add-ons, device, status and suspension, contract end date and the date of its last plan change.

    Args:
        line_id: The line's id, such as 'L300415'.
    """
    line = find_row(db, "lines", line_id, "line")
    return {k: v for k, v in line.items() if k != "issue"}


@tool
def get_catalogue(db: State) -> dict:
    """List the plans (monthly price, data allowance, contract months), the add-ons (monthly price) and the device models (price) on offer."""
    return {"plans": [row for _, row in db["plans"].scan()],
            "addons": [row for _, row in db["addons"].scan()],
            "device_models": [row for _, row in db["device_models"].scan()]}


@tool
def get_bills(db: State, account_id: str) -> list:
    """List an account's bills, newest first: period, issue and due dates, charges, payments, credits, balance and status.

    Args:
        account_id: The account's id, such as 'A500172'.
    """
    account = find_row(db, "accounts", account_id, "account")
    bills = [db["bills"].peek(bid) for bid in account["bill_ids"]]
    return sorted(bills, key=lambda b: b["issue_date"], reverse=True)


@tool
def get_data_usage(db: State, line_id: str) -> dict:
    """Get a line's usage in the current billing cycle: data used and its allowance in GB, roaming data, minutes and texts.

    Args:
        line_id: The line's id, such as 'L300415'.
    """
    line = find_row(db, "lines", line_id, "line")
    usage = db["usage"].peek(line_id)
    plan = db["plans"].peek(line["plan_id"])
    extra = sum(db["addons"].peek(a)["extra_data_gb"] for a in line["addons"])
    allowance = plan["data_gb"] + extra
    return {"line_id": line_id, "cycle_start": CYCLE_START, "cycle_end": CYCLE_END, **usage,
            "data_allowance_gb": allowance, "data_left_gb": _money(max(0, allowance - usage["data_used_gb"]))}


@tool
def diagnose_line(db: State, line_id: str) -> dict:
    """Run a network diagnosis on a line: any open fault, its symptom and the troubleshooting step that clears it.

    Args:
        line_id: The line's id, such as 'L300415'.
    """
    line = find_row(db, "lines", line_id, "line")
    issue = line.get("issue")
    if not issue:
        return {"line_id": line_id, "fault": "none", "symptom": None, "recommended_step": None}
    return {"line_id": line_id, "fault": "open", "symptom": issue["symptom"], "recommended_step": issue["fix"]}


# --------------------------------------------------------------------------- changes


@tool(writes=True)
def change_line_plan(db: State, line_id: str, plan_code: str) -> dict:
    """Move a line to another plan from the catalogue, starting today; the new monthly price shows on the next bill.

    Args:
        line_id: The line's id.
        plan_code: The new plan's code in the catalogue, such as 'PLAN_PLUS30'.
    """
    line = find_row(db, "lines", line_id, "line", write=True)
    plan = find_row(db, "plans", plan_code, "plan")
    if line["plan_id"] == plan_code:
        raise ToolError(f"line {line_id} is already on plan {plan_code}")
    old = db["plans"].peek(line["plan_id"])
    line["plan_id"] = plan_code
    line["plan_changed_on"] = TODAY
    if plan["contract_months"]:
        end = _dt.date.fromisoformat(TODAY) + _dt.timedelta(days=30 * plan["contract_months"])
        line["contract_end_date"] = max(line["contract_end_date"] or "", end.isoformat())
    return {"line_id": line_id, "old_plan": old["name"], "new_plan": plan["name"],
            "new_monthly_price": plan["monthly_price"], "contract_end_date": line["contract_end_date"]}


@tool(writes=True)
def add_addon(db: State, line_id: str, addon_code: str) -> dict:
    """Add an add-on (such as a roaming pass or extra data) to a line; its monthly price is billed from today.

    Args:
        line_id: The line's id.
        addon_code: The add-on's code in the catalogue, such as 'ADD_EU_PASS'.
    """
    line = find_row(db, "lines", line_id, "line", write=True)
    addon = find_row(db, "addons", addon_code, "add-on")
    if addon_code in line["addons"]:
        raise ToolError(f"line {line_id} already has add-on {addon_code}")
    line["addons"].append(addon_code)
    return {"line_id": line_id, "addons": list(line["addons"]), "monthly_price": addon["monthly_price"]}


@tool(writes=True)
def remove_addon(db: State, line_id: str, addon_code: str) -> dict:
    """Remove an add-on from a line; it stops being billed from today.

    Args:
        line_id: The line's id.
        addon_code: The add-on's code, such as 'ADD_EU_PASS'.
    """
    line = find_row(db, "lines", line_id, "line", write=True)
    if addon_code not in line["addons"]:
        raise ToolError(f"line {line_id} has no add-on {addon_code}")
    line["addons"].remove(addon_code)
    return {"line_id": line_id, "addons": list(line["addons"])}


@tool(writes=True)
def suspend_line(db: State, line_id: str, reason: SuspensionReason, days: int) -> dict:
    """Suspend an active line for a number of days, for a reason; no calls, texts or data while it is suspended.

    Args:
        line_id: The line's id.
        reason: 'lost_or_stolen', 'travel' or 'medical'.
        days: How many days the suspension lasts, counted from today.
    """
    line = find_row(db, "lines", line_id, "line", write=True)
    if line["status"] != "active":
        raise ToolError(f"line {line_id} is not active (status: {line['status']})")
    if days < 1:
        raise ToolError("a suspension lasts at least one day")
    end = (_dt.date.fromisoformat(TODAY) + _dt.timedelta(days=days)).isoformat()
    line["status"] = "suspended"
    line["suspension"] = {"reason": reason, "start_date": TODAY, "end_date": end}
    return {"line_id": line_id, "status": "suspended", "suspension": dict(line["suspension"])}


@tool(writes=True)
def resume_line(db: State, line_id: str) -> dict:
    """Resume a suspended line today; service comes back within minutes.

    Args:
        line_id: The line's id.
    """
    line = find_row(db, "lines", line_id, "line", write=True)
    if line["status"] != "suspended":
        raise ToolError(f"line {line_id} is not suspended (status: {line['status']})")
    line["status"] = "active"
    line["suspension"] = None
    return {"line_id": line_id, "status": "active"}


@tool(writes=True)
def replace_device(db: State, line_id: str, model_code: str, payment_id: str) -> dict:
    """Replace a line's device with a new one of a catalogue model and register it on the line; the old device is retired.

    The charge is the model's price, or the 99 deductible when the line has the Device Protection
    add-on; it is paid at once with a payment method from the account owner's profile.

    Args:
        line_id: The line's id.
        model_code: The device model's code in the catalogue, such as 'DM_PIXEL9'.
        payment_id: The payment method that pays the charge.
    """
    line = find_row(db, "lines", line_id, "line", write=True)
    model = find_row(db, "device_models", model_code, "device model")
    account = db["accounts"].peek(line["account_id"])
    _payment_method(db, account, payment_id)
    charge = min(DEDUCTIBLE, model["price"]) if PROTECTION_ADDON in line["addons"] else model["price"]
    old = line["device_id"]
    if old is not None and old in db["devices"]:
        db["devices"][old]["status"] = "retired"
    device_id = _new_id(db, "devices", "D", line_id, model_code, old)
    imei = str(int(_digest("imei", device_id), 16) % 10**15).zfill(15)
    db["devices"][device_id] = {"device_id": device_id, "line_id": line_id, "model_id": model_code, "imei": imei,
                                "status": "active", "registered_on": TODAY}
    line["device_id"] = device_id
    return {"line_id": line_id, "device_id": device_id, "model": model["name"], "charge": _money(charge),
            "payment_id": payment_id}


@tool(writes=True)
def pay_bill(db: State, bill_id: str, payment_id: str, amount: float) -> dict:
    """Pay (part of) a bill's balance with a payment method from the account owner's profile.

    Args:
        bill_id: The bill's id, such as 'B700311'.
        payment_id: The credit card or bank account that pays.
        amount: The amount paid; at most the bill's balance.
    """
    bill = find_row(db, "bills", bill_id, "bill", write=True)
    account = db["accounts"].peek(bill["account_id"])
    _payment_method(db, account, payment_id)
    if amount <= 0:
        raise ToolError("the amount must be positive")
    if amount > bill["balance"] + 1e-9:
        raise ToolError(f"bill {bill_id} has a balance of {bill['balance']}, less than {_money(amount)}")
    bill["payments"].append({"payment_id": payment_id, "amount": _money(amount), "date": TODAY})
    bill["balance"] = _money(bill["balance"] - amount)
    if bill["balance"] == 0:
        bill["status"] = "paid"
    return {"bill_id": bill_id, "paid": _money(amount), "balance": bill["balance"], "status": bill["status"]}


@tool(writes=True)
def issue_bill_credit(db: State, bill_id: str, amount: float, reason: CreditReason) -> dict:
    """Credit (refund) an amount on a bill; it lowers the balance, and what exceeds the balance goes back to the payer.

    Args:
        bill_id: The bill's id, such as 'B700311'.
        amount: The credit amount.
        reason: 'late_fee_waiver', 'overage_waiver', 'service_outage' or 'billing_error'.
    """
    bill = find_row(db, "bills", bill_id, "bill", write=True)
    if amount <= 0:
        raise ToolError("the credit amount must be positive")
    if amount > bill["amount"] - sum(c["amount"] for c in bill["credits"]) + 1e-9:
        raise ToolError(f"the credits on bill {bill_id} cannot exceed the bill's amount {bill['amount']}")
    bill["credits"].append({"amount": _money(amount), "reason": reason, "date": TODAY})
    from_balance = min(bill["balance"], amount)
    bill["balance"] = _money(bill["balance"] - from_balance)
    if bill["balance"] == 0:
        bill["status"] = "paid"
    return {"bill_id": bill_id, "credit": _money(amount), "balance": bill["balance"],
            "refunded_to_payer": _money(amount - from_balance)}


@tool(writes=True)
def run_troubleshooting_step(db: State, line_id: str, step: Step) -> dict:
    """Run one remote troubleshooting step on a line and say whether its fault is cleared.

    Args:
        line_id: The line's id.
        step: 'restart_device', 'toggle_airplane_mode', 'reset_network_settings', 'reprovision_sim' or 'update_carrier_settings'.
    """
    line = find_row(db, "lines", line_id, "line", write=True)
    line["troubleshooting_log"].append({"step": step, "date": TODAY})
    issue = line.get("issue")
    if issue and issue["fix"] == step:
        line["issue"] = None
        return {"line_id": line_id, "step": step, "result": "fault cleared"}
    return {"line_id": line_id, "step": step, "result": "no fault cleared" if issue else "no fault on this line"}


# --------------------------------------------------------------------------- utilities


@tool
def calculate(db: State, expression: str) -> str:
    """Evaluate an arithmetic expression with numbers, + - * / and parentheses; the result is rounded to 2 decimals.

    Args:
        expression: The expression, such as '(65 - 45) * 2'.
    """
    return str(arithmetic(expression))


@tool(terminal=True)
def transfer_to_human_agents(db: State, summary: str) -> str:
    """Hand the conversation to a human agent, with a short summary of the customer's issue; this ends your part.

    Use it only when the request is outside what you can do under the policy and the customer asks for a person.

    Args:
        summary: What the customer needs and what has been done so far.
    """
    return "Transfer successful"
