"""The `hasty` agent: makes every write the user asks for at once, without reading or confirming.

It knows the gold trajectory but skips its reads, and also makes the writes the policy forbids
(the refused requests of the task's plan, `IntentPlan.refusals`), so refusal tasks fail; then it tells the gold
outputs. It shows what a user simulator and the scorer do with an agent that never confirms.
"""

from __future__ import annotations

from tau_emotion.core import hookimpl
from tau_emotion.core.episode import EpisodeView
from tau_emotion.core.models import Message, ToolCall


class HastyAgent:
    def __init__(self, view: EpisodeView):
        task, tools = view.task, view.tools
        writes = [(a.name, dict(a.arguments)) for a in task.gold.actions if tools.writes(a.name)]
        if task.plan is not None:
            writes += [(r.call.name, dict(r.call.arguments)) for r in task.plan.refusals]
        self.calls = [ToolCall(id=f"hasty-{i}", name=n, arguments=args) for i, (n, args) in enumerate(writes)]
        outputs = [o if isinstance(o, str) else o[0] for o in task.gold.outputs]
        self.statement = "Done. " + (f"Here is what I found: {'; '.join(outputs)}." if outputs else "")
        self.step = 0

    async def act(self, messages: list[Message]) -> Message:
        self.step += 1
        if self.step == 1 and self.calls:
            return Message(role="assistant", tool_calls=self.calls)
        if self.step <= 2:
            return Message(role="assistant", content=self.statement.strip())
        return Message(role="assistant", content="Done, all taken care of.")


@hookimpl
def tau_register_agents(register):
    register("hasty", HastyAgent)
