"""The taxonomy: 594 stable conditions, strict parsing with suggestions, the --emotion spec."""

import random

import pytest

from tau_emotion.emotion_pack.taxonomy import (
    DIMENSIONS,
    EMOTIONS,
    FAMILIES,
    Condition,
    ConditionError,
    all_conditions,
    dimension_default,
    dimension_lexicon,
    emotion_description,
    emotion_lexicon,
    family_lexicon,
    parse_condition,
    resolve_condition_spec,
)


def test_families_emotions_and_dimensions():
    assert list(FAMILIES) == ["anger", "disgust", "fear", "sadness", "enjoyment"]
    assert len(EMOTIONS) == 22
    assert FAMILIES["fear"] == ("nervousness", "anxiety", "dread", "desperation")
    assert EMOTIONS["disappointment"] == "sadness"
    assert DIMENSIONS == {
        "politeness": ("warm", "neutral", "cold"),
        "urgency": ("low", "moderate", "high"),
        "trust": ("trusting", "cautious", "skeptical"),
    }


def test_594_unique_conditions_in_stable_order():
    conditions = all_conditions()
    ids = [c.id for c in conditions]
    assert len(ids) == 594 == len(set(ids))
    assert ids[0] == "anger.annoyance/warm/low/trusting"
    assert ids[-1] == "enjoyment.excitement/cold/high/skeptical"
    assert ids == [c.id for c in all_conditions()]
    assert all(parse_condition(i) == c for i, c in zip(ids, conditions, strict=True))


def test_condition_id_and_dict():
    c = Condition("fear", "anxiety", "warm", "high", "cautious")
    assert c.id == "fear.anxiety/warm/high/cautious" == str(c)
    assert c.to_dict() == {"family": "fear", "emotion": "anxiety", "politeness": "warm", "urgency": "high", "trust": "cautious"}
    with pytest.raises(ConditionError):
        Condition("fear", "pride", "warm", "high", "cautious")


def test_parse_is_lenient_about_case_and_spaces():
    assert parse_condition("  Fear.Anxiety/WARM/high/cautious ").id == "fear.anxiety/warm/high/cautious"


@pytest.mark.parametrize(
    "text, nearest",
    [
        ("fear.anxeity/warm/high/cautious", "anxiety"),
        ("fear.anxiety/wram/high/cautious", "warm"),
        ("fear.anxiety/warm/hihg/cautious", "high"),
        ("fear.anxiety/warm/high/sceptical", "skeptical"),
        ("anger.anxiety/warm/high/cautious", "fear.anxiety/warm/high/cautious"),
        ("fear.anxiety/warm/high", "fear.anxiety/warm/high/"),
    ],
)
def test_unknown_condition_suggests_nearest(text, nearest):
    with pytest.raises(ConditionError) as info:
        parse_condition(text)
    assert isinstance(info.value, ValueError)
    assert f"did you mean '{nearest}" in str(info.value)


def test_unknown_value_lists_valid_values():
    with pytest.raises(ConditionError, match="valid: trusting, cautious, skeptical"):
        parse_condition("fear.anxiety/warm/high/gullible")


def test_resolve_spec_none_random_family_emotion():
    rng = random.Random(7)
    assert resolve_condition_spec("none", rng) is None
    picks = [resolve_condition_spec("random", random.Random(3)) for _ in range(2)]
    assert picks[0] == picks[1]
    assert {resolve_condition_spec("family:fear", rng).family for _ in range(30)} == {"fear"}
    assert {resolve_condition_spec("emotion:pride", rng).emotion for _ in range(10)} == {"pride"}
    assert resolve_condition_spec("sadness.sorrow/cold/low/skeptical", rng).id == "sadness.sorrow/cold/low/skeptical"


def test_resolve_spec_unknown_family_lists_families_and_nearest():
    with pytest.raises(ConditionError) as info:
        resolve_condition_spec("family:feer", random.Random(0))
    message = str(info.value)
    assert "did you mean 'fear'?" in message
    assert "anger, disgust, fear, sadness, enjoyment" in message


def test_resolve_spec_misspelt_prefix_names_the_prefix_meant():
    """Issue 36: `famly:fear` was a "malformed condition id" that never said `family:`."""
    for spec, meant in (("famly:fear", "family:fear"), ("Emotoin: anxiety", "emotion:anxiety")):
        with pytest.raises(ConditionError) as info:
            resolve_condition_spec(spec, random.Random(0))
        assert f"did you mean '{meant}'?" in str(info.value) and "malformed" not in str(info.value)
    with pytest.raises(ConditionError, match="is not a prefix") as info:
        resolve_condition_spec("colour:blue", random.Random(0))
    assert "did you mean" not in str(info.value)


def test_resolve_spec_bare_family_points_to_prefixed_form():
    with pytest.raises(ConditionError, match="did you mean 'family:fear'"):
        resolve_condition_spec("fear", random.Random(0))


def test_lexicons_are_rich_and_do_not_overlap():
    owners: dict[str, str] = {}
    for emotion in EMOTIONS:
        words = emotion_lexicon(emotion)
        assert 15 <= len(words) <= 30, emotion
        assert emotion_description(emotion)
        for word in words:
            assert owners.setdefault(word.lower(), emotion) == emotion, f"{word!r} in {owners[word.lower()]} and {emotion}"
    for family in FAMILIES:
        for word in family_lexicon(family):
            assert owners.setdefault(word.lower(), family) == family, word
    for dim, values in DIMENSIONS.items():
        assert dimension_default(dim) in values
        for value in values:
            assert len(dimension_lexicon(dim, value)) >= 15
            for word in dimension_lexicon(dim, value):
                assert owners.setdefault(word.lower(), value) == value, word
    assert "gutted" in emotion_lexicon("disappointment")
    assert "over the moon" in emotion_lexicon("excitement")
