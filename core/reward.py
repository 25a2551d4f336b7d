"""Scoring: gold replay -> expected database hash (cached per task), outputs told, termination.

Reward is 1 when the final database equals the gold replay's, every gold output was told to
the user and, when the gold ends in a terminal tool (a transfer), the agent called it; -1 when the episode ended on a negative termination (e.g. the user gave up) before
that; 0 otherwise. Outputs match case-insensitively on word and number boundaries, ignoring
thousands separators, so "10" does not match "100" (tau-bench's substring check would).
"""

from __future__ import annotations

import re
import weakref
from typing import TYPE_CHECKING

from tau_emotion.core.models import Message, RewardParts, Task, Termination

if TYPE_CHECKING:
    from tau_emotion.core.domain import Domain
    from tau_emotion.core.state import State

_THOUSANDS = re.compile(r"(?<=\d),(?=\d{3}(?!\d))")
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
            raise GoldReplayError(f"{where}task '{task.id}': gold action {i} ({action.name}) failed: "
                                  f"{text.splitlines()[0] if text else ''}")
    return state


def expected_hash(domain: Domain, task: Task) -> str:
    cache = _gold_hashes.setdefault(domain, {})
    key = (task.id, task.gold.model_dump_json())
    if key not in cache:
        cache[key] = replay(domain, task).content_hash
    return cache[key]


def normalize(text: str) -> str:
    return _THOUSANDS.sub("", text.lower())


def output_pattern(output: str) -> re.Pattern[str]:
    body = re.escape(normalize(output.strip()))
    return re.compile(rf"(?<![\w])(?<!\d\.){body}(?![\w])(?!\.\d)")


def outputs_told(outputs: list[str], messages: list[Message]) -> tuple[list[str], list[str]]:
    said = normalize("\n".join(m.content or "" for m in messages if m.role == "assistant"))
    found = [o for o in outputs if output_pattern(o).search(said)]
    return found, [o for o in outputs if o not in found]


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
    found, missing = outputs_told(task.gold.outputs, messages)
    handed_over = terminal_done(domain, task, messages)
    parts = RewardParts(db_match=db_match, outputs_found=found, outputs_missing=missing,
                        terminal_done=handed_over, negative_termination=termination.negative)
    if db_match and not missing and handed_over is not False:
        return 1.0, parts
    return (-1.0 if termination.negative else 0.0), parts


def gold_messages(domain: Domain, task: Task) -> list[Message]:
    """The transcript an ideal agent leaves: the gold calls' results and the gold outputs said."""
    messages = [Message(role="tool", name=a.name, content="ok") for a in task.gold.actions]
    if task.gold.outputs:
        messages.append(Message(role="assistant", content="; ".join(task.gold.outputs)))
    return messages


def check_task(domain: Domain, task: Task) -> str | None:
    """Why a task's own gold trajectory does not score 1 (None when it does)."""
    try:
        state = replay(domain, task)
    except GoldReplayError as exc:
        return str(exc)
    reward, parts = score(domain, task, state, gold_messages(domain, task), Termination(reason="check"))
    if reward == 1.0:
        return None
    return f"task '{task.id}': gold trajectory scores {reward:+.0f} ({parts.model_dump_json()})"
