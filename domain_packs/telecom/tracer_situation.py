"""The telecom pack's situation check for the Tracer (`TracerHints.situation`): what an intent's event says about a
line, and the task's occasion, must agree with the database.

- "I no longer use" an add-on the line is using this cycle (roaming data abroad on a travel pass, data beyond the
  plan's allowance on an extra-data add-on).
- "I worry I will run out of data before the month ends" for a line that, at this cycle's pace so far, will not:
  more of its allowance is left than of the cycle.
- "I need more data" for a plan with no more data than the current one; "spend less" for one that costs no less.
- An occasion about the caller's lines ("my kids use my lines") needs more than one line and a caller of an age to have children at school (25-58); a tight budget ("money is
  tight", "a small budget") goes with no request that raises the monthly bill (an add-on, a dearer plan); "a
  student" is a caller under 30; a trip abroad ("flying abroad for my brother's wedding") goes with a roaming add-on.
"""

from __future__ import annotations

from typing import Any

from tau_emotion.domain_packs.telecom.tools import CYCLE_END, CYCLE_START, TODAY
from tau_emotion.tracer.hints import days_between

NO_LONGER_USE = "no longer use"
RUN_OUT = "run out of data"
TIGHT = ("money is tight", "small budget")
#: occasions about a trip abroad, said only beside a roaming add-on (not beside paying a bill)
TRAVEL = ("abroad", "holiday")
STUDENT_AGE = 30
#: the ages at which a caller may have children at school (telecom-test-047: "my kids use my lines" at 70)
PARENT_AGES = (25, 58)


def addon_in_use(state: Any, line: dict, addon_id: str) -> bool:
    """Whether the line uses the add-on this cycle: roaming data on a roaming pass, data beyond the plan's allowance
    on an extra-data add-on."""
    addon, usage = state["addons"].peek(addon_id), state["usage"].peek(line["line_id"]) or {}
    if addon["kind"] == "roaming":
        return usage.get("roaming_data_used_gb", 0) > 0
    if addon["kind"] == "data":
        return usage.get("data_used_gb", 0) > state["plans"].peek(line["plan_id"])["data_gb"]
    return False


def data_share_left(state: Any, line: dict) -> float:
    """The share of the line's data allowance (plan and extra-data add-ons) left this cycle."""
    allowance = state["plans"].peek(line["plan_id"])["data_gb"] + sum(
        state["addons"].peek(a)["extra_data_gb"] for a in line["addons"])
    used = (state["usage"].peek(line["line_id"]) or {}).get("data_used_gb", 0)
    return max(0.0, allowance - used) / allowance if allowance else 0.0


def runs_out(state: Any, line: dict) -> bool:
    """Whether the line's data runs out before the cycle ends at the pace it has been used so far."""
    cycle_left = days_between(TODAY, CYCLE_END) / days_between(CYCLE_START, CYCLE_END)
    return data_share_left(state, line) <= cycle_left


def _age(dob: str) -> int:
    return int(TODAY[:4]) - int(dob[:4]) - (TODAY[5:] < dob[5:])


def _raises_bill(state: Any, line: dict | None, draft: Any) -> bool:
    if draft.goal == "add_addon":
        return True
    if draft.goal == "change_line_plan" and line is not None:
        new, old = state["plans"].peek(draft.arguments.get("plan_code")), state["plans"].peek(line["plan_id"])
        return bool(new and old and new["monthly_price"] > old["monthly_price"])
    return False


def situation(state: Any, cand: Any) -> str | None:
    """Why the candidate's events or occasion contradict the database, or None."""
    occasion = (cand.occasion or "").lower()
    customer = state["customers"].peek(cand.persona.entity) if cand.persona else None
    for draft in cand.drafts:
        event = draft.mood.event.lower()
        lid = draft.arguments.get("line_id")
        line = state["lines"].peek(lid) if isinstance(lid, str) else None
        if line is not None and draft.goal == "remove_addon" and NO_LONGER_USE in event \
                and addon_in_use(state, line, draft.arguments["addon_code"]):
            return f"remove_addon: '{draft.mood.event}', but line {lid} uses it this cycle"
        if line is not None and RUN_OUT in event and not runs_out(state, line):
            return f"{draft.kind}: '{draft.mood.event}', but line {lid} has more of its data left than of the cycle"
        if line is not None and draft.goal == "change_line_plan":
            new, old = state["plans"].peek(draft.arguments.get("plan_code")), state["plans"].peek(line["plan_id"])
            if new and old and "more data" in event and new["data_gb"] <= old["data_gb"]:
                return f"change_line_plan: '{draft.mood.event}', but {new['name']} has no more data than {old['name']}"
            if new and old and "spend less" in event and new["monthly_price"] >= old["monthly_price"]:
                return f"change_line_plan: '{draft.mood.event}', but {new['name']} costs no less than {old['name']}"
        if occasion and any(t in occasion for t in TIGHT) and _raises_bill(state, line, draft):
            return f"occasion '{cand.occasion}' with {draft.kind}, which raises the monthly bill"
    if any(t in occasion for t in TRAVEL) and not any(
            d.goal == "add_addon" and (state["addons"].peek(d.arguments.get("addon_code")) or {}).get("kind") == "roaming"
            for d in cand.drafts):
        return f"occasion '{cand.occasion}' with no request for a roaming add-on"
    if customer is not None and "lines for school" in occasion:
        lines = sum(len(state["accounts"].peek(a)["line_ids"]) for a in customer["account_ids"])
        if lines < 2:
            return f"occasion '{cand.occasion}' for a customer with one line"
        if not PARENT_AGES[0] <= _age(customer["dob"]) <= PARENT_AGES[1]:
            return f"occasion '{cand.occasion}' for a customer aged {_age(customer['dob'])}"
    if customer is not None and "student" in occasion and _age(customer["dob"]) >= STUDENT_AGE:
        return f"occasion '{cand.occasion}' for a customer aged {_age(customer['dob'])}"
    return None
