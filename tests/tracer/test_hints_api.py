"""The Tracer's hints API as a pack meets it: the typed `TracerHints`, `Reference` + `draft()`, `fact_wording`."""

import pytest
from pydantic import ValidationError

from tau_emotion.tracer.hints import (
    Choice,
    Option,
    Reference,
    Refusal,
    TracerHints,
    Ungrounded,
    bill,
    difference,
    draft,
    fact_wording,
    load_hints,
)


def _ground(ctx):
    return None


def test_hints_forbid_unknown_fields_and_fill_every_goal_weight():
    hints = TracerHints(goals={"a": _ground, "b": _ground}, goal_weights={"b": 3})
    assert hints.goal_weights == {"a": 1.0, "b": 3.0}
    assert not hints.can_ground  # no persona
    with pytest.raises(ValidationError, match="goal_weight\n  Extra inputs are not permitted"):
        TracerHints(goals={"a": _ground}, goal_weight={"a": 2.0})
    with pytest.raises(ValidationError, match="goal_weights names c, which is not among the goals"):
        TracerHints(goals={"a": _ground}, goal_weights={"c": 2.0})
    with pytest.raises(ValidationError, match="persona"):
        TracerHints(persona="not callable")


def test_the_hints_of_a_domain_come_from_the_manager_asked_or_its_own_package(domains, airline):
    from tau_emotion.core.manager import load_all_plugins
    from tau_emotion.domain_packs.airline.tracer_hints import HINTS

    chain = domains.get("tiny_chain")  # registered by a test plugin, with no package of its own
    assert load_hints(chain) == TracerHints()  # no hidden manager of every installed plugin to fall back on
    assert load_hints(chain, load_all_plugins(["tests.tracer.tiny_pack"])).entry_tools == ["look"]
    # the same answer whatever was asked before, and from the pack's package without a manager
    assert load_hints(airline).goals == HINTS.goals == load_hints(airline, load_all_plugins()).goals
    assert load_hints(airline).handoff_tool == "transfer_to_human_agents"


def test_draft_puts_the_reference_first():
    ref = Reference("{{my}} order #W1", facts={"order_id": "#W1"},
                    choices=[Choice("order", "#W1", [Option("#W1", {})])],
                    reads={"get_order": [{"order_id": "#W1"}], "get_user": [{"user_id": "u"}]},
                    evidence=["get_order"])
    out = draft("cancel", "cancel_order", {"order_id": "#W1"}, ["cancel {{my}} order"], ref,
                facts={"reason": "mistake", "order_id": "#W1"}, reads={"get_user": [{"user_id": "v"}], "calc": [{}]},
                evidence=["calc", "get_order"])
    assert list(out.facts) == ["order_id", "reason"]
    assert [c.what for c in out.choices] == ["order"]
    assert list(out.reads) == ["get_user", "calc", "get_order"]  # the intent's tools first, then the reference's
    assert out.reads["get_user"] == [{"user_id": "u"}, {"user_id": "v"}]  # the reference's sets first
    assert out.evidence == ["get_order", "calc"]
    ref.reads_first = True
    again = draft("cancel", "cancel_order", {}, ["x"], ref, reads={"calc": [{}]})
    assert list(again.reads) == ["get_order", "get_user", "calc"]
    assert draft("x", "y", {}, ["z"]).facts == {}


def test_verify_adds_a_read_and_its_evidence_after_the_reads_given():
    out = draft("pay", "pay_bill", {}, ["pay"], reads={"get_account": [{"a": 1}], "get_bills": [{"a": 0}]},
                evidence=["get_account"], verify={"get_bills": {"a": 1}, "diagnose": {}})
    assert out.reads == {"get_account": [{"a": 1}], "get_bills": [{"a": 0}, {"a": 1}], "diagnose": [{}]}
    assert out.evidence == ["get_account", "get_bills", "diagnose"]
    assert draft("x", "y", {}, ["z"], verify={"get_bills": {}}, evidence=["get_bills"]).evidence == ["get_bills"]


def test_a_fact_listing_one_value_is_that_value():
    out = draft("swap", "modify_items", {}, ["swap"], facts={"item": ["Lamp"], "items": ["Lamp", "Kettle"], "none": []})
    assert out.facts == {"item": "Lamp", "items": ["Lamp", "Kettle"], "none": []}


def test_difference_puts_the_larger_sum_first_with_no_sign():
    assert difference(250, 300) == ("300 - 250", 50)
    assert difference(300, 250) == ("300 - 250", 50)
    assert difference([100, 80], 150, 2) == ("(100 + 80 - 150) * 2", 60)
    assert difference(150, [100, 80]) == ("100 + 80 - 150", 30)
    assert difference([120], [50, 20]) == ("120 - 50 - 20", 50)


def test_bill_adds_each_line_and_leaves_out_a_line_counted_zero_times():
    assert bill(([120, 80], 2), (30, 2), (50, 0)) == ("(120 + 80) * 2 + 30 * 2", 460)
    assert bill(([328], 1)) == ("328 * 1", 328)  # one price: no brackets, and the count is said even when 1
    assert bill((25, 0)) == ("", 0)


def test_fact_wording_finds_a_merged_plural_and_leaves_unsaid_keys_out():
    phrase = fact_wording({"order_id": ("your order is {}", "your orders are {}"),
                           "passenger_to_add": ("add {}", "add {}"),
                           "method": lambda said: " then ".join(said)},
                          word=lambda key, value: value.upper() if key == "passenger_to_add" else str(value),
                          unsaid=["last_four"])
    assert phrase("order_id", "#W1") == "your order is #W1"
    assert phrase("order_ids", ["#W1", "#W2", "#W3"]) == "your orders are #W1, #W2 and #W3"
    assert phrase("passengers_to_add", ["ann", "bo"]) == "add ANN and BO"
    assert phrase("methods", ["card", "gift"]) == "card then gift"
    assert phrase("last_four", "1234") == ""
    assert phrase("user_id", "u1") is None


def test_fact_wording_rows_say_each_value_their_own_way():
    phrase = fact_wording({"trip_date": ("the trip is on {}", "the trips are on {}", lambda d: d[5:]),
                           "cabin": ("you fly {}", {"business": "business class"}),
                           "origin": "you fly out of {}"})
    assert phrase("trip_dates", ["2024-05-17", "2024-05-20"]) == "the trips are on 05-17 and 05-20"
    assert phrase("cabin", "business") == "you fly business class"
    assert phrase("cabins", ["business", "economy"]) == "you fly business class and economy"  # not in the dict: as is
    assert phrase("origins", ["Boston", "Denver"]) == "you fly out of Boston and Denver"  # one wording for both


def _ctx(domain, seed=0, persona=None):
    import random

    from tau_emotion.tracer.hints import GroundingContext

    return GroundingContext(domain=domain, state=domain.database.state(), persona=persona, rng=random.Random(seed))


def test_need_and_choose_give_up_on_what_is_missing(airline):
    from tau_emotion.tracer.hints import Ungrounded, need

    assert need(0) == 0 and need("x") == "x" and need([1]) == [1]  # a number, even 0, is there
    for missing in (None, False, [], (), {}, "", set()):
        with pytest.raises(Ungrounded):
            need(missing)
    ctx = _ctx(airline, seed=3)
    with pytest.raises(Ungrounded):
        ctx.choose([])
    import random

    assert ctx.choose(["a", "b", "c"]) == random.Random(3).choice(["a", "b", "c"])  # the same draw as rng.choice


def test_first_grounded_tries_the_ways_in_order(airline):
    from tau_emotion.tracer.hints import IntentDraft, Ungrounded, first_grounded, need

    ctx = _ctx(airline)
    done = IntentDraft(kind="k", goal="g", arguments={}, request=["r"])
    tried = []

    def gives_up(ctx):
        tried.append("gives_up")
        need(None)

    def returns_none(ctx):
        tried.append("returns_none")

    def grounds(ctx):
        tried.append("grounds")
        return done

    assert first_grounded(ctx, gives_up, returns_none, grounds, gives_up) is done
    assert tried == ["gives_up", "returns_none", "grounds"]
    with pytest.raises(Ungrounded):
        first_grounded(ctx, gives_up, returns_none)


def test_a_grounder_that_gives_up_is_a_goal_the_tracer_retries(domains):
    from tau_emotion.tracer.grounding import attempt
    from tau_emotion.tracer.hints import need

    ctx = _ctx(domains.get("airline"))
    assert attempt(lambda c: need([]), ctx) is None  # Ungrounded reads as None
    assert attempt(lambda c: "draft", ctx) == "draft"
    with pytest.raises(KeyError):  # any other error is a bug in the pack, not a goal to skip
        attempt(lambda c: {}["x"], ctx)


def test_ctx_call_parses_a_read_and_gives_up_on_an_error(domains):
    from tau_emotion.tracer.hints import Ungrounded

    telecom = domains.get("telecom")
    ctx = _ctx(telecom)
    line_id = next(iter(telecom.database.tables["lines"]))
    usage = ctx.call("get_data_usage", {"line_id": line_id})
    assert isinstance(usage, dict) and "data_left_gb" in usage
    with pytest.raises(Ungrounded, match="get_data_usage"):
        ctx.call("get_data_usage", {"line_id": "no such line"})


def test_choice_among_records_by_their_fields():
    slots = [{"slot_id": "s1", "date": "2025-06-01", "time": "09:00"},
             {"slot_id": "s2", "date": "2025-06-01", "time": "10:00"},
             {"slot_id": "s3", "date": "2025-06-02", "time": "09:00"}]
    choice = Choice.among("slot", slots[1], slots, "slot_id", ("date", "time"))
    assert choice.value == "s2" and choice.selectors == {"date": "2025-06-01", "time": "10:00"}
    assert [o.attrs for o in choice.options][2] == {"date": "2025-06-02", "time": "09:00"}
    assert choice.resolve() == ["s2"]
    assert Choice.among("slot", slots[0], slots, "slot_id", "date").resolve() == ["s1", "s2"]  # the date alone is not enough
    fewest = Choice.fewest("slot", slots[2], slots, "slot_id", ("date", "time"), (("time",), ("date",), ("date", "time")))
    assert fewest.selectors == {"date": "2025-06-02"}  # the time alone is not enough, the date is
    assert Choice.fewest("slot", slots[0], slots, "slot_id", ("date", "time"), (("time",), ("date",))) is None
    by_day = Choice.among("slot", slots[2], slots, "slot_id", lambda s: {"day": s["date"][-2:]})
    assert by_day.selectors == {"day": "02"} and by_day.resolve() == ["s3"]


def test_instruments_are_named_so_that_each_is_the_only_fit(airline):
    from tau_emotion.tracer.hints import instrument_options, pick_instrument

    methods = {"credit_card_1": {"source": "credit_card", "brand": "visa", "last_four": "1111"},
               "credit_card_2": {"source": "credit_card", "brand": "amex", "last_four": "2222"},
               "gift_card_9876": {"source": "gift_card", "amount": 40},
               "bank_1": {"source": "bank_account", "bank": "US Bank", "last_four": "3333"},
               "paypal_5": {"source": "paypal"}}
    options = instrument_options(methods, {"paypal": "PayPal account"})
    attrs = {o.value: o.attrs for o in options}
    assert attrs["gift_card_9876"] == {"kind": "gift card", "balance": 40}  # no digits: an id tail is nothing a customer knows
    assert attrs["bank_1"] == {"kind": "bank account", "brand": "US Bank", "last_four": "3333"}
    assert attrs["paypal_5"]["kind"] == "PayPal account"
    said = {}
    for value in methods:
        pay = pick_instrument(_ctx(airline), "payment method", options, lambda o, v=value: o.value == v)
        assert pay.value == value and pay.choice.resolve() == [value]
        said[value] = (pay.words, pay.facts("last_four_digits"))
    assert said["credit_card_1"] == ("Visa credit card", {"payment_method": "Visa credit card"})
    assert said["bank_1"][0] == "bank account"  # the only one: its kind is enough
    assert said["gift_card_9876"] == ("gift card", {"payment_method": "gift card"})
    twins = instrument_options({"a": {"source": "credit_card", "brand": "visa", "last_four": "1"},
                                "b": {"source": "credit_card", "brand": "visa", "last_four": "2"},
                                "c": {"source": "bank_account", "bank": "US Bank", "last_four": "4"},
                                "d": {"source": "bank_account", "bank": "Chase", "last_four": "5"}})
    pay = pick_instrument(_ctx(airline), "payment method", twins, lambda o: o.value == "b")
    assert (pay.words, pay.facts("last_four_digits")) == (
        "credit card ending in 2", {"payment_method": "credit card ending in 2", "last_four_digits": "2"})
    pay = pick_instrument(_ctx(airline), "payment method", twins, lambda o: o.value == "c")
    assert pay.words == "US Bank bank account"  # a brand with capitals is kept as it is
    assert pick_instrument(_ctx(airline), "payment method", twins, lambda o: False) is None


def test_refused_calls_are_those_exactly_one_named_rule_forbids(domains):
    from tau_emotion.tracer.hints import Refusal, refused_calls

    telecom = domains.get("telecom")
    ctx = _ctx(telecom)
    lines = [line for _, line in ctx.state["lines"].scan()]
    suspended = next(line for line in lines if line["status"] == "suspended")
    active = next(line for line in lines if line["status"] == "active" and not ctx.violations(
        "change_line_plan", {"line_id": line["line_id"], "plan_code": "PLAN_UNLPREM"}))
    frozen = Refusal("line_suspended", "suspended", "plan_on_suspended_line")
    calls = [(line["line_id"], {"line_id": line["line_id"], "plan_code": "PLAN_UNLPREM"}) for line in (suspended, active)]
    found = refused_calls(ctx, "change_line_plan", calls, {"suspended_line_frozen": frozen})
    assert [(item, r) for item, _, r in found] == [(suspended["line_id"], frozen)]
    assert frozen.outputs[0].reason == "line_suspended" and frozen.outputs[0].text == "suspended"
    assert refused_calls(ctx, "change_line_plan", calls, {"contract_term": frozen}) == []  # a rule not named


def test_refused_calls_tell_one_rules_reasons_apart_by_their_words(domains):
    from tau_emotion.tracer.hints import Persona, Refusal, refused_calls

    telehealth = domains.get("telehealth")
    patients = [p for _, p in telehealth.database.state()["patients"].scan()]
    adult = patients[0]  # the caller books for themself: identified, so only booking_rules can forbid
    ctx = _ctx(telehealth, persona=Persona("caller", {}, identified={"session": {"current": {"caller_id": adult["patient_id"]}}}))
    slots = [s for _, s in ctx.state["slots"].scan() if s["status"] == "open"]
    calls = [(s["slot_id"], {"patient_id": adult["patient_id"], "slot_id": s["slot_id"], "mode": "video"}) for s in slots]
    # booking_rules is one rule with four reasons: the words of each reason pick its refusal
    table = {"out of network": Refusal("out_of_network", "out of network", "book_out_of_network"),
             "sees patients aged": Refusal("age_restriction", "the ages they see", "book_age")}
    found = refused_calls(ctx, "book_appointment", calls, {"booking_rules": table})
    kinds = {r.kind for *_, r in found}
    assert kinds == {"book_out_of_network", "book_age"}
    for _, args, refusal in found:
        (broken,) = ctx.violations("book_appointment", args)
        assert broken.rule == "booking_rules" and ("out of network" in broken.reason) == (refusal.kind == "book_out_of_network")
    # a reason no key's words name is left out; a call no rule forbids is never among them
    assert len(found) < sum(len(ctx.violations("book_appointment", a)) == 1 for _, a in calls)
    assert all(ctx.violations("book_appointment", a) for _, a, _ in found)
    assert refused_calls(ctx, "book_appointment", calls, table) == []  # the words are keyed by their rule's name


def test_goals_in_finds_the_grounders_by_name_in_the_order_defined():
    from tau_emotion.tracer.hints import goals_in

    def ground_b(ctx):
        return None

    def ground_a(ctx):
        return None

    namespace = {"ground_b": ground_b, "_helper": ground_a, "ground_a": ground_a, "ground_note": "not callable"}
    assert goals_in(namespace) == {"b": ground_b, "a": ground_a}
    assert list(TracerHints(goals=goals_in(namespace)).goal_weights) == ["b", "a"]


def test_policy_checks_see_the_persona_as_identified(domains):
    from tau_emotion.tracer.hints import Persona

    telehealth = domains.get("telehealth")
    patients = telehealth.database.tables["patients"]
    pid = next(p for p, row in patients.items() if row["appointment_ids"])
    appointment = patients[pid]["appointment_ids"][0]
    anonymous = _ctx(telehealth, persona=Persona("x", {}, entity=pid))
    signed_in = _ctx(telehealth, persona=Persona("x", {}, entity=pid,
                                                  identified={"session": {"current": {"caller_id": pid}}}))
    call = ("cancel_appointment", {"appointment_id": appointment})
    before, after = anonymous.violations(*call), signed_in.violations(*call)
    assert any(v.rule not in {w.rule for w in after} for v in before)  # a rule about who is calling no longer fires
    assert signed_in.state["session"].peek("current")["caller_id"] is None  # the state itself is not written


def test_rates_are_named_typed_fields_that_ctx_draws_with(airline):

    from tau_emotion.tracer.hints import Rate, Rates

    class Knobs(Rates):
        often: Rate = 0.9
        seldom: Rate = 0.1

    with pytest.raises(ValidationError):
        Knobs(often=1.5)  # a probability outside [0, 1]
    with pytest.raises(ValidationError):
        Knobs(oftn=0.5)  # a misspelt knob is not ignored
    ctx = _ctx(airline, seed=4)
    ctx.rates = Knobs()
    draws = [ctx.chance("often") for _ in range(400)]
    assert 0.8 < sum(draws) / 400 < 1.0
    again = _ctx(airline, seed=4)
    again.rates = Knobs()
    assert [again.chance("often") for _ in range(400)] == draws  # one seeded draw per call, as rng.random() < p
    with pytest.raises(AttributeError, match="no rate 'oftn' in the pack's Knobs \\(rates: often, seldom\\)"):
        ctx.chance("oftn")
    bands = [ctx.band("often", "seldom") for _ in range(400)]  # shares 0.9 and 0.1: nothing is left for the rest
    assert set(bands) == {0, 1} and bands.count(0) > 300
    ctx.is_last = False
    assert not any(ctx.insists("often") for _ in range(50))  # only the last request may end in a handover
    ctx.is_last = True
    assert ctx.handoff("often", "wants a person", when=False)["on_refusal"] == "accept"


def test_challenged_checks_the_challenge_count_and_names_the_refusal(airline):
    from tau_emotion.domain_packs.airline.tracer_hints import HINTS

    ctx = _ctx(airline, seed=1)
    ctx.persona = HINTS.persona(ctx)
    res = ctx.rows("reservations", ctx.state["users"].peek(ctx.persona.entity)["reservations"])[0]
    args = {"reservation_id": res["reservation_id"]}
    broken = len(ctx.violations("cancel_reservation", args))
    refusal = Refusal("cancel_not_covered", "insurance", "cancel_not_allowed")
    for want in (False, True):
        ctx.want_challenge = want
        assert ctx.fits("cancel_reservation", args) == (broken == int(want))
        if broken == int(want):
            assert ctx.challenged("cancel_reservation", args, refusal) is (refusal if want else None)
        else:
            with pytest.raises(Ungrounded):
                ctx.challenged("cancel_reservation", args, refusal)
    assert draft("cancel", "cancel_reservation", args, ["cancel"], refusal=refusal).kind == "cancel_not_allowed"
    assert draft("cancel", "cancel_reservation", args, ["cancel"], refusal=Refusal("r", "k")).kind == "cancel"
