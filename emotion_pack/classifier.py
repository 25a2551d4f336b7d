"""The feelings classifier: free text ("I'm terrified my refund will never come") -> an emotion condition.

One scikit-learn head per dimension (family, emotion, politeness, urgency, trust) shares a TF-IDF
feature space of word 1-2-grams and character 2-5-grams. The heads learn from the anchor bank
plus short synthetic customer sentences built from the taxonomy lexicons (`data/classifier.json`
says how), so that plain synonyms the anchors never use still land in the right family. The
family is the average of the family head and the emotion head's probabilities summed per family;
the emotion is then the likeliest one inside that family, so a result is always a valid condition.

Training takes seconds; the model is trained at first use and cached with pickle under
`$TAU_CACHE_DIR` (default `~/.cache/tau-emotion-bench/`), keyed by a hash of the training data,
the recipe and the scikit-learn version. A cache that cannot be read is retrained, never fatal.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import pickle
import random
import tempfile
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from functools import cache
from importlib.resources import files
from pathlib import Path
from typing import Any

from tau_emotion.emotion_pack.anchors import anchor_rows
from tau_emotion.emotion_pack.taxonomy import (
    DIMENSION_NAMES,
    DIMENSIONS,
    EMOTIONS,
    FAMILIES,
    Condition,
    dimension_default,
    dimension_lexicon,
    emotion_lexicon,
    family_lexicon,
    parse_condition,
    taxonomy_data,
)

log = logging.getLogger(__name__)

HEADS = ("family", "emotion", *DIMENSION_NAMES)
CACHE_ENV = "TAU_CACHE_DIR"
_MEMORY: dict[str, FeelingsClassifier] = {}


@cache
def recipe() -> dict[str, Any]:
    """The parsed `data/classifier.json` (cached; treat as read-only)."""
    return json.loads(files(__package__).joinpath("data", "classifier.json").read_text(encoding="utf-8"))


def default_cache_dir() -> Path:
    return Path(os.environ.get(CACHE_ENV) or Path.home() / ".cache" / "tau-emotion-bench")


@dataclass(frozen=True)
class Sample:
    """One training text and the heads it teaches (a head missing from `labels` skips the text)."""

    text: str
    labels: dict[str, str]


def _anchor_samples(rows: Iterable[dict[str, Any]]) -> list[Sample]:
    samples = []
    for row in rows:
        condition = parse_condition(row["condition"])
        labels = {"family": condition.family, "emotion": condition.emotion}
        labels.update({dim: getattr(condition, dim) for dim in DIMENSION_NAMES})
        samples.append(Sample(row["anchor"], labels))
    return samples


class _Deck:
    """Deals items in shuffled rounds, so every lexicon entry is used about equally often."""

    def __init__(self, items: Sequence[str], rng: random.Random):
        self._items, self._rng, self._queue = list(items), rng, []

    def draw(self) -> str:
        if not self._queue:
            self._queue = self._items[:]
            self._rng.shuffle(self._queue)
        return self._queue.pop()


def lexicon_samples(seed: int | None = None) -> list[Sample]:
    """Synthetic short customer sentences from the lexicons (deterministic for a seed)."""
    cfg = recipe()
    rng = random.Random(cfg["seed"] if seed is None else seed)
    frames = {kind: _Deck(items, rng) for kind, items in cfg["frames"].items()}
    topics = _Deck(cfg["topics"], rng)
    cues = {(dim, v): _Deck(dimension_lexicon(dim, v), rng) for dim in DIMENSION_NAMES for v in DIMENSIONS[dim]}

    def say(kind: str, cue: str) -> str:
        return frames[kind].draw().format(x=cue, topic=topics.draw())

    def dimension_parts(labels: dict[str, str]) -> list[str]:
        parts = []
        for dim in DIMENSION_NAMES:
            # Values stay balanced; only the default value is sometimes left unsaid, teaching "no cue -> default".
            value = labels[dim] = rng.choice(DIMENSIONS[dim])
            if value != dimension_default(dim) or rng.random() < cfg["default_cue_probability"]:
                parts.append(say("dimension", cues[dim, value].draw()))
        return parts

    def sentence(parts: list[str]) -> str:
        rng.shuffle(parts)
        return ". ".join(parts)

    samples = []
    for emotion, family in EMOTIONS.items():
        deck = _Deck(emotion_lexicon(emotion), rng)
        for _ in range(cfg["sentences_per_emotion"]):
            labels = {"family": family, "emotion": emotion}
            parts = [say("emotion", deck.draw()), say("topic", "")]
            if rng.random() < cfg["second_emotion_cue_probability"]:
                parts.append(say("emotion", deck.draw()))
            parts += dimension_parts(labels)
            samples.append(Sample(sentence(parts), labels))
    for family in FAMILIES:
        deck = _Deck(family_lexicon(family), rng)
        for _ in range(cfg["sentences_per_family"]):
            labels = {"family": family}
            parts = [say("family", deck.draw()), say("topic", ""), *dimension_parts(labels)]
            samples.append(Sample(sentence(parts), labels))
    return samples


def training_key(rows: Sequence[dict[str, Any]]) -> str:
    """Hash of everything a trained model depends on: anchor rows, taxonomy, recipe, scikit-learn version."""
    import sklearn

    digest = hashlib.sha256()
    for part in (sklearn.__version__, recipe(), taxonomy_data(), [[r["condition"], r["anchor"]] for r in rows]):
        digest.update(json.dumps(part, sort_keys=True, ensure_ascii=False).encode("utf-8"))
        digest.update(b"\0")
    return digest.hexdigest()[:20]


@dataclass(frozen=True)
class Classification:
    """The condition a text most likely expresses, with each head's top probabilities."""

    text: str
    condition_id: str
    family: str
    emotion: str
    politeness: str
    urgency: str
    trust: str
    #: head -> {label: probability}, likeliest first (top `top_k` of each head)
    probabilities: dict[str, dict[str, float]] = field(default_factory=dict)

    @property
    def condition(self) -> Condition:
        return Condition(self.family, self.emotion, self.politeness, self.urgency, self.trust)

    def to_dict(self) -> dict[str, Any]:
        return {
            "condition": self.condition_id,
            "family": self.family,
            "emotion": self.emotion,
            "politeness": self.politeness,
            "urgency": self.urgency,
            "trust": self.trust,
            "probabilities": self.probabilities,
        }


class FeelingsClassifier:
    """Shared TF-IDF features + one logistic-regression head per dimension. Build with `load_or_train`."""

    def __init__(self, vectorizer: Any, heads: dict[str, Any], key: str, train_seconds: float, n_samples: int):
        self.vectorizer = vectorizer
        self.heads = heads
        self.key = key
        self.train_seconds = train_seconds
        self.n_samples = n_samples

    @classmethod
    def train(cls, rows: Sequence[dict[str, Any]] | None = None) -> FeelingsClassifier:
        """Train on anchor `rows` (default: the whole committed bank) plus the lexicon sentences."""
        from sklearn.feature_extraction.text import TfidfVectorizer
        from sklearn.linear_model import LogisticRegression
        from sklearn.pipeline import FeatureUnion
        from threadpoolctl import threadpool_limits

        rows = anchor_rows() if rows is None else list(rows)
        started = time.perf_counter()
        samples = _anchor_samples(rows) + lexicon_samples()
        cfg = recipe()
        vectorizer = FeatureUnion([
            ("word", TfidfVectorizer(ngram_range=(1, 2), sublinear_tf=True, token_pattern=r"(?u)\b\w[\w']*\b")),
            ("char", TfidfVectorizer(analyzer="char_wb", ngram_range=tuple(cfg["char_ngrams"]), sublinear_tf=True, min_df=2)),
        ])
        heads = {}
        # Multi-threaded BLAS makes these small sparse fits several times slower on a busy small machine.
        with threadpool_limits(limits=1):
            features = vectorizer.fit_transform([s.text for s in samples]).tocsr()
            for head in HEADS:
                picked = [i for i, s in enumerate(samples) if head in s.labels]
                model = LogisticRegression(C=cfg["logistic_regression_c"], max_iter=2000)
                model.fit(features[picked], [samples[i].labels[head] for i in picked])
                heads[head] = model
        seconds = round(time.perf_counter() - started, 2)
        return cls(vectorizer, heads, training_key(rows), seconds, len(samples))

    @classmethod
    def load_or_train(
        cls,
        rows: Sequence[dict[str, Any]] | None = None,
        *,
        cache_dir: str | os.PathLike[str] | None = None,
        use_memory_cache: bool = True,
    ) -> FeelingsClassifier:
        """The model for `rows` (default: the committed bank): from memory, from the disk cache, or trained now.

        A cache file that is unreadable, stale or from another version is replaced by a fresh
        training; an unwritable cache directory only costs the next process a retrain.
        """
        rows = anchor_rows() if rows is None else list(rows)
        key = training_key(rows)
        if use_memory_cache and key in _MEMORY:
            return _MEMORY[key]
        path = Path(cache_dir if cache_dir is not None else default_cache_dir()) / f"feelings-{key}.pkl"
        model = _read_cache(path, key)
        if model is None:
            model = cls.train(rows)
            _write_cache(path, model)
        _MEMORY[key] = model
        return model

    def _probabilities(self, texts: Sequence[str]) -> dict[str, Any]:
        features = self.vectorizer.transform(list(texts))
        probs = {head: model.predict_proba(features) for head, model in self.heads.items()}
        # Family = the family head averaged with the emotion head summed per family.
        weight = recipe()["family_head_weight"]
        family_classes = list(self.heads["family"].classes_)
        emotion_classes = list(self.heads["emotion"].classes_)
        summed = probs["family"] * 0.0
        for j, emotion in enumerate(emotion_classes):
            summed[:, family_classes.index(EMOTIONS[emotion])] += probs["emotion"][:, j]
        probs["family"] = weight * probs["family"] + (1 - weight) * summed
        return probs

    def classify_many(self, texts: Sequence[str]) -> list[Classification]:
        texts = list(texts)
        if not texts:
            return []
        probs = self._probabilities(texts)
        classes = {head: [str(c) for c in model.classes_] for head, model in self.heads.items()}
        top_k = recipe()["top_k"]
        results = []
        for i, text in enumerate(texts):
            ranked = {
                head: sorted(zip(classes[head], probs[head][i].tolist(), strict=True), key=lambda kv: -kv[1]) for head in HEADS
            }
            family = ranked["family"][0][0]
            emotion = next(label for label, _ in ranked["emotion"] if EMOTIONS[label] == family)
            chosen = {dim: ranked[dim][0][0] for dim in DIMENSION_NAMES}
            condition = Condition(family, emotion, **chosen)
            results.append(Classification(
                text=text,
                condition_id=condition.id,
                family=family,
                emotion=emotion,
                probabilities={head: {k: round(v, 4) for k, v in ranked[head][:top_k]} for head in HEADS},
                **chosen,
            ))
        return results

    def classify(self, text: str) -> Classification:
        return self.classify_many([text])[0]


def _read_cache(path: Path, key: str) -> FeelingsClassifier | None:
    if not path.exists():
        return None
    try:
        with path.open("rb") as fh:
            model = pickle.load(fh)
    except Exception as exc:  # truncated, corrupt or from an incompatible version: retrain
        log.warning("feelings classifier cache %s unreadable (%s); retraining", path, exc)
        return None
    if not isinstance(model, FeelingsClassifier) or getattr(model, "key", None) != key:
        log.warning("feelings classifier cache %s is stale; retraining", path)
        return None
    return model


def _write_cache(path: Path, model: FeelingsClassifier) -> None:
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=path.name, suffix=".tmp")
        with os.fdopen(fd, "wb") as fh:
            pickle.dump(model, fh, protocol=pickle.HIGHEST_PROTOCOL)
        os.replace(tmp, path)  # atomic, so a concurrent reader never sees half a file
    except OSError as exc:
        log.warning("could not write feelings classifier cache %s (%s)", path, exc)


def load_feelings_eval(path: str | os.PathLike[str] | None = None) -> list[dict[str, str]]:
    """The hand-labelled free-text set (`data/feelings_eval.jsonl` unless `path` is given)."""
    if path is None:
        text = files(__package__).joinpath("data", "feelings_eval.jsonl").read_text(encoding="utf-8")
    else:
        text = Path(path).read_text(encoding="utf-8")
    return [json.loads(line) for line in text.splitlines() if line.strip()]


def _accuracy(predictions: Sequence[Classification], gold: Sequence[dict[str, str]]) -> dict[str, float]:
    n = len(gold)
    scores = {
        head: round(sum(getattr(p, head) == g[head] for p, g in zip(predictions, gold, strict=True)) / n, 4) if n else 0.0
        for head in HEADS
    }
    exact = sum(all(getattr(p, h) == g[h] for h in HEADS) for p, g in zip(predictions, gold, strict=True))
    scores["condition"] = round(exact / n, 4) if n else 0.0
    return scores


def evaluate(
    *,
    train_indices: Iterable[int] = range(8),
    test_indices: Iterable[int] = (8, 9),
    classifier: FeelingsClassifier | None = None,
    free_text_path: str | os.PathLike[str] | None = None,
    cache_dir: str | os.PathLike[str] | None = None,
) -> dict[str, Any]:
    """Held-out anchor accuracy and free-text accuracy, per head and for the whole condition.

    Anchors are split by index (a held-out anchor is a whole instruction the model never saw):
    a model trained on `train_indices` (plus the lexicon sentences) is scored on `test_indices`.
    The free-text set is scored with `classifier`, by default the shipped model (all anchors).
    """
    train_set, test_set = set(train_indices), set(test_indices)
    rows = anchor_rows()
    held_out = FeelingsClassifier.load_or_train([r for r in rows if r["index"] in train_set], cache_dir=cache_dir)
    test_rows = [r for r in rows if r["index"] in test_set]
    gold = [{"family": c.family, "emotion": c.emotion, **{d: getattr(c, d) for d in DIMENSION_NAMES}}
            for c in (parse_condition(r["condition"]) for r in test_rows)]
    anchor_predictions = held_out.classify_many([r["anchor"] for r in test_rows])

    shipped = classifier or FeelingsClassifier.load_or_train(cache_dir=cache_dir)
    free = load_feelings_eval(free_text_path)
    free_predictions = shipped.classify_many([row["text"] for row in free])
    return {
        "anchors": {
            "train_indices": sorted(train_set),
            "test_indices": sorted(test_set),
            "test_rows": len(test_rows),
            "train_seconds": held_out.train_seconds,
            "accuracy": _accuracy(anchor_predictions, gold),
        },
        "free_text": {
            "rows": len(free),
            "accuracy": _accuracy(free_predictions, free),
        },
    }
