"""Seeded generator of the school database (`data/db.json`).

    python -m tau_emotion.domain_packs.school.generate_db --seed 0 [--students 600] [--out PATH]

The same seed always writes the same bytes. The course catalogue and the Fall 2025 / Spring 2026
sections' calendar are fixed; students (a sixth of them dual-enrollment minors), guardians and the
releases adult students signed for them, academic histories, enrollments, holds, charges, payments,
payment plans, late-fee waivers and absences are drawn around `tools.TODAY`, so that every policy
rule has cases on both sides; the generated records themselves obey the rules (prerequisites,
credit limits, no schedule conflicts).
"""

from __future__ import annotations

import argparse
import datetime as _dt
import json
import random
from importlib.resources import files
from pathlib import Path
from typing import Any

from tau_emotion.domain_packs.school.tools import TODAY, TUITION_PER_CREDIT, WEEKDAYS, age_on

COURSES = [  # code, title, credits, prerequisites
    ("ENG101", "Composition I", 3, []), ("ENG102", "Composition II", 3, ["ENG101"]),
    ("COM101", "Public Speaking", 3, []), ("MATH095", "Intermediate Algebra", 3, []),
    ("MATH121", "College Algebra", 3, ["MATH095"]), ("MATH141", "Statistics", 3, ["MATH095"]),
    ("MATH151", "Calculus I", 4, ["MATH121"]), ("MATH152", "Calculus II", 4, ["MATH151"]),
    ("BIO101", "General Biology I", 4, []), ("BIO102", "General Biology II", 4, ["BIO101"]),
    ("BIO201", "Anatomy and Physiology I", 4, ["BIO101"]), ("CHEM101", "General Chemistry I", 4, ["MATH121"]),
    ("CHEM102", "General Chemistry II", 4, ["CHEM101"]), ("PHYS101", "Physics I", 4, ["MATH151"]),
    ("PSY101", "Introduction to Psychology", 3, []), ("PSY201", "Developmental Psychology", 3, ["PSY101"]),
    ("SOC101", "Introduction to Sociology", 3, []), ("HIS101", "US History I", 3, []),
    ("HIS102", "US History II", 3, []), ("ECO201", "Macroeconomics", 3, ["MATH095"]),
    ("ECO202", "Microeconomics", 3, ["MATH095"]), ("ACC101", "Financial Accounting", 3, []),
    ("ACC102", "Managerial Accounting", 3, ["ACC101"]), ("CS110", "Introduction to Programming", 3, ["MATH095"]),
    ("CS120", "Data Structures", 3, ["CS110"]), ("CS210", "Computer Systems", 3, ["CS120"]),
    ("ART101", "Drawing I", 3, []), ("SPA101", "Spanish I", 4, []), ("SPA102", "Spanish II", 4, ["SPA101"]),
    ("CSS100", "College Success", 1, []), ("HLT110", "First Aid and CPR", 1, []),
]
SESSIONS = {  # term, session: start, end, add/drop deadline, refund schedule, withdrawal deadline
    ("2025FA", "full"): ("2025-08-25", "2025-12-12", "2025-08-31", [("2025-09-14", 0.5), ("2025-09-21", 0.25)], "2025-10-31"),
    ("2025FA", "A"): ("2025-08-25", "2025-10-17", "2025-08-27", [("2025-08-31", 0.5), ("2025-09-03", 0.25)], "2025-09-26"),
    ("2025FA", "Q"): ("2025-08-25", "2025-09-19", "2025-08-26", [("2025-08-28", 0.5)], "2025-09-08"),
    ("2025FA", "B"): ("2025-10-20", "2025-12-12", "2025-10-22", [("2025-10-26", 0.5), ("2025-10-29", 0.25)], "2025-11-21"),
    ("2026SP", "full"): ("2026-01-20", "2026-05-15", "2026-01-26", [("2026-02-09", 0.5), ("2026-02-16", 0.25)], "2026-04-03"),
}
DAYS = [["Mon", "Wed"], ["Tue", "Thu"], ["Mon", "Wed"], ["Tue", "Thu"], ["Fri"], ["Wed"], []]
TIMES = [("08:00", "09:15"), ("09:30", "10:45"), ("11:00", "12:15"), ("13:00", "14:15"), ("14:30", "15:45"),
         ("18:00", "20:40")]
INSTRUCTORS = ["Dr. Alvarez", "Prof. Brennan", "Dr. Chen", "Prof. Delgado", "Dr. Evans", "Prof. Fontaine",
               "Dr. Gupta", "Prof. Hayes", "Dr. Ibarra", "Prof. Jansen", "Dr. Kowalczyk", "Prof. Lam"]
PROGRAMS = ["Liberal Arts", "Business Administration", "Computer Science", "Nursing Prerequisites",
            "General Studies", "Engineering Science", "Psychology", "Early College (dual enrollment)"]
FIRST = ["Aisha", "Ben", "Carla", "Diego", "Elena", "Farid", "Grace", "Hiro", "Ines", "Jonas", "Kemal", "Lena",
         "Marco", "Nadia", "Omar", "Priya", "Quinn", "Rosa", "Samir", "Tara", "Umar", "Vera", "Wen", "Ximena",
         "Yusuf", "Zoe", "Amara", "Bruno", "Chloe", "Dev", "Esme", "Felix", "Gita", "Hugo", "Ivy", "Jamal", "Kira",
         "Liam", "Maya", "Noah", "Olga", "Pablo", "Rhea", "Sven", "Tomas", "Uma", "Viktor", "Wanda", "Yara", "Zane"]
LAST = ["Abbott", "Banerjee", "Castro", "Dubois", "Eriksen", "Fischer", "Garcia", "Haddad", "Ito", "Jensen",
        "Kowalski", "Lindqvist", "Moreau", "Nakamura", "Okafor", "Petrov", "Quintero", "Rossi", "Schmidt", "Tanaka",
        "Ueda", "Varga", "Walsh", "Xu", "Yilmaz", "Zimmer", "Alvarez", "Brennan", "Costa", "Dias", "Evans", "Ferro"]
GRADES = ["A", "B", "C", "D", "F", "W"]
HOLDS = [("financial", ["registration", "transcript"]), ("advising", ["registration"]),
         ("immunization", ["registration"]), ("library", ["transcript"])]
PAST_TERMS = ["2024FA", "2025SP", "2025SU"]
FEE = 150  # student services fee per term
BANKS = {"visa": "Berkshire Bank", "mastercard": "Greenfield Savings", "discover": "PeoplesBank"}


def _day(rng: random.Random, start: str, end: str) -> str:
    a, b = _dt.date.fromisoformat(start), _dt.date.fromisoformat(end)
    return (a + _dt.timedelta(days=rng.randrange((b - a).days + 1))).isoformat()


def _unique(rng: random.Random, used: set[str], make: Any) -> str:
    while True:
        value = make(rng)
        if value not in used:
            used.add(value)
            return value


def _overlap(a: dict, b: dict) -> bool:
    return bool(set(a["days"]) & set(b["days"]) and a["start_date"] <= b["end_date"] and b["start_date"] <= a["end_date"]
                and a["start_time"] < b["end_time"] and b["start_time"] < a["end_time"])


class _Gen:
    def __init__(self, seed: int):
        self.rng = random.Random(seed)
        self.ids: set[str] = set()
        self.phones: set[str] = set()
        self.db: dict[str, Any] = {"session": {"current": {"caller_id": None, "kind": None}}, "courses": {},
                                   "sections": {}, "students": {}, "guardians": {}, "enrollments": {}, "charges": {},
                                   "payments": {}, "absences": {}, "transcript_orders": {}}

    def key(self, prefix: str, digits: int) -> str:
        return _unique(self.rng, self.ids, lambda r: f"{prefix}{r.randrange(10 ** (digits - 1), 10 ** digits)}")

    def person(self, dob_from: str, dob_to: str, last: str | None = None) -> dict:
        rng = self.rng
        first, last = rng.choice(FIRST), last or rng.choice(LAST)
        pms = {}
        for _ in range(rng.choice([1, 1, 2])):
            pid = self.key("pm_", 7)
            kind, brand = rng.choice(["credit_card", "debit_card", "bank_account"]), rng.choice(["visa", "mastercard", "discover"])
            issuer = {"bank": BANKS[brand]} if kind == "bank_account" else {"brand": brand}
            pms[pid] = {"payment_method_id": pid, "kind": kind, **issuer, "last_four": f"{rng.randrange(10000):04d}"}
        return {"first_name": first, "last_name": last, "date_of_birth": _day(rng, dob_from, dob_to),
                "phone_number": _unique(rng, self.phones, lambda r: f"{r.choice(['413', '508', '774'])}-555-{r.randrange(10000):04d}"),
                "email": f"{first.lower()}.{last.lower()}{rng.randrange(100)}@example.com", "payment_methods": pms}

    def catalogue(self) -> None:
        rng, db = self.rng, self.db
        for code, title, credits, prereqs in COURSES:
            db["courses"][code] = {"course_code": code, "title": title, "credits": credits, "prerequisites": prereqs,
                                   "crns": []}
            plan = [("2025FA", "Q"), ("2025FA", "B"), ("2026SP", "full")] if credits == 1 else \
                [("2025FA", "full"), ("2025FA", "full"), (("2025FA", rng.choice(["A", "B"]))), ("2026SP", "full"),
                 ("2026SP", "full")]
            for term, session in plan:
                crn = self.key("", 5)
                start, end, add_drop, refunds, withdrawal = SESSIONS[(term, session)]
                days = rng.choice(DAYS)
                start_time, end_time = rng.choice(TIMES[:-1] if len(days) > 1 else TIMES)
                db["sections"][crn] = {
                    "crn": crn, "course_code": code, "term": term, "session": session, "start_date": start,
                    "end_date": end, "days": days, "start_time": start_time if days else "", "end_time": end_time if days else "",
                    "modality": "online" if not days else "in person", "instructor": rng.choice(INSTRUCTORS),
                    "capacity": rng.choice([20, 24, 24, 28, 30, 35]), "seats_taken": 0, "add_drop_deadline": add_drop,
                    "refund_schedule": [list(r) for r in refunds], "withdrawal_deadline": withdrawal}
                db["courses"][code]["crns"].append(crn)

    def student(self) -> None:
        rng, db = self.rng, self.db
        roll = rng.random()
        minor = roll < 0.16
        dob = ("2007-09-11", "2009-09-10") if minor else ("1968-01-01", "2007-09-10")
        base = self.person(*dob)
        sid = self.key("ST", 6)
        entry = rng.choice(["2024", "2025"]) if minor else rng.choice(["2022", "2023", "2024", "2024", "2025", "2025"])
        student = {"student_id": sid, "student_number": entry + f"{rng.randrange(10000):04d}", **base,
                   "program": PROGRAMS[-1] if minor else rng.choice(PROGRAMS[:-1]),
                   "standing": "probation" if not minor and rng.random() < 0.08 else "good", "holds": [],
                   "guardian_ids": [], "releases": {}, "late_fee_waivers": [], "payment_plan": None, "transcript": [],
                   "enrollment_ids": [], "charge_ids": [], "payment_ids": [], "absence_ids": []}
        while student["student_number"] in {s["student_number"] for s in db["students"].values()}:
            student["student_number"] = entry + f"{rng.randrange(10000):04d}"
        db["students"][sid] = student
        if minor or rng.random() < 0.25:
            for i in range(1 if not minor or rng.random() < 0.5 else 2):
                gid = self.key("GD", 6)
                born = int(student["date_of_birth"][:4])
                g = self.person(f"{born - 45}-01-01", f"{born - 20}-12-31",
                                last=student["last_name"] if rng.random() < 0.8 else None)
                db["guardians"][gid] = {"guardian_id": gid, **g,
                                        "relationship": "parent" if i == 0 or rng.random() < 0.8 else "legal guardian",
                                        "student_ids": [sid]}
                student["guardian_ids"].append(gid)
                if not minor:
                    scopes = [s for s in ("academic", "financial", "registration") if rng.random() < 0.5]
                    if scopes or rng.random() < 0.5:
                        student["releases"][gid] = scopes
        self.history(student, entry, minor)
        self.enroll(student, "2025FA", minor)
        if rng.random() < 0.3:
            self.enroll(student, "2026SP", minor, spring=True)
        self.billing(student)
        if student["transcript"] and rng.random() < 0.15:  # an earlier official transcript order
            oid = self.key("TR", 7)
            db["transcript_orders"][oid] = {"order_id": oid, "student_id": sid, "delivery": rng.choice(["electronic", "mail"]),
                                            "copies": rng.choice([1, 1, 2]), "ordered_on": _day(rng, "2024-10-01", "2025-08-31"),
                                            "status": "sent"}
        if rng.random() < 0.12:
            kind, blocks = rng.choice(HOLDS)
            student["holds"].append({"kind": kind, "blocks": blocks, "since": _day(rng, "2025-05-01", "2025-09-05")})

    def history(self, student: dict, entry: str, minor: bool) -> None:
        rng = self.rng
        if entry == "2025" and rng.random() < 0.5:  # started this fall: no history yet
            return
        terms = [t for t in PAST_TERMS if t[:4] >= entry or (t == "2024FA" and entry == "2024")]
        passed: set[str] = set()
        for term in terms:
            for _ in range(rng.choice([1, 2] if minor or term.endswith("SU") else [2, 3, 4])):
                options = [c for c in COURSES if all(p in passed for p in c[3]) and c[0] not in passed]
                if not options:
                    break
                code, _, credits, _ = rng.choice(options)
                grade = rng.choices(GRADES, [30, 30, 20, 7, 5, 8])[0]
                student["transcript"].append({"term": term, "course_code": code, "credits": credits, "grade": grade})
                if grade in ("A", "B", "C"):
                    passed.add(code)

    def enroll(self, student: dict, term: str, minor: bool, spring: bool = False) -> None:
        rng, db = self.rng, self.db
        cap = 8 if minor else 12 if student["standing"] == "probation" else 18
        want = rng.choice([1, 2] if minor else [1, 2, 3] if spring else [2, 3, 4, 5])
        passed = {c["course_code"] for c in student["transcript"] if c["grade"] in ("A", "B", "C")}
        taken: list[dict] = []
        credits = 0
        codes = [c[0] for c in COURSES]
        rng.shuffle(codes)
        for code in codes:
            course = db["courses"][code]
            if len(taken) >= want or code in passed or not all(p in passed for p in course["prerequisites"]):
                continue
            if credits + course["credits"] > cap:
                continue
            crns = [c for c in course["crns"] if db["sections"][c]["term"] == term]
            rng.shuffle(crns)
            for crn in crns:
                section = db["sections"][crn]
                if section["seats_taken"] >= section["capacity"] or any(_overlap(section, t) for t in taken):
                    continue
                eid = self.key("EN", 7)
                db["enrollments"][eid] = {"enrollment_id": eid, "student_id": student["student_id"], "crn": crn,
                                          "course_code": code, "term": term, "session": section["session"],
                                          "credits": course["credits"], "status": "enrolled",
                                          "enrolled_on": _day(rng, "2025-09-01", "2025-09-09") if spring else
                                          _day(rng, "2025-06-01", "2025-08-24")}
                student["enrollment_ids"].append(eid)
                section["seats_taken"] += 1
                taken.append(section)
                credits += course["credits"]
                break

    def billing(self, student: dict) -> None:
        rng, db = self.rng, self.db

        def charge(kind: str, description: str, amount: float, date: str, term: str) -> dict:
            cid = self.key("CH", 7)
            row = {"charge_id": cid, "student_id": student["student_id"], "term": term, "kind": kind,
                   "description": description, "amount": amount, "date": date, "waived": False}
            db["charges"][cid] = row
            student["charge_ids"].append(cid)
            return row

        def pay(amount: float, date: str) -> None:
            methods = [*student["payment_methods"], *(m for g in student["guardian_ids"]
                                                      for m in db["guardians"][g]["payment_methods"])]
            if not methods or amount <= 0:
                return
            pid = self.key("PY", 7)
            db["payments"][pid] = {"payment_id": pid, "student_id": student["student_id"], "amount": round(amount, 2),
                                   "date": date, "payment_method_id": rng.choice(methods)}
            student["payment_ids"].append(pid)

        fall = [db["enrollments"][e] for e in student["enrollment_ids"] if db["enrollments"][e]["term"] == "2025FA"]
        credits = sum(e["credits"] for e in fall)
        total = credits * TUITION_PER_CREDIT + FEE
        charge("tuition", f"Tuition Fall 2025 ({credits} credits)", credits * TUITION_PER_CREDIT, "2025-08-01", "2025FA")
        charge("fee", "Student services fee Fall 2025", FEE, "2025-08-01", "2025FA")
        roll = rng.random()
        if roll < 0.62:
            pay(total, _day(rng, "2025-08-02", "2025-08-20"))
        elif roll < 0.7 and total >= 600:
            each = round(total / 4, 2)
            student["payment_plan"] = {"status": "active", "total": total, "installments": 4, "installment_amount": each,
                                       "due_dates": ["2025-08-15", "2025-09-15", "2025-10-15", "2025-11-15"],
                                       "created_on": "2025-08-10"}
            pay(each, "2025-08-15")
        else:
            paid = round(total * rng.choice([0, 0, 0.25, 0.5]), 2)
            pay(paid, _day(rng, "2025-08-02", "2025-08-20"))
            late = charge("late_fee", "Late payment fee Fall 2025", 50, "2025-08-21", "2025FA")
            if rng.random() < 0.2:
                late["waived"] = True
                student["late_fee_waivers"].append({"charge_id": late["charge_id"], "date": _day(rng, "2025-08-22", "2025-09-05")})
            elif rng.random() < 0.3:
                pay(total - paid, _day(rng, "2025-08-22", "2025-09-09"))
            if rng.random() < 0.4 and not student["holds"]:
                student["holds"].append({"kind": "financial", "blocks": ["registration", "transcript"], "since": "2025-08-21"})
        if rng.random() < 0.1:  # a waiver from last academic year, which no longer counts
            student["late_fee_waivers"].append({"charge_id": None, "date": _day(rng, "2024-09-01", "2025-03-31")})
        spring = [db["enrollments"][e] for e in student["enrollment_ids"] if db["enrollments"][e]["term"] == "2026SP"]
        for e in spring:
            charge("tuition", f"Tuition {e['course_code']} (2026SP)", e["credits"] * TUITION_PER_CREDIT, e["enrolled_on"], "2026SP")

    def absences(self) -> None:
        rng, db = self.rng, self.db
        for e in db["enrollments"].values():
            section = db["sections"][e["crn"]]
            if e["term"] != "2025FA" or not section["days"] or section["start_date"] > TODAY:
                continue
            days = []
            day = _dt.date.fromisoformat(section["start_date"])
            while day.isoformat() < TODAY:
                if WEEKDAYS[day.weekday()] in section["days"]:
                    days.append(day.isoformat())
                day += _dt.timedelta(days=1)
            for date in rng.sample(days, min(len(days), rng.choice([0, 0, 1, 1, 2, 3]))):
                aid = self.key("AB", 7)
                excused = rng.random() < 0.4
                db["absences"][aid] = {"absence_id": aid, "student_id": e["student_id"], "crn": e["crn"],
                                       "course_code": e["course_code"], "date": date, "excused": excused,
                                       "reason": rng.choice(["illness", "family_emergency", "medical_appointment"]) if excused else None,
                                       "reported_by": rng.choice(["student", "guardian"]) if excused else None}
                db["students"][e["student_id"]]["absence_ids"].append(aid)


def generate(seed: int = 0, students: int = 600) -> dict[str, Any]:
    gen = _Gen(seed)
    gen.catalogue()
    for _ in range(students):
        gen.student()
    gen.absences()
    rng = gen.rng
    for section in gen.db["sections"].values():  # a few sections are exactly full
        if section["seats_taken"] >= 8 and rng.random() < 0.15:
            section["capacity"] = section["seats_taken"]
    assert all(age_on(s["date_of_birth"]) >= 16 for s in gen.db["students"].values())
    return gen.db


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--students", type=int, default=600)
    parser.add_argument("--out", type=Path, default=None)
    args = parser.parse_args(argv)
    out = args.out or Path(str(files("tau_emotion.domain_packs.school") / "data" / "db.json"))
    db = generate(args.seed, args.students)
    out.write_text(json.dumps(db, separators=(",", ":"), sort_keys=False) + "\n")
    counts = ", ".join(f"{len(rows)} {name}" for name, rows in db.items())
    print(f"wrote {out} ({out.stat().st_size // 1024} KiB): {counts}")


if __name__ == "__main__":
    main()
