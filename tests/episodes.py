"""Test-only ways to build an episode outside a run (production code builds them in `runner.run_one`)."""

from __future__ import annotations

from tau_emotion.core.episode import Episode
from tau_emotion.core.models import RunConfig


def make_episode(run, task, trial):
    """The episode `run_one` would build for (task, trial) of `run`, agent and user included."""
    ep = Episode(task=task, domain=run.domains[task.domain], trial=trial, config=run.config, pm=run.pm, run=run)
    ep.agent = run.pm.catalog("agents").get(run.config.agent)(ep.view())
    ep.user = run.pm.catalog("users").get(run.config.user)(ep.view())
    return ep


def bare_episode(pm, domain, task, config=None, trial=0):
    """An episode of `task` with no agent or user yet, and the view they would be built with."""
    ep = Episode(task=task, domain=domain, trial=trial, config=config or RunConfig(), pm=pm)
    return ep, ep.view()
