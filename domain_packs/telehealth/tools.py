"""Tools of the telehealth domain: patients, providers, slots, appointments, prescriptions, coverage and visits.

Every tool is a typed function over the episode's database `State`. The caller's identity is the
one thing the tools enforce themselves: until `verify_patient_identity` has matched a patient's
name and date of birth, every tool that reads or changes a patient's records refuses, and the
verified caller is kept in the `session` table. Beyond that, tools execute what is mechanically
possible (the slot is open, the appointment is still scheduled, refills are left) and raise
`ToolError` otherwise; whether an action is *allowed* (consent to act for someone else, the 24-hour
window, reschedule limits, refill and coverage rules) is the agent's call, checked by `rules.py`.

Tools never read the clock or draw random numbers: now is the constant `NOW`, and new ids are
derived from a hash of the request and the rows that already exist, so replaying the same calls
always produces the same database.
"""

from __future__ import annotations

import datetime as _dt
import re

from tau_emotion.core.state import State
from tau_emotion.core.tools import ToolError, find_row, tool
from tau_emotion.domain_packs.values import arithmetic
from tau_emotion.domain_packs.values import new_id as _new_id

TODAY = "2025-06-10"
NOW = "2025-06-10T09:00"
LATE_CANCEL_FEE = 40  # cancelling less than 24 hours before the start
LATE_WINDOW_HOURS = 24
SERVICE_OF = {  # a provider's specialty -> the insurance service a visit with them is billed as
    "family_medicine": "primary_care",
    "pediatrics": "pediatrics",
    "dermatology": "dermatology",
    "cardiology": "cardiology",
    "psychiatry": "mental_health",
    "physical_therapy": "physical_therapy",
    "nutrition": "nutrition",
}
_DATE = re.compile(r"^\d{4}-\d{2}-\d{2}$")
_PHONE = re.compile(r"^\d{3}-\d{3}-\d{4}$")


# --------------------------------------------------------------------------- helpers


def caller_id(db: State) -> str | None:
    """The patient id the caller proved to be, or None before verification."""
    session = db["session"].peek("current")
    return session["caller_id"] if session else None


def _verified(db: State) -> str:
    caller = caller_id(db)
    if caller is None:
        raise ToolError("the caller's identity is not verified: verify it with verify_patient_identity first")
    return caller


def _name(row: dict) -> str:
    return f"{row['name']['first_name']} {row['name']['last_name']}"


def slot_start(slot: dict) -> str:
    return f"{slot['date']}T{slot['time']}"


def hours_until(start: str) -> float:
    return (_dt.datetime.fromisoformat(start) - _dt.datetime.fromisoformat(NOW)).total_seconds() / 3600


def coverage(db: State, patient: dict, provider: dict) -> dict:
    """What a visit of `patient` with `provider` costs under the patient's insurance plan."""
    service = SERVICE_OF[provider["specialty"]]
    plan_id = patient["insurance"]["plan_id"]
    plan = db["insurance_plans"].peek(plan_id)
    in_network = plan_id in provider["accepted_plans"]
    covered = in_network and service in plan["copays"]
    return {"patient_id": patient["patient_id"], "provider_id": provider["provider_id"], "plan_id": plan_id,
            "service": service, "in_network": in_network, "covered": covered,
            "copay": plan["copays"][service] if covered else None,
            "self_pay_price": None if covered else provider["self_pay_price"]}


# --------------------------------------------------------------------------- identity and look-ups


@tool
def verify_patient_identity(db: State, first_name: str, last_name: str, date_of_birth: str) -> dict:
    """Verify who the caller is by their full name and date of birth; the match becomes the verified caller of this conversation.

    Args:
        first_name: The caller's first name, such as 'Maya'.
        last_name: The caller's last name, such as 'Okafor'.
        date_of_birth: The caller's date of birth as 'YYYY-MM-DD'.
    """
    if not _DATE.match(date_of_birth):
        raise ToolError(f"date_of_birth must look like 'YYYY-MM-DD', not '{date_of_birth}'")
    wanted = (first_name.strip().lower(), last_name.strip().lower(), date_of_birth)
    for pid, row in db["patients"].scan():
        if (row["name"]["first_name"].lower(), row["name"]["last_name"].lower(), row["date_of_birth"]) == wanted:
            db["session"]["current"] = {"caller_id": pid}
            return {"verified": True, "patient_id": pid}
    raise ToolError("no patient matches that name and date of birth: identity not verified")


@tool
def get_patient_details(db: State, patient_id: str) -> dict:
    """Get a patient's profile: name, date of birth, contact details, insurance, pharmacy, appointment, prescription and visit ids, the consents they granted (who may act for them) and the consents they hold (for whom they may act).

    Args:
        patient_id: The patient's id, such as 'P104233'.
    """
    _verified(db)
    patient = find_row(db, "patients", patient_id, "patient")
    granted, held = [], []
    for cid in patient["consent_ids"]:
        c = db["consents"].peek(cid)
        rep = db["patients"].peek(c["representative_id"])
        granted.append({"consent_id": cid, "representative_id": c["representative_id"], "representative_name": _name(rep),
                        "relationship": c["relationship"], "scope": c["scope"], "expires_on": c["expires_on"],
                        "status": c["status"]})
    for cid in patient["held_consent_ids"]:
        c = db["consents"].peek(cid)
        other = db["patients"].peek(c["patient_id"])
        held.append({"consent_id": cid, "patient_id": c["patient_id"], "patient_name": _name(other),
                     "relationship": c["relationship"], "scope": c["scope"], "expires_on": c["expires_on"],
                     "status": c["status"]})
    out = {k: v for k, v in patient.items() if k not in ("consent_ids", "held_consent_ids")}
    return {**out, "consents_granted": granted, "consents_held": held}


@tool
def search_providers(db: State, specialty: str) -> list:
    """List the providers of a specialty: id, name, clinic, visit modes and the insurance plans they accept.

    Args:
        specialty: 'family_medicine', 'pediatrics', 'dermatology', 'cardiology', 'psychiatry', 'physical_therapy' or 'nutrition'.
    """
    if specialty not in SERVICE_OF:
        raise ToolError(f"unknown specialty '{specialty}'; one of: {', '.join(SERVICE_OF)}")
    return [{"provider_id": pid, "name": p["name"], "clinic": p["clinic"], "visit_modes": p["visit_modes"],
             "accepted_plans": p["accepted_plans"]}
            for pid, p in db["providers"].scan() if p["specialty"] == specialty]


@tool
def get_provider_details(db: State, provider_id: str) -> dict:
    """Get a provider: name, specialty, clinic, the ages they see, visit modes, weekly schedule, accepted insurance plans and self-pay price.

    Args:
        provider_id: The provider's id, such as 'DR2041'.
    """
    return find_row(db, "providers", provider_id, "provider")


@tool
def find_available_slots(db: State, provider_id: str, date: str) -> list:
    """List a provider's open appointment slots on one date (30 minutes each), earliest first.

    Args:
        provider_id: The provider's id, such as 'DR2041'.
        date: The date as 'YYYY-MM-DD'.
    """
    find_row(db, "providers", provider_id, "provider")
    if not _DATE.match(date):
        raise ToolError(f"date must look like 'YYYY-MM-DD', not '{date}'")
    slots = [s for _, s in db["slots"].scan()
             if s["provider_id"] == provider_id and s["date"] == date and s["status"] == "open"
             and slot_start(s) > NOW]
    return [{"slot_id": s["slot_id"], "date": s["date"], "time": s["time"]}
            for s in sorted(slots, key=lambda s: s["time"])]


@tool
def get_appointment_details(db: State, appointment_id: str) -> dict:
    """Get an appointment: patient, provider, date and time, mode, status, how often it was rescheduled, copay and any fee charged.

    Args:
        appointment_id: The appointment's id, such as 'AP310442'.
    """
    _verified(db)
    return find_row(db, "appointments", appointment_id, "appointment")


@tool
def get_prescription_details(db: State, prescription_id: str) -> dict:
    """Get a prescription: medication, dosage, whether it is a controlled substance, prescriber, refills left, expiry date, last fill date and fills.

    Args:
        prescription_id: The prescription's id, such as 'RX550127'.
    """
    _verified(db)
    return find_row(db, "prescriptions", prescription_id, "prescription")


@tool
def get_insurance_plan(db: State, plan_id: str) -> dict:
    """Get an insurance plan: its name, payer and the copay of each covered service (a service not listed is not covered).

    Args:
        plan_id: The plan's id, such as 'INS_SILVER'.
    """
    return find_row(db, "insurance_plans", plan_id, "insurance plan")


@tool
def check_coverage(db: State, patient_id: str, provider_id: str) -> dict:
    """Check what a visit with a provider would cost a patient: the service, whether the provider is in the patient's network, whether it is covered, and the copay (or the self-pay price when it is not covered).

    Args:
        patient_id: The patient's id.
        provider_id: The provider's id.
    """
    _verified(db)
    patient = find_row(db, "patients", patient_id, "patient")
    provider = find_row(db, "providers", provider_id, "provider")
    return coverage(db, patient, provider)


@tool
def list_visit_records(db: State, patient_id: str) -> list:
    """List a patient's visit records, newest first: date, provider, service, reason, diagnosis and follow-up advice.

    Args:
        patient_id: The patient's id.
    """
    _verified(db)
    patient = find_row(db, "patients", patient_id, "patient")
    visits = [db["visits"].peek(v) for v in patient["visit_ids"]]
    out = []
    for v in sorted(visits, key=lambda v: v["date"], reverse=True):
        out.append({**v, "provider_name": db["providers"].peek(v["provider_id"])["name"]})
    return out


# --------------------------------------------------------------------------- changes


@tool(writes=True)
def book_appointment(db: State, patient_id: str, slot_id: str, mode: str = "in_person") -> dict:
    """Book an open slot for a patient, in person or by video; the copay (or self-pay price) is due at the visit.

    Args:
        patient_id: The patient the appointment is for.
        slot_id: The open slot's id, such as 'SL120455'.
        mode: 'in_person' or 'video' (the provider must offer it); default 'in_person'.
    """
    _verified(db)
    patient = find_row(db, "patients", patient_id, "patient", write=True)
    slot = find_row(db, "slots", slot_id, "slot", write=True)
    if slot["status"] != "open" or slot_start(slot) <= NOW:
        raise ToolError(f"slot {slot_id} is not open")
    provider = db["providers"].peek(slot["provider_id"])
    if mode not in provider["visit_modes"]:
        raise ToolError(f"{provider['name']} does not offer '{mode}' visits (offers: {', '.join(provider['visit_modes'])})")
    cost = coverage(db, patient, provider)
    aid = _new_id(db, "appointments", "AP", patient_id, slot_id)
    appointment = {"appointment_id": aid, "patient_id": patient_id, "provider_id": provider["provider_id"],
                   "slot_id": slot_id, "date": slot["date"], "time": slot["time"], "mode": mode,
                   "service": cost["service"], "status": "scheduled", "reschedule_count": 0, "booked_on": TODAY,
                   "copay": cost["copay"] if cost["covered"] else provider["self_pay_price"], "fee_charged": 0}
    db["appointments"][aid] = appointment
    slot["status"] = "booked"
    patient["appointment_ids"].append(aid)
    return {"appointment_id": aid, "provider": provider["name"], "date": slot["date"], "time": slot["time"],
            "mode": mode, "copay": appointment["copay"]}


@tool(writes=True)
def reschedule_appointment(db: State, appointment_id: str, new_slot_id: str) -> dict:
    """Move a scheduled appointment to another open slot of the same provider; the old slot is freed.

    Args:
        appointment_id: The appointment's id.
        new_slot_id: The open slot to move to.
    """
    _verified(db)
    appointment = find_row(db, "appointments", appointment_id, "appointment", write=True)
    if appointment["status"] != "scheduled":
        raise ToolError(f"appointment {appointment_id} is {appointment['status']}, not scheduled")
    slot = find_row(db, "slots", new_slot_id, "slot", write=True)
    if slot["status"] != "open" or slot_start(slot) <= NOW:
        raise ToolError(f"slot {new_slot_id} is not open")
    if slot["provider_id"] != appointment["provider_id"]:
        raise ToolError(f"slot {new_slot_id} belongs to another provider; a reschedule keeps the provider")
    if appointment["slot_id"] in db["slots"]:
        db["slots"][appointment["slot_id"]]["status"] = "open"
    slot["status"] = "booked"
    appointment.update(slot_id=new_slot_id, date=slot["date"], time=slot["time"],
                       reschedule_count=appointment["reschedule_count"] + 1)
    return {"appointment_id": appointment_id, "date": slot["date"], "time": slot["time"],
            "reschedule_count": appointment["reschedule_count"]}


@tool(writes=True)
def cancel_appointment(db: State, appointment_id: str) -> dict:
    """Cancel a scheduled appointment and free its slot; a cancellation less than 24 hours before the start is charged the late-cancellation fee.

    Args:
        appointment_id: The appointment's id.
    """
    _verified(db)
    appointment = find_row(db, "appointments", appointment_id, "appointment", write=True)
    if appointment["status"] != "scheduled":
        raise ToolError(f"appointment {appointment_id} is {appointment['status']}, not scheduled")
    start = f"{appointment['date']}T{appointment['time']}"
    if start <= NOW:
        raise ToolError(f"appointment {appointment_id} has already started")
    fee = LATE_CANCEL_FEE if hours_until(start) < LATE_WINDOW_HOURS else 0
    appointment["status"] = "cancelled"
    appointment["fee_charged"] = fee
    if appointment["slot_id"] in db["slots"]:
        db["slots"][appointment["slot_id"]]["status"] = "open"
    return {"appointment_id": appointment_id, "status": "cancelled", "fee_charged": fee}


@tool(writes=True)
def request_refill(db: State, prescription_id: str) -> dict:
    """Send a refill of a prescription to the patient's pharmacy on file; it uses one of the refills left.

    Args:
        prescription_id: The prescription's id, such as 'RX550127'.
    """
    _verified(db)
    rx = find_row(db, "prescriptions", prescription_id, "prescription", write=True)
    if rx["refills_left"] <= 0:
        raise ToolError(f"prescription {prescription_id} has no refills left")
    pharmacy = db["patients"].peek(rx["patient_id"])["pharmacy"]
    rx["refills_left"] -= 1
    rx["last_filled"] = TODAY
    rx["fills"].append({"date": TODAY, "pharmacy": pharmacy})
    return {"prescription_id": prescription_id, "medication": rx["medication"], "pharmacy": pharmacy,
            "refills_left": rx["refills_left"]}


@tool(writes=True)
def update_contact_info(db: State, patient_id: str, phone: str | None = None, email: str | None = None) -> dict:
    """Change a patient's phone number and/or email address on file.

    Args:
        patient_id: The patient's id.
        phone: The new phone number as 'NNN-NNN-NNNN' (leave out to keep it).
        email: The new email address (leave out to keep it).
    """
    _verified(db)
    patient = find_row(db, "patients", patient_id, "patient", write=True)
    if phone is None and email is None:
        raise ToolError("give a new phone, a new email or both")
    if phone is not None:
        if not _PHONE.match(phone):
            raise ToolError(f"phone must look like 'NNN-NNN-NNNN', not '{phone}'")
        patient["phone"] = phone
    if email is not None:
        if "@" not in email or " " in email.strip():
            raise ToolError(f"'{email}' is not an email address")
        patient["email"] = email.strip()
    return {"patient_id": patient_id, "phone": patient["phone"], "email": patient["email"]}


@tool(writes=True)
def revoke_consent(db: State, consent_id: str) -> dict:
    """Revoke a consent a patient granted, so that the representative may no longer act for them.

    Args:
        consent_id: The consent's id, such as 'CN402211'.
    """
    _verified(db)
    consent = find_row(db, "consents", consent_id, "consent", write=True)
    if consent["status"] == "revoked":
        raise ToolError(f"consent {consent_id} is already revoked")
    consent["status"] = "revoked"
    consent["revoked_on"] = TODAY
    return {"consent_id": consent_id, "status": "revoked"}


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
    """Hand the conversation to a human agent, with a short summary of the patient's issue; this ends your part.

    Use it only when the request is outside what you can do under the policy and the caller asks for a person.

    Args:
        summary: What the caller needs and what has been done so far.
    """
    return "Transfer successful"
