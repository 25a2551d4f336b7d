"""The `tool_calling` agent: any chat model with tool calls, through the model-client catalog.

The system prompt is rendered from `templates/agent_system.j2` with the domain's policy. Pass
`--agent-model openai/NAME --agent-api-base http://host:port/v1` for any OpenAI-compatible
server (vLLM, llama.cpp, a hosted API). The model options are the `agent` role's (`core.roles`).
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any

from tau_emotion.core import hookimpl
from tau_emotion.core.episode import EpisodeView
from tau_emotion.core.models import Message, to_chat
from tau_emotion.core.roles import role_settings
from tau_emotion.core.state import freeze
from tau_emotion.plugins.model_calls import preflight
from tau_emotion.templates import render


@lru_cache(maxsize=64)
def system_message(domain: str, policy: str) -> dict[str, str]:
    """The system message of a domain, frozen and made once: every episode sends the same (hashable) object,
    so a client keeps one wire form of it for the whole run (as of the tools' schemas, `view.tools.schemas`)."""
    return freeze({"role": "system", "content": render("agent_system.j2", domain=domain, policy=policy)})


class ToolCallingAgent:
    def __init__(self, view: EpisodeView):
        self.client = view.model_client(view.role_settings("agent"))
        self.system = system_message(view.domain.name, view.policy)
        self.tools = view.tools.schemas
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
    """Check the agent model's client and endpoint before any trial starts (before the run is recorded as started)."""
    if run.config.agent == "tool_calling":
        settings = role_settings(run.config, "agent")
        run.pm.model_client(settings, run.config)  # a client that cannot be made (litellm not installed) stops the run here
        preflight(settings, run.config, "agent", run_id=run.run_id)
