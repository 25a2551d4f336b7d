"""`tau export-sft`: SFT conversations and DPO pairs in the formats TRL takes, from collection runs."""

import importlib.util
import json

import pytest

from tests.tracer import expert

pytestmark = pytest.mark.skipif(importlib.util.find_spec("datasets") is None,
                                reason="exporting needs the [train] extra (datasets)")


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    """An expert (+1) and a novice (-1) collection on the ledger domain, shared by this module's tests."""
    db = str(tmp_path_factory.mktemp("export") / "runs.db")
    with expert.serving() as (server, invoke):
        tasks = expert.bank_tasks()
        return db, expert.collect(invoke, server, db, tasks, "expert"), expert.collect(invoke, server, db, tasks, "novice")


def load_from_disk(path):
    import datasets

    return datasets.load_from_disk(path)


def _export(tau, db, out, *runs, fmt="sft"):
    return tau("export-sft", *runs, "--out", str(out), "--format", fmt, "--db", db,
               "--plugins", "tests.trainers.bank_pack")


@pytest.mark.slow
def test_sft_export_is_trl_chat_format(tau, runs, tmp_path):
    db, good, _ = runs
    result = _export(tau, db, tmp_path / "sft", good)
    assert result.exit_code == 0, result.output
    ds = load_from_disk(str(tmp_path / "sft"))
    assert set(ds) == {"train", "validation"} and ds["train"].num_rows + ds["validation"].num_rows == 4
    assert not set(ds["train"]["task_id"]) & set(ds["validation"]["task_id"])
    row = ds["train"][0]
    tools = json.loads(row["tools"])
    assert {t["function"]["name"] for t in tools} >= {"find_owner", "transfer"}
    system, first_user, question, *rest = row["messages"]
    assert system["role"] == "system" and "Mock bank policy" in system["content"]
    assert first_user["role"] == "user" and question["content"] == expert.QUESTION
    calls = [m for m in rest if m["tool_calls"]]
    assert calls and all(isinstance(c["function"]["arguments"], str) for m in calls for c in m["tool_calls"])
    assert row["messages"][-1]["role"] == "assistant"  # the user's goodbye is dropped
    assert any(m["role"] == "tool" and m["name"] for m in rest)
    lines = (tmp_path / "sft" / "train.jsonl").read_text().splitlines()
    assert len(lines) == ds["train"].num_rows and json.loads(lines[0])["messages"] == row["messages"]
    card = (tmp_path / "sft" / "README.md").read_text()
    assert "| ledger | 4 | 100.0% |" in card and "emotion family" in card and "tool calls" in card


@pytest.mark.slow
def test_sft_rows_replay_the_gold_calls(tau, runs, tmp_path):
    db, good, _ = runs
    _export(tau, db, tmp_path / "sft", good)
    rows = [json.loads(line) for split in ("train", "validation")
            for line in (tmp_path / "sft" / f"{split}.jsonl").read_text().splitlines()]
    gold = {t.id: t.gold.actions for t in expert.bank_tasks()}
    for row in rows:
        calls = [c["function"] for m in row["messages"] if m["tool_calls"] for c in m["tool_calls"]]
        assert [(c["name"], json.loads(c["arguments"])) for c in calls] == [(a.name, a.arguments) for a in gold[row["task_id"]]]


@pytest.mark.slow
def test_dpo_pairs_plus_one_and_unsatisfied_trajectories(tau, runs, tmp_path):
    db, good, bad = runs
    result = _export(tau, db, tmp_path / "dpo", good, bad, fmt="dpo")
    assert result.exit_code == 0, result.output
    ds = load_from_disk(str(tmp_path / "dpo"))
    rows = [r for split in ds.values() for r in split]
    assert len(rows) == 4
    row = rows[0]
    assert set(ds["train"].column_names) >= {"prompt", "chosen", "rejected", "tools"}
    assert [m["role"] for m in row["prompt"]] == ["system", "user", "assistant", "user"]
    assert row["chosen"][0]["tool_calls"] and row["rejected"][0]["content"].startswith("Sorry")
    assert row["rejected_run_id"] == bad and row["run_id"] == good
    assert "preference pairs" in (tmp_path / "dpo" / "README.md").read_text()


@pytest.mark.slow
def test_nothing_to_export_and_unknown_run_are_one_line_errors(tau, runs, tmp_path):
    db, good, bad = runs
    result = _export(tau, db, tmp_path / "x", good, fmt="dpo")
    assert result.exit_code == 1 and "nothing to export: no tasks with both a +1 and a -1" in result.output
    result = _export(tau, db, tmp_path / "x", bad)
    assert result.exit_code == 1 and "no trajectories with reward +1" in result.output
    result = _export(tau, db, tmp_path / "x", "nope")
    assert result.exit_code == 1 and "no run 'nope'" in result.output
