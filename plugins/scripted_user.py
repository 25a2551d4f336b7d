"""The `scripted` user: deterministic and offline.

It states the task's intents in order, answers questions from the task's `known` facts, says it
does not know anything else, agrees when asked to confirm, and ends with ###STOP### once every
intent was addressed (an agent statement that is not a question moves it to the next intent).

How it sounds and how much friction it tolerates come from a `UserStyle`. The neutral style has
infinite patience; another plugin (the emotion pack) answers the hook this plugin adds,
`tau_scripted_user_style(episode)`, with its own style to make this user emotional.
"""

from __future__ import annotations

import json
import re
from typing import Any

import pluggy

from tau_emotion.core import PROJECT, hookimpl
from tau_emotion.core.episode import Episode
from tau_emotion.core.models import Message

_WORD = re.compile(r"[a-z0-9]+")
_SYNONYMS = {
    "id": {"id", "number", "code", "identifier", "confirmation", "locator"},
    "dob": {"dob", "birth", "birthday"},
    "email": {"email", "e-mail", "mail"},
}
_STOPWORDS = {"of", "the", "a", "an", "to", "for", "my", "your"}
_CONFIRM = re.compile(
    r"\b(shall i|should i|may i|can i go|do you want me|would you like me|would you like to proceed|"
    r"confirm|proceed|go ahead|is that (?:correct|right|ok)|are you sure|(?:do|would) you (?:like|want))\b"
)


class UserStyle:
    """Neutral phrasing and unlimited patience. Subclasses change both."""

    def opening(self, request: str) -> str:
        return request

    def next_request(self, request: str) -> str:
        return f"Thank you. {request}"

    def answer(self, text: str) -> str:
        return text

    def confirm(self) -> str:
        return "Yes, please go ahead."

    def dont_know(self) -> str:
        return "I don't know that, sorry."

    def friction(self, kind: str) -> str | None:
        """Called on friction ('unknown_question', 'repeated_question', 'no_progress').

        Return None to carry on, a prefix for the reply, or a final message (with its
        termination token) to end the conversation.
        """
        return None

    def done(self) -> str:
        return "Thank you, that is everything I needed. ###STOP###"


def key_terms(key: str) -> list[set[str]]:
    terms = []
    for token in key.lower().split("_"):
        if token and token not in _STOPWORDS:
            terms.append(_SYNONYMS.get(token, {token}) | {token})
    return terms


def format_value(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value)


hookspec = pluggy.HookspecMarker(PROJECT)


class ScriptedUserHooks:
    """The hook this plugin adds (through `tau_addhooks`)."""

    @hookspec(firstresult=True)
    def tau_scripted_user_style(self, episode: Episode) -> UserStyle | None:
        """The `UserStyle` of the scripted user in `episode` (called once per episode); None for the neutral one.

        firstresult. Implement it with `@hookimpl(optionalhook=True)` so the plugin still loads
        when the scripted user is blocked.
        """


class ScriptedUser:
    def __init__(self, episode: Episode):
        self.episode = episode
        self.task = episode.task
        self.intents = list(self.task.user.intents) or [self.task.user.instruction]
        self.position = 0
        self.told: set[str] = set()
        self.last_agent_text: str | None = None
        self.style: UserStyle = episode.pm.hook.tau_scripted_user_style(episode=episode) or UserStyle()

    async def start(self) -> Message:
        return Message(role="user", content=self.style.opening(self.intents[0]))

    def _asked_keys(self, text: str) -> list[str]:
        words = set(_WORD.findall(text.lower()))
        return [k for k in self.task.user.known if all(terms & words for terms in key_terms(k))]

    def _with_friction(self, kind: str | None, reply: str) -> str:
        if kind is None:
            return reply
        said = self.style.friction(kind)
        if said is None:
            return reply
        if "###" in said:  # the style ended the conversation
            return said
        return f"{said} {reply}"

    async def respond(self, message: Message) -> Message:
        text = (message.content or "").strip()
        repeated = text == self.last_agent_text
        self.last_agent_text = text
        if "?" in text:
            keys = self._asked_keys(text)
            if keys:
                kind = "repeated_question" if all(k in self.told for k in keys) else None
                self.told.update(keys)
                facts = " ".join(f"My {k.replace('_', ' ')} is {format_value(self.task.user.known[k])}." for k in keys)
                reply = self._with_friction(kind, self.style.answer(facts))
            elif _CONFIRM.search(text.lower()):
                reply = self._with_friction("no_progress" if repeated else None, self.style.confirm())
            else:
                reply = self._with_friction("unknown_question", self.style.dont_know())
            return Message(role="user", content=reply)
        if repeated or not text:
            return Message(role="user", content=self._with_friction("no_progress", self.intents[self.position]))
        self.position += 1
        if self.position >= len(self.intents):
            return Message(role="user", content=self.style.done())
        return Message(role="user", content=self.style.next_request(self.intents[self.position]))


@hookimpl
def tau_addhooks(pluginmanager):
    pluginmanager.add_hookspecs(ScriptedUserHooks)


@hookimpl
def tau_register_users(register):
    register("scripted", ScriptedUser)
