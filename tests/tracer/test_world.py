"""Requests true of the world and figures read before they are told (issue 34 items 5-6): each check of
`Validator.check_world` rejects a hand-made bad candidate with its reason and lets the repaired one pass."""

import pytest

from tau_emotion.tracer.grounding import Reject
from tau_emotion.tracer.hints import IntentDraft, Output, Persona
from tau_emotion.tracer.validate import Validator
from tests.tracer.candidates import make_candidate


def world_reject(domain, cand) -> Reject | None:
    try:
        Validator(domain).check_world(cand)
    except Reject as exc:
        return exc
    return None


def _intent(goal: str, arguments: dict, kind: str = "x", refused: bool = False, **fields) -> IntentDraft:
    return IntentDraft(kind=kind, goal=goal, arguments=arguments, request=["x"], refused=refused, **fields)


def _candidate(domain, drafts, calls=(), entity=None, name=("Test", "User")):
    cand = make_candidate(domain, {}, list(calls), drafts=drafts)
    cand.persona = Persona(name=" ".join(name), facts={"first_name": name[0], "last_name": name[1]}, entity=entity)
    return cand


# --------------------------------------------------------------------------- the Tracer's own checks

def test_a_write_that_changes_nothing_is_rejected(domains):
    tiny = domains.get("tiny_chain")
    once = make_candidate(tiny, {"item_id": "i1"}, [("look", {"item_id": "i1"}),
                                                    ("mark", {"item_id": "i1", "note": "fragile"})])
    assert world_reject(tiny, once) is None
    twice = make_candidate(tiny, {"item_id": "i1"}, [("look", {"item_id": "i1"}),
                                                     ("mark", {"item_id": "i1", "note": "fragile"}),
                                                     ("mark", {"item_id": "i1", "note": "fragile"})])
    problem = world_reject(tiny, twice)
    assert problem.check == "world" and "gold call 2 (mark) changes nothing" in problem.detail


def _loan_payment(bank, read_loan: bool):
    """bank-test-003: the user asks for the loan's monthly payment, which the policy's '$500' happens to match."""
    said = {"phone_number": "857-555-7149", "date_of_birth": "1981-10-06", "zip_code": "02474"}
    calls = [("verify_identity", said), ("get_customer_profile", {"customer_id": "CU474855"}),
             ("get_account_details", {"account_id": "AC13481488"})]
    if read_loan:
        calls.append(("get_account_details", {"account_id": "AC45917137"}))
    args = {"from_account_id": "AC13481488", "to_account_id": "AC45917137", "amount": 500}
    draft = _intent("transfer_between_accounts", args, "loan_payment",
                    outputs=[Output("500", "the monthly payment on {{my}} loan")])
    return _candidate(bank, [draft], calls, entity="CU474855")


def test_a_figure_the_user_asks_for_is_read_not_taken_from_the_policy(domains):
    bank = domains.get("bank")
    assert "500" in bank.policy  # why provenance alone let it through
    problem = world_reject(bank, _loan_payment(bank, read_loan=False))
    assert problem.check == "unread" and "'500'" in problem.detail and "no gold read shows" in problem.detail
    assert world_reject(bank, _loan_payment(bank, read_loan=True)) is None


def test_a_figure_the_pack_derives_from_the_policy_needs_no_read(domains):
    tiny = domains.get("tiny_chain")
    draft = _intent("mark", {"item_id": "i1", "note": "n"}, outputs=[Output("12", "the fee")], policy_values=[12])
    assert world_reject(tiny, make_candidate(tiny, {}, [], drafts=[draft])) is None


# --------------------------------------------------------------------------- the packs' judges

def test_school_plan_for_nothing_owed_and_an_absence_excused_already(domains):
    school = domains.get("school")
    plan = _intent("enroll_payment_plan", {"student_id": "ST528475", "installments": 3}, "payment_plan_ineligible",
                   refused=True)
    problem = world_reject(school, _candidate(school, [plan], entity="ST528475"))
    assert problem.check == "world" and "owes 0" in problem.detail
    owing = _intent("enroll_payment_plan", {"student_id": "ST403764", "installments": 3}, "plan")
    assert world_reject(school, _candidate(school, [owing], entity="ST403764")) is None

    excused = {"student_id": "ST528475", "crn": "53605", "date": "2025-08-27", "reason": "illness"}
    problem = world_reject(school, _candidate(school, [_intent("report_absence", excused, "absence")]))
    assert problem.check == "world" and "already excuses" in problem.detail and "medical_appointment" in problem.detail
    other_day = {**excused, "date": "2025-09-03"}
    assert world_reject(school, _candidate(school, [_intent("report_absence", other_day, "absence")])) is None


TRIP = "IT938755"  # Porto anniversary trip: a stay in Porto, the Porto food walk on 2025-09-08, a car 09-07 to 09-17


def test_travel_itinerary_holds_together(domains):
    travel = domains.get("travel")
    tour = {"itinerary_id": TRIP, "departure_id": "DP337424", "participants": 2, "payment_id": "card_538054",
            "points": 0}
    problem = world_reject(travel, _candidate(travel, [_intent("book_tour", tour)], entity="TR754568"))
    assert problem.check == "world" and "already holds" in problem.detail and "Porto food walk" in problem.detail
    other = {**tour, "departure_id": "DP975762"}  # the Douro valley cruise, in Porto too
    assert world_reject(travel, _candidate(travel, [_intent("book_tour", other)], entity="TR754568")) is None

    car = {"itinerary_id": TRIP, "car_code": "CAR_SUV", "pickup_city": "Porto", "dropoff_city": "Porto",
           "pickup_date": "2025-09-10", "dropoff_date": "2025-09-12", "driver_name": "Ximena Haddad", "points": 0,
           "payment_id": "card_538054"}
    problem = world_reject(travel, _candidate(travel, [_intent("book_car_rental", car)], entity="TR754568"))
    assert problem.check == "world" and "already has one then (CR298414)" in problem.detail
    cancel_then_rent = [_intent("cancel_car_rental", {"car_rental_id": "CR298414"}), _intent("book_car_rental", car)]
    problem = world_reject(travel, _candidate(travel, cancel_then_rent, entity="TR754568"))
    assert problem.check == "world" and "no longer needed" in problem.detail
    elsewhere = {**car, "pickup_date": "2025-09-07", "dropoff_date": "2025-09-09", "pickup_city": "Lisbon"}
    cancel_first = [_intent("cancel_car_rental", {"car_rental_id": "CR298414"})]
    problem = world_reject(travel, _candidate(travel, [*cancel_first, _intent("book_car_rental", {
        **elsewhere, "pickup_date": "2025-09-20", "dropoff_date": "2025-09-22"})], entity="TR754568"))
    assert problem.check == "world" and "stays only in Porto" in problem.detail
    assert world_reject(travel, _candidate(travel, cancel_first, entity="TR754568")) is None


def test_basketball_refund_is_said_to_reach_whoever_it_reaches(domains):
    basketball = domains.get("basketball")

    def cancel(ask: str, fan: str):
        # the figure is the goal call's own (`from_goal`); no call is made here, so it is declared derived: the
        # refund's wording is what this test is about, not its read
        draft = _intent("cancel_registration", {"registration_id": "RG774837"}, "cancel_reg",
                        outputs=[Output("45", ask, from_goal=True)], policy_values=[45])
        return _candidate(basketball, [draft], entity=fan)

    contact, guardian = "FN827694", "FN127950"  # the card that paid, card_340810, is the guardian's
    problem = world_reject(basketball, cancel("how much comes back to {{my}} card", contact))
    assert problem.check == "world" and "card_340810" in problem.detail
    assert world_reject(basketball, cancel("how much comes back to the card that paid for it", contact)) is None
    assert world_reject(basketball, cancel("how much comes back to {{my}} card", guardian)) is None


def _passenger_fix(airline, res_id: str, k: int, dob: str):
    res = airline.database.tables["reservations"][res_id]
    passengers = [dict(p) for p in res["passengers"]]
    passengers[k]["dob"] = dob
    return _intent("update_reservation_passengers", {"reservation_id": res_id, "passengers": passengers},
                   "fix_passenger")


def _recorded_elsewhere(airline):
    """A passenger of some reservation whose date of birth another record of the user's household also gives."""
    tables = airline.database.tables
    for rid, res in tables["reservations"].items():
        user = tables["users"][res["user_id"]]
        for k, p in enumerate(res["passengers"]):
            if any((s["first_name"], s["last_name"]) == (p["first_name"], p["last_name"]) and s["dob"] == p["dob"]
                   for s in user["saved_passengers"]):
                return rid, k, p["dob"], res["user_id"]
    raise AssertionError("no passenger with a saved record")


def test_airline_correction_agrees_with_the_other_records_of_that_person(airline):
    rid, k, dob, user = _recorded_elsewhere(airline)
    wrong = _passenger_fix(airline, rid, k, "1901-01-01")
    problem = world_reject(airline, _candidate(airline, [wrong], entity=user))
    assert problem.check == "world" and "the database records" in problem.detail and dob in problem.detail


def test_airline_refusal_with_two_policy_grounds_is_rejected(airline):
    """airline-test-058: 17SJUG is partly flown and, basic economy booked weeks ago without insurance, would not be
    cancellable anyway: the gold names one ground and the scorer wants the one it names."""
    two = _intent("cancel_reservation", {"reservation_id": "17SJUG"}, "cancel_after_departure", refused=True)
    problem = world_reject(airline, _candidate(airline, [two], entity="imani_becker_7240"))
    assert problem.check == "world" and "two grounds" in problem.detail
    tables = airline.database.tables
    from tau_emotion.domain_packs.airline.tracer_situation import cancellable_unflown

    state = airline.database.state()
    one = next(rid for rid, r in tables["reservations"].items() if r["status"] == "active"
               and cancellable_unflown(state, r) and any(
                   tables["flights"][leg["flight_number"]]["dates"].get(leg["date"], {}).get("status") == "landed"
                   for leg in r["flights"]))
    draft = _intent("cancel_reservation", {"reservation_id": one}, "cancel_after_departure", refused=True)
    assert world_reject(airline, _candidate(airline, [draft], entity=tables["reservations"][one]["user_id"])) is None


# --------------------------------------------------------------------------- the generators

@pytest.mark.slow  # builds three splits of 14 tasks (about 7 s each)
@pytest.mark.parametrize("pack", ["school", "airline"])  # travel's grounders do not avoid them yet: its judge alone
def test_built_tasks_pass_the_world_checks_with_few_rejections(domains, space, pack):
    """The generators stop proposing what the checks reject (rejection alone would starve the design balance)."""
    from tau_emotion.tracer.build import build_tasks
    from tau_emotion.tracer.feelings import EmotionLabeler

    domain = domains.get(pack)
    report = build_tasks(domain, "test", 14, 3, challenge_rate=0.4, labeler=EmotionLabeler.from_space(space),
                         space=space)
    assert report.accepted == 14
    assert report.rejected.get("world", 0) + report.rejected.get("unread", 0) <= 3, report.breakdown()


@pytest.mark.slow  # builds 20 airline tasks (13 s)
def test_a_flight_picked_as_the_cheapest_is_the_cheapest_one_stop_itineraries_included(domains, space):
    """airline-test-041: 'take the cheapest option' picked a direct $368 flight while SKY742+SKY760 cost $352."""
    import json

    from tau_emotion.tracer.build import build_tasks
    from tau_emotion.tracer.feelings import EmotionLabeler

    airline = domains.get("airline")
    report = build_tasks(airline, "test", 20, 7, labeler=EmotionLabeler.from_space(space), space=space)
    state = airline.database.state()
    checked = 0
    for task in report.tasks:
        if "cheapest option" not in task.user.instruction:
            continue
        for action in task.gold.actions:
            if action.name != "update_reservation_flights":
                continue
            for leg in action.arguments["flights"]:
                flight = state["flights"].peek(leg["flight_number"])
                price = flight["dates"][leg["date"]]["prices"][action.arguments["cabin"]]
                text, _ = airline.toolset.call(state, "search_onestop_flight", {
                    "origin": flight["origin"], "destination": flight["destination"], "date": leg["date"]})
                pairs = json.loads(text)
                assert all(sum(f["prices"][action.arguments["cabin"]] for f in pair) >= price for pair in pairs), task.id
                checked += 1
    assert checked or not any("cheapest" in t.user.instruction for t in report.tasks)


def test_a_refused_call_that_breaks_two_rules_is_rejected(domains):
    """A refusal the gold explains by one reason while a second rule forbids it too: an agent that gives the other
    reason follows the policy and fails the gold."""
    from tau_emotion.core.models import Action
    from tau_emotion.tracer.grounding import Refusal

    school = domains.get("school")
    state = school.database.state()

    def rules(crn):
        args = {"student_id": "ST528475", "crn": crn}
        return {v.rule for v in school.violations(state, Action(name="enroll_in_section", arguments=args))}

    def refused(crn):
        args = {"student_id": "ST528475", "crn": crn}
        cand = _candidate(school, [_intent("enroll_in_section", args, refused=True)], entity="ST528475")
        cand.refusals = [Refusal(intent=0, at=0, name="enroll_in_section", arguments=args)]
        return cand

    assert rules("65125") == {"section_has_seats", "add_deadline"}
    problem = world_reject(school, refused("65125"))
    assert problem.check == "world" and "breaks 2 policy rules (add_deadline, section_has_seats)" in problem.detail
    one = next(crn for crn, _ in state["sections"].scan() if len(rules(crn)) == 1)
    assert world_reject(school, refused(one)) is None
