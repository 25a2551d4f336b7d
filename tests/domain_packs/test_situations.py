"""Situation checks of the retail, telecom, telehealth, restaurant and bank packs (issue 21, item 2): on each
pack's real database a candidate whose event or occasion the data contradicts is rejected and a consistent one
passes; the packs' grounders pick consistent events in the first place; and a refused request's event does not
give its refusal away (item 4)."""

from __future__ import annotations

import importlib
import random
from types import SimpleNamespace

import pytest

from tau_emotion.tracer.hints import GroundingContext, IntentDraft, Mood, Persona, Ungrounded


def _domain(pack: str):
    found = []
    importlib.import_module(f"tau_emotion.domain_packs.{pack}").tau_register_domains(found.append)
    return found[0]


@pytest.fixture(scope="module", params=["retail", "telecom", "telehealth", "restaurant", "bank"])
def pack(request):
    return request.param


def _d(goal: str, arguments: dict, event: str = "{{I}} need some help", kind: str | None = None, **fields) -> IntentDraft:
    return IntentDraft(kind=kind or goal, goal=goal, arguments=arguments, request=["x"], mood=Mood(event), **fields)


def _cand(drafts: list[IntentDraft], occasion: str | None = None, entity: str | None = None):
    return SimpleNamespace(persona=Persona(name="x", facts={}, entity=entity), drafts=drafts, occasion=occasion)


def _grounded(pack: str, tries: int = 160):
    """Drafts the pack's grounders make for many personas, with and without a challenge wanted: (persona, draft)."""
    domain = _domain(pack)
    hints = importlib.import_module(f"tau_emotion.domain_packs.{pack}.tracer_hints").HINTS
    out = []
    for seed in range(tries):
        rng = random.Random(seed)
        ctx = GroundingContext(domain=domain, state=domain.database.state(), persona=None, rng=rng, rates=hints.rates)
        try:
            ctx.persona = hints.persona(ctx)
        except Ungrounded:
            continue
        for grounder in hints.goals.values():
            ctx.want_challenge = seed % 2 == 1
            try:
                found = grounder(ctx)
            except Ungrounded:
                continue
            if found is not None:
                out.append((ctx.persona, found))
    return domain, hints, out


# --------------------------------------------------------------------------- every pack


#: words that state why a request is refused or how it ends ("it may already be on its way", "not too late",
#: "I already sent the others back")
GIVEAWAYS = ("already", "too late", "on its way", "not delivered", "too early", "expired", "no refills", "overdue",
             "suspended", "contract", "fraud", "limit", "window", "settled", "lasts")


def test_grounders_pick_events_their_situation_check_accepts_and_refusals_give_nothing_away(pack):
    domain, hints, drafts = _grounded(pack)
    assert hints.situation is not None
    state = domain.database.state()
    refused = 0
    for persona, draft in drafts:
        assert hints.situation(state, SimpleNamespace(persona=persona, drafts=[draft], occasion=None)) is None, \
            (draft.kind, draft.mood.event)
        if draft.refused:
            refused += 1
            assert not any(w in draft.mood.event.lower() for w in GIVEAWAYS), (draft.kind, draft.mood.event)
            # nor the reason the instruction gives ("because you already sent other items from that order back")
            assert not any(w in (draft.context or "").lower() for w in GIVEAWAYS), (draft.kind, draft.context)
    assert len(drafts) > 100 and refused > 10, (len(drafts), refused)


# --------------------------------------------------------------------------- retail


def _retail_order(db, product: str, *status: str) -> tuple[dict, dict]:
    for order in db.tables["orders"].values():
        if order["status"] in status:
            item = next((i for i in order["items"] if i["name"] == product), None)
            if item is not None:
                return order, item
    raise AssertionError(f"no {status} order with a {product}")


def test_retail_occasion_must_fit_the_products():
    from tau_emotion.domain_packs.retail.tracer_situation import situation

    domain = _domain("retail")
    db, state = domain.database, domain.database.state()
    hiking = "{{I}} {{am}} getting ready for a hiking trip"
    order, chair = _retail_order(db, "Office Chair", "delivered")
    swap = _d("exchange_delivered_order_items", {"order_id": order["order_id"], "item_ids": [chair["item_id"]]})
    why = situation(state, _cand([swap], hiking))
    assert why and "Office Chair" in why
    order, boots = _retail_order(db, "Hiking Boots", "delivered")
    swap = _d("exchange_delivered_order_items", {"order_id": order["order_id"], "item_ids": [boots["item_id"]]})
    assert situation(state, _cand([swap], hiking)) is None
    assert situation(state, _cand([swap], "it is for {{my}} home office")) is not None
    # a whole order: one fitting item is enough; the default address is about no product
    move = _d("modify_pending_order_address", {"order_id": order["order_id"]})
    assert situation(state, _cand([move], hiking)) is None
    address = _d("modify_user_address", {"user_id": order["user_id"]})
    assert "no product" in situation(state, _cand([address], hiking))


def test_retail_moving_next_week_is_not_just_moved():
    from tau_emotion.domain_packs.retail.tracer_situation import situation

    state = _domain("retail").database.state()
    soon = "{{I}} {{am}} moving to a new flat next week"
    assert situation(state, _cand([_d("modify_user_address", {"user_id": "u"}, "{{I}} just moved")], soon))
    assert situation(state, _cand([_d("modify_user_address", {"user_id": "u"}, "{{I}} {{am}} moving to a new home")],
                                  soon)) is None


# --------------------------------------------------------------------------- telecom


def _telecom_line(db, want) -> dict:
    return next(line for line in db.tables["lines"].values() if want(line, db.tables["usage"][line["line_id"]]))


def test_telecom_events_must_agree_with_the_line():
    from tau_emotion.domain_packs.telecom.tracer_situation import data_share_left, runs_out, situation

    db = _domain("telecom").database
    state = db.state()
    roaming = {a for a, row in db.tables["addons"].items() if row["kind"] == "roaming"}
    used = _telecom_line(db, lambda line, u: u["roaming_data_used_gb"] > 0 and roaming & set(line["addons"]))
    idle = _telecom_line(db, lambda line, u: u["roaming_data_used_gb"] == 0 and roaming & set(line["addons"]))

    def drop(line):
        addon = sorted(roaming & set(line["addons"]))[0]
        name = db.tables["addons"][addon]["name"]
        return _d("remove_addon", {"line_id": line["line_id"], "addon_code": addon}, "{{I}} no longer use " + name)

    why = situation(state, _cand([drop(used)]))
    assert why and "uses it" in why
    assert situation(state, _cand([drop(idle)])) is None

    worry = "{{I}} worry {{I}} will run out of data before the month ends"
    plenty = _telecom_line(db, lambda line, u: data_share_left(state, line) > 0.8)
    scarce = _telecom_line(db, lambda line, u: runs_out(state, line))  # more of the cycle left than of its data
    assert "more of its data left" in situation(state, _cand([_d("get_data_usage", {"line_id": plenty["line_id"]}, worry)]))
    assert situation(state, _cand([_d("get_data_usage", {"line_id": scarce["line_id"]}, worry)])) is None

    student20 = _telecom_line(db, lambda line, u: line["plan_id"] == "PLAN_STUDENT20")
    less = _d("change_line_plan", {"line_id": student20["line_id"], "plan_code": "PLAN_ESS15"}, "{{I}} need more data")
    assert "no more data" in situation(state, _cand([less]))
    more = _d("change_line_plan", {"line_id": student20["line_id"], "plan_code": "PLAN_PLUS30"}, "{{I}} need more data")
    assert situation(state, _cand([more])) is None
    tight = "{{I}} lost {{my}} job last month and money is tight"
    assert "raises" in situation(state, _cand([more], tight))


def test_telecom_occasion_must_agree_with_the_customer():
    from tau_emotion.domain_packs.telecom.tracer_situation import PARENT_AGES, _age, situation

    db = _domain("telecom").database
    state = db.state()

    def lines(c):
        return sum(len(db.tables["accounts"][a]["line_ids"]) for a in c["account_ids"])

    one = next(c for c in db.tables["customers"].values() if lines(c) == 1)
    many = next(c for c in db.tables["customers"].values()
                if lines(c) > 1 and PARENT_AGES[0] <= _age(c["dob"]) <= PARENT_AGES[1])
    kids = "{{my}} kids use {{my}} lines for school"
    assert "one line" in situation(state, _cand([], kids, one["customer_id"]))
    assert situation(state, _cand([], kids, many["customer_id"])) is None
    # telecom-test-047: "my kids use my lines for school" said by a customer of 70
    retired = next(c for c in db.tables["customers"].values() if lines(c) > 1 and _age(c["dob"]) >= 65)
    assert "aged" in situation(state, _cand([], kids, retired["customer_id"]))
    # a trip abroad is the occasion of a roaming add-on, not of paying a bill
    wedding = "{{I}} {{am}} flying abroad for {{my}} brother's wedding"
    line = db.tables["accounts"][many["account_ids"][0]]["line_ids"][0]
    bill = _d("pay_bill", {"line_id": line})
    roaming = _d("add_addon", {"line_id": line, "addon_code": "ADD_EU_PASS"})
    assert "roaming" in situation(state, _cand([bill], wedding, many["customer_id"]))
    assert situation(state, _cand([roaming], wedding, many["customer_id"])) is None
    student = "{{I}} {{am}} a student on a small budget"
    old = next(c for c in db.tables["customers"].values() if _age(c["dob"]) >= 40)
    young = next(c for c in db.tables["customers"].values() if _age(c["dob"]) < 25)
    assert "aged" in situation(state, _cand([], student, old["customer_id"]))
    assert situation(state, _cand([], student, young["customer_id"])) is None


# --------------------------------------------------------------------------- telehealth


def test_telehealth_events_must_agree_with_prescriptions_visits_and_patients():
    from tau_emotion.domain_packs.telehealth.tracer_situation import situation, supply_left

    db = _domain("telehealth").database
    state = db.state()
    rxs = list(db.tables["prescriptions"].values())
    lasting = next(rx for rx in rxs if supply_left(rx) > 15)
    ending = next(rx for rx in rxs if 0 <= supply_left(rx) <= 5)

    def refill(rx):
        return _d("request_refill", {"prescription_id": rx["prescription_id"]},
                  "{{I}} will run out of " + rx["medication"] + " soon")

    assert "more days" in situation(state, _cand([refill(lasting)]))
    assert situation(state, _cand([refill(ending)])) is None

    patient = next(p for p in db.tables["patients"].values() if len(p["visit_ids"]) >= 2)
    visits = sorted(db.tables["visits"][v]["date"] for v in patient["visit_ids"])

    def records(date):
        return _d("list_visit_records", {"patient_id": patient["patient_id"]},
                  "{{I}} forgot what the doctor said at {{my}} last visit", facts={"visit_date": date})

    assert "not the latest" in situation(state, _cand([records(visits[0])]))
    assert situation(state, _cand([records(visits[-1])])) is None

    consent = next(iter(db.tables["consents"].values()))
    caller, family = consent["representative_id"], consent["patient_id"]
    unwell = "{{I}} {{have}} been feeling unwell for weeks"
    for_family = _d("book_appointment", {"patient_id": family, "slot_id": "s"})
    assert "someone else" in situation(state, _cand([for_family], unwell, caller))
    for_me = _d("book_appointment", {"patient_id": caller, "slot_id": "s"})
    assert situation(state, _cand([for_family, for_me], unwell, caller)) is None


# --------------------------------------------------------------------------- restaurant


def test_restaurant_occasion_must_fit_the_meal():
    from tau_emotion.domain_packs.restaurant.tracer_situation import situation

    state = _domain("restaurant").database.state()

    def book(date, time, party):
        return _d("book_table", {"guest_id": "g", "restaurant_code": "R_OLIVA", "date": date, "time": time,
                                 "party_size": party})

    weekend = "{{my}} old school friends are in town for one weekend"
    assert "Tuesday" in situation(state, _cand([book("2025-06-17", "19:00", 4)], weekend))
    assert situation(state, _cand([book("2025-06-21", "19:00", 4)], weekend)) is None
    funeral = "{{I}} {{am}} hosting a lunch after {{my}} grandfather's funeral"
    assert situation(state, _cand([book("2025-06-18", "19:00", 6)], funeral))
    assert situation(state, _cand([book("2025-07-25", "12:00", 6)], funeral))  # six weeks away
    assert situation(state, _cand([book("2025-06-18", "12:00", 6)], funeral)) is None
    anniversary = "{{I}} {{am}} celebrating {{my}} parents' fortieth wedding anniversary"
    assert "party of 2" in situation(state, _cand([book("2025-06-18", "19:00", 2)], anniversary))
    assert situation(state, _cand([book("2025-06-18", "19:00", 4)], anniversary)) is None
    # a change to a booking is judged on the booking as changed
    booking = next(b for _, b in state["bookings"].scan() if b["status"] == "confirmed" and b["party_size"] == 2)
    grow = _d("modify_booking", {"booking_id": booking["booking_id"], "party_size": 4})
    assert situation(state, _cand([grow], anniversary)) is None
    move = _d("modify_booking", {"booking_id": booking["booking_id"], "date": "2025-06-20", "time": "19:00"})
    assert "party of 2" in situation(state, _cand([move], anniversary))


# --------------------------------------------------------------------------- bank


def test_bank_occasion_must_agree_with_the_caller_and_the_requests():
    from tau_emotion.domain_packs.bank.generate_db import PAYEES
    from tau_emotion.domain_packs.bank.tracer_situation import age, situation

    db = _domain("bank").database
    state = db.state()
    customers = list(db.tables["customers"].values())

    def mortgage(c):
        return any((db.tables["accounts"][a].get("loan") or {}).get("kind") == "mortgage" for a in c["account_ids"])

    home = "{{I}} {{am}} saving for a deposit on {{my}} first home"
    assert "mortgage" in situation(state, _cand([], home, next(c for c in customers if mortgage(c))["customer_id"]))
    assert situation(state, _cand([], home, next(c for c in customers if not mortgage(c))["customer_id"])) is None
    college = "{{my}} daughter is starting college this month"
    young = next(c for c in customers if age(c["date_of_birth"]) < 30)
    older = next(c for c in customers if age(c["date_of_birth"]) > 45)
    assert "aged" in situation(state, _cand([], college, young["customer_id"]))
    assert situation(state, _cand([], college, older["customer_id"])) is None
    short = "a big car repair left {{me}} short this month and every dollar counts"
    payoff = _d("transfer_between_accounts", {}, kind="loan_payoff")
    payment = _d("transfer_between_accounts", {}, kind="loan_payment")
    assert "loan_payoff" in situation(state, _cand([payoff], short, older["customer_id"]))
    assert situation(state, _cand([payment], short, older["customer_id"])) is None
    father = "{{I}} {{am}} sorting out {{my}} late father's bills"
    assert "pays nobody" in situation(state, _cand([payment], father, older["customer_id"]))
    payees = list(db.tables["payees"].values())
    bill = next(p for p in payees if p["name"] == "Eversource Energy")["payee_id"]
    daycare = next(p for p in payees if p["name"] == "Bright Horizons Daycare")["payee_id"]
    person = next(p for p in payees if " " in p["name"] and p["name"] not in PAYEES)["payee_id"]
    pay = lambda payee, goal="pay_payee": _d(goal, {"payee_id": payee}, kind="pay")  # noqa: E731
    assert situation(state, _cand([payment, pay(bill)], father, older["customer_id"])) is None
    assert situation(state, _cand([pay(bill, "create_standing_order")], father, older["customer_id"])) is None
    # a daycare or a friend is no late father's bill (bank-test-049 paid only Bright Horizons Daycare)
    assert "no household bill" in situation(state, _cand([payment, pay(daycare)], father, older["customer_id"]))
    assert "no household bill" in situation(state, _cand([pay(person)], father, older["customer_id"]))
    assert situation(state, _cand([pay(daycare), pay(bill)], father, older["customer_id"])) is None
