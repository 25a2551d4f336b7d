"""Machine-checkable parts of the telehealth policy (`data/policy.md`).

Each rule is a `Rule` (core's policy rules contract, declared with `@rule`): given the state
*before* a write action and the action's raw arguments, it returns a one-line reason when the
policy forbids that action, else None. Rules ignore actions they are not about and arguments they
cannot read (the tool itself reports those). Tools enforce only identity verification; the rules
let the Tracer reject policy-breaking gold trajectories and ground the refusals.
"""

from __future__ import annotations

import datetime as _dt

from tau_emotion.core.domain import Rule, rule
from tau_emotion.core.state import State
from tau_emotion.domain_packs.telehealth.tools import (
    LATE_WINDOW_HOURS,
    NOW,
    SERVICE_OF,
    TODAY,
    caller_id,
    hours_until,
)

MAX_RESCHEDULES = 2  # an appointment is moved at most twice
CONTROLLED_VISIT_DAYS = 90  # a controlled substance is refilled only after a visit with its prescriber this recent
EARLY_REFILL_DAYS = 21  # a 30-day supply is refilled no sooner than 21 days after the last fill
#: the consent scope each action needs when a representative acts for a patient (None: only the patient)
SCOPE = {"book_appointment": "appointments", "reschedule_appointment": "appointments",
         "cancel_appointment": "appointments", "request_refill": "prescriptions",
         "update_contact_info": None, "revoke_consent": None}


def target_patient(state: State, action_name: str, arguments: dict) -> str | None:
    """The patient whose records an action changes (None when the arguments name nothing readable)."""
    def row(table: str, key: str) -> dict | None:
        value = arguments.get(key)
        return state[table].peek(value) if isinstance(value, str) else None

    if action_name in ("book_appointment", "update_contact_info"):
        pid = arguments.get("patient_id")
        return pid if isinstance(pid, str) and pid in state["patients"] else None
    found = {"reschedule_appointment": row("appointments", "appointment_id"),
             "cancel_appointment": row("appointments", "appointment_id"),
             "request_refill": row("prescriptions", "prescription_id"),
             "revoke_consent": row("consents", "consent_id")}.get(action_name)
    return found["patient_id"] if found else None


def active_consent(state: State, patient_id: str, representative_id: str, scope: str) -> dict | None:
    """The unexpired, unrevoked consent of `patient_id` letting `representative_id` act within `scope`."""
    patient = state["patients"].peek(patient_id)
    for cid in patient["consent_ids"] if patient else []:
        c = state["consents"].peek(cid)
        if (c["representative_id"] == representative_id and c["status"] == "active" and c["expires_on"] >= TODAY
                and scope in c["scope"]):
            return c
    return None


def patient_age(dob: str) -> int:
    b, t = _dt.date.fromisoformat(dob), _dt.date.fromisoformat(TODAY)
    return t.year - b.year - ((t.month, t.day) < (b.month, b.day))


# --------------------------------------------------------------------------- rules


@rule
def identity_verified(state: State, action_name: str, arguments: dict) -> str | None:
    """Nothing changes before the caller's identity is verified."""
    if action_name not in SCOPE or caller_id(state) is not None:
        return None
    return "the caller's identity is not verified"


@rule
def consent_on_file(state: State, action_name: str, arguments: dict) -> str | None:
    """Acting for another patient needs their active consent covering the action; contact details and consents only by the patient."""
    caller = caller_id(state)
    if action_name not in SCOPE or caller is None:
        return None
    patient = target_patient(state, action_name, arguments)
    if patient is None or patient == caller:
        return None
    scope = SCOPE[action_name]
    if scope is None:
        return f"only patient {patient} can change their own contact details or consents"
    if active_consent(state, patient, caller, scope) is None:
        return f"no active consent on file lets {caller} act on the {scope} of patient {patient}"
    return None


@rule
def reschedule_limits(state: State, action_name: str, arguments: dict) -> str | None:
    """An appointment is rescheduled at most twice, and never less than 24 hours before it starts."""
    if action_name != "reschedule_appointment":
        return None
    aid = arguments.get("appointment_id")
    appointment = state["appointments"].peek(aid) if isinstance(aid, str) else None
    if appointment is None or appointment["status"] != "scheduled":
        return None
    if appointment["reschedule_count"] >= MAX_RESCHEDULES:
        return f"appointment {aid} was already rescheduled {appointment['reschedule_count']} times"
    start = f"{appointment['date']}T{appointment['time']}"
    if start > NOW and hours_until(start) < LATE_WINDOW_HOURS:
        return f"appointment {aid} starts within {LATE_WINDOW_HOURS} hours: too late to reschedule"
    return None


@rule
def refill_rules(state: State, action_name: str, arguments: dict) -> str | None:
    """A refill needs refills left, an unexpired prescription, a 21-day gap since the last fill, and for a
    controlled substance a visit with the prescriber within 90 days."""
    if action_name != "request_refill":
        return None
    rid = arguments.get("prescription_id")
    rx = state["prescriptions"].peek(rid) if isinstance(rid, str) else None
    if rx is None:
        return None
    if rx["refills_left"] <= 0:
        return f"prescription {rid} has no refills left"
    if rx["expires_on"] < TODAY:
        return f"prescription {rid} expired on {rx['expires_on']}"
    since = (_dt.date.fromisoformat(TODAY) - _dt.date.fromisoformat(rx["last_filled"])).days
    if since < EARLY_REFILL_DAYS:
        return f"prescription {rid} was filled {since} days ago: too early for a refill"
    if rx["controlled"]:
        patient = state["patients"].peek(rx["patient_id"])
        cutoff = (_dt.date.fromisoformat(TODAY) - _dt.timedelta(days=CONTROLLED_VISIT_DAYS)).isoformat()
        if not any((v := state["visits"].peek(vid))["provider_id"] == rx["prescriber_id"] and v["date"] >= cutoff
                   for vid in patient["visit_ids"]):
            return f"{rx['medication']} is a controlled substance: no visit with its prescriber in {CONTROLLED_VISIT_DAYS} days"
    return None


@rule
def booking_rules(state: State, action_name: str, arguments: dict) -> str | None:
    """A booking is with an in-network provider whose service the plan covers, who sees patients of that
    age, and with whom the patient has no other scheduled appointment."""
    if action_name != "book_appointment":
        return None
    pid, sid = arguments.get("patient_id"), arguments.get("slot_id")
    patient = state["patients"].peek(pid) if isinstance(pid, str) else None
    slot = state["slots"].peek(sid) if isinstance(sid, str) else None
    if patient is None or slot is None:
        return None
    provider = state["providers"].peek(slot["provider_id"])
    low, high = provider["patient_ages"]
    age = patient_age(patient["date_of_birth"])
    if not low <= age <= high:
        return f"{provider['name']} sees patients aged {low} to {high}, and patient {pid} is {age}"
    plan_id = patient["insurance"]["plan_id"]
    if plan_id not in provider["accepted_plans"]:
        return f"{provider['name']} is out of network for plan {plan_id}"
    if SERVICE_OF[provider["specialty"]] not in state["insurance_plans"].peek(plan_id)["copays"]:
        return f"plan {plan_id} does not cover {SERVICE_OF[provider['specialty']]}"
    for aid in patient["appointment_ids"]:
        a = state["appointments"].peek(aid)
        if a["status"] == "scheduled" and a["provider_id"] == provider["provider_id"]:
            return f"patient {pid} already has appointment {aid} scheduled with {provider['name']}"
    return None


RULES: list[Rule] = [
    identity_verified,
    consent_on_file,
    reschedule_limits,
    refill_rules,
    booking_rules,
]
