"""The `oracle` agent: replays the task's gold actions, then tells the gold outputs and refusal reasons.

A harness self-check: with the scripted user every task must score 1. A failure means the
task, the domain's tools or the scorer is wrong, not the agent.
"""

from __future__ import annotations

from tau_emotion.core import hookimpl
from tau_emotion.core.episode import EpisodeView
from tau_emotion.core.models import Message, ToolCall
from tau_emotion.core.reward import gold_statement


class OracleAgent:
    """All gold calls in one message (exercising in-order execution), then the outputs, then acknowledgements.

    When a gold action is terminal (a transfer ends the episode) the outputs travel as the content
    of the tool-call message, since no later message would be seen.
    """

    def __init__(self, view: EpisodeView):
        self.task = view.task
        self.tools = view.tools
        self.statement = gold_statement(view.domain, view.task)
        self.acted = False
        self.told = not self.statement
        self.acks = 0

    def _outputs(self) -> str:
        self.told = True
        return f"Here is what I found: {self.statement}."

    async def act(self, messages: list[Message]) -> Message:
        if not self.acted:
            self.acted = True
            actions = self.task.gold.actions
            if actions:
                calls = [ToolCall(id=f"oracle-{i}", name=a.name, arguments=dict(a.arguments))
                         for i, a in enumerate(actions)]
                terminal = any(self.tools.is_terminal(a.name) for a in actions)
                content = self._outputs() if terminal and not self.told else None
                return Message(role="assistant", content=content, tool_calls=calls)
        if not self.told:
            return Message(role="assistant", content=self._outputs())
        self.acks += 1
        return Message(role="assistant", content=f"That is taken care of as well (item {self.acks}).")


@hookimpl
def tau_register_agents(register):
    register("oracle", OracleAgent)
