"""The `tool_calling` agent: any chat model with tool calls, through litellm.

The system prompt is rendered from `templates/agent_system.j2` with the domain's policy. Pass
`--agent-model openai/NAME --agent-api-base http://host:port/v1` for any OpenAI-compatible
server (vLLM, llama.cpp, a hosted API).
"""

from __future__ import annotations

from tau_emotion.core import hookimpl
from tau_emotion.core.episode import Episode
from tau_emotion.core.models import Message
from tau_emotion.plugins.completion import ModelSettings, complete, to_openai
from tau_emotion.templates import render


class ToolCallingAgent:
    def __init__(self, episode: Episode):
        self.settings = ModelSettings.from_config(episode.config, "agent")
        self.system = render("agent_system.j2", domain=episode.domain.name, policy=episode.policy)
        self.tools = episode.toolset.schemas

    async def act(self, messages: list[Message]) -> Message:
        payload = [{"role": "system", "content": self.system}, *to_openai(messages)]
        return await complete(self.settings, payload, tools=self.tools)


@hookimpl
def tau_register_agents(register):
    register("tool_calling", ToolCallingAgent)
