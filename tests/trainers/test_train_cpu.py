"""The whole training path on CPU, for real: collect against the loopback server -> export ->
`tau train sft` and `tau train dpo` on a tiny Qwen3 built from a config with a tokenizer trained
here. The over-fit test is the one that proves the exported formatting: a model trained on a few
exported trajectories writes the first gold tool call of one of them under greedy decoding, read
back by the project's own tool-call parser."""

import importlib.util
import json

import pytest

from tau_emotion.trainers.tool_calls import parse_tool_calls
from tests.tracer import expert
from tests.trainers.tiny_qwen import make_tiny_qwen

# find_spec, not importorskip: collecting this file must not import torch into the test process
_MISSING = [m for m in ("torch", "transformers", "trl", "datasets", "tokenizers") if importlib.util.find_spec(m) is None]
pytestmark = [pytest.mark.slow,  # real TRL trainings on CPU
              pytest.mark.skipif(bool(_MISSING), reason=f"the trainers' CPU tests need the [train] extra "
                                 f"(missing: {', '.join(_MISSING)}): pip install torch==2.13.0 && pip install -e '.[train]'")]

QUIET = ("-o", "disable_tqdm=true")


@pytest.fixture(scope="module")
def exported(tmp_path_factory):
    """SFT and DPO datasets exported from an expert and a novice collection, and a tiny Qwen3 for them."""
    root = tmp_path_factory.mktemp("train")
    db = str(root / "runs.db")
    with expert.serving() as (server, invoke):
        tasks = expert.bank_tasks()
        good = expert.collect(invoke, server, db, tasks, "expert")
        bad = expert.collect(invoke, server, db, tasks, "novice")
        for fmt, runs in (("sft", [good]), ("dpo", [good, bad])):
            result = invoke("export-sft", *runs, "--out", str(root / fmt), "--format", fmt, "--validation", "0",
                            "--db", db, "--plugins", "tests.trainers.bank_pack")
            assert result.exit_code == 0, result.output
    # the conversations only (run ids differ between runs; the tokenizer, and so the test, must not)
    texts = [json.dumps([row.get(k) for k in ("messages", "prompt", "chosen", "rejected", "tools")])
             for fmt in ("sft", "dpo") for row in map(json.loads, (root / fmt / "train.jsonl").read_text().splitlines())]
    model = make_tiny_qwen(root / "tiny", texts, vocab_size=3000, hidden=64, layers=2)
    return root, model


def _record(out):
    return json.loads((out / "tau_train.json").read_text())


def _first_gold_calls(data):
    """(prompt messages, tools, gold call) for each exported trajectory: the conversation up to its first tool call."""
    for line in (data / "train.jsonl").read_text().splitlines():
        row = json.loads(line)
        at = next(i for i, m in enumerate(row["messages"]) if m["tool_calls"])
        call = row["messages"][at]["tool_calls"][0]["function"]
        yield row["messages"][:at], json.loads(row["tools"]), (call["name"], json.loads(call["arguments"]))


def test_sft_loss_falls_checkpoint_reloads_and_overfit_model_writes_the_gold_call(tau, exported):
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    root, model = exported
    out = root / "sft-out"
    result = tau("train", "sft", "--model", str(model), "--data", str(root / "sft"), "--out", str(out),
                 "--max-steps", "300", "--learning-rate", "6e-3", "--lr-scheduler-type", "constant",
                 "--effective-batch-size", "1", *QUIET)
    assert result.exit_code == 0, result.output
    assert "sft: 300 step(s) on 4 row(s)" in result.output
    record = _record(out)
    assert record["device"] == "cpu" and record["config"]["assistant_only_loss"] is True
    losses = record["losses"]
    assert losses[-1] < losses[0] / 10, losses[:: len(losses) // 10]

    tokenizer = AutoTokenizer.from_pretrained(out)  # with the template it was trained with (see trl_trainers)
    fitted = AutoModelForCausalLM.from_pretrained(out).eval()
    outcomes = []
    for prompt, tools, gold in _first_gold_calls(root / "sft"):
        enc = tokenizer.apply_chat_template(prompt, tools=tools, add_generation_prompt=True, enable_thinking=False,
                                            return_tensors="pt", return_dict=True)
        with torch.no_grad():
            generated = fitted.generate(**enc, max_new_tokens=40, do_sample=False)
        text = tokenizer.decode(generated[0, enc["input_ids"].shape[1]:])
        parsed = parse_tool_calls(text)
        outcomes.append((gold, [(c.name, c.arguments) for c in parsed.tool_calls], text))
    assert any(calls[:1] == [gold] for gold, calls, _ in outcomes), outcomes


def test_dpo_loss_falls_and_checkpoint_reloads(tau, exported):
    import torch
    from transformers import AutoModelForCausalLM

    root, model = exported
    out = root / "dpo-out"
    result = tau("train", "dpo", "--model", str(model), "--data", str(root / "dpo"), "--out", str(out),
                 "--max-steps", "4", "--learning-rate", "1e-3", "--effective-batch-size", "2",
                 "--per-device-batch-size", "2", *QUIET)
    assert result.exit_code == 0, result.output
    record = _record(out)
    assert record["config"]["beta"] == 0.1 and record["train_rows"] == 4
    assert record["losses"][0] == pytest.approx(0.6931, abs=1e-3)  # log 2: policy == reference at the start
    assert record["losses"][-1] < 0.5
    before = AutoModelForCausalLM.from_pretrained(model)
    after = AutoModelForCausalLM.from_pretrained(out)
    assert not torch.equal(before.lm_head.weight, after.lm_head.weight)


def test_a_dataset_of_the_wrong_format_is_one_line(tau, exported):
    root, model = exported
    result = tau("train", "dpo", "--model", str(model), "--data", str(root / "sft"), "--out", str(root / "x"))
    assert result.exit_code == 1 and "lacks column(s) prompt, chosen, rejected" in result.output
    result = tau("train", "sft", "--model", str(model), "--data", str(root / "missing"), "--out", str(root / "x"))
    assert result.exit_code == 1 and "no dataset at" in result.output
