#!/usr/bin/env bash
# Model-server throughput of an airline run on a GPU host: a random-weight model with Qwen3-1.7B's
# shape (no download), served by `vllm serve` under `tau serve`'s management, driven by the
# tool_calling agent at --concurrency 64 with the scripted user. Prints one JSON line: requests/s,
# prompt and generated tokens/s, p50/p95 end-to-end request latency (from vLLM's /metrics histogram).
#
#   pip install -e '.[vllm]'   # CUDA host only: vLLM has no CPU wheel
#   bash benchmarks/gpu/serve_throughput.sh [TASKS=58] [CONCURRENCY=64]
#
# Untested in this repository's CI and on its development machines (no GPU there); the CPU path of
# `tau serve` is tested with a stand-in server (tests/plugins/test_serve.py).
set -euo pipefail
cd "$(dirname "$0")/../.."
TASKS=${1:-58}
CONCURRENCY=${2:-64}
WORK=${WORK:-.tau/gpu-bench}
MODEL_DIR=$WORK/qwen3-1.7b-random
mkdir -p "$WORK"
export OMP_NUM_THREADS=1 VLLM_NO_USAGE_STATS=1 HF_HUB_OFFLINE=1

if [ ! -f "$MODEL_DIR/config.json" ]; then
python - "$MODEL_DIR" <<'PY'
"""Qwen3-1.7B's architecture with random weights and a locally trained byte-level BPE tokenizer."""
import json, sys
from pathlib import Path

import torch
from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
from transformers import PreTrainedTokenizerFast, Qwen3Config, Qwen3ForCausalLM

out = Path(sys.argv[1]); out.mkdir(parents=True, exist_ok=True)
special = ["<|endoftext|>", "<|im_start|>", "<|im_end|>", "<tool_call>", "</tool_call>",
           "<tool_response>", "</tool_response>", "<think>", "</think>"]
tok = Tokenizer(models.BPE())
tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
tok.decoder = decoders.ByteLevel()
policy = Path("domain_packs/airline/data/policy.md").read_text()
tok.train_from_iterator([policy] * 20, trainers.BpeTrainer(vocab_size=8000, special_tokens=special,
                        initial_alphabet=pre_tokenizers.ByteLevel.alphabet()))
fast = PreTrainedTokenizerFast(tokenizer_object=tok, eos_token="<|im_end|>", pad_token="<|endoftext|>")
fast.chat_template = (
    "{% for m in messages %}<|im_start|>{{ m['role'] }}\n{{ m['content'] or '' }}"
    "{% if m.get('tool_calls') %}{% for c in m['tool_calls'] %}<tool_call>{{ c['function'] | tojson }}</tool_call>"
    "{% endfor %}{% endif %}<|im_end|>\n{% endfor %}{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}")
fast.save_pretrained(out)
config = Qwen3Config(vocab_size=len(fast), hidden_size=2048, intermediate_size=6144, num_hidden_layers=28,
                     num_attention_heads=16, num_key_value_heads=8, head_dim=128, max_position_embeddings=40960,
                     rope_theta=1000000.0, tie_word_embeddings=True, torch_dtype="bfloat16",
                     eos_token_id=fast.eos_token_id, pad_token_id=fast.pad_token_id)
torch.manual_seed(0)
Qwen3ForCausalLM(config).to(torch.bfloat16).save_pretrained(out)
print(f"saved {out}")
PY
fi

# tau serve prints {"api_base": ..., "model": ...} once /v1/models answers, and stops vLLM when killed
tau serve "$MODEL_DIR" --log "$WORK/vllm.log" -- --max-model-len 16384 --enable-auto-tool-choice \
    --tool-call-parser hermes --max-num-seqs 128 > "$WORK/serve.json" &
SERVE=$!
trap 'kill -INT $SERVE 2>/dev/null; wait $SERVE 2>/dev/null || true' EXIT
until [ -s "$WORK/serve.json" ]; do kill -0 $SERVE 2>/dev/null || { tail -20 "$WORK/vllm.log"; exit 1; }; sleep 2; done
BASE=$(python -c "import json,sys; print(json.load(open(sys.argv[1]))['api_base'])" "$WORK/serve.json")

metrics() { curl -s "${BASE%/v1}/metrics"; }
metrics > "$WORK/before.prom"
START=$(date +%s.%N)
# a random-weight model rarely calls a tool correctly: the figures measure the server, not the agent
tau run --plugins airline --agent tool_calling --agent-model "hosted_vllm/$MODEL_DIR" --agent-api-base "$BASE" \
    --agent-args '{"max_tokens": 256}' --user scripted --tasks "$TASKS" --trials 2 --max-steps 20 \
    --concurrency "$CONCURRENCY" --no-progress --db "$WORK/runs.db" --summary-json "$WORK/summary.json" || true
END=$(date +%s.%N)
metrics > "$WORK/after.prom"

python - "$WORK/before.prom" "$WORK/after.prom" "$START" "$END" "$CONCURRENCY" <<'PY'
import json, re, sys

def read(path):
    values = {}
    for line in open(path):
        m = re.match(r'^(vllm:[a-z_]+)(\{[^}]*\})? ([0-9.e+-]+)$', line.strip())
        if m:
            labels = dict(re.findall(r'(\w+)="([^"]*)"', m.group(2) or ""))
            key = (m.group(1), labels.get("le", ""))
            values[key] = values.get(key, 0.0) + float(m.group(3))
    return values

before, after = read(sys.argv[1]), read(sys.argv[2])
wall = float(sys.argv[4]) - float(sys.argv[3])
delta = lambda name, le="": after.get((name, le), 0.0) - before.get((name, le), 0.0)
requests = delta("vllm:e2e_request_latency_seconds_count")
buckets = sorted((float(le), delta("vllm:e2e_request_latency_seconds_bucket", le))
                 for (name, le) in after if name == "vllm:e2e_request_latency_seconds_bucket" and le != "+Inf")

def quantile(q):
    for le, count in buckets:  # the upper bound of the first bucket holding the q-th request
        if requests and count >= q * requests:
            return le
    return float("inf")

print(json.dumps({"concurrency": int(sys.argv[5]), "wall_s": round(wall, 1), "requests": int(requests),
                  "requests_per_s": round(requests / wall, 2),
                  "prompt_tokens_per_s": round(delta("vllm:prompt_tokens_total") / wall, 1),
                  "generated_tokens_per_s": round(delta("vllm:generation_tokens_total") / wall, 1),
                  "latency_p50_s_le": quantile(0.5), "latency_p95_s_le": quantile(0.95)}))
PY
