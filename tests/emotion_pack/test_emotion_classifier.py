"""The feelings classifier: the shipped model file, its reproduction from the bank, valid conditions, accuracy."""

import pickle
import subprocess
import sys

import numpy as np
import pytest

from tau_emotion.core.errors import TauError
from tau_emotion.emotion_pack import classifier as classifier_module
from tau_emotion.emotion_pack.anchors import anchor_rows
from tau_emotion.emotion_pack.classifier import (
    DEFAULT_PATH,
    HEADS,
    WRITE_COMMAND,
    FeelingsClassifier,
    ModelFileError,
    check_texts,
    differences,
    evaluate,
    feature_settings,
    lexicon_samples,
    load_feelings_eval,
    training_key,
)
from tau_emotion.emotion_pack.taxonomy import DIMENSIONS, EMOTIONS, FAMILIES, Condition, parse_condition


@pytest.fixture(scope="module")
def classifier():
    return FeelingsClassifier.load()


@pytest.fixture(scope="module")
def trained():
    """The one training of the whole bank in the test suite (about 10 s, in the background worker)."""
    from tests import background

    return background.result("full")


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


def test_result_holds_a_valid_condition_with_confidences_and_ranked_probabilities(classifier):
    result = classifier.classify("I'm terrified my refund will never arrive and nobody answers. Please hurry!")
    assert isinstance(result.condition, Condition)
    assert result.family == result.condition.family == "fear"
    assert EMOTIONS[result.emotion] == result.family
    assert parse_condition(result.condition_id) == result.condition
    assert set(result.probabilities) == set(result.confidence) == set(HEADS)
    for head, probs in result.probabilities.items():
        values = list(probs.values())
        assert values == sorted(values, reverse=True) and 0 < sum(values) <= 1.0001, head
        assert all(isinstance(label, str) for label in probs)
        assert 0 < result.confidence[head] <= 1
    for head in ("family", *DIMENSIONS):  # the top label of these heads is the chosen one
        label, top = next(iter(result.probabilities[head].items()))
        assert label == getattr(result.condition, head) and result.confidence[head] == pytest.approx(top, abs=5e-5)
    assert set(result.probabilities["urgency"]) == set(DIMENSIONS["urgency"])
    data = result.to_dict()
    assert list(data) == ["condition", "family", "emotion", "politeness", "urgency", "trust", "probabilities"]
    assert data["condition"] == result.condition.id and data["trust"] == result.condition.trust


def test_emotion_is_the_likeliest_inside_the_chosen_family(classifier):
    texts = [r["text"] for r in load_feelings_eval()]
    probs = classifier.probabilities(texts)
    emotions = classifier.classes["emotion"]
    for i, result in enumerate(classifier.classify_many(texts)):
        inside = [j for j, e in enumerate(emotions) if EMOTIONS[e] == result.family]
        best = max(inside, key=lambda j: probs["emotion"][i, j])
        assert result.emotion == emotions[best]
        assert result.confidence["emotion"] == probs["emotion"][i, best]


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


def test_shipped_model_is_current(classifier):
    assert classifier.key == training_key(anchor_rows()), (
        f"the shipped feelings model is stale (the anchor bank, taxonomy or recipe changed): rerun `{WRITE_COMMAND}`"
    )
    assert DEFAULT_PATH.stat().st_size < 4_000_000
    rows = anchor_rows()
    edited = [*rows[:-1], {**rows[-1], "anchor": rows[-1]["anchor"] + " Really."}]
    assert len({training_key(rows), training_key(rows[:-1]), training_key(edited)}) == 3  # any edit makes it stale


@pytest.mark.slow
def test_retraining_reproduces_the_shipped_model(trained, classifier):
    """The only test that trains the whole bank: the shipped file must be what `--write` makes today."""
    hint = (f"the shipped model (trained with {classifier.trained_with}) differs from a fresh training "
            f"(with {trained.trained_with}): rerun `{WRITE_COMMAND}`")
    assert trained.key == classifier.key, hint
    assert trained.classes == classifier.classes, hint
    ours, shipped = trained.model.arrays(), classifier.model.arrays()
    for block in feature_settings():
        assert ours[f"vocabulary_{block}"].tolist() == shipped[f"vocabulary_{block}"].tolist(), hint
    texts = check_texts()
    assert len(texts) > 1400
    # same condition for every text, every head's probabilities within 1e-6
    assert differences(trained, classifier, texts, tolerance=1e-6) == [], hint


@pytest.mark.slow
def test_write_and_check_commands(trained, monkeypatch, tmp_path, capsys):
    monkeypatch.setattr(FeelingsClassifier, "train", classmethod(lambda cls, rows=None: trained))
    monkeypatch.setattr(classifier_module, "check_texts", lambda: check_texts()[:300])
    out = tmp_path / "model.npz"
    assert classifier_module.main(["--write", "--out", str(out)]) == 0
    assert classifier_module.main(["--check", "--out", str(out)]) == 0
    assert classifier_module.main(["--check"]) == 0
    assert "matches a fresh training" in capsys.readouterr().out
    assert out.read_bytes() == trained.write(tmp_path / "again.npz").read_bytes()  # no timestamps inside

    arrays = dict(np.load(out, allow_pickle=False))
    arrays["coef_trust"] = arrays["coef_trust"] * np.float32(1.001)
    np.savez_compressed(out, **arrays)
    assert classifier_module.main(["--check", "--out", str(out)]) == 1
    assert "trust probabilities differ" in capsys.readouterr().out


def test_loading_needs_no_scikit_learn():
    script = ("import sys; from tau_emotion.emotion_pack.classifier import FeelingsClassifier; "
              "FeelingsClassifier.load().classify('I am furious'); print('sklearn' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "False"


def test_shipped_model_is_read_once_per_process(classifier):
    assert FeelingsClassifier.load() is classifier
    again = FeelingsClassifier.load(DEFAULT_PATH)
    assert again is not classifier and again.key == classifier.key
    assert again.classify("I am furious").to_dict() == classifier.classify("I am furious").to_dict()


@pytest.mark.slow
def test_features_match_scikit_learn(classifier):
    """The numpy feature transform equals TfidfVectorizer's, given the same vocabulary and idf (no training)."""
    from sklearn.feature_extraction.text import TfidfVectorizer

    texts = check_texts()[:400] + check_texts()[-6:]
    arrays = classifier.model.arrays()
    for block, reader in zip(feature_settings(), classifier.model.blocks, strict=True):
        kwargs = {k: tuple(v) if k == "ngram_range" else v for k, v in feature_settings()[block].items()}
        vocabulary = arrays[f"vocabulary_{block}"].tolist()
        vectorizer = TfidfVectorizer(vocabulary=vocabulary, **kwargs)
        vectorizer.idf_ = arrays[f"idf_{block}"]
        expected = vectorizer.transform(texts).toarray()
        got = np.zeros_like(expected)
        for i, text in enumerate(texts):
            columns, values = reader.features(text)
            got[i, columns - reader.offset] = values
        assert np.abs(expected - got).max() < 1e-12, block


@pytest.mark.parametrize("damage", ["truncated", "garbage", "empty", "missing"])
def test_unreadable_model_file_is_a_one_line_error_naming_it(tmp_path, damage):
    path = tmp_path / "feelings_model.npz"
    shipped = DEFAULT_PATH.read_bytes()
    if damage == "truncated":
        path.write_bytes(shipped[: len(shipped) // 2])
    elif damage == "garbage":
        path.write_bytes(b"PK\x03\x04 not really a zip archive")
    elif damage == "empty":
        path.write_bytes(b"")
    with pytest.raises(ModelFileError) as info:
        FeelingsClassifier.load(path)
    assert isinstance(info.value, TauError)
    message = str(info.value)
    assert str(path) in message and "\n" not in message


def _rewritten(tmp_path, change):
    arrays = dict(np.load(DEFAULT_PATH, allow_pickle=False))
    change(arrays)
    path = tmp_path / "changed.npz"
    np.savez_compressed(path, **arrays)
    return path


def _set_format(arrays):
    arrays["meta"] = np.array(str(arrays["meta"]).replace('"format": 1', '"format": 99'))


@pytest.mark.slow
@pytest.mark.parametrize("change, words", [
    (_set_format, "format 99"),
    (lambda arrays: arrays.update(coef_emotion=arrays["coef_emotion"][:, :-1]), "emotion head"),
    (lambda arrays: arrays.pop("idf_char"), "idf_char"),
    (lambda arrays: arrays.pop("meta"), "meta"),
])
def test_inconsistent_model_file_is_refused(tmp_path, change, words):
    path = _rewritten(tmp_path, change)
    with pytest.raises(ModelFileError, match=words) as info:
        FeelingsClassifier.load(path)
    assert str(path) in str(info.value)


PAYLOAD_RAN = []


def _payload():
    PAYLOAD_RAN.append(True)
    return "meta"


class _Payload:
    def __reduce__(self):
        return (_payload, ())


def test_loading_never_unpickles(tmp_path, monkeypatch):
    path = _rewritten(tmp_path, lambda arrays: arrays.update(meta=np.array([_Payload()], dtype=object)))
    with pytest.raises(ModelFileError, match="allow_pickle"):
        FeelingsClassifier.load(path)
    assert PAYLOAD_RAN == []

    def refuse(*args, **kwargs):
        raise AssertionError("the model loader unpickled something")

    for name in ("load", "loads", "Unpickler"):
        monkeypatch.setattr(pickle, name, refuse)
    assert FeelingsClassifier.load(DEFAULT_PATH).classify("I am furious").family == "anger"


@pytest.mark.slow
def test_held_out_anchor_accuracy_is_at_least_90_percent_per_head(classifier, held_out_trained):
    report = evaluate(classifier=classifier)  # uses the held-out model the background worker trained
    anchors = report["anchors"]
    assert anchors["test_indices"] == [8, 9] and anchors["test_rows"] == 594 * 2
    for head in HEADS:
        assert anchors["accuracy"][head] >= 0.90, (head, anchors["accuracy"])
    free = report["free_text"]
    assert free["rows"] >= 200
    assert set(free["accuracy"]) == {*HEADS, "condition"}
    assert free["accuracy"]["family"] >= 0.75, free["accuracy"]


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
