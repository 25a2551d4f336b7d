"""Helpers for the reliability suite: in-test agents and users, and a run in one call."""

from __future__ import annotations

import pytest

from tau_emotion.core import hookimpl
from tau_emotion.core.manager import get_plugin_manager
from tau_emotion.core.models import Message, RunConfig
from tau_emotion.core.runner import prepare_run, run_sync


class Agents:
    """In-test agents: `name=factory` where factory(episode) is an agent object."""

    def __init__(self, **factories):
        self.factories = factories

    @hookimpl
    def tau_register_agents(self, register):
        for name, factory in self.factories.items():
            register(name, factory)


def scripted(*messages):
    """An agent factory that replays `messages`, then repeats the last."""

    class Agent:
        def __init__(self, episode):
            self.i = 0

        async def act(self, history):
            message = messages[min(self.i, len(messages) - 1)]
            self.i += 1
            return message.model_copy(deep=False) if isinstance(message, Message) else message

    return Agent


@pytest.fixture
def run_mock(tmp_path):
    """Run the mock domain with in-test plugins; returns (run, summary, results)."""

    def go(*plugins, agent="oracle", db=None, **kw):
        pm = get_plugin_manager(["mock"], extra=list(plugins))
        kw.setdefault("trials", 1)
        config = RunConfig(plugins=["mock"], agent=agent, options={"progress": {"no_progress": True}}, **kw)
        run = prepare_run(config, str(tmp_path / (db or "r.sqlite")), pm=pm)
        summary = run_sync(run)
        return run, summary, run.store.results(run.run_id)

    return go
