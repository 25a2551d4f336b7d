"""Machine-checkable parts of the telecom policy (`data/policy.md`).

Each rule is a `Rule` (core's policy rules contract, declared with `@rule`): given the state
*before* a write action and the action's raw arguments, it returns a one-line reason when the
policy forbids that action, else None. Rules ignore actions they are not about and arguments they
cannot read (the tool itself reports those). Tools stay permissive on purpose: the agent must
apply the policy, and these rules let the Tracer reject policy-breaking gold trajectories.
"""

from __future__ import annotations

import datetime as _dt

from tau_emotion.core.domain import Rule, rule
from tau_emotion.core.state import State
from tau_emotion.domain_packs.telecom.tools import CYCLE_START, TODAY

CREDIT_LIMIT = 50  # total credits per bill
CREDIT_WINDOW_DAYS = 60  # a bill can be credited up to this many days after it was issued
MAX_SUSPENSION_DAYS = {"lost_or_stolen": 30, "travel": 90, "medical": 180}


def _line(state: State, arguments: dict) -> dict | None:
    lid = arguments.get("line_id")
    return state["lines"].peek(lid) if isinstance(lid, str) else None


def _bill(state: State, arguments: dict) -> dict | None:
    bid = arguments.get("bill_id")
    return state["bills"].peek(bid) if isinstance(bid, str) else None


def overdue_bills(state: State, account_id: str) -> list[str]:
    account = state["accounts"].peek(account_id)
    return [] if account is None else [b for b in account["bill_ids"]
                                       if (bill := state["bills"].peek(b))["balance"] > 0 and bill["due_date"] < TODAY]


# --------------------------------------------------------------------------- rules


@rule
def contract_term(state: State, action_name: str, arguments: dict) -> str | None:
    """A line under contract cannot move to a plan with a lower monthly price before the contract ends."""
    if action_name != "change_line_plan":
        return None
    line, new = _line(state, arguments), state["plans"].peek(str(arguments.get("plan_code")))
    if line is None or new is None or not line["contract_end_date"] or line["contract_end_date"] <= TODAY:
        return None
    if new["monthly_price"] < state["plans"].peek(line["plan_id"])["monthly_price"]:
        return f"line {line['line_id']} is under contract until {line['contract_end_date']}: no downgrade before then"
    return None


@rule
def plan_change_once_per_cycle(state: State, action_name: str, arguments: dict) -> str | None:
    """A line's plan can change at most once per billing cycle."""
    if action_name != "change_line_plan":
        return None
    line = _line(state, arguments)
    if line is None or not line["plan_changed_on"] or line["plan_changed_on"] < CYCLE_START:
        return None
    return f"the plan of line {line['line_id']} already changed on {line['plan_changed_on']}, in this billing cycle"


@rule
def suspended_line_frozen(state: State, action_name: str, arguments: dict) -> str | None:
    """No plan or add-on changes on a suspended line."""
    if action_name not in ("change_line_plan", "add_addon"):
        return None
    line = _line(state, arguments)
    if line is None or line["status"] != "suspended":
        return None
    return f"line {line['line_id']} is suspended: resume it before changing its plan or add-ons"


@rule
def roaming_needs_clear_account(state: State, action_name: str, arguments: dict) -> str | None:
    """A roaming add-on is not added while the line's account has an overdue bill."""
    if action_name != "add_addon":
        return None
    line, addon = _line(state, arguments), state["addons"].peek(str(arguments.get("addon_code")))
    if line is None or addon is None or addon["kind"] != "roaming":
        return None
    overdue = overdue_bills(state, line["account_id"])
    return f"account {line['account_id']} has an overdue bill ({overdue[0]}): no roaming add-on" if overdue else None


@rule
def suspension_limits(state: State, action_name: str, arguments: dict) -> str | None:
    """A suspension lasts at most 30 days (lost or stolen), 90 days (travel) or 180 days (medical)."""
    if action_name != "suspend_line":
        return None
    limit = MAX_SUSPENSION_DAYS.get(str(arguments.get("reason")))
    days = arguments.get("days")
    if limit is None or not isinstance(days, int) or days <= limit:
        return None
    return f"a suspension for {arguments['reason']} lasts at most {limit} days, not {days}"


@rule
def credit_limits(state: State, action_name: str, arguments: dict) -> str | None:
    """Credits on a bill total at most 50, and only within 60 days of the bill's issue date."""
    if action_name != "issue_bill_credit":
        return None
    bill = _bill(state, arguments)
    amount = arguments.get("amount")
    if bill is None or not isinstance(amount, (int, float)):
        return None
    issued = _dt.date.fromisoformat(bill["issue_date"])
    if (_dt.date.fromisoformat(TODAY) - issued).days > CREDIT_WINDOW_DAYS:
        return f"bill {bill['bill_id']} was issued on {bill['issue_date']}, more than {CREDIT_WINDOW_DAYS} days ago"
    if amount + sum(c["amount"] for c in bill["credits"]) > CREDIT_LIMIT + 1e-9:
        return f"credits on bill {bill['bill_id']} may total at most {CREDIT_LIMIT}"
    return None


RULES: list[Rule] = [
    contract_term,
    plan_change_once_per_cycle,
    suspended_line_frozen,
    roaming_needs_clear_account,
    suspension_limits,
    credit_limits,
]
