"""`tau train grpo` for real on CPU: a tiny Qwen3 built from a config (tokenizer trained here) runs GRPO
steps against the mock domain's episodes with the scripted user (and the emotion plugin's conditions).

What is checked: the rewards TRL optimises are the environment's (each logged step's mean reward is
the mean of the episodes written to episodes.jsonl, and each episode's reward is what the core
scorer gives its transcript), observations are in the sequences but masked out, the loss is finite,
a step with differing rewards moves the weights, and the checkpoint reloads and generates."""

import importlib.util
import json
import math

import pytest

from tests.trainers.tiny_qwen import make_tiny_qwen

_MISSING = [m for m in ("torch", "transformers", "trl", "datasets", "tokenizers") if importlib.util.find_spec(m) is None]
pytestmark = [pytest.mark.slow,  # a real TRL training on CPU
              pytest.mark.skipif(bool(_MISSING), reason=f"the trainers' CPU tests need the [train] extra "
                                  f"(missing: {', '.join(_MISSING)}): pip install torch==2.13.0 && pip install -e '.[train]'")]

STEPS, BATCH, GROUP, BALANCE = 3, 4, 2, 0.5


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    from tau_emotion.core.env import make

    root = tmp_path_factory.mktemp("grpo")
    env = make("mock")
    texts = [env.policy, json.dumps(env.tools), *(t.user.instruction for t in env.session.tasks.values()),
             '<tool_call>{"name": "find_owner", "arguments": {"name": "Ada Park"}}</tool_call>', "What is your full name?"]
    env.close()
    return root, make_tiny_qwen(root / "tiny", texts * 5, vocab_size=800, hidden=32, layers=2)


def test_grpo_trains_on_environment_rewards_and_the_checkpoint_reloads(tau, tiny):
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    from tau_emotion.core.env import make
    from tau_emotion.core.models import Message, Termination
    from tau_emotion.core.reward import rescore

    root, model = tiny
    out = root / "out"
    result = tau("train", "grpo", "--model", str(model), "--data", "mock:test", "--out", str(out),
                 "--max-steps", str(STEPS), "--num-generations", str(GROUP), "--effective-batch-size", str(BATCH),
                 "--per-device-batch-size", str(BATCH), "--max-turn-tokens", "24", "--episode-steps", "4",
                 "--learning-rate", "1e-3", "--shaping-balance", str(BALANCE), "-o", "disable_tqdm=true")
    assert result.exit_code == 0, result.output
    assert f"grpo: {STEPS} step(s) on 4 row(s)" in result.output
    record = json.loads((out / "tau_train.json").read_text())
    assert record["device"] == "cpu" and record["global_step"] == STEPS and record["data"] == "mock:test"
    assert "emotion" in record["plugins"] and record["config"]["reward_weights"] == [1.0, BALANCE]
    assert len(record["losses"]) == STEPS and all(math.isfinite(x) for x in record["losses"])
    stats = record["rollout"]
    assert stats["episodes"] == STEPS * BATCH and stats["env_tokens"] > 0 and stats["agent_tokens"] > 0

    rows = [json.loads(line) for line in (out / "episodes.jsonl").read_text().splitlines()]
    assert len(rows) == STEPS * BATCH
    env = make("mock", emotion="random")  # the tasks as the trainer's environment conditioned them
    for row in rows:  # the reward of every episode is the core scorer's on its transcript
        task = env.session.task(row["task_id"])
        reward, _ = rescore(env.session.domain, task, [Message.model_validate(m) for m in row["messages"]],
                            Termination.model_validate(row["termination"]))
        assert reward == row["reward"] == row["reward_parts"]["task"], row["task_id"]
    env.close()
    # what TRL logged as the reward of each step is the mean over that step's episodes (task + weighted balance)
    for step, logged in enumerate(record["rewards"]):
        batch = rows[step * BATCH:(step + 1) * BATCH]
        assert logged == pytest.approx(sum(r["reward"] + BALANCE * r["shaping"]["balance"] for r in batch) / BATCH)
    spread = [e for e in record["log_history"] if e.get("reward_std", 0) > 0]
    assert spread, "no step had differing rewards: the test would not exercise a gradient"
    assert all(e["grad_norm"] > 0 for e in spread)

    before = AutoModelForCausalLM.from_pretrained(model)
    after = AutoModelForCausalLM.from_pretrained(out).eval()
    assert not torch.equal(before.model.embed_tokens.weight, after.model.embed_tokens.weight)
    tokenizer = AutoTokenizer.from_pretrained(out)
    enc = tokenizer.apply_chat_template([{"role": "user", "content": "hello"}], add_generation_prompt=True,
                                        return_tensors="pt", return_dict=True)
    with torch.no_grad():
        generated = after.generate(**enc, max_new_tokens=4, do_sample=False)
    assert generated.shape[1] == enc["input_ids"].shape[1] + 4 or generated[0, -1] == tokenizer.eos_token_id


def test_a_bad_domain_is_one_line(tau, tiny):
    root, model = tiny
    result = tau("train", "grpo", "--model", str(model), "--data", "mokc", "--out", str(root / "x"))
    assert result.exit_code == 1 and "unknown domain 'mokc'. Did you mean 'mock'?" in result.output
    result = tau("train", "grpo", "--model", str(model), "--data", "mock", "--out", str(root / "x"))
    assert result.exit_code == 1 and "no tasks in split 'train' of domain 'mock'" in result.output


class ScriptedPolicy:
    """Stands in for the trainer's generation backend: each episode's k-th turn is the k-th scripted text."""

    def __init__(self, tokenizer, turns):
        self.tokenizer, self.turns, self.calls = tokenizer, turns, []

    def _generate_single_turn(self, prompts, images, multimodal, num_generations=1):
        self.calls.append(prompts)
        turn = len(self.calls) - 1
        eos = self.tokenizer.convert_tokens_to_ids("<|im_end|>")
        return [self.tokenizer.encode(self.turns[turn], add_special_tokens=False) + [eos] for _ in prompts], None


def test_the_rollout_parses_tool_calls_masks_observations_and_scores_with_the_environment(tiny, tmp_path):
    from transformers import AutoTokenizer

    from tau_emotion.core.env import prepare
    from tau_emotion.trainers.grpo import EnvRollout, GRPOOptions

    _, model = tiny
    tokenizer = AutoTokenizer.from_pretrained(model)
    session = prepare("mock", split="test", emotion="random", max_steps=10)
    gold = ('<tool_call>{"name": "find_owner", "arguments": {"name": "Ben Ortiz"}}</tool_call>'
            '<tool_call>{"name": "freeze_account", "arguments": {"account_id": "acc-3", "reason": "stolen card"}}</tool_call>')
    policy = ScriptedPolicy(tokenizer, [gold, "Done: account acc-3 is frozen."])
    log = tmp_path / "episodes.jsonl"
    rollout = EnvRollout(session, tokenizer, GRPOOptions(model="m", max_turn_tokens=200), log)
    out = rollout(["mock-002", "mock-002"], policy)
    rollout.close()

    assert out["env_task"] == [1.0, 1.0] and out["logprobs"] is None and len(policy.calls) == 2
    prompt = tokenizer.decode(out["prompt_ids"][0])
    assert "# Mock bank policy" in prompt and "freeze_account" in prompt and prompt.endswith("<|im_start|>assistant\n")
    ids, mask = out["completion_ids"][0], out["env_mask"][0]
    assert len(ids) == len(mask)
    trained = tokenizer.decode([t for t, m in zip(ids, mask, strict=True) if m])
    masked = tokenizer.decode([t for t, m in zip(ids, mask, strict=True) if not m])
    assert trained.count("<tool_call>") == 2 and "acc-3 is frozen" in trained and trained.endswith("<|im_end|>")
    assert "<tool_response>" in masked and "own-2" in masked and "acc-3 is frozen" not in masked
    # the second turn was generated after the tool results: its prompt is the first turn plus the observation
    assert policy.calls[1][0] == out["prompt_ids"][0] + ids[: len(policy.calls[1][0]) - len(out["prompt_ids"][0])]
    rows = [json.loads(line) for line in log.read_text().splitlines()]
    assert [r["termination"]["reason"] for r in rows] == ["user_stop", "user_stop"]
    assert [r["trial"] for r in rows] == [0, 0]  # a group meets the same user
