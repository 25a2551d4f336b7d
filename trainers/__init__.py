"""The `trainers` plugin: supervised fine-tuning (`sft`), preference optimisation (`dpo`) and GRPO against the
environment (`grpo`, `trainers/grpo.py`) on TRL.

Trainers are a catalog (`tau_register_trainers`): each entry is a `"module:attr"` target naming a
`protocols.Trainer` class, resolved only when used, and `tau train NAME` is built from the catalog,
so a third-party trainer appears there too. Torch, transformers, TRL and datasets are imported
inside `train`, never when this plugin loads (`pip install -e '.[train]'` brings them).
"""

from __future__ import annotations

from typing import Any

from tau_emotion.core import hookimpl


@hookimpl
def tau_register_trainers(register: Any) -> None:
    register("sft", "tau_emotion.trainers.trl_trainers:SFT")
    register("dpo", "tau_emotion.trainers.trl_trainers:DPO")
    register("grpo", "tau_emotion.trainers.grpo:GRPO")


@hookimpl
def tau_register_commands(cli: Any) -> None:
    from tau_emotion.trainers.commands import train_group

    cli.add_command(train_group)
