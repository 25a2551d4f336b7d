"""Pydantic models at the edges of the harness: task files, messages, results and run configuration.

Task files are validated strictly (unknown fields are an error) because a misspelt field in a
benchmark file silently changes what is measured. Inside the episode loop these models are
built once per message and never re-validated.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, PrivateAttr


class StrictModel(BaseModel):
    model_config = ConfigDict(extra="forbid")


class UserSpec(StrictModel):
    """What the simulated user wants, what they know, and the order they ask in."""

    instruction: str
    known: dict[str, Any] = Field(default_factory=dict)
    intents: list[str] = Field(default_factory=list)


class EmotionSpec(StrictModel):
    """A user emotion condition. Core stores it; the emotion pack gives it meaning."""

    family: str
    emotion: str
    politeness: str
    urgency: str
    trust: str
    anchor: str | None = None

    @property
    def condition_id(self) -> str:
        return f"{self.family}.{self.emotion}/{self.politeness}/{self.urgency}/{self.trust}"


class Action(StrictModel):
    name: str
    arguments: dict[str, Any] = Field(default_factory=dict)


class Gold(StrictModel):
    actions: list[Action] = Field(default_factory=list)
    outputs: list[str] = Field(default_factory=list)


class Task(StrictModel):
    id: str
    domain: str
    split: str = "test"
    user: UserSpec
    emotion: EmotionSpec | None = None
    gold: Gold = Field(default_factory=Gold)
    meta: dict[str, Any] = Field(default_factory=dict)
    _source: str | None = PrivateAttr(default=None)

    @property
    def source(self) -> str | None:
        """The file the task was read from (for error messages), when known."""
        return self._source


class ToolCall(BaseModel):
    """A tool call as the agent produced it; `arguments` stays a raw string when it was not JSON."""

    id: str
    name: str
    arguments: dict[str, Any] | str = Field(default_factory=dict)


class Message(BaseModel):
    role: Literal["system", "user", "assistant", "tool"]
    content: str | None = None
    tool_calls: list[ToolCall] = Field(default_factory=list)
    tool_call_id: str | None = None
    name: str | None = None
    error: bool = False
    usage: dict[str, float] | None = None


class Turn(BaseModel):
    """One step of the loop: an agent message with its tool results, or a user message."""

    index: int
    actor: Literal["agent", "user"]
    messages: list[Message]


class Termination(BaseModel):
    """Why an episode ended. `negative` marks endings that score -1 unless the task already succeeded."""

    reason: str
    by: str = "core"
    detail: str = ""
    negative: bool = False


class RewardParts(BaseModel):
    db_match: bool
    outputs_found: list[str] = Field(default_factory=list)
    outputs_missing: list[str] = Field(default_factory=list)
    terminal_done: bool | None = None
    negative_termination: bool = False


class EpisodeResult(BaseModel):
    task_id: str
    domain: str
    trial: int
    reward: float
    success: bool
    status: Literal["ok", "error"] = "ok"
    termination: Termination
    parts: RewardParts | None = None
    messages: list[Message] = Field(default_factory=list)
    n_steps: int = 0
    n_tool_calls: int = 0
    n_user_turns: int = 0
    usage: dict[str, float] = Field(default_factory=dict)
    duration_s: float = 0.0
    emotion: dict[str, Any] | None = None
    error: str | None = None


class RunConfig(BaseModel):
    """Everything that decides what a run measures; stored with the run so `--resume` repeats it."""

    model_config = ConfigDict(extra="forbid")

    plugins: list[str] = Field(default_factory=list)
    domains: list[str] = Field(default_factory=list)
    split: str = "test"
    n_tasks: int | None = None
    task_ids: list[str] = Field(default_factory=list)
    trials: int = 3
    agent: str = "oracle"
    agent_model: str | None = None
    agent_api_base: str | None = None
    agent_temperature: float = 0.0
    user: str = "scripted"
    user_model: str | None = None
    user_api_base: str | None = None
    user_temperature: float = 0.0
    max_steps: int = 200
    max_tool_errors: int = 10
    concurrency: int = 8
    executor: str = "local"
    store: str = "sqlite"
    seed: int = 0
    options: dict[str, Any] = Field(default_factory=dict)
