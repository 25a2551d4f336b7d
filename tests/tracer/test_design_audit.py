"""The emotion design (balanced, seeded, independent of the task) and `tau tracer audit`."""

from collections import Counter

import pytest
from click.testing import CliRunner

from tau_emotion.core.cli import build_cli
from tau_emotion.emotion_pack.taxonomy import DIMENSIONS, EMOTIONS
from tau_emotion.tracer.audit import audit_split
from tau_emotion.tracer.design import condition_id, design_conditions, events_fit, occasion_fits, pick_occasion


@pytest.mark.parametrize("n", [22, 58, 100])
def test_design_is_balanced_and_has_no_repeated_condition(n):
    rows = design_conditions(n, "airline/test/2")
    assert rows == design_conditions(n, "airline/test/2") != design_conditions(n, "airline/test/3")
    emotions = Counter(r["emotion"] for r in rows)
    assert set(emotions) == set(EMOTIONS) and max(emotions.values()) - min(emotions.values()) <= 1
    for dim, values in DIMENSIONS.items():
        counts = Counter(r[dim] for r in rows)
        assert set(counts) == set(values) and max(counts.values()) - min(counts.values()) <= 1
    assert len({condition_id(r) for r in rows}) == n
    assert all(EMOTIONS[r["emotion"]] == r["family"] for r in rows)


def test_occasions_fit_the_feelings():
    joy = {"family": "enjoyment", "emotion": "excitement"}
    grief = {"family": "sadness", "emotion": "sorrow"}
    assert not occasion_fits("negative", joy) and occasion_fits("positive", joy)
    assert occasion_fits("negative", grief) and not occasion_fits("positive", grief)
    import random

    funeral = [("a funeral", 3, "negative"), ("a wedding", 3, "positive")]
    assert all(pick_occasion(funeral, grief, random.Random(s)) == ("a funeral", 3) for s in range(5))
    assert all(pick_occasion(funeral, joy, random.Random(s)) in (None, ("a wedding", 3)) for s in range(10))


def test_events_fit_the_feelings():
    """A positive feeling takes no misfortune (stakes 3); a worry about the request itself is fine."""
    joy = {"family": "enjoyment", "emotion": "relief"}
    fear = {"family": "fear", "emotion": "anxiety"}
    assert not events_fit([("neutral", 1), ("negative", 3)], joy)
    assert events_fit([("negative", 2), ("positive", 1)], joy) and events_fit([], joy)
    assert events_fit([("negative", 3)], fear) and events_fit([("positive", 3)], fear)


#: phrases of the packs' misfortunes (negative moods of stakes 3) as the instruction states them
MISFORTUNES = ("hospital", "stolen", "you are sick", "cancelled by the airline", "the airline cancelled",
               "storm is forecast", "funeral", "surgery", "unwell", "lost your job", "money is tight")


@pytest.mark.parametrize("pack", ["airline", "retail", "telecom", "telehealth"])
def test_no_positive_feelings_beside_a_misfortune(domains, pack):
    """No shipped Tracer task asks for enjoyment while its instruction states a misfortune."""
    for task in domains.get(pack).tasks(None):
        if task.meta.get("source") != "tracer" or task.blocks["emotion"]["family"] != "enjoyment":
            continue
        text = task.user.instruction.lower()
        assert not [m for m in MISFORTUNES if m in text], (task.id, task.blocks["emotion"]["emotion"], text)


@pytest.mark.parametrize("split", ["test", "train"])
def test_committed_airline_splits_pass_the_audit(airline, split):
    result = audit_split(airline, split, transfer_tool="transfer_to_human_agents")
    assert result.ok, [c for c in result.checks if not c[1]]
    assert result.tables["label agreement"]["family+emotion"] == f"{result.tables['tasks']['n']}/" \
                                                                 f"{result.tables['tasks']['n']}"
    assert result.tables["users"][f"shared with {'train' if split == 'test' else 'test'}"] == 0


def test_audit_command_prints_tables_and_fails_on_a_broken_split(airline, monkeypatch):
    done = CliRunner().invoke(build_cli(), ["tracer", "audit", "airline", "--split", "test"])
    assert done.exit_code == 0, done.output
    assert "label agreement" in done.output and "challenge kinds" in done.output
    tasks = airline.tasks(None)
    broken = [t.with_block("emotion", {**t.blocks["emotion"], "emotion": "annoyance", "family": "anger"})
              if t.split == "test" else t for t in tasks]
    monkeypatch.setattr(type(airline), "tasks", lambda self, split=None: broken if split is None else
                        [t for t in broken if t.split == split])
    result = audit_split(airline, "test")
    failed = {name for name, ok, _ in result.checks if not ok}
    assert {"emotion balance", "label agreement", "distinct conditions"} <= failed


def test_committed_tasks_are_consistent(airline):
    """No task states the status it asks about, names a gift card by its balance, or gives a cancellation an occasion."""
    import re

    from tau_emotion.tracer.hints import load_hints

    fits = load_hints(airline).occasion_intents
    occasions = [o[0].split("}} ")[-1] for o in load_hints(airline).occasions]
    for task in airline.tasks("test") + airline.tasks("train"):
        words = " ".join([task.user.instruction, *task.user.intents]).lower()
        for output in task.gold.outputs:
            if re.fullmatch(r"[A-Za-z ]+", output):
                assert not re.search(rf"\b{output.lower()}\b", words), (task.id, output)
        assert "dollars on it" not in words, task.id
        if any(kind not in fits for kind in task.meta["intents"]):
            assert not any(o.lower() in words for o in occasions), task.id
        assert all(set(g["facts"]) <= set(task.user.known) for g in task.meta["intent_gold"]), task.id


def test_decision_rules_follow_the_data(airline):
    """A rule's branch is what the looked-up amount implies; a declined request leaves its goal call out."""
    import random

    from tau_emotion.tracer.decisions import attach_decision
    from tau_emotion.tracer.hints import IntentDraft, Output

    for seed in range(40):
        draft = IntentDraft(kind="change", goal="update_reservation_flights", arguments={}, request=["x"],
                            outputs=[Output("150", "the fare difference")], decline="keep {{my}} flight")
        attach_decision(draft, random.Random(seed))
        if draft.decision:
            above = 150 > draft.decision["threshold"]
            assert draft.declined == above == (draft.decision["branch"] == "decline")
    tasks = airline.tasks("test")
    ruled = [t for t in tasks if t.meta["decisions"]]
    assert len(ruled) >= 0.2 * len(tasks)
    assert {d["branch"] for t in ruled for d in t.meta["decisions"]} == {"proceed", "decline"}
    for task in ruled:
        for d in task.meta["decisions"]:
            assert (float(d["amount"]) > d["threshold"]) == (d["branch"] == "decline"), task.id
            assert f"more than ${d['threshold']}" in task.user.instruction, task.id
            assert d["amount"] in task.gold.outputs, task.id
            if d["branch"] == "decline":
                assert any(step.startswith("~") for step in task.meta["graph_path"]), task.id
