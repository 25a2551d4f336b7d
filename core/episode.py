"""The only agent <-> user <-> tools loop, registered as the trylast default of `tau_run_episode`.

An agent step is either tool calls (every call in the message runs, in order, against the
episode's own database state) or a message to the user, who answers. After every message the
`tau_check_termination` hook decides whether the episode ends; the core only enforces a hard
step backstop and the consecutive-tool-error limit. Agent and user failures become an `error`
result with the reason; they never escape into the run.
"""

from __future__ import annotations

import json
import random
import time
import zlib
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

from tau_emotion.core import hookimpl
from tau_emotion.core.limits import MAX_ERROR_TEXT, MAX_STORED_TEXT, argument_problem, finite_number, scrub, truncate
from tau_emotion.core.models import EpisodeResult, Message, Termination, Turn
from tau_emotion.core.reward import score

if TYPE_CHECKING:
    import pluggy

    from tau_emotion.core.domain import Domain
    from tau_emotion.core.models import RunConfig, Task
    from tau_emotion.core.state import State
    from tau_emotion.core.tools import Toolset


class Agent(Protocol):
    async def act(self, messages: list[Message]) -> Message:
        """Return the next assistant message (tool calls, or content for the user)."""
        ...


class User(Protocol):
    async def start(self) -> Message:
        """The user's opening message."""
        ...

    async def respond(self, message: Message) -> Message:
        """The user's answer to an agent message."""
        ...


def stable_seed(*parts: Any) -> int:
    return zlib.crc32("\x1f".join(str(p) for p in parts).encode())


@dataclass
class Episode:
    """One task x trial: the objects and the transcript that hooks see."""

    task: Task
    domain: Domain
    trial: int
    config: RunConfig
    pm: pluggy.PluginManager
    state: State = field(init=False)
    agent: Agent = field(init=False)
    user: User = field(init=False)
    run: Any = None
    messages: list[Message] = field(default_factory=list)
    turns: list[Turn] = field(default_factory=list)
    n_steps: int = 0
    n_tool_calls: int = 0
    n_user_turns: int = 0
    consecutive_tool_errors: int = 0
    usage: dict[str, float] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.state = self.domain.database.state()
        self.rng = random.Random(stable_seed(self.config.seed, self.task.id, self.trial))

    @property
    def toolset(self) -> Toolset:
        return self.domain.toolset

    @property
    def policy(self) -> str:
        return self.domain.policy

    def add_usage(self, usage: dict[str, float] | None) -> None:
        for key, value in (usage or {}).items():
            self.usage[key] = self.usage.get(key, 0.0) + (finite_number(value) or 0.0)  # NaN, 1e400, "n/a": 0

    def release(self) -> None:
        """Drop what a finished episode holds (agent, user, transcript, state) once its result is made.

        A simulated user keeps its episode (`self.episode`), so a finished episode is a reference cycle
        that only a full garbage collection frees: with 256 episodes of 200 steps each, whole transcripts
        of one wave stayed alive through the next (~100 MB)."""
        for name in ("agent", "user", "state"):
            self.__dict__.pop(name, None)
        self.messages, self.turns = [], []

    def user_prompt_sections(self, prompt: str) -> list[str]:
        return [s for s in self.pm.hook.tau_user_prompt(episode=self, prompt=prompt) if s]


def _check(ep: Episode, message: Message) -> Termination | None:
    return ep.pm.hook.tau_check_termination(episode=ep, message=message)


def _add_turn(ep: Episode, actor: str, messages: list[Message]) -> Termination | None:
    ep.messages.extend(messages)
    turn = Turn(index=len(ep.turns), actor=actor, messages=messages)  # type: ignore[arg-type]
    ep.turns.append(turn)
    ep.pm.hook.tau_turn_end(episode=ep, turn=turn)
    for message in messages:
        ended = _check(ep, message)
        if ended is not None:
            return ended
    return None


def execute_tool_calls(ep: Episode, message: Message) -> list[Message]:
    results = []
    for call in message.tool_calls:
        text, is_error = ep.toolset.call(ep.state, call.name, call.arguments, ep.config.tool_timeout)
        if is_error:  # what the agent sent may be huge or nest too deep to store: keep a bounded copy
            call.arguments = bounded_arguments(call.arguments)
        ep.n_tool_calls += 1
        ep.consecutive_tool_errors = ep.consecutive_tool_errors + 1 if is_error else 0
        results.append(Message(role="tool", content=text, tool_call_id=call.id, name=call.name, error=is_error))
    return results


def bounded_arguments(arguments: dict[str, Any] | str) -> dict[str, Any] | str:
    """Arguments of a refused call as stored: unchanged when small and storable, else a truncated text."""
    if isinstance(arguments, str):
        return truncate(arguments, MAX_ERROR_TEXT)
    if isinstance(arguments, dict) and all(isinstance(k, str) for k in arguments) and argument_problem(arguments) is None:
        return arguments
    try:
        text = json.dumps(arguments, default=str)
    except (ValueError, TypeError, RecursionError):
        text = "<arguments that cannot be stored>"
    return truncate(text, MAX_ERROR_TEXT)


def bounded(messages: list[Message]) -> list[Message]:
    """The transcript as stored: every text longer than MAX_STORED_TEXT cut with a marker."""
    out = []
    for m in messages:
        if m.content is not None and len(m.content) > MAX_STORED_TEXT:
            m = m.model_copy(update={"content": truncate(m.content, MAX_STORED_TEXT)})
        out.append(m)
    return out


async def run_loop(ep: Episode) -> Termination:
    backstop = max(ep.config.max_steps, 1) * 4 + 10
    opening = await ep.user.start()
    ep.n_user_turns += 1
    ended = _add_turn(ep, "user", [opening])
    while ended is None:
        message = await ep.agent.act(ep.messages)
        ep.n_steps += 1
        ep.add_usage(message.usage)
        if message.tool_calls:
            ended = _add_turn(ep, "agent", [message, *execute_tool_calls(ep, message)])
            if ended is None and ep.consecutive_tool_errors >= ep.config.max_tool_errors:
                ended = Termination(reason="too_many_tool_errors",
                                    detail=f"{ep.consecutive_tool_errors} consecutive tool errors")
        else:
            ended = _add_turn(ep, "agent", [message])
            if ended is None:
                reply = await ep.user.respond(message)
                ep.n_user_turns += 1
                ended = _add_turn(ep, "user", [reply])
        if ended is None and ep.n_steps >= backstop:
            ended = Termination(reason="max_steps", detail=f"core backstop at {backstop} steps")
    return ended


def task_tags(pm: pluggy.PluginManager, task: Task) -> dict[str, str]:
    tags: dict[str, str] = {}
    for found in pm.hook.tau_task_tags(task=task):
        tags.update({str(k): str(v) for k, v in (found or {}).items()})
    return tags


def result_of(ep: Episode, termination: Termination, started: float, error: str | None = None) -> EpisodeResult:
    if error is not None:
        reward, parts, success, status = 0.0, None, False, "error"
    else:
        reward, parts = score(ep.domain, ep.task, ep.state, ep.messages, termination)
        success, status = reward == 1.0, "ok"
    return EpisodeResult(
        task_id=ep.task.id, domain=ep.domain.name, trial=ep.trial, reward=reward, success=success, status=status,
        termination=termination, parts=parts, messages=bounded(ep.messages), n_steps=ep.n_steps,
        n_tool_calls=ep.n_tool_calls, n_user_turns=ep.n_user_turns, usage=ep.usage,
        duration_s=round(time.perf_counter() - started, 4), tags=task_tags(ep.pm, ep.task),
        blocks=dict(ep.task.blocks), error=error,
    )


@hookimpl(trylast=True)
async def tau_run_episode(episode: Episode) -> EpisodeResult:
    started = time.perf_counter()
    try:
        termination = await run_loop(episode)
        return result_of(episode, termination, started)  # scoring too: a scoring failure is this trial's error
    except Exception as exc:  # a failing model server or plugin ends this trial, not the run
        reason = truncate(scrub(f"{type(exc).__name__}: {exc}"), MAX_ERROR_TEXT)
        return result_of(episode, Termination(reason="error", detail=reason), started, error=reason)
