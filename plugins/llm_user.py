"""The `llm` user: a model plays the customer, following tau-bench's user protocol.

The model sees the task instruction (and what the user knows) in its system prompt, what its plan
says per request (`plan_notes`: what it knows only by name, what it does when refused or offered
less, its decision rule), plus every section other plugins add through `tau_user_prompt` (that is
how the emotion pack conditions it). Roles are flipped: the agent's messages are the model's `user` turns. Text sent together
with a termination token is kept. One guard against a known simulator failure: a user that
answers an agent's confirmation question with "yes" and the stop token in the same message
would end the episode before the agent could act, so the token is held back in that message.
"""

from __future__ import annotations

import re

from tau_emotion.core import hookimpl
from tau_emotion.core.episode import EpisodeView
from tau_emotion.core.models import Message, Task
from tau_emotion.core.roles import role_settings
from tau_emotion.plugins.model_calls import preflight
from tau_emotion.templates import render

GREETING = "Hi! How can I help you today?"
_ASKS_CONFIRMATION = re.compile(r"\b(confirm|proceed|go ahead|shall i|should i|would you like me to|do you want me to)\b", re.I)
_AGREES = re.compile(r"^\W*(yes|yeah|yep|sure|ok|okay|correct|please do|go ahead)\b", re.I)


def _spoken(value: object) -> str:
    return ", ".join(map(str, value)) if isinstance(value, list) else str(value)


def plan_notes(task: Task) -> list[str]:
    """Per request of the task's plan, what the customer does that the instruction's prose leaves to be read: the
    things it knows by name and not by id, how it takes a refusal or a smaller offer, its decision rule."""
    if task.plan is None:
        return []
    notes = []
    for k, request in enumerate(task.plan.requests, start=1):
        said = [f"you know {_spoken(f.value)} by name, not its id or code" for f in request.facts
                if f.known_as == "name"]
        if request.refusal is not None:
            said.append("if it is refused, insist once, then ask for a human agent" if request.refusal.then == "insist"
                        else "if it is refused, accept the explanation")
            if request.refusal.declines_smaller:
                said.append("turn down any offer of less than you ask for")
        if request.decision is not None:
            d = request.decision
            said.append(f"if {d.figure} is more than ${d.threshold:g}, you {d.over}; otherwise {d.under}")
        if said:
            notes.append(f"Request {k}: " + "; ".join(said) + ".")
    return notes


class LLMUser:
    def __init__(self, view: EpisodeView):
        self.view = view
        self.client = view.model_client(view.role_settings("user"))
        self.stop = view.end_tokens.done or ""
        self.history: list[dict[str, str]] = []
        self.system: dict[str, str] | None = None

    def _system_prompt(self) -> str:
        task = self.view.task
        base = render("user_system.j2", instruction=task.user.instruction, known=task.user.known, stop_token=self.stop,
                      plan=plan_notes(task))
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
    """Check the user model's client and endpoint before any trial starts (before the run is recorded as started)."""
    if run.config.user == "llm":
        settings = role_settings(run.config, "user")
        run.pm.model_client(settings, run.config)  # a client that cannot be made (litellm not installed) stops the run here
        preflight(settings, run.config, "user", run_id=run.run_id)
