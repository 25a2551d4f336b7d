"""Agents that try to score without answering: the scorer's adversaries (issue 31, item 1).

A third-party plugin, loaded by module path as any user of the harness could write it
(`--plugins tests.attack_agents,airline --agent lister`, from the repository root). Each knows the
task's gold, as an attacker who read the task file would, and makes the gold calls (except
`list_only`); then, instead of answering:

- `done` says "Done." (the floor the others are held to);
- `lister` lists every value any tool returned, the integers 0..5000 and every declared refusal phrasing;
- `list_only` lists the integers and the phrasings without making a call;
- `value_lister` lists only the values the tools returned;
- `reciter` recites every declared refusal phrasing (outputs said plainly), so only the reasons are attacked;
- `hedger` offers each numeric output beside a second candidate ("$352, or $368 with the other option");
- `negator` says each output negated ("It is not 404 dollars.").

`benchmarks/scoring_attacks.py` measures them on every pack's test split; `tests/core/test_telling_attacks.py`
runs them on a few tasks.
"""

from __future__ import annotations

import json
from typing import Any

from tau_emotion.core import hookimpl
from tau_emotion.core.models import Message, ToolCall
from tau_emotion.core.reward import gold_statement, number_value

INTEGERS = " ".join(str(i) for i in range(5001))


def _leaves(value: Any) -> list[str]:
    if isinstance(value, dict):
        return [x for v in value.values() for x in _leaves(v)]
    if isinstance(value, list):
        return [x for v in value for x in _leaves(v)]
    return [] if value is None else [str(value)]


def tool_values(messages: list[Message]) -> list[str]:
    """Every scalar any tool returned in the transcript, in order, once each."""
    seen: dict[str, None] = {}
    for m in messages:
        if m.role != "tool" or not m.content:
            continue
        try:
            values = _leaves(json.loads(m.content))
        except ValueError:
            values = [m.content]
        seen.update(dict.fromkeys(values))
    return list(seen)


class GoldCaller:
    """Makes the task's gold calls in one message, then says `self.say(messages)` every turn."""

    calls_gold = True

    def __init__(self, view):
        self.view = view
        self.task = view.task
        self.acted = not self.calls_gold or not self.task.gold.actions

    def say(self, messages: list[Message]) -> str:
        raise NotImplementedError

    def phrasings(self) -> list[str]:
        return [p for ps in self.view.domain.refusal_reasons.values() for p in ps]

    def reasons_plainly(self) -> list[str]:
        declared = self.view.domain.refusal_reasons
        return [declared[r][0] for r in self.task.gold.reasons if r in declared]

    async def act(self, messages: list[Message]) -> Message:
        if not self.acted:
            self.acted = True
            calls = [ToolCall(id=f"attack-{i}", name=a.name, arguments=dict(a.arguments))
                     for i, a in enumerate(self.task.gold.actions)]
            terminal = any(self.view.tools.is_terminal(a.name) for a in self.task.gold.actions)
            return Message(role="assistant", content=self.say(messages) if terminal else None, tool_calls=calls)
        return Message(role="assistant", content=self.say(messages))


class DoneAgent(GoldCaller):
    def say(self, messages):
        return "Done."


class Lister(GoldCaller):
    def say(self, messages):
        return (f"Here is everything I read: {'; '.join(tool_values(messages))}. Numbers: {INTEGERS}. "
                f"Reasons: {'; '.join(self.phrasings())}.")


class ListOnly(Lister):
    calls_gold = False


class ValueLister(GoldCaller):
    def say(self, messages):
        return f"Here is everything I read: {'; '.join(tool_values(messages))}."


class Reciter(GoldCaller):
    def say(self, messages):
        outputs = [o if isinstance(o, str) else o[0] for o in self.task.gold.outputs]
        return "; ".join([*outputs, *self.phrasings()])


class Hedger(GoldCaller):
    def say(self, messages):
        parts = []
        for output in self.task.gold.outputs:
            text = output if isinstance(output, str) else output[0]
            value = number_value(text)
            parts.append(f"The amount is ${value}, or ${value + 16} with the other option" if value is not None
                         else text)
        return ". ".join([*parts, *self.reasons_plainly()]) + "."


class Negator(GoldCaller):
    def say(self, messages):
        parts = []
        for output in self.task.gold.outputs:
            text = output if isinstance(output, str) else output[0]
            parts.append(f"It is not {text} dollars" if number_value(text) is not None else f"It is not {text}")
        return ". ".join([*parts, *self.reasons_plainly()]) + "."


class Oracle(GoldCaller):
    """The same calls followed by the gold statement: what the attacks are measured beside."""

    def say(self, messages):
        return f"Here is what I found: {gold_statement(self.view.domain, self.task)}."


AGENTS = {"done": DoneAgent, "lister": Lister, "list_only": ListOnly, "value_lister": ValueLister,
          "reciter": Reciter, "hedger": Hedger, "negator": Negator, "gold_caller": Oracle}


@hookimpl
def tau_register_agents(register):
    for name, factory in AGENTS.items():
        register(name, factory)
