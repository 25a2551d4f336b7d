"""The `asker` agent: asks the user for every argument of every gold call, then does the oracle's work.

A reference point for user simulators: it knows the answer (the gold trajectory) but first asks
the user, one question per distinct argument name, for every value, including ones a tool could
provide (flight numbers, payment ids, arithmetic), and asks for confirmation before each write.
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


def describe(name: str, arguments: dict[str, Any]) -> str:
    parts = ", ".join(f"{k} {v}" for k, v in arguments.items() if not isinstance(v, (dict, list)))
    nested = [str(x) for v in arguments.values() if isinstance(v, (dict, list)) for x in _leaves(v)]
    return f"{name.replace('_', ' ')} ({parts}{'; ' if parts and nested else ''}{', '.join(nested)})"


def _leaves(value: Any) -> list[Any]:
    if isinstance(value, dict):
        return [x for v in value.values() for x in _leaves(v)]
    if isinstance(value, list):
        return [x for v in value for x in _leaves(v)]
    return [value]


class AskerAgent:
    def __init__(self, view: EpisodeView):
        self.oracle = OracleAgent(view)
        questions: list[str] = []
        for action in view.task.gold.actions:
            for name in argument_names(action.arguments):
                question = f"Could you tell me the {name.replace('_', ' ')}?"
                if question not in questions:
                    questions.append(question)
        writes = [a for a in view.task.gold.actions if view.tools.writes(a.name)]
        questions += [f"I am about to {describe(a.name, a.arguments)}. Shall I proceed?" for a in writes]
        self.pending = questions

    async def act(self, messages: list[Message]) -> Message:
        if self.pending:
            return Message(role="assistant", content=self.pending.pop(0))
        return await self.oracle.act(messages)


@hookimpl
def tau_register_agents(register):
    register("asker", AskerAgent)
