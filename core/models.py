"""Pydantic models at the edges of the harness: task files, messages, results and run configuration.

Task files are validated strictly (unknown fields are an error) because a misspelt field in a
benchmark file silently changes what is measured. Inside the episode loop these models are
built once per message and never re-validated.
"""

from __future__ import annotations

import json
from typing import Any, Literal, TypeVar

from pydantic import BaseModel, ConfigDict, Field, PrivateAttr, field_validator, model_serializer, model_validator

from tau_emotion.core.limits import finite_usage, truncate

#: longest task id, domain or split name
MAX_ID_CHARS = 200

M = TypeVar("M", bound=BaseModel)


class StrictModel(BaseModel):
    model_config = ConfigDict(extra="forbid")


class UserSpec(StrictModel):
    """What the simulated user wants, what they know, and the order they ask in."""

    instruction: str
    known: dict[str, Any] = Field(default_factory=dict)
    intents: list[str] = Field(default_factory=list)


class Action(StrictModel):
    name: str
    arguments: dict[str, Any] = Field(default_factory=dict)


class Gold(StrictModel):
    """What a correct episode does and says.

    `outputs`: facts the agent must tell; an entry is a phrase or a list of accepted phrasings (any
    one suffices); numbers match by value ("$494.00" tells "494"). `reasons`: policy reasons a
    refusal must explain, named as the domain declares them (`Domain.refusal_reasons`).
    """

    actions: list[Action] = Field(default_factory=list)
    outputs: list[str | list[str]] = Field(default_factory=list)
    reasons: list[str] = Field(default_factory=list)


class PlanFact(StrictModel):
    """A fact the customer knows for one request, and which call arguments it gives the agent.

    `answers` are the call arguments whose very value it is (a reservation number, a date, a first name); `names`
    the id arguments of the things it names (a phone model for a model code, "my card ending in 5753" for a
    payment method id): asked for such an id, the customer gives the name. `known_as` is `name` for a fact that
    answers no argument but names one's thing, else `id`. `words` is the fact in the customer's own voice ("my card
    ends in 5753"); empty when it has none, and then it is told only when asked.
    """

    key: str
    value: Any
    words: str = ""
    #: as "tool.argument" ("book_reservation.passengers.first_name")
    answers: list[str] = Field(default_factory=list)
    names: list[str] = Field(default_factory=list)
    known_as: Literal["id", "name"] = "id"


class DecisionRule(StrictModel):
    """The customer's condition on a figure the agent must look up first: over the threshold they do `over`."""

    figure: str
    amount: str
    threshold: float = Field(allow_inf_nan=False)
    over: str
    under: str = "go ahead"
    #: which side the database puts the figure on
    outcome: Literal["over", "under"]


class RefusalPlan(StrictModel):
    """A request the policy forbids: the call the customer asks for, and what they do when it is refused."""

    call: Action
    #: how many gold calls run before it
    after: int = Field(ge=0)
    #: accept the explanation, or insist once and then ask for a person (the next request)
    then: Literal["accept", "insist"] = "accept"
    #: the customer turns down any offer of less than they asked for (a smaller compliant variant)
    declines_smaller: bool = False


class GoalChange(StrictModel):
    """One place of the database a request changes: any of `values` there shows it done (None at the row: deleted)."""

    table: str
    key: str
    path: list[str | int] = Field(default_factory=list)
    values: list[Any]


class Goal(StrictModel):
    """What the database shows once a request is done, and whether it ends with a handover to a person."""

    changes: list[GoalChange] = Field(default_factory=list)
    handover: bool = False


class RequestPlan(StrictModel):
    """One request of the customer (one line of `user.intents`)."""

    kind: str
    #: the gold calls it owns (indices into `gold.actions`)
    actions: list[int] = Field(default_factory=list)
    facts: list[PlanFact] = Field(default_factory=list)
    decision: DecisionRule | None = None
    refusal: RefusalPlan | None = None
    #: what the customer wants to hear (as `Gold.outputs`) and the refusal reasons they must be given
    outputs: list[str | list[str]] = Field(default_factory=list)
    reasons: list[str] = Field(default_factory=list)
    goal: Goal = Field(default_factory=Goal)


class Situation(StrictModel):
    """What the customer's feeling rests on, in their words (events and occasion where the builder knows them), and
    what an audit reads a feeling against: how good or bad it is, how much is at stake, how near its date is, whether
    something presses, whether a request will be refused, whether an earlier contact is stated, and the cause the
    feeling names."""

    feeling: str = ""
    events: list[str] = Field(default_factory=list)
    occasion: str | None = None
    #: negative | neutral | positive: the worst of the events and occasion
    valence: str = "neutral"
    #: 0 (trivial) .. 3 (life-changing)
    stakes: int = 1
    #: days to the nearest date the request is about; None when none
    days_left: int | None = None
    #: a date within a few days or a misfortune: "no rush" would contradict it
    pressing: bool = False
    #: a negative event of real stakes (a broken phone): "it's urgent" has a reason
    setback: bool = False
    #: a negative event of the highest stakes or a sad occasion
    misfortune: bool = False
    #: something good to look forward to
    upcoming: bool = False
    #: a request the policy refuses
    refused: bool = False
    #: the user is told to accept a refusal (so does not announce it will dispute)
    accepts_refusal: bool = False
    #: an earlier contact, promise or try is part of the situation
    history: bool = False
    #: the event or occasion the feeling names as its cause (the appraisal's), in the customer's words
    cause: str | None = None


class IntentPlan(StrictModel):
    """The customer's plan: per request what they know, decide, accept and want to hear, and what done looks like.

    The plugin that builds the task writes it (a task generator, an adapter); simulated users, audits and the
    plugins that condition a user read it. It is typed so that a misspelt key fails validation instead of silently changing what a user does.
    """

    requests: list[RequestPlan]
    #: facts no request owns: who the customer is (their name, zip, user id)
    caller: list[PlanFact] = Field(default_factory=list)
    situation: Situation | None = None

    @property
    def refusals(self) -> list[RefusalPlan]:
        return [r.refusal for r in self.requests if r.refusal is not None]


CORE_TASK_FIELDS = frozenset({"id", "domain", "split", "user", "gold", "meta", "plan"})


class Task(StrictModel):
    """A task. Top-level keys other than the core fields are plugin-owned blocks.

    A block is named after the plugin that owns it (a plugin `weather` owns `"weather": {...}`).
    In a file a block sits at the top level beside the core fields; in memory it lives in
    `blocks`. `null` means absent. The runner validates each block through the model its plugin
    registered (`tau_register_blocks`) and rejects a block no installed plugin owns.
    """

    id: str
    domain: str
    split: str = "test"
    user: UserSpec
    gold: Gold = Field(default_factory=Gold)
    #: the customer's plan (None: a task whose builder gives none; a user falls back on the gold)
    plan: IntentPlan | None = None
    meta: dict[str, Any] = Field(default_factory=dict)
    blocks: dict[str, Any] = Field(default_factory=dict)
    _source: str | None = PrivateAttr(default=None)

    @field_validator("id", "domain", "split")
    @classmethod
    def _printable(cls, value: str) -> str:
        """Ids and names are shown on terminals, in reports and in XML: printable and bounded (a newline in an
        id forged lines in `tau show`; a lone surrogate aborted a run)."""
        if not value or len(value) > MAX_ID_CHARS:
            raise ValueError(f"must be 1 to {MAX_ID_CHARS} characters")
        if not value.isprintable() or any("\ud800" <= c <= "\udfff" for c in value):
            raise ValueError(f"must be printable text (got {truncate(ascii(value), 80)})")
        return value

    @model_validator(mode="before")
    @classmethod
    def _collect_blocks(cls, data: Any) -> Any:
        if not isinstance(data, dict):
            return data
        data = dict(data)
        blocks = dict(data.pop("blocks", None) or {})
        for key in [k for k in data if k not in CORE_TASK_FIELDS]:
            blocks[key] = data.pop(key)
        data["blocks"] = {k: v for k, v in blocks.items() if v is not None}
        return data

    @model_serializer(mode="wrap")
    def _flatten_blocks(self, handler: Any) -> dict[str, Any]:
        out = handler(self)
        if self.plan is None:  # a task without a plan reads as it did before plans existed
            out.pop("plan", None)
        elif "plan" in out:  # fields at their defaults (no decision, no refusal, an id) are left out of files
            out["plan"] = self.plan.model_dump(mode="json", exclude_defaults=True)
        blocks = out.pop("blocks", None) or {}
        return {**out, **blocks}

    def block(self, name: str) -> Any:
        """The block `name` (validated when its plugin is loaded), or None."""
        return self.blocks.get(name)

    def with_block(self, name: str, value: Any, **update: Any) -> Task:
        """A copy with block `name` set (None removes it) and other fields updated."""
        blocks = {k: v for k, v in self.blocks.items() if k != name}
        if value is not None:
            blocks[name] = value
        copy = self.model_copy(update={"blocks": blocks, **update})
        copy._source = self._source
        return copy

    @property
    def source(self) -> str | None:
        """The file the task was read from (for error messages), when known."""
        return self._source

    @property
    def content_hash(self) -> str:
        """The sha256 of the task as a file states it (core fields and blocks, as canonical JSON): any change
        to what it asks, what the user knows or what it expects changes it; where it was read from does not."""
        return content_hash(self.model_dump(mode="json"))


def content_hash(value: Any) -> str:
    """The sha256 (hex) of a JSON value written canonically: sorted keys, compact separators, UTF-8."""
    import hashlib

    text = json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def task_set_hash(tasks: list[Task]) -> str:
    """The content hash of a set of tasks (a domain's split): the hash of its tasks' ids and hashes, in id order."""
    return content_hash(sorted([t.id, t.content_hash] for t in tasks))


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

    @field_validator("usage", mode="before")
    @classmethod
    def _finite_usage(cls, value: Any) -> dict[str, float] | None:
        """Usage and cost enter here from agents and servers: only finite numbers are kept (`limits.finite_usage`)."""
        return None if value is None else finite_usage(value)

    #: the chat-completions dict of this message, built once (`to_chat`): a step sends the history
    #: without re-serialising it; a message is not edited after it joined a transcript
    _chat: dict[str, Any] | None = PrivateAttr(default=None)

    def chat(self) -> dict[str, Any]:
        """This message in the common chat-completions format, cached."""
        if self._chat is None:
            self._chat = _chat_dict(self)
        return self._chat


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


#: how a trial's reward is made: `paper` (the database, the outputs and the reasons, as the paper scores) or
#: `strict` (the paper's reward when the domain's procedure held, else 0; a negative ending stays -1)
Scoring = Literal["paper", "strict"]


class ProcedureViolation(BaseModel):
    """One break of a procedure rule (`core/procedure.py`): which rule, at which message of the transcript."""

    rule: Literal["identify_before", "confirm_before_write", "inform_before_decide", "own_records"]
    #: index of the message it happens at in the stored transcript (the call's assistant message)
    message: int
    tool: str | None = None
    detail: str = ""


class ProcedureParts(BaseModel):
    """Whether the agent followed the domain's declared procedure, replayed from the transcript."""

    procedure_ok: bool
    #: the rules the domain declares (a rule it does not declare is not checked and is not a violation)
    rules: list[str] = Field(default_factory=list)
    violations: list[ProcedureViolation] = Field(default_factory=list)


class RewardParts(BaseModel):
    db_match: bool
    outputs_found: list[str] = Field(default_factory=list)
    outputs_missing: list[str] = Field(default_factory=list)
    reasons_found: list[str] = Field(default_factory=list)
    reasons_missing: list[str] = Field(default_factory=list)
    terminal_done: bool | None = None
    negative_termination: bool = False
    #: None for a domain that declares no procedure (and for results stored before it was measured)
    procedure: ProcedureParts | None = None
    #: the scoring the reward was made under, and the paper's reward (they differ only under `strict`)
    scoring: Scoring = "paper"
    paper_reward: float | None = None


class EpisodeResult(BaseModel):
    task_id: str
    domain: str
    trial: int
    #: non-finite numbers would be stored as JSON null, and the row could not be read back
    reward: float = Field(allow_inf_nan=False)
    success: bool
    status: Literal["ok", "error"] = "ok"
    termination: Termination
    parts: RewardParts | None = None
    messages: list[Message] = Field(default_factory=list)
    n_steps: int = 0
    n_tool_calls: int = 0
    n_user_turns: int = 0
    usage: dict[str, float] = Field(default_factory=dict)
    duration_s: float = Field(0.0, allow_inf_nan=False)
    tags: dict[str, str] = Field(default_factory=dict)
    blocks: dict[str, Any] = Field(default_factory=dict)
    error: str | None = None
    #: what the trial's tools printed (`tool NAME printed: ...`), bounded; never the CLI's stdout
    log: list[str] = Field(default_factory=list)

    @field_validator("usage", mode="before")
    @classmethod
    def _finite_usage(cls, value: Any) -> dict[str, float]:
        return finite_usage(value)


#: the kind of a run `tau run` makes (and of every run stored before runs had kinds)
EVAL_KIND = "eval"


class RunConfig(BaseModel):
    """Everything that decides what a run measures; stored with the run so `--resume` repeats it."""

    model_config = ConfigDict(extra="forbid")

    plugins: list[str] = Field(default_factory=list)
    #: what made the run: `eval` (`tau run`), or the kind a command that runs episodes for another purpose
    #: gives its runs (a person playing a part is `play`); `latest` names the last `eval` run (`latest:KIND`)
    kind: str = Field(EVAL_KIND, min_length=1, max_length=40, pattern=r"^[a-z][a-z0-9_-]*$")
    domains: list[str] = Field(default_factory=list)
    split: str = "test"
    n_tasks: int | None = Field(None, ge=1)
    task_ids: list[str] = Field(default_factory=list)
    #: at most MAX_TRIALS: every (task, trial) pair is listed before the run starts
    trials: int = Field(3, ge=1, le=100_000)
    agent: str = "oracle"
    user: str = "scripted"
    max_steps: int = Field(200, ge=1)
    max_tool_errors: int = Field(10, ge=1)
    #: wall-clock seconds one tool call may run before it is stopped and becomes a tool error
    tool_timeout: float = Field(10.0, gt=0, allow_inf_nan=False)
    #: wall-clock seconds one trial may run before it is stopped (or abandoned) as that trial's error
    trial_timeout: float = Field(3600.0, gt=0, allow_inf_nan=False)
    #: seconds plugin code (an agent, user or hook) may hold the event loop without yielding
    block_timeout: float = Field(60.0, gt=0, allow_inf_nan=False)
    concurrency: int = Field(8, ge=1)
    executor: str = "local"
    store: str | None = None
    seed: int = 0
    #: drop tasks whose gold does not replay (named in the summary) instead of refusing to start
    skip_broken: bool = False
    #: `paper`: the paper's reward; `strict`: 0 unless the domain's procedure held too (docs/procedure.md)
    scoring: Scoring = "paper"
    options: dict[str, dict[str, Any]] = Field(default_factory=dict)

    #: role -> (model, endpoint) a plugin pointed the role at for this process only (`roles.point_role`)
    _role_endpoints: dict[str, tuple[str, str]] = PrivateAttr(default_factory=dict)

    def options_for(self, group: str, model: type[M]) -> M:
        """The typed options of one plugin option group (see `tau_register_options`)."""
        return model.model_validate(self.options.get(group, {}))

    @property
    def role_endpoints(self) -> dict[str, tuple[str, str]]:
        return self._role_endpoints


def defines_run() -> dict[str, Any]:
    """`Field(json_schema_extra=defines_run())` marks an option as defining what a run measures: `--resume`
    refuses to change it (a model, a condition), where endpoints, keys and concurrency may change."""
    return {"defines_run": True}


class ModelSettings(BaseModel):
    """How to reach one chat model; what a model client (`tau_register_model_clients`) is built from."""

    model: str
    api_base: str | None = None
    api_key: str | None = None
    temperature: float = 0.0
    client: str | None = None
    #: extra request arguments passed through to the model call (max_tokens, extra_body, ...)
    args: dict[str, Any] = Field(default_factory=dict)

    @classmethod
    def for_role(cls, role: str, model: str | None, api_base: str | None = None, api_key: str | None = None,
                 temperature: float = 0.0, client: str | None = None,
                 args: dict[str, Any] | None = None) -> ModelSettings:
        """Settings for one role's model from values a command took itself; keys as `roles.settings_for` finds them."""
        from tau_emotion.core.roles import settings_for

        return settings_for(role, model, api_base, api_key, temperature, client, args)


def _chat_dict(m: Message) -> dict[str, Any]:
    if m.role == "tool":
        return {"role": "tool", "tool_call_id": m.tool_call_id, "name": m.name, "content": m.content or ""}
    if m.role == "assistant" and m.tool_calls:
        return {"role": "assistant", "content": m.content, "tool_calls": [
            {"id": c.id, "type": "function", "function": {
                "name": c.name,
                "arguments": c.arguments if isinstance(c.arguments, str) else json.dumps(c.arguments)}}
            for c in m.tool_calls]}
    return {"role": m.role, "content": m.content or ""}


def to_chat(messages: list[Message]) -> list[dict[str, Any]]:
    """Messages in the common chat-completions format that model clients take (each built once)."""
    return [m.chat() for m in messages]
