"""Tools of the school domain: a community college's student services for students and their guardians.

Callers are verified first (a student, or a guardian of one); the tools then read a student's
record, academic history, billing and attendance, look up course sections, register and drop
sections, order official transcripts, take payments, set up payment plans, waive late fees and
record reported absences.

The tools enforce one thing themselves: nothing is read or changed before a caller has passed
`verify_caller`. Beyond that they do what they are asked when it is mechanically possible (the
section exists, the student is not already in the course that term, the charge is a late fee) and
raise `ToolError` otherwise; whether an action is *allowed* by the policy (who may act for whom,
prerequisites, seats, credit limits, deadlines, holds, schedule conflicts, payment-plan and waiver
eligibility, the absence window) is the agent's call, checked separately by `rules.py`.

Tools never read the clock or draw random numbers: today is the constant `TODAY`, and new ids are
derived from a hash of the request and the rows that already exist.
"""

from __future__ import annotations

import datetime as _dt
from typing import Any, Literal

from tau_emotion.core.state import State
from tau_emotion.core.tools import ToolError, find_row, tool
from tau_emotion.domain_packs.values import digest as _digest
from tau_emotion.domain_packs.values import money as _money

TODAY = "2025-09-10"  # a Wednesday in the Fall 2025 term
TUITION_PER_CREDIT = 210
TRANSCRIPT_FEE = {"electronic": 5, "mail": 10}
PLAN_FEE = 30
WEEKDAYS = ("Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun")

Delivery = Literal["electronic", "mail"]
AbsenceReason = Literal["illness", "family_emergency", "religious_observance", "medical_appointment", "school_activity"]


# --------------------------------------------------------------------------- helpers (rules use them too)


def _new_key(rows: Any, prefix: str, *parts: Any) -> str:
    for attempt in range(1000):
        key = f"{prefix}{int(_digest(attempt, *parts), 16) % 9000000 + 1000000}"
        if key not in rows:
            return key
    raise ToolError("could not allocate a new id")  # pragma: no cover


def caller(db: State) -> dict | None:
    """The verified caller ({'caller_id', 'kind'}: 'student' or 'guardian'), or None before verification."""
    session = db["session"].peek("current")
    return session if session and session.get("caller_id") else None


def _verified(db: State) -> dict:
    who = caller(db)
    if who is None:
        raise ToolError("the caller is not verified: verify them with verify_caller first")
    return who


def age_on(dob: str, day: str = TODAY) -> int:
    b, t = _dt.date.fromisoformat(dob), _dt.date.fromisoformat(day)
    return t.year - b.year - ((t.month, t.day) < (b.month, b.day))


def balance(db: State, student: dict) -> float:
    charges = sum(db["charges"].peek(c)["amount"] for c in student["charge_ids"] if not db["charges"].peek(c)["waived"])
    paid = sum(db["payments"].peek(p)["amount"] for p in student["payment_ids"])
    return _money(charges - paid)


def current_enrollments(db: State, student: dict, term: str | None = None) -> list[dict]:
    """The student's active enrollments (status 'enrolled'), optionally of one term."""
    rows = [db["enrollments"].peek(e) for e in student["enrollment_ids"]]
    return [e for e in rows if e["status"] == "enrolled" and (term is None or e["term"] == term)]


def _charge(db: State, student: dict, kind: str, description: str, amount: float, term: str) -> dict:
    cid = _new_key(db["charges"], "CH", student["student_id"], kind, description, amount, len(student["charge_ids"]))
    row = {"charge_id": cid, "student_id": student["student_id"], "term": term, "kind": kind,
           "description": description, "amount": _money(amount), "date": TODAY, "waived": False}
    db["charges"][cid] = row
    student["charge_ids"].append(cid)
    return row


def refund_share(section: dict, day: str = TODAY) -> tuple[str, float]:
    """What dropping a section on `day` does: ('dropped', 1.0) before its add/drop deadline, else
    ('withdrawn', the share of tuition refunded by the refund schedule)."""
    if day <= section["add_drop_deadline"]:
        return "dropped", 1.0
    for deadline, share in section["refund_schedule"]:
        if day <= deadline:
            return "withdrawn", share
    return "withdrawn", 0.0


# --------------------------------------------------------------------------- identity and look-ups


@tool
def verify_caller(db: State, phone_number: str, date_of_birth: str) -> dict:
    """Verify who is calling, a student or a guardian, by their phone number and date of birth; the match becomes the verified caller of this conversation. A guardian's answer lists the students they are linked to.

    Args:
        phone_number: The caller's phone number as 'NNN-NNN-NNNN'.
        date_of_birth: The caller's date of birth as 'YYYY-MM-DD'.
    """
    for table, kind in (("students", "student"), ("guardians", "guardian")):
        for key, row in db[table].scan():
            if row["phone_number"] == phone_number and row["date_of_birth"] == date_of_birth:
                db["session"]["current"] = {"caller_id": key, "kind": kind}
                out = {"verified": True, "kind": kind, "caller_id": key, "first_name": row["first_name"],
                       "last_name": row["last_name"]}
                if kind == "guardian":
                    out["students"] = [{"student_id": s, "student_number": db["students"].peek(s)["student_number"],
                                        "first_name": db["students"].peek(s)["first_name"]} for s in row["student_ids"]]
                return out
    raise ToolError("no student or guardian matches that phone number and date of birth: caller not verified")


@tool
def get_student_record(db: State, student_id: str) -> dict:
    """Get a student's record: student number, name, date of birth and age, program, standing, holds, guardians and the releases the student signed for them, payment methods and late-fee waivers used.

    Args:
        student_id: The student's id, such as 'ST104233'.
    """
    _verified(db)
    student = find_row(db, "students", student_id, "student")
    guardians = []
    for gid in student["guardian_ids"]:
        g = db["guardians"].peek(gid)
        guardians.append({"guardian_id": gid, "name": f"{g['first_name']} {g['last_name']}",
                          "relationship": g["relationship"], "release_scopes": student["releases"].get(gid, [])})
    return {**{k: v for k, v in student.items() if k not in ("enrollment_ids", "charge_ids", "payment_ids",
                                                             "absence_ids", "transcript", "releases", "guardian_ids")},
            "age": age_on(student["date_of_birth"]), "guardians": guardians}


@tool
def get_academic_record(db: State, student_id: str) -> dict:
    """Get a student's academic record: completed courses with term, credits and grade, GPA, and current and upcoming enrollments (section CRN, course, term, session, status).

    Args:
        student_id: The student's id, such as 'ST104233'.
    """
    _verified(db)
    student = find_row(db, "students", student_id, "student")
    points = {"A": 4, "B": 3, "C": 2, "D": 1, "F": 0}
    graded = [c for c in student["transcript"] if c["grade"] in points]
    credits = sum(c["credits"] for c in graded)
    gpa = round(sum(points[c["grade"]] * c["credits"] for c in graded) / credits, 2) if credits else None
    enrollments = [db["enrollments"].peek(e) for e in student["enrollment_ids"]]
    return {"student_id": student_id, "completed": student["transcript"], "gpa": gpa,
            "enrollments": sorted(enrollments, key=lambda e: (e["term"], e["crn"]))}


@tool
def search_sections(db: State, course_code: str) -> dict:
    """Look up a course by code: title, credits and prerequisites, and its sections in Fall 2025 and Spring 2026 (CRN, session and dates, days and times, instructor, seats taken of capacity, add/drop and withdrawal deadlines, refund schedule).

    Args:
        course_code: The course code, such as 'MATH151'.
    """
    _verified(db)
    course = find_row(db, "courses", course_code.replace(" ", "").upper(), "course")
    sections = [db["sections"].peek(crn) for crn in course["crns"]]
    return {**{k: v for k, v in course.items() if k != "crns"}, "sections": sections}


@tool
def get_billing(db: State, student_id: str) -> dict:
    """Get a student's billing: charges (tuition, fees, late fees, transcript and plan fees; waived ones marked), payments, the balance, the Fall due date and any payment plan.

    Args:
        student_id: The student's id, such as 'ST104233'.
    """
    _verified(db)
    student = find_row(db, "students", student_id, "student")
    return {"student_id": student_id, "charges": [db["charges"].peek(c) for c in student["charge_ids"]],
            "payments": [db["payments"].peek(p) for p in student["payment_ids"]], "balance": balance(db, student),
            "fall_due_date": "2025-08-20", "payment_plan": student["payment_plan"]}


@tool
def get_attendance(db: State, student_id: str) -> list:
    """List a student's recorded absences this term: section CRN, date, whether excused and the reason given.

    Args:
        student_id: The student's id, such as 'ST104233'.
    """
    _verified(db)
    student = find_row(db, "students", student_id, "student")
    return sorted((db["absences"].peek(a) for a in student["absence_ids"]), key=lambda a: (a["date"], a["crn"]))


# --------------------------------------------------------------------------- registration


@tool(writes=True)
def enroll_in_section(db: State, student_id: str, crn: str) -> dict:
    """Register a student in a section; its tuition (210 per credit) is charged to the student's account.

    Args:
        student_id: The student's id.
        crn: The section's CRN, such as '41023'.
    """
    _verified(db)
    student = find_row(db, "students", student_id, "student", write=True)
    section = find_row(db, "sections", crn, "section", write=True)
    course = db["courses"].peek(section["course_code"])
    for e in current_enrollments(db, student, section["term"]):
        if e["course_code"] == section["course_code"]:
            raise ToolError(f"the student is already enrolled in {course['course_code']} for {section['term']} (CRN {e['crn']})")
    eid = _new_key(db["enrollments"], "EN", student_id, crn)
    db["enrollments"][eid] = {"enrollment_id": eid, "student_id": student_id, "crn": crn,
                              "course_code": section["course_code"], "term": section["term"],
                              "session": section["session"], "credits": course["credits"], "status": "enrolled",
                              "enrolled_on": TODAY}
    student["enrollment_ids"].append(eid)
    section["seats_taken"] += 1
    tuition = _charge(db, student, "tuition", f"Tuition {section['course_code']} ({section['term']})",
                      course["credits"] * TUITION_PER_CREDIT, section["term"])
    return {"enrollment_id": eid, "crn": crn, "course_code": section["course_code"], "term": section["term"],
            "credits": course["credits"], "tuition_charged": tuition["amount"]}


@tool(writes=True)
def drop_section(db: State, student_id: str, crn: str) -> dict:
    """Drop a student from a section. Before the section's add/drop deadline it leaves no record and all its tuition is refunded; after it, it becomes a withdrawal (grade W) and the refund schedule sets the share of tuition refunded.

    Args:
        student_id: The student's id.
        crn: The section's CRN.
    """
    _verified(db)
    student = find_row(db, "students", student_id, "student", write=True)
    section = find_row(db, "sections", crn, "section", write=True)
    enrollment = next((e for e in current_enrollments(db, student) if e["crn"] == crn), None)
    if enrollment is None:
        raise ToolError(f"the student is not enrolled in CRN {crn}")
    status, share = refund_share(section)
    row = db["enrollments"][enrollment["enrollment_id"]]
    row["status"] = status
    row["dropped_on"] = TODAY
    section["seats_taken"] -= 1
    refund = _money(enrollment["credits"] * TUITION_PER_CREDIT * share)
    if refund:
        _charge(db, student, "tuition_refund", f"Refund {section['course_code']} ({section['term']})", -refund,
                section["term"])
    return {"crn": crn, "course_code": section["course_code"], "status": status,
            "grade": "W" if status == "withdrawn" else None, "tuition_refunded": refund}


@tool(writes=True)
def request_transcript(db: State, student_id: str, delivery: Delivery, copies: int) -> dict:
    """Order official transcripts, sent to the student's address (mail) or email (electronic); the fee (5 electronic, 10 mailed, per copy) is charged to the student's account.

    Args:
        student_id: The student's id.
        delivery: 'electronic' or 'mail'.
        copies: How many copies, 1 to 5.
    """
    _verified(db)
    student = find_row(db, "students", student_id, "student", write=True)
    if not 1 <= copies <= 5:
        raise ToolError("between 1 and 5 copies")
    oid = _new_key(db["transcript_orders"], "TR", student_id, delivery, copies, len(student["charge_ids"]))
    fee = _charge(db, student, "transcript_fee", f"Official transcript x{copies} ({delivery})",
                  TRANSCRIPT_FEE[delivery] * copies, "2025FA")
    db["transcript_orders"][oid] = {"order_id": oid, "student_id": student_id, "delivery": delivery, "copies": copies,
                                    "ordered_on": TODAY, "status": "processing"}
    return {"order_id": oid, "delivery": delivery, "copies": copies, "fee": fee["amount"]}


# --------------------------------------------------------------------------- money


@tool(writes=True)
def make_payment(db: State, student_id: str, amount: float, payment_method_id: str) -> dict:
    """Pay toward a student's balance with a payment method of the student or of one of their guardians; paying the balance in full clears a financial hold.

    Args:
        student_id: The student's id.
        amount: The amount, at most the balance.
        payment_method_id: The card or bank account that pays, such as 'pm_1042331'.
    """
    _verified(db)
    student = find_row(db, "students", student_id, "student", write=True)
    owners = [student, *(db["guardians"].peek(g) for g in student["guardian_ids"])]
    if not any(payment_method_id in o["payment_methods"] for o in owners):
        raise ToolError(f"payment method '{payment_method_id}' belongs to neither the student nor a guardian")
    due = balance(db, student)
    if amount <= 0 or amount > due + 1e-9:
        raise ToolError(f"the amount must be positive and at most the balance ({due})")
    pid = _new_key(db["payments"], "PY", student_id, amount, payment_method_id, len(student["payment_ids"]))
    db["payments"][pid] = {"payment_id": pid, "student_id": student_id, "amount": _money(amount), "date": TODAY,
                           "payment_method_id": payment_method_id}
    student["payment_ids"].append(pid)
    left = balance(db, student)
    cleared = [h["kind"] for h in student["holds"] if h["kind"] == "financial" and left <= 0]
    student["holds"] = [h for h in student["holds"] if h["kind"] not in cleared]
    return {"payment_id": pid, "amount": _money(amount), "balance": left, "holds_cleared": cleared}


@tool(writes=True)
def enroll_payment_plan(db: State, student_id: str, installments: int) -> dict:
    """Split a student's current balance into monthly installments (2 to 4, the first on October 1); the plan fee of 30 is added to the balance first.

    Args:
        student_id: The student's id.
        installments: How many monthly installments, 2 to 4.
    """
    _verified(db)
    student = find_row(db, "students", student_id, "student", write=True)
    if not 2 <= installments <= 4:
        raise ToolError("a plan has 2 to 4 installments")
    _charge(db, student, "plan_fee", "Payment plan fee", PLAN_FEE, "2025FA")
    total = balance(db, student)
    if total <= 0:
        raise ToolError("there is no balance to split")
    each = _money(total / installments)
    dates = [f"2025-{10 + i:02d}-01" for i in range(installments)]
    student["payment_plan"] = {"status": "active", "total": total, "installments": installments,
                               "installment_amount": each, "due_dates": dates, "created_on": TODAY}
    return {"student_id": student_id, **student["payment_plan"]}


@tool(writes=True)
def waive_late_fee(db: State, charge_id: str) -> dict:
    """Waive a late-payment fee charged to a student's account; it counts as the student's late-fee waiver of the academic year.

    Args:
        charge_id: The late fee's charge id, such as 'CH1042331'.
    """
    _verified(db)
    charge = find_row(db, "charges", charge_id, "charge", write=True)
    if charge["kind"] != "late_fee":
        raise ToolError(f"charge {charge_id} is a {charge['kind'].replace('_', ' ')}, not a late fee")
    if charge["waived"]:
        raise ToolError(f"the late fee {charge_id} is already waived")
    charge["waived"] = True
    student = db["students"][charge["student_id"]]
    student["late_fee_waivers"].append({"charge_id": charge_id, "date": TODAY})
    return {"charge_id": charge_id, "waived": True, "amount": charge["amount"], "balance": balance(db, student)}


# --------------------------------------------------------------------------- attendance


@tool(writes=True)
def report_absence(db: State, student_id: str, crn: str, date: str, reason: AbsenceReason) -> dict:
    """Record a reported absence from a section's class on a date, with its reason; a reported absence is excused.

    Args:
        student_id: The student's id.
        crn: The section's CRN.
        date: The class date as 'YYYY-MM-DD'.
        reason: 'illness', 'family_emergency', 'religious_observance', 'medical_appointment' or 'school_activity'.
    """
    _verified(db)
    student = find_row(db, "students", student_id, "student", write=True)
    section = find_row(db, "sections", crn, "section")
    if not any(e["crn"] == crn for e in current_enrollments(db, student)):
        raise ToolError(f"the student is not enrolled in CRN {crn}")
    try:
        _dt.date.fromisoformat(date)
    except ValueError:
        raise ToolError(f"'{date}' is not a date (YYYY-MM-DD)") from None
    existing = next((db["absences"][a] for a in student["absence_ids"]
                     if db["absences"].peek(a)["crn"] == crn and db["absences"].peek(a)["date"] == date), None)
    if existing is not None:
        existing.update(excused=True, reason=reason, reported_by=_verified(db)["kind"])
        return existing
    aid = _new_key(db["absences"], "AB", student_id, crn, date)
    row = {"absence_id": aid, "student_id": student_id, "crn": crn, "course_code": section["course_code"], "date": date,
           "excused": True, "reason": reason, "reported_by": _verified(db)["kind"]}
    db["absences"][aid] = row
    student["absence_ids"].append(aid)
    return row


@tool(terminal=True)
def transfer_to_human_agents(db: State, summary: str) -> str:
    """Hand the conversation to a human agent, with a short summary of the caller's request; this ends your part.

    Use it only when the request is outside what you can do under the policy and the caller asks for a person.

    Args:
        summary: What the caller needs and what has been done so far.
    """
    return "Transfer successful"
