"""Behaviour of the travel pack's tools, rules and hand tasks against its real generated database."""

from __future__ import annotations

import datetime as dt
import json
from importlib.resources import files

import pytest

from tau_emotion.core.domain import Domain
from tau_emotion.core.reward import check_task
from tau_emotion.domain_packs.travel import generate_db, rules, tau_register_domains
from tau_emotion.domain_packs.travel.tools import (
    CHANGE_FEE,
    ONE_WAY_FEE,
    YOUNG_DRIVER_FEE,
    age_on,
    days_until,
    rooms_free,
)
from tau_emotion.tracer.plan import decision_branches, refused_calls
from tests.domain_packs.graph_properties import check_graph
from tests.domain_packs.rule_coverage import check_rules_on_tasks

DATA = files("tau_emotion.domain_packs.travel").joinpath("data")


@pytest.fixture(scope="module")
def domain() -> Domain:
    found: list[Domain] = []
    tau_register_domains(found.append)
    assert [d.name for d in found] == ["travel"]
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


def _stay(state, plan, test=lambda s: True):
    return _first(state, "stays", lambda s: s["status"] == "confirmed" and s["rate_plan"] == plan and test(s))


def _open_trip(state, test=lambda t: True):
    return _first(state, "itineraries", lambda t: t["status"] == "upcoming" and days_until(t["start_date"]) > 5 and test(t))


def _person(state, trip, test):
    """(name, dob) of someone on the trip owner's profile for whom test(age at the trip's start) holds, or None."""
    traveller = state["travellers"].peek(trip["traveller_id"])
    people = [(f"{traveller['name']['first_name']} {traveller['name']['last_name']}", traveller["dob"]),
              *[(c["name"], c["dob"]) for c in traveller["companions"]]]
    return next(((n, d) for n, d in people if test(age_on(d, trip["start_date"]))), None)


def _car(trip, car, driver, pickup="Lisbon", dropoff="Lisbon", points=0):
    return {"itinerary_id": trip["itinerary_id"], "car_code": car, "pickup_city": pickup, "dropoff_city": dropoff,
            "pickup_date": trip["start_date"], "dropoff_date": trip["end_date"], "driver_name": driver,
            "payment_id": "x", "points": points}


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
    assert len(tables["travellers"]) == 500 and len(tables["stays"]) > 1000 and len(tables["departures"]) > 1000
    trips = list(tables["itineraries"].values())
    assert len({t["trip_number"] for t in trips}) == len(trips)  # customer-visible and unique
    assert {t["status"] for t in trips} == {"upcoming", "in_progress", "completed", "cancelled"}
    stays = [s for s in tables["stays"].values() if s["status"] == "confirmed"]
    assert sum(s["rate_plan"] == "SAVER" and days_until(s["check_in"]) >= 3 for s in stays) > 50
    assert sum(s["rate_plan"] == "FLEX" and 0 <= days_until(s["check_in"]) < 3 for s in stays) > 20
    tours = [b for b in tables["tour_bookings"].values() if b["status"] == "confirmed"]
    assert sum(0 <= days_until(b["date"]) < 2 for b in tours) > 10
    for trip in trips:  # a traveller's trips never overlap
        for other in tables["travellers"][trip["traveller_id"]]["itinerary_ids"]:
            o = tables["itineraries"][other]
            assert other == trip["itinerary_id"] or o["end_date"] < trip["start_date"] or trip["end_date"] < o["start_date"]
    for traveller in tables["travellers"].values():  # names on a profile are distinct: a driver is one person
        names = [c["name"] for c in traveller["companions"]]
        assert len(set(names)) == len(names)
    for rental in tables["car_rentals"].values():  # the database obeys its own age and one-way rules
        car = tables["car_classes"][rental["car_code"]]
        assert rental["driver_age"] >= car["min_driver_age"] and rental["points_used"] == 0
        if rental["pickup_city"] != rental["dropoff_city"]:
            assert car["one_way_allowed"] and rental["one_way_fee"] == ONE_WAY_FEE
            assert tables["cities"][rental["pickup_city"]]["country"] == tables["cities"][rental["dropoff_city"]]["country"]
    for key, hotel in tables["hotels"].items():  # no hotel is overbooked on any night
        for room in hotel["rooms"]:
            for day in ("2025-09-12", "2025-09-20", "2025-10-15"):
                assert rooms_free(state, key, room["room_type"], day, day[:8] + f"{int(day[8:]) + 1:02d}") >= 0
    assert 9 <= len(domain.toolset.tools) <= 17


# --------------------------------------------------------------------------- tools


def test_identification_search_and_a_stay_paid_partly_with_points(domain, state):
    trip = _open_trip(state, lambda t: state["travellers"].peek(t["traveller_id"])["loyalty"]["points"] >= 5000)
    traveller = state["travellers"].peek(trip["traveller_id"])
    found = call(domain, state, "find_traveller_by_email", email=traveller["email"].upper())
    assert found["traveller_id"] == traveller["traveller_id"]
    profile = call(domain, state, "get_traveller_details", traveller_id=traveller["traveller_id"])
    assert trip["trip_number"] in {t["trip_number"] for t in profile["trips"]}
    hotels = call(domain, state, "search_hotels", city="Seville", check_in="2025-11-03", check_out="2025-11-05")
    room = hotels[0]["rooms"][0]
    assert room["rate_plans"]["SAVER"]["total"] == round(room["rate_plans"]["FLEX"]["total"] * 0.8, 2)
    out = call(domain, state, "book_hotel_stay", itinerary_id=trip["itinerary_id"], hotel_code=hotels[0]["hotel_code"],
               room_type="standard", rate_plan="FLEX", check_in="2025-11-03", check_out="2025-11-05", guests=1,
               payment_id=next(iter(traveller["payment_methods"])), points=1000)
    assert out["charged"] == room["rate_plans"]["FLEX"]["total"] - 10
    assert state["travellers"].peek(traveller["traveller_id"])["loyalty"]["points"] == traveller["loyalty"]["points"] - 1000
    after = state["itineraries"].peek(trip["itinerary_id"])
    assert out["stay_id"] in after["stay_ids"] and after["end_date"] >= "2025-11-05"
    assert "sleeps" in domain.toolset.call(state, "book_hotel_stay", {
        "itinerary_id": trip["itinerary_id"], "hotel_code": hotels[0]["hotel_code"], "room_type": "standard",
        "rate_plan": "FLEX", "check_in": "2025-11-03", "check_out": "2025-11-05", "guests": 3,
        "payment_id": next(iter(traveller["payment_methods"]))})[0]


def test_date_change_charges_the_difference_and_the_fee(domain, state):
    stay = _stay(state, "FLEX", lambda s: days_until(s["check_in"]) >= 3 and s["nights"] >= 2)
    rate = stay["price"] / stay["nights"]
    out = call(domain, state, "change_hotel_stay_dates", stay_id=stay["stay_id"], check_in=stay["check_in"],
               check_out=(dt.date.fromisoformat(stay["check_out"]) - dt.timedelta(days=1)).isoformat())
    assert out["price_difference"] == -rate and out["change_fee"] == CHANGE_FEE and out["charged"] == CHANGE_FEE - rate
    out = call(domain, state, "cancel_hotel_stay", stay_id=stay["stay_id"])
    assert out["refunded"] == stay["price"] - rate - stay["points_used"] * 0.01


def test_tour_booking_and_cancellation_release_places(domain, state):
    trip = _open_trip(state)
    traveller = state["travellers"].peek(trip["traveller_id"])
    dep = next(d for _, d in state["departures"].scan() if days_until(d["date"]) > 10 and d["places_left"] >= 2)
    out = call(domain, state, "book_tour", itinerary_id=trip["itinerary_id"], departure_id=dep["departure_id"],
               participants=2, payment_id=next(iter(traveller["payment_methods"])))
    assert state["departures"].peek(dep["departure_id"])["places_left"] == dep["places_left"] - 2
    call(domain, state, "cancel_tour_booking", tour_booking_id=out["tour_booking_id"])
    assert state["departures"].peek(dep["departure_id"])["places_left"] == dep["places_left"]


def test_car_rental_prices_the_one_way_and_young_driver_fees(domain, state):
    trip = _open_trip(state, lambda t: _person(state, t, lambda a: 21 <= a < 25) is not None)
    name, _ = _person(state, trip, lambda a: 21 <= a < 25)
    traveller = state["travellers"].peek(trip["traveller_id"])
    out = call(domain, state, "book_car_rental", itinerary_id=trip["itinerary_id"], car_code="CAR_ECONOMY",
               pickup_city="madrid", dropoff_city="Seville", pickup_date="2025-12-01", dropoff_date="2025-12-04",
               driver_name=name, payment_id=next(iter(traveller["payment_methods"])))
    assert out["price"] == 3 * 32 + 3 * YOUNG_DRIVER_FEE + ONE_WAY_FEE
    assert "not the traveller or a companion" in domain.toolset.call(state, "book_car_rental", {
        **_car(trip, "CAR_ECONOMY", "Nobody Here"), "payment_id": next(iter(traveller["payment_methods"]))})[0]


# --------------------------------------------------------------------------- rules: each passes the compliant, catches the violating


def test_non_refundable_rate_and_cancellation_window(state):
    saver = _stay(state, "SAVER", lambda s: days_until(s["check_in"]) >= 3)
    flex_far = _stay(state, "FLEX", lambda s: days_until(s["check_in"]) >= 3)
    flex_near = _stay(state, "FLEX", lambda s: 0 <= days_until(s["check_in"]) < 3)
    for action in ("cancel_hotel_stay", "change_hotel_stay_dates"):
        assert rules.non_refundable_rate(state, action, {"stay_id": saver["stay_id"]})
        assert not rules.non_refundable_rate(state, action, {"stay_id": flex_far["stay_id"]})
        assert rules.stay_change_window(state, action, {"stay_id": flex_near["stay_id"]})
        assert not rules.stay_change_window(state, action, {"stay_id": flex_far["stay_id"]})
        assert not rules.stay_change_window(state, action, {"stay_id": saver["stay_id"]})  # non_refundable's complaint


def test_tour_cancellation_window_and_rental_started(state):
    near = _first(state, "tour_bookings", lambda b: b["status"] == "confirmed" and days_until(b["date"]) == 1)
    far = _first(state, "tour_bookings", lambda b: b["status"] == "confirmed" and days_until(b["date"]) >= 2)
    assert rules.tour_cancellation_window(state, "cancel_tour_booking", {"tour_booking_id": near["tour_booking_id"]})
    assert not rules.tour_cancellation_window(state, "cancel_tour_booking", {"tour_booking_id": far["tour_booking_id"]})
    started = _first(state, "car_rentals", lambda r: r["status"] == "confirmed" and days_until(r["pickup_date"]) <= 0)
    later = _first(state, "car_rentals", lambda r: r["status"] == "confirmed" and days_until(r["pickup_date"]) > 0)
    assert rules.rental_started(state, "cancel_car_rental", {"car_rental_id": started["car_rental_id"]})
    assert not rules.rental_started(state, "cancel_car_rental", {"car_rental_id": later["car_rental_id"]})


def test_driver_age(state):
    trip = _open_trip(state, lambda t: _person(state, t, lambda a: 21 <= a < 25) is not None)
    young, _ = _person(state, trip, lambda a: 21 <= a < 25)
    assert rules.driver_age(state, "book_car_rental", _car(trip, "CAR_SUV", young))
    assert rules.driver_age(state, "book_car_rental", _car(trip, "CAR_LUXURY", young))
    assert not rules.driver_age(state, "book_car_rental", _car(trip, "CAR_COMPACT", young))
    trip = _open_trip(state, lambda t: _person(state, t, lambda a: a >= 31) is not None)
    older, _ = _person(state, trip, lambda a: a >= 31)
    assert not rules.driver_age(state, "book_car_rental", _car(trip, "CAR_LUXURY", older))


def test_one_way_rentals(state):
    trip = _open_trip(state)
    assert rules.one_way_rentals(state, "book_car_rental", _car(trip, "CAR_COMPACT", "x", "Lisbon", "Madrid"))
    assert rules.one_way_rentals(state, "book_car_rental", _car(trip, "CAR_VAN", "x", "Lisbon", "Porto"))
    assert rules.one_way_rentals(state, "book_car_rental", _car(trip, "CAR_LUXURY", "x", "Rome", "Florence"))
    assert not rules.one_way_rentals(state, "book_car_rental", _car(trip, "CAR_COMPACT", "x", "Lisbon", "Porto"))
    assert not rules.one_way_rentals(state, "book_car_rental", _car(trip, "CAR_LUXURY", "x", "Rome", "rome"))


def test_points_rules(state):
    trip = _open_trip(state)
    dep = next(d for _, d in state["departures"].scan() if d["tour_code"] == "TOUR_OPO_DOURO")  # 129 a person
    tour = {"itinerary_id": trip["itinerary_id"], "departure_id": dep["departure_id"], "participants": 2,
            "payment_id": "x"}
    assert rules.points_at_most_half(state, "book_tour", {**tour, "points": 13000})  # 130 > 129
    assert not rules.points_at_most_half(state, "book_tour", {**tour, "points": 12000})
    stay = {"itinerary_id": trip["itinerary_id"], "hotel_code": "HTL_LIS_TEJO", "room_type": "standard",
            "rate_plan": "SAVER", "check_in": "2025-11-01", "check_out": "2025-11-03", "guests": 1, "payment_id": "x"}
    assert rules.points_at_most_half(state, "book_hotel_stay", {**stay, "points": 8000})  # 80 > half of 152
    assert not rules.points_at_most_half(state, "book_hotel_stay", {**stay, "points": 7000})
    assert rules.points_in_blocks(state, "book_tour", {**tour, "points": 1500})
    assert not rules.points_in_blocks(state, "book_tour", {**tour, "points": 2000})
    assert rules.points_not_for_cars(state, "book_car_rental", _car(trip, "CAR_COMPACT", "x", points=1000))
    assert not rules.points_not_for_cars(state, "book_car_rental", _car(trip, "CAR_COMPACT", "x"))


def test_trip_open(state):
    done = _first(state, "itineraries", lambda t: t["status"] == "completed")
    off = _first(state, "itineraries", lambda t: t["status"] == "cancelled")
    going = _open_trip(state)
    for action in rules.BOOKINGS:
        assert rules.trip_open(state, action, {"itinerary_id": done["itinerary_id"]})
        assert rules.trip_open(state, action, {"itinerary_id": off["itinerary_id"]})
        assert not rules.trip_open(state, action, {"itinerary_id": going["itinerary_id"]})


def test_every_rule_names_a_declared_reason_and_the_tasks_meet_it(domain):
    check_rules_on_tasks(domain, rules)


# --------------------------------------------------------------------------- hand tasks


def test_hand_tasks_score_one_and_refusals_are_grounded(domain):
    hand = domain.tasks("hand")
    assert len(hand) >= 3 and all(check_task(domain, t) is None for t in hand)
    assert len({r for t in hand for r in t.gold.reasons}) >= 3
    tables = domain.database.tables
    internal = [*tables["itineraries"], *tables["travellers"], *tables["stays"], *tables["tour_bookings"]]
    for task in hand:  # the traveller names trips by trip number, never by internal id
        assert not any(key in task.user.instruction for key in internal)


# --------------------------------------------------------------------------- Tracer hints and built splits


def test_the_packs_tracer_hints_keep_the_graph_and_ground_every_write(domain):
    from tau_emotion.domain_packs.travel.tracer_hints import HINTS
    from tau_emotion.tracer.graph import build_graph

    check_graph(domain, build_graph(domain, HINTS), HINTS)
    writes = {name for name, t in domain.toolset.tools.items() if t.writes}
    assert set(HINTS.goals) == writes


def test_every_refusal_the_hints_ask_for_quotes_the_policy_and_names_a_declared_reason(domain):
    from tau_emotion.domain_packs.travel import tracer_hints
    from tau_emotion.tracer.provenance import phrase_in

    source = open(tracer_hints.__file__, encoding="utf-8").read()
    told = [r for table in (tracer_hints._STAY_REFUSALS, tracer_hints._CAR_REFUSALS) for r in table.values()]
    keywords = [r.keyword for r in told] + list(tracer_hints._POINTS_WORDS.values())
    keywords += ["completed or cancelled trip", "48 hours", "before its pick-up date"]
    for keyword in keywords:  # the Tracer finds a refusal's keyword in the written policy, or drops the task
        assert phrase_in(keyword, domain.policy) and f'"{keyword}"' in source, keyword
    named = {r.reason for r in told} | set(tracer_hints._POINTS_WORDS) | {"trip_closed", "tour_cancellation_window",
                                                                        "rental_started"}
    assert named == set(domain.refusal_reasons)  # every declared reason can be challenged


def test_tracer_built_test_split_meets_its_targets_and_obeys_the_rules(domain):
    tasks = domain.tasks("test")
    assert len(tasks) == 58 and all(t.meta["source"] == "tracer" for t in tasks)
    assert sum(len(t.gold.actions) for t in tasks) / len(tasks) >= 6.5
    challenged = [t for t in tasks if refused_calls(t)]
    assert len(challenged) >= 10 and len({r for t in challenged for r in t.gold.reasons}) >= 3
    assert sum(bool(decision_branches(t)) for t in tasks) >= 0.2 * len(tasks)
    tables = domain.database.tables
    internal = [*tables["itineraries"], *tables["travellers"], *tables["stays"], *tables["tour_bookings"],
                *tables["car_rentals"]]
    for task in tasks:
        assert not any(key in task.user.instruction for key in internal), task.id
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
    train = domain.tasks("train") if "train" in domain.splits else []
    assert not {t.meta["user"] for t in tasks} & {t.meta["user"] for t in train}



def _drafts(*calls):
    from types import SimpleNamespace

    return SimpleNamespace(drafts=[SimpleNamespace(goal=name, arguments=dict(args)) for name, args in calls])


def test_a_stay_asked_for_nights_its_trip_already_holds_is_no_itinerary(domain):
    """Issue 34 item 5, itineraries that hold together: a stay asked for (granted or refused) on nights another stay
    of the trip holds is rejected by the world check (travel-test-023 once added a room at Marais Atelier Hotel for
    September 21-23 and asked to stretch the stay there to September 22); the night of a check-out is free."""
    from tau_emotion.core.reward import replay
    from tau_emotion.domain_packs.travel.tracer_situation import _double_stay

    state = domain.database.state()
    stay = next(s for _, s in state["stays"].scan() if s["status"] == "confirmed")
    trip = stay["itinerary_id"]
    end = (dt.date.fromisoformat(stay["check_out"]) + dt.timedelta(days=2)).isoformat()
    same = _drafts(("book_hotel_stay", {"itinerary_id": trip, "check_in": stay["check_in"], "check_out": stay["check_out"]}))
    assert "which holds" in _double_stay(state, state, same)
    # the two requests of one task clash with each other even when the trip held neither
    twice = _drafts(("book_hotel_stay", {"itinerary_id": trip, "check_in": stay["check_out"], "check_out": end}),
                    ("book_hotel_stay", {"itinerary_id": trip, "check_in": stay["check_out"], "check_out": end}))
    assert _double_stay(state, state, twice) is not None
    after_checkout = _drafts(("book_hotel_stay", {"itinerary_id": trip, "check_in": stay["check_out"], "check_out": end}))
    others = [s for s in state["stays"].scan() if s[1]["itinerary_id"] == trip and s[1]["status"] == "confirmed"
              and s[1]["check_in"] < end and stay["check_out"] < s[1]["check_out"]]
    assert (_double_stay(state, state, after_checkout) is None) == (not others)
    # every committed test task's stay requests hold together (its gold's writes and its refused calls)
    for task in domain.tasks("test"):
        calls = [(a.name, a.arguments) for a in task.gold.actions if domain.toolset[a.name].writes]
        calls += [(r.call.name, r.call.arguments) for r in (task.plan.refusals if task.plan else [])]
        assert _double_stay(state, replay(domain, task), _drafts(*calls)) is None, task.id
