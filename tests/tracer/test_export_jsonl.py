"""`tau export-sft` in a core (`[dev]`) install: JSONL without `datasets` or torch, and DPO saying which pairs
it dropped and why."""

import json
import subprocess
import sys

import pytest

#: the CLI with `datasets` and torch made unimportable, as in an install without the [train] extra
NO_TRAIN = ("import sys\nfor name in ('datasets', 'torch', 'transformers', 'trl'):\n    sys.modules[name] = None\n"
            "from tau_emotion.core.cli import main\nmain()")


def _tau(*args, cwd):
    return subprocess.run([sys.executable, "-c", NO_TRAIN, *args], capture_output=True, text=True, timeout=120, cwd=cwd)


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    """oracle (+1) and null (-1, the emotional user gives up) on mock, two emotion seeds."""
    where = tmp_path_factory.mktemp("jsonl")
    db = str(where / "runs.db")
    ids = {}
    for agent, seed in (("oracle", 0), ("null", 0), ("null", 1)):
        out = _tau("run", "--plugins", "emotion,mock", "--agent", agent, "--trials", "1", "--seed", str(seed),
                   "--no-progress", "--db", db, "--summary-json", "s.json", cwd=where)
        assert out.returncode in (0, 1), out.stderr
        ids[(agent, seed)] = json.loads((where / "s.json").read_text())["run_id"]
    return where, db, ids


@pytest.mark.slow
def test_sft_export_writes_jsonl_without_datasets_or_torch(runs):
    where, db, ids = runs
    out = _tau("export-sft", ids[("oracle", 0)], "--out", "sft", "--db", db, cwd=where)
    assert out.returncode == 0, out.stderr
    assert "as JSONL; `datasets` is not installed" in out.stderr and "pip install torch==2.13.0" in out.stderr
    rows = [json.loads(line) for split in ("train", "validation")
            for line in (where / "sft" / f"{split}.jsonl").read_text().splitlines()]
    assert len(rows) == 4 and all(r["messages"][0]["role"] == "system" for r in rows)  # mock: 4 tasks, all +1
    assert not (where / "sft" / "dataset_dict.json").exists() and (where / "sft" / "README.md").is_file()


def test_dpo_says_how_many_pairs_it_dropped_and_why(runs):
    where, db, ids = runs
    mismatched = _tau("export-sft", ids[("oracle", 0)], ids[("null", 1)], "--format", "dpo", "--out", "d1",
                      "--db", db, cwd=where)
    assert mismatched.returncode == 1
    assert "were dropped:" in mismatched.stderr and "with no shared conversation prefix" in mismatched.stderr
    paired = _tau("export-sft", ids[("oracle", 0)], ids[("null", 0)], ids[("null", 1)], "--format", "dpo",
                  "--out", "d2", "--db", db, cwd=where)
    assert paired.returncode == 0, paired.stderr
    rows = [json.loads(line) for split in ("train", "validation")
            for line in (where / "d2" / f"{split}.jsonl").read_text().splitlines()]
    assert rows and all(r["chosen"] and r["rejected"] for r in rows)


@pytest.mark.slow
def test_tau_train_reads_a_folder_exported_without_datasets(runs):
    pytest.importorskip("datasets")
    from tau_emotion.trainers.trl_trainers import load_splits

    where, db, ids = runs
    assert _tau("export-sft", ids[("oracle", 0)], "--out", "sft2", "--db", db, cwd=where).returncode == 0
    train, validation = load_splits(where / "sft2", ("messages", "tools"))
    lines = (where / "sft2" / "train.jsonl").read_text().splitlines()
    assert train.num_rows == len(lines) and train[0]["messages"] == json.loads(lines[0])["messages"]
    assert validation is not None and train.num_rows + validation.num_rows == 4
