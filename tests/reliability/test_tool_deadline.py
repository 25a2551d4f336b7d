"""A slow or runaway tool is stopped at its deadline; the other episodes go on (failure 2).

The classic `calculate` (eval of `9**9**9**9`) is covered by tests/domain_packs/test_classic.py;
here a pack's own Python-level runaway loop and a blocking sleep are stopped by `--tool-timeout`.
"""

from __future__ import annotations

import threading
import time

import pytest

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
        register(Domain("slow", tools=[spin, nap, ping, where], load_database=lambda: Database({"t": {}}),
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


@tool
def where(db) -> str:
    """Say which thread runs tools."""
    return "main thread" if threading.current_thread() is threading.main_thread() else "other thread"


def test_deadlines_hold_in_a_worker_thread(tmp_path):
    """Off the main thread (a worker thread, as in a Ray actor's event loop) a runaway loop is stopped at its
    deadline and a blocking sleep becomes a tool error when it returns; the other episodes go on."""

    def agent(episode):
        if episode.task.id == "slow-0":
            return scripted(_call("where"), _call("spin", n=0), _call("nap", seconds=1.0),
                            Message(role="assistant", content="bye ###STOP###"))(episode)
        return scripted(_call("ping"), Message(role="assistant", content="bye ###STOP###"))(episode)

    pm = get_plugin_manager([], extra=[SlowPack(), Agents(mixed=agent)])
    run = prepare_run(RunConfig(plugins=[], agent="mixed", trials=1, concurrency=4, tool_timeout=0.3,
                                options={"progress": {"no_progress": True}}), str(tmp_path / "d.sqlite"), pm=pm)
    outcome = {}
    worker = threading.Thread(target=lambda: outcome.update(summary=run_sync(run)))
    started = time.perf_counter()
    worker.start()
    worker.join(30)
    assert not worker.is_alive() and "summary" in outcome
    assert time.perf_counter() - started < 10
    results = {r.task_id: r for r in run.store.results(run.run_id)}
    assert len(results) == 4 and all(r.status == "ok" for r in results.values())
    tools = [m for m in results["slow-0"].messages if m.role == "tool"]
    assert tools[0].content == "other thread"
    assert [m.error for m in tools[1:]] == [True, True]
    assert all("took longer than 0.3 s" in m.content for m in tools[1:])


@pytest.mark.slow
def test_a_call_ending_at_its_deadline_never_leaks_a_timeout_off_the_main_thread():
    """The watchdog's raise and a call that ends just then race: each call is a result or a tool error, and no
    ToolTimeout lands in the caller's code after the call returned."""

    @tool
    def busy(db, seconds: float) -> str:
        """Spin for a while."""
        end = time.perf_counter() + seconds
        while time.perf_counter() < end:
            pass
        return "done"

    toolset = Toolset([busy])
    outcomes = []

    def calls():
        try:
            for i in range(150):
                outcomes.append(toolset.call(None, "busy", {"seconds": 0.02 + (i % 7) * 0.003}, timeout=0.03)[1])
                sum(range(2000))  # caller code a late timeout would land in
            outcomes.append("finished")
        except BaseException as exc:  # noqa: BLE001 - what the test looks for
            outcomes.append(repr(exc))

    worker = threading.Thread(target=calls)
    worker.start()
    worker.join(60)
    assert outcomes[-1] == "finished", outcomes[-1]
    assert True in outcomes and False in outcomes  # both sides of the deadline were exercised
