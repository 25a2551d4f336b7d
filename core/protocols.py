"""What each catalog's entries are: the protocols agents, users, stores, executors, metrics,
trainers and model clients implement. Plugins need not inherit from them; they are the contract
(and what type checkers hold plugins to)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

if TYPE_CHECKING:
    from tau_emotion.core.models import EpisodeResult, Message, ModelSettings, RunConfig


@runtime_checkable
class Agent(Protocol):
    """Built by `factory(episode)`; plays the assistant."""

    async def act(self, messages: list[Message]) -> Message:
        """The next assistant message: tool calls, or content for the user."""
        ...


@runtime_checkable
class User(Protocol):
    """Built by `factory(episode)`; plays the customer."""

    async def start(self) -> Message:
        """The user's opening message."""
        ...

    async def respond(self, message: Message) -> Message:
        """The user's answer to an agent message."""
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
        meta (dict or None, what `save_run_meta` last stored)."""
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

    def results(self, run_id: str) -> list[EpisodeResult]: ...

    def save_summary(self, run_id: str, summary: dict[str, Any]) -> None: ...

    def summary(self, run_id: str) -> dict[str, Any] | None: ...

    def close(self) -> None: ...


Job = Callable[[], Awaitable["EpisodeResult"]]


@runtime_checkable
class Executor(Protocol):
    """Built by `cls(concurrency)`; runs episode jobs and hands each result to `on_result` as it ends.

    `on_result` returns an awaitable (the runner stores on a writer thread); awaiting it is optional,
    the runner awaits every write before it summarises. Each job is `functools.partial(run_one, run,
    task, trial)`: an executor that runs trials in other processes rebuilds them from `job.args`."""

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
