import pytest

from tau_emotion.core.domain import Domain
from tau_emotion.core.manager import get_plugin_manager
from tau_emotion.core.models import Gold, Message, Termination
from tau_emotion.core.reward import GoldReplayError, check_task, outputs_told, reasons_explained, replay, score


def _said(text):
    return [Message(role="assistant", content=text)]


@pytest.mark.parametrize(
    ("output", "text", "found"),
    [
        ("10", "Your refund is 100 dollars.", False),
        ("10", "Your refund is $10.", True),
        ("10", "It costs 10.50 now.", False),
        ("1234", "A total of 1,234 dollars.", True),
        ("1,234", "A total of 1234 dollars.", True),
        ("1234567", "That is 1,234,567 points.", True),
        ("Economy", "You are in ECONOMY class.", True),
        ("yes", "yesterday it was fine", False),
        ("235.5", "balance 235.5.", True),
    ],
)
def test_outputs_match_on_word_and_number_boundaries(output, text, found):
    hit, miss = outputs_told([output], _said(text))
    assert (hit == [output]) is found
    assert (miss == [output]) is not found


# (gold output, what the agent said, told?): numbers by value, text on word boundaries, alternatives
MATCHING = [
    ("494", "The difference is 494.", True),
    ("494", "The difference is $494.", True),
    ("494", "The difference is $494.00.", True),
    ("494", "That comes to 494 dollars.", True),
    ("494", "That comes to USD 494 in total.", True),
    ("494", "That comes to 494 USD.", True),
    ("494", "That comes to 494.0", True),
    ("494", "You pay (494) more", True),
    ("494", "It is 4940 dollars.", False),
    ("494", "It is $494.50.", False),
    ("494", "It is 494.5 dollars.", False),
    ("494", "It is 1494 dollars.", False),
    ("494", "It is $1,494.00.", False),
    ("494", "Flight HAT494 departs at 10:00.", False),
    ("494", "Your seat is 494A.", False),
    ("494", "nothing to pay", False),
    ("$494.00", "The total is 494.", True),
    ("USD 494", "The total is $494.", True),
    ("1130", "The total is $1,130.00.", True),
    ("1,130", "The total is 1130 dollars.", True),
    ("1130", "The total is 11,30 dollars.", False),
    ("50", "The bag costs $50 each.", True),
    ("50", "The bag costs 150 dollars.", False),
    ("50", "The date is 2024-05-50.", False),
    ("5", "Departure 2024-05-28.", False),
    ("5", "There are 5 seats left.", True),
    ("30", "Boarding at 10:30.", False),
    ("100", "A $100 certificate.", True),
    ("100", "A certificate of 100.00 dollars.", True),
    ("100", "A 1000 dollar certificate.", False),
    ("0.5", "It costs 0.50.", True),
    ("on time", "Your flight is ON TIME.", True),
    ("on time", "Your flight is on-time.", True),
    ("landed", "The flight landed at 9:05.", True),
    ("landed", "It is landing soon.", False),
    ("cancelled", "It was cancelled by the airline.", True),
    ("gift card", "Refunded to your gift card.", True),
    ("gift card", "Refunded to your giftcard.", False),
    (["gift card", "gift_card_9771183"], "Refunded to gift_card_9771183.", True),
    (["gift card", "voucher"], "Refunded to your voucher.", True),
    (["gift card", "voucher"], "Refunded to your credit card.", False),
    (["494", "four hundred ninety-four"], "It is four hundred ninety-four dollars.", True),
    (["494", "four hundred ninety-four"], "It is $494.00.", True),
    (["494", "$495"], "It is 496.", False),
]


@pytest.mark.parametrize(("output", "text", "told"), MATCHING)
def test_outputs_match_by_meaning(output, text, told):
    hit, miss = outputs_told([output], _said(text))
    assert bool(hit) is told and bool(miss) is not told


_REASONS = {
    "already_flown": ["already flown", "already departed", "already taken", "in the past", "has been used"],
    "bags_not_removable": ["can not be removed", "not removable"],
    "cancel_not_covered": ["insurance", "not eligible for a refund"],
    "basic_economy": ["basic economy"],
}

# (reason, what the agent said, explained?): any declared phrasing, negations spelt out or refused
EXPLAINING = [
    ("already_flown", "Part of this trip has already been flown, I'm afraid: it was already taken.", True),
    ("already_flown", "Your first flight already departed, so I can't change it.", True),
    ("already_flown", "That flight is in the past.", True),
    ("already_flown", "The outbound ticket has been used.", True),
    ("already_flown", "I cannot do that.", False),
    ("already_flown", "Your flight has not already departed.", False),
    ("already_flown", "The flight is not in the past, so it can be changed.", False),
    ("already_flown", "The flight was never already taken.", False),
    ("bags_not_removable", "Checked bags cannot be removed.", True),
    ("bags_not_removable", "Checked bags can't be removed once added.", True),
    ("bags_not_removable", "Checked bags can not be removed.", True),
    ("bags_not_removable", "Bags are not removable.", True),
    ("bags_not_removable", "I removed the bag.", False),
    ("bags_not_removable", "The bag can be removed.", False),
    ("cancel_not_covered", "You did not buy travel insurance, so it cannot be cancelled.", True),
    ("cancel_not_covered", "You have no insurance.", True),
    ("cancel_not_covered", "You aren't eligible for a refund.", True),
    ("cancel_not_covered", "It cannot be cancelled.", False),
    ("basic_economy", "It is a Basic-Economy fare.", True),
    ("basic_economy", "Your reservation is not basic economy.", False),
]


def _domain_with_reasons():
    return Domain("reasons", [], load_refusal_reasons=lambda: _REASONS)


@pytest.mark.parametrize(("reason", "text", "explained"), EXPLAINING)
def test_refusal_reasons_are_explained_in_any_declared_phrasing(reason, text, explained):
    found, missing = reasons_explained(_domain_with_reasons(), [reason], _said(text))
    assert (found == [reason]) is explained and (missing == [reason]) is not explained


def test_the_matching_tables_are_large():
    assert len(MATCHING) + len(EXPLAINING) >= 40
    assert {told for *_, told in MATCHING} == {True, False} == {e for *_, e in EXPLAINING}


def test_a_refusal_task_needs_its_reason_explained_and_a_declared_reason():
    domain = _mock()
    task = {t.id: t for t in domain.tasks()}["mock-001"]
    refusal = task.model_copy(update={"gold": Gold(actions=[], reasons=["nope"])})
    assert "gold reason 'nope' is not declared by domain 'mock'" in check_task(domain, refusal)
    domain = Domain("reasons", [], load_refusal_reasons=lambda: _REASONS, load_database=domain._load_database
                    if domain._load_database else lambda: _mock().database)
    refusal = task.model_copy(update={"gold": Gold(actions=[], reasons=["already_flown"])})
    untouched, stop = domain.database.state(), Termination(reason="user_stop")
    reward, parts = score(domain, refusal, untouched, _said("Sorry, no."), stop)
    assert reward == 0.0 and parts.reasons_missing == ["already_flown"]
    reward, parts = score(domain, refusal, untouched, _said("That flight already departed."), stop)
    assert reward == 1.0 and parts.reasons_found == ["already_flown"]
    assert check_task(domain, refusal) is None


def test_outputs_only_count_what_the_agent_said():
    hit, _ = outputs_told(["235.5"], [Message(role="user", content="is it 235.5?"),
                                      Message(role="tool", content="235.5")])
    assert hit == []


def _mock():
    pm = get_plugin_manager(["mock"])
    return pm.catalog("domains").get("mock")


def test_reward_parts_and_negative_termination():
    domain = _mock()
    task = {t.id: t for t in domain.tasks()}["mock-001"]
    good = replay(domain, task)
    stop = Termination(reason="user_stop")
    fed_up = Termination(reason="unsatisfied", negative=True)
    assert score(domain, task, good, _said("235.5"), stop)[0] == 1.0
    assert score(domain, task, good, _said("235.5"), fed_up)[0] == 1.0  # success stands
    reward, parts = score(domain, task, good, _said("nothing"), fed_up)
    assert reward == -1.0 and parts.db_match and parts.outputs_missing == ["235.5"]
    untouched = domain.database.state()
    reward, parts = score(domain, task, untouched, _said("235.5"), stop)
    assert reward == 0.0 and not parts.db_match


def test_gold_replay_error_names_task_and_action():
    domain = _mock()
    task = {t.id: t for t in domain.tasks()}["mock-001"].model_copy(deep=True)
    task.gold.actions[1].arguments["amount"] = 10**9
    with pytest.raises(GoldReplayError, match=r"task 'mock-001': gold action 1 \(transfer\) failed: .*insufficient"):
        replay(domain, task)


def test_transfer_tasks_need_the_transfer():
    domain = _mock()
    task = {t.id: t for t in domain.tasks()}["mock-004"]
    state = domain.database.state()
    stop = Termination(reason="user_stop")
    reward, parts = score(domain, task, state, _said("ok"), stop)
    assert reward == 0.0 and parts.db_match and parts.terminal_done is False
    handed = [Message(role="tool", name="transfer_to_human_agents", content="Transfer successful")]
    assert score(domain, task, state, handed, stop)[0] == 1.0


def test_a_pack_declares_reasons_in_data_refusals_json(make_pack):
    import json

    from tau_emotion.core.errors import DataError

    data = make_pack("reasonpack", "reasons")
    pm = get_plugin_manager(["reasonpack"])
    assert pm.catalog("domains").get("reasons").refusal_reasons == {}  # optional file
    (data / "refusals.json").write_text(json.dumps({"reasons": {"late": {"phrasings": ["too late", "past"]}}}))
    assert get_plugin_manager(["reasonpack"]).catalog("domains").get("reasons").refusal_reasons == {
        "late": ["too late", "past"]}
    (data / "refusals.json").write_text(json.dumps({"reasons": {"late": {"phrasings": []}}}))
    with pytest.raises(DataError, match=r"refusals.json: reason 'late': expected a non-empty list of phrasings"):
        _ = get_plugin_manager(["reasonpack"]).catalog("domains").get("reasons").refusal_reasons
