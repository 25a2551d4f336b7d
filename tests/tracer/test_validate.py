"""The validator rejects a hand-made bad candidate for each rule, and accepts the repaired one."""

import json
from types import SimpleNamespace

import pytest

from tau_emotion.domain_packs.airline.tools import FREE_BAGS
from tau_emotion.tracer.grounding import Refusal
from tau_emotion.tracer.hints import Choice, IntentDraft, Option, Output, Persona
from tau_emotion.tracer.validate import Reject, Validator
from tests.tracer.candidates import make_candidate

AMELIA = {"user_id": "amelia_silva_2834"}


def rejected(validator, cand) -> Reject:
    with pytest.raises(Reject) as info:
        validator.check(cand)
    return info.value


def _bag_calls(airline):
    """Add one bag to the first open economy reservation whose owner has several payment methods."""
    tables = airline.database.tables

    def fits(res):
        user = tables["users"][res["user_id"]]
        paid = {p["payment_id"] for p in res["payment_history"]}
        cards = [p for p, m in user["payment_methods"].items() if m["source"] == "credit_card" and p not in paid]
        statuses = {tables["flights"][leg["flight_number"]]["dates"][leg["date"]]["status"] for leg in res["flights"]}
        return (res["status"] == "active" and res["cabin"] == "economy" and statuses == {"available"}
                and len(user["payment_methods"]) >= 2 and cards)

    rid, res = next((rid, res) for rid, res in tables["reservations"].items() if fits(res))
    user = tables["users"][res["user_id"]]
    paid = {p["payment_id"] for p in res["payment_history"]}
    cards = [p for p, m in user["payment_methods"].items() if m["source"] == "credit_card" and p not in paid]
    total = res["total_baggages"] + 1
    nonfree = max(0, total - FREE_BAGS[user["membership"]][res["cabin"]] * len(res["passengers"]))
    calls = [("get_user_details", {"user_id": user["user_id"]}), ("get_reservation_details", {"reservation_id": rid}),
             ("update_reservation_baggages", {"reservation_id": rid, "total_baggages": total,
                                              "nonfree_baggages": nonfree, "payment_id": cards[0]})]
    known = {"user_id": user["user_id"], "reservation_id": rid, "total_checked_bags": total}
    return user, cards[0], known, calls


def test_withheld_argument_is_rejected(airline):
    calls = [("get_user_details", AMELIA), ("get_reservation_details", {"reservation_id": "VRSB5Q"})]
    cand = make_candidate(airline, AMELIA, calls, outputs=["DFW"], evidence=["get_user_details"])
    problem = rejected(Validator(airline), cand)
    assert problem.check == "provenance" and "reservation_id='VRSB5Q'" in problem.detail
    told = make_candidate(airline, {**AMELIA, "reservation_id": "VRSB5Q"}, calls, outputs=["DFW"],
                          evidence=["get_user_details"])
    Validator(airline).check(told)


def test_unused_read_is_rejected(airline):
    calls = [("get_user_details", AMELIA), ("list_all_airports", {}),
             ("get_reservation_details", {"reservation_id": "ZTGLR0"})]
    cand = make_candidate(airline, AMELIA, calls, outputs=["135"], evidence=["get_user_details"])
    problem = rejected(Validator(airline), cand)
    assert problem.check == "provenance" and "list_all_airports" in problem.detail and "not used" in problem.detail


def test_hidden_choice_between_payment_methods_is_rejected(airline):
    user, card, known, calls = _bag_calls(airline)
    ident = ["get_user_details"]
    problem = rejected(Validator(airline), make_candidate(airline, known, calls, evidence=ident))
    assert problem.check == "ambiguous" and f"payment_id={card!r}" in problem.detail
    options = [Option(pid, {"kind": m["source"], "last_four": m.get("last_four")})
               for pid, m in user["payment_methods"].items()]
    settled = Choice("payment method", card, options, {"kind": "credit_card",
                                                       "last_four": user["payment_methods"][card]["last_four"]})
    assert settled.resolve() == [card]
    draft = IntentDraft(kind="add_bags", goal="update_reservation_baggages", arguments=calls[-1][1], request=["x"],
                        choices=[settled])
    Validator(airline).check(make_candidate(airline, known, calls, drafts=[draft], evidence=ident))


def test_declared_choice_the_user_does_not_settle_is_rejected(airline):
    user, card, known, calls = _bag_calls(airline)
    options = [Option("SKY1", {"price": 100}), Option("SKY2", {"price": 100})]
    draft = IntentDraft(kind="pick", goal="update_reservation_baggages", arguments={}, request=["x"],
                        choices=[Choice("flight", "SKY1", options, order=("price", "min"))])
    cand = make_candidate(airline, {**known, "payment": card}, calls, drafts=[draft], evidence=["get_user_details"])
    problem = rejected(Validator(airline), cand)
    assert problem.check == "ambiguous" and "2 flight options fit" in problem.detail


def test_policy_violation_is_rejected(airline):
    known = {**AMELIA, "reservation_id": "ZTGLR0"}
    calls = [("get_user_details", AMELIA), ("get_reservation_details", {"reservation_id": "ZTGLR0"}),
             ("cancel_reservation", {"reservation_id": "ZTGLR0"})]
    problem = rejected(Validator(airline), make_candidate(airline, known, calls))
    assert problem.check == "policy" and "cannot be cancelled" in problem.detail


def test_refusal_the_policy_allows_is_rejected(airline):
    known = {"user_id": "aarav_vargas_6624", "reservation_id": "UYYHQF"}  # booked this morning: cancellable
    calls = [("get_user_details", {"user_id": "aarav_vargas_6624"}),
             ("get_reservation_details", {"reservation_id": "UYYHQF"})]
    refusal = Refusal(intent=0, at=2, name="cancel_reservation", arguments={"reservation_id": "UYYHQF"})
    draft = IntentDraft(kind="cancel", goal="cancel_reservation", arguments={}, request=["x"], refused=True)
    cand = make_candidate(airline, known, calls, outputs=["24 hours"], refusals=[refusal], drafts=[draft])
    problem = rejected(Validator(airline), cand)
    assert problem.check == "policy" and "breaks no policy rule" in problem.detail


def test_non_deterministic_replay_is_rejected(domains):
    counter = domains.get("tiny_counter")
    known = {"item_id": "i1"}
    cand = make_candidate(counter, known, [("look", known), ("stamp", known)])
    problem = rejected(Validator(counter), cand)
    assert problem.check == "replay" and "not deterministic" in problem.detail


def test_task_a_do_nothing_agent_would_pass_is_rejected(airline):
    known = {**AMELIA, "reservation_id": "ZTGLR0"}
    calls = [("get_user_details", AMELIA), ("get_reservation_details", {"reservation_id": "ZTGLR0"})]
    problem = rejected(Validator(airline), make_candidate(airline, known, calls, evidence=["get_reservation_details"]))
    assert problem.check == "trivial"


def test_id_the_user_cannot_know_in_the_instruction_is_rejected(airline):
    calls = [("get_user_details", AMELIA), ("get_reservation_details", {"reservation_id": "ZTGLR0"})]
    cand = make_candidate(airline, AMELIA, calls, outputs=["MIA"], evidence=["get_reservation_details"],
                          instruction="You want to know where reservation ZTGLR0 goes.")
    problem = rejected(Validator(airline), cand)
    assert problem.check in ("leak", "provenance")
    cand2 = make_candidate(airline, AMELIA, calls[:1], outputs=["Amelia"],
                           instruction="You want help with payment credit_card_3459735.")
    if "credit_card_3459735" in airline.database.tables["users"]["amelia_silva_2834"]["payment_methods"]:
        assert rejected(Validator(airline), cand2).check == "leak"


def test_near_duplicate_is_rejected(airline):
    known = {**AMELIA, "reservation_id": "ZTGLR0"}
    calls = [("get_user_details", AMELIA), ("get_reservation_details", {"reservation_id": "ZTGLR0"})]
    refusal = Refusal(intent=0, at=2, name="cancel_reservation", arguments={"reservation_id": "ZTGLR0"})
    draft = IntentDraft(kind="cancel", goal="cancel_reservation", arguments={}, request=["x"], refused=True,
                        outputs=[Output("insurance")])
    validator = Validator(airline)
    first = make_candidate(airline, known, calls, outputs=["insurance"], refusals=[refusal], drafts=[draft])
    validator.check(first)
    validator.register(first)
    again = make_candidate(airline, known, calls, outputs=["insurance"], refusals=[refusal], drafts=[draft])
    assert rejected(validator, again).check == "duplicate"


def _paypal_swap_then_return(retail):
    """A pending order's item swap and a delivered order's return, both settled on the PayPal account
    that paid for the two orders: the swap's result echoes that existing PayPal id back."""
    tables = retail.database.tables

    def paid(order):
        return order["payment_history"][0]["payment_id"]

    for user in tables["users"].values():
        orders = [tables["orders"][o] for o in user["orders"]]
        for pending in (o for o in orders if o["status"] == "pending" and paid(o).startswith("paypal_")):
            delivered = [o for o in orders if o["status"] == "delivered" and paid(o) == paid(pending)]
            for item in pending["items"] if delivered else []:
                swaps = [iid for iid, v in tables["products"][item["product_id"]]["variants"].items()
                         if v["available"] and iid != item["item_id"]]
                if swaps:
                    back = delivered[0]
                    return paid(pending), [
                        ("modify_pending_order_items", {"order_id": pending["order_id"], "item_ids": [item["item_id"]],
                                                        "new_item_ids": [swaps[0]], "payment_method_id": paid(pending)}),
                        ("return_delivered_order_items", {"order_id": back["order_id"],
                                                          "item_ids": [back["items"][0]["item_id"]],
                                                          "payment_method_id": paid(pending)})]
    raise AssertionError("no retail user with a swappable pending order and a delivered one on one PayPal account")


def test_an_id_that_already_existed_is_not_created_by_a_write(domains):
    """The user's PayPal id sits inside their record; a write echoing it back did not create it."""
    retail = domains.get("retail")
    paypal, calls = _paypal_swap_then_return(retail)
    cand = make_candidate(retail, {}, calls)
    assert paypal in cand.steps[0].text  # the swap's result names the existing payment method
    Validator(retail).check_consistency(cand)


@pytest.mark.slow
def test_a_write_on_what_the_task_just_created_is_rejected(domains):
    telehealth = domains.get("telehealth")
    tables = telehealth.database.tables
    patient = next(iter(tables["patients"].values()))
    slot = next(s for s in tables["slots"].values() if s["status"] == "open" and s["date"] > "2025-06-12"
                and "in_person" in tables["providers"][s["provider_id"]]["visit_modes"])
    name = patient["name"]
    verify = ("verify_patient_identity", {"first_name": name["first_name"], "last_name": name["last_name"],
                                          "date_of_birth": patient["date_of_birth"]})
    booked = make_candidate(telehealth, {}, [verify, ("book_appointment", {"patient_id": patient["patient_id"],
                                                                           "slot_id": slot["slot_id"]})])
    new_id = json.loads(booked.steps[1].text)["appointment_id"]
    calls = [verify, ("book_appointment", {"patient_id": patient["patient_id"], "slot_id": slot["slot_id"]}),
             ("cancel_appointment", {"appointment_id": new_id})]
    with pytest.raises(Reject) as info:
        Validator(telehealth).check_consistency(make_candidate(telehealth, {}, calls))
    problem = info.value
    assert problem.check == "consistency" and "book_appointment just created" in problem.detail


def _reservation(airline, want):
    tables = airline.database.tables
    for rid, res in tables["reservations"].items():
        user = tables["users"][res["user_id"]]
        if res["status"] == "active" and want(res, user):
            return rid, res, user
    raise AssertionError("no such reservation in the airline database")


def _on_board(res, user):
    return any(p["first_name"] == user["name"]["first_name"] and p["last_name"] == user["name"]["last_name"]
               for p in res["passengers"])


def test_situation_rejects_what_the_database_contradicts(airline):
    """Issue 21 (airline-017, -005, -053): a change of mind about a trip already flown, a sick caller or an
    occasion on a booking the caller is not on are `situation` rejections; the same reasons on a fitting
    reservation pass."""
    from tau_emotion.domain_packs.airline.tracer_situation import TODAY, situation

    def cand_for(rid, user, context, occasion=None):
        persona = Persona(name="x", facts={"user_id": user["user_id"], "first_name": user["name"]["first_name"],
                                           "last_name": user["name"]["last_name"]})
        d = IntentDraft(kind="cancel", goal="cancel_reservation", arguments={"reservation_id": rid}, request=["x"],
                        context=context)
        return SimpleNamespace(persona=persona, drafts=[d], occasion=occasion)

    state = airline.database.state()
    flown_rid, _, flown_user = _reservation(airline, lambda r, u: any(leg["date"] < TODAY for leg in r["flights"]))
    ahead_rid, _, ahead_user = _reservation(airline, lambda r, u: all(leg["date"] >= TODAY for leg in r["flights"])
                                            and _on_board(r, u))
    other_rid, _, other_user = _reservation(airline, lambda r, u: not _on_board(r, u))
    why = situation(state, cand_for(flown_rid, flown_user, "{{I}} would rather not travel after all"))
    assert why and "started" in why and flown_rid in why
    assert situation(state, cand_for(ahead_rid, ahead_user, "{{I}} would rather not travel after all")) is None
    why = situation(state, cand_for(other_rid, other_user, "{{I}} {{am}} sick and {{my}} doctor says {{I}} should not fly"))
    assert why and "does not fly on" in why
    assert situation(state, cand_for(ahead_rid, ahead_user, "{{I}} {{am}} sick")) is None
    why = situation(state, cand_for(other_rid, other_user, None, occasion="this trip is {{my}} honeymoon"))
    assert why and "honeymoon" in why
    assert situation(state, cand_for(ahead_rid, ahead_user, None, occasion="this trip is {{my}} honeymoon")) is None


def test_validator_applies_the_packs_situation_check(airline):
    from tau_emotion.tracer.hints import load_hints

    calls = [("get_user_details", AMELIA), ("get_reservation_details", {"reservation_id": "VRSB5Q"})]
    cand = make_candidate(airline, {**AMELIA, "reservation_id": "VRSB5Q"}, calls, outputs=["DFW"],
                          evidence=["get_user_details"])
    Validator(airline).check(cand)
    hints = load_hints(airline).model_copy(update={"situation": lambda state, c: "the trip already flew"})
    problem = rejected(Validator(airline, hints=hints), cand)
    assert problem.check == "situation" and problem.detail == "the trip already flew"
