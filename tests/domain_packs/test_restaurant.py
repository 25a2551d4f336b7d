"""Behaviour of the restaurant pack's tools, rules and hand tasks against its real generated database."""

from __future__ import annotations

import json
from importlib.resources import files

import pytest

from tau_emotion.core.domain import Domain
from tau_emotion.domain_packs.restaurant import generate_db, rules, tau_register_domains
from tau_emotion.domain_packs.restaurant.tools import LATE_FEE_PER_GUEST, hours_until
from tau_emotion.tracer.plan import refused_calls
from tests.domain_packs.graph_properties import check_graph

DATA = files("tau_emotion.domain_packs.restaurant").joinpath("data")


@pytest.fixture(scope="module")
def domain() -> Domain:
    found: list[Domain] = []
    tau_register_domains(found.append)
    assert [d.name for d in found] == ["restaurant"]
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


def _confirmed(state, test):
    return _first(state, "bookings", lambda b: b["status"] == "confirmed" and test(b))


def _free_day(state, guest_id, start="2025-06-24"):
    """A Wednesday-to-Saturday date from `start` on which the guest holds no confirmed booking."""
    dates = {state["bookings"].peek(b)["date"] for b in state["guests"].peek(guest_id)["booking_ids"]
             if state["bookings"].peek(b)["status"] == "confirmed"}
    return next(d for d in ("2025-06-25", "2025-06-26", "2025-06-27", "2025-07-02", "2025-07-03") if d not in dates)


# --------------------------------------------------------------------------- database and generator


def test_generator_rewrites_the_shipped_database_byte_for_byte(tmp_path, domain):
    out = tmp_path / "db.json"
    generate_db.main(["--seed", "0", "--out", str(out)])
    assert out.read_bytes() == DATA.joinpath("db.json").read_bytes()
    assert out.stat().st_size < 3_000_000
    generate_db.main(["--seed", "1", "--out", str(out)])
    assert out.read_bytes() != DATA.joinpath("db.json").read_bytes()


def test_database_scale_and_variety(domain):
    tables = domain.database.tables
    assert len(tables["guests"]) == 600 and len(tables["bookings"]) > 4000 and len(tables["restaurants"]) == 8
    bookings = list(tables["bookings"].values())
    assert {b["status"] for b in bookings} == {"confirmed", "completed", "cancelled", "no_show"}
    assert len({b["booking_number"] for b in bookings}) == len(bookings)  # customer-visible and unique
    upcoming = [b for b in bookings if b["status"] == "confirmed"]
    assert sum(b["party_size"] > 8 and b["set_menu_code"] is not None for b in upcoming) > 50
    assert sum(b["deposit"] > 0 for b in upcoming) > 100
    assert sum(0 < hours_until(b["date"], b["time"]) < 24 for b in upcoming) > 50  # inside the late-fee window
    assert any(not r["step_free_access"] for r in tables["restaurants"].values())
    seen = set()
    for b in upcoming:  # the database itself obeys one booking per guest per day
        assert (b["guest_id"], b["date"]) not in seen
        seen.add((b["guest_id"], b["date"]))
    assert len(domain.toolset.tools) == 9


# --------------------------------------------------------------------------- tools


def test_identification_chain(domain, state):
    booking = _confirmed(state, lambda b: b["date"] > "2025-06-20")
    guest = state["guests"].peek(booking["guest_id"])
    found = call(domain, state, "find_guest", phone_number=guest["phone_number"])
    assert found["guest_id"] == guest["guest_id"]
    listed = next(b for b in found["bookings"] if b["booking_number"] == booking["booking_number"])
    details = call(domain, state, "get_booking_details", booking_id=listed["booking_id"])
    assert details["late_cancellation_fee_now"] == 0 and details["restaurant_name"]
    assert "error" in domain.toolset.call(state, "find_guest", {"phone_number": "000-555-0000"})[0].lower()


def test_availability_reflects_full_and_free_seatings(domain, state):
    full = call(domain, state, "check_availability", restaurant_code="R_OLIVA", date="2025-06-14", party_size=4)
    assert {s["time"]: s["available"] for s in full["seatings"]}["19:00"] is False
    closed = call(domain, state, "check_availability", restaurant_code="R_OLIVA", date="2025-06-16", party_size=2)
    assert closed["open"] is False  # Oliva closes on Mondays
    text, is_error = domain.toolset.call(state, "book_table", {
        "guest_id": "G892518", "restaurant_code": "R_OLIVA", "date": "2025-06-14", "time": "19:00", "party_size": 4,
        "card_id": "card_9934935"})
    assert is_error and "no table" in text


def test_large_party_pays_a_deposit_and_a_smaller_party_gets_it_back(domain, state):
    guest = _first(state, "guests", lambda g: True)
    date = _free_day(state, guest["guest_id"])
    booked = call(domain, state, "book_table", guest_id=guest["guest_id"], restaurant_code="R_SPICE", date=date,
                  time="19:00", party_size=8, card_id=next(iter(guest["cards"])))
    assert booked["deposit"] == 8 * 15 and booked["charges"][0] == {"kind": "deposit", "amount": 120, "date": "2025-06-13"}
    assert booked["booking_id"] in state["guests"].peek(guest["guest_id"])["booking_ids"]
    smaller = call(domain, state, "modify_booking", booking_id=booked["booking_id"], party_size=5)
    assert smaller["deposit"] == 0 and smaller["charges"][-1]["kind"] == "deposit_refund"
    assert smaller["table_size"] == 6


def test_cancellation_settles_fee_or_deposit(domain, state):
    plain = _confirmed(state, lambda b: not b["deposit"] and 0 < hours_until(b["date"], b["time"]) < 24)
    out = call(domain, state, "cancel_booking", booking_id=plain["booking_id"], charge_late_fee=True)
    assert out["late_fee_charged"] == LATE_FEE_PER_GUEST * plain["party_size"]
    held = _confirmed(state, lambda b: b["deposit"] and hours_until(b["date"], b["time"]) > 48)
    out = call(domain, state, "cancel_booking", booking_id=held["booking_id"], charge_late_fee=False)
    assert out["deposit_refunded"] == held["deposit"] and state["bookings"].peek(held["booking_id"])["status"] == "cancelled"
    assert "not confirmed" in domain.toolset.call(state, "cancel_booking",
                                                  {"booking_id": held["booking_id"], "charge_late_fee": False})[0]


# --------------------------------------------------------------------------- rules: each allows the compliant action and catches the violation


def test_party_size_limit(state):
    args = {"guest_id": "G771532", "restaurant_code": "R_OLIVA", "date": "2025-06-28", "time": "19:00",
            "card_id": "card_5370335", "set_menu_code": "OLIVA_FAMIGLIA"}
    assert rules.party_size_limit(state, "book_table", {**args, "party_size": 10}) is None
    assert "at most 10" in rules.party_size_limit(state, "book_table", {**args, "party_size": 12})
    assert rules.party_size_limit(state, "join_waitlist", {**args, "party_size": 11})
    booking = _confirmed(state, lambda b: True)
    assert rules.party_size_limit(state, "modify_booking", {"booking_id": booking["booking_id"], "party_size": 11})
    assert rules.party_size_limit(state, "modify_booking", {"booking_id": booking["booking_id"], "party_size": 9}) is None


def test_one_booking_per_day(state):
    held = _confirmed(state, lambda b: b["date"] > "2025-06-20")
    args = {"guest_id": held["guest_id"], "restaurant_code": "R_LOTUS", "time": "19:00", "party_size": 2, "card_id": "x"}
    assert "one booking per day" in rules.one_booking_per_day(state, "book_table", {**args, "date": held["date"]})
    assert rules.one_booking_per_day(state, "book_table", {**args, "date": _free_day(state, held["guest_id"])}) is None
    # changing the held booking itself on its own day is fine; moving another booking onto that day is not
    assert rules.one_booking_per_day(state, "modify_booking", {"booking_id": held["booking_id"], "time": "20:30"}) is None
    guest = state["guests"].peek(held["guest_id"])
    other = next((b for b in guest["booking_ids"] if b != held["booking_id"]
                  and state["bookings"].peek(b)["status"] == "confirmed"), None)
    if other is not None:
        assert rules.one_booking_per_day(state, "modify_booking", {"booking_id": other, "date": held["date"]})


def test_booking_horizon(state):
    args = {"guest_id": "G892518", "restaurant_code": "R_LOTUS", "time": "19:00", "party_size": 2}
    assert rules.booking_horizon(state, "book_table", {**args, "date": "2025-08-12"}) is None
    assert "60 days" in rules.booking_horizon(state, "book_table", {**args, "date": "2025-08-13"})
    assert rules.booking_horizon(state, "join_waitlist", {**args, "date": "2025-09-01"})


def test_change_window(state):
    soon = _confirmed(state, lambda b: 0 < hours_until(b["date"], b["time"]) < 4)
    later = _confirmed(state, lambda b: 4 < hours_until(b["date"], b["time"]) < 24)
    assert "4 hours" in rules.change_window(state, "modify_booking", {"booking_id": soon["booking_id"], "time": "20:30"})
    assert rules.change_window(state, "modify_booking", {"booking_id": soon["booking_id"], "party_size": soon["party_size"] + 1})
    # requests may still change, and the same values are no change
    assert rules.change_window(state, "modify_booking", {"booking_id": soon["booking_id"],
                                                         "dietary_requirements": ["vegan"]}) is None
    assert rules.change_window(state, "modify_booking", {"booking_id": soon["booking_id"], "time": soon["time"]}) is None
    assert rules.change_window(state, "modify_booking", {"booking_id": later["booking_id"], "time": "20:30"}) is None


def test_preorder_cutoff(state):
    tomorrow_lunch = _confirmed(state, lambda b: b["date"] == "2025-06-14" and b["time"] == "12:00"
                                and b["restaurant_code"] == "R_OLIVA" and not b["set_menu_code"])
    tomorrow_dinner = _confirmed(state, lambda b: b["date"] == "2025-06-14" and b["time"] == "20:30"
                                 and b["restaurant_code"] == "R_OLIVA" and not b["set_menu_code"])
    menu = {"set_menu_code": "OLIVA_TASTING"}
    assert "24 hours" in rules.preorder_cutoff(state, "modify_booking", {"booking_id": tomorrow_lunch["booking_id"], **menu})
    assert rules.preorder_cutoff(state, "modify_booking", {"booking_id": tomorrow_dinner["booking_id"], **menu}) is None
    book = {"guest_id": "G892518", "restaurant_code": "R_OLIVA", "date": "2025-06-14", "party_size": 2, **menu}
    assert rules.preorder_cutoff(state, "book_table", {**book, "time": "13:30"})
    assert rules.preorder_cutoff(state, "book_table", {**book, "time": "20:30"}) is None


def test_set_menu_for_large_parties(state):
    book = {"guest_id": "G892518", "restaurant_code": "R_OLIVA", "date": "2025-06-28", "time": "19:00", "party_size": 9}
    assert "set menu" in rules.set_menu_for_large_parties(state, "book_table", book)
    assert rules.set_menu_for_large_parties(state, "book_table", {**book, "set_menu_code": "OLIVA_FAMIGLIA"}) is None
    assert rules.set_menu_for_large_parties(state, "book_table", {**book, "party_size": 8}) is None
    plain = _confirmed(state, lambda b: not b["set_menu_code"] and b["party_size"] <= 8)
    assert rules.set_menu_for_large_parties(state, "modify_booking", {"booking_id": plain["booking_id"], "party_size": 10})
    big = _confirmed(state, lambda b: b["party_size"] > 8)
    assert rules.set_menu_for_large_parties(state, "modify_booking", {"booking_id": big["booking_id"], "set_menu_code": "none"})


def test_late_cancellation_fee(state):
    late = _confirmed(state, lambda b: 0 < hours_until(b["date"], b["time"]) < 24)
    early = _confirmed(state, lambda b: hours_until(b["date"], b["time"]) > 24)
    assert "late fee applies" in rules.late_cancellation_fee(state, "cancel_booking",
                                                             {"booking_id": late["booking_id"], "charge_late_fee": False})
    assert rules.late_cancellation_fee(state, "cancel_booking", {"booking_id": late["booking_id"], "charge_late_fee": True}) is None
    assert rules.late_cancellation_fee(state, "cancel_booking", {"booking_id": early["booking_id"], "charge_late_fee": True})
    assert rules.late_cancellation_fee(state, "cancel_booking", {"booking_id": early["booking_id"], "charge_late_fee": False}) is None


def test_wheelchair_access(state):
    book = {"guest_id": "G892518", "date": "2025-06-28", "time": "19:00", "party_size": 2, "accessibility_requests": ["wheelchair"]}
    assert "step-free" in rules.wheelchair_access(state, "book_table", {**book, "restaurant_code": "R_VERDE"})
    assert rules.wheelchair_access(state, "book_table", {**book, "restaurant_code": "R_OLIVA"}) is None
    bistro = _confirmed(state, lambda b: b["restaurant_code"] == "R_BISTRO")
    assert rules.wheelchair_access(state, "modify_booking", {"booking_id": bistro["booking_id"],
                                                             "accessibility_requests": ["wheelchair"]})
    assert rules.wheelchair_access(state, "modify_booking", {"booking_id": bistro["booking_id"],
                                                             "accessibility_requests": ["high_chair"]}) is None


def test_waitlist_only_when_full(state):
    entry = {"guest_id": "G892518", "restaurant_code": "R_OLIVA", "date": "2025-06-14", "party_size": 4}
    assert rules.waitlist_only_when_full(state, "join_waitlist", {**entry, "time": "19:00"}) is None
    assert "book it" in rules.waitlist_only_when_full(state, "join_waitlist", {**entry, "time": "20:30"})


def test_every_rule_is_listed_and_tested():
    tested = {name[len("test_"):] for name in globals() if name.startswith("test_")}
    assert {rule.name for rule in rules.RULES} <= tested
    assert len(rules.RULES) == 9


def test_tools_stay_permissive_so_the_rules_matter(domain, state):
    """The tools book 12 at a 12-seat table and waive a late fee: only the rules say no."""
    out = call(domain, state, "book_table", guest_id="G771532", restaurant_code="R_OLIVA", date="2025-06-28",
               time="19:00", party_size=12, card_id="card_5370335")
    assert out["table_size"] == 12
    assert rules.violations(state, "book_table", {"guest_id": "G771532", "restaurant_code": "R_OLIVA",
                                                  "date": "2025-06-28", "time": "19:00", "party_size": 12})


# --------------------------------------------------------------------------- hand tasks and graph


def test_hand_tasks_obey_the_rules_follow_the_graph_and_refuse_what_the_rules_forbid(domain):
    tasks = domain.tasks("hand")
    assert len(tasks) >= 3 and all(t.meta["source"] == "hand" for t in tasks)
    assert any(t.gold.reasons for t in tasks)
    edges = set(domain.graph_edges)
    for task in tasks:
        state = domain.database.state()
        for action in task.gold.actions:
            if domain.toolset[action.name].writes:
                assert rules.violations(state, action.name, action.arguments) == [], (task.id, action.name)
            text, is_error = domain.toolset.call(state, action.name, action.arguments)
            assert not is_error, (task.id, action.name, text)
        names = [a.name for a in task.gold.actions]
        assert set(zip(names, names[1:], strict=False)) <= edges, task.id
        for refused in refused_calls(task):
            state = domain.database.state()
            for action in task.gold.actions[: refused["after"]]:
                domain.toolset.call(state, action.name, action.arguments)
            assert rules.violations(state, refused["name"], refused["arguments"]), task.id


def test_graph_has_every_tool_and_a_density_in_the_band(domain):
    from tau_emotion.tracer.graph import build_graph
    from tau_emotion.tracer.hints import TracerHints

    check_graph(domain, build_graph(domain, TracerHints()))


def test_the_packs_tracer_hints_keep_the_graph_and_its_gold_paths(domain):
    from tau_emotion.domain_packs.restaurant.tracer_hints import HINTS
    from tau_emotion.tracer.graph import build_graph

    check_graph(domain, build_graph(domain, HINTS), HINTS)
    assert set(HINTS.goals) == {"book_table", "modify_booking", "cancel_booking", "join_waitlist"}


def test_tracer_built_test_split_obeys_the_rules_and_refuses_what_they_forbid(domain):
    tasks = domain.tasks("test")
    assert len(tasks) == 58 and all(t.meta["source"] == "tracer" for t in tasks)
    assert sum(len(t.gold.actions) for t in tasks) / len(tasks) >= 6.5
    challenged = [t for t in tasks if refused_calls(t)]
    assert len(challenged) >= 10 and len({r for t in challenged for r in t.gold.reasons}) >= 3
    for task in tasks:
        state = domain.database.state()
        refused = {r["after"]: r for r in refused_calls(task)}
        for i, action in enumerate([*task.gold.actions, None]):
            if i in refused:
                assert rules.violations(state, refused[i]["name"], refused[i]["arguments"]), task.id
            if action is None:
                break
            if domain.toolset[action.name].writes:
                assert rules.violations(state, action.name, action.arguments) == [], (task.id, action.name)
            domain.toolset.call(state, action.name, action.arguments)


def test_a_bad_set_menu_refuses_the_whole_change_before_any_write(domain, state):
    """modify_booking checks every argument before its first write (it used to move the booking, then refuse the
    menu): even called directly, without the core's savepoint, a refusal changes nothing."""
    from tau_emotion.core.tools import ToolError
    from tau_emotion.domain_packs.restaurant.tools import modify_booking

    guest = _first(state, "guests", lambda g: True)
    date = _free_day(state, guest["guest_id"])
    booked = call(domain, state, "book_table", guest_id=guest["guest_id"], restaurant_code="R_SPICE", date=date,
                  time="19:00", party_size=2, card_id=next(iter(guest["cards"])))
    before = json.dumps(state["bookings"].peek(booked["booking_id"]), sort_keys=True)
    with pytest.raises(ToolError, match="no set menu 'NOPE'"):
        modify_booking(state, booked["booking_id"], time="20:30", party_size=3, set_menu_code="NOPE")
    assert json.dumps(state["bookings"].peek(booked["booking_id"]), sort_keys=True) == before
