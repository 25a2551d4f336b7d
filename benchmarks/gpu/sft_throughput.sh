#!/usr/bin/env bash
# SFT throughput of a Qwen3-1.7B-shaped model on one GPU, with the paper's settings, on exported airline data.
#
# Nothing is downloaded: the model has Qwen3-1.7B's architecture (the config values are written
# below) with random weights, and its tokenizer is a byte-level BPE trained here on the exported
# data with Qwen3's special tokens and chat template (so sequences are somewhat longer in tokens
# than with Qwen's own 151k-token vocabulary; the embedding matrix keeps Qwen3's 151,936 rows).
# The data is a real collection: `tau tracer collect` on airline's train split against a loopback
# OpenAI server where a scripted expert replays the gold tool calls, then `tau export-sft`.
# Training is `tau train sft` itself: lr 5e-5 cosine, effective batch 32, bf16, gradient
# checkpointing, max length 32768, loss on assistant turns, paged AdamW 8-bit when bitsandbytes is
# installed. Prints tokens/s, peak GPU memory and step time.
#
# Needs: the repository checkout, a CUDA build of torch and `pip install -e '.[train]'` (plus
# `pip install bitsandbytes` for the paged 8-bit optimizer).
# Knobs: STEPS (300), TASKS (320 collected airline tasks), PER_DEVICE_BATCH (4), MAX_LENGTH (32768),
#        EFFECTIVE_BATCH (32), WORK (a temporary folder).
set -euo pipefail
cd "$(dirname "$0")/../.."
export OMP_NUM_THREADS=${OMP_NUM_THREADS:-8} LITELLM_LOCAL_MODEL_COST_MAP=True TOKENIZERS_PARALLELISM=false
export PYTHONPATH="$PWD${PYTHONPATH:+:$PYTHONPATH}"
STEPS=${STEPS:-300}
TASKS=${TASKS:-320}
PER_DEVICE_BATCH=${PER_DEVICE_BATCH:-4}
EFFECTIVE_BATCH=${EFFECTIVE_BATCH:-32}
MAX_LENGTH=${MAX_LENGTH:-32768}
WORK=${WORK:-$(mktemp -d)}
mkdir -p "$WORK"

python - <<'PY'
import sys
import torch
if not torch.cuda.is_available():
    sys.exit("sft_throughput.sh needs a CUDA GPU (torch.cuda.is_available() is False)")
print(f"gpu: {torch.cuda.get_device_name(0)}, torch {torch.__version__}", file=sys.stderr)
PY

echo "== collect $TASKS airline train tasks with the scripted expert (loopback server)" >&2
python - "$WORK" "$TASKS" <<'PY'
import sys
from click.testing import CliRunner
from tau_emotion.core.cli import build_cli
from tau_emotion.core.manager import load_all_plugins
from tests.openai_server import ScriptedOpenAI
from tests.tracer import expert

work, n = sys.argv[1], int(sys.argv[2])
tasks = load_all_plugins().catalog("domains").get("airline").tasks("train")[:n]
server = ScriptedOpenAI().start()
server.respond("expert", expert.expert(tasks))
server.respond("user", expert.user(tasks))
runner, cli = CliRunner(), build_cli()
result = runner.invoke(cli, ["tracer", "collect", "airline", "--tasks", str(n), "--concurrency", "16",
                             "--agent-model", "openai/expert", "--agent-api-base", server.base_url,
                             "--user-model", "openai/user", "--user-api-base", server.base_url,
                             "--db", f"{work}/runs.db", "-o", "no_progress=true"], catch_exceptions=False)
print(result.output, file=sys.stderr)
server.stop()
assert result.exit_code == 0
from tau_emotion.core.runner import open_store
run_id = open_store(load_all_plugins(), None, f"{work}/runs.db", create=False).run_ids()[-1]
result = runner.invoke(cli, ["export-sft", run_id, "--db", f"{work}/runs.db", "--out", f"{work}/sft",
                             "--validation", "0"], catch_exceptions=False)
print(result.output, file=sys.stderr)
assert result.exit_code == 0
PY

echo "== build a random-weight Qwen3-1.7B (config below) and a local tokenizer" >&2
python - "$WORK" <<'PY'
import sys
from pathlib import Path
import torch
from transformers import Qwen3Config, Qwen3ForCausalLM
from tests.trainers.tiny_qwen import train_tokenizer

work = Path(sys.argv[1])
texts = [line for line in (work / "sft" / "train.jsonl").read_text().splitlines()]
tokenizer = train_tokenizer(texts, vocab_size=32000)
# Qwen/Qwen3-1.7B config.json
config = Qwen3Config(
    vocab_size=151936, hidden_size=2048, intermediate_size=6144, num_hidden_layers=28,
    num_attention_heads=16, num_key_value_heads=8, head_dim=128, hidden_act="silu",
    max_position_embeddings=40960, rms_norm_eps=1e-6, rope_theta=1000000, attention_bias=False,
    attention_dropout=0.0, tie_word_embeddings=True, use_sliding_window=False, max_window_layers=28,
    bos_token_id=None, eos_token_id=tokenizer.convert_tokens_to_ids("<|im_end|>"),
    pad_token_id=tokenizer.pad_token_id, dtype="bfloat16")
torch.manual_seed(0)
model = Qwen3ForCausalLM(config).to(torch.bfloat16)
print(f"parameters: {sum(p.numel() for p in model.parameters()) / 1e9:.2f} B", file=sys.stderr)
model.save_pretrained(work / "qwen3-1.7b-random")
tokenizer.save_pretrained(work / "qwen3-1.7b-random")
PY

echo "== tau train sft: $STEPS steps, effective batch $EFFECTIVE_BATCH, per-device batch $PER_DEVICE_BATCH" >&2
tau train sft --model "$WORK/qwen3-1.7b-random" --data "$WORK/sft" --out "$WORK/sft-out" \
    --max-steps "$STEPS" --effective-batch-size "$EFFECTIVE_BATCH" --per-device-batch-size "$PER_DEVICE_BATCH" \
    --max-length "$MAX_LENGTH" --logging-steps 10 -o disable_tqdm=true

python - "$WORK/sft-out/tau_train.json" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
steps, runtime, tokens = r["global_step"], r["train_runtime"], r["num_tokens"]
print(f"optimizer: {r['config']['optim']}, bf16: {r['config']['bf16']}, gradient checkpointing: "
      f"{r['config'].get('gradient_checkpointing')}, accumulation: {r['config']['gradient_accumulation_steps']}")
print(f"steps: {steps}, rows: {r['train_rows']}, loss {r['losses'][0]:.3f} -> {r['losses'][-1]:.3f}")
print(f"tokens/s: {tokens / runtime:,.0f}  ({tokens:,.0f} tokens in {runtime:.1f} s)")
print(f"step time: {runtime / steps:.2f} s")
print(f"peak GPU memory: {r['peak_gpu_memory_gib']} GiB")
PY
