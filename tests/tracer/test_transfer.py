"""docs/transfer.md end to end on CPU: the paper's transfer protocol on this project, shrunk to seconds.

Collect on a seen pack (airline's train split, the tool_calling agent and the LLM user both played by
the loopback OpenAI server's scripted expert), export with the Tracer-Low mixture, fine-tune the
tiny Qwen3 (`tau train sft`, a few real TRL steps) and evaluate it on an unseen pack (restaurant's
`hand` split until its `test` split is built) with `tau run --agent tool_calling`, the trained
checkpoint serving the agent's turns behind the same loopback OpenAI API."""

import importlib.util
import json

import pytest

from tests.tracer import expert
from tests.trainers.tiny_qwen import make_tiny_qwen

_MISSING = [m for m in ("torch", "transformers", "trl", "datasets", "tokenizers") if importlib.util.find_spec(m) is None]
pytestmark = pytest.mark.skipif(bool(_MISSING), reason=f"the transfer test trains, so it needs the [train] extra "
                                f"(missing: {', '.join(_MISSING)}): pip install torch==2.13.0 && pip install -e '.[train]'")

SEEN_PACK, UNSEEN_PACK = "airline", "restaurant"


def serve_checkpoint(path, max_new_tokens=24):
    """A responder for the loopback server that answers with `path`'s model: the conversation through its chat
    template, greedy decoding, the reply's tool calls read by the project's parser (as an inference server does)."""
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    from tau_emotion.trainers.tool_calls import parse_tool_calls

    tokenizer = AutoTokenizer.from_pretrained(path)
    model = AutoModelForCausalLM.from_pretrained(path).eval()
    served = []

    def reply(body):
        messages = [{**m, "content": m.get("content") or ""} for m in body["messages"]]
        enc = tokenizer.apply_chat_template(messages, tools=body.get("tools"), add_generation_prompt=True,
                                            enable_thinking=False, return_tensors="pt", return_dict=True)
        with torch.no_grad():
            out = model.generate(**enc, max_new_tokens=max_new_tokens, do_sample=False)
        text = tokenizer.decode(out[0, enc["input_ids"].shape[1]:], skip_special_tokens=True)
        parsed = parse_tool_calls(text)
        served.append({"tools": [t["function"]["name"] for t in body.get("tools") or []], "text": text})
        calls = [{"name": c.name, "arguments": c.arguments} for c in parsed.tool_calls]
        return {"content": parsed.content or ("" if calls else "..."), **({"tool_calls": calls} if calls else {})}

    return reply, served


@pytest.mark.slow
def test_collect_seen_export_tracer_low_train_and_evaluate_on_an_unseen_pack(tmp_path):
    from tau_emotion.core.manager import load_all_plugins

    db = str(tmp_path / "runs.db")
    catalog = load_all_plugins().catalog("domains")
    seen_tasks = catalog.get(SEEN_PACK).tasks("train")[:3]
    with expert.serving() as (server, tau):
        # 1. collect on a seen pack
        server.respond("expert", expert.expert(seen_tasks))
        server.respond("user", expert.user(seen_tasks))
        collected = tau("tracer", "collect", SEEN_PACK, "--tasks", "3", "--agent-model", "openai/expert",
                        "--agent-api-base", server.base_url, "--user-model", "openai/user",
                        "--user-api-base", server.base_url, "--db", db, "-o", "no_progress=true")
        assert collected.exit_code == 0, collected.output
        run_id = collected.output.split("tau export-sft ")[1].split()[0]

        # 2. export Tracer-Low
        data = tmp_path / "tracer-low"
        exported = tau("export-sft", run_id, "--mixture", "tracer-low", "--validation", "0", "--out", str(data),
                       "--db", db)
        assert exported.exit_code == 0, exported.output
        rows = [json.loads(line) for line in (data / "train.jsonl").read_text().splitlines()]
        assert len(rows) == 3 and {r["domain"] for r in rows} == {SEEN_PACK}
        assert f"| {SEEN_PACK} | 3 | 250 | 3 |" in (data / "README.md").read_text()

        # 3. train the tiny Qwen3 on it
        unseen = catalog.get(UNSEEN_PACK)
        texts = [json.dumps([r["messages"], r["tools"]]) for r in rows] + [unseen.policy, json.dumps(unseen.toolset.schemas)]
        base = make_tiny_qwen(tmp_path / "tiny", texts, vocab_size=2000, hidden=32, layers=2)
        out = tmp_path / "sft"
        trained = tau("train", "sft", "--model", str(base), "--data", str(data), "--out", str(out), "--max-steps", "3",
                      "--learning-rate", "1e-3", "--effective-batch-size", "1", "-o", "disable_tqdm=true")
        assert trained.exit_code == 0, trained.output
        record = json.loads((out / "tau_train.json").read_text())
        assert record["global_step"] == 3 and record["train_rows"] == 3 and len(record["losses"]) == 3

        # 4. evaluate the trained model on an unseen pack, served behind the OpenAI API
        reply, served = serve_checkpoint(out)
        server.respond("tiny-sft", reply)
        n_hand = len(unseen.tasks("hand"))
        evaluated = tau("run", "--plugins", f"emotion,{UNSEEN_PACK}", "--split", "hand", "--tasks", "2",
                        "--agent", "tool_calling", "--agent-model", "openai/tiny-sft", "--agent-api-base", server.base_url,
                        "--user", "scripted", "--trials", "1", "--max-steps", "2", "--concurrency", "1",
                        "--no-progress", "--db", db, "--summary-json", str(tmp_path / "eval.json"))
    assert evaluated.exit_code == 0, evaluated.output
    summary = json.loads((tmp_path / "eval.json").read_text())
    assert summary["n_tasks"] == min(2, n_hand) and summary["errors"] == 0
    assert set(summary["by_domain"]) == {UNSEEN_PACK}
    # the trained checkpoint answered the agent's turns, with the unseen pack's tools
    assert len(served) >= summary["n_tasks"] and all(set(s["tools"]) == set(unseen.toolset.tools) for s in served)
