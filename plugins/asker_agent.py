"""The `asker` agent: asks the user for every argument of every gold call, then does the oracle's work.

A reference point for user simulators: it knows the answer (the gold trajectory) but, as each request is
made, first asks the user, one question per distinct argument name, for every value of that request's calls,
including ones a tool could provide (flight numbers, payment ids, arithmetic); then it serves the request as the
oracle does (identifies the caller, says the deciding figure, states each write and waits for the yes).
A user who does not know a value pays friction; a patient user sees the task done, an impatient
one gives up. Its UNSATISFIED rate should fall between the oracle's (0) and the null agent's.
"""

from __future__ import annotations

from typing import Any

from tau_emotion.core import hookimpl
from tau_emotion.core.episode import EpisodeView
from tau_emotion.core.models import Message
from tau_emotion.plugins.oracle_agent import OracleAgent


def argument_names(value: Any, prefix: str = "") -> list[str]:
    """The leaf argument names of a call ("flights.flight_number" reads as "flight number")."""
    if isinstance(value, dict):
        return [n for k, v in value.items() for n in argument_names(v, k)]
    if isinstance(value, list):
        return [n for v in value for n in argument_names(v, prefix)]
    return [prefix] if prefix else []


class AskerAgent:
    """Per request, before the oracle serves it: one question per argument name of its calls not asked yet."""

    def __init__(self, view: EpisodeView):
        self.oracle = OracleAgent(view)
        self.asked: set[str] = set()
        self.pending: list[str] = []
        self.opened = -1  # the last request whose questions were queued

    def _questions(self, index: int) -> list[str]:
        r = self.oracle.requests[index]
        out = []
        for action in [*r.reads, *r.asks, *r.after]:
            for name in argument_names(action.arguments):
                if name not in self.asked:
                    self.asked.add(name)
                    out.append(f"Could you tell me the {name.replace('_', ' ')}?")
        return out

    async def act(self, messages: list[Message]) -> Message:
        oracle = self.oracle
        upcoming = oracle.position + 1
        if not oracle.steps and upcoming < len(oracle.requests) and self.opened < upcoming:
            self.opened = upcoming
            self.pending = self._questions(upcoming)
        if self.pending and messages and messages[-1].role == "user":
            return Message(role="assistant", content=self.pending.pop(0))
        return await oracle.act(messages)


@hookimpl
def tau_register_agents(register):
    register("asker", AskerAgent)
