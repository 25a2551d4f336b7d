"""`tau emotions ...` through click's CliRunner, on the group alone (the lead wires it into `tau`)."""

import json

import click
import pytest
from click.testing import CliRunner

from tau_emotion.emotion_pack.commands import emotions_group


@pytest.fixture
def run():
    group = emotions_group()

    def invoke(*args):
        return CliRunner().invoke(group, list(args), catch_exceptions=False)

    return invoke


def test_group_is_named_emotions():
    group = emotions_group()
    assert isinstance(group, click.Group) and group.name == "emotions"
    assert set(group.commands) == {"list", "anchors", "stats", "classify", "eval"}


def test_list(run):
    result = run("list")
    assert result.exit_code == 0
    lines = result.output.splitlines()
    assert len(lines) == 594 and lines[0] == "anger.annoyance/warm/low/trusting"
    fear = run("list", "--family", "fear", "--json")
    rows = json.loads(fear.output)
    assert len(rows) == 4 * 27 and {r["family"] for r in rows} == {"fear"}
    assert rows[0]["id"] == "fear.nervousness/warm/low/trusting"


def test_list_unknown_family_is_one_line_error(run):
    result = run("list", "--family", "feer")
    assert result.exit_code == 1
    assert result.output.strip().splitlines() == [
        "Error: unknown family 'feer' (valid: anger, disgust, fear, sadness, enjoyment); did you mean 'fear'?"
    ]


def test_anchors(run):
    result = run("anchors", "fear.anxiety/warm/high/cautious")
    assert result.exit_code == 0
    lines = result.output.splitlines()
    assert len(lines) == 10 and lines[0].startswith("[0] ")
    assert len(run("anchors").output.splitlines()) == 5940
    bad = run("anchors", "fear.anxiety/warm/high/cautous")
    assert bad.exit_code == 1 and "did you mean 'cautious'?" in bad.output
    no_out = run("anchors", "--paraphrase-model", "m")
    assert no_out.exit_code == 1 and "--out" in no_out.output


@pytest.mark.slow
def test_stats(run):
    stats = json.loads(run("stats", "--json").output)
    assert stats["families"] == 5 and stats["emotions"] == 22 and stats["conditions"] == 594
    assert stats["anchors"] == stats["unique_anchors"] == 5940
    assert 0 < stats["distinct_1"] < stats["distinct_2"] < stats["distinct_3"] <= 1
    assert "unique_anchors" in run("stats").output


def test_classify(run, tmp_path):
    result = run("classify", "I'm terrified my refund will never arrive and nobody answers", "--json")
    assert result.exit_code == 0
    data = json.loads(result.output)
    assert set(data) == {"condition", "family", "emotion", "politeness", "urgency", "trust", "probabilities"}
    assert data["family"] == "fear"
    plain = run("classify", "that food was revolting")
    assert plain.output.splitlines()[0].startswith("disgust.")

    lines = tmp_path / "texts.txt"
    lines.write_text("I am furious\n\nWe're over the moon about the new flat\n")
    rows = [json.loads(line) for line in run("classify", "--file", str(lines)).output.splitlines()]
    assert [r["family"] for r in rows] == ["anger", "enjoyment"]
    assert rows[0]["text"] == "I am furious"

    assert run("classify").exit_code == 1


@pytest.mark.slow
def test_eval(run, held_out_trained):
    result = run("eval", "--json")
    assert result.exit_code == 0
    report = json.loads(result.output)
    assert all(v >= 0.9 for v in report["anchors"]["accuracy"].values())
    assert report["free_text"]["rows"] >= 200
    table = run("eval").output
    assert "held-out anchors" in table and "free text" in table
