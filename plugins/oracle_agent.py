"""The `oracle` agent: makes the task's gold calls as the pack's procedure asks, then tells the gold outputs and
refusal reasons.

A harness self-check: with the scripted user every task must score 1 under both scorings (`--scoring strict`
too). A failure means the task, the domain's tools, the procedure rules or the scorer is wrong, not the agent.
It works request by request (the task's `IntentPlan`; a task without one, or whose plan does not match the
user's lines, is one request): on the user's request it makes that request's reads (the caller's identification
first, as `data/procedure.json` names it), says a decision rule's deciding figure, states each write with every
argument and asks; only after the user's yes does it make the writes, and then it tells what the customer asked
to hear. docs/procedure.md.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from tau_emotion.core import hookimpl
from tau_emotion.core.episode import EpisodeView
from tau_emotion.core.models import Action, Message, ToolCall
from tau_emotion.core.procedure import affirmative


def spoken(value: Any, key: str = "") -> list[str]:
    """An argument as said, one "name value" per leaf ("flight number SKY267", "date 2024-05-17")."""
    if isinstance(value, dict):
        return [x for k, v in value.items() for x in spoken(v, k)]
    if isinstance(value, list):
        return [x for v in value for x in spoken(v, key)]
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    return [f"{key.replace('_', ' ')} {value}".strip()] if value not in (None, "") else []


def describe(action: Action) -> str:
    """A write stated with every argument: "update reservation flights (reservation id PAQUTC, cabin business)"."""
    return f"{action.name.replace('_', ' ')} ({', '.join(spoken(dict(action.arguments)))})"


@dataclass
class Request:
    """One request's gold calls, sorted for the procedure: reads, the writes that need a yes, then the rest."""

    reads: list[Action] = field(default_factory=list)
    asks: list[Action] = field(default_factory=list)  # writes that need the caller's yes
    after: list[Action] = field(default_factory=list)  # terminal calls (a handover): last, with the words
    figure: str | None = None  # "The price difference is 1217."
    proceeds: bool = True
    told: list[str] = field(default_factory=list)  # what it tells once served: its outputs and reasons, as said


def said(domain: Any, outputs: list[Any], reasons: list[str]) -> list[str]:
    """Outputs (their first phrasing) and refusal reasons (their first phrasing), as `gold_statement` says them."""
    return [*(o if isinstance(o, str) else o[0] for o in outputs),
            *(domain.refusal_reasons.get(r, [r.replace("_", " ")])[0] for r in reasons)]


def requests_of(view: EpisodeView) -> list[Request]:
    """The task's gold calls grouped by the request they serve (the plan's `actions`; a call no request owns goes
    with the next request that owns a later one), in gold order within each group."""
    task, tools, spec = view.task, view.tools, view.domain.procedure
    actions = list(task.gold.actions)
    lines = list(task.user.intents) or [task.user.instruction]
    plan = task.plan if task.plan is not None and len(task.plan.requests) == len(lines) else None
    owned = [[j for j in r.actions if 0 <= j < len(actions)] for r in plan.requests] if plan else [list(range(len(actions)))]
    free = sorted(set(range(len(actions))) - {j for o in owned for j in o})
    for j in free:
        at = next((i for i, o in enumerate(owned) if o and max(o) > j), len(owned) - 1)
        owned[at].append(j)
    identify = {i.tool for i in spec.identify} if spec is not None else set()
    needs_yes = (lambda n: n in spec.confirm_before_write) if spec is not None and spec.confirm_before_write \
        else tools.writes
    out = []
    for i, indices in enumerate(owned):
        calls = [actions[j] for j in sorted(set(indices))]
        request = Request()
        # the caller is identified before anything is looked up for them
        calls.sort(key=lambda a: a.name not in identify)
        asks_any = any(needs_yes(a.name) for a in calls)
        for a in calls:
            if tools.is_terminal(a.name):
                request.after.append(a)
            elif needs_yes(a.name) or (asks_any and tools.writes(a.name)):
                request.asks.append(a)
            else:
                request.reads.append(a)
        told = (plan.requests[i].outputs, plan.requests[i].reasons) if plan else (task.gold.outputs, task.gold.reasons)
        request.told = said(view.domain, *told)
        rule = plan.requests[i].decision if plan else None
        if rule is not None:
            request.figure = f"{rule.figure[:1].upper()}{rule.figure[1:]} is {rule.amount}."
            request.proceeds = rule.outcome == "under"
        out.append(request)
    return out


class OracleAgent:
    """Per request: its reads in one message, then the deciding figure and the writes stated with a question; on the
    yes the writes in one message, then the outputs (the first time) or a short 'done'. When a gold call is terminal
    (a transfer ends the episode) the words travel as the content of its message, since no later one would be seen.
    """

    def __init__(self, view: EpisodeView):
        self.view = view
        self.requests = requests_of(view)
        # the last request also tells whatever of the gold no request owns
        self.requests[-1].told += [x for x in said(view.domain, view.task.gold.outputs, view.task.gold.reasons)
                                   if x not in {t for r in self.requests for t in r.told}]
        self.told: set[str] = set()
        self.position = -1  # the request being served
        self.steps: list[str] = []  # what is left to do for it
        self.acks = 0
        self.n_calls = 0

    def _words(self, request: Request) -> str:
        """What a served request hears: a declined rule's figure, then its outputs and reasons (each said once)."""
        parts = [request.figure] if request.figure and not request.proceeds else []
        fresh = [t for t in dict.fromkeys(request.told) if t not in self.told]
        self.told.update(fresh)
        if fresh:
            parts.append(f"Here is what I found: {'; '.join(fresh)}.")
        return " ".join(parts) or "That is taken care of."

    def _calls(self, actions: list[Action], content: str | None = None) -> Message:
        calls = [ToolCall(id=f"oracle-{self.n_calls + i}", name=a.name, arguments=dict(a.arguments))
                 for i, a in enumerate(actions)]
        self.n_calls += len(calls)
        return Message(role="assistant", content=content, tool_calls=calls)

    def ask(self, request: Request) -> str:
        """The confirmation request: the deciding figure, then every write with its arguments, then the question."""
        writes = "; and then ".join(describe(a) for a in request.asks)
        return " ".join(x for x in (request.figure, f"I will {writes}.", "Shall I go ahead?") if x)

    def next_request(self) -> bool:
        self.position += 1
        if self.position >= len(self.requests):
            return False
        r = self.requests[self.position]
        self.steps = [s for s, todo in (("reads", r.reads), ("ask", r.asks), ("writes", r.asks)) if todo] + ["tell"]
        return True

    async def act(self, messages: list[Message]) -> Message:
        # a turn ends on words (a question, the outputs): with no step left, the user has made their next request
        if not self.steps and not self.next_request():
            self.acks += 1
            return Message(role="assistant", content=f"That is taken care of as well (item {self.acks}).")
        request = self.requests[self.position]
        step = self.steps.pop(0)
        if step == "reads":
            return self._calls(request.reads)
        if step == "ask":
            return Message(role="assistant", content=self.ask(request))
        if step == "writes":
            reply = next((m for m in reversed(messages) if m.role == "user"), None)
            if reply is None or affirmative(reply.content):  # handed no transcript (a bare driver): the yes is given
                return self._calls(request.asks)
            step = self.steps.pop(0)  # no yes: nothing is changed
        words = self._words(request)
        if request.after:
            return self._calls(request.after, words)
        return Message(role="assistant", content=words)


@hookimpl
def tau_register_agents(register):
    register("oracle", OracleAgent)
