"""Tracer hints for the telehealth pack: who the caller is and how each goal tool is grounded.

The Tracer (`tau_emotion.tracer`) samples workflows from the tool graph and validates them; this
module is the telehealth knowledge it needs to turn a goal tool into a concrete intent on the
database (see `tau_emotion.tracer.hints`). The caller is an adult patient who proves who they are
by name and date of birth; they may call for themself or for a family member whose consent they
hold, named by name. Providers are named by name, slots by date and time, appointments by
provider (and date), prescriptions by medication, visits by date; the agent finds the ids.

Goals: book, reschedule or cancel an appointment, refill a prescription, the copay of a visit, a
visit's diagnosis, new contact details, revoking a consent. Challenges: acting for someone without
a valid consent, changing someone else's contact details, a third reschedule or one within 24
hours, refills with none left, an expired prescription, too early, or a controlled substance
without a recent visit, and bookings out of network, not covered, outside the provider's ages or
with a provider already booked.
"""

from __future__ import annotations

from typing import Any

from tau_emotion.domain_packs.telehealth.rules import (
    CONTROLLED_VISIT_DAYS,
    EARLY_REFILL_DAYS,
    MAX_RESCHEDULES,
    SCOPE,
    active_consent,
    patient_age,
)
from tau_emotion.domain_packs.telehealth.tools import (
    LATE_CANCEL_FEE,
    LATE_WINDOW_HOURS,
    NOW,
    TODAY,
    coverage,
    hours_until,
)
from tau_emotion.domain_packs.telehealth.tracer_situation import SOON_DAYS, situation, supply_left
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
    days_between,
    draft,
    fact_wording,
    goals_in,
    join_and,
    money,
    month_day,
    need,
    per_database,
    refused_calls,
    used_by_earlier_intents,
)


class TelehealthRates(Rates):
    #: shares of the callers drawn among patients whose insurance lapsed and among caregivers (who make the family
    #: and consent tasks); the rest: any adult
    lapsed_persona: Rate = 0.15
    carer_persona: Rate = 0.25
    #: a request is for a family member the caller's consent covers (else for the caller)
    family_member: Rate = 0.45
    #: a booking challenge is given up: bookings are the most common goal, so other goals keep some challenges
    booking_challenge_held_back: Rate = 0.4
    #: a booking is for a visit whose copay is worth weighing (where a decision rule on it fits)
    weighty_copay: Rate = 0.8
    #: a rescheduling or refill challenge is one of consent (a family member the caller may not act for)
    consent_challenge: Rate = 0.4
    #: a cancellation is of a visit inside the late window when there is one
    late_cancellation: Rate = 0.8
    #: a contact update changes the phone number (else the email address)
    new_phone: Rate = 0.5

# patients are 0 to 90: no occasion that fits only some ages (a new job, a first marathon, a pregnancy)
OCCASIONS = [
    ("{{I}} {{am}} going on a long-awaited holiday next month and want this sorted first", 2, "positive"),
    ("{{I}} {{am}} caring for a sick relative and {{my}} days are full", 3, "negative"),
    ("{{I}} {{have}} been feeling unwell for weeks", 3, "negative"),
    # a loss the requests are about (the caller's own care, `tracer_situation.ABOUT_ME`); sorrow needs a loss
    ("since {{my}} partner died this spring, {{I}} {{am}} trying to look after {{my}} own health", 3, "negative"),
    ("{{I}} {{am}} away from home for a few weeks soon", 2, "neutral"),
    ("{{I}} {{am}} getting back into shape this year", 1, "positive"),
    ("{{I}} just moved to a new city", 1, "neutral"),
    ("{{my}} family is expecting a new baby this summer", 2, "positive"),
    ("{{my}} insurance changes at the end of the year", 1, "neutral"),
    ("it is just a routine matter", 0, "neutral"),  # most occasion intents are requests, not questions
]

SPECIALIST = {"family_medicine": "family doctor", "pediatrics": "pediatrician", "dermatology": "dermatologist",
              "cardiology": "cardiologist", "psychiatry": "psychiatrist", "physical_therapy": "physical therapist",
              "nutrition": "nutritionist"}
#: a phrase of the written policy that names each refusal reason
KEYWORDS = {"consent_required": "valid consent", "patient_only": "only the patient themself",
            "reschedule_limit": "at most 2 times", "reschedule_window": "less than 24 hours",
            "no_refills_left": "no refills are left", "prescription_expired": "has expired",
            "refill_too_early": "too early", "controlled_needs_visit": "controlled substance",
            "out_of_network": "out of network", "service_not_covered": "not covered",
            "age_restriction": "the ages they see", "duplicate_booking": "already has a scheduled appointment"}
RELATION = {"parent": "child", "child": "parent", "spouse": "spouse", "friend": "friend"}

# --------------------------------------------------------------------------- lookups

def _adults(db: Any) -> tuple[list[str], list[str], list[str]]:
    """(every adult patient, the adults who hold a consent, those holding a lapsed, revoked or narrow one)."""
    patients, consents = db.tables["patients"], db.tables["consents"]
    adults = [pid for pid, p in patients.items() if patient_age(p["date_of_birth"]) >= 18]
    carers = [pid for pid in adults if patients[pid]["held_consent_ids"]]
    lapsed = [pid for pid in carers if any(consents[c]["status"] != "active" or consents[c]["expires_on"] < TODAY
                                           or len(consents[c]["scope"]) < 3 for c in patients[pid]["held_consent_ids"])]
    return adults, carers, lapsed

def _name(row: dict) -> str:
    return f"{row['name']['first_name']} {row['name']['last_name']}"

def _caller(ctx: GroundingContext) -> dict:
    return ctx.state["patients"].peek(ctx.persona.entity)

def _start(a: dict) -> str:
    return f"{a['date']}T{a['time']}"

class _Who(Reference):
    """The patient an intent is about: the caller, or a family member named by name."""

    def __init__(self, ctx: GroundingContext, patient: dict, consent: dict | None = None):
        super().__init__()
        self.patient = patient
        self.pid = patient["patient_id"]
        self.self = consent is None
        if self.self:
            self.me, self.my, self.for_ = "{{me}}", "{{my}}", ""
            return
        caller = _caller(ctx)
        name = _name(patient)
        relation = RELATION[consent["relationship"]]
        family = ctx.rows("patients", (c["patient_id"] for c in ctx.rows("consents", caller["held_consent_ids"])))
        self.facts = {"family_member": name, "family_member_relationship": relation}
        self.choices = [Choice.among("patient", patient, family, "patient_id", lambda p: {"name": _name(p)})]
        # unless an earlier intent already read this family member's profile
        if not any(args.get("patient_id") == self.pid for d in ctx.history for args in d.reads.get("get_patient_details", [])):
            self.reads, self.evidence = {"get_patient_details": [{"patient_id": self.pid}]}, ["get_patient_details"]
        first = patient["name"]["first_name"]
        # "your parent Hiro's appointment": the request says whom the caller acts for, so no form-like sentence
        # ("The patient is Hiro Walsh and you are calling for your parent.") has to
        self.me, self.my = f"{{{{my}}}} {relation} {first}", f"{{{{my}}}} {relation} {first}'s"
        self.for_ = f" for {{{{my}}}} {relation} {name}"

def _family(ctx: GroundingContext, scope: str, valid: bool = True) -> list[_Who]:
    """Family members the caller holds a consent for: valid for `scope`, or (valid=False) not valid for it."""
    caller = _caller(ctx)
    return [_Who(ctx, ctx.peek("patients", c["patient_id"]), c) for c in ctx.rows("consents", caller["held_consent_ids"])
            if (active_consent(ctx.state, c["patient_id"], caller["patient_id"], scope) is not None) == valid]

def _who(ctx: GroundingContext, scope: str) -> _Who:
    """The caller (mostly) or a family member whose consent covers `scope`."""
    family = _family(ctx, scope)
    if family and ctx.chance("family_member"):
        return ctx.rng.choice(family)
    return _Who(ctx, _caller(ctx))

def _appointments(ctx: GroundingContext, who: _Who) -> list[dict]:
    return [a for a in ctx.rows("appointments", who.patient["appointment_ids"]) if a["status"] == "scheduled" and _start(a) > NOW]

def _appointment_ref(ctx: GroundingContext, who: _Who, appointment: dict) -> tuple[Choice, dict, str] | None:
    """How the caller names an appointment: by its provider, and the date when that is not enough."""
    choice = need(Choice.fewest("appointment", appointment, _appointments(ctx, who), "appointment_id", lambda a: {
        "provider": ctx.peek("providers", a["provider_id"])["name"], "date": a["date"]}, (("provider",), ("provider", "date"))))
    provider = ctx.peek("providers", appointment["provider_id"])["name"]
    when = f"on {month_day(appointment['date'])} at {appointment['time']}"
    return choice, {"appointment_provider": provider, "appointment_date": appointment["date"]}, \
        f"{who.my} appointment with {provider} {when}"

def _wish(who: _Who, specialty: str) -> str:
    """The booking's event: "I want to see a dermatologist", "I want my child Ivy to see ..."."""
    return "{{I}} want " + ("" if who.self else who.me + " ") + "to see a " + SPECIALIST[specialty]

#: a copay the caller pays (a covered visit, copay above 0) is something to resent: an opinion, no fact invented
_UNFAIR_COPAYS = Mood("{{I}} think the copays on {{my}} insurance plan are unfair", "negative", 1, None)


def _put_off(days: int | None) -> tuple[Mood, ...]:
    """Other ways a booking may be lived: a visit put off too long (a setback), or one looked forward to."""
    return (Mood("{{I}} {{have}} put this visit off for too long", "negative", 1, days),)

def _open_slots(ctx: GroundingContext, provider_id: str | None, hours: float = 0, not_on: str = "") -> list[dict]:
    """Open future slots (of one provider, or None: of all), at least `hours` ahead and not on the day `not_on`."""
    return [s for _, s in ctx.state["slots"].scan() if provider_id in (None, s["provider_id"]) and s["status"] == "open"
            and _start(s) > NOW and hours_until(_start(s)) >= hours and s["date"] != not_on]

def _slot_choice(ctx: GroundingContext, provider_id: str, slot: dict) -> Choice:
    return Choice.among("slot", slot, _open_slots(ctx, provider_id), "slot_id", ("date", "time"))

def _peers(ctx: GroundingContext, specialty: str) -> list[dict]:
    return [p for _, p in ctx.state["providers"].scan() if p["specialty"] == specialty]

# --------------------------------------------------------------------------- wording

def _calling_for(said: list[str]) -> str:
    return f"you are calling for your {join_and([said[0], *(f'your {v}' for v in said[1:])])}" + \
        (" respectively" if len(said) > 1 else "")

#: the instruction's wording of a known fact ("the appointment is on June 24", "you want a video visit"); a
#: plural key is two intents' facts merged, in the intents' order ("... respectively"). The specialty goes unsaid:
#: every request that has it names the doctor's kind ("a family doctor", "(psychiatrist)"), and "the specialty is
#: family medicine" after "a family doctor" says it twice.
fact_phrase = fact_wording({
    "specialty": ("the specialty is {}", "the specialties are {} respectively"),
    "provider": ("you want to see {}", "you want to see {} respectively"),
    "appointment_provider": ("the appointment is with {}", "the appointments are with {} respectively"),
    "appointment_date": ("the appointment is on {}", "the appointments are on {} respectively", month_day),
    "appointment_time": ("the time is {}", "the times are {} respectively"),
    "new_date": ("you want to move it to {}", "you want to move them to {} respectively", month_day),
    "new_time": ("the new time is {}", "the new times are {} respectively"),
    "visit_date": ("the visit was on {}", "the visits were on {} respectively", month_day),
    "visit_provider": ("the doctor at that visit was {}", "the doctors at those visits were {} respectively"),
    "visit_mode": ("you want {}", "you want {} respectively",
                   lambda v: "a video visit" if v == "video" else "an in-person visit"),
    "medication": ("the medication is {}", "the medications are {} respectively"),
    "family_member": lambda said: " and ".join(f"{n.split(' ', 1)[0]}'s surname is {n.split(' ', 1)[-1]}" for n in said),
    "family_member_relationship": _calling_for,
    "new_phone": ("your new phone number is {}", "the new phone numbers are {} respectively"),
    "new_email": ("your new email address is {}", "the new email addresses are {} respectively"),
    "representative": ("the person whose permission you withdraw is {}",
                       "the people whose permission you withdraw are {} respectively"),
}, unsaid=["specialty", "specialties"])

# --------------------------------------------------------------------------- persona

def persona(ctx: GroundingContext) -> Persona | None:
    adults, carers, lapsed = per_database(ctx, _adults)
    pid = ctx.rng.choice((lapsed, carers, adults)[ctx.band("lapsed_persona", "carer_persona")])
    patient = ctx.state["patients"].peek(pid)
    name = patient["name"]
    facts = {"first_name": name["first_name"], "last_name": name["last_name"], "date_of_birth": patient["date_of_birth"]}
    return Persona(name=_name(patient), facts=facts,
                   reads={"verify_patient_identity": [dict(facts)], "get_patient_details": [{"patient_id": pid}]},
                   entity=pid, identified={"session": {"current": {"caller_id": pid}}})

# --------------------------------------------------------------------------- consent challenges

def _consent_challenge(ctx: GroundingContext, goal: str) -> IntentDraft | None:
    """A refill, reschedule or cancellation for a family member whose consent is lapsed, revoked or narrower
    than the request."""
    options, refill = [], goal == "request_refill"
    for who in _family(ctx, SCOPE[goal], valid=False):
        rows = ctx.rows("prescriptions", who.patient["prescription_ids"]) if refill else _appointments(ctx, who)
        options += [(who, r) for r in rows if not refill or sum(x["medication"] == r["medication"] for x in rows) == 1]
    who, row = ctx.choose([o for o in options if o[0].pid not in used_by_earlier_intents(ctx, "patient_id")])
    consent = next(c for c in ctx.rows("consents", _caller(ctx)["held_consent_ids"]) if c["patient_id"] == who.pid)
    why = ("expired" if consent["expires_on"] < TODAY else "revoked" if consent["status"] == "revoked"
           else "out_of_scope")
    if refill:
        args, facts = {"prescription_id": row["prescription_id"]}, {"medication": row["medication"]}
        request = [f"get a refill of {who.my} {row['medication']}", f"refill {who.my} {row['medication']} prescription"]
    else:
        provider = ctx.peek("providers", row["provider_id"])["name"]
        args, facts = {"appointment_id": row["appointment_id"]}, {"appointment_provider": provider}
        request = [f"cancel {who.my} appointment with {provider}"]
        if goal == "reschedule_appointment":
            slot = ctx.choose(_open_slots(ctx, row["provider_id"], 24, row["date"]))
            args["new_slot_id"] = slot["slot_id"]
            request = [f"move {who.my} appointment with {provider} to {month_day(slot['date'])} at {slot['time']}"]
    ctx.challenged(goal, args)
    who.reads, who.evidence = {}, []  # without a valid consent the agent reads nothing of theirs
    return draft(f"consent_{why}", goal, args, request, who, facts=facts,
                 refusal=Refusal("consent_required", "valid consent"),
                 mood=Mood("{{I}} look after " + who.patient["name"]["first_name"] + " and need this done",
                           "negative", 2, None))

# --------------------------------------------------------------------------- appointments

#: a refused booking (one rule, several reasons): words of its reason, the refusal's reason and kind, its evidence
_BOOKINGS = [("sees patients aged", "age_restriction", "book_age", ["search_providers", "get_provider_details"]),
             ("out of network", "out_of_network", "book_out_of_network", ["search_providers", "check_coverage"]),
             ("does not cover", "service_not_covered", "book_not_covered", ["search_providers", "check_coverage"]),
             ("already has", "duplicate_booking", "book_duplicate", ["get_appointment_details"])]
_BOOK_REFUSALS = {words: Refusal(reason, KEYWORDS[reason], kind) for words, reason, kind, _ in _BOOKINGS}
_BOOK_EVIDENCE = {kind: reads for _, _, kind, reads in _BOOKINGS}

def ground_book_appointment(ctx: GroundingContext) -> IntentDraft | None:
    if ctx.want_challenge and ctx.chance("booking_challenge_held_back"):
        return None
    who = _who(ctx, "appointments")
    need(who.pid not in used_by_earlier_intents(ctx, "patient_id"))
    free: dict[str, list[dict]] = {}
    for s in _open_slots(ctx, None, 24):
        free.setdefault(s["provider_id"], []).append(s)
    calls = []  # nobody asks a pediatrician to see an adult
    for pid, provider in ctx.state["providers"].scan():
        if pid in free and not (patient_age(who.patient["date_of_birth"]) >= 18 and provider["specialty"] == "pediatrics"):
            slot = ctx.rng.choice(free[pid])
            calls.append(((provider, slot), {"patient_id": who.pid, "slot_id": slot["slot_id"],
                                             "mode": ctx.rng.choice(provider["visit_modes"])}))
    if ctx.want_challenge:  # spread the challenge kinds: draw the broken rule first
        candidates = need(refused_calls(ctx, "book_appointment", calls, {"booking_rules": _BOOK_REFUSALS}))
        kinds = sorted({r.kind for *_, r in candidates})
        # an out-of-network provider is the easiest to find: draw it less often than the rarer kinds
        kind = ctx.rng.choices(kinds, weights=[0.25 if k == "book_out_of_network" else 1 for k in kinds])[0]
        candidates = [c for c in candidates if c[2].kind == kind]
    else:
        candidates = [(item, args, None) for item, args in calls if not ctx.violations("book_appointment", args)]
        if ctx.chance("weighty_copay"):
            candidates = [c for c in candidates if (coverage(ctx.state, who.patient, c[0][0])["copay"] or 0) >= 20] \
                or candidates
        need(candidates)
    (provider, slot), args, refusal = ctx.rng.choice(candidates)
    specialty = provider["specialty"]
    provider_choice = Choice.among("provider", provider, _peers(ctx, specialty), "provider_id", "name")
    mode = "a video" if args["mode"] == "video" else "an in-person"
    when = f"on {month_day(slot['date'])} at {slot['time']}"
    request = [f"book {mode} appointment{who.for_} with {provider['name']} ({SPECIALIST[specialty]}) {when}",
               f"see {provider['name']}, a {SPECIALIST[specialty]}, {when}{who.for_}, as {mode} visit"]
    facts = {"specialty": specialty.replace("_", " "), "provider": provider["name"], "appointment_date": slot["date"],
             "appointment_time": slot["time"], "visit_mode": args["mode"].replace("_", " ")}
    reads = {"search_providers": [{"specialty": specialty}],
             "get_provider_details": [{"provider_id": provider["provider_id"]}],
             "find_available_slots": [{"provider_id": provider["provider_id"], "date": slot["date"]}],
             "check_coverage": [{"patient_id": who.pid, "provider_id": provider["provider_id"]}]}
    if refusal:
        if refusal.kind == "book_duplicate":
            dup = next(a for a in _appointments(ctx, who) if a["provider_id"] == provider["provider_id"])
            reads["get_appointment_details"] = [{"appointment_id": dup["appointment_id"]}]
        return draft(refusal.kind, "book_appointment", args, request, who, facts=facts, reads=reads,
                     evidence=_BOOK_EVIDENCE[refusal.kind], choices=[provider_choice], refusal=refusal,
                     mood=Mood(_wish(who, specialty), "neutral", 2, None, others=_put_off(None)))
    copay = coverage(ctx.state, who.patient, provider)["copay"]
    return draft("book_for_family" if not who.self else "book", "book_appointment", args, request, who,
                 facts=facts, reads=reads, evidence=["search_providers", "check_coverage"],
                 choices=[provider_choice, _slot_choice(ctx, provider["provider_id"], slot)],
                 outputs=[Output(money(copay), "the copay of the visit")],
                 decline="not book the appointment after all",
                 mood=Mood(_wish(who, specialty), "neutral", 2, days_between(TODAY, slot["date"]),
                           others=(*_put_off(days_between(TODAY, slot["date"])),
                                   *((_UNFAIR_COPAYS,) if who.self and copay else ()))))

def ground_reschedule_appointment(ctx: GroundingContext) -> IntentDraft | None:
    if ctx.want_challenge and ctx.chance("consent_challenge"):
        return _consent_challenge(ctx, "reschedule_appointment")
    who = _who(ctx, "appointments")
    used, options = used_by_earlier_intents(ctx, "appointment_id", reads=True), []
    for a in _appointments(ctx, who):
        if a["appointment_id"] not in used and (later := _open_slots(ctx, a["provider_id"], 24, a["date"])):
            slot = ctx.rng.choice(later)
            args = {"appointment_id": a["appointment_id"], "new_slot_id": slot["slot_id"]}
            if ctx.fits("reschedule_appointment", args):
                options.append((a, slot, args))
    a, slot, args = ctx.choose(options)
    choice, facts, phrase = need(_appointment_ref(ctx, who, a))
    when = f"{month_day(slot['date'])} at {slot['time']}"
    request = [f"move {phrase} to {when}", f"reschedule {phrase} to {when}"]
    facts = {**facts, "new_date": slot["date"], "new_time": slot["time"]}
    reads = {"get_appointment_details": [{"appointment_id": a["appointment_id"]}],
             "find_available_slots": [{"provider_id": a["provider_id"], "date": slot["date"]}]}
    if ctx.want_challenge:
        limit = a["reschedule_count"] >= MAX_RESCHEDULES
        reason = "reschedule_limit" if limit else "reschedule_window"
        return draft("reschedule_limit" if limit else "reschedule_late", "reschedule_appointment", args, request, who,
                     facts=facts, reads={"get_appointment_details": reads["get_appointment_details"]},
                     evidence=["get_appointment_details"], choices=[choice], refusal=Refusal(reason, KEYWORDS[reason]),
                     mood=Mood("something came up and {{I}} cannot make " + phrase, "negative", 2, None))
    return draft("reschedule", "reschedule_appointment", args, request, who, facts=facts, reads=reads,
                 evidence=["get_appointment_details"],
                 choices=[choice, _slot_choice(ctx, a["provider_id"], slot)],
                 mood=Mood("something came up and {{I}} cannot make " + phrase, "neutral", 1,
                           days_between(TODAY, slot["date"])))

def ground_cancel_appointment(ctx: GroundingContext) -> IntentDraft | None:
    if ctx.want_challenge:
        return _consent_challenge(ctx, "cancel_appointment")
    who = _who(ctx, "appointments")
    used = used_by_earlier_intents(ctx, "appointment_id", reads=True)
    rows = need([a for a in _appointments(ctx, who) if a["appointment_id"] not in used
                 and not ctx.violations("cancel_appointment", {"appointment_id": a["appointment_id"]})])
    late = [a for a in rows if hours_until(_start(a)) < LATE_WINDOW_HOURS]
    a = ctx.rng.choice(late if late and ctx.chance("late_cancellation") else rows)
    choice, facts, phrase = need(_appointment_ref(ctx, who, a))
    fee = LATE_CANCEL_FEE if hours_until(_start(a)) < LATE_WINDOW_HOURS else 0
    return draft("cancel_late" if fee else "cancel", "cancel_appointment", {"appointment_id": a["appointment_id"]},
                 [f"cancel {phrase}", f"call off {phrase}"], who, facts=facts,
                 verify={"get_appointment_details": {"appointment_id": a["appointment_id"]}}, choices=[choice],
                 outputs=[Output(money(fee), "the cancellation fee")] if fee else [],
                 policy_values=[fee] if fee else [], decline="keep the appointment" if fee else None,
                 mood=Mood("{{I}} no longer need " + phrase, "neutral", 1 if not fee else 2, None))

# --------------------------------------------------------------------------- prescriptions

def _refill_problem(ctx: GroundingContext, rx: dict) -> list[Refusal]:
    """The refusal of every refill rule the prescription fails (the rules module stops at the first)."""
    visits = ctx.rows("visits", ctx.peek("patients", rx["patient_id"])["visit_ids"])
    recent = any(v["provider_id"] == rx["prescriber_id"] and days_between(v["date"], TODAY) <= CONTROLLED_VISIT_DAYS
                 for v in visits)
    return [Refusal(reason, KEYWORDS[reason], kind) for reason, kind, broken in (
        ("no_refills_left", "refill_none_left", rx["refills_left"] <= 0),
        ("prescription_expired", "refill_expired", rx["expires_on"] < TODAY),
        ("refill_too_early", "refill_too_early", days_between(rx["last_filled"], TODAY) < EARLY_REFILL_DAYS),
        ("controlled_needs_visit", "refill_controlled", rx["controlled"] and not recent)) if broken]

def ground_request_refill(ctx: GroundingContext) -> IntentDraft | None:
    if ctx.want_challenge and ctx.chance("consent_challenge"):
        return _consent_challenge(ctx, "request_refill")
    who = _who(ctx, "prescriptions")
    rows = ctx.rows("prescriptions", who.patient["prescription_ids"])
    # one no earlier intent touched, the only one of its medication, failing what a challenge wants
    used = used_by_earlier_intents(ctx, "prescription_id", reads=True)
    options = need([(rx, problems) for rx in rows if rx["prescription_id"] not in used
                    and sum(x["medication"] == rx["medication"] for x in rows) == 1
                    and len(problems := _refill_problem(ctx, rx)) == (1 if ctx.want_challenge else 0)
                    and len(ctx.violations("request_refill", {"prescription_id": rx["prescription_id"]})) == len(problems)])
    if ctx.want_challenge:  # spread the challenge kinds: draw the kind first
        kind = ctx.rng.choice(sorted({p[0].reason for _, p in options}))
        options = [o for o in options if o[1][0].reason == kind]
    rx, problems = ctx.rng.choice(options)
    med = rx["medication"]
    choice = Choice.among("prescription", rx, rows, "prescription_id", "medication")
    request = [f"get a refill of {who.my} {med}", f"refill {who.my} {med} prescription"]
    args = {"prescription_id": rx["prescription_id"]}
    # a controlled substance: the visits show whether a recent one allows the refill
    verify = {"get_prescription_details": args, **({"list_visit_records": {"patient_id": who.pid}} if rx["controlled"] else {})}
    # what the last fill's supply says: ran out, runs out soon, or (a refill asked early) lasts a while yet
    left, subject = supply_left(rx), "{{I}}" if who.self else who.patient["name"]["first_name"]
    if left < 0:
        mood = Mood(subject + (" {{have}}" if who.self else " has") + " run out of " + med, "negative", 2, 0)
    elif left <= SOON_DAYS:
        mood = Mood(subject + " will run out of " + med + " soon", "negative", 2, left)
    else:
        mood = Mood(subject + " must not be left without " + med, "negative", 1, None)
    if ctx.want_challenge:
        return draft(problems[0].kind, "request_refill", args, request, who, facts={"medication": med},
                     verify=verify, choices=[choice], refusal=problems[0], mood=mood)
    return draft("refill", "request_refill", args, request, who, facts={"medication": med}, verify=verify,
                 choices=[choice],
                 outputs=[Output(str(rx["refills_left"] - 1), "how many refills are left afterwards", from_goal=True)],
                 mood=mood)

# --------------------------------------------------------------------------- coverage and records

def ground_check_coverage(ctx: GroundingContext) -> IntentDraft | None:
    who = _Who(ctx, _caller(ctx))
    age = patient_age(who.patient["date_of_birth"])
    used = used_by_earlier_intents(ctx, "provider_id") | used_by_earlier_intents(ctx, "provider")
    fits = [p for _, p in ctx.state["providers"].scan() if p["specialty"] != "pediatrics"
            and p["patient_ages"][0] <= age <= p["patient_ages"][1] and used.isdisjoint((p["provider_id"], p["name"]))]
    costs = [(p, coverage(ctx.state, who.patient, p)) for p in fits]
    provider, cost = ctx.choose([(p, c) for p, c in costs if c["covered"] and c["copay"] > 0])
    specialty = provider["specialty"]
    return draft("coverage", "check_coverage", {"patient_id": who.pid, "provider_id": provider["provider_id"]},
                 [f"find out what a visit with {provider['name']} ({SPECIALIST[specialty]}) would cost {{{{me}}}}",
                  f"know {{{{my}}}} copay for seeing {provider['name']}, a {SPECIALIST[specialty]}"], who,
                 facts={"specialty": specialty.replace("_", " "), "provider": provider["name"]},
                 reads={"search_providers": [{"specialty": specialty}]},
                 choices=[Choice.among("provider", provider, _peers(ctx, specialty), "provider_id", "name")],
                 outputs=[Output(money(cost["copay"]), "the copay", from_goal=True)],
                 mood=Mood("{{I}} want to know what a visit costs before {{I}} book", "neutral", 1, None,
                           others=(Mood("money is tight, so {{I}} want to know what a visit costs first", "negative", 1,
                                        None), _UNFAIR_COPAYS)))

def ground_list_visit_records(ctx: GroundingContext) -> IntentDraft | None:
    who = _who(ctx, "records")
    need(who.pid not in used_by_earlier_intents(ctx, "patient_id"))
    visits = [ctx.state["visits"].peek(v) for v in who.patient["visit_ids"]]
    visit = ctx.choose([v for v in visits if sum(x["date"] == v["date"] for x in visits) == 1])
    provider = ctx.peek("providers", visit["provider_id"])
    return draft("visit_diagnosis", "list_visit_records", {"patient_id": who.pid},
                 [f"find out the diagnosis from {who.my} visit with {provider['name']} on {month_day(visit['date'])}",
                  f"learn what {provider['name']} diagnosed at {who.my} {month_day(visit['date'])} visit"], who,
                 facts={"visit_date": visit["date"], "visit_provider": provider["name"]},
                 outputs=[Output(visit["diagnosis"], "the diagnosis", from_goal=True)],
                 mood=Mood("{{I}} forgot what the doctor said at " + who.my + (
                     " last visit" if visit["date"] == max(v["date"] for v in visits)
                     else " visit on " + month_day(visit["date"])), "neutral", 1, None))

# --------------------------------------------------------------------------- contact details and consents

def ground_update_contact_info(ctx: GroundingContext) -> IntentDraft | None:
    caller = _caller(ctx)
    if ctx.want_challenge:
        who = ctx.choose([w for w in _family(ctx, "appointments") + _family(ctx, "appointments", valid=False)
                          if w.pid not in used_by_earlier_intents(ctx, "patient_id")])
        phone = f"{caller['phone'][:3]}-555-{(int(who.pid[1:]) * 7) % 10000:04d}"
        args = {"patient_id": who.pid, "phone": phone}
        ctx.challenged("update_contact_info", args)
        who.reads, who.evidence = {}, []
        return draft("contact_for_family", "update_contact_info", args,
                     [f"change {who.my} phone number to {phone}"], who, facts={"new_phone": phone},
                     refusal=Refusal("patient_only", "only the patient themself"),
                     mood=Mood(who.patient["name"]["first_name"] + " has a new phone number", "neutral", 1, None))
    need(caller["patient_id"] not in used_by_earlier_intents(ctx, "patient_id"))
    who = _Who(ctx, caller)
    if ctx.chance("new_phone"):
        phone = f"{caller['phone'][:3]}-555-{(int(caller['patient_id'][1:]) * 13) % 10000:04d}"
        need(phone != caller["phone"])
        args, facts, what = {"patient_id": who.pid, "phone": phone}, {"new_phone": phone}, f"phone number to {phone}"
    else:
        email = f"{caller['name']['first_name'].lower()}.{caller['name']['last_name'].lower()}@mailbox.org"
        args, facts, what = {"patient_id": who.pid, "email": email}, {"new_email": email}, f"email address to {email}"
    return draft("update_contact", "update_contact_info", args, [f"change {{{{my}}}} {what}"], who, facts=facts,
                 mood=Mood("{{I}} changed {{my}} " + what.split(" to ")[0], "neutral", 0, None))

def ground_revoke_consent(ctx: GroundingContext) -> IntentDraft | None:
    caller = _caller(ctx)
    granted = [ctx.state["consents"].peek(c) for c in caller["consent_ids"]]
    active = [c for c in granted if c["status"] == "active" and c["expires_on"] >= TODAY
              and c["consent_id"] not in used_by_earlier_intents(ctx, "consent_id")]
    consent = ctx.choose(active)
    rep = ctx.state["patients"].peek(consent["representative_id"])
    choice = need(Choice.fewest("consent", consent, granted, "consent_id",
                                lambda c: {"name": _name(ctx.state["patients"].peek(c["representative_id"]))}, (("name",),)))
    return draft("revoke_consent", "revoke_consent", {"consent_id": consent["consent_id"]},
                 [f"withdraw the permission {_name(rep)} has to act for {{{{me}}}}",
                  f"revoke {_name(rep)}'s consent to handle {{{{my}}}} care"], _Who(ctx, caller),
                 facts={"representative": _name(rep)}, choices=[choice],
                 mood=Mood("{{I}} want to handle {{my}} own care from now on", "neutral", 1, None))

HINTS = TracerHints(
    persona=persona,
    goals=goals_in(globals()),  # each ground_<tool> function above grounds <tool>
    goal_weights={"book_appointment": 1.7, "request_refill": 1.2, "reschedule_appointment": 1.0,
                  "cancel_appointment": 1.3, "check_coverage": 0.4, "list_visit_records": 0.5,
                  "update_contact_info": 0.5, "revoke_consent": 0.4},
    entry_tools=["verify_patient_identity"],
    # the policy: verify first, read the appointment before changing it, the prescription before a refill
    policy_edges=[("get_appointment_details", "reschedule_appointment"), ("get_appointment_details", "cancel_appointment"),
                  ("get_prescription_details", "request_refill"), ("check_coverage", "book_appointment")],
    occasions=OCCASIONS,
    occasion_intents=["book", "book_for_family", "reschedule", "refill", "coverage", "book_out_of_network",
                      "book_not_covered", "refill_too_early", "refill_none_left", "refill_expired"],
    fact_phrase=fact_phrase,
    # events and occasions must agree with the prescriptions, visits and patients (no "will run out soon" for a
    # supply that lasts weeks yet)
    situation=situation,
    rates=TelehealthRates(),
)
