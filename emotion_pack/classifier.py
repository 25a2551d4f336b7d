"""The feelings classifier: free text ("I'm terrified my refund will never come") -> an emotion condition.

One logistic-regression head per dimension (family, emotion, politeness, urgency, trust) shares a
TF-IDF feature space of word 1-2-grams and character 3-4-grams. The heads learn from the anchor
bank plus short synthetic customer sentences built from the taxonomy lexicons (`data/classifier.json`
says how), so that plain synonyms the anchors never use still land in the right family. The
family is the average of the family head and the emotion head's probabilities summed per family;
the emotion is then the likeliest one inside that family, so a result is always a valid condition.

The fitted model ships as package data, `data/feelings_model.npz`: vocabularies, idf weights,
the vectorizer settings and each head's classes, coefficients and intercepts, as plain arrays
(read with `allow_pickle=False`, so loading it cannot run code). `FeelingsClassifier.load()`
reads it and predicts with numpy alone: no training, no scikit-learn, no cache at run time.
Training (scikit-learn, about 9 s) is only for rebuilding that file and for `tau emotions eval`'s
held-out split. After changing the anchor bank, the taxonomy or the recipe, rebuild it with

    python -m tau_emotion.emotion_pack.classifier --write

(`--check` retrains and says whether the shipped file still matches; a test does the same).
"""

from __future__ import annotations

import argparse
import hashlib
import io
import json
import os
import random
import re
import sys
import time
import zipfile
import zlib
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from functools import cache
from importlib.resources import files
from pathlib import Path
from typing import Any

import numpy as np

from tau_emotion.core.errors import DataError, TauError
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

HEADS = ("family", "emotion", *DIMENSION_NAMES)
MODEL_FILE = "feelings_model.npz"
#: where `--write` puts the model by default: the package's own data folder
DEFAULT_PATH = Path(__file__).resolve().parent / "data" / MODEL_FILE
WRITE_COMMAND = "python -m tau_emotion.emotion_pack.classifier --write"
#: version of the file layout below; a file with another version is refused
MODEL_FORMAT = 1
#: logistic-regression settings besides C (which is in the recipe)
MAX_ITER = 2000


#: what to install to train (the shipped model loads without it): `pyproject.toml`'s `classifier` extra
TRAIN_INSTALL_HINT = "pip install 'tau-emotion[classifier]'"


class ModelFileError(DataError):
    """The shipped classifier file (or one given by path) cannot be read; the message names it."""


@cache
def recipe() -> dict[str, Any]:
    """The parsed `data/classifier.json` (cached; treat as read-only)."""
    return json.loads(files(__package__).joinpath("data", "classifier.json").read_text(encoding="utf-8"))


def feature_settings() -> dict[str, dict[str, Any]]:
    """TfidfVectorizer settings of the two feature blocks, in column order (JSON-ready).

    Training passes them to scikit-learn; the model file records them, and `_Block` computes the
    same features from them without scikit-learn.
    """
    common = {"lowercase": True, "sublinear_tf": True, "norm": "l2", "use_idf": True, "smooth_idf": True}
    return {
        "word": {"analyzer": "word", "ngram_range": [1, 2], "token_pattern": r"(?u)\b\w[\w']*\b", "min_df": 1, **common},
        "char": {"analyzer": "char_wb", "ngram_range": list(recipe()["char_ngrams"]), "min_df": 2, **common},
    }


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
    """Hash of everything a trained model depends on: anchor rows, taxonomy, recipe and settings.

    The library versions are not part of it: the shipped file does not need scikit-learn, and a
    version whose training differs shows up in the test that retrains and compares.
    """
    digest = hashlib.sha256()
    settings = {"features": feature_settings(), "max_iter": MAX_ITER}
    for part in (recipe(), taxonomy_data(), settings, [[r["condition"], r["anchor"]] for r in rows]):
        digest.update(json.dumps(part, sort_keys=True, ensure_ascii=False).encode("utf-8"))
        digest.update(b"\0")
    return digest.hexdigest()[:20]


@dataclass(frozen=True)
class Classification:
    """The condition a text most likely expresses, how sure each head is, and each head's top labels."""

    text: str
    condition: Condition
    #: head -> probability of the label chosen for the condition (for the emotion: the likeliest
    #: one inside the chosen family, which need not be the emotion head's overall favourite)
    confidence: dict[str, float]
    #: head -> {label: probability}, likeliest first (top `top_k` of each head, rounded to 4 places)
    probabilities: dict[str, dict[str, float]]

    @property
    def condition_id(self) -> str:
        return self.condition.id

    @property
    def family(self) -> str:
        return self.condition.family

    @property
    def emotion(self) -> str:
        return self.condition.emotion

    @property
    def politeness(self) -> str:
        return self.condition.politeness

    @property
    def urgency(self) -> str:
        return self.condition.urgency

    @property
    def trust(self) -> str:
        return self.condition.trust

    def to_dict(self) -> dict[str, Any]:
        return {"condition": self.condition.id, **{head: getattr(self.condition, head) for head in HEADS},
                "probabilities": self.probabilities}


class _Block:
    """One TF-IDF block computed as scikit-learn's TfidfVectorizer does, from its saved vocabulary and idf."""

    def __init__(self, settings: dict[str, Any], vocabulary: Sequence[str], idf: np.ndarray, offset: int):
        self.settings, self.idf, self.offset = settings, idf, offset
        self.index = {term: i for i, term in enumerate(vocabulary)}
        self.min_n, self.max_n = settings["ngram_range"]
        if settings["analyzer"] == "word":
            self.token_re = re.compile(settings["token_pattern"])
            self.analyze = self._words
        else:
            self.analyze = self._char_wb

    def _words(self, text: str) -> list[str]:
        tokens = self.token_re.findall(text)
        return [" ".join(tokens[i:i + n]) for n in range(self.min_n, self.max_n + 1) for i in range(len(tokens) - n + 1)]

    def _char_wb(self, text: str) -> list[str]:
        grams = []
        for word in re.sub(r"\s\s+", " ", text).split():
            word = f" {word} "
            for n in range(self.min_n, self.max_n + 1):
                grams.extend(word[i:i + n] for i in range(max(len(word) - n + 1, 1)))
                if len(word) <= n:  # a word shorter than n is one n-gram, counted once
                    break
        return grams

    def features(self, text: str) -> tuple[np.ndarray, np.ndarray]:
        """`text`'s non-zero columns (offset into the whole feature space) and values: tf x idf, L2-normalised."""
        if self.settings["lowercase"]:
            text = text.lower()
        index = self.index
        found = sorted((index[term], n) for term, n in Counter(self.analyze(text)).items() if term in index)
        columns = np.array([c for c, _ in found], dtype=np.intp)
        values = np.array([n for _, n in found], dtype=np.float64)
        if self.settings["sublinear_tf"]:
            values = np.log(values) + 1
        values *= self.idf[columns]
        norm = np.sqrt(np.dot(values, values))
        return columns + self.offset, values / norm if norm else values


def _softmax(logits: np.ndarray) -> np.ndarray:
    # as scikit-learn's LogisticRegression.predict_proba does for a multinomial head
    exp = np.exp(logits - logits.max(axis=1, keepdims=True))
    return exp / exp.sum(axis=1, keepdims=True)


class _Fitted:
    """The scikit-learn objects of a model trained in this process (the reference implementation)."""

    def __init__(self, vectorizer: Any, heads: dict[str, Any]):
        self.vectorizer, self.heads = vectorizer, heads
        self.classes = {head: [str(c) for c in model.classes_] for head, model in heads.items()}

    def probabilities(self, texts: list[str]) -> dict[str, np.ndarray]:
        features = self.vectorizer.transform(texts)
        return {head: model.predict_proba(features) for head, model in self.heads.items()}

    def arrays(self) -> dict[str, np.ndarray]:
        out: dict[str, np.ndarray] = {}
        for name, block in self.vectorizer.transformer_list:
            out[f"vocabulary_{name}"] = np.array(sorted(block.vocabulary_, key=block.vocabulary_.get), dtype=str)
            out[f"idf_{name}"] = block.idf_.astype(np.float64)
        for head, model in self.heads.items():
            if len(model.classes_) < 3:
                raise ValueError(f"head {head!r} has {len(model.classes_)} classes; the model file assumes multinomial heads")
            # float32 halves the file; it moves probabilities by ~3e-8, far inside the 1e-6 the tests allow
            out[f"coef_{head}"] = model.coef_.astype(np.float32)
            out[f"intercept_{head}"] = model.intercept_.astype(np.float64)
        return out


class _Arrays:
    """A model read from a file: TF-IDF blocks and logistic-regression heads computed with numpy."""

    def __init__(self, settings: list[dict[str, Any]], classes: dict[str, list[str]], arrays: dict[str, np.ndarray]):
        self.classes, self._arrays = classes, arrays
        self.blocks, offset = [], 0
        for block_settings in settings:  # in column order
            name = block_settings["name"]
            vocabulary = arrays[f"vocabulary_{name}"].tolist()
            self.blocks.append(_Block(block_settings, vocabulary, arrays[f"idf_{name}"], offset))
            offset += len(vocabulary)
        # one (features x all heads' labels) matrix, so a text's logits are one small product
        self.weights = np.hstack([arrays[f"coef_{head}"].T for head in HEADS]).astype(np.float64)
        self.intercept = np.concatenate([arrays[f"intercept_{head}"] for head in HEADS])
        self.splits = np.cumsum([len(classes[head]) for head in HEADS])[:-1]

    def probabilities(self, texts: list[str]) -> dict[str, np.ndarray]:
        logits = np.empty((len(texts), len(self.intercept)))
        for i, text in enumerate(texts):
            parts = [block.features(text) for block in self.blocks]
            columns = np.concatenate([c for c, _ in parts])
            values = np.concatenate([v for _, v in parts])
            logits[i] = values @ self.weights[columns] + self.intercept
        return {head: _softmax(part) for head, part in zip(HEADS, np.split(logits, self.splits, axis=1), strict=True)}

    def arrays(self) -> dict[str, np.ndarray]:
        return dict(self._arrays)


class FeelingsClassifier:
    """Shared TF-IDF features + one logistic-regression head per dimension: `load()` the shipped one, or `train(rows)`."""

    def __init__(self, model: _Fitted | _Arrays, key: str, n_samples: int, trained_with: dict[str, str],
                 train_seconds: float | None = None):
        self.model = model
        self.key = key
        self.n_samples = n_samples
        #: library versions the model was trained with ({"scikit-learn": ..., "numpy": ..., "scipy": ...})
        self.trained_with = trained_with
        #: seconds the training took, for a model trained in this process (None for a loaded one)
        self.train_seconds = train_seconds

    @property
    def classes(self) -> dict[str, list[str]]:
        """head -> its labels, in the column order of `probabilities()`."""
        return self.model.classes

    @classmethod
    def train(cls, rows: Sequence[dict[str, Any]] | None = None) -> FeelingsClassifier:
        """Train on anchor `rows` (default: the whole committed bank) plus the lexicon sentences (scikit-learn,
        the `[classifier]` extra; loading and predicting need only numpy)."""
        try:
            import scipy
            import sklearn
            from sklearn.feature_extraction.text import TfidfVectorizer
            from sklearn.linear_model import LogisticRegression
            from sklearn.pipeline import FeatureUnion
            from threadpoolctl import threadpool_limits
        except ImportError as exc:
            raise TauError(f"training the feelings classifier needs scikit-learn ({exc.name} is not installed): "
                           f"{TRAIN_INSTALL_HINT}") from None

        rows = anchor_rows() if rows is None else list(rows)
        started = time.perf_counter()
        samples = _anchor_samples(rows) + lexicon_samples()
        blocks = []
        for name, settings in feature_settings().items():
            kwargs = {k: tuple(v) if k == "ngram_range" else v for k, v in settings.items()}
            blocks.append((name, TfidfVectorizer(**kwargs)))
        vectorizer = FeatureUnion(blocks)
        heads = {}
        # Multi-threaded BLAS makes these small sparse fits several times slower on a busy small machine.
        with threadpool_limits(limits=1):
            features = vectorizer.fit_transform([s.text for s in samples]).tocsr()
            for head in HEADS:
                picked = [i for i, s in enumerate(samples) if head in s.labels]
                model = LogisticRegression(C=recipe()["logistic_regression_c"], max_iter=MAX_ITER)
                model.fit(features[picked], [samples[i].labels[head] for i in picked])
                heads[head] = model
        seconds = round(time.perf_counter() - started, 2)
        versions = {"scikit-learn": sklearn.__version__, "numpy": np.__version__, "scipy": scipy.__version__}
        return cls(_Fitted(vectorizer, heads), training_key(rows), len(samples), versions, seconds)

    @classmethod
    def load(cls, path: str | os.PathLike[str] | None = None) -> FeelingsClassifier:
        """The shipped model (read once per process), or the model file at `path` (read each call).

        Raises `ModelFileError`, naming the file, when it cannot be read. A shipped file whose key
        differs from `training_key(anchor_rows())` is stale but still loads (a test catches it).
        """
        if path is None:
            return _shipped()
        try:
            with open(path, "rb") as fh:
                return _read_model(fh, str(path))
        except OSError as exc:  # only the open itself: _read_model turns read errors into ModelFileError
            raise ModelFileError(f"feelings classifier file {path}: cannot open ({exc.strerror or exc})") from None

    def write(self, path: str | os.PathLike[str] = DEFAULT_PATH) -> Path:
        """Write the model file (byte-identical for identical models, so a rebuild leaves git clean)."""
        meta = {
            "format": MODEL_FORMAT,
            "key": self.key,
            "n_samples": self.n_samples,
            "features": [{"name": name, **settings} for name, settings in feature_settings().items()],  # column order
            "heads": self.classes,
            "trained_with": self.trained_with,
        }
        arrays = {"meta": np.array(json.dumps(meta, sort_keys=True, ensure_ascii=False)), **self.model.arrays()}
        buffer = io.BytesIO()
        with zipfile.ZipFile(buffer, "w") as archive:
            for name, array in arrays.items():
                entry = io.BytesIO()
                np.lib.format.write_array(entry, np.asarray(array), allow_pickle=False)
                info = zipfile.ZipInfo(f"{name}.npy", date_time=(1980, 1, 1, 0, 0, 0))  # no timestamps: reproducible
                archive.writestr(info, entry.getvalue(), compress_type=zipfile.ZIP_DEFLATED, compresslevel=9)
        path = Path(path)
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_name(path.name + ".tmp")
        tmp.write_bytes(buffer.getvalue())
        os.replace(tmp, path)
        return path

    def probabilities(self, texts: Sequence[str]) -> dict[str, np.ndarray]:
        """head -> (len(texts), n_labels) probabilities of each head on its own (see `classes`)."""
        return self.model.probabilities(list(texts))

    def _combined(self, probs: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
        probs = dict(probs)
        # Family = the family head averaged with the emotion head summed per family.
        weight = recipe()["family_head_weight"]
        family_classes = self.classes["family"]
        summed = np.zeros_like(probs["family"])
        for j, emotion in enumerate(self.classes["emotion"]):
            summed[:, family_classes.index(EMOTIONS[emotion])] += probs["emotion"][:, j]
        probs["family"] = weight * probs["family"] + (1 - weight) * summed
        return probs

    def classify_many(self, texts: Sequence[str]) -> list[Classification]:
        texts = list(texts)
        return self._classifications(texts, self.probabilities(texts)) if texts else []

    def _classifications(self, texts: list[str], probabilities: dict[str, np.ndarray]) -> list[Classification]:
        probs = self._combined(probabilities)
        top_k = recipe()["top_k"]
        results = []
        for i, text in enumerate(texts):
            ranked = {
                head: sorted(zip(self.classes[head], probs[head][i].tolist(), strict=True), key=lambda kv: -kv[1])
                for head in HEADS
            }
            chosen = {head: ranked[head][0] for head in HEADS}
            family = chosen["family"][0]
            chosen["emotion"] = next((label, p) for label, p in ranked["emotion"] if EMOTIONS[label] == family)
            condition = Condition(**{head: label for head, (label, _) in chosen.items()})
            results.append(Classification(
                text=text,
                condition=condition,
                confidence={head: p for head, (_, p) in chosen.items()},
                probabilities={head: {k: round(v, 4) for k, v in ranked[head][:top_k]} for head in HEADS},
            ))
        return results

    def classify(self, text: str) -> Classification:
        return self.classify_many([text])[0]


def _read_model(fh: Any, name: str) -> FeelingsClassifier:
    def fail(problem: str) -> ModelFileError:
        return ModelFileError(f"feelings classifier file {name}: {problem}; rebuild it with `{WRITE_COMMAND}`")

    try:
        data = np.load(fh, allow_pickle=False)  # never unpickles: pickled content is an error
        if not isinstance(data, np.lib.npyio.NpzFile):
            raise fail("not an .npz archive")
        with data:
            arrays = {key: data[key] for key in data.files}
        meta = json.loads(str(arrays.pop("meta").item()))
    except ModelFileError:
        raise
    except KeyError:
        raise fail("no 'meta' entry") from None
    except (OSError, ValueError, EOFError, zipfile.BadZipFile, zlib.error) as exc:
        raise fail(f"unreadable ({type(exc).__name__}: {exc})") from None
    if not isinstance(meta, dict) or meta.get("format") != MODEL_FORMAT:
        found = meta.get("format") if isinstance(meta, dict) else None
        raise fail(f"format {found!r}, this version reads format {MODEL_FORMAT}")
    try:
        settings, classes = meta["features"], {head: list(meta["heads"][head]) for head in HEADS}
        blocks = [block_settings["name"] for block_settings in settings]
        for block_settings in settings:
            if (block_settings["analyzer"] not in ("word", "char_wb") or block_settings["norm"] != "l2"
                    or not block_settings["use_idf"]):
                raise fail(f"feature block settings this reader does not support: {block_settings}")
        width = sum(len(arrays[f"vocabulary_{block}"]) for block in blocks)
        for block in blocks:
            if arrays[f"vocabulary_{block}"].dtype.kind != "U" or arrays[f"idf_{block}"].dtype.kind != "f":
                raise fail(f"the {block!r} vocabulary must be strings and its idf floats")
            if arrays[f"idf_{block}"].shape != arrays[f"vocabulary_{block}"].shape:
                raise fail(f"vocabulary and idf of {block!r} differ in length")
        for head in HEADS:
            if arrays[f"coef_{head}"].shape != (len(classes[head]), width) or arrays[f"intercept_{head}"].shape != (len(classes[head]),):
                raise fail(f"the {head} head's arrays do not match its {len(classes[head])} labels and {width} features")
        model = _Arrays(settings, classes, arrays)
        return FeelingsClassifier(model, str(meta["key"]), int(meta["n_samples"]), dict(meta["trained_with"]))
    except ModelFileError:
        raise
    except (KeyError, TypeError, ValueError, re.error) as exc:
        raise fail(f"incomplete or inconsistent ({type(exc).__name__}: {exc})") from None


@cache
def _shipped() -> FeelingsClassifier:
    resource = files(__package__).joinpath("data", MODEL_FILE)
    try:
        fh = resource.open("rb")
    except OSError as exc:
        raise ModelFileError(f"feelings classifier file {resource} is missing ({exc}); build it with `{WRITE_COMMAND}`") from None
    with fh:
        return _read_model(fh, str(resource))


def differences(reference: FeelingsClassifier, other: FeelingsClassifier, texts: Sequence[str],
                tolerance: float = 1e-6) -> list[str]:
    """How `other` disagrees with `reference` on `texts`: key, labels, conditions, probabilities beyond `tolerance`."""
    found = []
    if other.key != reference.key:
        found.append(f"training key {other.key} != {reference.key}")
    if other.classes != reference.classes:
        return [*found, "the heads have different labels"]
    texts = list(texts)
    ours, theirs = reference.probabilities(texts), other.probabilities(texts)
    for head in HEADS:
        gap = float(np.abs(ours[head] - theirs[head]).max(initial=0.0))
        if gap > tolerance:
            found.append(f"{head} probabilities differ by up to {gap:.2g}")
    pairs = zip(reference._classifications(texts, ours), other._classifications(texts, theirs), strict=True)
    changed = [a.text for a, b in pairs if a.condition != b.condition]
    if changed:
        found.append(f"{len(changed)} of {len(texts)} texts get another condition, e.g. {changed[0]!r}")
    return found


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


#: held-out models trained in this process, by training key (`evaluate` is asked more than once in tests)
_HELD_OUT: dict[str, FeelingsClassifier] = {}


def held_out_model(rows: Sequence[dict[str, Any]]) -> FeelingsClassifier:
    """`FeelingsClassifier.train(rows)`, trained once per process for the same rows."""
    key = training_key(rows)
    if key not in _HELD_OUT:
        _HELD_OUT[key] = FeelingsClassifier.train(rows)
    return _HELD_OUT[key]


def evaluate(
    *,
    train_indices: Iterable[int] = range(8),
    test_indices: Iterable[int] = (8, 9),
    classifier: FeelingsClassifier | None = None,
    free_text_path: str | os.PathLike[str] | None = None,
) -> dict[str, Any]:
    """Held-out anchor accuracy and free-text accuracy, per head and for the whole condition.

    Anchors are split by index (a held-out anchor is a whole instruction the model never saw):
    a model trained on `train_indices` (plus the lexicon sentences) is scored on `test_indices`.
    That model is trained here (seconds). The free-text set is scored with `classifier`, by
    default the shipped model (all anchors).
    """
    train_set, test_set = set(train_indices), set(test_indices)
    rows = anchor_rows()
    held_out = held_out_model([r for r in rows if r["index"] in train_set])
    test_rows = [r for r in rows if r["index"] in test_set]
    gold = [{head: getattr(c, head) for head in HEADS} for c in (parse_condition(r["condition"]) for r in test_rows)]
    anchor_predictions = held_out.classify_many([r["anchor"] for r in test_rows])

    shipped = classifier or FeelingsClassifier.load()
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


def check_texts() -> list[str]:
    """Texts a rebuilt model must classify as the shipped one does: the free-text set, the anchors `evaluate`
    holds out (indices 8 and 9) and some odd inputs (empty, runs of whitespace, accents, emoji)."""
    odd = ["", "   ", "I'm   SO\u00a0angry!!!\n\tplease", "Café naïve ÉLAN straße don't 🙂", "a", "x_y 42"]
    held_out = [r["anchor"] for r in anchor_rows() if r["index"] in (8, 9)]
    return [r["text"] for r in load_feelings_eval()] + held_out + odd


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tau_emotion.emotion_pack.classifier",
                                     description="Train the feelings classifier on the committed anchor bank and "
                                                 "write it as package data, or check that the shipped file matches.")
    action = parser.add_mutually_exclusive_group(required=True)
    action.add_argument("--write", action="store_true", help="train and write the model file")
    action.add_argument("--check", action="store_true", help="train and compare with the file; exit 1 if it differs")
    parser.add_argument("--out", type=Path, default=DEFAULT_PATH, help="model file (default: the packaged one)")
    args = parser.parse_args(argv)
    trained = FeelingsClassifier.train()
    if args.write:
        path = trained.write(args.out)
        print(f"trained on {trained.n_samples} texts in {trained.train_seconds:.1f}s; "
              f"wrote {path} ({path.stat().st_size / 1e6:.1f} MB, key {trained.key})")
        return 0
    try:
        found = differences(trained, FeelingsClassifier.load(args.out), check_texts())
    except (ModelFileError, OSError) as exc:
        found = [str(exc)]
    if found:
        found.append(f"trained with {trained.trained_with}; rerun `{WRITE_COMMAND}`")
    print(f"{args.out}: " + ("matches a fresh training" if not found else "stale: " + "; ".join(found)))
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
