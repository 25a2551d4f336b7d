"""The bank pack's situation check for the Tracer (`TracerHints.situation`): the task's occasion must agree with the
caller's accounts and age and with what the task does.

- "saving for a deposit on my first home": the caller holds no mortgage.
- "my daughter is starting college": a caller old enough to have a child of college age (`PARENT_OF_STUDENT_AGE`).
- "every dollar counts" after losing a job: no loan paid off in full and no higher card limit for a big purchase.
- "sorting out my late father's bills": a request that pays someone (a payee payment or a standing order), not
  only the caller's own transfers or cards.
"""

from __future__ import annotations

from typing import Any

from tau_emotion.domain_packs.bank.tools import TODAY

PARENT_OF_STUDENT_AGE = 36
#: what someone counting every dollar does not do
NOT_WHEN_SHORT = frozenset({"loan_payoff", "limit_up"})
PAYS_SOMEONE = frozenset({"pay_payee", "create_standing_order"})


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
    if "father's bills" in occasion and not any(d.goal in PAYS_SOMEONE for d in cand.drafts):
        return f"occasion '{cand.occasion}' for a task that pays nobody"
    return None
