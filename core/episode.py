"""The only agent <-> user <-> tools loop, registered as the trylast default of `tau_run_episode`.

An agent step is either tool calls (every call in the message runs, in order, against the
episode's own database state) or a message to the user, who answers. After every message the
`tau_check_termination` hook decides whether the episode ends; the core only enforces a hard
step backstop and the consecutive-tool-error limit. Agent and user failures become an `error`
result with the reason; they never escape into the run.

Agents and users are built with an `EpisodeView`, not the episode: a read-only copy of the task,
the tools' schemas, a read-only view of the episode's state, the rng, their typed options, a model
client, prompt sections, the user style and the end tokens. Nothing in it reaches the plugin
manager, the run, the live episode or anything another trial shares by attribute access (the database
snapshot is frozen, the handles refuse attribute changes), so nothing an agent or user does to what it
was handed changes another trial.

What is stored is what ran: every message an agent or user returns passes one check (`own_message`:
an agent speaks only as the assistant, a user only as the user; anything else ends the trial as an
error naming it, in `tau run`, `tau play` and the RL environment alike) and joins the transcript as the
loop's own frozen copy, so a plugin that keeps and later edits the object it returned changes nothing;
agents and users are handed the transcript as a tuple of those copies, so appending to or rewriting it
changes nothing either. Tool calls run with the copy's arguments.
"""

from __future__ import annotations

import json
import random
import time
import weakref
import zlib
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, NamedTuple, TypeVar

from pydantic import BaseModel, ConfigDict

from tau_emotion.core import hookimpl
from tau_emotion.core.limits import (
    MAX_ERROR_TEXT,
    MAX_STORED_TEXT,
    argument_problem,
    finite_number,
    finite_usage,
    scrub,
    truncate,
)
from tau_emotion.core.models import EpisodeResult, Message, Termination, ToolCall, Turn
from tau_emotion.core.procedure import apply_scoring
from tau_emotion.core.protocols import Agent, EndTokens, User, UserStyle
from tau_emotion.core.reward import score
from tau_emotion.core.state import FrozenDict, FrozenList, freeze, thaw
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
                                                                   "__doc__": cls.__doc__,
                                                                   "__setattr__": _refuse_change,
                                                                   "__delattr__": _refuse_change})
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


#: domain -> (purpose, task id) -> (the task, its frozen copy): one read-only copy per task and purpose
_frozen_tasks: weakref.WeakKeyDictionary[Any, dict[tuple[str, str], tuple[Any, Any]]] = weakref.WeakKeyDictionary()


def read_only_task(domain: Domain, task: Task, purpose: str = "view") -> Task:
    """The frozen copy of `task` its trials' agents and users get (`purpose` "view"), or the one the episode
    is scored against ("scoring": handed to no plugin), made once per task object."""
    tasks = _frozen_tasks.setdefault(domain, {})
    hit = tasks.get((purpose, task.id))
    if hit is None or hit[0] is not task:  # a task rewritten since (another run's blocks) gets its own copy
        hit = tasks[(purpose, task.id)] = (task, frozen_copy(task))
    return hit[1]


def _refuse_change(self: Any, name: str, value: Any = None) -> None:
    raise AttributeError(f"{type(self).__name__} is read-only: '{name}' cannot be set")


def _set(obj: Any, **values: Any) -> None:
    for name, value in values.items():
        object.__setattr__(obj, name, value)


class ToolsView:
    """The tools an agent may call, read-only: schemas (frozen), names, what each does, and `call` on a
    state of the caller's own (`EpisodeView.scratch_state`); the loop runs the agent's calls itself.

    It holds no toolset: only the names, what they do and a function that calls one, so no attribute of it
    leads to the domain's tools (which every trial runs)."""

    __slots__ = ("schemas", "_names", "_terminal", "_writes", "_call")
    __setattr__ = _refuse_change

    def __init__(self, toolset: Toolset, timeout: float | None):
        def call(state: State, name: str, arguments: Mapping[str, Any] | str) -> tuple[str, bool]:
            return toolset.call(state, name, arguments, timeout)

        _set(self, schemas=frozen_schemas(toolset), _names=tuple(toolset.tools), _call=call,
             _terminal=frozenset(n for n, t in toolset.tools.items() if t.terminal),
             _writes=frozenset(n for n, t in toolset.tools.items() if t.writes))

    def __contains__(self, name: object) -> bool:
        return name in self._names

    def __iter__(self) -> Iterator[str]:
        return iter(self._names)

    def is_terminal(self, name: str) -> bool:
        return name in self._terminal

    def writes(self, name: str) -> bool:
        return name in self._writes

    def call(self, state: State, name: str, arguments: Mapping[str, Any] | str) -> tuple[str, bool]:
        """Run one call on `state` (a `scratch_state()`): (result text, is_error), as the loop would."""
        return self._call(state, name, arguments)


_schemas: weakref.WeakKeyDictionary[Any, list[dict[str, Any]]] = weakref.WeakKeyDictionary()


def frozen_schemas(toolset: Toolset) -> list[dict[str, Any]]:
    """The toolset's JSON schemas, frozen and made once: every episode's agent sends the same (hashable) list."""
    found = _schemas.get(toolset)
    if found is None:
        found = _schemas[toolset] = freeze(toolset.schemas)
    return found


class StateView(Mapping[str, "TableView"]):
    """The episode's state, read-only: `view.state["users"].get("u1")` is a frozen row.

    It holds functions that read the state, not the state, and each gives only frozen rows or names, so no
    attribute of it (or of what it gives) reaches a row to change."""

    __slots__ = ("_table", "_names", "_count")
    __setattr__ = _refuse_change

    def __init__(self, state: State):
        def table(name: str) -> TableView:
            return TableView(state[name])

        _set(self, _table=table, _names=state.__iter__, _count=state.__len__)

    def __getitem__(self, name: str) -> TableView:
        return self._table(name)

    def __iter__(self) -> Iterator[str]:
        return self._names()

    def __len__(self) -> int:
        return self._count()


class TableView(Mapping[str, Any]):
    """One table of a `StateView`: rows as the episode has them now, frozen (a snapshot row costs no copy)."""

    __slots__ = ("_get", "_has", "_keys")
    __setattr__ = _refuse_change

    def __init__(self, table: Table):
        def get(key: str, default: Any) -> Any:
            row = table.peek(key, default)  # a row the episode changed is its own, live: handed out frozen
            return row if row is default or type(row) in (FrozenDict, FrozenList) else freeze(row)

        _set(self, _get=get, _has=table.__contains__, _keys=table.__iter__)

    def __getitem__(self, key: str) -> Any:
        if not self._has(key):
            raise KeyError(key)
        return self._get(key, None)

    def get(self, key: str, default: Any = None) -> Any:  # type: ignore[override]
        return self._get(key, default)

    peek = get

    def __contains__(self, key: object) -> bool:
        return self._has(key)

    def __iter__(self) -> Iterator[str]:
        return self._keys()

    def __len__(self) -> int:
        return sum(1 for _ in self._keys())


class DomainView:
    """What an agent or user may know of its domain: name, policy, refusal phrasings (frozen), the tools, and
    the procedure rules it declares (`core.procedure.ProcedureSpec`, a frozen copy; None without any).
    Shared by the trials of a domain and read-only: setting `policy` or `name` raises."""

    __slots__ = ("name", "policy", "refusal_reasons", "toolset", "procedure", "__weakref__")
    __setattr__ = _refuse_change

    def __init__(self, domain: Domain, timeout: float | None):
        spec = domain.procedure
        _set(self, name=domain.name, policy=domain.policy, refusal_reasons=freeze(domain.refusal_reasons),
             toolset=ToolsView(domain.toolset, timeout), procedure=None if spec is None else frozen_copy(spec))


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


class _ViewTokens(EndTokens):
    """A view's end tokens: the run's, in a mapping nothing can change."""

    __slots__ = ()
    __setattr__ = _refuse_change

    def __init__(self, tokens: EndTokens):
        object.__setattr__(self, "_tokens", MappingProxyType(dict(tokens)))


class Transcript(tuple):  # type: ignore[type-arg]
    """The transcript an agent or user is handed: a tuple of the loop's frozen messages. Read it; `list(t)`
    (or `t + [...]`, which gives a list) is a list of your own."""

    __slots__ = ()

    def __add__(self, other: Any) -> list[Message]:  # type: ignore[override]
        return [*self, *other]

    def __radd__(self, other: Any) -> list[Message]:
        return [*other, *self]


class _Seen:
    """What an episode's views show of its transcript; only the loop sets it (the stored transcript is the
    episode's own list, so nothing done to this changes what is stored or scored)."""

    __slots__ = ("messages",)
    __setattr__ = _refuse_change

    def __init__(self) -> None:
        _set(self, messages=Transcript())


class _Record(list):  # type: ignore[type-arg]
    """The episode's transcript (`episode.messages`): a list whose every change renews what the views show."""

    __slots__ = ("_seen",)

    def __init__(self, seen: _Seen, messages: Any = ()):
        super().__init__(messages)
        self._seen = seen
        self._show()

    def _show(self) -> None:
        object.__setattr__(self._seen, "messages", Transcript(self))


def _renewing(name: str) -> Callable[..., Any]:
    change = getattr(list, name)

    def method(self: _Record, *args: Any) -> Any:
        out = change(self, *args)
        self._show()
        return out

    method.__name__ = name
    return method


for _name in ("append", "extend", "insert", "pop", "remove", "clear", "sort", "reverse", "__setitem__",
              "__delitem__", "__iadd__", "__imul__"):
    setattr(_Record, _name, _renewing(_name))


class _Asks(NamedTuple):
    """What a view asks of its run, as functions: the run, its configuration and the plugin manager stay
    out of the view's attributes."""

    options: Callable[[str, type[Any]], Any]
    role_settings: Callable[[str], ModelSettings]
    model_client: Callable[[ModelSettings], Any]
    prompt_sections: Callable[[str], list[str]]
    user_style: Callable[[UserStyle], UserStyle]
    scratch_state: Callable[[], State]
    add_usage: Callable[[dict[str, float] | None], None]
    player_sections: Callable[[], list[str]]


def _asks_of(episode: Episode) -> _Asks:
    config, pm, database = episode.config, episode.pm, episode.domain.database

    def options(group: str, model: type[M]) -> M:
        return model.model_validate(thaw(config.options.get(group, {})))  # a fresh object, nothing shared

    def role_settings(role: str) -> ModelSettings:
        from tau_emotion.core.roles import role_settings

        return role_settings(config, role)

    def user_style(neutral: UserStyle) -> UserStyle:
        return pm.hook.tau_user_style(episode=episode, neutral=neutral) or neutral

    return _Asks(options=options, role_settings=role_settings,
                 model_client=lambda settings: pm.model_client(settings, config),
                 prompt_sections=episode.user_prompt_sections, user_style=user_style,
                 scratch_state=database.state, add_usage=episode.add_usage,
                 player_sections=lambda: [s for s in pm.hook.tau_player_brief(episode=episode) if s])


class EpisodeView:
    """What an agent or user is built with (`factory(view)`): a narrow, read-only handle on one trial.

    `task`, `domain` and `tools` are read-only (a frozen copy of the task, shared by its trials); `state` is a
    read-only view of the episode's state (for oracle-style agents and rule-following users); `messages` is
    the transcript so far, a tuple of frozen messages. `options`, `model_client`, `prompt_sections`,
    `user_style`, `end_tokens` and `add_usage` are what agents and users ask of the run. The agent and the
    user get a view each; neither holds the episode, and setting an attribute of a view raises.
    """

    __slots__ = ("task", "trial", "rng", "domain", "tools", "state", "end_tokens", "seed", "_seen", "_asks")
    __setattr__ = _refuse_change

    def __init__(self, episode: Episode):
        domain = domain_view(episode.domain, episode.config.tool_timeout)
        _set(self, task=read_only_task(episode.domain, episode.task), trial=episode.trial, rng=episode.rng,
             domain=domain, tools=domain.toolset, state=StateView(episode.state),
             end_tokens=_ViewTokens(episode.end_tokens), seed=episode.config.seed, _seen=episode.seen,
             _asks=_asks_of(episode))

    @property
    def policy(self) -> str:
        return self.domain.policy

    @property
    def messages(self) -> Transcript:
        return self._seen.messages

    def options(self, group: str, model: type[M]) -> M:
        """The run's options of plugin `group`, validated by `model` (a fresh object)."""
        return self._asks.options(group, model)

    def role_settings(self, role: str) -> ModelSettings:
        """The model settings of `role` ('agent', 'user', or one a plugin registered) for this run (`core.roles`)."""
        return self._asks.role_settings(role)

    def model_client(self, settings: ModelSettings) -> Any:
        """A chat-model client for `settings` from the model-client catalog (see `PluginManager.model_client`)."""
        return self._asks.model_client(settings)

    def prompt_sections(self, prompt: str) -> list[str]:
        """What plugins add to a simulated user's system prompt `prompt` (`tau_user_prompt`)."""
        return self._asks.prompt_sections(prompt)

    def player_sections(self) -> list[str]:
        """What plugins show a person who plays the user (`tau_player_brief`): a feeling, a condition, in words."""
        return self._asks.player_sections()

    def user_style(self, neutral: UserStyle) -> UserStyle:
        """The style a plugin gives this trial's user (`tau_user_style`), else `neutral`."""
        return self._asks.user_style(neutral)

    def scratch_state(self) -> State:
        """A fresh state of the domain's snapshot, the caller's own (for what-if replays through `tools.call`)."""
        return self._asks.scratch_state()

    def add_usage(self, usage: dict[str, float] | None) -> None:
        """Count a model call's usage (tokens, cost) made outside the agent's replies (a simulated user's)."""
        self._asks.add_usage(usage)


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
    #: what the views show of `messages` (a tuple the loop renews after every turn)
    seen: _Seen = field(default_factory=_Seen)

    def __post_init__(self) -> None:
        #: the runner's own copy of the task, made before any plugin saw this trial: the reward is scored against it
        self.scored_task = read_only_task(self.domain, self.task, "scoring")
        self.messages = _Record(self.seen, self.messages)
        self.state = self.domain.database.state()
        self.rng = random.Random(stable_seed(self.config.seed, self.task.id, self.trial))
        self.end_tokens = end_tokens(self.pm)

    def view(self) -> EpisodeView:
        """A narrow handle to build its agent or user with (each gets its own)."""
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

        A simulated user keeps its view, whose functions hold the episode, so a finished episode is a reference
        cycle that only a full garbage collection frees: with 256 episodes of 200 steps each, whole transcripts
        of one wave stayed alive through the next (~100 MB)."""
        for name in ("agent", "user", "state"):
            self.__dict__.pop(name, None)
        self.messages, self.turns = _Record(self.seen), []

    def user_prompt_sections(self, prompt: str) -> list[str]:
        return [s for s in self.pm.hook.tau_user_prompt(episode=self, prompt=prompt) if s]


class FrozenToolCall(ToolCall):
    """A tool call as the loop keeps it: setting a field raises, the arguments are frozen."""

    model_config = ConfigDict(frozen=True)


class FrozenMessage(Message):
    """A message as the loop keeps it (its own copy of what an agent or user returned): setting a field
    raises and the tool calls are `FrozenToolCall`s."""

    model_config = ConfigDict(frozen=True)


def _made(cls: type[M], fields: dict[str, Any], private: dict[str, Any] | None = None) -> M:
    """An instance of `cls` from complete, already checked fields, without pydantic's per-field default lookups
    (`model_construct` inspects `list`'s signature for every defaulted list field: most of a step's cost)."""
    made = cls.__new__(cls)
    object.__setattr__(made, "__dict__", fields)
    object.__setattr__(made, "__pydantic_fields_set__", set(fields))
    object.__setattr__(made, "__pydantic_extra__", None)
    object.__setattr__(made, "__pydantic_private__", private)
    return made


def frozen_message(role: str, content: str | None = None, tool_calls: Any = (), tool_call_id: str | None = None,
                   name: str | None = None, error: bool = False, usage: Any = None) -> FrozenMessage:
    """A `FrozenMessage` the loop makes (fields as checked by `own_message` or made by the loop itself)."""
    return _made(FrozenMessage, {"role": role, "content": content, "tool_calls": FrozenList(tool_calls),
                                 "tool_call_id": tool_call_id, "name": name, "error": error, "usage": usage},
                 {"_chat": None})


class SpeakerError(Exception):
    """An agent or user returned what it may not say: another role's message, or not a message at all."""


#: who may say what: the role a plugin's messages must have
SPEAKS_AS = {"agent": "assistant", "user": "user"}


def _text(value: Any, what: str, who: str) -> str:
    """`value` as a plain `str` (a subclass's methods could answer differently later), else a SpeakerError."""
    if not isinstance(value, str):
        raise SpeakerError(f"the {who}'s message has {what} of type {type(value).__name__}, not text")
    return value if type(value) is str else "".join((value,))


def _frozen_arguments(arguments: Any) -> tuple[Any, Any]:
    """(what the loop keeps, what it runs) for a call's arguments: a frozen copy of a JSON object, the text
    of raw arguments; what cannot be run (too deep, too large, not an object) runs as given, a tool error."""
    if isinstance(arguments, str):
        text = "".join((arguments,))
        return text, text
    if isinstance(arguments, Mapping):
        plain = dict(arguments)
        if all(type(k) is str for k in plain) and argument_problem(plain) is None:
            try:
                kept = freeze(plain)
            except RecursionError:  # it changed under us between the check and the copy
                return "<arguments that cannot be stored>", "<arguments that cannot be stored>"
            return kept, thaw(kept)
    return arguments, arguments


def own_message(message: Any, who: str) -> tuple[Message, list[Any]]:
    """The one check of what an agent or user returns, and the loop's own frozen copy of it.

    An agent speaks only as the assistant and a user only as the user: another role, a user's tool call or
    something that is not a `Message` is a `SpeakerError` naming it (the trial ends as an error, in `tau run`,
    `tau play` and the environment alike). Returns the copy and, per tool call, the arguments to run."""
    role = SPEAKS_AS[who]
    if not isinstance(message, Message):
        raise SpeakerError(f"the {who} returned {type(message).__name__}, not a Message")
    said = message.role
    if type(said) is not str or said != role:
        shown = truncate(ascii(said) if not isinstance(said, str) else repr("".join((said,))), 60)
        raise SpeakerError(f"the {who} sent a message of role {shown}; the {who} speaks only as the {role}")
    content = None if message.content is None else _text(message.content, "content", who)
    calls, runs = [], []
    for call in list(message.tool_calls or ()):
        if who != "agent":
            raise SpeakerError(f"the {who} sent a tool call: only the agent calls tools")
        if not isinstance(call, ToolCall):
            raise SpeakerError(f"the {who}'s tool call is a {type(call).__name__}, not a ToolCall")
        kept, run = _frozen_arguments(call.arguments)
        calls.append(_made(FrozenToolCall, {"id": _text(call.id, "a tool-call id", who),
                                            "name": _text(call.name, "a tool name", who), "arguments": kept}))
        runs.append(run)
    usage = None if message.usage is None else freeze(finite_usage(message.usage))
    return frozen_message(role, content, calls, usage=usage), runs


def _check(ep: Episode, message: Message) -> Termination | None:
    return ep.pm.hook.tau_check_termination(episode=ep, message=message)


def _add_turn(ep: Episode, actor: str, messages: list[Message]) -> Termination | None:
    ep.messages.extend(messages)  # and the views' transcript with it
    turn = Turn(index=len(ep.turns), actor=actor, messages=messages)  # type: ignore[arg-type]
    ep.turns.append(turn)
    ep.pm.hook.tau_turn_end(episode=ep, turn=turn)
    for message in messages:
        ended = _check(ep, message)
        if ended is not None:
            return ended
    return None


def execute_tool_calls(ep: Episode, message: Message, runs: list[Any]) -> tuple[Message, list[Message]]:
    """Run the calls of the loop's copy `message` (with `runs`, their arguments to run); the message as kept
    (a refused call's arguments bounded for storing) and the results."""
    results, calls, bounded_any = [], [], False
    for call, arguments in zip(message.tool_calls, runs, strict=True):
        text, is_error = ep.toolset.call(ep.state, call.name, arguments, ep.config.tool_timeout)
        if is_error:  # what the agent sent may be huge or nest too deep to store: keep a bounded copy
            kept = bounded_arguments(call.arguments)
            if kept is not call.arguments:
                call, bounded_any = call.model_copy(update={"arguments": freeze(kept)}), True
        calls.append(call)
        ep.n_tool_calls += 1
        ep.consecutive_tool_errors = ep.consecutive_tool_errors + 1 if is_error else 0
        results.append(frozen_message("tool", text, tool_call_id=call.id, name=call.name, error=is_error))
    if bounded_any:
        message = message.model_copy(update={"tool_calls": FrozenList(calls)})
    return message, results


def bounded_arguments(arguments: Any) -> dict[str, Any] | str:
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
    opening, _ = own_message(await ep.user.start(), "user")
    ep.n_user_turns += 1
    ended = _add_turn(ep, "user", [opening])
    while ended is None:
        message, runs = own_message(await ep.agent.act(ep.seen.messages), "agent")
        ep.n_steps += 1
        ep.add_usage(message.usage)
        if message.tool_calls:
            message, results = execute_tool_calls(ep, message, runs)
            ended = _add_turn(ep, "agent", [message, *results])
            if ended is None and ep.consecutive_tool_errors >= ep.config.max_tool_errors:
                ended = Termination(reason="too_many_tool_errors",
                                    detail=f"{ep.consecutive_tool_errors} consecutive tool errors")
        else:
            ended = _add_turn(ep, "agent", [message])
            if ended is None:
                reply, _ = own_message(await ep.user.respond(message), "user")
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
        reward, parts = score(ep.domain, ep.scored_task, ep.state, ep.messages, termination)
        reward, parts = apply_scoring(ep.domain, ep.scored_task, ep.messages, reward, parts, ep.config.scoring)
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
