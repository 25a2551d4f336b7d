"""The `repeater` agent: asks for the user's id, then repeats that question forever.

A floor for user simulators: a user that keeps its patience with it is not reacting to the
conversation. Its UNSATISFIED rate should be near 100% for every condition.
"""

from __future__ import annotations

from tau_emotion.core import hookimpl
from tau_emotion.core.episode import EpisodeView
from tau_emotion.core.models import Message


class RepeaterAgent:
    QUESTION = "Could you please tell me your user id?"

    def __init__(self, view: EpisodeView):
        pass

    async def act(self, messages: list[Message]) -> Message:
        return Message(role="assistant", content=self.QUESTION)


@hookimpl
def tau_register_agents(register):
    register("repeater", RepeaterAgent)
