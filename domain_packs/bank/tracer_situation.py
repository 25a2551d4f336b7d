"""The bank pack's situation check for the Tracer (`TracerHints.situation`): the task's occasion must agree with the
caller's accounts and age and with what the task does.

- "saving for a deposit on my first home": the caller holds no mortgage.
- "my daughter is starting college": a caller old enough to have a child of college age (`PARENT_OF_STUDENT_AGE`).
- "every dollar counts" after a big car repair: no loan paid off in full and no higher card limit for a big purchase.
- "sorting out my late father's bills": a request that pays a household bill (a payee payment or a standing order
  to a utility, insurer, landlord or the tax office), not only the caller's own transfers or cards, and not only a
  daycare or a private person (bank-test-049 paid only Bright Horizons Daycare "for my late father").
"""

from __future__ import annotations

from typing import Any

from tau_emotion.domain_packs.bank.generate_db import PAYEES
from tau_emotion.domain_packs.bank.tools import TODAY

PARENT_OF_STUDENT_AGE = 36
#: what someone counting every dollar does not do
NOT_WHEN_SHORT = frozenset({"loan_payoff", "limit_up"})
PAYS_SOMEONE = frozenset({"pay_payee", "create_standing_order"})
#: saved payees that are no one's household bill (a person's name is not one either)
NOT_A_BILL = frozenset({"Bright Horizons Daycare"})


def age(dob: str) -> int:
    return int(TODAY[:4]) - int(dob[:4]) - (TODAY[5:] < dob[5:])


def situation(state: Any, cand: Any) -> str | None:
    """Why the candidate's occasion contradicts the caller's accounts, age or requests, or None."""
    occasion = (cand.occasion or "").lower()
    customer = state["customers"].peek(cand.persona.entity) if occasion and cand.persona else None
    if customer is None:
        return None
    if "first home" in occasion:
        loans = [state["accounts"].peek(a) for a in customer["account_ids"]]
        if any(a["type"] == "loan" and (a.get("loan") or {}).get("kind") == "mortgage" for a in loans):
            return f"occasion '{cand.occasion}' for a caller who holds a mortgage"
    if "starting college" in occasion and age(customer["date_of_birth"]) < PARENT_OF_STUDENT_AGE:
        return f"occasion '{cand.occasion}' for a caller aged {age(customer['date_of_birth'])}"
    if "every dollar counts" in occasion:
        spent = [d.kind for d in cand.drafts if d.kind in NOT_WHEN_SHORT]
        if spent:
            return f"occasion '{cand.occasion}' with {spent[0]}"
    if "father's bills" in occasion:
        paid = [d for d in cand.drafts if d.goal in PAYS_SOMEONE]
        if not paid:
            return f"occasion '{cand.occasion}' for a task that pays nobody"
        if not any(_is_bill(state, d.arguments.get("payee_id")) for d in paid):
            return f"occasion '{cand.occasion}' for a task that pays no household bill"
    return None


def _is_bill(state: Any, payee_id: str | None) -> bool:
    """Whether a saved payee is a household bill: a company from the bank's bill list, not a daycare or a person."""
    payee = state["payees"].peek(payee_id) if payee_id and payee_id in state["payees"] else None
    return payee is not None and payee["name"] in PAYEES and payee["name"] not in NOT_A_BILL
