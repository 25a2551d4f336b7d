"""The `null` agent: says it cannot help and does nothing. A floor for task sets.

A benchmark where this agent scores well measures little: tasks that need no database change
and no output are solved by doing nothing (tau-bench's airline test split lets it score 38%).
"""

from __future__ import annotations

from tau_emotion.core import hookimpl
from tau_emotion.core.episode import EpisodeView
from tau_emotion.core.models import Message


class NullAgent:
    def __init__(self, view: EpisodeView):
        pass

    async def act(self, messages: list[Message]) -> Message:
        return Message(role="assistant", content="I am sorry, I cannot help with that.")


@hookimpl
def tau_register_agents(register):
    register("null", NullAgent)
