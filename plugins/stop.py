"""The `stop` plugin: the user's ###STOP### (registered as the `done` end token), terminal tools (e.g. transfer
to a human), max steps."""

from __future__ import annotations

from tau_emotion.core import hookimpl
from tau_emotion.core.episode import Episode
from tau_emotion.core.models import Message, Termination
from tau_emotion.core.protocols import DONE

STOP_TOKEN = "###STOP###"


@hookimpl
def tau_register_end_tokens(register):
    register(DONE, STOP_TOKEN)


@hookimpl
def tau_check_termination(episode: Episode, message: Message) -> Termination | None:
    if message.role == "user" and message.content and STOP_TOKEN in message.content:
        return Termination(reason="user_stop", by="stop")
    if message.role == "tool" and not message.error and message.name and episode.toolset.is_terminal(message.name):
        return Termination(reason="terminal_tool", by="stop", detail=message.name)
    if message.role == "assistant" and episode.n_steps >= episode.config.max_steps:
        return Termination(reason="max_steps", by="stop", detail=f"{episode.n_steps} steps")
    return None
