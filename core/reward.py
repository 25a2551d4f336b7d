"""Scoring: gold replay -> expected database hash (cached per task), outputs told, termination.

Reward is 1 when the final database equals the gold replay's, every gold output was told to
the user, every refusal reason was explained and, when the gold ends in a terminal tool (a
transfer), the agent called it; -1 when the episode ended on a negative termination (e.g. the
user gave up) before that; 0 otherwise.

Matching is by meaning, deterministically: a number matches by value ("$494.00", "USD 494",
"494 dollars" and "494" are one figure; "4940", "494.5", "1494" are others; tau-bench's substring
check would accept "1494"); text matches case-insensitively on word boundaries; a gold output may
list accepted phrasings. A reason is explained by any phrasing the domain declares for it, and a
phrasing right after "not"/"never" does not count ("can't" and "cannot" read as "can not").
"""

from __future__ import annotations

import re
import weakref
from decimal import Decimal
from typing import TYPE_CHECKING

from tau_emotion.core.models import Message, RewardParts, Task, Termination
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


def normalize(text: str) -> str:
    """Lower case, one space between words, negations spelt out ("can't", "cannot" -> "can not")."""
    text = text.lower().replace("\u2019", "'").replace("\u2018", "'")
    text = _CANNOT.sub("can not", text)
    text = _WONT.sub("will not", text)
    text = _NT.sub(" not", text)
    return " ".join(text.split())


_CANNOT = re.compile(r"\b(?:cannot|can't)\b")
_WONT = re.compile(r"\bwon't\b")
_NT = re.compile(r"n't\b")
_NEGATORS = frozenset({"not", "never"})
#: a number as written: "494", "1,494", "494.00" (not a piece of a date, time, id or longer number)
_NUMBER = re.compile(r"(?<![\w.])(?<!\d[,/:-])(\d{1,3}(?:,\d{3})+|\d+)(\.\d+)?(?![\w])(?![.,/:-]\d)")
_CURRENCY = r"(?:[$\u20ac\u00a3]|usd|eur|gbp)"
_NUMERIC_OUTPUT = re.compile(
    rf"^{_CURRENCY}?\s*(\d{{1,3}}(?:,\d{{3}})+|\d+)(\.\d+)?\s*(?:usd|eur|gbp|dollars?|euros?|pounds?)?$", re.I)


def number_value(text: str) -> Decimal | None:
    """The value of an output that is a number or an amount ("494", "$1,130.00", "USD 50"); None for text."""
    m = _NUMERIC_OUTPUT.match(text.strip())
    return Decimal(m.group(1).replace(",", "") + (m.group(2) or "")) if m else None


def numbers_in(text: str) -> set[Decimal]:
    """Every number written in `text`, by value ("$494.00" and "494 dollars" both give 494)."""
    return {Decimal(m.group(1).replace(",", "") + (m.group(2) or "")) for m in _NUMBER.finditer(text)}


def phrase_pattern(phrase: str) -> re.Pattern[str]:
    body = re.escape(normalize(phrase.strip())).replace(r"\ ", r"[\s-]+")
    return re.compile(rf"(?<![\w])(?<!\d\.){body}(?![\w])(?!\.\d)")


def phrase_said(phrase: str, said: str) -> bool:
    """`phrase` occurs in the normalized text `said` on word boundaries, and is not negated.

    A phrasing without a negation does not count right after "not"/"never" ("has not already
    flown" does not explain `already_flown`); a phrasing may carry its own ("can not be removed").
    """
    negated_phrase = bool(_NEGATORS & set(normalize(phrase).split()))
    for m in phrase_pattern(phrase).finditer(said):
        before = said[: m.start()].split()
        if negated_phrase or not before or before[-1] not in _NEGATORS:
            return True
    return False


def output_said(output: str | list[str], said: str, numbers: set[Decimal]) -> bool:
    """One gold output told: any accepted phrasing; a number matches by value."""
    for phrasing in [output] if isinstance(output, str) else output:
        value = number_value(phrasing)
        if value is not None and value in numbers:
            return True
        if value is None and phrase_said(phrasing, said):
            return True
    return False


def output_label(output: str | list[str]) -> str:
    return output if isinstance(output, str) else " | ".join(output)


def assistant_text(messages: list[Message]) -> str:
    return "\n".join(m.content or "" for m in messages if m.role == "assistant")


def outputs_told(outputs: list[str | list[str]], messages: list[Message]) -> tuple[list[str], list[str]]:
    text = assistant_text(messages)
    said, numbers = normalize(text), numbers_in(text)
    found = [output_label(o) for o in outputs if output_said(o, said, numbers)]
    return found, [output_label(o) for o in outputs if output_label(o) not in found]


def reasons_explained(domain: Domain, reasons: list[str], messages: list[Message]) -> tuple[list[str], list[str]]:
    """Which refusal reasons the agent explained in one of the domain's declared phrasings."""
    said = normalize(assistant_text(messages))
    declared = domain.refusal_reasons
    found = [r for r in reasons if any(phrase_said(p, said) for p in declared.get(r, ()))]
    return found, [r for r in reasons if r not in found]


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
    explained, unexplained = reasons_explained(domain, task.gold.reasons, messages)
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
