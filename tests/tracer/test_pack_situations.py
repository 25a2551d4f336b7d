"""Issue 21 item 2 for the school, movie, travel and basketball packs: each pack's situation check, on its real
database, rejects an occasion the database contradicts and accepts the same occasion where it fits; the
validator applies it (`situation` rejection)."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from tau_emotion.tracer.hints import IntentDraft, Persona


def cand_for(entity, drafts, occasion, identified=None):
    persona = Persona(name="x", facts={}, entity=entity, identified=identified or {})
    return SimpleNamespace(persona=persona, drafts=drafts, occasion=occasion)


def intent(kind, goal, **arguments):
    return IntentDraft(kind=kind, goal=goal, arguments=arguments, request=["x"])


def rows(state, table, test=lambda r: True):
    return [(k, r) for k, r in state[table].scan() if test(r)]


@pytest.mark.parametrize("pack", ["school", "movie", "travel", "basketball"])
def test_each_pack_registers_its_situation_check(domains, pack):
    from tau_emotion.tracer.hints import load_hints

    module = __import__(f"tau_emotion.domain_packs.{pack}.tracer_situation", fromlist=["situation"])
    assert load_hints(domains.get(pack)).situation is module.situation


def test_school_student_occasions_need_the_student_on_the_phone(domains):
    from tau_emotion.domain_packs.school.tracer_hints import OCCASIONS
    from tau_emotion.domain_packs.school.tracer_situation import STUDENT_ONLY, situation

    state = domains.get("school").database.state()
    gid, guardian = rows(state, "guardians")[0]
    sid = guardian["student_ids"][0]
    by_guardian = {"session": {"current": {"caller_id": gid, "kind": "guardian"}}}
    by_student = {"session": {"current": {"caller_id": sid, "kind": "student"}}}
    drafts = [intent("transcript", "request_transcript", student_id=sid, delivery="mail", copies=1)]
    mine = "{{I}} work full time and study in the evenings"
    assert mine in [o[0] for o in OCCASIONS]  # the check's words are the pack's own occasions
    assert all(any(w in o[0] for o in OCCASIONS) for w in STUDENT_ONLY)
    why = situation(state, cand_for(sid, drafts, mine, by_guardian))
    assert why and "guardian" in why
    assert situation(state, cand_for(sid, drafts, mine, by_student)) is None
    tight = "money has been tight since {{I}} lost {{my}} job"  # anyone who pays can say it
    assert situation(state, cand_for(sid, drafts, tight, by_guardian)) is None


def test_movie_occasions_need_the_party_on_the_tickets(domains):
    from tau_emotion.domain_packs.movie.tools import hours_until
    from tau_emotion.domain_packs.movie.tracer_situation import situation

    state = domains.get("movie").database.state()
    ahead = lambda b: b["status"] == "confirmed" and hours_until(state["showtimes"].peek(b["showtime_id"])["start"]) > 2  # noqa: E731
    alone = next(b for _, b in rows(state, "bookings", lambda b: ahead(b) and len(b["tickets"]) == 1))
    family = next(b for _, b in rows(state, "bookings", lambda b: ahead(b) and len(b["tickets"]) >= 2
                                     and any(t["type"] == "child" for t in b["tickets"])))
    grown = next(b for _, b in rows(state, "bookings", lambda b: ahead(b) and len(b["tickets"]) >= 2
                                    and all(t["type"] != "child" for t in b["tickets"])))
    started = next(b for _, b in rows(state, "bookings", lambda b: b["status"] == "confirmed" and len(b["tickets"]) >= 3
                                      and hours_until(state["showtimes"].peek(b["showtime_id"])["start"]) < 0))
    snacks = lambda b: [intent("snacks", "add_concessions", booking_id=b["booking_id"], item_code="CON_WATER", quantity=1)]  # noqa: E731
    anniversary = "it is {{my}} wedding anniversary and {{I}} {{am}} taking {{my}} partner out"
    why = situation(state, cand_for(alone["customer_id"], snacks(alone), anniversary))
    assert why and "1 ticket" in why
    assert situation(state, cand_for(grown["customer_id"], snacks(grown), anniversary)) is None
    birthday = "it is {{my}} son's ninth birthday and he has waited weeks for this film"
    why = situation(state, cand_for(grown["customer_id"], snacks(grown), birthday))
    assert why and "child" in why
    assert situation(state, cand_for(family["customer_id"], snacks(family), birthday)) is None
    why = situation(state, cand_for(started["customer_id"], snacks(started), "{{my}} parents are visiting from out of town"))
    assert why and "has started" in why
    # a booking of new tickets is judged on the tickets it books
    show = state["showtimes"].peek(family["showtime_id"])
    book = intent("book", "book_tickets", customer_id=family["customer_id"], showtime_id=show["showtime_id"],
                  tickets=[{"seat": "A1", "type": "adult"}], payment_id="x", credits=0)
    assert "1 ticket" in situation(state, cand_for(family["customer_id"], [book], anniversary))


def test_travel_occasions_fit_the_trip(domains):
    from tau_emotion.domain_packs.travel.tracer_situation import _birthday_within, situation

    state = domains.get("travel").database.state()
    travellers = dict(rows(state, "travellers"))
    trips = [t for _, t in rows(state, "itineraries")]
    book = lambda t: [intent("book_tour", "book_tour", itinerary_id=t["itinerary_id"], departure_id="x",  # noqa: E731
                             participants=1, payment_id="x", points=0)]
    birthday = "{{I}} {{am}} celebrating {{my}} birthday while away"
    inside = next(t for t in trips if t["status"] != "cancelled" and "work trip" not in t["name"]
                  and _birthday_within(travellers[t["traveller_id"]]["dob"], t["start_date"], t["end_date"]))
    outside = next(t for t in trips if t["status"] != "cancelled"
                   and not _birthday_within(travellers[t["traveller_id"]]["dob"], t["start_date"], t["end_date"]))
    assert situation(state, cand_for(inside["traveller_id"], book(inside), birthday)) is None
    why = situation(state, cand_for(outside["traveller_id"], book(outside), birthday))
    assert why and outside["trip_number"] in why and "birthday" in why
    work = next(t for t in trips if "work trip" in t["name"] and t["status"] != "cancelled")
    holiday = next(t for t in trips if "work trip" not in t["name"] and t["status"] != "cancelled")
    time_off = "{{I}} finally have some time off after a long, hard project"
    assert "work trip" in situation(state, cand_for(work["traveller_id"], book(work), time_off))
    assert situation(state, cand_for(holiday["traveller_id"], book(holiday), time_off)) is None
    # a stay names its trip through the itinerary that holds it
    cancelled = next(t for t in trips if t["status"] == "cancelled" and t["stay_ids"])
    cancel = [intent("cancel_stay", "cancel_hotel_stay", stay_id=cancelled["stay_ids"][0])]
    assert "cancelled" in situation(state, cand_for(cancelled["traveller_id"], cancel, time_off))
    habit = "{{I}} like to have {{my}} travel plans settled early"
    assert situation(state, cand_for(cancelled["traveller_id"], cancel, habit)) is None


def test_basketball_occasions_fit_the_household_and_the_tickets(domains):
    from tau_emotion.domain_packs.basketball.tracer_situation import birthday_soon, situation

    state = domains.get("basketball").database.state()
    players = [p for _, p in rows(state, "players")]
    soon = next(p for p in players if birthday_soon(p["dob"]))
    later = next(p for p in players if not birthday_soon(p["dob"])
                 and not any(q["guardian_fan_id"] == p["guardian_fan_id"] and birthday_soon(q["dob"]) for q in players))
    birthday = "{{my}} child's birthday is coming up and the Herons are their favourite team"
    register = lambda p: [intent("register", "register_player", fan_id=p["guardian_fan_id"], player_id=p["player_id"],  # noqa: E731
                                 program_code="x", payment_id="x")]
    assert situation(state, cand_for(soon["guardian_fan_id"], register(soon), birthday)) is None
    why = situation(state, cand_for(later["guardian_fan_id"], register(later), birthday))
    assert why and later["guardian_fan_id"] in why
    fan = next(f for _, f in rows(state, "fans", lambda f: not f["player_ids"]))
    buy = lambda n: [intent("buy", "buy_tickets", fan_id=fan["fan_id"], game_code="x", section_code="x",  # noqa: E731
                            quantity=n, payment_id="x")]
    father = "{{I}} {{am}} taking {{my}} father to his first game in years"
    assert "fewer than 2" in situation(state, cand_for(fan["fan_id"], buy(1), father))
    assert situation(state, cand_for(fan["fan_id"], buy(2), father)) is None
    assert "no tickets" in situation(state, cand_for(soon["guardian_fan_id"], register(soon), father))
    assert situation(state, cand_for(fan["fan_id"], buy(1), birthday))  # no child at all


def test_validator_rejects_a_packs_contradicting_occasion(domains):
    """The wiring end to end: the Validator's `check_situation` on the school pack's real hints."""
    from tau_emotion.tracer.validate import Reject, Validator

    school = domains.get("school")
    state = school.database.state()
    gid, guardian = rows(state, "guardians")[0]
    sid = guardian["student_ids"][0]
    by_guardian = {"session": {"current": {"caller_id": gid, "kind": "guardian"}}}
    drafts = [intent("transcript", "request_transcript", student_id=sid, delivery="mail", copies=1)]
    with pytest.raises(Reject) as exc:
        Validator(school).check_situation(cand_for(sid, drafts, "{{I}} work full time and study in the evenings",
                                                   by_guardian))
    assert exc.value.check == "situation"
    Validator(school).check_situation(cand_for(sid, drafts, "it is just a routine question", by_guardian))


def test_occasions_agree_with_the_classes_the_money_and_the_move(domains):
    """Held-out reading of 2026-12-03: "I work full time and study in the evenings" beside a Mon/Wed 11:00 class
    (school-test-035), "money is tight" beside an uncapped $840 upgrade (basketball-test-020), "recovering from surgery
    and stuck at home" beside a move (retail-test-035)."""
    from tau_emotion.domain_packs.basketball.tracer_situation import situation as basketball
    from tau_emotion.domain_packs.retail.tracer_situation import situation as retail
    from tau_emotion.domain_packs.school.tracer_situation import situation as school

    state = domains.get("school").database.state()
    sections = [r for _, r in rows(state, "sections")]
    day = next(s for s in sections if s["modality"] != "online" and s["start_time"] < "17:00")
    evening = next(s for s in sections if s["start_time"] >= "17:00")
    sid = rows(state, "students")[0][0]
    student = {"session": {"current": {"caller_id": sid, "kind": "student"}}}
    evenings = "{{I}} work full time and study in the evenings"
    enrol = lambda s: [intent("enroll", "enroll_in_section", student_id=sid, crn=s["crn"])]  # noqa: E731
    why = school(state, cand_for(sid, enrol(day), evenings, student))
    assert why and day["start_time"] in why
    assert school(state, cand_for(sid, enrol(evening), evenings, student)) is None

    state = domains.get("basketball").database.state()
    fan = rows(state, "fans")[0][0]
    buy = intent("buy", "buy_tickets", fan_id=fan, game_code="G1", section_code="S1", quantity=2)
    tight = "money is tight for {{me}} this month"
    assert "no limit" in basketball(state, cand_for(fan, [buy], tight))
    buy.decision = {"branch": "proceed", "threshold": 200}
    assert basketball(state, cand_for(fan, [buy], tight)) is None

    state = domains.get("retail").database.state()
    address = intent("user_address", "modify_user_address", user_id="u1")
    address.mood.event = "{{I}} {{am}} moving to a new home"
    housebound = "{{I}} {{am}} recovering from surgery and stuck at home"
    assert "moving" in retail(state, cand_for("u1", [address], housebound))
    bereaved = "{{I}} {{am}} moving to a smaller place since {{my}} partner died"
    price = intent("product_price", "get_product_details", product_id="p1")
    assert "no address" in retail(state, cand_for("u1", [price], bereaved))
