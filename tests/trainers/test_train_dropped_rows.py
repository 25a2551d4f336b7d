"""`tau train sft` when `--max-length` leaves no row to learn from (issue 36): one line saying so and what to
change, not torch's sampler failing 40 lines deep in `train()`. A real TRL run on CPU with a tiny Qwen3."""

import importlib.util
import json

import pytest

from tests.trainers.tiny_qwen import make_tiny_qwen

# find_spec, not importorskip: collecting this file must not import torch into the test process
_MISSING = [m for m in ("torch", "transformers", "trl", "datasets", "tokenizers") if importlib.util.find_spec(m) is None]
pytestmark = [pytest.mark.slow,  # real TRL preparation and a one-step training on CPU
              pytest.mark.skipif(bool(_MISSING), reason=f"the trainers' CPU tests need the [train] extra "
                                 f"(missing: {', '.join(_MISSING)}): pip install torch==2.13.0 && pip install -e '.[train]'")]


def test_every_row_dropped_by_max_length_is_one_line(tau, tmp_path):
    rows = [{"messages": [{"role": "user", "content": f"hello number {i}, please help me with my booking today"},
                          {"role": "assistant", "content": f"Sure, booking {i} is confirmed for you."}], "tools": "[]"}
            for i in range(4)]
    (tmp_path / "data").mkdir()
    (tmp_path / "data" / "train.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    model = make_tiny_qwen(tmp_path / "tiny", [json.dumps(r) for r in rows] * 5, vocab_size=400)
    args = ("train", "sft", "--data", str(tmp_path / "data"), "--model", str(model), "--max-steps", "1",
            "-o", "disable_tqdm=true")
    # eight tokens hold part of the user's turn and no assistant token: TRL drops all four rows
    short = tau(*args, "--out", str(tmp_path / "out"), "--max-length", "8")
    assert short.exit_code == 1 and "Traceback" not in short.output
    error = [line for line in short.output.splitlines() if line.startswith("Error:")]
    assert error == ["Error: tau train sft: all 4 train row(s) were dropped: none keeps a token to learn from within "
                     "--max-length 8 (loss on assistant turns only: --no-assistant-only-loss keeps rows whose prompt "
                     "fills the length); raise --max-length"]
    assert not (tmp_path / "out" / "tau_train.json").exists()
    # the hint holds: with the loss on every token the same rows train
    whole = tau(*args, "--out", str(tmp_path / "whole"), "--max-length", "8", "--no-assistant-only-loss")
    assert whole.exit_code == 0, whole.output
    assert json.loads((tmp_path / "whole" / "tau_train.json").read_text())["dropped_rows"] == 0
