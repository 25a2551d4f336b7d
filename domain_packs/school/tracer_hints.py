"""Tracer hints for the school pack: who calls (a student or a guardian) and how each goal tool is grounded.

The Tracer (`tau_emotion.tracer`) samples workflows from the tool graph and validates them; this module is
the student-services knowledge it needs to turn a goal tool into a concrete request on the database (see
`tau_emotion.tracer.hints`). The caller gives their phone number and date of birth; a guardian names the
student by first name. Courses are named by code and title, sections by CRN or by term, days and time,
payment methods by kind, bank or brand; the agent finds the ids.

Goals: register for a section, drop one (with the refund schedule), order a transcript, pay the balance,
set up a payment plan, waive a late fee, report an absence. Challenges: one per policy rule (`rules.py`):
who may act (another student's record, an adult student's missing release, a minor acting alone),
prerequisites, seats, credit limits, deadlines, holds, schedule conflicts, plan and waiver eligibility and
the absence window.
"""

from __future__ import annotations

import datetime as _dt
from typing import Any

from tau_emotion.domain_packs.school.rules import ABSENCE_DAYS_AHEAD, ABSENCE_DAYS_BACK, ADULT_AGE, PLAN_MINIMUM
from tau_emotion.domain_packs.school.tools import (
    PLAN_FEE,
    TODAY,
    TRANSCRIPT_FEE,
    TUITION_PER_CREDIT,
    WEEKDAYS,
    age_on,
    balance,
    current_enrollments,
    refund_share,
)
from tau_emotion.domain_packs.school.tracer_situation import excused_already, situation, world
from tau_emotion.tracer.hints import (
    Choice,
    GroundingContext,
    IntentDraft,
    Mood,
    Output,
    Persona,
    Rate,
    Rates,
    Reference,
    Refusal,
    TracerHints,
    draft,
    fact_wording,
    goals_in,
    instrument_options,
    join_and,
    money,
    month_day,
    need,
    per_database,
    pick_instrument,
    refused_calls,
    shift_date,
    used_by_earlier_intents,
)


class SchoolRates(Rates):
    #: a section is named by its term and meeting time (else by its number)
    section_by_time: Rate = 0.5
    #: the caller is a relative calling for a student (else the student)
    relative_calls: Rate = 0.4
    #: a caller refused a full section or one over the credit limit insists on a person (drawn for every refusal; a
    #: handover only ends a task, so the Tracer rejects one that would not)
    registration_insists: Rate = 0.3
    #: an absence challenge reports a day too far back (else the challenge is another absence rule)
    late_absence_challenge: Rate = 0.6

OCCASIONS = [
    ("{{I}} {{am}} the first in {{my}} family to go to college", 2, "positive"),
    ("{{I}} {{am}} hoping to transfer to a four-year university next fall", 3, "positive"),
    ("{{I}} just got a job offer that depends on finishing this program", 3, "positive"),
    ("{{I}} work full time and study in the evenings", 2, "neutral"),
    ("{{I}} {{am}} juggling classes with caring for a sick parent", 3, "negative"),
    ("money has been tight since {{I}} lost {{my}} job", 3, "negative"),
    ("{{I}} {{am}} applying for a scholarship that needs this sorted", 2, "neutral"),
    ("{{I}} {{am}} trying to plan the whole school year ahead", 1, "neutral"),
    ("it is just a routine question", 0, "neutral"),
]

TERMS = {"2025FA": "Fall 2025", "2026SP": "Spring 2026"}
DAYS = {"Mon": "Monday", "Tue": "Tuesday", "Wed": "Wednesday", "Thu": "Thursday", "Fri": "Friday", "Sat": "Saturday",
        "Sun": "Sunday"}
REASONS = {"illness": "an illness", "family_emergency": "a family emergency", "medical_appointment":
           "a medical appointment", "religious_observance": "a religious observance",
           "school_activity": "a school activity"}

# --------------------------------------------------------------------------- lookups

def _callers(db: Any) -> tuple[list[tuple[str, str]], list[tuple[str, str]]]:
    """(student, caller) pairs: students calling for themselves, and guardians calling for a linked student."""
    own = [(sid, sid) for sid in sorted(db.tables["students"])]
    students = db.tables["students"]
    kin = [(sid, gid) for gid, g in sorted(db.tables["guardians"].items()) for sid in g["student_ids"]
           if age_on(students[sid]["date_of_birth"]) < ADULT_AGE or students[sid]["releases"].get(gid)]  # may read the record
    return own, kin

def _student(ctx: GroundingContext) -> dict:
    return ctx.state["students"].peek(ctx.persona.entity)

def _by_guardian(ctx: GroundingContext) -> bool:
    return ctx.persona.identified["session"]["current"]["kind"] == "guardian"

def _me(ctx: GroundingContext) -> str:
    """How the caller says the student as an object: 'me', or the student's first name."""
    return "{{me}}" if not _by_guardian(ctx) else _student(ctx)["first_name"]

def _who(ctx: GroundingContext) -> str:
    """The student before a verb's complement: '' for the student themselves ('register for'), 'Hugo '."""
    return "" if not _by_guardian(ctx) else f"{_student(ctx)['first_name']} "

def _they(ctx: GroundingContext, mine: str, theirs: str) -> str:
    """A clause about the student: `mine` ('{{I}} need') for the student, `theirs` ('{} needs') for a guardian."""
    return mine if not _by_guardian(ctx) else theirs.format(_student(ctx)["first_name"])

def _my(ctx: GroundingContext) -> str:
    return "{{my}}" if not _by_guardian(ctx) else f"{_student(ctx)['first_name']}'s"

def _sid(ctx: GroundingContext) -> str:
    return ctx.persona.entity

def _may_read(ctx: GroundingContext, tools: tuple[str, ...]) -> dict[str, list[dict]]:
    """The reads of the student's record the caller may make (a guardian of an adult: within the releases)."""
    return {t: [{"student_id": _sid(ctx)}] for t in tools if not ctx.violations(t, {"student_id": _sid(ctx)})}

def _student_ref(ctx: GroundingContext, *reads: str) -> Reference:
    """The student the request is about: the caller, or the guardian's child named by first name."""
    tools = _may_read(ctx, reads)
    if not _by_guardian(ctx):
        return Reference(reads=tools, evidence=list(tools), reads_first=True)
    gid = ctx.persona.identified["session"]["current"]["caller_id"]
    kids = [ctx.state["students"].peek(s) for s in ctx.state["guardians"].peek(gid)["student_ids"]]
    return Reference(choices=[Choice.among("student", _student(ctx), kids, "student_id", "first_name")],
                     reads=tools, evidence=list(tools), reads_first=True)

def _section(ctx: GroundingContext, crn: str) -> dict:
    return ctx.state["sections"].peek(crn)

def _course(ctx: GroundingContext, code: str) -> dict:
    return ctx.state["courses"].peek(code)

def _when(section: dict) -> str:  # 'Mondays and Wednesdays at 11:00'
    if not section["days"]:
        return "online"
    days = " and ".join(f"{DAYS[d]}s" for d in section["days"])
    return f"{days} at {section['start_time']}"

def _section_words(ctx: GroundingContext, section: dict) -> tuple[str, dict, list[Choice]]:
    """How the caller names a section: its CRN, or its term and meeting time when that singles it out."""
    course = _course(ctx, section["course_code"])
    name = f"{course['course_code']} ({course['title']})"
    rows = [_section(ctx, c) for c in course["crns"]]
    says = lambda s: {"term": TERMS[s["term"]], "when": _when(s)}  # noqa: E731
    choice = Choice.among("section", section, rows, "crn", says)
    if ctx.chance("section_by_time") and len(choice.resolve()) == 1 and section["days"]:
        facts = {"course": name, "section_term": TERMS[section["term"]], "section_time": _when(section)}
        return f"{name} in {TERMS[section['term']]}, the section on {_when(section)}", facts, [choice]
    return f"{name}, CRN {section['crn']}", {"course": name, "crn": section["crn"]}, []

def _payment(ctx: GroundingContext) -> tuple[str, Choice, dict, str]:
    """A payment method on the student's record, worded so it is the only fit: (id, choice, facts, words)."""
    methods = {pid: {**m, "source": m["kind"]} for pid, m in _student(ctx)["payment_methods"].items()}
    pay = need(pick_instrument(ctx, "payment method", instrument_options(methods)))
    return pay.value, pay.choice, pay.facts("payment_last_four_digits"), pay.words

def _after(ctx: GroundingContext, change: float) -> tuple[list[Output], dict]:
    """The balance once the goal call charged or refunded `change`, told from a billing read after it."""
    left = balance(ctx.state, _student(ctx)) + change
    billing = _may_read(ctx, ("get_billing",))
    if left < 0 or not billing:  # a credit is not what a caller asks "the balance" about
        return [], {}
    return [Output(money(left), "the balance on the account afterwards", from_goal=True)], billing

def _refusal(ctx: GroundingContext, goal: str, calls: list, table: dict[str, Refusal]) -> tuple[Any, dict, Refusal]:
    """A call of `goal` exactly one rule forbids; the reason is drawn first, so a common one does not crowd out the rest."""
    found = refused_calls(ctx, goal, calls, {**_WHO, **table})
    told = {o.reason for d in ctx.history for o in d.outputs}  # one task, one refusal of each kind
    reason = ctx.choose(sorted({r.reason for _, _, r in found} - told))
    return ctx.choose([c for c in found if c[2].reason == reason])

#: who may act: the refusals any goal may meet
_WHO = {"adult_student_release": Refusal("no_release_on_file", "release"),
        "minor_needs_guardian": Refusal("guardian_required", "guardian")}

# --------------------------------------------------------------------------- wording of facts

fact_phrase = fact_wording({
    "course": ("the course is {}", "the courses are {}"),
    "crn": ("the section's CRN is {}", "the sections' CRNs are {}"),
    "section_term": ("the section is in {}", "the sections are in {}"),
    "section_time": ("the section meets on {}", "the sections meet on {}"),
    "payment_method": lambda said: f"you pay with the {' and the '.join(said)}" + (" respectively" if len(said) > 1 else ""),
    "delivery": ("you want the transcript {}", "you want the transcripts {}", {"electronic": "sent by email",
                                                                              "mail": "mailed"}),
    # the request says "an official transcript" or "2 official transcripts": "You want 1 copies." said it again
    "copies": lambda said: "" if said == ["1"] else f"you want {join_and(said)} copies",
    "installments": ("you want {} monthly installments", "you want {} monthly installments"),
    "absence_date": ("the class is on {}", "the classes are on {}", month_day),
    "absence_reason": ("the reason is {}", "the reasons are {}", REASONS),
    "student_number": ("the student number is {}", "the student numbers are {}"),
}, unsaid=["payment_last_four_digits"])

# --------------------------------------------------------------------------- persona

def persona(ctx: GroundingContext) -> Persona | None:
    own, kin = per_database(ctx, _callers)
    sid, cid = ctx.rng.choice(kin if ctx.chance("relative_calls") else own)
    student = ctx.state["students"].peek(sid)
    guardian = cid != sid
    who = ctx.state["guardians"].peek(cid) if guardian else student
    facts: dict[str, Any] = {"first_name": who["first_name"], "last_name": who["last_name"],
                             "phone_number": who["phone_number"], "date_of_birth": who["date_of_birth"]}
    if guardian:
        facts.update(child_first_name=student["first_name"])  # "your child Kira"
    return Persona(name=f"{who['first_name']} {who['last_name']}", facts=facts,
                   reads={"verify_caller": [{"phone_number": who["phone_number"],
                                             "date_of_birth": who["date_of_birth"]}],
                          "get_student_record": [{"student_id": sid}]},
                   entity=sid, identified={"session": {"current": {"caller_id": cid,
                                                                    "kind": "guardian" if guardian else "student"}}})

# --------------------------------------------------------------------------- registration

_ENROLL = {"prerequisites_met": Refusal("prerequisite_missing", "prerequisite"),
           "section_has_seats": Refusal("section_full", "full"),
           "credit_limit": Refusal("credit_limit", "credits"),
           "add_deadline": Refusal("add_deadline_passed", "add/drop deadline"),
           "registration_hold": Refusal("registration_hold", "hold"),
           "no_schedule_conflict": Refusal("schedule_conflict", "same time")}

def ground_enroll_in_section(ctx: GroundingContext) -> IntentDraft | None:
    student, sid = _student(ctx), _sid(ctx)
    taken = {e["course_code"] for e in current_enrollments(ctx.state, student)}
    done = {c["course_code"] for c in student["transcript"]}
    courses = sorted(c for c in ctx.state["courses"].scan() if c[0] not in taken and c[0] not in done)
    ctx.rng.shuffle(courses)
    calls = [(crn, {"student_id": sid, "crn": crn}) for code, c in courses[:8] for crn in c["crns"]]
    if ctx.want_challenge:
        crn, args, refusal = _refusal(ctx, "enroll_in_section", calls, _ENROLL)
    else:
        crn, args = ctx.choose([(crn, a) for crn, a in calls if not ctx.violations("enroll_in_section", a)])
        refusal = None
    need(crn not in used_by_earlier_intents(ctx, "crn"))
    section = _section(ctx, crn)
    course = _course(ctx, section["course_code"])
    words, facts, choices = _section_words(ctx, section)
    ref = _student_ref(ctx, "get_academic_record")
    request = [f"register {_who(ctx)}for {words}", f"enroll {_who(ctx)}in {words}"]
    reads = {"search_sections": [{"course_code": course["course_code"]}]}
    transfer = ctx.chance("registration_insists")
    mood = Mood(_they(ctx, "{{I}} need", "{} needs") + f" {course['title']} for " + _they(ctx, "{{my}}", "their")
                + " program",
                "neutral", 2, 3 if section["term"] == "2025FA" else None,
                others=(Mood(_they(ctx, "{{I}} {{am}}", "{} is") + f" looking forward to {course['title']}", "positive", 1,
                             3 if section["term"] == "2025FA" else None),))
    if refusal is not None:
        return draft(refusal.kind or refusal.reason, "enroll_in_section", args, request, ref, refusal=refusal,
                     facts=facts, choices=choices, reads=reads, evidence=["search_sections"], mood=mood,
                     on_refusal="transfer" if transfer and refusal.reason in ("section_full", "credit_limit") else "accept",
                     handoff_summary=f"caller wants student {student['student_number']} registered in CRN {crn}")
    tuition = course["credits"] * TUITION_PER_CREDIT
    after, billing = _after(ctx, tuition)
    return draft("enroll", "enroll_in_section", args, request, ref, facts=facts, choices=choices,
                 reads={**reads, **billing}, evidence=["search_sections"], policy_values=[tuition],
                 outputs=[Output(money(tuition), "the tuition for the course"), *after],
                 decline=f"not register {_who(ctx)}after all", mood=mood)

def _enrolled(ctx: GroundingContext) -> list[dict]:
    """The student's current sections that no earlier intent of the task touched."""
    used = used_by_earlier_intents(ctx, "crn", reads=True)
    return [e for e in current_enrollments(ctx.state, _student(ctx)) if e["crn"] not in used]

def _enrollment_words(ctx: GroundingContext, enrollment: dict) -> tuple[str, dict]:
    course = _course(ctx, enrollment["course_code"])
    name = f"{course['course_code']} ({course['title']})"
    return f"{name} in {TERMS[enrollment['term']]}", {"course": name, "section_term": TERMS[enrollment["term"]]}

_DROP = {"withdrawal_deadline": Refusal("withdrawal_deadline_passed", "withdrawal deadline"),
         "registration_hold": Refusal("registration_hold", "hold")}

def ground_drop_section(ctx: GroundingContext) -> IntentDraft | None:
    sid = _sid(ctx)
    calls = [(e, {"student_id": sid, "crn": e["crn"]}) for e in _enrolled(ctx)]
    if ctx.want_challenge:
        enrollment, args, refusal = _refusal(ctx, "drop_section", calls, _DROP)
    else:
        enrollment, args = ctx.choose([(e, a) for e, a in calls if not ctx.violations("drop_section", a)])
        refusal = None
    section = _section(ctx, enrollment["crn"])
    words, facts = _enrollment_words(ctx, enrollment)
    ref = _student_ref(ctx, "get_academic_record")
    request = [f"withdraw {_who(ctx)}from {words}", f"drop {words}" + (f" for {_me(ctx)}" if _by_guardian(ctx) else "")]
    reads = {"search_sections": [{"course_code": enrollment["course_code"]}]}
    title = _course(ctx, enrollment["course_code"])["title"]
    # "struggling with" a class needs a class that has begun (a session-B section starts in October: school-test-001)
    season = "the spring" if enrollment["term"] == "2026SP" else "the autumn"
    mood = Mood(_they(ctx, "{{I}} {{am}}", "{} is") + f" struggling with {title} this term" if section["start_date"] <= TODAY
                else _they(ctx, "{{my}}", "{}'s") + f" plans for {season} changed, so {title} no longer fits",
                "negative", 2, None)
    if refusal is not None:
        return draft(refusal.kind or refusal.reason, "drop_section", args, request, ref, refusal=refusal, facts=facts,
                     reads=reads, evidence=["search_sections"], mood=mood)
    status, share = refund_share(section)
    tuition = enrollment["credits"] * TUITION_PER_CREDIT
    refund = tuition * share
    after, billing = _after(ctx, -refund)
    told = [Output(money(tuition - refund), "how much of the tuition is not refunded",
                     noun="the tuition that is not refunded")] if share < 1 else []
    return draft("drop" if status == "dropped" else "withdraw", "drop_section", args, request, ref, facts=facts,
                 reads={**reads, **billing}, evidence=["search_sections"], policy_values=[money(tuition - refund)],
                 outputs=[*told, Output(money(refund), "how much tuition is refunded", from_goal=True), *after],
                 decline=_they(ctx, "stay in the class", "keep {} in the class") if share < 1 else None, mood=mood)

# --------------------------------------------------------------------------- transcripts

def ground_request_transcript(ctx: GroundingContext) -> IntentDraft | None:
    sid = _sid(ctx)
    need("request_transcript" not in {d.goal for d in ctx.history})
    delivery = ctx.rng.choice(["electronic", "mail"])
    copies = ctx.rng.choice([1, 1, 2, 3])
    args = {"student_id": sid, "delivery": delivery, "copies": copies}
    ref = _student_ref(ctx)
    how = "sent by email" if delivery == "electronic" else "mailed"
    what = "an official transcript" if copies == 1 else f"{copies} official transcripts"
    request = [f"order {what} of {_my(ctx)} record, {how}", f"get {what} {how}"]
    facts = {"delivery": delivery, "copies": copies}
    mood = Mood(_they(ctx, "{{I}} need {{my}}", "{} needs their") + " transcript for a university application",
                "positive", 2, 7)
    if ctx.want_challenge:
        _, args, refusal = _refusal(ctx, "request_transcript", [(None, args)],
                                    {"transcript_hold": Refusal("transcript_hold", "hold")})
        return draft(refusal.kind or refusal.reason, "request_transcript", args, request, ref, refusal=refusal,
                     facts=facts, mood=mood)
    need(not ctx.violations("request_transcript", args))
    fee = TRANSCRIPT_FEE[delivery] * copies
    after, billing = _after(ctx, fee)
    return draft("transcript", "request_transcript", args, request, ref, facts=facts, policy_values=[fee],
                 reads=billing, outputs=[Output(money(fee), "the transcript fee"), *after], decline="not order it after all", mood=mood)

# --------------------------------------------------------------------------- money

def ground_make_payment(ctx: GroundingContext) -> IntentDraft | None:
    student, sid = _student(ctx), _sid(ctx)
    need(not ctx.want_challenge)
    due = balance(ctx.state, student)
    need(due > 0 and not (student["payment_plan"] or {}).get("status") == "active")
    # "I cannot pay the whole tuition at once" and "pay off my balance in full" are not one caller's situation
    need("enroll_payment_plan" not in {d.goal for d in ctx.history})
    pid, choice, pay_facts, words = _payment(ctx)
    args = {"student_id": sid, "amount": due, "payment_method_id": pid}
    need(not ctx.violations("make_payment", args))
    ref = _student_ref(ctx, "get_billing")
    held = any(h["kind"] == "financial" for h in student["holds"])
    return draft("pay", "make_payment", args, [f"pay off {_my(ctx)} balance in full", f"clear {_my(ctx)} whole balance"],
                 ref, facts=pay_facts, choices=[choice], outputs=[Output(money(due), "the balance due")],
                 preferences=[f"pay with the {words}"], decline="pay it another time",
                 mood=Mood("a hold is blocking " + _my(ctx) + " record" if held else "{{I}} want the bill settled",
                           "negative" if held else "neutral", 2 if held else 1, None))

_PLAN = {"payment_plan_eligibility": Refusal("payment_plan_ineligible", "payment plan")}

def ground_enroll_payment_plan(ctx: GroundingContext) -> IntentDraft | None:
    student, sid = _student(ctx), _sid(ctx)
    # a balance just paid in full leaves nothing to split (school-test-011 paid $2,750, then asked for 4 payments)
    need("make_payment" not in {d.goal for d in ctx.history})
    # a plan splits a balance: a student who owes nothing has nothing to split (school-test payment_plan_ineligible
    # tasks asked it for $0 balances, "I cannot pay the whole tuition at once")
    due = balance(ctx.state, student)
    need(due > 0)
    installments = ctx.rng.choice([2, 3, 4])
    args = {"student_id": sid, "installments": installments}
    ref = _student_ref(ctx, "get_billing")
    request = [f"split {_my(ctx)} balance into {installments} monthly payments",
               f"set up a payment plan with {installments} installments for {_my(ctx)} balance"]
    mood = Mood("{{I}} cannot pay the whole tuition at once", "negative", 2, None) if due >= PLAN_MINIMUM else \
        Mood(f"{{{{I}}}} would rather spread the ${money(due)} balance over a few months", "neutral", 1, None)
    facts = {"installments": installments}
    if ctx.want_challenge:
        _, args, refusal = _refusal(ctx, "enroll_payment_plan", [(None, args)], _PLAN)
        return draft(refusal.kind or refusal.reason, "enroll_payment_plan", args, request, ref, refusal=refusal,
                     facts=facts, mood=mood)
    need(not ctx.violations("enroll_payment_plan", args))
    each = money((balance(ctx.state, student) + PLAN_FEE) / installments)
    return draft("plan", "enroll_payment_plan", args, request, ref, facts=facts, policy_values=[PLAN_FEE, each],
                 outputs=[Output(each, "each monthly installment")], decline="pay the balance another way", mood=mood)

def ground_waive_late_fee(ctx: GroundingContext) -> IntentDraft | None:
    student = _student(ctx)
    # a waiver is asked before paying or splitting the balance, not after
    need(not {"make_payment", "enroll_payment_plan"} & {d.goal for d in ctx.history})
    fees = [ctx.state["charges"].peek(c) for c in student["charge_ids"]]
    fee = ctx.choose([c for c in fees if c["kind"] == "late_fee" and not c["waived"]])
    args = {"charge_id": fee["charge_id"]}
    ref = _student_ref(ctx, "get_billing")
    request = [f"have the late fee on {_my(ctx)} account waived", f"get the late fee on {_my(ctx)} bill removed"]
    mood = Mood("{{I}} think the late fee is unfair after a hard summer", "negative", 1, None)
    if ctx.want_challenge:
        _, args, refusal = _refusal(ctx, "waive_late_fee", [(None, args)],
                                    {"late_fee_waiver_once": Refusal("late_fee_waiver_used", "academic year")})
        return draft(refusal.kind or refusal.reason, "waive_late_fee", args, request, ref, refusal=refusal, mood=mood)
    need(not ctx.violations("waive_late_fee", args))
    return draft("waive", "waive_late_fee", args, request, ref, outputs=[Output(money(fee["amount"]), "the fee waived")],
                 mood=mood)

# --------------------------------------------------------------------------- attendance

def ground_report_absence(ctx: GroundingContext) -> IntentDraft | None:
    sid = _sid(ctx)
    enrolled = [e for e in _enrolled(ctx) if e["term"] == "2025FA" and _section(ctx, e["crn"])["days"]]
    enrollment = ctx.choose(enrolled)
    section = _section(ctx, enrollment["crn"])
    if ctx.want_challenge and ctx.chance("late_absence_challenge"):
        window = list(range(-ABSENCE_DAYS_BACK - 10, -ABSENCE_DAYS_BACK))
    else:
        window = list(range(-ABSENCE_DAYS_BACK, ABSENCE_DAYS_AHEAD + 1))
    days = [shift_date(TODAY, k) for k in window]
    # an absence the record already excuses (under any reason) is no absence to report (issue 34)
    days = [d for d in days if WEEKDAYS[_dt.date.fromisoformat(d).weekday()] in section["days"]
            and section["start_date"] <= d <= section["end_date"]
            and excused_already(ctx.state, sid, enrollment["crn"], d) is None]
    date = ctx.choose(days)
    reason = ctx.rng.choice(sorted(REASONS))
    args = {"student_id": sid, "crn": enrollment["crn"], "date": date, "reason": reason}
    words, facts = _enrollment_words(ctx, enrollment)
    facts.update(absence_date=date, absence_reason=reason)
    ref = _student_ref(ctx, "get_academic_record", "get_attendance")
    when = f"{DAYS[WEEKDAYS[_dt.date.fromisoformat(date).weekday()]]}, {month_day(date)}"
    past = date < TODAY
    request = [f"report that {_they(ctx, '{{I}}', '{}')} "
               f"{'missed' if past else 'will miss'} {words} on {when} because of {REASONS[reason]}"]
    mood = Mood(f"{REASONS[reason]} {'kept' if past else 'will keep'} {_me(ctx)} from class",
                "negative" if reason in ("illness", "family_emergency") else "neutral",
                2 if reason == "family_emergency" else 1, None)
    if ctx.want_challenge:
        _, args, refusal = _refusal(ctx, "report_absence", [(None, args)],
                                    {"absence_window": Refusal("absence_window", "3 days")})
        return draft(refusal.kind or refusal.reason, "report_absence", args, request, ref, refusal=refusal,
                     facts=facts, mood=mood)
    need(not ctx.violations("report_absence", args))
    return draft("absence", "report_absence", args, request, ref, facts=facts, mood=mood)

HINTS = TracerHints(
    reads_once=True,  # its walks read a record again with no write between (issue 34)
    persona=persona,
    goals=goals_in(globals()),  # each ground_<tool> function above grounds <tool>
    # registration goals reach the most reads; the money goals are short and need a partner intent to be long enough
    goal_weights={"enroll_in_section": 1.5, "drop_section": 1.2, "waive_late_fee": 2.0, "make_payment": 1.5,
                  "enroll_payment_plan": 1.5, "request_transcript": 1.5},
    entry_tools=["verify_caller"],
    occasions=OCCASIONS,
    occasion_intents=["enroll", "drop", "withdraw", "transcript", "plan", "pay", "prerequisite_missing",
                      "section_full", "credit_limit", "transcript_hold"],
    fact_phrase=fact_phrase,
    situation=situation,
    world=world,
    rates=SchoolRates(),
)
