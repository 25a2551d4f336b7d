"""The `tool_calling` agent: any chat model with tool calls, through the model-client catalog.

The system prompt is rendered from `templates/agent_system.j2` with the domain's policy. Pass
`--agent-model openai/NAME --agent-api-base http://host:port/v1` for any OpenAI-compatible
server (vLLM, llama.cpp, a hosted API). The options belong to this plugin.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any

from pydantic import BaseModel, Field, field_validator

from tau_emotion.core import hookimpl
from tau_emotion.core.episode import EpisodeView
from tau_emotion.core.models import Message, ModelSettings, to_chat
from tau_emotion.core.state import freeze
from tau_emotion.plugins.model_calls import parse_json_object, preflight
from tau_emotion.templates import render


class AgentOptions(BaseModel):
    agent_model: str | None = Field(None, description="Model name for the agent, e.g. openai/Qwen3-8B.")
    agent_api_base: str | None = Field(None, description="OpenAI-compatible endpoint for the agent model.")
    agent_api_key: str | None = Field(None, description="Key for the agent endpoint (default: TAU_API_KEY).")
    agent_temperature: float = Field(0.0, ge=0, le=2, description="Sampling temperature of the agent model.")
    agent_client: str | None = Field(None, description="Model client plugin for the agent (default: the default client).")
    agent_args: dict[str, Any] = Field(default_factory=dict, description="JSON object of extra request arguments "
                                      "for the agent model, e.g. '{\"max_tokens\": 512, \"extra_body\": {...}}'.")

    _parse_args = field_validator("agent_args", mode="before")(parse_json_object)

    def settings(self) -> ModelSettings:
        return ModelSettings.for_role("agent", self.agent_model, self.agent_api_base, self.agent_api_key,
                                      self.agent_temperature, self.agent_client,
                                      self.agent_args)


@lru_cache(maxsize=64)
def system_message(domain: str, policy: str) -> dict[str, str]:
    """The system message of a domain, frozen and made once: every episode sends the same (hashable) object,
    so a client keeps one wire form of it for the whole run (as of the tools' schemas, `view.tools.schemas`)."""
    return freeze({"role": "system", "content": render("agent_system.j2", domain=domain, policy=policy)})


class ToolCallingAgent:
    def __init__(self, view: EpisodeView):
        self.client = view.model_client(view.options("tool_calling", AgentOptions).settings())
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
    """Check the agent model's endpoint before any trial starts (before the run is recorded as started)."""
    if run.config.agent == "tool_calling":
        preflight(run.config.options_for("tool_calling", AgentOptions).settings(), run.config, "agent", run_id=run.run_id)


@hookimpl
def tau_register_options(register):
    register("tool_calling", AgentOptions)
