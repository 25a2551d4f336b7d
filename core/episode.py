"""The only agent <-> user <-> tools loop, registered as the trylast default of `tau_run_episode`.

An agent step is either tool calls (every call in the message runs, in order, against the
episode's own database state) or a message to the user, who answers. After every message the
`tau_check_termination` hook decides whether the episode ends; the core only enforces a hard
step backstop and the consecutive-tool-error limit. Agent and user failures become an `error`
result with the reason; they never escape into the run.

Agents and users are built with an `EpisodeView`, not the episode: a read-only copy of the task,
the tools' schemas, a read-only view of the episode's state, the rng, their typed options, a model
client, prompt sections, the user style and the end tokens. Nothing in it reaches the plugin
manager, the run or anything another trial shares (the database snapshot is frozen), so nothing an
agent or user does to what it was handed changes another trial.
"""

from __future__ import annotations

import json
import random
import time
import weakref
import zlib
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, TypeVar

from pydantic import BaseModel

from tau_emotion.core import hookimpl
from tau_emotion.core.limits import MAX_ERROR_TEXT, MAX_STORED_TEXT, argument_problem, finite_number, scrub, truncate
from tau_emotion.core.models import EpisodeResult, Message, Termination, Turn
from tau_emotion.core.procedure import apply_scoring
from tau_emotion.core.protocols import Agent, EndTokens, User, UserStyle
from tau_emotion.core.reward import score
from tau_emotion.core.state import FrozenDict, FrozenList, freeze
from tau_emotion.core.tools import TOOL_LOG

if TYPE_CHECKING:
    import pluggy

    from tau_emotion.core.domain import Domain
    from tau_emotion.core.models import ModelSettings, RunConfig, Task
    from tau_emotion.core.state import State, Table
    from tau_emotion.core.tools import Toolset

M = TypeVar("M", bound=BaseModel)


def stable_seed(*parts: Any) -> int:
    return zlib.crc32("\x1f".join(str(p) for p in parts).encode())


_frozen_classes: dict[type, type] = {}


def _frozen_class(cls: type[BaseModel]) -> type[BaseModel]:
    """`cls` with pydantic's `frozen` config (made once per class): setting a field raises."""
    found = _frozen_classes.get(cls)
    if found is None:
        config = {**cls.model_config, "frozen": True}
        found = _frozen_classes[cls] = type(cls.__name__, (cls,), {"__module__": cls.__module__, "model_config": config,
                                                                   "__doc__": cls.__doc__})
    return found


def frozen_copy(value: Any) -> Any:
    """A read-only deep copy of a task (pydantic models frozen, dicts and lists `FrozenDict`/`FrozenList`):
    `isinstance(copy, Task)` holds and reading costs what reading the task costs."""
    if isinstance(value, BaseModel):
        cls = _frozen_class(type(value))
        copied = cls.__new__(cls)
        object.__setattr__(copied, "__dict__", {k: frozen_copy(v) for k, v in value.__dict__.items()})
        object.__setattr__(copied, "__pydantic_extra__", None if value.__pydantic_extra__ is None
                           else frozen_copy(value.__pydantic_extra__))
        object.__setattr__(copied, "__pydantic_fields_set__", set(value.__pydantic_fields_set__))
        private = getattr(value, "__pydantic_private__", None)
        object.__setattr__(copied, "__pydantic_private__", None if private is None else dict(private))
        return copied
    if isinstance(value, (dict, list, tuple)):
        return freeze({k: frozen_copy(v) for k, v in value.items()} if isinstance(value, dict)
                      else [frozen_copy(v) for v in value])
    return value


#: domain -> task id -> (the task, its frozen copy): one read-only copy per task, shared by its trials
_frozen_tasks: weakref.WeakKeyDictionary[Any, dict[str, tuple[Any, Any]]] = weakref.WeakKeyDictionary()


def read_only_task(domain: Domain, task: Task) -> Task:
    """The frozen copy of `task` its trials' agents and users get, made once per task object."""
    tasks = _frozen_tasks.setdefault(domain, {})
    hit = tasks.get(task.id)
    if hit is None or hit[0] is not task:  # a task rewritten since (another run's blocks) gets its own copy
        hit = tasks[task.id] = (task, frozen_copy(task))
    return hit[1]


class ToolsView:
    """The tools an agent may call, read-only: schemas (frozen), names, what each does, and `call` on a
    state of the caller's own (`EpisodeView.scratch_state`); the loop runs the agent's calls itself."""

    __slots__ = ("_toolset", "_timeout", "schemas")

    def __init__(self, toolset: Toolset, timeout: float | None):
        self._toolset = toolset
        self._timeout = timeout
        self.schemas: list[dict[str, Any]] = frozen_schemas(toolset)

    def __contains__(self, name: object) -> bool:
        return name in self._toolset

    def __iter__(self) -> Iterator[str]:
        return iter(self._toolset.tools)

    def is_terminal(self, name: str) -> bool:
        return self._toolset.is_terminal(name)

    def writes(self, name: str) -> bool:
        return name in self._toolset and self._toolset[name].writes

    def call(self, state: State, name: str, arguments: Mapping[str, Any] | str) -> tuple[str, bool]:
        """Run one call on `state` (a `scratch_state()`): (result text, is_error), as the loop would."""
        return self._toolset.call(state, name, arguments, self._timeout)


_schemas: weakref.WeakKeyDictionary[Any, list[dict[str, Any]]] = weakref.WeakKeyDictionary()


def frozen_schemas(toolset: Toolset) -> list[dict[str, Any]]:
    """The toolset's JSON schemas, frozen and made once: every episode's agent sends the same (hashable) list."""
    found = _schemas.get(toolset)
    if found is None:
        found = _schemas[toolset] = freeze(toolset.schemas)
    return found


class StateView(Mapping[str, "TableView"]):
    """The episode's state, read-only: `view.state["users"].get("u1")` is a frozen row."""

    __slots__ = ("_state",)

    def __init__(self, state: State):
        self._state = state

    def __getitem__(self, name: str) -> TableView:
        return TableView(self._state[name])

    def __iter__(self) -> Iterator[str]:
        return iter(self._state)

    def __len__(self) -> int:
        return len(self._state)


class TableView(Mapping[str, Any]):
    """One table of a `StateView`: rows as the episode has them now, frozen (a snapshot row costs no copy)."""

    __slots__ = ("_table",)

    def __init__(self, table: Table):
        self._table = table

    def __getitem__(self, key: str) -> Any:
        if key not in self._table:
            raise KeyError(key)
        return self.get(key)

    def get(self, key: str, default: Any = None) -> Any:  # type: ignore[override]
        row = self._table.peek(key, default)
        return row if row is default or type(row) in (FrozenDict, FrozenList) else freeze(row)

    peek = get

    def __contains__(self, key: object) -> bool:
        return key in self._table

    def __iter__(self) -> Iterator[str]:
        return iter(self._table)

    def __len__(self) -> int:
        return len(self._table)


class DomainView:
    """What an agent or user may know of its domain: name, policy, refusal phrasings (frozen), the tools."""

    __slots__ = ("name", "policy", "refusal_reasons", "toolset", "__weakref__")

    def __init__(self, domain: Domain, timeout: float | None):
        self.name: str = domain.name
        self.policy: str = domain.policy
        self.refusal_reasons: Mapping[str, list[str]] = freeze(domain.refusal_reasons)
        self.toolset = ToolsView(domain.toolset, timeout)


_domain_views: weakref.WeakKeyDictionary[Any, dict[float | None, DomainView]] = weakref.WeakKeyDictionary()


def domain_view(domain: Domain, timeout: float | None) -> DomainView:
    views = _domain_views.setdefault(domain, {})
    if timeout not in views:
        views[timeout] = DomainView(domain, timeout)
    return views[timeout]


_end_tokens: weakref.WeakKeyDictionary[Any, EndTokens] = weakref.WeakKeyDictionary()


def end_tokens(pm: pluggy.PluginManager) -> EndTokens:
    """The loaded terminators' end tokens (`tau_register_end_tokens`), made once per catalog."""
    catalog = pm.catalog("end_tokens")
    found = _end_tokens.get(catalog)
    if found is None:
        found = _end_tokens[catalog] = EndTokens({name: entry.load() for name, entry in catalog.items()})
    return found


class EpisodeView:
    """What an agent or user is built with (`factory(view)`): a narrow handle on one trial.

    `task`, `domain` and `tools` are read-only (a frozen copy of the task, shared by its trials); `state` is a read-only view of
    the episode's state (for oracle-style agents and rule-following users); `messages` is the transcript
    so far (read it, do not change it). `options`, `model_client`, `prompt_sections`, `user_style`,
    `end_tokens` and `add_usage` are what agents and users ask of the run.
    """

    __slots__ = ("_episode", "task", "trial", "rng", "domain", "tools", "state", "end_tokens")

    def __init__(self, episode: Episode):
        self._episode = episode
        self.task: Task = read_only_task(episode.domain, episode.task)
        self.trial: int = episode.trial
        self.rng: random.Random = episode.rng
        self.domain = domain_view(episode.domain, episode.config.tool_timeout)
        self.tools: ToolsView = self.domain.toolset
        self.state = StateView(episode.state)
        self.end_tokens: EndTokens = episode.end_tokens

    @property
    def policy(self) -> str:
        return self.domain.policy

    @property
    def messages(self) -> list[Message]:
        return self._episode.messages

    @property
    def seed(self) -> int:
        return self._episode.config.seed

    def options(self, group: str, model: type[M]) -> M:
        """The run's options of plugin `group`, validated by `model` (a fresh object)."""
        return self._episode.config.options_for(group, model)

    def role_settings(self, role: str) -> ModelSettings:
        """The model settings of `role` ('agent', 'user', or one a plugin registered) for this run (`core.roles`)."""
        from tau_emotion.core.roles import role_settings

        return role_settings(self._episode.config, role)

    def model_client(self, settings: ModelSettings) -> Any:
        """A chat-model client for `settings` from the model-client catalog (see `PluginManager.model_client`)."""
        return self._episode.pm.model_client(settings, self._episode.config)

    def prompt_sections(self, prompt: str) -> list[str]:
        """What plugins add to a simulated user's system prompt `prompt` (`tau_user_prompt`)."""
        return self._episode.user_prompt_sections(prompt)

    def player_sections(self) -> list[str]:
        """What plugins show a person who plays the user (`tau_player_brief`): a feeling, a condition, in words."""
        return [s for s in self._episode.pm.hook.tau_player_brief(episode=self._episode) if s]

    def user_style(self, neutral: UserStyle) -> UserStyle:
        """The style a plugin gives this trial's user (`tau_user_style`), else `neutral`."""
        return self._episode.pm.hook.tau_user_style(episode=self._episode, neutral=neutral) or neutral

    def scratch_state(self) -> State:
        """A fresh state of the domain's snapshot, the caller's own (for what-if replays through `tools.call`)."""
        return self._episode.domain.database.state()

    def add_usage(self, usage: dict[str, float] | None) -> None:
        """Count a model call's usage (tokens, cost) made outside the agent's replies (a simulated user's)."""
        self._episode.add_usage(usage)


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
    #: what its tools printed (`core.tools.TOOL_LOG`), stored with the result
    log: list[str] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.state = self.domain.database.state()
        self.rng = random.Random(stable_seed(self.config.seed, self.task.id, self.trial))
        self.end_tokens = end_tokens(self.pm)

    def view(self) -> EpisodeView:
        """The narrow handle its agent and user are built with."""
        return EpisodeView(self)

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

        A simulated user keeps its view, which holds the episode, so a finished episode is a reference cycle
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
    TOOL_LOG.set(ep.log)  # the trial runs in a task of its own: this context is the trial's
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
        reward, parts = apply_scoring(ep.domain, ep.task, ep.messages, reward, parts, ep.config.scoring)
        success, status = reward == 1.0, "ok"
    return EpisodeResult(
        task_id=ep.task.id, domain=ep.domain.name, trial=ep.trial, reward=reward, success=success, status=status,
        termination=termination, parts=parts, messages=bounded(ep.messages), n_steps=ep.n_steps,
        n_tool_calls=ep.n_tool_calls, n_user_turns=ep.n_user_turns, usage=ep.usage,
        duration_s=round(time.perf_counter() - started, 4), tags=task_tags(ep.pm, ep.task),
        blocks=dict(ep.task.blocks), error=error, log=list(ep.log),
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
