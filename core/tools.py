"""The tool side of the environment: typed Python functions as agent tools.

`Toolset` turns typed functions into JSON schemas (docstring -> description) and validates
agent arguments with pydantic before calling the function; a bad call becomes an error
message for the agent, never an exception in the episode loop.

Tools run inline on the event loop (they are dictionary operations taking microseconds; a thread
or process hop per call would cost more than the call). Each call has a wall-clock deadline in
whatever thread runs it: a watchdog thread stops an overdue call with SIGALRM in the main thread
(which also ends a blocking sleep) and with an asynchronous exception in any other thread (a worker
thread, a Ray actor's event loop: a Python-level runaway stops at once, a blocking C call when it
returns), and the call becomes a tool error. A single C-level operation holding the GIL (a huge
`9**9**9**9`) cannot be interrupted by any signal or thread, so packs must bound such work
before doing it (the classic `calculate` checks the AST); see docs/architecture.md.
"""

from __future__ import annotations

import inspect
import io
import json
import re
import signal
import sys
import threading
import time
import weakref
from collections.abc import Callable, Mapping
from contextlib import nullcontext
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Any, get_type_hints

from pydantic import ConfigDict, Field, ValidationError, create_model

from tau_emotion.core.errors import DataError
from tau_emotion.core.limits import MAX_ARG_CHARS, MAX_ERROR_TEXT, argument_problem, control_problem, truncate
from tau_emotion.core.state import State


class ToolError(Exception):
    """Raised by a tool for a request it refuses; the message is returned to the agent."""


class ToolTimeout(BaseException):
    """Raised inside a tool call that ran past its deadline (a BaseException, so a tool's `except
    Exception` does not swallow it)."""


#: seconds one tool call may take before it is stopped and becomes a tool error (`--tool-timeout`)
TOOL_TIMEOUT = 10.0
#: how often the watchdog thread looks at the running calls (the deadline's resolution)
WATCH_INTERVAL = 0.02


class _Slot:
    """One thread's running tool call: its deadline (monotonic; 0 when none runs)."""

    __slots__ = ("due", "ident", "main", "fired", "lock", "__weakref__")

    def __init__(self) -> None:
        self.due = 0.0
        self.ident = threading.get_ident()
        self.main = threading.current_thread() is threading.main_thread()
        self.fired = False  # the watchdog raised ToolTimeout into this thread (off the main thread)
        self.lock = threading.Lock()


def _raise_in(ident: int, exc: type[BaseException] | None) -> None:
    """Raise `exc` in thread `ident` at its next bytecode (None: withdraw one not raised yet)."""
    import ctypes

    ctypes.pythonapi.PyThreadState_SetAsyncExc(ctypes.c_ulong(ident), ctypes.py_object(exc) if exc else None)


class _Watchdog:
    """Stops tool calls that run past their deadline, in any thread, at well under 1 us per call.

    A call writes its deadline into its thread's slot (no syscall). A daemon thread looks every
    WATCH_INTERVAL; for an overdue call in the main thread it sends SIGALRM there (`pthread_kill`),
    whose handler raises ToolTimeout between the tool's bytecodes (the signal also ends a blocking
    sleep); in any other thread (a worker thread, a Ray actor's event loop) it raises ToolTimeout
    there with `PyThreadState_SetAsyncExc`, which Python checks between bytecodes: a Python-level
    runaway stops at once, a blocking C call (a sleep, a socket read) when it returns.
    """

    def __init__(self) -> None:
        self.local = threading.local()
        self.slots: weakref.WeakSet[_Slot] = weakref.WeakSet()
        self.lock = threading.Lock()
        self.watching = False
        self.signal_installed = False
        self.previous: Any = None
        self.main_slot: _Slot | None = None

    def slot(self) -> _Slot:
        slot = _Slot()
        self.local.slot = slot
        with self.lock:
            self.slots.add(slot)
            if slot.main and hasattr(signal, "pthread_kill"):
                self.main_slot = slot
                self.previous = signal.signal(signal.SIGALRM, self._on_alarm)
                self.signal_installed = True
            if not self.watching:
                threading.Thread(target=self._watch, name="tau-tool-deadline", daemon=True).start()
                self.watching = True
        return slot

    def _on_alarm(self, signum: int, frame: Any) -> None:
        slot = self.main_slot
        if slot is not None and slot.due and time.monotonic() >= slot.due:
            slot.due = 0.0
            raise ToolTimeout
        if callable(self.previous):
            self.previous(signum, frame)

    def _watch(self) -> None:
        main = threading.main_thread().ident
        while True:
            time.sleep(WATCH_INTERVAL)
            now = time.monotonic()
            for slot in list(self.slots):
                due = slot.due
                if not due or now < due:
                    continue
                if slot.main:
                    if self.signal_installed:
                        signal.pthread_kill(main, signal.SIGALRM)  # a real signal also ends a blocking sleep
                    continue
                with slot.lock:  # the call cannot end (and clear its slot) between this check and the raise
                    if slot.due and time.monotonic() >= slot.due:
                        slot.due = 0.0
                        slot.fired = True
                        _raise_in(slot.ident, ToolTimeout)


_watchdog = _Watchdog()


def _settle(slot: _Slot, outer: float) -> bool:
    """End a call off the main thread: restore the outer deadline; True when the watchdog fired on it (a
    ToolTimeout it raised but Python has not delivered yet is withdrawn: the caller raises it now)."""
    with slot.lock:
        slot.due = outer
        fired, slot.fired = slot.fired, False
    if fired:
        _raise_in(slot.ident, None)
    return fired


def run_with_deadline(fn: Callable[..., Any], seconds: float | None, /, *args: Any, **kwargs: Any) -> Any:
    """`fn(*args, **kwargs)`, stopped with ToolTimeout after about `seconds` of wall-clock time, in any thread."""
    if not seconds:
        return fn(*args, **kwargs)
    try:
        slot = _watchdog.local.slot
    except AttributeError:
        slot = _watchdog.slot()
    outer = slot.due  # a tool that calls tools keeps its own deadline
    due = time.monotonic() + seconds
    if slot.main:
        slot.due = min(outer, due) if outer else due
        try:
            return fn(*args, **kwargs)
        finally:
            slot.due = outer
    if not outer:
        slot.fired = False
    slot.due = min(outer, due) if outer else due
    try:
        result = fn(*args, **kwargs)
    except ToolTimeout:
        _settle(slot, outer)
        raise
    except BaseException:
        if _settle(slot, outer):
            raise ToolTimeout from None
        raise
    if _settle(slot, outer):
        raise ToolTimeout
    return result


def find_row(state: State, table: str, key: Any, what: str, *, write: bool = False) -> dict:
    """Row `key` of `table` for a tool (a copy to change when `write`), or a ToolError "WHAT 'KEY' not found"."""
    rows = state[table]
    if not isinstance(key, str) or key not in rows:
        raise ToolError(f"{what} '{key}' not found")
    return rows[key] if write else rows.peek(key)


@dataclass(frozen=True)
class ToolInfo:
    writes: bool = False
    terminal: bool = False
    raw_text: frozenset[str] = frozenset()


def tool(fn: Callable | None = None, *, writes: bool = False, terminal: bool = False,
         raw_text: tuple[str, ...] | frozenset[str] = ()) -> Any:
    """Mark a domain function as a tool. `writes`: it changes the database; `terminal`: it ends the episode;
    `raw_text`: arguments whose text may hold control characters (refused everywhere else: a tool error)."""

    def mark(f: Callable) -> Callable:
        f.__tau_tool__ = ToolInfo(writes=writes, terminal=terminal, raw_text=frozenset(raw_text))  # type: ignore[attr-defined]
        return f

    return mark(fn) if fn is not None else mark


_PARAM_LINE = re.compile(r"^\s*(\w+)\s*(?:\([^)]*\))?\s*:\s*(.+)$")


def _parse_docstring(doc: str) -> tuple[str, dict[str, str]]:
    """Split a Google-style docstring into (description, {param: description})."""
    lines = inspect.cleandoc(doc or "").splitlines()
    desc: list[str] = []
    params: dict[str, str] = {}
    section = "desc"
    current: str | None = None
    for line in lines:
        stripped = line.strip()
        if stripped in ("Args:", "Arguments:", "Parameters:"):
            section, current = "args", None
            continue
        if stripped in ("Returns:", "Raises:", "Example:", "Examples:"):
            section = "other"
            continue
        if section == "desc":
            desc.append(stripped)
        elif section == "args":
            m = _PARAM_LINE.match(line)
            if m and not line.startswith(" " * 8):
                current = m.group(1)
                params[current] = m.group(2).strip()
            elif current and stripped:
                params[current] += " " + stripped
    return " ".join(x for x in desc if x).strip(), params


class Tool:
    """A typed function with its derived JSON schema and argument model."""

    #: arguments whose text may hold control characters (`@tool(raw_text=...)`); subclasses inherit none
    raw_text: frozenset[str] = frozenset()

    def __init__(self, fn: Callable, name: str | None = None):
        self.fn = fn
        self.name = name or fn.__name__
        info: ToolInfo = getattr(fn, "__tau_tool__", ToolInfo())
        self.writes = info.writes
        self.terminal = info.terminal
        self.raw_text = info.raw_text
        self.description, param_docs = _parse_docstring(fn.__doc__ or "")
        if not self.description:
            raise DataError(f"tool '{self.name}' has no docstring; its docstring is the description agents see")
        sig = inspect.signature(fn)
        hints = get_type_hints(fn)
        params = list(sig.parameters.values())
        if not params or params[0].name not in ("db", "state"):
            raise DataError(f"tool '{self.name}': the first parameter must be the database state ('db')")
        fields: dict[str, Any] = {}
        for p in params[1:]:
            annotation = hints.get(p.name, Any)
            default = ... if p.default is inspect.Parameter.empty else p.default
            fields[p.name] = (annotation, Field(default, description=param_docs.get(p.name)))
        self.model = create_model(
            f"{self.name}_args", __config__=ConfigDict(extra="forbid", strict=False), **fields
        )
        schema = self.model.model_json_schema()
        schema.pop("title", None)
        for prop in schema.get("properties", {}).values():
            prop.pop("title", None)
        schema.setdefault("required", [])
        self.parameters = schema
        self._plain = {p.name for p in params[1:]}

    @property
    def schema(self) -> dict[str, Any]:
        return {
            "type": "function",
            "function": {"name": self.name, "description": self.description, "parameters": self.parameters},
        }

    def validate(self, arguments: Mapping[str, Any]) -> dict[str, Any]:
        model = self.model.model_validate(arguments)
        return {k: getattr(model, k) for k in self._plain}

    def __call__(self, state: State, **kwargs: Any) -> Any:
        return self.fn(state, **kwargs)


def _format_validation_error(tool_name: str, exc: ValidationError) -> str:
    parts = []
    for err in exc.errors():
        loc = ".".join(str(x) for x in err.get("loc", ())) or "(arguments)"
        parts.append(f"{loc}: {err.get('msg')}")
    return f"Error: invalid arguments for {tool_name}: " + "; ".join(parts)


class Toolset:
    """The tools of a domain, by name."""

    def __init__(self, functions: list[Callable] | Mapping[str, Callable]):
        items = functions.items() if isinstance(functions, Mapping) else ((None, f) for f in functions)
        self.tools: dict[str, Tool] = {}
        for name, fn in items:
            t = fn if isinstance(fn, Tool) else Tool(fn, name)
            if t.name in self.tools:
                raise DataError(f"duplicate tool name '{t.name}'")
            self.tools[t.name] = t

    def __contains__(self, name: str) -> bool:
        return name in self.tools

    def __getitem__(self, name: str) -> Tool:
        return self.tools[name]

    @property
    def schemas(self) -> list[dict[str, Any]]:
        return [t.schema for t in self.tools.values()]

    def is_terminal(self, name: str) -> bool:
        t = self.tools.get(name)
        return bool(t and t.terminal)

    def call(self, state: State, name: str, arguments: Mapping[str, Any] | str,
             timeout: float | None = TOOL_TIMEOUT) -> tuple[str, bool]:
        """Execute one call; returns (result text, is_error). Never raises for agent mistakes.

        Arguments that nest too deep, are too large or hold a non-finite number are a tool error
        before any validation; error texts are bounded, so a huge bad argument is not echoed whole.
        A call running past `timeout` seconds is stopped (see `run_with_deadline`) and is a tool error.
        """
        text, is_error = self._call(state, name, arguments, timeout)
        return (truncate(text, MAX_ERROR_TEXT), True) if is_error else (text, False)

    def _call(self, state: State, name: str, arguments: Mapping[str, Any] | str,
              timeout: float | None) -> tuple[str, bool]:
        tool_ = self.tools.get(name)
        if tool_ is None:
            known = ", ".join(sorted(self.tools))
            return f"Error: unknown tool '{truncate(str(name), 100)}'. Available tools: {known}", True
        if isinstance(arguments, str):
            if len(arguments) > MAX_ARG_CHARS:
                return f"Error: arguments for {name} are larger than {MAX_ARG_CHARS} characters", True
            try:
                arguments = json.loads(arguments) if arguments.strip() else {}
            except json.JSONDecodeError as exc:
                return f"Error: arguments for {name} are not valid JSON ({exc.msg} at position {exc.pos})", True
            except RecursionError:
                return f"Error: arguments for {name} nest too deep", True
        if not isinstance(arguments, Mapping):
            return f"Error: arguments for {name} must be a JSON object", True
        problem = argument_problem(arguments) or control_problem(arguments, tool_.raw_text)
        if problem is not None:
            return f"Error: {problem} (tool {name})", True
        try:
            kwargs = tool_.validate(arguments)
        except ValidationError as exc:
            return _format_validation_error(name, exc), True
        # all or nothing: a call that raises (a refusal after a write, a crash, a timeout) leaves no partial write
        savepoint = state.atomic() if isinstance(state, State) else nullcontext()
        try:
            with savepoint:
                return render_result(_printing_into_log(name, run_with_deadline, tool_, timeout, state, **kwargs)), False
        except ToolTimeout:
            return f"Error: {name} took longer than {timeout:g} s and was stopped", True
        except ToolError as exc:
            return f"Error: {exc}", True
        except (KeyError, ValueError, TypeError, LookupError, ArithmeticError) as exc:
            return f"Error: {type(exc).__name__}: {exc}", True


#: the running trial's log (the episode sets it): what its tools print goes there, never to the CLI's stdout
#: (a `print` in a tool wrote into `tau run`'s output and a played conversation); None: the text is dropped
TOOL_LOG: ContextVar[list[str] | None] = ContextVar("tau_tool_log", default=None)
#: entries a trial's log keeps, and characters per entry
MAX_LOG_ENTRIES = 50


def _printing_into_log(name: str, call: Callable[..., Any], /, *args: Any, **kwargs: Any) -> Any:
    """`call(*args, **kwargs)` with `sys.stdout` and `sys.stderr` caught for its length (tools run inline on
    the loop's thread, so nothing else prints meanwhile); what was printed joins the trial's log."""
    buffer = io.StringIO()
    saved = sys.stdout, sys.stderr
    sys.stdout = sys.stderr = buffer
    try:
        return call(*args, **kwargs)
    finally:
        sys.stdout, sys.stderr = saved
        printed = buffer.getvalue()
        log = TOOL_LOG.get()
        if printed and log is not None and len(log) < MAX_LOG_ENTRIES:
            log.append(truncate(f"tool {name} printed: {printed.rstrip()}", MAX_ERROR_TEXT))


def render_result(result: Any) -> str:
    if isinstance(result, str):
        return result
    return json.dumps(result, ensure_ascii=False, default=str)
