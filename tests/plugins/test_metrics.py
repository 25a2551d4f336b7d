from math import comb

import pytest

from tau_emotion.core.models import EpisodeResult, RunConfig, Termination
from tau_emotion.core.statistics import pass_hat_k, score_group
from tau_emotion.plugins.metrics import core_metrics


def _r(task, trial, success, domain="d", reason="user_stop", tags=None):
    return EpisodeResult(task_id=task, domain=domain, trial=trial, reward=1.0 if success else 0.0, success=success,
                         termination=Termination(reason=reason, negative=reason == "unsatisfied"), tags=tags or {})


def test_pass_hat_k_is_taubench_unbiased_estimator():
    assert pass_hat_k(3, 3, 3) == 1.0
    assert pass_hat_k(2, 3, 3) == 0.0
    assert pass_hat_k(2, 4, 2) == comb(2, 2) / comb(4, 2)
    assert pass_hat_k(0, 3, 1) == 0.0


def test_avg_and_pass_k_over_tasks():
    results = [_r("a", 0, True), _r("a", 1, True), _r("a", 2, True),
               _r("b", 0, True), _r("b", 1, False), _r("b", 2, False)]
    group = score_group(results, 3)
    assert group["avg_at_k"] == pytest.approx((1 + 1 / 3) / 2, abs=1e-4)
    assert group["pass_hat_k"]["1"] == pytest.approx((1 + 1 / 3) / 2, abs=1e-4)
    assert group["pass_hat_k"]["2"] == pytest.approx((1 + 0) / 2, abs=1e-4)
    assert group["pass_hat_k"]["3"] == pytest.approx(0.5)
    lo, hi = group["avg_at_k_ci95"]
    assert lo <= group["avg_at_k"] <= hi


def test_breakdown_by_domain_tags_and_negative_endings():
    results = [_r("a", 0, True, "x", tags={"size": "big"}), _r("b", 0, False, "y", reason="unsatisfied",
                                                                tags={"size": "small", "colour": "red"})]
    summary = core_metrics(results, RunConfig(trials=1))
    assert set(summary["by_domain"]) == {"x", "y"}
    assert summary["by_domain"]["x"]["avg_at_k"] == 1.0
    assert summary["negative_end_rate"] == 0.5
    assert summary["by_tag"]["size"]["big"]["avg_at_k"] == 1.0 and summary["by_tag"]["size"]["small"]["avg_at_k"] == 0.0
    assert set(summary["by_tag"]["colour"]) == {"red"}  # results without the tag are in no group
    assert summary["terminations"] == {"unsatisfied": 1, "user_stop": 1}


def test_results_are_tagged_with_their_number_of_intents(tmp_path):
    from tau_emotion.core.manager import get_plugin_manager
    from tau_emotion.core.runner import prepare_run, run_sync

    config = RunConfig(plugins=["mock"], trials=1, options={"progress": {"no_progress": True}})
    run = prepare_run(config, str(tmp_path / "r.db"), pm=get_plugin_manager(["mock"]))
    summary = run_sync(run)
    results = run.store.results(run.run_id)
    assert {r.tags["intents"] for r in results} >= {"1"}
    assert sum(g["n_tasks"] for g in summary["by_tag"]["intents"].values()) == summary["by_domain"]["mock"]["n_tasks"]
    rows = [row for found in run.pm.hook.tau_summary_rows(summary=summary) for row in found]
    assert [label for label, _ in rows if label.startswith("intents=")] == ["intents=1", "intents=2"]


def test_transfer_rates_in_every_group():
    from tau_emotion.core.models import RewardParts

    def parts(needed, done):
        return RewardParts(db_match=True, outputs_found=[], outputs_missing=[], terminal_done=done if needed else None)

    def handover(task, needed, family):
        r = _r(task, 0, needed, reason="terminal_tool", tags={"emotion.family": family})
        return r.model_copy(update={"parts": parts(needed, True)})

    results = [handover("a", True, "fear"), handover("b", False, "fear"),
               _r("c", 0, False, tags={"emotion.family": "anger"}).model_copy(update={"parts": parts(True, False)}),
               _r("d", 0, True, tags={"emotion.family": "anger"}).model_copy(update={"parts": parts(False, None)})]
    summary = core_metrics(results, RunConfig(trials=1))
    assert (summary["transfer_rate"], summary["unneeded_transfer_rate"]) == (0.5, 0.25)
    assert summary["by_domain"]["d"]["transfer_rate"] == 0.5
    fear, anger = summary["by_tag"]["emotion.family"]["fear"], summary["by_tag"]["emotion.family"]["anger"]
    assert (fear["transfer_rate"], fear["unneeded_transfer_rate"]) == (1.0, 0.5)
    assert (anger["transfer_rate"], anger["unneeded_transfer_rate"]) == (0.0, 0.0)


def test_an_agent_that_transfers_at_once_shows_in_the_summary(tmp_path):
    """A real run on the mock domain: transferring at once scores 0 where the gold has no transfer, and the summary
    says how often that happened."""
    from tau_emotion.core import hookimpl
    from tau_emotion.core.manager import get_plugin_manager
    from tau_emotion.core.models import Message, ToolCall
    from tau_emotion.core.runner import prepare_run, run_sync

    class Transferrer:
        def __init__(self, view):
            pass

        async def act(self, messages):
            call = ToolCall(id="t", name="transfer_to_human_agents", arguments={"summary": "over to you"})
            return Message(role="assistant", tool_calls=[call])

    class Agents:
        @hookimpl
        def tau_register_agents(self, register):
            register("transferrer", Transferrer)

    config = RunConfig(plugins=["mock"], trials=1, agent="transferrer", options={"progress": {"no_progress": True}})
    run = prepare_run(config, str(tmp_path / "r.db"), pm=get_plugin_manager(["mock"], extra=[Agents()]))
    summary = run_sync(run)
    results = run.store.results(run.run_id)
    assert {r.termination.reason for r in results} == {"terminal_tool"}
    assert all(r.reward == 0.0 for r in results if r.task_id != "mock-004")  # never -1: no user gave up
    assert summary["transfer_rate"] == 1.0 and summary["unneeded_transfer_rate"] == 0.75
    assert summary["by_domain"]["mock"]["unneeded_transfer_rate"] == 0.75
