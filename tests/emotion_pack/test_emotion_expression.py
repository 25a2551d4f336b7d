"""The scripted user's expression: patience rules from data, seeded phrasing for every condition."""

import random

import pytest

from tau_emotion.emotion_pack.expression import (
    dont_know,
    friction,
    friction_cost,
    friction_level,
    give_up,
    opening,
    patience_budget,
    phrases,
    reply_prefix,
)
from tau_emotion.emotion_pack.taxonomy import DIMENSIONS, Condition, all_conditions


def test_patience_examples():
    for emotion in ("annoyance", "frustration", "exasperation", "argumentativeness", "bitterness"):
        assert patience_budget(f"anger.{emotion}/cold/high/skeptical") in (1, 2)
    assert patience_budget("enjoyment.peace/warm/low/trusting") >= 8
    assert patience_budget(Condition("fear", "anxiety", "warm", "high", "cautious")) == patience_budget(
        "fear.anxiety/warm/high/cautious"
    )


def test_patience_is_at_least_one_and_impatient_below_patient():
    budgets = {c.id: patience_budget(c) for c in all_conditions()}
    assert min(budgets.values()) >= 1
    assert budgets["anger.exasperation/cold/high/skeptical"] < budgets["enjoyment.peace/warm/low/trusting"]
    assert budgets["fear.desperation/neutral/moderate/cautious"] < budgets["enjoyment.peace/neutral/moderate/cautious"]


@pytest.mark.parametrize("dim", list(DIMENSIONS))
def test_patience_never_rises_towards_cold_high_skeptical(dim):
    for condition in all_conditions():
        values = DIMENSIONS[dim]
        budgets = [patience_budget(Condition(**{**condition.to_dict(), dim: v})) for v in values]
        assert budgets == sorted(budgets, reverse=True), (condition.id, dim, budgets)


def test_friction_costs_and_levels():
    assert friction_cost("unknown_question") >= 1
    assert friction_cost("repeated_question") >= friction_cost("unknown_question")
    assert friction_cost("no_progress") >= 1
    with pytest.raises(ValueError, match="did you mean 'no_progress'"):
        friction_cost("no-progress")
    assert [friction_level(p) for p in (10, 4, 3, 2, 1, 0, -1)] == ["mild", "mild", "firm", "firm", "final", "final", "final"]


def test_phrasing_is_deterministic_for_a_seed():
    cid = "fear.anxiety/warm/high/cautious"

    def say(seed):
        rng = random.Random(seed)
        return [opening(cid, rng, "cancel my booking"), reply_prefix(cid, rng), dont_know(cid, rng),
                friction(cid, rng, 1), give_up(cid, rng)]

    assert say(4) == say(4)
    assert {tuple(say(s)) for s in range(10)} != {tuple(say(4))}


def test_every_condition_can_speak():
    rng = random.Random(0)
    for condition in all_conditions():
        first = opening(condition, rng, "I want to cancel reservation ABC123")
        assert "I want to cancel reservation ABC123." in first
        for line in (reply_prefix(condition, rng), dont_know(condition, rng), give_up(condition, rng),
                     *(friction(condition, rng, p) for p in (5, 2, 1))):
            assert line and line == line.strip() and "  " not in line
            assert "###" not in line


def test_friction_gets_sharper_as_patience_drops():
    condition = "anger.frustration/neutral/moderate/cautious"
    bank = phrases()["friction"]["anger"]
    assert friction(condition, random.Random(1), 6) in bank["mild"]
    assert friction(condition, random.Random(1), 2) in bank["firm"]
    assert friction(condition, random.Random(1), 1) in bank["final"]


def test_voice_follows_the_condition():
    rng = random.Random(0)
    warm = {dont_know("sadness.sorrow/warm/low/trusting", rng) for _ in range(30)}
    assert any("Sorry about that." in line for line in warm)
    cold = {opening("anger.exasperation/cold/high/skeptical", rng, "fix it") for _ in range(30)}
    assert not any("thank" in line.lower() for line in cold)


def test_the_neutral_control_user_is_as_patient_as_the_median_emotional_one():
    """The no-emotion control spends patience like every emotional style, from the median budget."""
    from statistics import median

    from tau_emotion.emotion_pack import expression
    from tau_emotion.emotion_pack.taxonomy import all_conditions
    from tau_emotion.plugins.scripted_user import FRICTION_COST, NEUTRAL_PATIENCE

    assert NEUTRAL_PATIENCE == median(expression.patience_budget(c) for c in all_conditions())
    assert FRICTION_COST == expression.patience_rules()["friction_cost"]


def test_only_a_repeated_question_hears_that_it_was_said_already():
    """Issue 33: "I've said this already" came after an "I don't know" (an unknown question) and after no progress."""
    repeats = phrases()["friction_repeat"]
    assert repeats and all(any(r in lines for lines in phrases()["friction"]["anger"].values()) for r in repeats)
    condition = next(c for c in all_conditions() if c.family == "anger")
    rng = random.Random(3)
    heard = {kind: {friction(condition, rng, p, kind) for _ in range(60) for p in (6, 3)}
             for kind in ("unknown_question", "no_progress", "repeated_question")}
    said = {kind: any(r in line for line in lines for r in repeats) for kind, lines in heard.items()}
    assert said == {"unknown_question": False, "no_progress": False, "repeated_question": True}
