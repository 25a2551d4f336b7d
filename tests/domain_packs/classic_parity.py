"""Their own env next to ours, for the classic parity tests and `benchmarks/replay_vs_classic.py`.

`native_env` builds their env class for a split, and `native_reward` plays a trajectory in it and
returns their `calculate_reward` (their `Env.reset`, `Env.step` and reward, unchanged). Their user
is silent: their user module, which imports litellm and builds OpenAI clients at import (~3 s, and
it wants OPENAI_API_KEY), is replaced by a stand-in while their env module imports, and their package
`__init__`s are skipped as in the adapter. So their env needs no key and calls no model.
"""

from __future__ import annotations

import copy
import enum
import importlib
import inspect
import sys
import types
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from typing import Any

from tau_emotion.core.models import Message, Task, Termination
from tau_emotion.core.reward import score
from tau_emotion.domain_packs.classic import ClassicPlugin
from tau_emotion.domain_packs.classic.source import NO_EMOTION_SPLIT

RESPOND = "respond"  # their pseudo-tool for "say this to the user"
STOP = Termination(reason="user_stop")


class SilentUser:
    """Their user simulator's interface, saying nothing, so their env never calls a model."""

    def reset(self, instruction: str | None = None) -> str:
        return ""

    def step(self, content: str) -> str:
        return ""

    def get_total_cost(self) -> float:
        return 0.0


class UserStrategy(enum.Enum):
    """Their `envs.user.UserStrategy`, which their env modules use for a default argument."""

    HUMAN = "human"
    LLM = "llm"
    REACT = "react"
    VERIFY = "verify"
    REFLECTION = "reflection"


@contextmanager
def _silent_user_module(package: str) -> Iterator[None]:
    """`<package>.envs.user` as a stand-in whose `load_user` gives a SilentUser, while their env imports."""
    name = f"{package}.envs.user"
    if name in sys.modules:  # theirs, or a stand-in, is loaded already
        yield
        return
    stand_in = types.ModuleType(name, "Stand-in for their user module: a silent user, no model library.")
    stand_in.UserStrategy = UserStrategy  # type: ignore[attr-defined]
    stand_in.load_user = lambda *args, **kwargs: SilentUser()  # type: ignore[attr-defined]
    sys.modules[name] = stand_in
    try:
        yield
    finally:
        if sys.modules.get(name) is stand_in:
            del sys.modules[name]


def native_env(plugin: ClassicPlugin, split: str = "test") -> Any:
    """Their env class for `split`, with a silent user."""
    env_module = plugin.env
    source = env_module.source
    with env_module.light(), _silent_user_module(env_module.package):
        cls = getattr(importlib.import_module(source.module), source.class_name)
        kwargs: dict[str, Any] = {"user_strategy": "human", "user_model": "none", "task_split": split}
        parameters = inspect.signature(cls).parameters
        if "task_index" in parameters:
            kwargs["task_index"] = 0
        if "emotion_enabled" in parameters:  # τ-Emotion-Bench: `test-no-emotion` is `test` without emotion
            base = split.removesuffix(NO_EMOTION_SPLIT)
            kwargs.update(task_split=base, emotion_enabled=base == split)
        for _ in range(100):  # without task_index, old versions pick randint(0, len(tasks)), one past the end
            try:
                env = cls(**kwargs)  # inside: their __init__ imports the split's tasks
                break
            except IndexError:
                continue
        else:
            raise RuntimeError(f"{source.module}.{source.class_name}: could not be constructed")
    env.user = SilentUser()  # also when their real user module was imported first
    return env


def native_action(plugin: ClassicPlugin, name: str, kwargs: dict[str, Any]) -> Any:
    with plugin.env.light():
        action = importlib.import_module(f"{plugin.env.package}.types").Action
    return action(name=name, kwargs=copy.deepcopy(kwargs))  # their tools may keep argument lists in rows


def native_reward(plugin: ClassicPlugin, env: Any, task_index: int, calls: Iterable[tuple[str, dict[str, Any]]],
                  said: Iterable[str] = ()) -> float:
    """Their `calculate_reward` for a trajectory: the agent says `said`, then makes `calls`, in their env.

    A terminal call ends their episode and scores it there, as in their `Env.step`.
    """
    env.reset(task_index=task_index)
    for content in said:
        env.step(native_action(plugin, RESPOND, {"content": content}))
    for name, kwargs in calls:
        response = env.step(native_action(plugin, name, kwargs))
        if response.done:
            return float(response.reward)
    return float(env.calculate_reward().reward)


def their_gold_trajectory(raw: Any) -> tuple[list[tuple[str, dict[str, Any]]], list[str]]:
    """Their task record as an agent would play it: tell the outputs, make every gold call (unknown ones too)."""
    said = ["; ".join(raw.outputs)] if raw.outputs else []
    return [(a.name, a.kwargs) for a in raw.actions], said


def our_reward(domain: Any, task: Task, calls: Iterable[tuple[str, dict[str, Any]]], said: Iterable[str]) -> float:
    """Our reward for the same trajectory: calls on a fresh state (stopping at a terminal tool, as the stop plugin does)."""
    state = domain.database.state()
    messages = [Message(role="assistant", content=text) for text in said]
    for name, arguments in calls:
        text, is_error = domain.toolset.call(state, name, arguments)
        messages.append(Message(role="tool", name=name, content=text, error=is_error))
        if not is_error and domain.toolset.is_terminal(name):
            break
    return score(domain, task, state, messages, STOP)[0]
