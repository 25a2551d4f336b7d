"""The feelings classifier: valid conditions, synonyms land in the right family, held-out accuracy, cache."""

import pickle

import pytest

from tau_emotion.emotion_pack.anchors import anchor_rows
from tau_emotion.emotion_pack.classifier import (
    HEADS,
    FeelingsClassifier,
    _read_cache,
    evaluate,
    lexicon_samples,
    load_feelings_eval,
    training_key,
)
from tau_emotion.emotion_pack.taxonomy import DIMENSIONS, EMOTIONS, FAMILIES, parse_condition


@pytest.fixture(scope="module")
def cache(tmp_path_factory):
    return tmp_path_factory.mktemp("tau-cache")


@pytest.fixture(scope="module")
def classifier(cache):
    return FeelingsClassifier.load_or_train(cache_dir=cache)


@pytest.mark.parametrize(
    "family, text",
    [
        ("fear", "Honestly I am so scared the surgery will go wrong"),
        ("fear", "I'm scared stiff that my visa will be refused"),
        ("sadness", "I'm gutted, the trip got cancelled"),
        ("sadness", "I feel so down since my cat died"),
        ("enjoyment", "We're over the moon about the new flat"),
        ("enjoyment", "I am thrilled to bits with the upgrade"),
        ("anger", "I am sick and tired of waiting on hold"),
        ("anger", "I am furious"),
        ("disgust", "that food was revolting"),
        ("disgust", "I loathe that airline"),
    ],
)
def test_unseen_synonym_sentences_land_in_the_right_family(classifier, family, text):
    assert classifier.classify(text).family == family


def test_result_is_a_valid_condition_with_ranked_probabilities(classifier):
    result = classifier.classify("I'm terrified my refund will never arrive and nobody answers. Please hurry!")
    assert result.family == "fear"
    assert EMOTIONS[result.emotion] == result.family
    assert parse_condition(result.condition_id) == result.condition
    assert set(result.probabilities) == set(HEADS)
    for head, probs in result.probabilities.items():
        values = list(probs.values())
        assert values == sorted(values, reverse=True) and 0 < sum(values) <= 1.0001, head
        assert all(isinstance(label, str) for label in probs)
    assert list(result.probabilities["family"])[0] == result.family
    assert set(result.probabilities["urgency"]) == set(DIMENSIONS["urgency"])
    assert set(result.to_dict()) == {"condition", "family", "emotion", "politeness", "urgency", "trust", "probabilities"}


def test_classify_many(classifier):
    texts = ["I am furious", "that food was revolting"]
    assert [r.family for r in classifier.classify_many(texts)] == ["anger", "disgust"]
    assert classifier.classify_many([]) == []


def test_lexicon_samples_cover_every_emotion_and_family():
    samples = lexicon_samples()
    assert samples == lexicon_samples()
    assert {s.labels["emotion"] for s in samples if "emotion" in s.labels} == set(EMOTIONS)
    assert {s.labels["family"] for s in samples} == set(FAMILIES)
    assert all(set(s.labels) >= {"family", "politeness", "urgency", "trust"} for s in samples)


def test_model_is_cached_on_disk_and_reloaded(classifier, cache):
    path = cache / f"feelings-{classifier.key}.pkl"
    assert path.exists()
    reloaded = FeelingsClassifier.load_or_train(cache_dir=cache, use_memory_cache=False)
    assert reloaded is not classifier
    assert reloaded.classify("I am furious").to_dict() == classifier.classify("I am furious").to_dict()


def test_corrupt_or_stale_cache_is_retrained(tmp_path):
    rows = [r for r in anchor_rows() if r["condition"].startswith("anger.annoyance/")]
    path = tmp_path / f"feelings-{training_key(rows)}.pkl"
    path.write_bytes(b"not a pickle")
    model = FeelingsClassifier.load_or_train(rows, cache_dir=tmp_path, use_memory_cache=False)
    assert model.classify("I am furious").family in FAMILIES
    assert pickle.loads(path.read_bytes()).key == model.key

    assert _read_cache(path, model.key) is not None
    assert _read_cache(path, "another-key") is None  # a file written for other data is not trusted


def test_held_out_anchor_accuracy_is_at_least_90_percent_per_head(classifier, cache):
    report = evaluate(cache_dir=cache, classifier=classifier)
    anchors = report["anchors"]
    assert anchors["test_indices"] == [8, 9] and anchors["test_rows"] == 594 * 2
    for head in HEADS:
        assert anchors["accuracy"][head] >= 0.90, (head, anchors["accuracy"])
    free = report["free_text"]
    assert free["rows"] >= 200
    assert set(free["accuracy"]) == {*HEADS, "condition"}


def test_free_text_set_is_labelled_and_not_taken_from_the_anchors():
    rows = load_feelings_eval()
    assert len(rows) >= 200
    anchors = {r["anchor"] for r in anchor_rows()}
    for row in rows:
        condition = parse_condition(
            f"{row['family']}.{row['emotion']}/{row['politeness']}/{row['urgency']}/{row['trust']}"
        )
        assert condition.family == row["family"]
        assert row["text"] not in anchors
    assert len({r["text"] for r in rows}) == len(rows)
    assert {r["emotion"] for r in rows} == set(EMOTIONS)
