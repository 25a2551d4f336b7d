"""Issue 34 item 7: the wording of generated tasks.

Decision rules have a noun subject; a wish the request says is not said again; a caller acting for someone says
whom in the request ("your child Hiro's appointment"); `user.known` holds no fact under two keys and no placeholder;
the gold repeats no identical read with no write between. The last three are checked on tasks built from the real
packs, by reading the tasks only (no validator).
"""

from __future__ import annotations

import json
import random
import re

import pytest

from tau_emotion.tracer.decisions import attach_decision, rule_noun, rule_text
from tau_emotion.tracer.drafts import IntentDraft, Output
from tau_emotion.tracer.refine import FIRST, SECOND, already_said, known_defects, placeholder, say

QUESTION_SUBJECT = re.compile(r"\b(?:if|should) (?:what|how much|how many|whether|which)\b", re.I)


def _decision(ask, noun=None):
    return {"ask": ask, "noun": rule_noun(ask, noun), "threshold": 50, "amount": "85", "branch": "decline",
            "decline": "keep {{my}} booking as it is"}


@pytest.mark.parametrize("frame", [0, 1])
def test_a_rule_says_its_figure_with_a_noun(frame):
    text = rule_text(_decision("what the tickets cost {{me}}", "the ticket total"), SECOND, say, frame)
    assert "the ticket total" in text and not QUESTION_SUBJECT.search(text), text
    assert text.startswith(("if the ticket total is more than $50", "should the ticket total come to more than $50"))
    # an ask that is a noun phrase is its own subject; a question ask with no noun falls back to a clean default
    assert rule_text(_decision("the fare difference"), FIRST, say, frame).split(" ", 2)[1:2] == ["the"]
    assert "the fare difference" in rule_text(_decision("the fare difference"), FIRST, say, frame)
    bare = rule_text(_decision("how much of the tuition is not refunded"), SECOND, say, frame)
    assert not QUESTION_SUBJECT.search(bare) and "the amount" in bare, bare


def test_attach_decision_takes_the_declared_noun():
    for seed in range(40):
        draft = IntentDraft(kind="buy", goal="buy", arguments={}, request=["buy tickets"],
                            outputs=[Output("85", "what the tickets cost {{me}}", noun="the ticket total")],
                            decline="not buy them")
        attach_decision(draft, random.Random(seed), rate=1.0)
        if draft.decision:
            assert draft.decision["noun"] == "the ticket total"
            return
    pytest.fail("no seed gave the draft a decision rule")


def test_a_wish_the_request_says_is_not_said_again():
    request = "replace your card ending in 5097, which was lost, with express delivery"
    assert already_said("delivery", True, "you want express delivery", request)
    assert not already_said("delivery", False, "you want standard delivery", request)
    assert already_said("delivery", "electronic", "you want the transcript sent by email",
                        "order an official transcript of Pablo's record, sent by email")
    assert not already_said("delivery", "mail", "you want the transcript mailed",
                            "order an official transcript of Pablo's record")


def test_known_defects_name_a_fact_under_two_keys_and_a_placeholder():
    dups, holders = known_defects({"travel_date": "2024-05-19", "date": "2024-05-19", "card": "card",
                                   "new_address": {"city": "Tucson"}, "new_address_city": "Tucson",
                                   "check_outs": ["2025-09-20", "2025-09-14"], "check_out": "2025-09-20"})
    assert len(dups) == 3 and holders == ["card='card'"], (dups, holders)
    # two facts that share a value are two facts; a card named by its brand is a fact
    assert known_defects({"pickup_city": "Florence", "dropoff_city": "Florence", "card": "Visa card"}) == ([], [])
    assert placeholder("card", "card") and placeholder("payment_method", "the payment") \
        and not placeholder("card", "Visa card")


def _writes(domain):
    return {name for name, tool in domain.toolset.tools.items() if tool.writes}


def _repeated_read(task, writes):
    seen = set()
    for action in task.gold.actions:
        if action.name in writes:
            seen.clear()
            continue
        key = json.dumps([action.name, action.arguments], sort_keys=True)
        if key in seen:
            return action.name
        seen.add(key)
    return None


@pytest.mark.slow
@pytest.mark.parametrize(("pack", "n", "seed", "flags"), [
    ("travel", 14, 1, {"min_calls": 6, "challenge_rate": 0.4}),
    ("school", 14, 5, {"min_calls": 6, "challenge_rate": 0.2}),
    ("basketball", 12, 1, {"min_calls": 6, "challenge_rate": 0.4}),
])
def test_built_tasks_know_each_fact_once_and_read_nothing_twice(pack, n, seed, flags):
    from tests.plugins.test_scripted_user_knows import _built

    _, domain, tasks = _built(pack, n, seed, **flags)
    writes = _writes(domain)
    for task in tasks:
        known = task.user.known
        holders = known_defects(known)[1]
        assert not holders, (task.id, holders)
        # within one request, no fact twice ('date' beside 'tour_date', 'city' beside a new address); two requests
        # may share a value ('city' of a stay, 'dropoff_city' of a car), which are two facts
        for request in task.plan.requests:
            own = {f.key: known[f.key] for f in request.facts if f.key in known}
            assert not known_defects(own)[0], (task.id, known_defects(own)[0])
        assert _repeated_read(task, writes) is None, (task.id, [a.name for a in task.gold.actions])
        text = " ".join([task.user.instruction, *task.user.intents])
        assert not QUESTION_SUBJECT.search(text), (task.id, text)


@pytest.mark.slow
def test_a_caller_for_someone_says_whom_in_the_request():
    from tests.plugins.test_scripted_user_knows import _built

    _, _, tasks = _built("telehealth", 30, 1, challenge_rate=0.3)
    family = [t for t in tasks if "family_member" in t.user.known]
    assert family
    for task in family:
        first = task.user.known["family_member"].split()[0]
        assert "The patient is" not in task.user.instruction, task.id
        assert re.search(rf"your (?:child|parent|spouse|friend) {first}\b", task.user.instruction), task.user.instruction
        # the whole name is said once, with the request ("for your parent Viktor Novak") or after it
        name = task.user.known["family_member"]
        assert name in task.user.instruction or f"{first}'s surname is {name.split(' ', 1)[1]}" in task.user.instruction


@pytest.mark.slow
def test_a_reservation_number_is_said_as_a_customer_has_it():
    from tests.plugins.test_scripted_user_knows import _built

    _, _, tasks = _built("airline", 30, 5)
    told = [t for t in tasks if "reservation_id" in t.user.known]
    assert told
    for task in told:
        assert "Your reservation number is" not in task.user.instruction, task.user.instruction
        assert task.user.known["reservation_id"] in task.user.instruction
