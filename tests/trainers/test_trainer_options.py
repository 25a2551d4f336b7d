"""The trainers' defaults are the paper's; `tau train` is built from the trainers catalog."""

import pytest

from tau_emotion.trainers import trl_trainers
from tau_emotion.trainers.trl_trainers import (
    DPOOptions,
    SFTOptions,
    accumulation_steps,
    choose_optimizer,
    config_kwargs,
)


def test_paper_defaults_on_cpu():
    kw = config_kwargs(SFTOptions(model="m"), "out", cuda=False)
    assert kw["learning_rate"] == 5e-5 and kw["lr_scheduler_type"] == "cosine" and kw["num_train_epochs"] == 3
    assert kw["per_device_train_batch_size"] * kw["gradient_accumulation_steps"] == 32
    assert kw["max_length"] == 32768 and kw["assistant_only_loss"] is True
    assert kw["optim"] == "adamw_torch" and kw["bf16"] is False and kw["use_cpu"] is True
    assert kw["gradient_checkpointing"] is False


def test_gpu_defaults_and_overrides(monkeypatch):
    monkeypatch.setattr(trl_trainers.importlib.util, "find_spec", lambda name: object() if name == "bitsandbytes" else None)
    kw = config_kwargs(SFTOptions(model="m", per_device_batch_size=4), "out", cuda=True)
    assert kw["optim"] == "paged_adamw_8bit" and kw["bf16"] is True and kw["gradient_checkpointing"] is True
    assert kw["use_cpu"] is False and kw["gradient_accumulation_steps"] == 8
    kw = config_kwargs(DPOOptions(model="m", bf16=False, optim="adamw_torch", extra={"max_grad_norm": 0.5}), "o", cuda=True)
    assert kw["bf16"] is False and kw["optim"] == "adamw_torch" and kw["max_grad_norm"] == 0.5 and kw["beta"] == 0.1


def test_optimizer_and_accumulation(monkeypatch):
    monkeypatch.setattr(trl_trainers.importlib.util, "find_spec", lambda name: None)
    assert choose_optimizer("auto", cuda=True) == "adamw_torch"  # no bitsandbytes
    assert choose_optimizer("auto", cuda=False) == "adamw_torch"
    assert choose_optimizer("sgd", cuda=True) == "sgd"
    assert accumulation_steps(32, 1, 1) == 32 and accumulation_steps(32, 4, 2) == 4 and accumulation_steps(32, 64, 1) == 1


def test_train_help_lists_sft_and_dpo(tau):
    result = tau("train", "--help")
    assert result.exit_code == 0
    assert "sft" in result.output and "dpo" in result.output
    result = tau("train", "sft", "--help")
    for flag in ("--model", "--data", "--out", "--learning-rate", "--effective-batch-size", "--max-length",
                 "--assistant-only-loss", "--option"):
        assert flag in result.output
    assert "--beta" in tau("train", "dpo", "--help").output


def test_missing_train_extra_is_one_line(tau, monkeypatch):
    real = trl_trainers.importlib.util.find_spec
    monkeypatch.setattr(trl_trainers.importlib.util, "find_spec", lambda name: None if name == "trl" else real(name))
    result = tau("train", "sft", "--model", "m", "--data", "d", "--out", "o")
    assert result.exit_code == 1
    assert "training needs" in result.output and "trl" in result.output and "pip install torch==2.13.0" in result.output


def test_bad_option_value_is_one_line(tau):
    result = tau("train", "dpo", "--model", "m", "--data", "d", "--out", "o", "-o", "novalue")
    assert result.exit_code == 2 and "expected KEY=VALUE" in result.output


@pytest.mark.parametrize("name", ["sft", "dpo"])
def test_trainers_satisfy_the_protocol(name):
    from tau_emotion.core.manager import load_all_plugins
    from tau_emotion.core.protocols import Trainer

    cls = load_all_plugins().catalog("trainers").get(name)
    assert isinstance(cls(), Trainer)
