"""Scoring: gold replay -> expected database hash (cached per task), outputs told, termination.

Reward is 1 when the final database equals the gold replay's, every gold output was told to
the user, every refusal reason was explained and, when the gold ends in a terminal tool (a
transfer), the agent called it; -1 when the episode ended on a negative termination (e.g. the
user gave up) before that; 0 otherwise. docs/scoring.md states the rule with examples.

Whether an output was told and a reason explained is `tau_emotion.core.telling`'s (the scripted user
asks the same functions): a value counts when a turn states it as the answer, not when it is negated,
offered beside a rival candidate or buried in a list; numbers match by value ("$494.00", "USD 494",
"494 dollars" are one figure; "4940", "494.5", "1494" are others).
"""

from __future__ import annotations

import weakref
from typing import TYPE_CHECKING

from tau_emotion.core.models import Message, RewardParts, Task, Termination
from tau_emotion.core.telling import (  # noqa: F401  (the matcher's names, as reward's since before telling.py)
    normalize,
    number_value,
    numbers_in,
    output_label,
    outputs_told,
    phrase_pattern,
    phrase_said,
    reasons_explained,
)
from tau_emotion.core.terminal import reward as terminal_reward

if TYPE_CHECKING:
    from tau_emotion.core.domain import Domain
    from tau_emotion.core.state import State

_gold_hashes: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


class GoldReplayError(RuntimeError):
    """A task's gold actions do not replay without tool errors."""


def replay(domain: Domain, task: Task) -> State:
    """Run the task's gold actions on a fresh state; raise GoldReplayError on the first tool error."""
    state = domain.database.state()
    where = f"{task.source}: " if task.source else ""
    for i, action in enumerate(task.gold.actions):
        try:
            text, is_error = domain.toolset.call(state, action.name, action.arguments)
        except Exception as exc:  # a tool that crashes on its own gold is broken gold, not a crash of the run
            text, is_error = f"{type(exc).__name__}: {exc}", True
        if is_error:
            why = text.splitlines()[0] if text else ""
            listed = domain.database.listed
            if listed and "not found" in why:  # a lookup by key in a table the file gave as a list
                why += "; " + "; ".join(listed.values())
            raise GoldReplayError(f"{where}task '{task.id}': gold action {i} ({action.name}) failed: {why}")
    return state


def expected_hash(domain: Domain, task: Task) -> str:
    cache = _gold_hashes.setdefault(domain, {})
    key = (task.id, task.gold.model_dump_json())
    if key not in cache:
        cache[key] = replay(domain, task).content_hash
    return cache[key]


def terminal_done(domain: Domain, task: Task, messages: list[Message]) -> bool | None:
    """When the gold ends with a terminal tool (a transfer), the agent must have called it; None otherwise.

    Without this a task whose right answer is "transfer to a human" would be solved by doing nothing.
    """
    wanted = {a.name for a in task.gold.actions if domain.toolset.is_terminal(a.name)}
    if not wanted:
        return None
    return any(m.role == "tool" and not m.error and m.name in wanted for m in messages)


def score(
    domain: Domain, task: Task, state: State, messages: list[Message], termination: Termination
) -> tuple[float, RewardParts]:
    db_match = state.content_hash == expected_hash(domain, task)
    found, missing = outputs_told(task.gold.outputs, messages, gold=task.gold, domain=domain)
    explained, unexplained = reasons_explained(domain, task.gold.reasons, messages, gold=task.gold)
    handed_over = terminal_done(domain, task, messages)
    parts = RewardParts(db_match=db_match, outputs_found=found, outputs_missing=missing,
                        reasons_found=explained, reasons_missing=unexplained,
                        terminal_done=handed_over, negative_termination=termination.negative)
    if db_match and not missing and not unexplained and handed_over is not False:
        return 1.0, parts
    return (-1.0 if termination.negative else 0.0), parts


def gold_messages(domain: Domain, task: Task) -> list[Message]:
    """The transcript an ideal agent leaves: the gold calls' results and the gold outputs said."""
    messages = [Message(role="tool", name=a.name, content="ok") for a in task.gold.actions]
    said = gold_statement(domain, task)
    if said:
        messages.append(Message(role="assistant", content=said))
    return messages


def gold_statement(domain: Domain, task: Task) -> str:
    """What an ideal agent tells: each gold output (its first phrasing) and each reason (its first phrasing)."""
    outputs = [o if isinstance(o, str) else o[0] for o in task.gold.outputs]
    reasons = [domain.refusal_reasons.get(r, [r.replace("_", " ")])[0] for r in task.gold.reasons]
    return "; ".join([*outputs, *reasons])


def check_task(domain: Domain, task: Task) -> str | None:
    """Why a task's own gold trajectory does not score 1 (None when it does)."""
    undeclared = [r for r in task.gold.reasons if r not in domain.refusal_reasons]
    if undeclared:
        return f"task '{task.id}': gold reason '{undeclared[0]}' is not declared by domain '{domain.name}' (data/refusals.json)"
    try:
        state = replay(domain, task)
    except GoldReplayError as exc:
        return str(exc)
    reward, parts = score(domain, task, state, gold_messages(domain, task), Termination(reason="check"))
    if reward == 1.0:
        return None
    return f"task '{task.id}': gold trajectory scores {terminal_reward(reward)} ({parts.model_dump_json()})"


def state_from_messages(domain: Domain, messages: list[Message]) -> State:
    """The database an episode left, rebuilt by running its tool calls again, in order (tools are deterministic)."""
    state = domain.database.state()
    for message in messages:
        if message.role == "assistant":
            for call in message.tool_calls:
                domain.toolset.call(state, call.name, call.arguments)
    return state


def rescore(domain: Domain, task: Task, messages: list[Message], termination: Termination) -> tuple[float, RewardParts]:
    """Score a stored trajectory with the current scorer and the task's current gold."""
    return score(domain, task, state_from_messages(domain, messages), messages, termination)
