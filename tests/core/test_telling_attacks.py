"""The attack agents (tests/attack_agents.py, a plugin loaded by module path as a third party's would be) against
the reward and the scripted user, on real airline and bank test tasks: a list, a hedge, a negation or a recital
scores no more than "Done."; the gold calls with the gold statement score 1.

`benchmarks/scoring_attacks.py` runs the same agents on every task of every pack's test split."""

from __future__ import annotations

import functools

import pytest

from tau_emotion.core.manager import load_all_plugins
from tau_emotion.core.models import RunConfig
from tau_emotion.core.reward import number_value
from tau_emotion.core.runner import prepare_run, run_sync

PLUGIN = "tests.attack_agents"


@functools.cache
def _tasks(pack):
    """A read-only task with an output, a write task with a figure, a refusal task with a reason."""
    domain = load_all_plugins().catalog("domains").get(pack)
    tasks = domain.tasks("test")
    writes = {t.id for t in tasks if any(domain.toolset[a.name].writes for a in t.gold.actions)}
    terminal = {t.id for t in tasks if any(domain.toolset.is_terminal(a.name) for a in t.gold.actions)}
    reads = [t for t in tasks if t.id not in writes and t.gold.outputs and t.id not in terminal]
    # a figure to hedge when the split has one ("$352, or $368"); a status ("landed") is what the negator attacks
    read_only = next((t for t in reads if any(number_value(o) is not None for o in t.gold.outputs if isinstance(o, str))),
                     reads[0])
    figure = next(t for t in tasks if t.id in writes and t.id not in terminal and not t.gold.reasons
                  and any(number_value(o) is not None for o in t.gold.outputs if isinstance(o, str)))
    reason = next(t for t in tasks if t.gold.reasons and not t.gold.outputs and t.id not in terminal)
    return {"read_only": read_only.id, "figure": figure.id, "reason": reason.id}


def _run(tmp_path, pack, agent):
    tasks = _tasks(pack)
    config = RunConfig(plugins=[PLUGIN, pack], trials=1, agent=agent, task_ids=list(tasks.values()),
                       options={"progress": {"no_progress": True}})
    run = prepare_run(config, str(tmp_path / f"{agent}.db"))
    run_sync(run)
    by_id = {r.task_id: r for r in run.store.results(run.run_id)}
    return {kind: by_id[task_id] for kind, task_id in tasks.items()}


@pytest.mark.parametrize("pack", ["airline", pytest.param("bank", marks=pytest.mark.slow)])
def test_no_attack_scores_more_than_done_and_the_gold_statement_scores_1(tmp_path, pack):
    gold = _run(tmp_path, pack, "gold_caller")
    assert all(r.reward == 1.0 for r in gold.values()), {k: r.parts for k, r in gold.items()}
    done = _run(tmp_path, pack, "done")
    assert not any(r.success for r in done.values())
    # the hedger and the negator give reasons plainly and the reciter says outputs plainly: each attacks one part
    attacked = {"lister": ("read_only", "figure", "reason"), "value_lister": ("read_only", "figure", "reason"),
                "reciter": ("reason",), "hedger": ("read_only", "figure"), "negator": ("read_only", "figure")}
    for agent, kinds in attacked.items():
        results = _run(tmp_path, pack, agent)
        for kind in kinds:
            r = results[kind]
            assert r.reward <= done[kind].reward, (agent, kind, r.task_id, r.parts)
    alone = _run(tmp_path, pack, "list_only")
    assert alone["read_only"].reward <= 0.0 and alone["read_only"].parts.outputs_found == []
