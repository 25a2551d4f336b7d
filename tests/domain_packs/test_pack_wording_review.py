"""Pack-level wording and situation fixes from the issue-21 review of the rebuilt travel and school test splits:
a fact the request already says is not said again ("places for you. ... The places are for you alone.", "using 6,500
of your points. You want to use 6,500 loyalty points.", "an official transcript ... You want 1 copies."), the caller
is never named in the third person ("with you driving. The driver is Pablo Olsen."), a tour's city is said in its
request rather than in a form-like "The city is Nice.", and a school task does not both pay the balance in full and
split it into monthly payments."""

from __future__ import annotations

import importlib
import random

import pytest

from tau_emotion.tracer.hints import GroundingContext, Ungrounded


def _domain(pack: str):
    found = []
    importlib.import_module(f"tau_emotion.domain_packs.{pack}").tau_register_domains(found.append)
    return found[0]


def _hints(pack: str):
    return importlib.import_module(f"tau_emotion.domain_packs.{pack}.tracer_hints")


def _contexts(pack: str, seeds: range):
    """A fresh grounding context with a persona for each seed that has one."""
    domain, hints = _domain(pack), _hints(pack).HINTS
    for seed in seeds:
        ctx = GroundingContext(domain=domain, state=domain.database.state(), persona=None, rng=random.Random(seed), rates=hints.rates)
        try:
            ctx.persona = hints.persona(ctx)
        except Ungrounded:
            continue
        yield ctx


def _ground(grounder, ctx):
    try:
        return grounder(ctx)
    except Ungrounded:
        return None


def test_travel_wording_says_each_fact_once_and_never_names_the_caller():
    phrase = _hints("travel").fact_phrase
    assert phrase("participants", 1) == ""  # the request said "places for you"
    assert phrase("participants", 2) == "the places are for 2 people"
    assert phrase("points", 6500) == ""  # the request said "using 6,500 of your points"
    assert phrase("driver_name", "Pablo Olsen") == ""  # the request said "with you driving"
    assert phrase("guests", 1) == "the room is for you alone"  # a hotel request does not say its guests


def test_travel_requests_name_the_driver_the_points_and_the_tours_city():
    hints = _hints("travel")
    cars = tours = 0
    for ctx in _contexts("travel", range(120)):
        ctx.want_challenge = False
        car = _ground(hints.ground_book_car_rental, ctx)
        if car is not None:
            cars += 1
            assert "driver" not in car.facts and car.facts["driver_name"] == car.arguments["driver_name"]
            for request in car.request:
                assert " driving" in request or " at the wheel" in request
                assert (car.arguments["driver_name"] in request) != ("{{me}}" in request)
        tour = _ground(hints.ground_book_tour, ctx)
        if tour is not None:
            tours += 1
            for request in tour.request:
                assert tour.facts["city"] in request
                if tour.facts.get("points"):
                    assert f"{tour.facts['points']:,} of" in request
    assert cars >= 5 and tours >= 5


def test_school_transcript_copies_said_once():
    phrase = _hints("school").fact_phrase
    assert phrase("copies", 1) == ""  # "an official transcript"
    assert phrase("copies", 3) == "you want 3 copies"


@pytest.mark.parametrize("first,then", [("ground_make_payment", "ground_enroll_payment_plan"),
                                        ("ground_enroll_payment_plan", "ground_make_payment")])
def test_school_task_does_not_pay_in_full_and_split_the_balance(first, then):
    hints = _hints("school")
    tried = 0
    for ctx in _contexts("school", range(200)):
        ctx.want_challenge = False
        earlier = _ground(getattr(hints, first), ctx)
        if earlier is None:
            continue
        alone = _ground(getattr(hints, then), ctx)  # the same caller may ask for it on its own
        if alone is None:
            continue
        tried += 1
        ctx.history = [earlier]
        with pytest.raises(Ungrounded):
            getattr(hints, then)(ctx)
    assert tried >= 3


def test_basketball_request_names_the_player_and_the_instruction_does_not_repeat_it():
    """basketball-test-022 and -045: "sign your kid Yara up ... The player is Yara Dias." Now the request names the
    player as the caller would (the first name for their own kid with their surname, else in full) and the fact is
    not said again."""
    hints = _hints("basketball")
    assert hints.fact_phrase("player", "Yara Dias") == "" and hints.fact_phrase("players", ["A B", "C D"]) == ""
    seen = 0
    for ctx in _contexts("basketball", range(300)):
        fan = ctx.state["fans"].peek(ctx.persona.entity)
        for grounder in (hints.ground_register_player, hints.ground_cancel_registration):
            ctx.want_challenge = False
            found = _ground(grounder, ctx)
            if found is None:
                continue
            seen += 1
            first, _, last = found.facts["player"].partition(" ")
            for request in found.request:
                assert first in request
                assert (last in request) == (last != fan["name"]["last_name"] or found.facts["player"] in request)
    assert seen >= 5


def test_movie_tier_change_names_the_membership_in_the_request():
    """movie-test-005/-039/-043: "... otherwise go ahead. Your member number is CM-628601." after the decision rule;
    the request now names the membership ("move my membership CM-628601 to the Premium tier")."""
    hints = _hints("movie")
    seen = 0
    for ctx in _contexts("movie", range(200)):
        ctx.want_challenge = False
        found = _ground(hints.ground_change_membership_tier, ctx)
        if found is None:
            continue
        seen += 1
        assert all(found.facts["member_number"] in request for request in found.request)
    assert seen >= 5


def test_basketball_feeling_names_a_game_only_when_the_request_does():
    """basketball-test-051: the instruction said 'ticket order HT-2545236' and the feeling 'I want better seats for
    the Denver Summit game'; asked for the game, the scripted user did not know it. A mood names the game only when
    the request points at the order by its game."""
    hints = _hints("basketball")
    by_number = by_game = 0
    for ctx in _contexts("basketball", range(300)):
        for grounder in (hints.ground_upgrade_tickets, hints.ground_transfer_tickets,
                         hints.ground_list_tickets_for_resale):
            ctx.want_challenge = False
            found = _ground(grounder, ctx)
            if found is None:
                continue
            opponent = ctx.state["games"].peek(ctx.state["ticket_orders"].peek(found.arguments["order_id"])["game_code"])
            named = opponent["opponent"] in found.mood.event
            assert named == ("game" in found.facts), (found.request, found.mood.event)
            by_game += named
            by_number += not named
    assert by_game >= 3 and by_number >= 3
