"""The `tool_calling` agent: any chat model with tool calls, through the model-client catalog.

The system prompt is rendered from `templates/agent_system.j2` with the domain's policy. Pass
`--agent-model openai/NAME --agent-api-base http://host:port/v1` for any OpenAI-compatible
server (vLLM, llama.cpp, a hosted API). The model options are the `agent` role's (`core.roles`).
"""

from __future__ import annotations

import weakref
from typing import Any

from tau_emotion.core import hookimpl
from tau_emotion.core.episode import Episode
from tau_emotion.core.models import Message, to_chat
from tau_emotion.core.roles import role_settings
from tau_emotion.plugins.model_calls import preflight
from tau_emotion.templates import render

#: domain -> (its name, its policy, the system message), toolset -> its schemas: the same objects for every
#: episode of a domain, so a client keeps one wire form of them for the whole run
_systems: weakref.WeakKeyDictionary[Any, tuple[str, str, dict[str, str]]] = weakref.WeakKeyDictionary()
_schemas: weakref.WeakKeyDictionary[Any, list[dict[str, Any]]] = weakref.WeakKeyDictionary()


def system_message(episode: Episode) -> dict[str, str]:
    domain, policy = episode.domain, episode.policy
    hit = _systems.get(domain)
    if hit is None or hit[0] != domain.name or hit[1] != policy:
        content = render("agent_system.j2", domain=domain.name, policy=policy)
        hit = _systems[domain] = (domain.name, policy, {"role": "system", "content": content})
    return hit[2]


def tool_schemas(episode: Episode) -> list[dict[str, Any]]:
    toolset = episode.toolset
    if toolset not in _schemas:
        _schemas[toolset] = toolset.schemas
    return _schemas[toolset]


class ToolCallingAgent:
    def __init__(self, episode: Episode):
        settings = role_settings(episode.config, "agent")
        self.client = episode.pm.model_client(settings, episode.config)
        self.system = system_message(episode)
        self.tools = tool_schemas(episode)
        #: the chat dicts of the transcript so far: a step converts only the messages added since the last
        self.history: list[dict[str, Any]] = []
        self._last: Message | None = None

    async def act(self, messages: list[Message]) -> Message:
        # the same system dict and the same chat dicts each step: a client may keep their wire form
        seen = len(self.history)
        if len(messages) < seen or (seen and messages[seen - 1] is not self._last):  # not the transcript we had
            self.history, seen = [], 0
        self.history += to_chat(messages[seen:])
        self._last = messages[-1] if messages else None
        return await self.client.complete([self.system, *self.history], self.tools)


@hookimpl
def tau_register_agents(register):
    register("tool_calling", ToolCallingAgent)


@hookimpl(tryfirst=True)
def tau_run_start(run):
    """Check the agent model's endpoint before any trial starts (before the run is recorded as started)."""
    if run.config.agent == "tool_calling":
        preflight(role_settings(run.config, "agent"), run.config, "agent")
