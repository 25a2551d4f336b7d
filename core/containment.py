"""Plugin code under containment: what an agent, a user or a hook does ends its own trial, never the run.

Three things plugin code can do to a run that an `except Exception` does not catch:

- raise a `BaseException` (`SystemExit`, `KeyboardInterrupt`, `GeneratorExit`, a `CancelledError` of its
  own making): `trial_error_of` tells those from a real Ctrl-C, which still interrupts;
- hold the event loop (a busy loop, `time.sleep`, a sleeping hook), so no other trial and no timer runs:
  `guarded` drives a trial's coroutine and arms a deadline around each stretch it runs without yielding;
  a watchdog thread sends SIGALRM to the main thread when one is overdue, and the handler raises
  `LoopBlocked` inside that code (between two bytecodes; a blocking `sleep` ends with the signal). It
  keeps raising every watch interval until the stretch ends, so plugin code that swallows it cannot stay;
- await forever: `run_abandonable` waits for a trial up to its wall-clock deadline, then cancels it and,
  if it does not end within a grace period, abandons it (it is left out of the run's shutdown).

Like the tool deadline (`core/tools.py`), the block deadline needs the main thread; elsewhere (an
executor running trials in other threads) code runs unbounded but still contained.
"""

from __future__ import annotations

import asyncio
import signal
import threading
import time
from collections.abc import Awaitable, Coroutine, Generator, Iterator
from contextlib import contextmanager
from typing import Any, TypeVar

T = TypeVar("T")

#: how often the watchdog looks at the running stretch (the block deadline's resolution)
WATCH_INTERVAL = 0.02
#: seconds a cancelled trial gets to end before it is abandoned
GRACE = 2.0


class LoopBlocked(BaseException):
    """Raised inside plugin code that held the event loop past its deadline (a BaseException, so a
    plugin's `except Exception` does not swallow it)."""


class TrialDeadline(Exception):
    """A trial ran past its wall-clock deadline (`--trial-timeout`) and was stopped or abandoned."""


class _BlockWatchdog:
    """Raises LoopBlocked in the main thread when the running stretch of plugin code is overdue.

    A stretch writes its deadline into `due` (no syscall, no lock); a daemon thread looks every
    WATCH_INTERVAL. The SIGALRM handler chains to the one installed before it (the tool deadline's),
    so both deadlines share the signal."""

    def __init__(self) -> None:
        self.due = 0.0
        self.seconds = 0.0
        self.started = False
        self.previous: Any = None
        self.main: int | None = None

    def start(self) -> None:
        self.main = threading.main_thread().ident
        self.previous = signal.signal(signal.SIGALRM, self._on_alarm)
        threading.Thread(target=self._watch, name="tau-block-deadline", daemon=True).start()
        self.started = True

    def _on_alarm(self, signum: int, frame: Any) -> None:
        if self.due and time.monotonic() >= self.due:
            raise LoopBlocked(f"plugin code held the event loop for more than {self.seconds:g} s "
                              "(--block-timeout); a busy loop or a blocking call in an agent, user or hook?")
        if callable(self.previous):
            self.previous(signum, frame)

    def _watch(self) -> None:
        while True:
            time.sleep(WATCH_INTERVAL)
            due = self.due
            if due and time.monotonic() >= due:
                signal.pthread_kill(self.main, signal.SIGALRM)  # type: ignore[arg-type]


_watchdog = _BlockWatchdog()


def _armed() -> bool:
    """Whether deadlines can be enforced here (the main thread, on a platform with pthread_kill)."""
    if not hasattr(signal, "pthread_kill") or threading.current_thread() is not threading.main_thread():
        return False
    if not _watchdog.started:
        _watchdog.start()
    return True


@contextmanager
def block_deadline(seconds: float | None) -> Iterator[None]:
    """Run the enclosed synchronous code (a hook, a metric) under the block deadline."""
    if not seconds or not _armed():
        yield
        return
    outer = _watchdog.due
    _watchdog.due, _watchdog.seconds = time.monotonic() + seconds, seconds
    try:
        yield
    finally:
        _watchdog.due = outer


class guarded(Awaitable[T]):  # noqa: N801 - used like a function: `await guarded(coro, seconds)`
    """Await `coro`, each stretch it runs without yielding to the event loop under a `seconds` deadline."""

    __slots__ = ("coro", "seconds")

    def __init__(self, coro: Coroutine[Any, Any, T], seconds: float | None):
        self.coro, self.seconds = coro, seconds

    def __await__(self) -> Generator[Any, Any, T]:
        coro, seconds = self.coro, self.seconds
        if not seconds or not _armed():
            return (yield from coro.__await__())
        value: Any = None
        error: BaseException | None = None
        while True:
            _watchdog.due, _watchdog.seconds = time.monotonic() + seconds, seconds
            try:
                yielded = coro.send(value) if error is None else coro.throw(error)
            except StopIteration as stop:
                return stop.value
            finally:
                _watchdog.due = 0.0
            try:
                value, error = (yield yielded), None
            except BaseException as exc:  # a cancellation (or anything thrown in) goes on to the coroutine
                value, error = None, exc


async def run_abandonable(coro: Coroutine[Any, Any, T], seconds: float | None) -> T:
    """`await coro` as its own task, at most `seconds` of wall-clock time (TrialDeadline after that).

    At the deadline the task is cancelled; a task that does not end within GRACE (plugin code that
    swallows the cancellation, or awaits in its cleanup) is abandoned and marked so the run's shutdown
    does not wait for it. A cancellation of the caller (Ctrl-C) cancels the task too."""
    task = asyncio.ensure_future(coro)
    if not seconds:
        return await task
    try:
        done, _ = await asyncio.wait({task}, timeout=seconds)
    except BaseException:
        task.cancel()
        raise
    if done:
        return task.result()
    task.cancel()
    await asyncio.wait({task}, timeout=GRACE)
    if not task.done():
        abandoned.add(task)
    else:
        task.exception() if not task.cancelled() else None  # retrieved: no "never retrieved" warning
    raise TrialDeadline(f"the trial ran past --trial-timeout {seconds:g} s and was stopped")


#: trial tasks that ignored their cancellation; the run's shutdown leaves them behind, and they stay
#: referenced so they are never finalised (which would run their plugin code once more)
abandoned: set[asyncio.Task[Any]] = set()

#: SIGINTs the run received (a KeyboardInterrupt raised while this is 0 came from plugin code)
interrupts = [0]


def is_interruption(exc: BaseException) -> bool:
    """Whether `exc`, caught around plugin code, is the run being interrupted (Ctrl-C, the run cancelled)
    rather than something the plugin raised itself."""
    if isinstance(exc, KeyboardInterrupt):
        return interrupts[0] > 0
    if isinstance(exc, asyncio.CancelledError):
        task = asyncio.current_task()
        return task is not None and task.cancelling() > 0
    return False


def interrupt_now(signum: int, frame: Any) -> None:
    """A SIGINT handler for plugin code that blocks on a person (`input()` in `tau play`): the Ctrl-C is
    the run's interrupt (counted, so containment does not take it for a KeyboardInterrupt the plugin
    raised itself) and is raised at once, since a blocking read never reaches the await where the run
    would be cancelled."""
    interrupts[0] += 1
    raise KeyboardInterrupt


def exit_despite_threads(code: Any) -> None:
    """End the process now when threads a plugin started (not daemons) would keep it alive after the
    command finished, or a trial was abandoned: exit handlers run (a managed model server is stopped), streams are flushed, then
    `os._exit`. Does nothing when only daemon threads are left."""
    import atexit
    import os
    import sys

    main = threading.main_thread()
    if not abandoned and not any(t.is_alive() and not t.daemon and t is not main for t in threading.enumerate()):
        return  # (an abandoned trial's coroutine would run its plugin code again when finalised at exit)
    status = code if isinstance(code, int) else (0 if code is None else 1)
    if code is not None and not isinstance(code, int):
        print(code, file=sys.stderr)
    try:
        atexit._run_exitfuncs()
    finally:
        for stream in (sys.stdout, sys.stderr):
            try:
                stream.flush()
            except Exception:  # noqa: BLE001, S110 - a closed pipe: nothing more to say
                pass
        os._exit(status)
