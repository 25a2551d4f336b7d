"""Agents and users get a narrow handle (`EpisodeView`): nothing they do to what they were handed changes
another trial (issue 20: an agent that rewrote the shared rows turned every later trial's reward to 0)."""

from __future__ import annotations

import pytest

from tau_emotion.core import hookimpl
from tau_emotion.core.episode import EpisodeView
from tau_emotion.core.manager import get_plugin_manager
from tau_emotion.core.models import RunConfig
from tau_emotion.core.runner import prepare_run, run_sync
from tau_emotion.plugins.oracle_agent import OracleAgent


def _attacks(view: EpisodeView) -> dict[str, str]:
    """Every way to change rows, tools or the task through the handle; what each did ('changed' or the error)."""

    def scratch_rows():
        scratch = view.scratch_state()  # the caller's own state: changing it is allowed and stays there
        for key in list(scratch["accounts"]):
            del scratch["accounts"][key]
        scratch["owners"]["own-1"]["accounts"].clear()

    def snapshot_rows():  # the route that used to work: the shared database under a state
        view.scratch_state().database.tables["accounts"]["acc-1"]["balance"] = 0.0

    def snapshot_table():
        view.scratch_state().database.tables["accounts"].clear()

    def snapshot_peek():
        view.scratch_state()["accounts"].peek("acc-2")["balance"] = 0.0

    def episode_state_delete():
        del view.state["accounts"]["acc-1"]

    def episode_state_row():
        view.state["accounts"]["acc-1"]["balance"] = 0.0

    def episode_state_nested():
        view.state["owners"]["own-1"]["accounts"].append("acc-3")

    def tool_schemas():
        view.tools.schemas.clear()

    def tool_schema():
        view.tools.schemas[0]["function"]["name"] = "renamed"

    def task_gold():
        view.task.gold.actions.clear()

    def task_known():
        view.task.user.known.clear()

    def task_field():
        view.task.user.instruction = "do nothing"

    def refusal_reasons():
        view.domain.refusal_reasons["new"] = ["x"]

    out = {}
    for attack in (scratch_rows, snapshot_rows, snapshot_table, snapshot_peek, episode_state_delete, episode_state_row,
                   episode_state_nested, tool_schemas, tool_schema, task_gold, task_known, task_field, refusal_reasons):
        try:
            attack()
            out[attack.__name__] = "changed"
        except (TypeError, AttributeError, ValueError) as exc:  # a frozen pydantic model raises a ValueError
            out[attack.__name__] = type(exc).__name__
    return out


class Vandal:
    """On trial 0 it attacks everything it was handed, then does the oracle's work; on later trials the oracle's."""

    log: list[tuple[str, int, dict[str, str]]] = []

    def __init__(self, view: EpisodeView):
        if view.trial == 0:
            Vandal.log.append((view.task.id, view.trial, _attacks(view)))
        self.oracle = OracleAgent(view)

    async def act(self, messages):
        return await self.oracle.act(messages)


class VandalPlugin:
    @hookimpl
    def tau_register_agents(self, register):
        register("vandal", Vandal)


def test_an_agent_that_deletes_rows_it_was_handed_changes_no_other_trial(tmp_path):
    Vandal.log.clear()
    pm = get_plugin_manager(["mock"], extra=[VandalPlugin()])
    config = RunConfig(plugins=["mock"], agent="vandal", trials=3, task_ids=["mock-001", "mock-002"],
                       concurrency=1, options={"progress": {"no_progress": True}})
    run = prepare_run(config, str(tmp_path / "r.sqlite"), pm=pm)
    run_sync(run)
    results = sorted(run.store.results(run.run_id), key=lambda r: (r.task_id, r.trial))
    assert [(r.task_id, r.trial, r.reward) for r in results] == [
        (task, trial, 1.0) for task in ("mock-001", "mock-002") for trial in range(3)]
    assert len(Vandal.log) == 2
    for _, _, attacks in Vandal.log:
        assert attacks.pop("scratch_rows") == "changed"  # its own scratch state is its to change
        assert set(attacks.values()) <= {"TypeError", "AttributeError", "ValidationError"}, attacks
    assert pm.catalog("domains").get("mock").database.tables["accounts"]["acc-1"]["balance"] == 1200.0


def test_the_view_hands_out_no_plugin_manager_run_or_domain(tmp_path):
    pm = get_plugin_manager(["mock"])
    run = prepare_run(RunConfig(plugins=["mock"], trials=1, options={"progress": {"no_progress": True}}),
                      str(tmp_path / "r.sqlite"), pm=pm)
    from tests.episodes import make_episode

    view = make_episode(run, run.tasks[0], 0).view()
    public = {name for name in dir(view) if not name.startswith("_")}
    assert not public & {"pm", "run", "config", "database"}
    assert view.task.model_dump() == run.tasks[0].model_dump() and view.task is not run.tasks[0]
    assert view.task.gold.actions[0] is not run.tasks[0].gold.actions[0]
    assert make_episode(run, run.tasks[0], 1).view().task is view.task  # one read-only copy, shared by the trials
    with pytest.raises(TypeError):
        view.tools.schemas.append({})
    assert view.end_tokens.done == "###STOP###" and view.end_tokens.give_up == "###STOP###"
