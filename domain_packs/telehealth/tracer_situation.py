"""The telehealth pack's situation check for the Tracer (`TracerHints.situation`): what an intent's event says
about a prescription or a visit, and the task's occasion, must agree with the database.

- "will run out of X soon" needs the last fill's supply to end within `SOON_DAYS` days and not to have ended
  already ("I have run out" is said then); a refill asked too early is not about running out.
- "what the doctor said at my last visit" is about the patient's most recent visit.
- An occasion about the caller's own body ("I have been feeling unwell for weeks") needs a request about the caller
  themself, not only about a family member.
"""

from __future__ import annotations

from typing import Any

from tau_emotion.domain_packs.telehealth.tools import TODAY
from tau_emotion.tracer.hints import days_between

SOON_DAYS = 10
RUN_OUT_SOON = "will run out of"
LAST_VISIT = "last visit"
ABOUT_ME = ("feeling unwell", "look after {{my}} own health")


def supply_left(rx: dict) -> int:
    """Days until the last fill's supply ends (negative: it ended that many days ago)."""
    return rx["days_supply"] - days_between(rx["last_filled"], TODAY)


def _about(draft: Any) -> str | None:
    """The patient a draft is about (None: no patient in its arguments)."""
    return draft.arguments.get("patient_id")


def situation(state: Any, cand: Any) -> str | None:
    """Why the candidate's events or occasion contradict the database, or None."""
    patients = []
    for draft in cand.drafts:
        event = draft.mood.event.lower()
        rid = draft.arguments.get("prescription_id")
        rx = state["prescriptions"].peek(rid) if isinstance(rid, str) else None
        if rx is not None:
            patients.append(rx["patient_id"])
            left = supply_left(rx)
            if RUN_OUT_SOON in event and not 0 <= left <= SOON_DAYS:
                return f"{draft.kind}: '{draft.mood.event}', but the last fill of {rx['medication']} " + \
                    (f"ran out {-left} days ago" if left < 0 else f"lasts {left} more days")
        aid = draft.arguments.get("appointment_id")
        appointment = state["appointments"].peek(aid) if isinstance(aid, str) else None
        if appointment is not None:
            patients.append(appointment["patient_id"])
        if _about(draft):
            patients.append(_about(draft))
        if LAST_VISIT in event and draft.goal == "list_visit_records" and draft.facts.get("visit_date"):
            patient = state["patients"].peek(draft.arguments["patient_id"])
            latest = max(state["visits"].peek(v)["date"] for v in patient["visit_ids"])
            if draft.facts["visit_date"] != latest:
                return f"{draft.kind}: '{draft.mood.event}', but the visit of {draft.facts['visit_date']} is not " \
                       f"the latest ({latest})"
    occasion = (cand.occasion or "").lower()
    caller = cand.persona.entity if cand.persona else None
    if any(w in occasion for w in ABOUT_ME) and patients and caller not in patients:
        return f"occasion '{cand.occasion}' for requests about someone else"
    return None
