"""SFT and DPO on TRL with the paper's hyper-parameters as defaults.

Defaults (every one overridable): learning rate 5e-5, cosine schedule, 3 epochs, effective batch 32
(gradient accumulation fills the gap left by the per-device batch), maximum length 32,768, loss on
assistant turns only, bf16 and gradient checkpointing on a GPU, paged AdamW 8-bit where bitsandbytes
and CUDA are both present and AdamW otherwise. Any other field of TRL's `SFTConfig` / `DPOConfig` is
passed through `extra` (`tau train sft -o max_grad_norm=0.5`).

The saved tokenizer carries the chat template the model was trained with (for assistant-only loss
TRL swaps in a variant with generation markers; Qwen3's adds an empty think block to every
assistant turn), so a server renders conversations as in training.

Importing this module imports pydantic only; torch, transformers, TRL and datasets are imported in
`train`.
"""

from __future__ import annotations

import importlib.util
import json
import math
import os
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from tau_emotion.core.errors import TauError

SFT_COLUMNS = ("messages", "tools")
DPO_COLUMNS = ("prompt", "chosen", "rejected", "tools")


class TrainError(TauError):
    """Training cannot start: a missing extra, an unusable dataset or model."""


class TrainOptions(BaseModel):
    """Hyper-parameters shared by the trainers; each field is a `tau train NAME --flag`."""

    model_config = ConfigDict(extra="forbid", protected_namespaces=())

    model: str = Field(description="Model to fine-tune: a local folder or a Hugging Face id.")
    learning_rate: float = Field(5e-5, description="Peak learning rate.")
    lr_scheduler_type: str = Field("cosine", description="Learning-rate schedule (transformers' SchedulerType).")
    num_train_epochs: float = Field(3.0, description="Epochs over the train split.")
    max_steps: int = Field(-1, description="Stop after this many optimizer steps (-1: run the epochs).")
    effective_batch_size: int = Field(32, description="Sequences per optimizer step, over all devices.")
    per_device_batch_size: int = Field(1, description="Sequences per device per forward pass.")
    max_length: int = Field(32768, description="Longest sequence in tokens; longer ones are truncated.")
    optim: str = Field("auto", description="Optimizer; auto: paged_adamw_8bit with bitsandbytes and CUDA, else adamw_torch.")
    bf16: bool | None = Field(None, description="bf16 mixed precision (default: on with a GPU).")
    gradient_checkpointing: bool | None = Field(None, description="Gradient checkpointing (default: on with a GPU).")
    warmup_steps: float = Field(0, description="Linear warm-up: steps, or a share of all steps when below 1.")
    weight_decay: float = Field(0.0, description="Weight decay.")
    logging_steps: int = Field(1, description="Log the loss every N steps.")
    save_strategy: str = Field("no", description="Checkpoints during training (no, epoch, steps); the final model is always saved.")
    eval_strategy: str = Field("no", description="Evaluate on the validation split (no, epoch, steps).")
    seed: int = Field(0, description="Random seed.")
    report_to: str = Field("none", description="Where to report metrics (none, tensorboard, wandb, ...).")
    extra: dict[str, Any] = Field(default_factory=dict, description="More TRL config fields (-o KEY=VALUE).")


class SFTOptions(TrainOptions):
    assistant_only_loss: bool = Field(True, description="Loss on assistant turns only (needs generation markers; TRL adds them for known templates).")
    packing: bool = Field(False, description="Pack several conversations into one sequence.")


class DPOOptions(TrainOptions):
    beta: float = Field(0.1, description="DPO temperature: how far the policy may move from the reference.")


def has_cuda() -> bool:
    import torch

    return torch.cuda.is_available()


def choose_optimizer(optim: str, cuda: bool) -> str:
    """paged_adamw_8bit where bitsandbytes and CUDA are both present; AdamW (torch) otherwise."""
    if optim != "auto":
        return optim
    return "paged_adamw_8bit" if cuda and importlib.util.find_spec("bitsandbytes") is not None else "adamw_torch"


def peak_gpu_memory_gib() -> float:
    import torch

    return round(torch.cuda.max_memory_allocated() / 2**30, 2)


def accumulation_steps(effective: int, per_device: int, world_size: int) -> int:
    return max(1, math.ceil(effective / (per_device * world_size)))


def config_kwargs(opts: TrainOptions, output_dir: str, cuda: bool) -> dict[str, Any]:
    """The TRL config fields for `opts` on this machine (CPU or CUDA); `extra` wins."""
    world = int(os.environ.get("WORLD_SIZE", "1"))
    bf16 = cuda if opts.bf16 is None else opts.bf16
    kwargs: dict[str, Any] = {
        "output_dir": output_dir,
        "learning_rate": opts.learning_rate,
        "lr_scheduler_type": opts.lr_scheduler_type,
        "num_train_epochs": opts.num_train_epochs,
        "max_steps": opts.max_steps,
        "per_device_train_batch_size": opts.per_device_batch_size,
        "per_device_eval_batch_size": opts.per_device_batch_size,
        "gradient_accumulation_steps": accumulation_steps(opts.effective_batch_size, opts.per_device_batch_size, world),
        "max_length": opts.max_length,
        "optim": choose_optimizer(opts.optim, cuda),
        "bf16": bf16,
        "gradient_checkpointing": cuda if opts.gradient_checkpointing is None else opts.gradient_checkpointing,
        "warmup_steps": opts.warmup_steps,
        "weight_decay": opts.weight_decay,
        "logging_steps": opts.logging_steps,
        "save_strategy": opts.save_strategy,
        "eval_strategy": opts.eval_strategy,
        "seed": opts.seed,
        "report_to": opts.report_to,
        "use_cpu": not cuda,
    }
    if isinstance(opts, SFTOptions):
        kwargs.update(assistant_only_loss=opts.assistant_only_loss, packing=opts.packing)
    if isinstance(opts, DPOOptions):
        kwargs.update(beta=opts.beta)
    kwargs.update(opts.extra)
    return kwargs


def _require_train_extra() -> None:
    missing = [m for m in ("torch", "transformers", "trl", "datasets") if importlib.util.find_spec(m) is None]
    if missing:
        raise TrainError(f"training needs {', '.join(missing)}: pip install torch==2.13.0 (CPU) or a CUDA build, "
                         f"then pip install -e '.[train]'")


def load_splits(data: Any, columns: tuple[str, ...]) -> tuple[Any, Any]:
    """(train, validation or None) from an exported folder (`tau export-sft`) or a DatasetDict."""
    import datasets

    if isinstance(data, str | Path):
        if not Path(data).exists():
            raise TrainError(f"no dataset at {data}: export one with `tau export-sft RUN --out {data}`")
        if not (Path(data) / "dataset_dict.json").exists() and any(Path(data).glob("*.jsonl")):
            data = datasets.DatasetDict({  # exported without `datasets`: one JSONL file per split
                path.stem: datasets.Dataset.from_list([json.loads(line) for line in path.read_text("utf-8").splitlines()
                                                       if line.strip()])
                for path in sorted(Path(data).glob("*.jsonl")) if path.stat().st_size})
        else:
            data = datasets.load_from_disk(str(data))
    if isinstance(data, datasets.Dataset):
        data = datasets.DatasetDict({"train": data})
    if "train" not in data:
        raise TrainError(f"the dataset has no train split (splits: {', '.join(data)})")
    missing = [c for c in columns if c != "tools" and c not in data["train"].column_names]
    if missing:
        raise TrainError(f"the dataset lacks column(s) {', '.join(missing)}: is it the right format "
                         f"(tau export-sft --format {'dpo' if 'chosen' in columns else 'sft'})?")

    def keep(ds: Any) -> Any:
        return ds.remove_columns([c for c in ds.column_names if c not in columns])

    return keep(data["train"]), keep(data["validation"]) if "validation" in data else None


def load_model(name: str, bf16: bool) -> tuple[Any, Any]:
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    try:
        tokenizer = AutoTokenizer.from_pretrained(name)
        model = AutoModelForCausalLM.from_pretrained(name, dtype=torch.bfloat16 if bf16 else torch.float32)
    except OSError as exc:
        raise TrainError(f"cannot load model '{name}': {str(exc).splitlines()[0]}") from None
    if tokenizer.chat_template is None:
        raise TrainError(f"the tokenizer of '{name}' has no chat template: the exported conversations need one")
    if tokenizer.pad_token is None:
        tokenizer.pad_token = tokenizer.eos_token
    return model, tokenizer


def make_config(cls: type, kwargs: dict[str, Any]) -> Any:
    """`cls(**kwargs)`, with `gradient_checkpointing` under its newer name where transformers renamed it."""
    import dataclasses

    names = {f.name for f in dataclasses.fields(cls)}
    if "activation_checkpointing" in names and "gradient_checkpointing" in kwargs:
        kwargs = {**kwargs, "activation_checkpointing": kwargs["gradient_checkpointing"]}
        del kwargs["gradient_checkpointing"]
    return cls(**kwargs)


class _TRLTrainer:
    """Shared flow: options -> TRL config -> model and data -> train -> save the model and the log."""

    name = ""
    options: type[TrainOptions] = TrainOptions
    columns: tuple[str, ...] = ()

    def make_trainer(self, model: Any, tokenizer: Any, args: Any, train: Any, validation: Any) -> Any:
        raise NotImplementedError

    def config(self, kwargs: dict[str, Any]) -> Any:
        raise NotImplementedError

    def train(self, dataset: Any, output_dir: str, **options: Any) -> dict[str, Any]:
        """Fine-tune `options["model"]` on `dataset` (an exported folder or a DatasetDict) into `output_dir`.

        Returns the run's record (also written to `output_dir/tau_train.json`): options, the TRL
        config used, the loss log, steps and runtime.
        """
        _require_train_extra()
        opts = self.options.model_validate(options)
        cuda = has_cuda()
        kwargs = config_kwargs(opts, output_dir, cuda)
        train, validation = load_splits(dataset, self.columns)
        if opts.eval_strategy == "no":
            validation = None
        model, tokenizer = load_model(opts.model, kwargs["bf16"])
        try:
            args = self.config(kwargs)
        except (TypeError, ValueError) as exc:
            raise TrainError(f"{self.name}: bad training option: {exc}") from None
        trainer = self.make_trainer(model, tokenizer, args, train, validation)
        kept = self.kept_rows(trainer, len(train), opts)
        result = trainer.train()
        trained_with = getattr(trainer, "chat_template", None)
        if trained_with:
            # TRL trained with its variant of the template (generation markers; for Qwen3 an empty think
            # block in every assistant turn): serve the model with what it learned, not the original
            tokenizer.chat_template = trained_with
        trainer.save_model(output_dir)
        tokenizer.save_pretrained(output_dir)
        losses = [entry["loss"] for entry in trainer.state.log_history if "loss" in entry]
        tokens = [entry["num_tokens"] for entry in trainer.state.log_history if "num_tokens" in entry]
        record = {"trainer": self.name, "options": opts.model_dump(mode="json"),
                  "config": {k: v for k, v in kwargs.items() if k != "output_dir"},
                  "device": "cuda" if cuda else "cpu", "train_rows": kept, "dropped_rows": len(train) - kept,
                  "global_step": trainer.state.global_step, "losses": losses,
                  "train_runtime": result.metrics.get("train_runtime"), "num_tokens": tokens[-1] if tokens else None,
                  "peak_gpu_memory_gib": peak_gpu_memory_gib() if cuda else None,
                  "log_history": trainer.state.log_history}
        Path(output_dir, "tau_train.json").write_text(json.dumps(record, indent=1, default=str) + "\n", encoding="utf-8")
        return record


    def kept_rows(self, trainer: Any, rows: int, opts: TrainOptions) -> int:
        """The train rows TRL kept after preparing them; none is one line saying why and what to change.

        TRL truncates each row to `max_length` and then drops rows with no token left to learn from (with
        assistant-only loss, a row whose assistant turns all lie past the cut), so a short `--max-length`
        can leave nothing, where torch's sampler would fail deep inside `train()`."""
        try:
            kept = len(trainer.train_dataset)
        except TypeError:  # an iterable dataset has no length: TRL's own checks apply
            return rows
        if kept == 0:
            loss = " (loss on assistant turns only: --no-assistant-only-loss keeps rows whose " \
                   "prompt fills the length)" if getattr(opts, "assistant_only_loss", False) else ""
            raise TrainError(f"tau train {self.name}: all {rows} train row(s) were dropped: none keeps a token to "
                             f"learn from within --max-length {opts.max_length}{loss}; raise --max-length")
        return kept


class SFT(_TRLTrainer):
    """Supervised fine-tuning on exported conversations (TRL `SFTTrainer`)."""

    name = "sft"
    options = SFTOptions
    columns = SFT_COLUMNS

    def config(self, kwargs: dict[str, Any]) -> Any:
        from trl import SFTConfig

        return make_config(SFTConfig, kwargs)

    def make_trainer(self, model: Any, tokenizer: Any, args: Any, train: Any, validation: Any) -> Any:
        from trl import SFTTrainer

        return SFTTrainer(model=model, args=args, train_dataset=train, eval_dataset=validation,
                          processing_class=tokenizer)


class DPO(_TRLTrainer):
    """Direct preference optimisation on exported +1/-1 pairs (TRL `DPOTrainer`); the reference is the starting model."""

    name = "dpo"
    options = DPOOptions
    columns = DPO_COLUMNS

    def config(self, kwargs: dict[str, Any]) -> Any:
        from trl import DPOConfig

        return make_config(DPOConfig, kwargs)

    def make_trainer(self, model: Any, tokenizer: Any, args: Any, train: Any, validation: Any) -> Any:
        from trl import DPOTrainer

        return DPOTrainer(model=model, args=args, train_dataset=train, eval_dataset=validation,
                          processing_class=tokenizer)
