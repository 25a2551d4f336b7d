"""Optional reward shaping from how the conversation went; every term is off (weight 0) by default.

Each term is computed for every episode and reported in `info["shaping"]` (unweighted), so a caller
can log them without changing the reward; a term with a non-zero weight is added to the reward and
appears in `info["reward_parts"]` weighted:

- `negative_end`: -1 when the episode ended on a negative termination (a user who quits) before the
  task succeeded, else 0. The task reward already gives -1 for that; a weight makes quitting cost more.
- `unanswered`: minus the number of agent questions the user could not answer (the user's next
  message says so: "I don't know", "no idea", ...; a lexical reading that works with any user simulator).
- `balance`: (tool calls - questions) / (tool calls + questions), in [-1, 1], 0 when there are
  neither: positive when the agent looked things up more than it asked.

A question is an agent message to the user (no tool call) with a question mark, as the trajectory
analyses count it.
"""

from __future__ import annotations

import re

from pydantic import BaseModel, ConfigDict, Field

from tau_emotion.core.models import EpisodeResult, Message

#: how a user says it cannot answer (lower case; straight and curly apostrophes are both read)
NOT_KNOWN = ("don't know", "do not know", "don't have", "do not have", "no idea", "not sure", "can't remember",
             "cannot remember", "don't remember", "do not remember")
TERMS = ("negative_end", "unanswered", "balance")


class Shaping(BaseModel):
    """Weights of the shaping terms (0: off) and the phrases that mark an answer the user does not have."""

    model_config = ConfigDict(extra="forbid")

    negative_end: float = Field(0.0, ge=0, description="Weight of the -1 for a negative ending before success.")
    unanswered: float = Field(0.0, ge=0, description="Weight of -1 per question the user could not answer.")
    balance: float = Field(0.0, ge=0, description="Weight of (tool calls - questions) / (tool calls + questions).")
    not_known: tuple[str, ...] = Field(NOT_KNOWN, description="Phrases of a user who cannot answer.")

    def weights(self) -> dict[str, float]:
        return {name: getattr(self, name) for name in TERMS}


def is_question(message: Message) -> bool:
    return message.role == "assistant" and not message.tool_calls and "?" in (message.content or "")


def unanswered_questions(messages: list[Message], phrases: tuple[str, ...] = NOT_KNOWN) -> int:
    """Agent questions whose next user message says the user does not know."""
    pattern = re.compile("|".join(re.escape(p) for p in phrases)) if phrases else None
    count = 0
    for i, message in enumerate(messages):
        if not is_question(message) or pattern is None:
            continue
        reply = next((m for m in messages[i + 1:] if m.role in ("user", "assistant")), None)
        if reply is not None and reply.role == "user" and pattern.search((reply.content or "").lower().replace("’", "'")):
            count += 1
    return count


def terms(result: EpisodeResult, phrases: tuple[str, ...] = NOT_KNOWN) -> dict[str, float]:
    """The unweighted shaping terms of a finished episode."""
    messages = result.messages
    calls = sum(len(m.tool_calls) for m in messages if m.role == "assistant")
    questions = sum(is_question(m) for m in messages)
    negative = result.termination.negative and not result.success
    return {
        "negative_end": -1.0 if negative else 0.0,
        "unanswered": float(-unanswered_questions(messages, phrases)),
        "balance": (calls - questions) / (calls + questions) if calls + questions else 0.0,
    }
