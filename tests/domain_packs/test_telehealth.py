"""Behaviour of the telehealth pack's tools, rules and tasks against its real generated database."""

from __future__ import annotations

import json
import re
from importlib.resources import files

import pytest

from tau_emotion.core.domain import Domain
from tau_emotion.domain_packs.telehealth import generate_db, rules, tau_register_domains
from tau_emotion.domain_packs.telehealth.tools import LATE_CANCEL_FEE, NOW, caller_id, hours_until

TODAY = NOW[:10]


@pytest.fixture(scope="module")
def domain() -> Domain:
    found: list[Domain] = []
    tau_register_domains(found.append)
    assert [d.name for d in found] == ["telehealth"]
    return found[0]


@pytest.fixture()
def state(domain):
    return domain.database.state()


def call(domain, state, name, **arguments):
    text, is_error = domain.toolset.call(state, name, arguments)
    assert not is_error, text
    return json.loads(text) if text[:1] in "[{" else text


def fails(domain, state, name, **arguments) -> str:
    text, is_error = domain.toolset.call(state, name, arguments)
    assert is_error, f"{name} should have failed: {text}"
    return text


def _rows(state, table, test):
    return [row for _, row in state[table].scan() if test(row)]


def _first(state, table, test):
    return next(iter(_rows(state, table, test)))


def verify(domain, state, patient: dict) -> None:
    name = patient["name"]
    out = call(domain, state, "verify_patient_identity", first_name=name["first_name"], last_name=name["last_name"],
               date_of_birth=patient["date_of_birth"])
    assert out == {"verified": True, "patient_id": patient["patient_id"]}


def _start(a):
    return f"{a['date']}T{a['time']}"


def test_database_scale_and_generator(domain):
    tables = domain.database.tables
    assert len(tables["patients"]) == 400 and len(tables["slots"]) > 2500 and len(tables["appointments"]) > 1000
    assert len(tables["providers"]) >= 40 and len(tables["prescriptions"]) > 400 and len(tables["visits"]) > 800
    shipped_file = files("tau_emotion.domain_packs.telehealth").joinpath("data/db.json")
    assert shipped_file.stat().st_size < 2_000_000
    assert generate_db.generate(0) == json.loads(shipped_file.read_text())
    assert generate_db.generate(1) != generate_db.generate(0)
    assert len(domain.toolset.tools) >= 15


def test_patient_records_are_refused_before_verification(domain, state):
    patient = _first(state, "patients", lambda p: p["appointment_ids"] and p["prescription_ids"])
    for name, args in [("get_patient_details", {"patient_id": patient["patient_id"]}),
                       ("get_appointment_details", {"appointment_id": patient["appointment_ids"][0]}),
                       ("get_prescription_details", {"prescription_id": patient["prescription_ids"][0]}),
                       ("list_visit_records", {"patient_id": patient["patient_id"]}),
                       ("request_refill", {"prescription_id": patient["prescription_ids"][0]}),
                       ("cancel_appointment", {"appointment_id": patient["appointment_ids"][0]})]:
        assert "not verified" in fails(domain, state, name, **args)
    assert rules.identity_verified(state, "cancel_appointment", {"appointment_id": patient["appointment_ids"][0]})
    # a wrong date of birth verifies nobody; the right one does
    wrong = "1900-01-01" if patient["date_of_birth"] != "1900-01-01" else "1900-01-02"
    name = patient["name"]
    assert "not verified" in fails(domain, state, "verify_patient_identity", first_name=name["first_name"],
                                   last_name=name["last_name"], date_of_birth=wrong)
    assert caller_id(state) is None
    verify(domain, state, patient)
    assert caller_id(state) == patient["patient_id"]
    assert call(domain, state, "get_patient_details", patient_id=patient["patient_id"])["patient_id"] == patient["patient_id"]
    assert not rules.identity_verified(state, "cancel_appointment", {"appointment_id": patient["appointment_ids"][0]})


def test_bad_arguments_are_tool_errors(domain, state):
    assert "YYYY-MM-DD" in fails(domain, state, "verify_patient_identity", first_name="A", last_name="B",
                                 date_of_birth="12/03/1980")
    assert "unknown specialty" in fails(domain, state, "search_providers", specialty="surgery")
    provider = next(iter(domain.database.tables["providers"]))
    assert "YYYY-MM-DD" in fails(domain, state, "find_available_slots", provider_id=provider, date="June 12")
    assert "not found" in fails(domain, state, "get_provider_details", provider_id="DR0000")
    patient = _first(state, "patients", lambda p: True)
    verify(domain, state, patient)
    assert "invalid arguments" in fails(domain, state, "book_appointment", patient_id=patient["patient_id"])
    assert "NNN-NNN-NNNN" in fails(domain, state, "update_contact_info", patient_id=patient["patient_id"], phone="12345")
    assert "phone, a new email" in fails(domain, state, "update_contact_info", patient_id=patient["patient_id"])
    assert "not found" in fails(domain, state, "get_appointment_details", appointment_id="AP000000")


def test_consent_decides_who_may_act_for_whom(domain, state):
    consents = domain.database.tables["consents"]
    valid = next(c for c in consents.values() if c["status"] == "active" and c["expires_on"] >= TODAY
                 and "appointments" in c["scope"])
    lapsed = next(c for c in consents.values() if c["expires_on"] < TODAY)
    narrow = next(c for c in consents.values() if c["status"] == "active" and c["expires_on"] >= TODAY
                  and "prescriptions" not in c["scope"])
    for consent, scope, allowed in [(valid, "appointments", True), (lapsed, "appointments", False),
                                    (narrow, "prescriptions", False)]:
        state = domain.database.state()
        verify(domain, state, state["patients"].peek(consent["representative_id"]))
        found = rules.active_consent(state, consent["patient_id"], consent["representative_id"], scope)
        assert (found is not None) == allowed
    # booking for the represented patient: allowed with the valid consent, refused with the lapsed one
    state = domain.database.state()
    verify(domain, state, state["patients"].peek(valid["representative_id"]))
    assert not rules.consent_on_file(state, "book_appointment", {"patient_id": valid["patient_id"], "slot_id": "x"})
    assert "only patient" in rules.consent_on_file(state, "update_contact_info", {"patient_id": valid["patient_id"]})
    assert "only patient" in rules.consent_on_file(state, "revoke_consent", {"consent_id": valid["consent_id"]})
    state = domain.database.state()
    verify(domain, state, state["patients"].peek(lapsed["representative_id"]))
    assert "no active consent" in rules.consent_on_file(state, "book_appointment", {"patient_id": lapsed["patient_id"]})
    # the patient acts on their own records without any consent; revoking one ends the representative's right
    state = domain.database.state()
    verify(domain, state, state["patients"].peek(valid["patient_id"]))
    assert not rules.consent_on_file(state, "update_contact_info", {"patient_id": valid["patient_id"]})
    assert call(domain, state, "revoke_consent", consent_id=valid["consent_id"])["status"] == "revoked"
    assert rules.active_consent(state, valid["patient_id"], valid["representative_id"], "appointments") is None
    assert "already revoked" in fails(domain, state, "revoke_consent", consent_id=valid["consent_id"])


def test_cancellation_fee_only_inside_24_hours(domain, state):
    scheduled = _rows(state, "appointments", lambda a: a["status"] == "scheduled" and _start(a) > NOW)
    late = next(a for a in scheduled if hours_until(_start(a)) < 24)
    early = next(a for a in scheduled if hours_until(_start(a)) >= 24)
    verify(domain, state, state["patients"].peek(late["patient_id"]))
    out = call(domain, state, "cancel_appointment", appointment_id=late["appointment_id"])
    assert out["fee_charged"] == LATE_CANCEL_FEE == 40 and state["slots"].peek(late["slot_id"])["status"] == "open"
    assert "fee of 40" in domain.policy  # the written policy states the fee the tool charges
    assert "not scheduled" in fails(domain, state, "cancel_appointment", appointment_id=late["appointment_id"])
    verify(domain, state, state["patients"].peek(early["patient_id"]))
    assert call(domain, state, "cancel_appointment", appointment_id=early["appointment_id"])["fee_charged"] == 0


def test_reschedule_moves_the_slot_and_the_rules_limit_it(domain, state):
    scheduled = _rows(state, "appointments", lambda a: a["status"] == "scheduled" and _start(a) > NOW)
    movable = next(a for a in scheduled if a["reschedule_count"] == 0 and hours_until(_start(a)) >= 24)
    verify(domain, state, state["patients"].peek(movable["patient_id"]))
    new = next(s for s in call(domain, state, "find_available_slots", provider_id=movable["provider_id"],
                               date=movable["date"]) if s["time"] != movable["time"])
    args = {"appointment_id": movable["appointment_id"], "new_slot_id": new["slot_id"]}
    assert not rules.reschedule_limits(state, "reschedule_appointment", args)
    assert call(domain, state, "reschedule_appointment", **args)["reschedule_count"] == 1
    assert state["slots"].peek(movable["slot_id"])["status"] == "open"
    assert state["slots"].peek(new["slot_id"])["status"] == "booked"
    other = _first(state, "slots", lambda s: s["provider_id"] != movable["provider_id"] and s["status"] == "open"
                   and f"{s['date']}T{s['time']}" > NOW)
    assert "another provider" in fails(domain, state, "reschedule_appointment", appointment_id=movable["appointment_id"],
                                       new_slot_id=other["slot_id"])
    twice = next(a for a in scheduled if a["reschedule_count"] >= rules.MAX_RESCHEDULES)
    assert "rescheduled 2 times" in rules.reschedule_limits(state, "reschedule_appointment",
                                                            {"appointment_id": twice["appointment_id"]})
    soon = next(a for a in scheduled if hours_until(_start(a)) < 24 and a["reschedule_count"] < rules.MAX_RESCHEDULES)
    assert "24 hours" in rules.reschedule_limits(state, "reschedule_appointment", {"appointment_id": soon["appointment_id"]})


def test_refill_rules(domain, state):
    def reasons(rx):
        return rules.refill_rules(state, "request_refill", {"prescription_id": rx["prescription_id"]})

    empty = _first(state, "prescriptions", lambda r: r["refills_left"] == 0)
    assert "no refills left" in reasons(empty)
    expired = _first(state, "prescriptions", lambda r: r["refills_left"] > 0 and r["expires_on"] < TODAY)
    assert "expired" in reasons(expired)
    early = _first(state, "prescriptions", lambda r: r["refills_left"] > 0 and r["expires_on"] >= TODAY
                   and r["last_filled"] > "2025-05-21")
    assert "too early" in reasons(early)
    controlled = [r for r in _rows(state, "prescriptions", lambda r: r["controlled"] and r["refills_left"] > 0
                                   and r["expires_on"] >= TODAY and r["last_filled"] <= "2025-05-20")]
    messages = [reasons(r) for r in controlled]
    assert any(m and "controlled substance" in m for m in messages) and any(m is None for m in messages)
    ok = _first(state, "prescriptions", lambda r: not r["controlled"] and r["refills_left"] > 0
                and r["expires_on"] >= TODAY and r["last_filled"] <= "2025-05-20")
    assert reasons(ok) is None
    verify(domain, state, state["patients"].peek(ok["patient_id"]))
    out = call(domain, state, "request_refill", prescription_id=ok["prescription_id"])
    assert out["refills_left"] == ok["refills_left"] - 1
    assert state["prescriptions"].peek(ok["prescription_id"])["last_filled"] == TODAY
    assert "too early" in reasons(state["prescriptions"].peek(ok["prescription_id"]))
    verify(domain, state, state["patients"].peek(empty["patient_id"]))
    assert "no refills left" in fails(domain, state, "request_refill", prescription_id=empty["prescription_id"])


def test_booking_coverage_and_age_rules(domain, state):
    patient = _first(state, "patients", lambda p: p["date_of_birth"] < "1990-01-01")
    verify(domain, state, patient)
    plan = patient["insurance"]["plan_id"]
    providers = domain.database.tables["providers"]
    out_of_network = next(p for p in providers.values() if plan not in p["accepted_plans"]
                          and p["specialty"] != "pediatrics")
    coverage = call(domain, state, "check_coverage", patient_id=patient["patient_id"],
                    provider_id=out_of_network["provider_id"])
    assert coverage["in_network"] is False and coverage["self_pay_price"] == out_of_network["self_pay_price"]

    def open_slot(provider):
        dates = ["2025-06-16", "2025-06-17", "2025-06-18", "2025-06-19", "2025-06-20", "2025-06-23", "2025-06-24"]
        return next(s for d in dates
                    for s in call(domain, state, "find_available_slots", provider_id=provider["provider_id"], date=d))

    slot = open_slot(out_of_network)
    args = {"patient_id": patient["patient_id"], "slot_id": slot["slot_id"], "mode": out_of_network["visit_modes"][0]}
    assert "out of network" in rules.booking_rules(state, "book_appointment", args)
    pediatrician = next(p for p in providers.values() if p["specialty"] == "pediatrics")
    assert "sees patients aged 0 to 17" in rules.booking_rules(
        state, "book_appointment", {"patient_id": patient["patient_id"], "slot_id": open_slot(pediatrician)["slot_id"]})
    fine = next(p for p in providers.values() if plan in p["accepted_plans"] and p["specialty"] == "family_medicine"
                and not any(state["appointments"].peek(a)["provider_id"] == p["provider_id"]
                            and state["appointments"].peek(a)["status"] == "scheduled" for a in patient["appointment_ids"]))
    slot = open_slot(fine)
    args = {"patient_id": patient["patient_id"], "slot_id": slot["slot_id"], "mode": fine["visit_modes"][0]}
    assert rules.booking_rules(state, "book_appointment", args) is None
    booked = call(domain, state, "book_appointment", **args)
    copay = state["insurance_plans"].peek(plan)["copays"]["primary_care"]
    assert booked["copay"] == copay and state["slots"].peek(slot["slot_id"])["status"] == "booked"
    assert "not open" in fails(domain, state, "book_appointment", **args)
    again = open_slot(fine)
    assert "already has appointment" in rules.booking_rules(
        state, "book_appointment", {"patient_id": patient["patient_id"], "slot_id": again["slot_id"]})


def test_tools_are_deterministic(domain):
    results = []
    for _ in range(2):
        state = domain.database.state()
        patient = _first(state, "patients", lambda p: p["date_of_birth"] < "1990-01-01")
        verify(domain, state, patient)
        call(domain, state, "update_contact_info", patient_id=patient["patient_id"], email="new@example.org")
        results.append(state.content_hash)
    assert results[0] == results[1] != domain.database.content_hash


def test_splits_and_suite(domain):
    tasks = domain.tasks(None)
    test = [t for t in tasks if t.split == "test"]
    train = [t for t in tasks if t.split == "train"]
    assert len(test) == 58 and len(train) == 600 and 3 <= len([t for t in tasks if t.split == "hand"]) <= 4
    for split in (test, train):
        assert sum(len(t.gold.actions) for t in split) / len(split) >= 6.5
    refused = [t for t in test if t.gold.reasons]
    assert len(refused) >= 10 and len({r for t in refused for r in t.gold.reasons}) >= 5
    for t in tasks:  # every gold starts by verifying the caller
        assert t.gold.actions[0].name == "verify_patient_identity", t.id
    from tau_emotion.plugins.suites import SUITES

    assert "telehealth" in SUITES["tau-emotion"]


def test_instructions_are_worded_as_a_patient_would(domain):
    """The hints' `fact_phrase` says facts in plain words: dates as "June 24", no form field names."""
    from tau_emotion.domain_packs.telehealth.tracer_hints import fact_phrase

    assert fact_phrase("appointment_dates", ["2025-06-24", "2025-06-16"]) == \
        "the appointments are on June 24 and June 16 respectively"
    assert fact_phrase("visit_mode", "in person") == "you want an in-person visit"
    assert fact_phrase("family_member_relationship", "parent") == "you are calling for your parent"
    assert fact_phrase("first_name", "Ana") is None  # the Tracer's own wording
    for task in (t for t in domain.tasks(None) if t.split in ("test", "train")):
        words = task.user.instruction
        for mechanical in ("the appointment date", "the family member relationship", "the visit mode",
                           "the medical field", "the new date is", "the appointment provider", "the visit provider",
                           "I want me ", "you want you "):
            assert mechanical not in words, (task.id, mechanical)
        assert not re.search(r"\b2025-\d\d-\d\d\b", words), task.id  # dates read as a person says them


def test_a_doctors_specialty_is_said_once_by_its_request(domain):
    """Issue 21 review (telehealth-test-056, -009, -049): "see Dr. Thomas Hayes, a family doctor, ... The specialty
    is family medicine." said the specialty twice ("family doctor" does not contain "medicine"). The specialty goes
    unsaid as a separate fact, which is safe because every grounded request with a specialty names the doctor's
    kind in its own words; the user still knows it (an agent may ask "which specialty?")."""
    import random

    from tau_emotion.domain_packs.telehealth.tracer_hints import HINTS, SPECIALIST, fact_phrase
    from tau_emotion.tracer.hints import GroundingContext, Ungrounded

    assert fact_phrase("specialty", "family medicine") == ""
    assert fact_phrase("specialties", ["family medicine", "psychiatry"]) == ""
    words = {v.replace("_", " "): w for v, w in SPECIALIST.items()}
    seen = 0
    for seed in range(200):
        ctx = GroundingContext(domain=domain, state=domain.database.state(), persona=None, rng=random.Random(seed), rates=HINTS.rates)
        try:
            ctx.persona = HINTS.persona(ctx)
        except Ungrounded:
            continue
        for grounder in HINTS.goals.values():
            ctx.want_challenge = seed % 2 == 1
            try:
                found = grounder(ctx)
            except Ungrounded:
                continue
            if found is not None and "specialty" in found.facts:
                seen += 1
                kind = words[found.facts["specialty"]]
                assert all(kind in r for r in found.request), (found.kind, found.request)
    assert seen > 20, seen
