"""Behaviour of the airline pack's tools, rules and tasks against its real generated database."""

from __future__ import annotations

import json
import sys
from importlib.resources import files

import pytest

from tau_emotion.core.domain import Domain
from tau_emotion.core.models import Action
from tau_emotion.domain_packs.airline import generate_db, rules, tau_register_domains
from tau_emotion.domain_packs.airline.tools import BAG_FEE
from tau_emotion.tracer.plan import policy_challenge, refused_calls


@pytest.fixture(scope="module")
def domain() -> Domain:
    found: list[Domain] = []
    tau_register_domains(found.append)
    assert [d.name for d in found] == ["airline"]
    return found[0]


@pytest.fixture()
def state(domain):
    return domain.database.state()


def call(domain, state, name, **arguments):
    text, is_error = domain.toolset.call(state, name, arguments)
    assert not is_error, text
    return json.loads(text) if text[:1] in "[{" else text


def fail(domain, state, name, **arguments) -> str:
    text, is_error = domain.toolset.call(state, name, arguments)
    assert is_error, text
    return text


# --------------------------------------------------------------------------- data


def test_database_scale_and_shape(domain):
    tables = domain.database.tables
    assert set(tables) == {"users", "flights", "reservations", "airports"}
    assert len(tables["users"]) == 500
    assert len(tables["flights"]) == 300
    assert len(tables["reservations"]) == 2000
    assert len(tables["airports"]) == 25
    for rid, res in list(tables["reservations"].items())[:50]:
        assert res["reservation_id"] == rid
        assert rid in tables["users"][res["user_id"]]["reservations"]
    size = files("tau_emotion.domain_packs.airline").joinpath("data/db.json").stat().st_size
    assert size < 8_000_000


@pytest.mark.slow
def test_generator_is_deterministic_and_matches_the_shipped_file():
    shipped = json.loads(files("tau_emotion.domain_packs.airline").joinpath("data/db.json").read_text())
    assert generate_db.generate(0) == shipped
    assert generate_db.generate(1) != shipped


def test_tool_schemas_are_derived(domain):
    names = set(domain.toolset.tools)
    assert len(names) >= 14
    assert {"book_reservation", "cancel_reservation", "calculate", "transfer_to_human_agents"} <= names
    assert domain.toolset.is_terminal("transfer_to_human_agents")
    assert domain.toolset["cancel_reservation"].writes
    assert not domain.toolset["get_user_details"].writes
    book = domain.toolset["book_reservation"].parameters
    assert book["properties"]["cabin"]["enum"] == ["basic_economy", "economy", "business"]
    assert "payment_methods" in book["required"]


def test_policy_and_graph_load(domain):
    assert "24 hours" in domain.policy
    assert "2024-05-15 15:00 EST" in domain.policy
    edges = domain.graph_edges
    assert edges and all(a in domain.toolset and b in domain.toolset for a, b in edges)


# --------------------------------------------------------------------------- tools


def test_unknown_ids_are_tool_errors(domain, state):
    assert "reservation 'NOPE00' not found" in fail(domain, state, "get_reservation_details", reservation_id="NOPE00")
    assert "user 'nobody' not found" in fail(domain, state, "get_user_details", user_id="nobody")
    assert "YYYY-MM-DD" in fail(domain, state, "search_direct_flight", origin="JFK", destination="MIA", date="5/24")


def test_calculate_is_arithmetic_only(domain, state):
    assert call(domain, state, "calculate", expression="(135 + 177) * 2") == "624"
    assert call(domain, state, "calculate", expression="10 / 3") == "3.33"
    assert call(domain, state, "calculate", expression="-1,234 + 34") == "-1200"
    for bad in ("__import__('os').system('true')", "2 ** 10", "open('x')", "[1][0]", "True + 1"):
        assert "only numbers" in fail(domain, state, "calculate", expression=bad)
    assert "division by zero" in fail(domain, state, "calculate", expression="1 / 0")


def test_search_returns_only_bookable_flights(domain, state):
    direct = call(domain, state, "search_direct_flight", origin="DFW", destination="IAD", date="2024-05-28")
    assert direct and all(f["status"] == "available" and "prices" in f for f in direct)
    assert call(domain, state, "search_direct_flight", origin="DFW", destination="IAD", date="2024-05-10") == []
    pairs = call(domain, state, "search_onestop_flight", origin="SEA", destination="MIA", date="2024-05-23")
    assert pairs and all(a["destination"] == b["origin"] and b["destination"] == "MIA" for a, b in pairs)


def test_booking_deducts_gift_card_and_takes_seats(domain, state):
    before = call(domain, state, "search_direct_flight", origin="DEN", destination="BOS", date="2024-05-24")[0]
    price = before["prices"]["economy"]
    res = call(
        domain,
        state,
        "book_reservation",
        user_id="keiko_silva_2315",
        origin="DEN",
        destination="BOS",
        flight_type="one_way",
        cabin="economy",
        flights=[{"flight_number": "SKY968", "date": "2024-05-24"}],
        passengers=[{"first_name": "Keiko", "last_name": "Silva", "dob": "1990-02-15"}],
        payment_methods=[
            {"payment_id": "gift_card_6352277", "amount": 279},
            {"payment_id": "credit_card_1296271", "amount": price + 50 - 279},
        ],
        total_baggages=4,
        nonfree_baggages=1,
        insurance="no",
    )
    user = call(domain, state, "get_user_details", user_id="keiko_silva_2315")
    assert user["payment_methods"]["gift_card_6352277"]["amount"] == 0
    assert user["reservations"][-1] == res["reservation_id"]
    assert res["created_at"] == "2024-05-15T15:00:00"
    after = call(domain, state, "search_direct_flight", origin="DEN", destination="BOS", date="2024-05-24")[0]
    assert after["available_seats"]["economy"] == before["available_seats"]["economy"] - 1


def test_booking_refuses_wrong_totals_and_overdrawn_cards(domain, state):
    args = dict(
        user_id="keiko_silva_2315",
        origin="DEN",
        destination="BOS",
        flight_type="one_way",
        cabin="economy",
        flights=[{"flight_number": "SKY968", "date": "2024-05-24"}],
        passengers=[{"first_name": "Keiko", "last_name": "Silva", "dob": "1990-02-15"}],
        total_baggages=0,
        nonfree_baggages=0,
        insurance="no",
    )
    assert "total price is 376" in fail(
        domain, state, "book_reservation", payment_methods=[{"payment_id": "credit_card_1296271", "amount": 1}], **args
    )
    assert "has only 279" in fail(
        domain, state, "book_reservation", payment_methods=[{"payment_id": "gift_card_6352277", "amount": 376}], **args
    )
    assert state.changed() == {}


def test_cancel_refunds_original_payments_and_is_not_repeatable(domain, state):
    res = call(domain, state, "cancel_reservation", reservation_id="VLM1VV")
    assert res["status"] == "cancelled" and res["refund_total"] == 671
    assert res["payment_history"][-1] == {"payment_id": "gift_card_5909137", "amount": -671}
    user = call(domain, state, "get_user_details", user_id="mei_brooks_6002")
    assert user["payment_methods"]["gift_card_5909137"]["amount"] == 4 + 671
    assert "already cancelled" in fail(domain, state, "cancel_reservation", reservation_id="VLM1VV")


def test_cancel_keeps_certificate_money_and_refuses_flown_trips(domain, state):
    res = call(domain, state, "cancel_reservation", reservation_id="ZDUHRG")  # paid with certificate + gift card
    assert res["refund_total"] == 151
    assert "already departed" in fail(domain, state, "cancel_reservation", reservation_id="L9MSJP")


def test_flight_change_charges_difference_and_bag_fee(domain, state):
    res = call(
        domain,
        state,
        "update_reservation_flights",
        reservation_id="VRSB5Q",
        cabin="economy",
        flights=[{"flight_number": "SKY655", "date": "2024-05-24"}, {"flight_number": "SKY817", "date": "2024-05-28"}],
        payment_id="credit_card_3649188",
    )
    assert res["payment_history"][-1] == {"payment_id": "credit_card_3649188", "amount": -72}
    assert res["flights"][0]["price"] == 234  # a kept flight keeps its price
    res = call(
        domain,
        state,
        "update_reservation_baggages",
        reservation_id="VRSB5Q",
        total_baggages=5,
        nonfree_baggages=3,
        payment_id="credit_card_3649188",
    )
    assert res["payment_history"][-1]["amount"] == 2 * BAG_FEE
    assert "cannot go down" in fail(
        domain,
        state,
        "update_reservation_baggages",
        reservation_id="VRSB5Q",
        total_baggages=5,
        nonfree_baggages=0,
        payment_id="credit_card_3649188",
    )
    assert "certificate" in fail(
        domain,
        state,
        "update_reservation_baggages",
        reservation_id="VRSB5Q",
        total_baggages=6,
        nonfree_baggages=4,
        payment_id="certificate_6625218",
    )


def test_passenger_count_cannot_change(domain, state):
    one = [{"first_name": "Ann", "last_name": "Lee", "dob": "1990-01-01"}]
    assert "cannot change" in fail(
        domain, state, "update_reservation_passengers", reservation_id="ZTGLR0", passengers=one
    )


def test_certificate_ids_are_deterministic(domain):
    texts = []
    for _ in range(2):
        s = domain.database.state()
        texts.append(call(domain, s, "send_certificate", user_id="mei_brooks_6002", amount=100))
    assert texts[0] == texts[1] and "certificate_" in texts[0]


# --------------------------------------------------------------------------- rules


def test_basic_economy_flight_change_is_a_violation(domain, state):
    moved = {
        "reservation_id": "1TKEB0",
        "cabin": "basic_economy",
        "payment_id": "credit_card_4455356",
        "flights": [{"flight_number": "SKY295", "date": "2024-05-28"}],
    }
    assert "basic economy" in rules.basic_economy_flights_fixed(state, "update_reservation_flights", moved)
    upgrade = dict(moved, cabin="economy", flights=[{"flight_number": "SKY295", "date": "2024-05-26"}])
    assert domain.violations(state, Action(name="update_reservation_flights", arguments=upgrade)) == []


def test_cancellation_rules(state):
    assert "cannot be cancelled" in rules.cancellation_allowed(
        state, "cancel_reservation", {"reservation_id": "ZTGLR0"}
    )
    for allowed in ("UYYHQF", "QRTF8P", "BD270U", "VLM1VV"):  # recent, business, insured, airline-cancelled
        assert rules.cancellation_allowed(state, "cancel_reservation", {"reservation_id": allowed}) is None
    assert "flown" in rules.cancellation_allowed(state, "cancel_reservation", {"reservation_id": "Y43ERC"})


def test_route_bags_payment_and_compensation_rules(state):
    wrong = {
        "reservation_id": "GUETZL",
        "cabin": "economy",
        "payment_id": "credit_card_3649188",
        "flights": [{"flight_number": "SKY211", "date": "2024-05-30"}],
    }
    assert "one-way trip" in rules.route_and_trip_type_kept(state, "update_reservation_flights", wrong)
    bags = {"reservation_id": "G8V19T", "total_baggages": 5, "nonfree_baggages": 1, "payment_id": "credit_card_1962535"}
    assert "should be 2" in rules.baggage_rules(state, "update_reservation_baggages", bags)
    assert "removed" in rules.baggage_rules(state, "update_reservation_baggages", dict(bags, total_baggages=0))
    assert rules.compensation_eligible(state, "send_certificate", {"user_id": "mei_brooks_6002", "amount": 100}) is None
    assert "one of [100]" in rules.compensation_eligible(
        state, "send_certificate", {"user_id": "mei_brooks_6002", "amount": 500}
    )
    assert "no cancelled or delayed" in rules.compensation_eligible(
        state, "send_certificate", {"user_id": "amelia_silva_2834", "amount": 100}
    )
    two_certs = {
        "user_id": "aisha_nguyen_6056",
        "passengers": [{}],
        "payment_methods": [
            {"payment_id": "certificate_3323695", "amount": 1},
            {"payment_id": "certificate_4714832", "amount": 1},
        ],
    }
    assert "at most 1 certificate" in rules.booking_limits(state, "book_reservation", two_certs)
    assert (
        rules.change_paid_by_card(state, "update_reservation_baggages", dict(bags, payment_id="certificate_5978888"))
        is not None
    )


def test_rules_ignore_malformed_arguments(domain, state):
    junk = [{}, {"reservation_id": 5}, {"reservation_id": "ZTGLR0", "flights": "x", "total_baggages": "many"}]
    for name in ("book_reservation", "update_reservation_flights", "update_reservation_baggages", "send_certificate"):
        for arguments in junk:
            domain.violations(state, Action(name=name, arguments=arguments))  # must not raise


# --------------------------------------------------------------------------- tasks


def test_hand_tasks_are_many_varied_and_long_enough(domain):
    tasks = domain.tasks("hand")
    assert len(tasks) >= 22 and all(t.meta["source"] == "hand" for t in tasks)
    assert sum(len(t.gold.actions) for t in tasks) / len(tasks) >= 5
    assert all(t.user.known.get("user_id") and t.user.intents for t in tasks)
    reads_only = [t for t in tasks if not any(domain.toolset[a.name].writes for a in t.gold.actions)]
    assert len(reads_only) >= 8 and all(t.gold.outputs or t.gold.reasons for t in reads_only if t.id != "airline-023")
    assert all(a.name in domain.toolset for t in tasks for a in t.gold.actions)


def test_tracer_splits_are_built_and_long_enough(domain):
    test, train = domain.tasks("test"), domain.tasks("train")
    assert len(test) == 58 and len(train) == 600
    assert all(t.meta["source"] == "tracer" for t in test + train)
    assert sum(len(t.gold.actions) for t in test) / len(test) >= 6.5
    assert sum(policy_challenge(t) for t in test) >= 8
    assert not {t.id for t in test} & {t.id for t in train}


@pytest.mark.slow
@pytest.mark.parametrize("split", ["hand", "test", "train"])
def test_every_gold_replays_policy_valid_and_deterministic(domain, split):
    from tau_emotion.domain_packs.airline.tracer_hints import HINTS
    from tau_emotion.tracer.graph import build_graph

    edges = set(domain.graph_edges) if split == "hand" else set(build_graph(domain, HINTS).graph.edges)
    base = domain.database.content_hash
    for task in domain.tasks(split):
        hashes = []
        for _ in range(2):
            state = domain.database.state()
            for action in task.gold.actions:
                if domain.toolset[action.name].writes:
                    assert domain.violations(state, action) == [], (task.id, action.name)
                text, is_error = domain.toolset.call(state, action.name, action.arguments)
                assert not is_error, (task.id, action.name, text)
            hashes.append(state.content_hash)
        assert hashes[0] == hashes[1], task.id
        writes = any(domain.toolset[a.name].writes for a in task.gold.actions)
        assert (hashes[0] != base) == writes, task.id
        names = [a.name for a in task.gold.actions]
        assert set(zip(names, names[1:], strict=False)) <= edges, task.id


def test_policy_challenges_are_refused_requests_the_rules_forbid(domain):
    challenges = [t for t in domain.tasks("test") + domain.tasks("train") if refused_calls(t)]
    assert len(challenges) >= 50
    for task in challenges:
        for refused in refused_calls(task):
            state = domain.database.state()
            for action in task.gold.actions[: refused["after"]]:
                domain.toolset.call(state, action.name, action.arguments)
            assert domain.violations(state, Action(name=refused["name"], arguments=refused["arguments"])), task.id
        handover = any(domain.toolset.is_terminal(a.name) for a in task.gold.actions)
        assert task.gold.outputs or task.gold.reasons or handover, task.id


def test_send_certificate_for_a_named_reservation(domain, state):
    text = call(domain, state, "send_certificate", user_id="mei_brooks_6002", amount=100, reservation_id="VLM1VV")
    assert "certificate_" in text
    assert "does not belong" in fail(domain, state, "send_certificate", user_id="mei_brooks_6002", amount=100,
                                     reservation_id="ZTGLR0")
    named = {"user_id": "mei_brooks_6002", "amount": 100, "reservation_id": "VLM1VV"}
    assert rules.compensation_eligible(state, "send_certificate", named) is None
    assert "one of [100]" in rules.compensation_eligible(state, "send_certificate", dict(named, amount=50))
    other = rules.compensation_eligible(state, "send_certificate", dict(named, reservation_id="ZTGLR0"))
    assert "does not belong" in other


def test_tracer_hints_are_declared(domain):
    from tau_emotion.core.manager import get_plugin_manager
    from tau_emotion.domain_packs.airline import tracer_hints
    from tau_emotion.tracer.hints import load_hints

    pm = get_plugin_manager(["tracer", "airline"])
    assert pm.hook.tau_tracer_hints(domain=domain) is tracer_hints.HINTS
    assert pm.hook.tau_tracer_hints(domain=pm.catalog("domains").get("airline")) is not None
    hints = load_hints(domain, pm)
    assert hints.goals is tracer_hints.HINTS.goals and hints.persona is tracer_hints.HINTS.persona
    assert hints.handoff_tool == "transfer_to_human_agents"  # the default: the domain's only terminal tool
    assert hints.can_ground and hints.entry_tools == ["get_user_details"]
    assert hints.goal_weights["send_certificate"] == 2.5 and hints.goal_weights["cancel_reservation"] == 1.0
    assert {"book_reservation", "cancel_reservation", "send_certificate"} <= set(hints.goals)


def test_instructions_are_worded_as_a_traveller_would(domain):
    """The hints' `fact_phrase` says facts in plain words: dates as "May 17", no form field names, a card once."""
    import re

    from tau_emotion.domain_packs.airline.tracer_hints import fact_phrase

    # as a customer has it, not a form's "Your reservation number is ..." (issue 34 item 7)
    assert fact_phrase("reservation_ids", ["UN9DQT", "0NDGD6"]) == "you have the reservation numbers to hand: UN9DQT and 0NDGD6"
    assert fact_phrase("reservation_id", "UN9DQT") == "you have the reservation number to hand: UN9DQT"
    assert fact_phrase("payment_method", "gift card ending in 2799") == "you use your gift card ending in 2799"
    assert fact_phrase("card_last_four_digits", "2799") == ""  # the payment method's words say it
    assert fact_phrase("payment", "the Visa credit card") == "you pay with your Visa credit card"
    assert fact_phrase("travel_date", "2024-05-17") == "you leave on May 17"
    assert fact_phrase("new_travel_date", "2024-05-21") == "you want to fly on May 21 instead"
    # a booking's bags and insurance are worded as its preferences say them, so they are not said twice
    assert fact_phrase("travel_insurance", "yes") == "take the travel insurance"
    assert fact_phrase("travel_insurance", "no") == "skip the travel insurance"
    assert fact_phrase("checked_bags", 0) == "travel without checked bags"
    assert fact_phrase("checked_bags", 1) == "check one bag"
    assert fact_phrase("total_checked_bags", 2) == "you want 2 checked bags in total"
    assert fact_phrase("trip_type", "one way") == "the trip is one-way"
    assert fact_phrase("trip_type", "round trip") == "it is a round trip"
    assert fact_phrase("cabin", "business") == "you fly business class"
    assert fact_phrase("new_passenger", {"first_name": "Sofia", "last_name": "Lindqvist", "dob": "1990-12-24"}) == \
        "the new passenger is Sofia Lindqvist, born December 24, 1990"
    assert fact_phrase("flight_number", "SKY386") == "the flight number is SKY386"
    assert fact_phrase("first_name", "Ana") is None  # the Tracer's own wording
    tasks = [t for t in domain.tasks(None) if t.split in ("test", "train")]
    assert tasks
    for task in tasks:
        # the pack's wording of each fact this task's user knows (since issue 21 the instruction says a fact in its
        # request's own words, or in this wording when the request does not already say it)
        sentences = [p for k, v in task.user.known.items() if (p := fact_phrase(k, v))]
        facts = " ".join(sentences)
        for mechanical in ("the payment method is", "card last four digits", "the travel date", "the trip type",
                           "the checked bags", "the travel insurance is", "the reservation id", "the new cabin",
                           "the trip destination", "the trip origin", "the new travel date", " dob "):
            assert mechanical not in facts, (task.id, mechanical)
        assert not re.search(r"\b2024-\d\d-\d\d\b", facts), task.id  # dates read as a person says them
        for sentence in sentences:  # a card said once per intent: no separate "last four digits"
            for card in re.findall(r"ending in (\d{4})", sentence):
                assert sentence.count(card) == 1, (task.id, card)
        for value in (v for k, v in task.user.known.items() if k in ("reservation_id", "flight_number")):
            assert value in task.user.instruction, (task.id, value)  # ids stay verbatim


def test_a_flight_of_today_is_not_dated_again():
    """airline-test-024 (issue 21 review): "the status of your flight from San Diego to New York JFK today. ... the
    flight is on May 15" said the day twice. A flight of today is said by its request's "today"; another day is
    still said as a month and day."""
    from tau_emotion.domain_packs.airline.tracer_hints import TODAY, fact_phrase

    assert fact_phrase("flight_date", TODAY) == ""
    assert fact_phrase("flight_date", "2024-05-28") == "the flight is on May 28"
    assert fact_phrase("flight_dates", [TODAY, "2024-05-28"]) == "the flight is on May 28"
    assert fact_phrase("flight_dates", ["2024-05-16", "2024-05-28"]) == "the flights are on May 16 and May 28"


def _cancel_drafts(domain, tries: int = 240):
    """(persona, cancellation draft) the pack's grounder makes for many personas, with and without a challenge."""
    import random

    from tau_emotion.domain_packs.airline.tracer_hints import HINTS
    from tau_emotion.tracer.hints import GroundingContext, Ungrounded

    out = []
    for seed in range(tries):
        ctx = GroundingContext(domain=domain, state=domain.database.state(), persona=None, rng=random.Random(seed), rates=HINTS.rates)
        try:
            ctx.persona = HINTS.persona(ctx)
            ctx.want_challenge = seed % 2 == 1
            found = HINTS.goals["cancel_reservation"](ctx)
        except Ungrounded:
            continue
        if found is not None:
            out.append((ctx.persona, found))
    return out


def test_cancellation_reasons_fit_the_trip_and_the_caller(domain):
    """Issue 21 review (airline-test-011, -008): "you no longer need the rest of your trip" for a trip whose only
    flight flew on May 10, and "because you no longer need to travel" for a reservation whose passengers do not
    include the caller. The situation check rejects both; the grounder picks a partly flown trip for the first and
    lets a caller who booked for others say their plans changed."""
    from types import SimpleNamespace

    from tau_emotion.domain_packs.airline.tracer_situation import TODAY, situation

    state = domain.database.state()
    reservations = state["reservations"]
    drafts = _cancel_drafts(domain)
    kinds = {d.kind for _, d in drafts}
    assert {"cancel", "cancel_after_departure", "cancel_not_allowed"} <= kinds, kinds
    for persona, d in drafts:
        res = reservations.peek(d.arguments["reservation_id"])
        me = (persona.facts["first_name"], persona.facts["last_name"])
        aboard = any((p["first_name"], p["last_name"]) == me for p in res["passengers"])
        context = d.context.lower()
        assert situation(state, SimpleNamespace(persona=persona, drafts=[d], occasion=None)) is None, (d.kind, context)
        if "rest of" in context:
            assert any(leg["date"] >= TODAY for leg in res["flights"]), res["reservation_id"]
        if "need to travel" in context or "rather not travel" in context:
            assert aboard, (res["reservation_id"], context)

    def cand(rid, persona, context):
        from tau_emotion.tracer.hints import IntentDraft

        d = IntentDraft(kind="cancel", goal="cancel_reservation", arguments={"reservation_id": rid}, request=["x"],
                        context=context)
        return SimpleNamespace(persona=persona, drafts=[d], occasion=None)

    from tau_emotion.tracer.hints import Persona

    def owner(res):
        u = state["users"].peek(res["user_id"])
        return Persona(name="x", facts={"first_name": u["name"]["first_name"], "last_name": u["name"]["last_name"]})

    rows = [r for _, r in reservations.scan()]
    done = next(r for r in rows if all(leg["date"] < TODAY for leg in r["flights"]))
    why = situation(state, cand(done["reservation_id"], owner(done), "{{I}} no longer need the rest of {{my}} trip"))
    assert why and "before" in why and done["reservation_id"] in why
    part = next(r for r in rows if any(leg["date"] < TODAY for leg in r["flights"])
                and any(leg["date"] >= TODAY for leg in r["flights"]))
    assert situation(state, cand(part["reservation_id"], owner(part), "{{I}} no longer need the rest of {{my}} trip")) is None
    ahead = [r for r in rows if all(leg["date"] >= TODAY for leg in r["flights"])]
    other = next(r for r in ahead if not any((p["first_name"], p["last_name"]) == (owner(r).facts["first_name"],
                                                                                   owner(r).facts["last_name"])
                                             for p in r["passengers"]))
    why = situation(state, cand(other["reservation_id"], owner(other), "{{I}} no longer need to travel"))
    assert why and "does not fly on" in why
    assert situation(state, cand(other["reservation_id"], owner(other), "{{my}} plans changed")) is None


def test_a_caller_who_is_the_passenger_speaks_in_the_first_person(domain):
    """Issue 21 review (airline-test-041, -031): "correct the date of birth of Amara Lopez" written for Amara Lopez.
    A passenger correction or replacement of the caller's own entry says "your date of birth" / "your seat", and
    the caller's name is not stated as a separate fact; another passenger is still named."""
    import random

    from tau_emotion.domain_packs.airline.tracer_hints import HINTS
    from tau_emotion.tracer.hints import GroundingContext, Ungrounded

    own = other = 0
    for seed in range(400):
        ctx = GroundingContext(domain=domain, state=domain.database.state(), persona=None, rng=random.Random(seed), rates=HINTS.rates)
        try:
            ctx.persona = HINTS.persona(ctx)
            found = HINTS.goals["update_reservation_passengers"](ctx)
        except Ungrounded:
            continue
        if found is None or found.kind not in ("fix_passenger", "replace_passenger"):
            continue
        name = f"{ctx.persona.facts['first_name']} {ctx.persona.facts['last_name']}"
        request = " ".join(found.request)
        said = [v for k, v in found.facts.items() if k in ("passenger_to_correct", "passenger_to_replace")]
        if "{{my}} date of birth" in request or "{{my}} seat" in request:
            own += 1
            assert name not in request and not said, (request, found.facts)
        else:
            other += 1
            assert said and said[0] in request and said[0] != name, (request, found.facts)
    assert own >= 3 and other >= 10, (own, other)


def test_pack_import_is_light():
    """Importing the pack and its tools loads no heavy library (in a fresh interpreter: this process's
    modules depend on which tests ran before)."""
    import subprocess

    code = ("import sys, tau_emotion.domain_packs.airline, tau_emotion.domain_packs.airline.tools; "
            "print(sorted({'torch', 'transformers', 'trl', 'vllm', 'ray'} & set(sys.modules)))")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0 and done.stdout.strip() == "[]", done.stdout + done.stderr
