"""A slow or runaway tool is stopped at its deadline; the other episodes go on (failure 2).

The classic `calculate` (eval of `9**9**9**9`) is covered by tests/domain_packs/test_classic.py;
here a pack's own Python-level runaway loop and a blocking sleep are stopped by `--tool-timeout`.
"""

from __future__ import annotations

import time

from tau_emotion.core import hookimpl
from tau_emotion.core.domain import Domain
from tau_emotion.core.manager import get_plugin_manager
from tau_emotion.core.models import Message, RunConfig, Task, ToolCall
from tau_emotion.core.runner import prepare_run, run_sync
from tau_emotion.core.state import Database
from tau_emotion.core.tools import Toolset, run_with_deadline, tool
from tests.reliability.conftest import Agents, scripted


@tool
def spin(db, n: int) -> str:
    """Loop for ever (a runaway tool)."""
    while True:
        n += 1


@tool
def nap(db, seconds: float) -> str:
    """Sleep (a stuck tool)."""
    time.sleep(seconds)
    return "rested"


@tool
def ping(db) -> str:
    """Answer at once."""
    return "pong"


class SlowPack:
    @hookimpl
    def tau_register_domains(self, register):
        tasks = [Task(id=f"slow-{i}", domain="slow", user={"instruction": "hi"}) for i in range(4)]
        register(Domain("slow", tools=[spin, nap, ping], load_database=lambda: Database({"t": {}}),
                        load_policy=lambda: "policy", load_tasks=lambda: tasks))


def _call(name, **arguments):
    return Message(role="assistant", tool_calls=[ToolCall(id=name, name=name, arguments=arguments)])


def test_a_runaway_and_a_stuck_tool_are_stopped_and_become_tool_errors():
    toolset = Toolset([spin, nap, ping])
    started = time.perf_counter()
    text, is_error = toolset.call(None, "spin", {"n": 0}, timeout=0.2)
    assert is_error and "took longer than 0.2 s" in text
    text, is_error = toolset.call(None, "nap", {"seconds": 30}, timeout=0.2)
    assert is_error and "nap took longer" in text
    assert time.perf_counter() - started < 2.0
    assert toolset.call(None, "ping", {}, timeout=0.2) == ("pong", False)
    time.sleep(0.1)  # no stray alarm after the calls ended
    assert run_with_deadline(lambda: 7, 0.05) == 7


def test_other_episodes_go_on_while_a_tool_is_stopped(tmp_path):
    ticks = []

    class Pinger:
        def __init__(self, episode):
            self.n = 0

        async def act(self, history):
            self.n += 1
            ticks.append(time.perf_counter())
            return _call("ping") if self.n < 20 else Message(role="assistant", content="bye ###STOP###")

    def agent(episode):
        if episode.task.id == "slow-0":
            return scripted(_call("spin", n=0), _call("nap", seconds=60),
                            Message(role="assistant", content="bye ###STOP###"))(episode)
        return Pinger(episode)

    pm = get_plugin_manager([], extra=[SlowPack(), Agents(mixed=agent)])
    run = prepare_run(RunConfig(plugins=[], agent="mixed", trials=1, concurrency=4, tool_timeout=0.3,
                                options={"progress": {"no_progress": True}}), str(tmp_path / "d.sqlite"), pm=pm)
    started = time.perf_counter()
    run_sync(run)
    elapsed = time.perf_counter() - started
    results = {r.task_id: r for r in run.store.results(run.run_id)}
    assert len(results) == 4 and all(r.status == "ok" for r in results.values())
    stopped = [m for m in results["slow-0"].messages if m.role == "tool"]
    assert [m.error for m in stopped] == [True, True] and "took longer than 0.3 s" in stopped[0].content
    assert elapsed < 5, elapsed  # the 60 s nap and the endless loop did not hold the run
