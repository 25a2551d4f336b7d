"""The school's situation check for the Tracer (`TracerHints.situation`): the task's occasion must be the caller's.

Most occasions tell the student's own life ("I am the first in my family to go to college", "I work full time
and study in the evenings"). Said by a guardian calling for their child they put the student's life in the
parent's mouth: the occasion needs the caller to be the student. The occasions any caller can have (money is
tight, planning the year ahead, a routine question) pass for both. A student who "works full time and studies in
the evenings" enrols only in an evening (from 17:00) or online section (school-test-035 took a Mon/Wed 11:00 class).
"""

from __future__ import annotations

from typing import Any

#: words of the occasions only the student lives (see `tracer_hints.OCCASIONS`)
STUDENT_ONLY = ("first in {{my}} family to go to college", "transfer to a four-year university",
                "depends on finishing this program", "study in the evenings", "juggling classes",
                "applying for a scholarship")


def caller_kind(cand: Any) -> str:
    """'student' or 'guardian': who is on the phone."""
    return cand.persona.identified["session"]["current"]["kind"]


#: the earliest start of an evening class
EVENING = "17:00"


def situation(state: Any, cand: Any) -> str | None:
    """Why the candidate's occasion contradicts who calls or the classes the task enrols in, or None."""
    occasion = cand.occasion or ""
    if caller_kind(cand) == "guardian" and any(p in occasion for p in STUDENT_ONLY):
        return f"occasion '{occasion}' is the student's own, but the caller is their guardian"
    if "study in the evenings" in occasion:
        for draft in cand.drafts:
            section = state["sections"].peek(draft.arguments.get("crn")) if draft.goal == "enroll_in_section" else None
            if section and section["modality"] != "online" and section["start_time"] < EVENING:
                return f"occasion '{occasion}' beside an in-person class at {section['start_time']}"
    return None


def excused_already(state: Any, student_id: str, crn: str, date: str) -> dict | None:
    """The student's absence from that section's class on that date when it is excused already, else None."""
    student = state["students"].peek(student_id) or {}
    for aid in student.get("absence_ids", []):
        row = state["absences"].peek(aid)
        if row and row["crn"] == crn and row["date"] == date and row["excused"]:
            return row
    return None


def world(before: Any, after: Any, cand: Any) -> str | None:
    """Why a request is not true of the student's records (`TracerHints.world`), or None: a payment plan asked for a
    balance of nothing, an absence reported that the record shows excused already (under another reason or the
    same, the gold would only overwrite it)."""
    from tau_emotion.domain_packs.school.tools import balance

    for draft in cand.drafts:
        args = draft.arguments
        if draft.goal == "enroll_payment_plan":
            # owed before the task, or after an earlier intent of it added a charge (a section enrolled in)
            owed = [balance(state, row) for state in (before, after)
                    if (row := state["students"].peek(args.get("student_id"))) is not None]
            if owed and max(owed) <= 0:
                return f"{draft.kind}: asks to split a balance into installments, but the student owes {max(owed)}"
        if draft.goal == "report_absence":
            row = excused_already(before, args.get("student_id"), args.get("crn"), args.get("date"))
            if row is not None:
                return (f"{draft.kind}: reports an absence on {row['date']} that the record already excuses "
                        f"({row['reason']})")
    return None
