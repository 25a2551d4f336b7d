"""The caller as the agent: an `env` agent whose `act()` hands the transcript out and awaits the action.

The episode itself runs unchanged in the runner's `run_one` (the core loop, the user, the termination
hooks, the scorer); this module only adds the agent it asks for and one termination rule. Each
episode finds its `Channel` through a context variable set when its task is created, so many
episodes can share one plugin manager and one event loop.
"""

from __future__ import annotations

import asyncio
from contextvars import ContextVar
from typing import Any

from tau_emotion.core import hookimpl
from tau_emotion.core.errors import TauError
from tau_emotion.core.models import Message, Termination

#: the agent name the environment's runs use
AGENT = "env"
#: the reason of an episode the caller cut (`truncate()`); scored like any other ending
CUT = "truncated"

CHANNEL: ContextVar[Channel | None] = ContextVar("tau_env_channel", default=None)


class EnvError(TauError):
    """The environment was used wrongly (a step before reset, a malformed action); one line says how."""


class Channel:
    """One episode's meeting point: `turn` resolves with the transcript when the agent must act; the
    caller answers by resolving `action`. `cut` asks the episode to end at the next agent message."""

    def __init__(self) -> None:
        self.loop = asyncio.get_running_loop()
        self.turn: asyncio.Future[list[Message]] = self.loop.create_future()
        self.action: asyncio.Future[Message] | None = None
        self.cut = False

    async def act(self, messages: list[Message]) -> Message:
        self.action = self.loop.create_future()
        if not self.turn.done():
            self.turn.set_result(messages)
        return await self.action

    def answer(self, message: Message) -> None:
        """Give the waiting agent its action and open the next turn."""
        if self.action is None or self.action.done():
            raise EnvError("the episode is not waiting for an action: call reset() first")
        action, self.turn = self.action, self.loop.create_future()
        action.set_result(message)


class BridgeAgent:
    """The `env` agent: each step is the action the environment's caller passes to `step()`."""

    def __init__(self, episode: Any):  # the episode's view is not needed: the caller sees the observations
        channel = CHANNEL.get()
        if channel is None:
            raise EnvError(f"agent '{AGENT}' is played by the caller of tau_emotion.core.env, not by `tau run`")
        self.channel = channel

    async def act(self, messages: list[Message]) -> Message:
        return await self.channel.act(messages)


class EnvHooks:
    """Registered by the environment into its own plugin manager (never an entry point)."""

    @hookimpl
    def tau_register_agents(self, register: Any) -> None:
        register(AGENT, BridgeAgent)

    @hookimpl
    def tau_check_termination(self, episode: Any, message: Message) -> Termination | None:
        channel = CHANNEL.get()
        if channel is not None and channel.cut and message.role == "assistant":
            return Termination(reason=CUT, by="env", detail="cut by the environment's caller")
        return None
