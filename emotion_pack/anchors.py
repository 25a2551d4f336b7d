"""The anchor bank: ten second-person instructions per condition telling a simulated user how to feel.

Anchors are generated, not hand-typed, so that they can be reviewed as data and regenerated
exactly. `data/phrasebanks.json` holds Jinja2 templates and phrase banks (per emotion: adjectives,
'feel' sentences and 'behave' clauses; per dimension value: clauses). For each condition a
`random.Random` seeded with `"{seed}/{condition id}"` deals phrases from shuffled decks, so the ten
anchors of a condition use different wording and regenerating one condition never shifts another.
The committed bank is `data/anchors.jsonl`; regenerate it with

    python -m tau_emotion.emotion_pack.anchors --seed 0

`paraphrase_anchors` rewrites anchors through an LLM (litellm) into a separate JSONL for
experiments with more varied wording; the committed bank stays template-made.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import re
import sys
from collections.abc import Iterable, Sequence
from functools import cache
from importlib.resources import files
from pathlib import Path
from typing import Any

import jinja2

from tau_emotion.emotion_pack.taxonomy import (
    DIMENSION_NAMES,
    Condition,
    ConditionError,
    all_conditions,
    dimension_description,
    emotion_description,
    parse_condition,
)

ANCHORS_PER_CONDITION = 10
DEFAULT_SEED = 0
#: where `python -m ...anchors` writes by default: the package's own data folder
DEFAULT_PATH = Path(__file__).resolve().parent / "data" / "anchors.jsonl"


@cache
def phrasebanks() -> dict[str, Any]:
    """The parsed `data/phrasebanks.json` (cached; treat as read-only)."""
    return json.loads(files(__package__).joinpath("data", "phrasebanks.json").read_text(encoding="utf-8"))


def _cap(text: str) -> str:
    return text[:1].upper() + text[1:]


def _uncap(text: str) -> str:
    return text[:1].lower() + text[1:]


def _environment() -> jinja2.Environment:
    env = jinja2.Environment(undefined=jinja2.StrictUndefined, autoescape=False, keep_trailing_newline=False)
    env.filters["cap"] = _cap
    env.filters["uncap"] = _uncap
    return env


class _Deck:
    """Deals items in shuffled rounds, so a condition's anchors reuse a phrase only after all were used."""

    def __init__(self, items: Sequence[Any], rng: random.Random):
        self._items = list(items)
        self._rng = rng
        self._queue: list[Any] = []

    def draw(self) -> Any:
        if not self._queue:
            self._queue = self._items[:]
            self._rng.shuffle(self._queue)
        return self._queue.pop()


def phrase_fits(entry: str | dict[str, Any], condition: Condition) -> bool:
    """Whether a phrase may be said by a user of `condition`: no `label:value` of its `not_with` is the
    condition's and, when it has `only_with`, one of those is (so one anchor never says, for instance, both
    "you need a moment before answering" and "you insist on speed")."""
    if isinstance(entry, str):
        return True

    def holds(tags: Iterable[str]) -> bool:
        return any(getattr(condition, label) == value for label, value in (t.split(":", 1) for t in tags))

    only = entry.get("only_with")
    return not holds(entry.get("not_with", ())) and (not only or holds(only))


def _phrases(entries: Iterable[str | dict[str, Any]], condition: Condition) -> list[str]:
    kept = [e if isinstance(e, str) else e["text"] for e in entries if phrase_fits(e, condition)]
    if not kept:
        raise RuntimeError(f"no phrase of the bank fits {condition.id}: loosen a not_with in phrasebanks.json")
    return kept


def _condition_anchors(
    condition: Condition, seed: int, count: int, templates: list[jinja2.Template], feels: list[tuple[Any, jinja2.Template]]
) -> list[str]:
    banks = phrasebanks()
    rng = random.Random(f"{seed}/{condition.id}")
    emotion_bank = banks["emotions"][condition.emotion]
    decks = {
        "template": _Deck(templates, rng),
        "feel": _Deck([t for entry, t in feels if phrase_fits(entry, condition)], rng),
        "adj": _Deck(_phrases(emotion_bank["adj"], condition), rng),
        "behave": _Deck(_phrases(emotion_bank["behave"], condition), rng),
        **{dim: _Deck(_phrases(banks["dimensions"][dim][getattr(condition, dim)], condition), rng)
           for dim in DIMENSION_NAMES},
    }
    anchors: list[str] = []
    for _attempt in range(count * 50):
        feel = decks["feel"].draw().render(adj=decks["adj"].draw())
        slots = {name: decks[name].draw() for name in ("behave", *DIMENSION_NAMES)}
        text = " ".join(decks["template"].draw().render(feel=feel, **slots).split())
        if text not in anchors:
            anchors.append(text)
            if len(anchors) == count:
                return anchors
    raise RuntimeError(f"phrase banks too small for {count} distinct anchors for {condition.id}")


def generate_anchors(seed: int = DEFAULT_SEED, per_condition: int = ANCHORS_PER_CONDITION) -> list[dict[str, Any]]:
    """All anchor rows `{"condition", "index", "anchor"}` in condition order; same seed, same rows."""
    env = _environment()
    banks = phrasebanks()
    templates = [env.from_string(t) for t in banks["templates"]]
    feels = {emotion: [(f, env.from_string(f if isinstance(f, str) else f["text"])) for f in bank["feel"]]
             for emotion, bank in banks["emotions"].items()}
    rows: list[dict[str, Any]] = []
    seen: set[str] = set()
    for condition in all_conditions():
        texts = _condition_anchors(condition, seed, per_condition, templates, feels[condition.emotion])
        for index, text in enumerate(texts):
            if text in seen:
                raise RuntimeError(f"anchor for {condition.id} duplicates another condition's: {text!r}")
            seen.add(text)
            rows.append({"condition": condition.id, "index": index, "anchor": text})
    return rows


def rows_to_jsonl(rows: Iterable[dict[str, Any]]) -> str:
    return "".join(json.dumps(row, ensure_ascii=False) + "\n" for row in rows)


def _read_rows(path: str | os.PathLike[str] | None) -> list[dict[str, Any]]:
    if path is None:
        text = files(__package__).joinpath("data", "anchors.jsonl").read_text(encoding="utf-8")
    else:
        text = Path(path).read_text(encoding="utf-8")
    return [json.loads(line) for line in text.splitlines() if line.strip()]


@cache
def _bank(path: str | None) -> dict[str, tuple[str, ...]]:
    grouped: dict[str, dict[int, str]] = {}
    for row in _read_rows(path):
        grouped.setdefault(row["condition"], {})[int(row["index"])] = row["anchor"]
    return {cid: tuple(by_index[i] for i in sorted(by_index)) for cid, by_index in grouped.items()}


def anchor_rows(path: str | os.PathLike[str] | None = None) -> list[dict[str, Any]]:
    """The bank as rows `{"condition", "index", "anchor"}` (the committed bank unless `path` is given)."""
    bank = _bank(None if path is None else str(path))
    return [{"condition": cid, "index": i, "anchor": text} for cid, texts in bank.items() for i, text in enumerate(texts)]


def load_anchors(path: str | os.PathLike[str] | None = None) -> dict[str, list[str]]:
    """condition id -> its anchors in index order (the file is read once and cached)."""
    return {cid: list(texts) for cid, texts in _bank(None if path is None else str(path)).items()}


def anchor_for(condition: Condition | str, index_or_rng: int | random.Random) -> str:
    """One anchor of `condition`: by index (0-9), or drawn with a seeded `random.Random`."""
    cond = condition if isinstance(condition, Condition) else parse_condition(condition)
    texts = _bank(None).get(cond.id)
    if not texts:
        raise ConditionError(f"no anchors for condition '{cond.id}'; regenerate data/anchors.jsonl")
    if isinstance(index_or_rng, random.Random):
        return index_or_rng.choice(texts)
    if not 0 <= index_or_rng < len(texts):
        raise IndexError(f"anchor index {index_or_rng} out of range 0-{len(texts) - 1} for {cond.id}")
    return texts[index_or_rng]


_TOKEN = re.compile(r"[a-z0-9]+(?:'[a-z]+)?")


def lexical_diversity(texts: Iterable[str]) -> dict[str, float | int]:
    """Distinct-n ratios (unique n-grams / all n-grams, n = 1, 2, 3; n-grams never cross texts)."""
    orders = (1, 2, 3)
    totals = dict.fromkeys(orders, 0)
    uniques: dict[int, set[tuple[str, ...]]] = {n: set() for n in orders}
    n_texts = 0
    for text in texts:
        n_texts += 1
        tokens = _TOKEN.findall(text.lower())
        for n in orders:
            grams = [tuple(tokens[i : i + n]) for i in range(len(tokens) - n + 1)]
            totals[n] += len(grams)
            uniques[n].update(grams)
    result: dict[str, float | int] = {"texts": n_texts, "tokens": totals[1]}
    for n in orders:
        result[f"distinct_{n}"] = round(len(uniques[n]) / totals[n], 4) if totals[n] else 0.0
    return result


PARAPHRASE_SYSTEM = (
    "You rewrite role-play instructions for a simulated customer talking to a support agent. "
    "Keep the meaning exactly: the same emotion at the same intensity, the same politeness, the same urgency "
    "and the same trust in the agent. Keep it in the second person ('You ...'), about the same length. "
    "Do not add names, facts or a task. Reply with the rewritten instruction only."
)


def _paraphrase_prompt(condition: Condition, anchor: str) -> str:
    lines = [f"Emotion: {condition.emotion} ({condition.family}) - {emotion_description(condition.emotion)}"]
    for dim in DIMENSION_NAMES:
        value = getattr(condition, dim)
        lines.append(f"{dim.capitalize()}: {value} - {dimension_description(dim, value)}")
    lines += ["", "Instruction to rewrite:", anchor]
    return "\n".join(lines)


def _clean_completion(text: str | None) -> str:
    cleaned = " ".join((text or "").split())
    if len(cleaned) >= 2 and cleaned[0] == cleaned[-1] and cleaned[0] in "\"'":
        cleaned = cleaned[1:-1].strip()
    return cleaned


async def aparaphrase_anchors(
    client: Any,
    *,
    out: str | os.PathLike[str],
    conditions: Sequence[Condition | str] | None = None,
    rows: Sequence[dict[str, Any]] | None = None,
    concurrency: int = 8,
) -> dict[str, Any]:
    """Rewrite anchors with a model client (from `pm.model_client(settings)`) and write them to `out` as JSONL.

    Rows keep `condition` and `index` and add `original`, `model` and `paraphrased` (false when
    the call failed or came back empty; the original text is kept then, with `error`). At most
    `concurrency` requests are in flight. Returns counts and the output path.
    """
    if rows is None:
        rows = anchor_rows()
        if conditions is not None:
            wanted = {(c if isinstance(c, Condition) else parse_condition(c)).id for c in conditions}
            rows = [r for r in rows if r["condition"] in wanted]
    model = client.settings.model
    limit = asyncio.Semaphore(max(1, concurrency))

    async def rewrite(row: dict[str, Any]) -> dict[str, Any]:
        condition = parse_condition(row["condition"])
        result = {"condition": row["condition"], "index": row["index"], "anchor": row["anchor"],
                  "original": row["anchor"], "model": model, "paraphrased": False}
        messages = [
            {"role": "system", "content": PARAPHRASE_SYSTEM},
            {"role": "user", "content": _paraphrase_prompt(condition, row["anchor"])},
        ]
        async with limit:
            try:
                text = _clean_completion((await client.complete(messages)).content)
            except Exception as exc:  # one failed call must not lose the others' work
                result["error"] = f"{type(exc).__name__}: {exc}"[:300]
                return result
        if text:
            result.update(anchor=text, paraphrased=True)
        else:
            result["error"] = "empty completion"
        return result

    results = await asyncio.gather(*(rewrite(row) for row in rows))
    path = Path(out)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(rows_to_jsonl(results), encoding="utf-8", newline="\n")
    done = sum(1 for r in results if r["paraphrased"])
    return {"out": str(path), "rows": len(results), "paraphrased": done, "failed": len(results) - done}


def paraphrase_anchors(client: Any, **kwargs: Any) -> dict[str, Any]:
    """Blocking wrapper of `aparaphrase_anchors` (same arguments) for scripts and the CLI."""
    return asyncio.run(aparaphrase_anchors(client, **kwargs))


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tau_emotion.emotion_pack.anchors", description=__doc__.split("\n\n")[0])
    parser.add_argument("--seed", type=int, default=DEFAULT_SEED)
    parser.add_argument("--out", type=Path, default=DEFAULT_PATH, help="output JSONL (default: the packaged bank)")
    parser.add_argument("--check", action="store_true", help="only compare with --out; exit 1 if it differs")
    args = parser.parse_args(argv)
    text = rows_to_jsonl(generate_anchors(seed=args.seed))
    if args.check:
        same = args.out.exists() and args.out.read_text(encoding="utf-8") == text
        print(f"{args.out}: {'up to date' if same else 'differs from the generator output'}")
        return 0 if same else 1
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(text, encoding="utf-8", newline="\n")
    print(f"wrote {text.count(chr(10))} anchors to {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
