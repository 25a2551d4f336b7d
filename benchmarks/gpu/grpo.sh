#!/usr/bin/env bash
# GRPO against emotional simulated users on one GPU: a Qwen3-1.7B-shaped model, vLLM-backed rollouts.
#
# `tau train grpo` itself: prompts are airline's train tasks, each rollout an episode of
# tau_emotion.env (the scripted user conditioned by the emotion plugin, the UNSATISFIED ending, the
# harness's scorer), generation by vLLM colocated in the trainer's process (TRL syncs the weights
# each step), observations masked out of the loss. Prints step time, rollout tokens/s, the mean
# reward per step and peak GPU memory.
#
# By default nothing is downloaded: the model has Qwen3-1.7B's architecture (the config values
# are written below) with random weights and a byte-level BPE tokenizer trained here with Qwen3's
# special tokens and chat template; its rewards stay near the floor, so the figures are speed and
# memory. MODEL=/path/to/Qwen3-1.7B (a local copy of the real weights) trains the real model.
#
# Needs: the repository checkout, a CUDA build of torch, `pip install -e '.[train,rl]'` and
# `pip install vllm` in a version TRL supports (see TRL's docs; `trl[vllm]`).
# Knobs: MODEL, STEPS (50), GROUP (8 episodes per task), BATCH (32 episodes per step),
#        TURN_TOKENS (512), MAX_LENGTH (16384), EPISODE_STEPS (30), VLLM_MEMORY (0.35), WORK (a temp folder).
set -euo pipefail
cd "$(dirname "$0")/../.."
export OMP_NUM_THREADS=${OMP_NUM_THREADS:-8} LITELLM_LOCAL_MODEL_COST_MAP=True TOKENIZERS_PARALLELISM=false
export TRL_EXPERIMENTAL_SILENCE=1
export PYTHONPATH="$PWD${PYTHONPATH:+:$PYTHONPATH}"
STEPS=${STEPS:-50}
GROUP=${GROUP:-8}
BATCH=${BATCH:-32}
TURN_TOKENS=${TURN_TOKENS:-512}
MAX_LENGTH=${MAX_LENGTH:-16384}
EPISODE_STEPS=${EPISODE_STEPS:-30}
VLLM_MEMORY=${VLLM_MEMORY:-0.35}
WORK=${WORK:-$(mktemp -d)}
mkdir -p "$WORK"

python - <<'PY'
import importlib.util, sys
import torch
if not torch.cuda.is_available():
    sys.exit("grpo.sh needs a CUDA GPU (torch.cuda.is_available() is False)")
if importlib.util.find_spec("vllm") is None:
    sys.exit("grpo.sh needs vLLM for its rollouts: pip install vllm (a version TRL supports)")
print(f"gpu: {torch.cuda.get_device_name(0)}, torch {torch.__version__}", file=sys.stderr)
PY

if [ -z "${MODEL:-}" ]; then
  echo "== build a random-weight Qwen3-1.7B (config below) and a local tokenizer" >&2
  python - "$WORK" <<'PY'
import json, sys
from pathlib import Path
import torch
from transformers import Qwen3Config, Qwen3ForCausalLM
from tau_emotion.env import make
from tests.trainers.tiny_qwen import train_tokenizer

work = Path(sys.argv[1])
env = make("airline", split="train", emotion="random")
texts = [env.policy, json.dumps(env.tools)] + [t.user.instruction for t in env.session.tasks.values()]
env.close()
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
  MODEL="$WORK/qwen3-1.7b-random"
fi

echo "== tau train grpo: $STEPS steps, $BATCH episodes per step in groups of $GROUP, vLLM colocate" >&2
tau train grpo --model "$MODEL" --data airline:train --out "$WORK/grpo-out" --emotion random \
    --max-steps "$STEPS" --num-generations "$GROUP" --effective-batch-size "$BATCH" --per-device-batch-size "$GROUP" \
    --max-turn-tokens "$TURN_TOKENS" --max-length "$MAX_LENGTH" --episode-steps "$EPISODE_STEPS" \
    --learning-rate 1e-6 --bf16 --gradient-checkpointing --use-vllm --vllm-mode colocate \
    -o vllm_gpu_memory_utilization="$VLLM_MEMORY" -o vllm_enable_sleep_mode=true -o disable_tqdm=true

python - "$WORK/grpo-out/tau_train.json" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
steps, runtime, roll = r["global_step"], r["train_runtime"], r["rollout"]
print(f"steps: {steps}, episodes: {roll['episodes']}, optimizer: {r['config']['optim']}, bf16: {r['config']['bf16']}")
print(f"step time: {runtime / steps:.1f} s; agent tokens/s: {roll['agent_tokens'] / runtime:,.0f} "
      f"(+ {roll['env_tokens']:,} observation tokens, {roll.get('turns_closed', 0)} turns closed at the token cap)")
print("mean reward per step: " + " ".join(f"{x:+.2f}" for x in r["rewards"]))
print(f"peak GPU memory: {r['peak_gpu_memory_gib']} GiB")
PY
