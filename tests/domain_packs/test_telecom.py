"""Behaviour of the telecom pack's tools, rules and tasks against its real generated database."""

from __future__ import annotations

import json
from importlib.resources import files

import pytest

from tau_emotion.core.domain import Domain
from tau_emotion.domain_packs.telecom import generate_db, rules, tau_register_domains
from tau_emotion.domain_packs.telecom.tools import DEDUCTIBLE, PROTECTION_ADDON
from tau_emotion.tracer.plan import policy_challenge


@pytest.fixture(scope="module")
def domain() -> Domain:
    found: list[Domain] = []
    tau_register_domains(found.append)
    assert [d.name for d in found] == ["telecom"]
    return found[0]


@pytest.fixture()
def state(domain):
    return domain.database.state()


def call(domain, state, name, **arguments):
    text, is_error = domain.toolset.call(state, name, arguments)
    assert not is_error, text
    return json.loads(text) if text[:1] in "[{" else text


def _first(state, table, test):
    return next(row for _, row in state[table].scan() if test(row))


def test_database_scale_and_generator(domain):
    tables = domain.database.tables
    assert len(tables["customers"]) == 500 and len(tables["lines"]) > 1000 and len(tables["bills"]) > 1500
    assert files("tau_emotion.domain_packs.telecom").joinpath("data/db.json").stat().st_size < 3_000_000
    shipped = json.loads(files("tau_emotion.domain_packs.telecom").joinpath("data/db.json").read_text())
    assert generate_db.generate(0) == shipped
    assert len(domain.toolset.tools) >= 15


def test_identification_chain_and_usage(domain, state):
    line = _first(state, "lines", lambda r: r["status"] == "active")
    found = call(domain, state, "find_customer_by_phone", phone_number=line["phone_number"])
    customer = call(domain, state, "get_customer_details", customer_id=found["customer_id"])
    assert line["account_id"] in customer["account_ids"]
    account = call(domain, state, "get_account_details", account_id=line["account_id"])
    assert line["line_id"] in [x["line_id"] for x in account["lines"]]
    assert "issue" not in call(domain, state, "get_line_details", line_id=line["line_id"])
    usage = call(domain, state, "get_data_usage", line_id=line["line_id"])
    assert usage["data_left_gb"] >= 0


def test_replacement_with_protection_costs_the_deductible(domain, state):
    line = _first(state, "lines", lambda r: PROTECTION_ADDON in r["addons"] and r["status"] == "active")
    customer = state["customers"].peek(state["accounts"].peek(line["account_id"])["customer_id"])
    out = call(domain, state, "replace_device", line_id=line["line_id"], model_code="DM_IPHONE16",
               payment_id=next(iter(customer["payment_methods"])))
    assert out["charge"] == DEDUCTIBLE
    assert state["lines"].peek(line["line_id"])["device_id"] == out["device_id"]


def test_troubleshooting_clears_only_with_the_recommended_step(domain, state):
    line = _first(state, "lines", lambda r: r["issue"])
    step = call(domain, state, "diagnose_line", line_id=line["line_id"])["recommended_step"]
    wrong = next(s for s in ("restart_device", "reprovision_sim") if s != step)
    assert call(domain, state, "run_troubleshooting_step", line_id=line["line_id"], step=wrong)["result"] == "no fault cleared"
    assert call(domain, state, "run_troubleshooting_step", line_id=line["line_id"], step=step)["result"] == "fault cleared"


def test_rules_refuse_what_the_policy_forbids(domain, state):
    under = _first(state, "lines", lambda r: r["contract_end_date"] and r["contract_end_date"] > "2025-03-14"
                   and r["plan_id"] == "PLAN_UNLPREM")
    assert rules.contract_term(state, "change_line_plan", {"line_id": under["line_id"], "plan_code": "PLAN_BASIC5"})
    assert not rules.contract_term(state, "change_line_plan", {"line_id": under["line_id"], "plan_code": "PLAN_UNLPREM"})
    changed = _first(state, "lines", lambda r: (r["plan_changed_on"] or "") >= "2025-03-01")
    assert rules.plan_change_once_per_cycle(state, "change_line_plan", {"line_id": changed["line_id"], "plan_code": "x"})
    suspended = _first(state, "lines", lambda r: r["status"] == "suspended")
    assert rules.suspended_line_frozen(state, "add_addon", {"line_id": suspended["line_id"], "addon_code": "ADD_DATA5"})
    assert rules.suspension_limits(state, "suspend_line", {"line_id": "L1", "reason": "travel", "days": 91})
    assert not rules.suspension_limits(state, "suspend_line", {"line_id": "L1", "reason": "travel", "days": 90})
    old = _first(state, "bills", lambda b: b["period"] == "2024-12")
    assert "60 days" in rules.credit_limits(state, "issue_bill_credit", {"bill_id": old["bill_id"], "amount": 5})
    new = _first(state, "bills", lambda b: b["period"] == "2025-02")
    assert rules.credit_limits(state, "issue_bill_credit", {"bill_id": new["bill_id"], "amount": 51})
    assert not rules.credit_limits(state, "issue_bill_credit", {"bill_id": new["bill_id"], "amount": 50})
    overdue = _first(state, "bills", lambda b: b["status"] == "overdue")
    line_id = state["accounts"].peek(overdue["account_id"])["line_ids"][0]
    assert rules.roaming_needs_clear_account(state, "add_addon", {"line_id": line_id, "addon_code": "ADD_EU_PASS"})
    assert not rules.roaming_needs_clear_account(state, "add_addon", {"line_id": line_id, "addon_code": "ADD_DATA5"})


def test_splits_and_suite(domain):
    tasks = domain.tasks(None)
    test = [t for t in tasks if t.split == "test"]
    assert len(test) == 58 and len([t for t in tasks if t.split == "train"]) >= 600
    assert sum(len(t.gold.actions) for t in test) / len(test) >= 6.5
    challenges = [t for t in test if policy_challenge(t)]
    assert len(challenges) >= 10 and len({r for t in challenges for r in t.gold.reasons}) >= 4
    for task in (t for t in tasks if t.split in ("test", "train")):
        for mechanical in ("line phone number", "suspension reason is", "payment last four", " a iPhone"):
            assert mechanical not in task.user.instruction, (task.id, mechanical)
    from tau_emotion.plugins.suites import SUITES

    assert "telecom" in SUITES["tau-emotion"]


def test_a_suspension_reason_does_not_claim_a_length_its_days_contradict(domain):
    """Issue 21 review (telecom-test-051): "put your line on hold for 14 days, because you will be abroad for a long
    time". A suspension is 7 to 180 days, so its reason says why, not how long ("travelling abroad", "going into
    hospital for treatment"); the instruction's wording of the known reason agrees with the request's."""
    import random

    from tau_emotion.domain_packs.telecom.tracer_hints import _SUSPENSION_WORDS, HINTS
    from tau_emotion.tracer.hints import GroundingContext, Ungrounded

    seen = 0
    for seed in range(120):
        ctx = GroundingContext(domain=domain, state=domain.database.state(), persona=None, rng=random.Random(seed), rates=HINTS.rates)
        try:
            ctx.persona = HINTS.persona(ctx)
            ctx.want_challenge = seed % 2 == 1
            found = HINTS.goals["suspend_line"](ctx)
        except Ungrounded:
            continue
        if found is None:
            continue
        seen += 1
        assert "long" not in found.context.lower(), (found.arguments["days"], found.context)
        assert found.facts["suspension_reason"] in _SUSPENSION_WORDS, found.facts
        assert "long" not in _SUSPENSION_WORDS[found.facts["suspension_reason"]]
    assert seen > 20, seen
