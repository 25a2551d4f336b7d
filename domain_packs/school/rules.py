"""Machine-checkable parts of the school policy (`data/policy.md`).

Each rule has the signature `rule(state, action_name, arguments) -> str | None`: given the state
*before* an action and the action's raw arguments, it returns a one-line reason when the policy
forbids that action, else None. Rules ignore actions they are not about and arguments they cannot
read (the tool itself reports those). The tools enforce only that a caller is verified; who may act
for which student, and what the academic and financial rules allow, is for these rules.
"""

from __future__ import annotations

import datetime as _dt

from tau_emotion.core.domain import Rule, rule
from tau_emotion.core.state import State
from tau_emotion.domain_packs.school.tools import TODAY, WEEKDAYS, age_on, balance, caller, current_enrollments

ADULT_AGE = 18
#: the release scope a guardian of an adult student needs for each action ('any': any release at all)
SCOPE = {"get_student_record": "any", "get_academic_record": "academic", "get_attendance": "academic",
         "request_transcript": "academic", "report_absence": "academic", "get_billing": "financial",
         "make_payment": "financial", "enroll_payment_plan": "financial", "waive_late_fee": "financial",
         "enroll_in_section": "registration", "drop_section": "registration"}
#: what a minor student may not do without their guardian on the call
GUARDIAN_ONLY_FOR_MINORS = ("enroll_in_section", "drop_section", "enroll_payment_plan", "request_transcript",
                            "report_absence")
PASSING = ("A", "B", "C")  # a prerequisite is met with one of these grades
CREDIT_CAP = {"minor": 8, "probation": 12, "good": 18}  # credits per term
PLAN_MINIMUM = 300  # the smallest balance a payment plan splits
ACADEMIC_YEAR_START = "2025-07-01"
ABSENCE_DAYS_BACK, ABSENCE_DAYS_AHEAD = 3, 14


def target_student(state: State, arguments: dict) -> dict | None:
    """The student an action is about (a late fee's student for `charge_id`), or None."""
    sid = arguments.get("student_id")
    if isinstance(sid, str):
        return state["students"].peek(sid)
    cid = arguments.get("charge_id")
    charge = state["charges"].peek(cid) if isinstance(cid, str) else None
    return state["students"].peek(charge["student_id"]) if charge else None


def _section(state: State, arguments: dict) -> dict | None:
    crn = arguments.get("crn")
    return state["sections"].peek(crn) if isinstance(crn, str) else None


def _minutes(clock: str) -> int:
    return int(clock[:2]) * 60 + int(clock[3:])


# --------------------------------------------------------------------------- who may act


@rule
def own_or_linked_student(state: State, action_name: str, arguments: dict) -> str | None:
    """A student acts only on their own record; a guardian only on a student they are linked to."""
    who, student = caller(state), target_student(state, arguments)
    if action_name not in SCOPE or who is None or student is None:
        return None
    if who["kind"] == "student" and who["caller_id"] != student["student_id"]:
        return "the caller may only act on their own student record"
    if who["kind"] == "guardian" and who["caller_id"] not in student["guardian_ids"]:
        return f"the caller is not a guardian of student {student['student_number']}"
    return None


@rule
def adult_student_release(state: State, action_name: str, arguments: dict) -> str | None:
    """For a student of 18 or over, a guardian needs the student's signed release covering the action."""
    who, student = caller(state), target_student(state, arguments)
    if action_name not in SCOPE or who is None or student is None or who["kind"] != "guardian":
        return None
    if who["caller_id"] not in student["guardian_ids"] or age_on(student["date_of_birth"]) < ADULT_AGE:
        return None
    scopes, needed = student["releases"].get(who["caller_id"], []), SCOPE[action_name]
    if (needed == "any" and scopes) or needed in scopes:
        return None
    return f"student {student['student_number']} is an adult and has signed no {needed} release for this guardian"


@rule
def minor_needs_guardian(state: State, action_name: str, arguments: dict) -> str | None:
    """A student under 18 registers, drops, sets up a plan, orders transcripts and reports absences only through a guardian."""
    who, student = caller(state), target_student(state, arguments)
    if action_name not in GUARDIAN_ONLY_FOR_MINORS or who is None or student is None or who["kind"] != "student":
        return None
    if age_on(student["date_of_birth"]) >= ADULT_AGE:
        return None
    return f"student {student['student_number']} is under 18: a guardian must make this request"


# --------------------------------------------------------------------------- registration


@rule
def prerequisites_met(state: State, action_name: str, arguments: dict) -> str | None:
    """A section's course needs each prerequisite completed with a C or better."""
    student, section = target_student(state, arguments), _section(state, arguments)
    if action_name != "enroll_in_section" or student is None or section is None:
        return None
    passed = {c["course_code"] for c in student["transcript"] if c["grade"] in PASSING}
    missing = [p for p in state["courses"].peek(section["course_code"])["prerequisites"] if p not in passed]
    return f"{section['course_code']} needs {', '.join(missing)} completed with a C or better" if missing else None


@rule
def section_has_seats(state: State, action_name: str, arguments: dict) -> str | None:
    """A student is registered only in a section with a free seat."""
    section = _section(state, arguments)
    if action_name != "enroll_in_section" or section is None or section["seats_taken"] < section["capacity"]:
        return None
    return f"CRN {section['crn']} is full ({section['seats_taken']} of {section['capacity']} seats)"


@rule
def credit_limit(state: State, action_name: str, arguments: dict) -> str | None:
    """A term's credits are at most 18, 12 on academic probation, 8 for a student under 18."""
    student, section = target_student(state, arguments), _section(state, arguments)
    if action_name != "enroll_in_section" or student is None or section is None:
        return None
    kind = "minor" if age_on(student["date_of_birth"]) < ADULT_AGE else student["standing"]
    cap = CREDIT_CAP[kind]
    credits = sum(e["credits"] for e in current_enrollments(state, student, section["term"]))
    added = state["courses"].peek(section["course_code"])["credits"]
    if credits + added <= cap:
        return None
    return f"{credits} + {added} credits in {section['term']} would pass the limit of {cap}"


@rule
def add_deadline(state: State, action_name: str, arguments: dict) -> str | None:
    """Registration in a section closes after its add/drop deadline."""
    section = _section(state, arguments)
    if action_name != "enroll_in_section" or section is None or TODAY <= section["add_drop_deadline"]:
        return None
    return f"the add/drop deadline of CRN {section['crn']} was {section['add_drop_deadline']}"


@rule
def withdrawal_deadline(state: State, action_name: str, arguments: dict) -> str | None:
    """A section is dropped (or withdrawn from) only up to its withdrawal deadline."""
    section = _section(state, arguments)
    if action_name != "drop_section" or section is None or TODAY <= section["withdrawal_deadline"]:
        return None
    return f"the withdrawal deadline of CRN {section['crn']} was {section['withdrawal_deadline']}"


@rule
def registration_hold(state: State, action_name: str, arguments: dict) -> str | None:
    """A hold that blocks registration stops adding and dropping sections."""
    student = target_student(state, arguments)
    if action_name not in ("enroll_in_section", "drop_section") or student is None:
        return None
    hold = next((h for h in student["holds"] if "registration" in h["blocks"]), None)
    return f"a {hold['kind']} hold blocks registration" if hold else None


@rule
def transcript_hold(state: State, action_name: str, arguments: dict) -> str | None:
    """A hold that blocks transcripts stops official transcript orders."""
    student = target_student(state, arguments)
    if action_name != "request_transcript" or student is None:
        return None
    hold = next((h for h in student["holds"] if "transcript" in h["blocks"]), None)
    return f"a {hold['kind']} hold blocks official transcripts" if hold else None


@rule
def no_schedule_conflict(state: State, action_name: str, arguments: dict) -> str | None:
    """A new section's meetings may not overlap a section the student is already in (same days, times and dates)."""
    student, new = target_student(state, arguments), _section(state, arguments)
    if action_name != "enroll_in_section" or student is None or new is None or not new["days"]:
        return None
    for e in current_enrollments(state, student, new["term"]):
        old = state["sections"].peek(e["crn"])
        if (set(old["days"]) & set(new["days"]) and old["start_date"] <= new["end_date"]
                and new["start_date"] <= old["end_date"]
                and _minutes(old["start_time"]) < _minutes(new["end_time"])
                and _minutes(new["start_time"]) < _minutes(old["end_time"])):
            return f"CRN {new['crn']} meets at the same time as CRN {old['crn']} ({old['course_code']})"
    return None


# --------------------------------------------------------------------------- money and attendance


@rule
def payment_plan_eligibility(state: State, action_name: str, arguments: dict) -> str | None:
    """A payment plan needs a balance of at least 300 and no active plan."""
    student = target_student(state, arguments)
    if action_name != "enroll_payment_plan" or student is None:
        return None
    if student["payment_plan"] and student["payment_plan"]["status"] == "active":
        return "the student already has an active payment plan"
    due = balance(state, student)
    return None if due >= PLAN_MINIMUM else f"the balance of {due} is under the {PLAN_MINIMUM} a plan needs"


@rule
def late_fee_waiver_once(state: State, action_name: str, arguments: dict) -> str | None:
    """A student gets one late-fee waiver per academic year (from July 1)."""
    student = target_student(state, arguments)
    if action_name != "waive_late_fee" or student is None:
        return None
    used = [w for w in student["late_fee_waivers"] if w["date"] >= ACADEMIC_YEAR_START]
    return f"the student's late-fee waiver for this academic year was used on {used[0]['date']}" if used else None


@rule
def absence_window(state: State, action_name: str, arguments: dict) -> str | None:
    """An absence is reported for a class day of the section, at most 3 days back or 14 days ahead."""
    section, date = _section(state, arguments), arguments.get("date")
    if action_name != "report_absence" or section is None or not isinstance(date, str):
        return None
    try:
        day = _dt.date.fromisoformat(date)
    except ValueError:
        return None
    offset = (day - _dt.date.fromisoformat(TODAY)).days
    if not -ABSENCE_DAYS_BACK <= offset <= ABSENCE_DAYS_AHEAD:
        return f"{date} is outside the reporting window ({ABSENCE_DAYS_BACK} days back, {ABSENCE_DAYS_AHEAD} ahead)"
    if WEEKDAYS[day.weekday()] not in section["days"] or not section["start_date"] <= date <= section["end_date"]:
        return f"CRN {section['crn']} has no class on {date}"
    return None


RULES: list[Rule] = [
    own_or_linked_student,
    adult_student_release,
    minor_needs_guardian,
    prerequisites_met,
    section_has_seats,
    credit_limit,
    add_deadline,
    withdrawal_deadline,
    registration_hold,
    transcript_hold,
    no_schedule_conflict,
    payment_plan_eligibility,
    late_fee_waiver_once,
    absence_window,
]


def violations(state: State, action_name: str, arguments: dict) -> list[str]:
    """Every rule's complaint about one action (empty when the action is policy-valid)."""
    return [msg for r in RULES if (msg := r(state, action_name, arguments))]
