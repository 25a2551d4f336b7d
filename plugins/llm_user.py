"""The `llm` user: a model plays the customer, following tau-bench's user protocol.

The model sees the task instruction (and what the user knows) in its system prompt, plus every
section other plugins add through `tau_user_prompt` (that is how the emotion pack conditions
it). Roles are flipped: the agent's messages are the model's `user` turns. Text sent together
with a termination token is kept. One guard against a known simulator failure: a user that
answers an agent's confirmation question with "yes" and the stop token in the same message
would end the episode before the agent could act, so the token is held back in that message.
"""

from __future__ import annotations

import re
from typing import Any

from pydantic import BaseModel, Field, field_validator

from tau_emotion.core import hookimpl
from tau_emotion.core.episode import EpisodeView
from tau_emotion.core.models import Message, ModelSettings
from tau_emotion.plugins.model_calls import parse_json_object, preflight
from tau_emotion.templates import render

GREETING = "Hi! How can I help you today?"
_ASKS_CONFIRMATION = re.compile(r"\b(confirm|proceed|go ahead|shall i|should i|would you like me to|do you want me to)\b", re.I)
_AGREES = re.compile(r"^\W*(yes|yeah|yep|sure|ok|okay|correct|please do|go ahead)\b", re.I)


class UserOptions(BaseModel):
    user_model: str | None = Field(None, description="Model name for the simulated user.")
    user_api_base: str | None = Field(None, description="OpenAI-compatible endpoint for the user model.")
    user_api_key: str | None = Field(None, description="Key for the user endpoint (default: TAU_API_KEY).")
    user_temperature: float = Field(0.0, ge=0, le=2, description="Sampling temperature of the user model.")
    user_client: str | None = Field(None, description="Model client plugin for the user (default: the default client).")
    user_args: dict[str, Any] = Field(default_factory=dict, description="JSON object of extra request arguments "
                                      "for the user model, e.g. '{\"max_tokens\": 512, \"extra_body\": {...}}'.")

    _parse_args = field_validator("user_args", mode="before")(parse_json_object)

    def settings(self) -> ModelSettings:
        return ModelSettings.for_role("user", self.user_model, self.user_api_base, self.user_api_key,
                                      self.user_temperature, self.user_client,
                                      self.user_args)


class LLMUser:
    def __init__(self, view: EpisodeView):
        self.view = view
        self.client = view.model_client(view.options("llm_user", UserOptions).settings())
        self.stop = view.end_tokens.done or ""
        self.history: list[dict[str, str]] = []
        self.system: dict[str, str] | None = None

    def _system_prompt(self) -> str:
        task = self.view.task
        base = render("user_system.j2", instruction=task.user.instruction, known=task.user.known, stop_token=self.stop)
        return "\n\n".join([base, *self.view.prompt_sections(base)])

    async def _say(self, agent_text: str) -> Message:
        if self.system is None:
            self.system = {"role": "system", "content": self._system_prompt()}
        self.history.append({"role": "user", "content": agent_text})
        reply = await self.client.complete([self.system, *self.history])
        text = (reply.content or "").strip()
        self.history.append({"role": "assistant", "content": text})
        return Message(role="user", content=text, usage=reply.usage)

    async def start(self) -> Message:
        message = await self._say(GREETING)
        self.view.add_usage(message.usage)
        return message

    async def respond(self, message: Message) -> Message:
        agent_text = message.content or ""
        reply = await self._say(agent_text)
        self.view.add_usage(reply.usage)
        text = reply.content or ""
        stop = self.stop
        if stop and stop in text and _ASKS_CONFIRMATION.search(agent_text) and "?" in agent_text and _AGREES.search(text):
            reply.content = text.replace(stop, "").strip() or "Yes."
        return reply


@hookimpl
def tau_register_users(register):
    register("llm", LLMUser)


@hookimpl(tryfirst=True)
def tau_run_start(run):
    """Check the user model's endpoint before any trial starts (before the run is recorded as started)."""
    if run.config.user == "llm":
        preflight(run.config.options_for("llm_user", UserOptions).settings(), run.config, "user", run_id=run.run_id)


@hookimpl
def tau_register_options(register):
    register("llm_user", UserOptions)
