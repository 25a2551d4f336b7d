"""Behaviour of the movie pack's tools, rules and hand tasks against its real generated database."""

from __future__ import annotations

import json
from importlib.resources import files

import pytest

from tau_emotion.core.domain import Domain
from tau_emotion.core.reward import check_task
from tau_emotion.domain_packs.movie import generate_db, rules, tau_register_domains
from tau_emotion.domain_packs.movie.tools import EXCHANGE_FEE, hours_until
from tau_emotion.tracer.plan import decision_branches, refused_calls
from tests.domain_packs.graph_properties import check_graph
from tests.domain_packs.rule_coverage import check_rules_on_tasks

DATA = files("tau_emotion.domain_packs.movie").joinpath("data")


@pytest.fixture(scope="module")
def domain() -> Domain:
    found: list[Domain] = []
    tau_register_domains(found.append)
    assert [d.name for d in found] == ["movie"]
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


def _show(state, booking):
    return state["showtimes"].peek(booking["showtime_id"])


def _future(state, booking, hours=0):
    return booking["status"] == "confirmed" and hours_until(_show(state, booking)["start"]) > hours


def _free(state, showtime_id, n):
    seat_map = state["showtimes"].peek(showtime_id)
    theatre = state["theatres"].peek(seat_map["theatre_code"])
    from tau_emotion.domain_packs.movie.tools import screen_seats

    return [s for s in screen_seats(theatre, seat_map["screen"]) if s not in set(seat_map["taken"])][:n]


def _showtime(state, test):
    return _first(state, "showtimes", lambda s: hours_until(s["start"]) > 60 and test(s))


def _film(state, show):
    return state["films"].peek(show["film_code"])


# --------------------------------------------------------------------------- database and generator


def test_generator_rewrites_the_shipped_database_byte_for_byte(tmp_path):
    out = tmp_path / "db.json"
    generate_db.main(["--seed", "0", "--out", str(out)])
    assert out.read_bytes() == DATA.joinpath("db.json").read_bytes()
    assert out.stat().st_size < 3_000_000
    generate_db.main(["--seed", "1", "--out", str(out)])
    assert out.read_bytes() != DATA.joinpath("db.json").read_bytes()


def test_database_scale_variety_and_its_own_policy(domain, state):
    tables = domain.database.tables
    assert len(tables["customers"]) == 600 and len(tables["bookings"]) > 1800 and len(tables["showtimes"]) > 500
    bookings = list(tables["bookings"].values())
    assert len({b["confirmation_code"] for b in bookings}) == len(bookings)  # customer-visible and unique
    assert {b["confirmation_code"] for b in bookings}.isdisjoint(tables["bookings"])
    confirmed = [b for b in bookings if b["status"] == "confirmed"]
    assert sum(not _future(state, b) for b in confirmed) > 100  # started: refunds refused
    assert sum(len(b["tickets"]) >= 10 and _future(state, b) and not _future(state, b, 48) for b in confirmed) >= 5
    assert sum(b["exchanges"] and _future(state, b) for b in confirmed) > 50
    assert {m["status"] for m in tables["memberships"].values()} == {"active", "paused"}
    for b in confirmed:  # booked seats are taken, child tickets never for restricted films, credits only standard
        show = tables["showtimes"][b["showtime_id"]]
        assert {t["seat"] for t in b["tickets"]} <= set(show["taken"])
        if any(t["type"] == "child" for t in b["tickets"]):
            assert tables["films"][show["film_code"]]["rating"] not in rules.RESTRICTED_RATINGS
        if any(t["paid_with"] == "credit" for t in b["tickets"]):
            assert show["format"] == "standard" and len(b["tickets"]) < 10
    assert 9 <= len(domain.toolset.tools) <= 17


# --------------------------------------------------------------------------- tools


def test_identification_and_booking_with_a_credit(domain, state):
    member = _first(state, "memberships", lambda m: m["status"] == "active" and m["credits_left"] >= 1)
    customer = state["customers"].peek(member["customer_id"])
    assert call(domain, state, "find_customer_by_email", email=customer["email"])["customer_id"] == customer["customer_id"]
    profile = call(domain, state, "get_customer_details", customer_id=customer["customer_id"])
    assert {b["confirmation_code"] for b in profile["bookings"]} == {
        state["bookings"].peek(b)["confirmation_code"] for b in customer["booking_ids"]}
    show = _showtime(state, lambda s: s["format"] == "standard" and _film(state, s)["rating"] == "PG")
    seats = _free(state, show["showtime_id"], 2)
    card = next(p for p, m in customer["payment_methods"].items() if m["source"] == "credit_card")
    out = call(domain, state, "book_tickets", customer_id=customer["customer_id"], showtime_id=show["showtime_id"],
               tickets=[{"seat": seats[0], "type": "adult"}, {"seat": seats[1], "type": "child"}], payment_id=card,
               credits=1)
    assert out["charged"] == state["formats"].peek("standard")["child"]  # the credit paid the dearest ticket
    assert set(seats) <= set(state["showtimes"].peek(show["showtime_id"])["taken"])
    assert state["memberships"].peek(member["membership_id"])["credits_left"] == member["credits_left"] - 1
    assert "not in the profile" in domain.toolset.call(state, "book_tickets", {
        "customer_id": customer["customer_id"], "showtime_id": show["showtime_id"],
        "tickets": [{"seat": _free(state, show["showtime_id"], 1)[0], "type": "adult"}], "payment_id": "card_0"})[0]
    assert "already taken" in domain.toolset.call(state, "book_tickets", {
        "customer_id": customer["customer_id"], "showtime_id": show["showtime_id"],
        "tickets": [{"seat": seats[0], "type": "adult"}], "payment_id": card})[0]


def test_exchange_charges_the_difference_and_the_fee_to_non_members(domain, state):
    booking = _first(state, "bookings", lambda b: _future(state, b) and b["exchanges"] == 0 and len(b["tickets"]) == 2
                     and _show(state, b)["format"] == "standard"
                     and not state["customers"].peek(b["customer_id"])["membership_id"]
                     and all(t["type"] == "adult" for t in b["tickets"]))
    imax = _showtime(state, lambda s: s["format"] == "imax")
    seats = _free(state, imax["showtime_id"], 2)
    out = call(domain, state, "exchange_tickets", booking_id=booking["booking_id"], new_showtime_id=imax["showtime_id"],
               seats=seats)
    assert out["price_difference"] == 2 * (21 - 15) and out["exchange_fee"] == 2 * EXCHANGE_FEE
    after = state["bookings"].peek(booking["booking_id"])
    assert after["exchanges"] == 1 and after["total"] == booking["total"] + 16
    assert not {t["seat"] for t in booking["tickets"]} & set(state["showtimes"].peek(booking["showtime_id"])["taken"])


def test_refund_returns_money_credits_and_seats(domain, state):
    booking = _first(state, "bookings", lambda b: _future(state, b) and any(t["paid_with"] == "credit" for t in b["tickets"]))
    customer = state["customers"].peek(booking["customer_id"])
    before = state["memberships"].peek(customer["membership_id"])["credits_left"]
    out = call(domain, state, "refund_booking", booking_id=booking["booking_id"])
    credits = sum(t["paid_with"] == "credit" for t in booking["tickets"])
    assert out["refunded"] == booking["total"] and out["credits_returned"] == credits
    assert state["memberships"].peek(customer["membership_id"])["credits_left"] == before + credits
    assert "refunded" in domain.toolset.call(state, "refund_booking", {"booking_id": booking["booking_id"]})[0]


def test_concessions_take_the_member_discount_and_gift_cards_must_cover(domain, state):
    booking = _first(state, "bookings", lambda b: _future(state, b) and (m := state["customers"].peek(
        b["customer_id"])["membership_id"]) and state["memberships"].peek(m)["status"] == "active"
        and state["memberships"].peek(m)["tier_code"] == "TIER_PREMIUM")
    out = call(domain, state, "add_concessions", booking_id=booking["booking_id"], item_code="CON_POPCORN_L", quantity=2)
    assert out["charged"] == 14.4  # 2 x 9, 20% off
    poor = _first(state, "bookings", lambda b: _future(state, b) and state["customers"].peek(
        b["customer_id"])["payment_methods"][b["payment_id"]]["source"] == "gift_card"
        and state["customers"].peek(b["customer_id"])["payment_methods"][b["payment_id"]]["balance"] < 50)
    text, is_error = domain.toolset.call(state, "add_concessions", {"booking_id": poor["booking_id"],
                                                                    "item_code": "CON_COMBO", "quantity": 3})
    assert is_error and "gift card" in text


def test_tier_change_sets_this_months_credits(domain, state):
    member = _first(state, "memberships", lambda m: m["tier_code"] == "TIER_STANDARD" and m["status"] == "active")
    out = call(domain, state, "change_membership_tier", membership_id=member["membership_id"], tier_code="TIER_PREMIUM")
    assert out["credits_left"] == 4 - member["credits_used_this_month"] and out["monthly_fee"] == 22


# --------------------------------------------------------------------------- rules: each passes the compliant, catches the violating


def test_before_showtime(state):
    started = _first(state, "bookings", lambda b: b["status"] == "confirmed" and not _future(state, b))
    later = _first(state, "bookings", lambda b: _future(state, b))
    for action in ("refund_booking", "add_concessions"):
        assert rules.before_showtime(state, action, {"booking_id": started["booking_id"]})
        assert not rules.before_showtime(state, action, {"booking_id": later["booking_id"]})
    assert rules.before_showtime(state, "book_tickets", {"showtime_id": started["showtime_id"]})
    assert not rules.before_showtime(state, "book_tickets", {"showtime_id": later["showtime_id"]})
    assert rules.exchange_target_not_started(state, "exchange_tickets", {"new_showtime_id": started["showtime_id"]})
    assert not rules.exchange_target_not_started(state, "exchange_tickets", {"new_showtime_id": later["showtime_id"]})


def test_age_rating(state):
    r_show = _showtime(state, lambda s: _film(state, s)["rating"] == "R")
    pg_show = _showtime(state, lambda s: _film(state, s)["rating"] == "PG")
    child = [{"seat": "A1", "type": "adult"}, {"seat": "A2", "type": "child"}]
    assert rules.age_rating(state, "book_tickets", {"showtime_id": r_show["showtime_id"], "tickets": child})
    assert not rules.age_rating(state, "book_tickets", {"showtime_id": pg_show["showtime_id"], "tickets": child})
    assert not rules.age_rating(state, "book_tickets", {"showtime_id": r_show["showtime_id"], "tickets": child[:1]})
    family = _first(state, "bookings", lambda b: any(t["type"] == "child" for t in b["tickets"]))
    assert rules.age_rating(state, "exchange_tickets", {"booking_id": family["booking_id"],
                                                        "new_showtime_id": r_show["showtime_id"]})
    assert not rules.age_rating(state, "exchange_tickets", {"booking_id": family["booking_id"],
                                                            "new_showtime_id": pg_show["showtime_id"]})


def test_ticket_and_exchange_limits(state):
    tickets = [{"seat": f"A{i}", "type": "adult"} for i in range(1, 22)]
    assert rules.ticket_limit(state, "book_tickets", {"tickets": tickets})
    assert not rules.ticket_limit(state, "book_tickets", {"tickets": tickets[:20]})
    once = _first(state, "bookings", lambda b: b["exchanges"] == 1)
    never = _first(state, "bookings", lambda b: b["exchanges"] == 0)
    assert rules.exchange_limit(state, "exchange_tickets", {"booking_id": once["booking_id"]})
    assert not rules.exchange_limit(state, "exchange_tickets", {"booking_id": never["booking_id"]})


def test_group_refund_window(state):
    soon = _first(state, "bookings", lambda b: len(b["tickets"]) >= 10 and _future(state, b) and not _future(state, b, 48))
    later = _first(state, "bookings", lambda b: len(b["tickets"]) >= 10 and _future(state, b, 48))
    small = _first(state, "bookings", lambda b: len(b["tickets"]) < 10 and _future(state, b) and not _future(state, b, 48))
    assert rules.group_refund_window(state, "refund_booking", {"booking_id": soon["booking_id"]})
    assert not rules.group_refund_window(state, "refund_booking", {"booking_id": later["booking_id"]})
    assert not rules.group_refund_window(state, "refund_booking", {"booking_id": small["booking_id"]})


def test_credit_rules(state):
    def member(status, tier):
        m = _first(state, "memberships", lambda m: m["status"] == status and m["tier_code"] == tier)
        return m["customer_id"]

    standard, premium, paused = (member("active", "TIER_STANDARD"), member("active", "TIER_PREMIUM"),
                                 member("paused", "TIER_STANDARD"))
    flat = _showtime(state, lambda s: s["format"] == "standard")["showtime_id"]
    imax = _showtime(state, lambda s: s["format"] == "imax")["showtime_id"]
    two = [{"seat": "A1", "type": "adult"}, {"seat": "A2", "type": "adult"}]

    def book(customer, show, credits, tickets=two):
        return {"customer_id": customer, "showtime_id": show, "tickets": tickets, "payment_id": "x", "credits": credits}

    assert rules.credits_need_active_membership(state, "book_tickets", book(paused, flat, 1))
    assert not rules.credits_need_active_membership(state, "book_tickets", book(standard, flat, 1))
    assert not rules.credits_need_active_membership(state, "book_tickets", book(paused, flat, 0))
    assert rules.credits_standard_format_only(state, "book_tickets", book(standard, imax, 1))
    assert not rules.credits_standard_format_only(state, "book_tickets", book(standard, flat, 1))
    assert not rules.credits_standard_format_only(state, "book_tickets", book(standard, imax, 0))
    assert rules.credits_per_showtime(state, "book_tickets", book(standard, flat, 2))
    assert not rules.credits_per_showtime(state, "book_tickets", book(premium, flat, 2))
    group = [{"seat": f"A{i}", "type": "adult"} for i in range(1, 11)]
    assert rules.credits_per_showtime(state, "book_tickets", book(premium, flat, 1, group))
    credited = _first(state, "bookings", lambda b: any(t["paid_with"] == "credit" for t in b["tickets"]))
    assert rules.credits_standard_format_only(state, "exchange_tickets", {"booking_id": credited["booking_id"],
                                                                          "new_showtime_id": imax})
    assert not rules.credits_standard_format_only(state, "exchange_tickets", {"booking_id": credited["booking_id"],
                                                                              "new_showtime_id": flat})


def test_tier_change_rules(state):
    changed = _first(state, "memberships", lambda m: m["tier_changed_on"] >= "2025-06-01" and m["status"] == "active")
    settled = _first(state, "memberships", lambda m: m["tier_changed_on"] < "2025-06-01" and m["status"] == "active")
    paused = _first(state, "memberships", lambda m: m["status"] == "paused")
    assert rules.tier_change_once_per_month(state, "change_membership_tier", {"membership_id": changed["membership_id"]})
    assert not rules.tier_change_once_per_month(state, "change_membership_tier", {"membership_id": settled["membership_id"]})
    assert rules.tier_change_needs_active_membership(state, "change_membership_tier", {"membership_id": paused["membership_id"]})
    assert not rules.tier_change_needs_active_membership(state, "change_membership_tier",
                                                         {"membership_id": settled["membership_id"]})


def test_every_rule_names_a_declared_reason_and_the_tasks_meet_it(domain):
    check_rules_on_tasks(domain, rules, {"ticket_limit": "no built candidate asks for more tickets than the limit"})


# --------------------------------------------------------------------------- hand tasks


def test_hand_tasks_score_one_and_refusals_are_grounded(domain):
    hand = domain.tasks("hand")
    assert len(hand) >= 3 and all(check_task(domain, t) is None for t in hand)
    refusals = [t for t in hand if t.gold.reasons]
    assert len({r for t in refusals for r in t.gold.reasons}) >= 3
    for task in hand:  # the user names bookings by confirmation code, never by internal id
        assert not any(b in task.user.instruction for b in domain.database.tables["bookings"])


# --------------------------------------------------------------------------- Tracer hints and splits


def test_graph_is_the_same_with_and_without_the_packs_tracer_hints(domain):
    from tau_emotion.domain_packs.movie.tracer_hints import HINTS
    from tau_emotion.tracer.graph import build_graph
    from tau_emotion.tracer.hints import TracerHints

    bare, hinted = build_graph(domain, TracerHints()), build_graph(domain, HINTS)
    for graph in (bare, hinted):
        check_graph(domain, graph)
    check_graph(domain, hinted, HINTS)
    assert set(hinted.graph.edges) == set(bare.graph.edges)
    assert set(HINTS.goals) == {"book_tickets", "exchange_tickets", "refund_booking", "add_concessions",
                                "change_membership_tier"}


def test_tracer_built_test_split_meets_its_targets_obeys_the_rules_and_refuses_what_they_forbid(domain):
    tasks = domain.tasks("test")
    assert len(tasks) == 58 and all(t.meta["source"] == "tracer" for t in tasks)
    assert sum(len(t.gold.actions) for t in tasks) / len(tasks) >= 6.5
    challenged = [t for t in tasks if refused_calls(t)]
    assert len(challenged) >= 10 and len({r for t in challenged for r in t.gold.reasons}) >= 3
    assert sum(bool(decision_branches(t)) for t in tasks) >= 0.2 * len(tasks)
    assert not {t.meta["user"] for t in tasks} & {t.meta["user"] for t in domain.tasks("train")}
    bookings = domain.database.tables["bookings"]
    for task in tasks:
        assert not any(b in task.user.instruction for b in bookings)  # confirmation codes, never internal ids
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
