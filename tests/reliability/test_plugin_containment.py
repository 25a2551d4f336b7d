"""Plugin containment (issue 24, items 3 and 4): a BaseException, a stopped loop, a blocked loop or an await
that never ends in an agent, user or hook fails that trial alone; a real Ctrl-C still interrupts; the
process exits when the run ends whatever threads a plugin started.

Each test here failed before: the run died (exit 3, 0 rows), never ended, or the process stayed alive.
"""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
import textwrap
import threading
import time

import pytest

from tau_emotion.core import hookimpl
from tau_emotion.core.manager import get_plugin_manager
from tau_emotion.core.models import Message, RunConfig
from tau_emotion.core.runner import prepare_run, run_sync
from tests.reliability.conftest import Agents

DONE = Message(role="assistant", content="done ###STOP###")


class Custom(BaseException):
    pass


def _raising(exc_type):
    class Agent:
        def __init__(self, episode):
            self.episode = episode

        async def act(self, history):
            if self.episode.trial == 0:
                raise exc_type("from the agent")
            return DONE.model_copy()

    return Agent


@pytest.mark.parametrize("exc_type", [SystemExit, KeyboardInterrupt, asyncio.CancelledError, GeneratorExit, Custom])
def test_a_base_exception_from_act_is_that_trials_error(exc_type, run_mock):
    run, summary, results = run_mock(Agents(bad=_raising(exc_type)), agent="bad", trials=2)
    assert len(results) == len(run.tasks) * 2
    errors = [r for r in results if r.status == "error"]
    assert {r.trial for r in errors} == {0} and len(errors) == len(run.tasks)
    assert all(exc_type.__name__ in r.error and "trial 0" in r.error for r in errors)
    assert summary["errors"] == len(run.tasks)


@pytest.mark.parametrize("exc_type", [SystemExit, KeyboardInterrupt, Custom])
def test_a_base_exception_from_a_constructor_or_episode_start_hook_is_that_trials_error(exc_type, run_mock):
    class Broken:
        def __init__(self, episode):
            raise exc_type("cannot build")

    class StartHook:
        @hookimpl
        def tau_episode_start(self, episode):
            if episode.trial == 1:
                raise exc_type("start hook")

    run, summary, results = run_mock(Agents(broken=Broken), agent="broken", trials=1, db="a.sqlite")
    assert len(results) == len(run.tasks) and all("building agent 'broken'" in r.error for r in results)
    run, summary, results = run_mock(StartHook(), trials=2, db="b.sqlite")
    assert len(results) == len(run.tasks) * 2
    assert {(r.trial, r.status) for r in results} == {(0, "ok"), (1, "error")}
    assert all("tau_episode_start" in r.error for r in results if r.status == "error")


def test_an_agent_stopping_the_event_loop_does_not_end_the_run(run_mock):
    class Stopper:
        def __init__(self, episode):
            pass

        async def act(self, history):
            asyncio.get_running_loop().stop()
            await asyncio.sleep(0)
            return DONE.model_copy()

    run, summary, results = run_mock(Agents(stopper=Stopper), agent="stopper", trials=2)
    assert len(results) == len(run.tasks) * 2 and summary["errors"] == 0


def test_an_agent_awaiting_forever_is_stopped_at_the_trial_deadline(run_mock):
    class Forever:
        def __init__(self, episode):
            self.episode = episode

        async def act(self, history):
            if self.episode.task.id == "mock-001":
                await asyncio.Event().wait()
            return DONE.model_copy()

    class Stubborn(Forever):
        async def act(self, history):  # swallows its cancellation and waits again: abandoned
            while self.episode.task.id == "mock-001":
                try:
                    await asyncio.sleep(3600)
                except BaseException:  # noqa: BLE001, S110 - the point of the test
                    pass
            return DONE.model_copy()

    for name in ("forever", "stubborn"):
        started = time.monotonic()
        run, summary, results = run_mock(Agents(forever=Forever, stubborn=Stubborn), agent=name, trials=1,
                                         trial_timeout=0.5, db=f"{name}.sqlite")
        assert time.monotonic() - started < 15
        assert len(results) == len(run.tasks)
        [stuck] = [r for r in results if r.status == "error"]
        assert stuck.task_id == "mock-001" and "--trial-timeout" in stuck.error


def test_plugin_code_holding_the_event_loop_is_stopped_and_other_trials_finish(run_mock):
    class Sleeper:
        def __init__(self, episode):
            self.episode = episode

        async def act(self, history):
            if self.episode.task.id == "mock-001":
                time.sleep(20)
            return DONE.model_copy()

    class Spinner(Sleeper):
        async def act(self, history):
            while self.episode.task.id == "mock-001":
                try:
                    pass
                except Exception:  # noqa: BLE001, S110 - what a careless plugin does
                    pass
            return DONE.model_copy()

    class SleepyHook:
        @hookimpl
        def tau_turn_end(self, episode, turn):
            if episode.task.id == "mock-002":
                time.sleep(20)

    for name, extra in (("sleeper", ()), ("spinner", ()), ("oracle", (SleepyHook(),))):
        started = time.monotonic()
        run, summary, results = run_mock(Agents(sleeper=Sleeper, spinner=Spinner), *extra, agent=name, trials=1,
                                         block_timeout=0.3, db=f"{name}.sqlite")
        assert time.monotonic() - started < 15
        assert len(results) == len(run.tasks)
        [stuck] = [r for r in results if r.status == "error"]
        assert "held the event loop" in stuck.error and "LoopBlocked" in stuck.error
        assert all(r.status == "ok" for r in results if r is not stuck)


def test_a_raising_run_end_hook_does_not_lose_the_summary(run_mock, capsys):
    class EndHook:
        @hookimpl
        def tau_run_end(self, run, summary):
            raise SystemExit("bye")

    run, summary, results = run_mock(EndHook(), trials=1)
    [error] = run.store.summary(run.run_id)["hook_errors"]
    assert error.startswith("tau_run_end of") and error.endswith("SystemExit: bye")
    assert run.store.run_meta(run.run_id)["status"] == "complete"  # the report plugin's hook still ran
    assert "a plugin hook failed after the run" in capsys.readouterr().err


def test_a_real_ctrl_c_still_interrupts_and_keeps_finished_trials(tmp_path):
    class Slow:
        def __init__(self, episode):
            self.episode = episode

        async def act(self, history):
            if self.episode.task.id != "mock-001":
                await asyncio.sleep(30)
            return DONE.model_copy()

    pm = get_plugin_manager(["mock"], extra=[Agents(slow=Slow)])
    config = RunConfig(plugins=["mock"], agent="slow", trials=1, options={"progress": {"no_progress": True}})
    run = prepare_run(config, str(tmp_path / "int.sqlite"), pm=pm)
    timer = threading.Timer(1.0, os.kill, (os.getpid(), signal.SIGINT))
    timer.start()
    started = time.monotonic()
    with pytest.raises(KeyboardInterrupt):
        run_sync(run)
    assert time.monotonic() - started < 10
    assert [r.task_id for r in run.store.results(run.run_id)] == ["mock-001"]


def test_the_process_exits_when_the_run_ends_despite_a_plugins_thread(tmp_path):
    (tmp_path / "threader_plugin.py").write_text(textwrap.dedent('''
        import threading, time
        from tau_emotion.core import hookimpl
        from tau_emotion.core.models import Message

        class Threader:
            def __init__(self, episode):
                threading.Thread(target=time.sleep, args=(3600,)).start()  # not a daemon

            async def act(self, history):
                return Message(role="assistant", content="done ###STOP###")

        @hookimpl
        def tau_register_agents(register):
            register("threader", Threader)
    '''))
    env = {**os.environ, "PYTHONPATH": f"{tmp_path}:{os.environ.get('PYTHONPATH', '')}"}
    command = [sys.executable, "-c", "from tau_emotion.core.cli import main; main()", "run",
               "--plugins", "mock,threader_plugin", "--agent", "threader", "--trials", "1", "--tasks", "1",
               "--db", str(tmp_path / "t.sqlite"), "-o", "no_progress=true"]
    done = subprocess.run(command, env=env, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert "avg_reward" in done.stdout or "reward" in done.stdout.lower()
