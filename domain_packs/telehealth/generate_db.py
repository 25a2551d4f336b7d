"""Seeded generator of the telehealth database (`data/db.json`).

    python -m tau_emotion.domain_packs.telehealth.generate_db --seed 0 [--patients 400] [--out PATH]

The same seed always writes the same bytes. The insurance plans and the medication list are fixed;
providers with their weekly schedules, the open and booked slots of the next weeks, patients,
consents, appointments, visit records and prescriptions are drawn around `tools.TODAY`, with
enough caregivers, expired and narrow consents, late appointments, much-rescheduled appointments,
empty, expired, early and controlled prescriptions for every policy rule to matter.
"""

from __future__ import annotations

import argparse
import datetime as _dt
import json
import random
from importlib.resources import files
from pathlib import Path
from typing import Any

from tau_emotion.domain_packs.telehealth.tools import NOW, SERVICE_OF, TODAY

PLANS = [  # id, name, payer, {service: copay}
    ("INS_BASIC", "CareFirst Basic HMO", "CareFirst",
     {"primary_care": 25, "pediatrics": 20, "mental_health": 40}),
    ("INS_SILVER", "Meridian Silver PPO", "Meridian Health",
     {"primary_care": 20, "pediatrics": 15, "dermatology": 50, "cardiology": 55, "mental_health": 30,
      "physical_therapy": 35}),
    ("INS_GOLD", "Meridian Gold PPO", "Meridian Health",
     {"primary_care": 10, "pediatrics": 5, "dermatology": 30, "cardiology": 35, "mental_health": 15,
      "physical_therapy": 20, "nutrition": 15}),
    ("INS_SENIOR", "Evergreen Senior Advantage", "Evergreen",
     {"primary_care": 0, "cardiology": 25, "physical_therapy": 20, "nutrition": 10}),
    ("INS_CAMPUS", "Campus Health Plan", "Unity Student Health",
     {"primary_care": 15, "mental_health": 10, "dermatology": 40}),
]
CLINICS = ["Bayside Clinic", "Northgate Health Center", "Riverside Medical", "Lakeview Family Health", "Virtual Care"]
SPECIALTY_COUNT = {"family_medicine": 10, "pediatrics": 6, "dermatology": 6, "cardiology": 6, "psychiatry": 7,
                   "physical_therapy": 6, "nutrition": 5}
PRICES = {"family_medicine": 150, "pediatrics": 140, "dermatology": 220, "cardiology": 260, "psychiatry": 240,
          "physical_therapy": 130, "nutrition": 110}
MEDS = [  # name, dosage, controlled, usual prescriber specialty
    ("Lisinopril", "10 mg daily", False, "family_medicine"),
    ("Metformin", "500 mg twice daily", False, "family_medicine"),
    ("Atorvastatin", "20 mg daily", False, "cardiology"),
    ("Amlodipine", "5 mg daily", False, "cardiology"),
    ("Levothyroxine", "50 mcg daily", False, "family_medicine"),
    ("Albuterol inhaler", "2 puffs as needed", False, "family_medicine"),
    ("Omeprazole", "20 mg daily", False, "family_medicine"),
    ("Sertraline", "50 mg daily", False, "psychiatry"),
    ("Bupropion", "150 mg daily", False, "psychiatry"),
    ("Tretinoin cream", "apply nightly", False, "dermatology"),
    ("Doxycycline", "100 mg daily", False, "dermatology"),
    ("Lorazepam", "0.5 mg as needed", True, "psychiatry"),
    ("Adderall XR", "20 mg daily", True, "psychiatry"),
    ("Zolpidem", "5 mg at bedtime", True, "family_medicine"),
    ("Tramadol", "50 mg as needed", True, "family_medicine"),
]
REASONS = {  # specialty -> (reason, diagnosis, follow-up)
    "family_medicine": [("annual check-up", "healthy, no concerns", "return in one year"),
                        ("persistent cough", "acute bronchitis", "rest and fluids for a week"),
                        ("high blood pressure", "hypertension", "check blood pressure in three months"),
                        ("fatigue", "low vitamin D", "take vitamin D for eight weeks")],
    "pediatrics": [("well-child visit", "healthy development", "next check-up in six months"),
                   ("ear pain", "middle ear infection", "finish the antibiotics"),
                   ("rash", "eczema", "use a fragrance-free moisturiser")],
    "dermatology": [("acne", "moderate acne", "review in eight weeks"),
                    ("mole check", "benign nevus", "yearly skin check"),
                    ("itchy skin", "contact dermatitis", "avoid the new detergent")],
    "cardiology": [("chest discomfort", "stable angina", "stress test next month"),
                   ("palpitations", "benign palpitations", "limit caffeine"),
                   ("cholesterol review", "high cholesterol", "repeat lipid panel in six months")],
    "psychiatry": [("low mood", "mild depression", "weekly therapy sessions"),
                   ("anxiety", "generalized anxiety", "follow up in four weeks"),
                   ("trouble focusing", "adult ADHD", "medication review in one month")],
    "physical_therapy": [("knee pain", "patellar tendinitis", "home exercises twice a day"),
                         ("back pain", "lumbar strain", "six more sessions"),
                         ("shoulder stiffness", "frozen shoulder", "daily stretching")],
    "nutrition": [("weight management", "overweight", "food diary for a month"),
                  ("diabetes diet", "type 2 diabetes", "low-carbohydrate meal plan")],
}
FIRST = ["Aisha", "Ben", "Carla", "Diego", "Elena", "Farid", "Grace", "Hiro", "Ines", "Jonas", "Kemal", "Lena",
         "Marco", "Nadia", "Omar", "Priya", "Quinn", "Rosa", "Samir", "Tara", "Umar", "Vera", "Wen", "Ximena",
         "Yusuf", "Zoe", "Amara", "Bruno", "Chloe", "Dev", "Esme", "Felix", "Gita", "Hugo", "Ivy", "Jamal", "Kira",
         "Liam", "Maya", "Noah", "Olga", "Pablo", "Rhea", "Sven", "Tomas", "Uma", "Viktor", "Wanda", "Yara", "Zane"]
LAST = ["Abbott", "Banerjee", "Castro", "Dubois", "Eriksen", "Fischer", "Garcia", "Haddad", "Ito", "Jensen",
        "Kowalski", "Lindqvist", "Moreau", "Nakamura", "Okafor", "Petrov", "Quintero", "Rossi", "Schmidt", "Tanaka",
        "Ueda", "Varga", "Walsh", "Xu", "Yilmaz", "Zimmer", "Alvarez", "Brennan", "Costa", "Dias", "Evans", "Ferro",
        "Gupta", "Hughes", "Iqbal", "Kim", "Lopez", "Murphy", "Novak", "Olsen"]
DOCTOR_LAST = ["Adler", "Bishop", "Chen", "Daly", "Estrada", "Fontaine", "Gallagher", "Herrera", "Iverson", "Joshi",
               "Keller", "Lam", "Mendes", "Nolan", "Ortiz", "Park", "Quinlan", "Reyes", "Shah", "Thornton", "Upton",
               "Vance", "Weiss", "Young", "Zhang", "Baker", "Cruz", "Dunn", "Ellis", "Foster", "Grant", "Hayes",
               "Irwin", "Jordan", "Kaur", "Lowe", "Marsh", "Nash", "Owens", "Patel", "Ramos", "Stone", "Tran",
               "Vargas", "Wells", "Yates"]
DOCTOR_FIRST = ["Alicia", "Brian", "Clara", "David", "Emma", "Frank", "Hannah", "Isaac", "Julia", "Kevin", "Laura",
                "Miguel", "Nina", "Oscar", "Paula", "Rafael", "Sara", "Thomas", "Victoria", "William"]
PHARMACIES = ["CityCare Pharmacy", "Walgreens Market St", "CVS Oak Ave", "Bayside Pharmacy", "HealthPlus Drugs"]
AREAS = ["415", "512", "303", "206", "617", "312"]
WEEKDAYS = ["Mon", "Tue", "Wed", "Thu", "Fri"]
HOURS = [("08:00", "12:00"), ("09:00", "13:00"), ("13:00", "17:00"), ("10:00", "14:00"), ("14:00", "18:00")]
SLOT_START, SLOT_END = "2025-06-10", "2025-06-27"  # the bookable horizon


def _date(d: _dt.date) -> str:
    return d.isoformat()


def _day(rng: random.Random, start: str, end: str) -> str:
    a, b = _dt.date.fromisoformat(start), _dt.date.fromisoformat(end)
    return _date(a + _dt.timedelta(days=rng.randrange((b - a).days + 1)))


def _shift(date: str, days: int) -> str:
    return _date(_dt.date.fromisoformat(date) + _dt.timedelta(days=days))


def _unique(rng: random.Random, used: set[str], make: Any) -> str:
    while True:
        value = make(rng)
        if value not in used:
            used.add(value)
            return value


def _times(start: str, end: str) -> list[str]:
    h, m = map(int, start.split(":"))
    out = []
    while f"{h:02d}:{m:02d}" < end:
        out.append(f"{h:02d}:{m:02d}")
        h, m = (h, 30) if m == 0 else (h + 1, 0)
    return out


def _age(dob: str) -> int:
    b, t = _dt.date.fromisoformat(dob), _dt.date.fromisoformat(TODAY)
    return t.year - b.year - ((t.month, t.day) < (b.month, b.day))


def _providers(rng: random.Random, db: dict, ids: set[str]) -> None:
    lasts = list(DOCTOR_LAST)
    rng.shuffle(lasts)
    for specialty, count in SPECIALTY_COUNT.items():
        for _ in range(count):
            pid = _unique(rng, ids, lambda r: f"DR{r.randrange(1000, 10000)}")
            name = f"Dr. {rng.choice(DOCTOR_FIRST)} {lasts.pop()}"
            days = sorted(rng.sample(WEEKDAYS, rng.choice([2, 3, 3, 4])), key=WEEKDAYS.index)
            hours = rng.choice(HOURS)
            modes = ["in_person", "video"] if rng.random() < 0.6 else (
                ["video"] if specialty in ("psychiatry", "nutrition") and rng.random() < 0.5 else ["in_person"])
            clinic = "Virtual Care" if modes == ["video"] else rng.choice(CLINICS[:4])
            plans = sorted(rng.sample([p[0] for p in PLANS], rng.choice([2, 3, 3, 4])))
            ages = {"pediatrics": [0, 17], "family_medicine": [0, 120]}.get(specialty, [18, 120])
            db["providers"][pid] = {"provider_id": pid, "name": name, "specialty": specialty, "clinic": clinic,
                                    "patient_ages": ages, "visit_modes": modes,
                                    "schedule": {d: list(hours) for d in days}, "accepted_plans": plans,
                                    "self_pay_price": PRICES[specialty]}
            day = _dt.date.fromisoformat(SLOT_START)
            while _date(day) <= SLOT_END:
                weekday = WEEKDAYS[day.weekday()] if day.weekday() < 5 else None
                if weekday in days:
                    for time in _times(*hours):
                        sid = _unique(rng, ids, lambda r: f"SL{r.randrange(100000, 1000000)}")
                        status = "booked" if rng.random() < 0.45 else "open"
                        db["slots"][sid] = {"slot_id": sid, "provider_id": pid, "date": _date(day), "time": time,
                                            "status": status}
                day += _dt.timedelta(days=1)


def generate(seed: int = 0, patients: int = 400) -> dict[str, Any]:
    rng = random.Random(seed)
    db: dict[str, Any] = {
        "insurance_plans": {p: {"plan_id": p, "name": n, "payer": payer, "copays": copays}
                            for p, n, payer, copays in PLANS},
        "providers": {}, "slots": {}, "patients": {}, "consents": {}, "appointments": {}, "visits": {},
        "prescriptions": {}, "session": {"current": {"caller_id": None}},
    }
    ids: set[str] = set()
    _providers(rng, db, ids)
    by_specialty: dict[str, list[str]] = {}
    for pid, p in db["providers"].items():
        by_specialty.setdefault(p["specialty"], []).append(pid)
    open_slots: dict[str, list[str]] = {}
    for sid, s in db["slots"].items():
        if s["status"] == "open" and f"{s['date']}T{s['time']}" > NOW:
            open_slots.setdefault(s["provider_id"], []).append(sid)
    names: set[tuple[str, str]] = set()
    phones: set[str] = set()

    def new_patient(dob: str, last: str | None = None) -> dict:
        while True:
            first, surname = rng.choice(FIRST), last or rng.choice(LAST)
            if (first, surname) not in names:
                names.add((first, surname))
                break
        pid = _unique(rng, ids, lambda r: f"P{r.randrange(100000, 1000000)}")
        phone = _unique(rng, phones, lambda r: f"{r.choice(AREAS)}-555-{r.randrange(10000):04d}")
        age = _age(dob)
        plan = rng.choice(["INS_SENIOR", "INS_GOLD", "INS_SILVER"] if age >= 65 else (
            ["INS_CAMPUS", "INS_BASIC", "INS_SILVER"] if 18 <= age <= 25 else ["INS_BASIC", "INS_SILVER", "INS_GOLD"]))
        primary = rng.choice(by_specialty["pediatrics" if age < 18 else "family_medicine"])
        row = {"patient_id": pid, "name": {"first_name": first, "last_name": surname}, "date_of_birth": dob,
               "phone": phone, "email": f"{first.lower()}.{surname.lower()}{rng.randrange(100)}@example.com",
               "insurance": {"plan_id": plan, "member_id": f"M{rng.randrange(10**7, 10**8)}"},
               "pharmacy": rng.choice(PHARMACIES), "primary_provider_id": primary, "appointment_ids": [],
               "prescription_ids": [], "visit_ids": [], "consent_ids": [], "held_consent_ids": []}
        db["patients"][pid] = row
        return row

    def consent(patient: dict, rep: dict, relationship: str, scope: list[str]) -> None:
        cid = _unique(rng, ids, lambda r: f"CN{r.randrange(100000, 1000000)}")
        roll = rng.random()
        if roll < 0.18:
            status, expires = "active", _day(rng, "2025-01-15", "2025-06-09")  # lapsed
        elif roll < 0.24:
            status, expires = "revoked", _day(rng, "2025-09-01", "2026-12-31")
        else:
            status, expires = "active", _day(rng, "2025-08-01", "2027-06-30")
        db["consents"][cid] = {"consent_id": cid, "patient_id": patient["patient_id"],
                               "representative_id": rep["patient_id"], "relationship": relationship,
                               "scope": scope, "granted_on": _day(rng, "2023-01-01", "2025-01-10"),
                               "expires_on": expires, "status": status}
        patient["consent_ids"].append(cid)
        rep["held_consent_ids"].append(cid)

    adults = []
    while len(db["patients"]) < patients:
        adult = new_patient(_day(rng, "1940-01-01", "2004-12-31"))
        adults.append(adult)
        age = _age(adult["date_of_birth"])
        if 28 <= age <= 55 and rng.random() < 0.35:  # a parent: children who see a pediatrician
            for _ in range(rng.choice([1, 1, 2])):
                child = new_patient(_day(rng, "2009-01-01", "2023-12-31"), adult["name"]["last_name"])
                consent(child, adult, "parent", ["appointments", "prescriptions", "records"])
        if 40 <= age <= 62 and rng.random() < 0.3:  # a carer of an elderly parent
            elder = new_patient(_day(rng, "1935-01-01", "1955-12-31"), adult["name"]["last_name"])
            adults.append(elder)
            scope = rng.choice([["appointments"], ["appointments", "prescriptions"], ["prescriptions"],
                                ["appointments", "prescriptions", "records"]])
            consent(elder, adult, "child", scope)
        if rng.random() < 0.08 and len(adults) > 3:  # a spouse or friend with a narrow consent
            other = rng.choice(adults[:-1])
            if other is not adult and _age(other["date_of_birth"]) >= 18:
                consent(adult, other, rng.choice(["spouse", "friend"]), rng.choice([["appointments"], ["records"]]))

    _history(rng, db, ids, by_specialty, open_slots)
    return db


def _history(rng: random.Random, db: dict, ids: set[str], by_specialty: dict[str, list[str]],
             open_slots: dict[str, list[str]]) -> None:
    """Past visits, upcoming appointments and prescriptions for every patient."""
    for patient in list(db["patients"].values()):
        pid = patient["patient_id"]
        age = _age(patient["date_of_birth"])
        child = age < 18
        specialties = ["pediatrics"] if child else [s for s in SPECIALTY_COUNT if s != "pediatrics"]
        seen: list[tuple[str, str]] = []  # (provider, date) of past visits
        for _ in range(rng.choice([1, 2, 2, 3, 4])):
            specialty = patient_specialty = rng.choice(specialties) if rng.random() < 0.6 else (
                "pediatrics" if child else "family_medicine")
            provider = patient["primary_provider_id"] if patient_specialty in ("pediatrics", "family_medicine") \
                and rng.random() < 0.7 else rng.choice(by_specialty[specialty])
            date = _day(rng, "2024-11-01", "2025-06-06")
            reason, diagnosis, follow = rng.choice(REASONS[db["providers"][provider]["specialty"]])
            aid = _unique(rng, ids, lambda r: f"AP{r.randrange(100000, 1000000)}")
            vid = _unique(rng, ids, lambda r: f"V{r.randrange(100000, 1000000)}")
            time = rng.choice(["09:00", "10:30", "11:00", "14:00", "15:30"])
            p = db["providers"][provider]
            db["appointments"][aid] = {"appointment_id": aid, "patient_id": pid, "provider_id": provider,
                                       "slot_id": None, "date": date, "time": time, "mode": rng.choice(p["visit_modes"]),
                                       "service": SERVICE_OF[p["specialty"]], "status": "completed",
                                       "reschedule_count": rng.choice([0, 0, 0, 1]),
                                       "booked_on": _shift(date, -rng.randrange(3, 30)), "copay": None,
                                       "fee_charged": 0}
            plan = db["insurance_plans"][patient["insurance"]["plan_id"]]
            service = SERVICE_OF[p["specialty"]]
            covered = patient["insurance"]["plan_id"] in p["accepted_plans"] and service in plan["copays"]
            db["appointments"][aid]["copay"] = plan["copays"][service] if covered else p["self_pay_price"]
            db["visits"][vid] = {"visit_id": vid, "patient_id": pid, "provider_id": provider, "appointment_id": aid,
                                 "date": date, "service": service, "reason": reason, "diagnosis": diagnosis,
                                 "follow_up": follow}
            patient["appointment_ids"].append(aid)
            patient["visit_ids"].append(vid)
            seen.append((provider, date))
        # upcoming appointments on real slots, some within 24 hours, some rescheduled twice already
        for _ in range(rng.choice([0, 1, 1, 1, 2, 2])):
            specialty = rng.choice(specialties)
            provider = rng.choice(by_specialty[specialty])
            free = open_slots.get(provider, [])
            if not free or any(db["appointments"][a]["provider_id"] == provider
                               and db["appointments"][a]["status"] == "scheduled" for a in patient["appointment_ids"]):
                continue  # one upcoming appointment per provider, as the policy asks
            soon = [s for s in free if db["slots"][s]["date"] in ("2025-06-10", "2025-06-11")]
            sid = rng.choice(soon) if soon and rng.random() < 0.2 else rng.choice(free)
            free.remove(sid)
            slot = db["slots"][sid]
            slot["status"] = "booked"
            p = db["providers"][provider]
            plan = db["insurance_plans"][patient["insurance"]["plan_id"]]
            service = SERVICE_OF[p["specialty"]]
            covered = patient["insurance"]["plan_id"] in p["accepted_plans"] and service in plan["copays"]
            aid = _unique(rng, ids, lambda r: f"AP{r.randrange(100000, 1000000)}")
            db["appointments"][aid] = {"appointment_id": aid, "patient_id": pid, "provider_id": provider,
                                       "slot_id": sid, "date": slot["date"], "time": slot["time"],
                                       "mode": rng.choice(p["visit_modes"]), "service": service,
                                       "status": "scheduled", "reschedule_count": rng.choice([0, 0, 0, 1, 2]),
                                       "booked_on": _day(rng, "2025-05-01", "2025-06-09"),
                                       "copay": plan["copays"][service] if covered else p["self_pay_price"],
                                       "fee_charged": 0}
            patient["appointment_ids"].append(aid)
        # prescriptions: mostly from providers the patient saw
        for _ in range(rng.choice([0, 1, 1, 2, 2, 3])):
            name, dosage, controlled, spec = rng.choice(MEDS)
            if child and controlled and name != "Adderall XR":
                continue
            if child and name not in ("Albuterol inhaler", "Adderall XR", "Omeprazole", "Doxycycline"):
                continue
            if any(db["prescriptions"][r]["medication"] == name for r in patient["prescription_ids"]):
                continue
            fitting = [pr for pr, _ in seen if db["providers"][pr]["specialty"] == spec]  # the medication's specialty
            if child:
                prescriber = patient["primary_provider_id"]
            elif fitting and rng.random() < 0.7:
                prescriber = rng.choice(fitting)
            else:
                prescriber = rng.choice(by_specialty[spec])
            rid = _unique(rng, ids, lambda r: f"RX{r.randrange(100000, 1000000)}")
            written = _day(rng, "2024-03-01", "2025-05-20")
            expires = _shift(written, 365)
            last = _day(rng, max(written, "2025-03-01"), "2025-06-08") if rng.random() < 0.9 else written
            refills = rng.choice([0, 1, 2, 3, 5]) if not controlled else rng.choice([0, 1, 2])
            db["prescriptions"][rid] = {"prescription_id": rid, "patient_id": pid, "prescriber_id": prescriber,
                                        "medication": name, "dosage": dosage, "controlled": controlled,
                                        "days_supply": 30, "written_on": written, "expires_on": expires,
                                        "refills_left": refills, "last_filled": last,
                                        "fills": [{"date": last, "pharmacy": patient["pharmacy"]}]}
            patient["prescription_ids"].append(rid)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--patients", type=int, default=400)
    parser.add_argument("--out", type=Path, default=None)
    args = parser.parse_args(argv)
    out = args.out or Path(str(files("tau_emotion.domain_packs.telehealth") / "data" / "db.json"))
    db = generate(args.seed, args.patients)
    out.write_text(json.dumps(db, separators=(",", ":"), sort_keys=False) + "\n")
    counts = ", ".join(f"{len(rows)} {name}" for name, rows in db.items())
    print(f"wrote {out} ({out.stat().st_size // 1024} KiB): {counts}")


if __name__ == "__main__":
    main()
