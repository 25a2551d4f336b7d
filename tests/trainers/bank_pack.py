"""A `ledger` domain (the mock bank; not the `bank` pack) with a train split for the trainers' tests: the mock pack's tools, database and
short policy, and its tasks as train tasks (short conversations keep a tiny model's training fast).
Load it with `--plugins tests.trainers.bank_pack`."""

from __future__ import annotations

import json
from importlib.resources import files

from tau_emotion.core import hookimpl
from tau_emotion.core.domain import Domain
from tau_emotion.core.models import Task

MOCK = "tau_emotion.domain_packs.mock"


def _tasks() -> list[Task]:
    raw = json.loads(files(MOCK).joinpath("data/tasks.json").read_text(encoding="utf-8"))
    return [Task.model_validate({**t, "id": t["id"].replace("mock", "ledger"), "domain": "ledger", "split": "train"})
            for t in raw]


@hookimpl
def tau_register_domains(register):
    register(Domain("ledger", tools=f"{MOCK}.tools", package=MOCK, load_tasks=_tasks,
                    description="The mock bank with a train split (trainers' tests)."))
