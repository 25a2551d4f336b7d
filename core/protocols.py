"""What each catalog's entries are, and what plugins share: the protocols agents, users, user styles,
stores, executors, metrics, trainers and model clients implement, and the end tokens terminators
register. Plugins need not inherit from them; they are the contract (and what type checkers hold
plugins to). Two plugins that need each other meet here, never in each other's modules.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterator, Mapping
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

if TYPE_CHECKING:
    from tau_emotion.core.models import EpisodeResult, Message, ModelSettings, RunConfig, Task

#: the end-token names users ask for: the user's requests are settled / the user gives up
DONE = "done"
GIVE_UP = "give_up"
#: the termination reason of the `error` result a store lists for a stored trial row it cannot read back
UNREADABLE = "unreadable"


class EndTokens(Mapping[str, str]):
    """The tokens that end a conversation, by name, as the loaded terminator plugins registered them
    (`tau_register_end_tokens`); the plugin that registers a token is the one whose
    `tau_check_termination` ends the episode on it. Users read them here (`view.end_tokens`)."""

    __slots__ = ("_tokens",)

    def __init__(self, tokens: Mapping[str, str] | None = None):
        self._tokens = dict(tokens or {})

    def __getitem__(self, name: str) -> str:
        return self._tokens[name]

    def __iter__(self) -> Iterator[str]:
        return iter(self._tokens)

    def __len__(self) -> int:
        return len(self._tokens)

    @property
    def done(self) -> str | None:
        """The token a user ends with when everything it asked for is settled (None: no plugin ends on one)."""
        return self._tokens.get(DONE)

    @property
    def give_up(self) -> str | None:
        """The token a user ends with when it gives up: the `give_up` token, else the `done` one."""
        return self._tokens.get(GIVE_UP) or self.done


@runtime_checkable
class Agent(Protocol):
    """Built by `factory(view)` with the episode's `EpisodeView`; plays the assistant."""

    async def act(self, messages: list[Message]) -> Message:
        """The next assistant message: tool calls, or content for the user."""
        ...


@runtime_checkable
class User(Protocol):
    """Built by `factory(view)` with the episode's `EpisodeView`; plays the customer."""

    async def start(self) -> Message:
        """The user's opening message."""
        ...

    async def respond(self, message: Message) -> Message:
        """The user's answer to an agent message."""
        ...


@runtime_checkable
class UserStyle(Protocol):
    """How a rule-following simulated user sounds, and how patient it is (`tau_user_style` answers one).

    The user owns the conversation and the patience accounting: it spends `cost(kind)` of `budget` on
    each friction event ('unknown_question', 'repeated_question', 'no_progress') and, at zero, ends with
    `give_up()` plus the give-up end token. A style only words things; it never adds an end token.
    """

    budget: int

    def opening(self, request: str) -> str: ...

    def next_request(self, request: str) -> str: ...

    def answer(self, text: str) -> str: ...

    def confirm(self) -> str: ...

    def correct(self, request: str) -> str: ...

    def restate(self, missing: str, request: str) -> str: ...

    def dont_know(self) -> str: ...

    def complaint(self, patience_left: int, kind: str) -> str | None:
        """A remark on a friction event of `kind` while patience is left (None: none); only a `repeated_question`
        may say the user said it already."""
        ...

    def give_up(self) -> str:
        """The last sentence before the user's give-up token."""
        ...

    def done(self) -> str:
        """The last sentence before the user's done token."""
        ...

    def cost(self, kind: str) -> int:
        """Patience one friction event of `kind` spends."""
        ...


@runtime_checkable
class Store(Protocol):
    """Built by `cls(path, create=bool)`; keeps runs and finished trials. With `create=False` it must
    not create anything and raises a `TauError` naming `path` when there are no results there."""

    def create_run(self, run_id: str, config: RunConfig) -> None: ...

    def run_config(self, run_id: str) -> RunConfig | None: ...

    def run_ids(self) -> list[str]: ...

    def runs(self) -> list[dict[str, Any]]:
        """One dict per run, oldest first: run_id, created, config (dict), summary (dict or None), n_trials,
        meta (dict or None, what `save_run_meta` last stored) and, optionally, n_unreadable (trial rows that
        are not readable results, by a check cheap enough for a listing)."""
        ...

    def save_run_meta(self, run_id: str, meta: dict[str, Any]) -> None:
        """Keep the run's metadata (who ran what, when, and its status); a later call replaces it."""
        ...

    def run_meta(self, run_id: str) -> dict[str, Any] | None:
        """The run's metadata, or None (an older file, or a run that never started)."""
        ...

    def delete_run(self, run_id: str) -> None:
        """Remove the run, its trials and its metadata."""
        ...

    def done_trials(self, run_id: str) -> set[tuple[str, int]]:
        """(task id, trial) pairs that finished without error; `--resume` skips them."""
        ...

    def save_result(self, run_id: str, result: EpisodeResult) -> None:
        """Persist one trial at once (a later result for the same task and trial replaces it)."""
        ...

    def results(self, run_id: str) -> list[EpisodeResult]:
        """Every stored trial of the run; a row that cannot be read back is an `error` result whose termination
        reason is `UNREADABLE` (never left out: the readers count and name such rows)."""
        ...

    def save_summary(self, run_id: str, summary: dict[str, Any]) -> None: ...

    def summary(self, run_id: str) -> dict[str, Any] | None: ...

    def close(self) -> None: ...


class Job(Protocol):
    """One trial: `await job()` runs it in this process; an executor that runs trials elsewhere rebuilds it
    from `run_id`, `config` (the run's plugins and options), `task` and `trial`."""

    run_id: str
    config: RunConfig
    task: Task
    trial: int

    def __call__(self) -> Awaitable[EpisodeResult]: ...


@runtime_checkable
class Executor(Protocol):
    """Built by `cls(concurrency)`; runs episode jobs and hands each result to `on_result` as it ends.

    `on_result` returns an awaitable (the runner stores on a writer thread); awaiting it is optional,
    the runner awaits every write before it summarises."""

    async def run(self, jobs: list[Job], on_result: Callable[[EpisodeResult], Any]) -> None: ...


class Metric(Protocol):
    """`fn(results, config) -> dict`: top-level summary keys (unique across metrics). The results have no
    transcripts (`messages` empty) unless the metric was registered with `transcripts=True`."""

    def __call__(self, results: list[EpisodeResult], config: RunConfig) -> dict[str, Any]: ...


@runtime_checkable
class Trainer(Protocol):
    """A class registered as `"module:attr"`, built with no arguments; fits a model on exported trajectories.

    `options` is a pydantic model of its hyper-parameters with their defaults (each field becomes a
    `tau train NAME --flag`); `train` validates `**options` with it, imports the heavy libraries
    itself, saves the model into `output_dir` and returns a JSON-able record (losses, steps).
    """

    options: type[Any]

    def train(self, dataset: Any, output_dir: str, **options: Any) -> Any: ...


@runtime_checkable
class ModelClient(Protocol):
    """Built by `factory(settings, config)`; one chat completion per call, retried as the client sees fit.

    `messages` are in the common chat-completions format (`models.to_chat`); `tools` are JSON
    schemas. Failures after retries raise a `TauError` naming the model and endpoint.
    """

    settings: ModelSettings

    async def complete(self, messages: list[dict[str, Any]], tools: list[dict[str, Any]] | None = None) -> Message: ...
