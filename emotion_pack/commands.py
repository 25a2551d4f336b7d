"""`tau emotions ...`: list conditions, show or paraphrase anchors, bank statistics, classify text, evaluate.

`emotions_group()` builds the click group; the emotion plugin adds it to the `tau` CLI. The
classifier and litellm are imported inside the commands that need them, so `tau --help` stays fast.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import click

from tau_emotion.emotion_pack.taxonomy import (
    DIMENSIONS,
    EMOTIONS,
    FAMILIES,
    ConditionError,
    all_conditions,
    conditions_in_family,
    parse_condition,
)


def _echo_json(data: Any) -> None:
    click.echo(json.dumps(data, indent=2, ensure_ascii=False))


def _percent(value: float) -> str:
    return f"{100 * value:5.1f}%"


@click.command("list")
@click.option("--family", "family", metavar="F", help="only conditions of this family")
@click.option("--json", "as_json", is_flag=True, help="print a JSON list of conditions")
def list_command(family: str | None, as_json: bool) -> None:
    """List condition ids (594 in all)."""
    try:
        conditions = conditions_in_family(family.strip().lower()) if family else all_conditions()
    except ConditionError as exc:
        raise click.ClickException(str(exc)) from None
    if as_json:
        _echo_json([{"id": c.id, **c.to_dict()} for c in conditions])
        return
    for condition in conditions:
        click.echo(condition.id)


@click.command("anchors")
@click.argument("condition", required=False)
@click.option("--paraphrase-model", metavar="M", help="rewrite the anchors with this model (through the model-client catalog)")
@click.option("--api-base", metavar="URL", help="OpenAI-compatible endpoint for --paraphrase-model")
@click.option("--out", type=click.Path(dir_okay=False, path_type=Path), help="JSONL to write paraphrases to")
@click.option("--concurrency", default=8, show_default=True, help="paraphrase requests in flight")
def anchors_command(
    condition: str | None, paraphrase_model: str | None, api_base: str | None, out: Path | None, concurrency: int
) -> None:
    """Show the anchors of CONDITION (all conditions when omitted), or paraphrase them with an LLM."""
    from tau_emotion.emotion_pack.anchors import anchor_rows, paraphrase_anchors

    try:
        wanted = parse_condition(condition).id if condition else None
    except ConditionError as exc:
        raise click.ClickException(str(exc)) from None
    rows = [r for r in anchor_rows() if wanted is None or r["condition"] == wanted]
    if paraphrase_model:
        if out is None:
            raise click.ClickException("--paraphrase-model needs --out FILE for the rewritten anchors")
        from tau_emotion.core.models import ModelSettings
        from tau_emotion.core.plugin_cli import command_pm

        settings = ModelSettings.for_role("paraphrase", paraphrase_model, api_base, temperature=0.7)
        client = command_pm().model_client(settings)
        summary = paraphrase_anchors(client, out=out, rows=rows, concurrency=concurrency)
        click.echo(f"paraphrased {summary['paraphrased']}/{summary['rows']} anchors -> {summary['out']}"
                   + (f" ({summary['failed']} kept their original text)" if summary["failed"] else ""))
        return
    if out is not None or api_base:
        raise click.ClickException("--out and --api-base only apply with --paraphrase-model")
    for row in rows:
        click.echo(f"[{row['index']}] {row['anchor']}" if wanted else f"{row['condition']}\t{row['index']}\t{row['anchor']}")


@click.command("stats")
@click.option("--json", "as_json", is_flag=True, help="print the result as JSON")
def stats_command(as_json: bool) -> None:
    """Counts and lexical diversity of the taxonomy and the anchor bank."""
    from tau_emotion.emotion_pack.anchors import anchor_rows, lexical_diversity

    rows = anchor_rows()
    texts = [r["anchor"] for r in rows]
    diversity = lexical_diversity(texts)
    stats = {
        "families": len(FAMILIES),
        "emotions": len(EMOTIONS),
        "dimensions": {name: len(values) for name, values in DIMENSIONS.items()},
        "conditions": len(all_conditions()),
        "conditions_with_anchors": len({r["condition"] for r in rows}),
        "anchors": len(texts),
        "unique_anchors": len(set(texts)),
        "tokens": diversity["tokens"],
        "distinct_1": diversity["distinct_1"],
        "distinct_2": diversity["distinct_2"],
        "distinct_3": diversity["distinct_3"],
    }
    if as_json:
        _echo_json(stats)
        return
    for key, value in stats.items():
        shown = ", ".join(f"{k} {v}" for k, v in value.items()) if isinstance(value, dict) else value
        click.echo(f"{key:<24}{shown}")


@click.command("classify")
@click.argument("text", required=False)
@click.option("--file", "file", type=click.Path(exists=True, dir_okay=False, path_type=Path),
              help="classify each non-empty line; prints one JSON object per line")
@click.option("--json", "as_json", is_flag=True, help="print the result as JSON")
def classify_command(text: str | None, file: Path | None, as_json: bool) -> None:
    """Map free text describing a feeling to a condition."""
    from tau_emotion.emotion_pack.classifier import FeelingsClassifier

    if (text is None) == (file is None):
        raise click.ClickException("give either TEXT or --file FILE")
    classifier = FeelingsClassifier.load()
    if file is not None:
        lines = [line.strip() for line in file.read_text(encoding="utf-8").splitlines() if line.strip()]
        for result in classifier.classify_many(lines):
            click.echo(json.dumps({"text": result.text, **result.to_dict()}, ensure_ascii=False))
        return
    result = classifier.classify(text or "")
    if as_json:
        _echo_json(result.to_dict())
        return
    click.echo(result.condition_id)
    for head, probs in result.probabilities.items():
        click.echo(f"  {head:<11}" + "  ".join(f"{label} {p:.2f}" for label, p in probs.items()))


@click.command("eval")
@click.option("--json", "as_json", is_flag=True, help="print the result as JSON")
def eval_command(as_json: bool) -> None:
    """Held-out anchor accuracy (train on anchors 0-7, test on 8-9) and free-text accuracy, per head."""
    from tau_emotion.core.errors import TauError
    from tau_emotion.emotion_pack.classifier import HEADS, evaluate

    try:
        report = evaluate()  # trains the held-out model: scikit-learn, the `[classifier]` extra
    except TauError as exc:
        raise click.ClickException(str(exc)) from None
    if as_json:
        _echo_json(report)
        return
    anchors, free = report["anchors"], report["free_text"]
    click.echo(f"{'head':<12}{'held-out anchors':>18}{'free text':>12}")
    for head in (*HEADS, "condition"):
        click.echo(f"{head:<12}{_percent(anchors['accuracy'][head]):>18}{_percent(free['accuracy'][head]):>12}")
    click.echo(f"({anchors['test_rows']} held-out anchors, indices {anchors['test_indices']}; "
               f"{free['rows']} hand-labelled sentences)")


def emotions_group() -> click.Group:
    """The `emotions` command group (a fresh group each call, so nothing is shared between CLIs)."""
    group = click.Group("emotions", help="Emotion taxonomy, anchor bank and feelings classifier.")
    for command in (list_command, anchors_command, stats_command, classify_command, eval_command):
        group.add_command(command)
    return group
