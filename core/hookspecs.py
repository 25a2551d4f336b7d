"""Every hook of the core: this module is the plugin API.

Hooks are added by adding arguments, never by breaking them. Types are imported only for type
checking, so importing this module imports nothing heavy. Plugins may add their own hooks
(the emotion pack does) through `tau_addhooks`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import pluggy

if TYPE_CHECKING:
    import click

    from tau_emotion.core.episode import Episode
    from tau_emotion.core.models import EpisodeResult, Message, RunConfig, Task, Termination, Turn
    from tau_emotion.core.registry import Register
    from tau_emotion.core.runner import Run

hookspec = pluggy.HookspecMarker("tau_emotion")


# ----------------------------------------------------------------------------- bootstrap


@hookspec(historic=True)
def tau_addhooks(pluginmanager: pluggy.PluginManager) -> None:
    """Add hook specifications from a plugin (`pluginmanager.add_hookspecs(module)`). Historic."""


@hookspec
def tau_register_commands(cli: click.Group) -> None:
    """Add click commands to the `tau` group, or options to an existing command (`cli.commands["run"]`).

    Called with every installed plugin loaded, whatever `--plugins` selects, so `--help` is complete.
    """


@hookspec
def tau_configure(config: RunConfig) -> None:
    """Inspect or adjust the run configuration (plugin options live in `config.options`) before tasks load."""


# ----------------------------------------------------------------------------- catalogs


@hookspec
def tau_register_domains(register: Register) -> None:
    """Register domains: `register(Domain(...))` or `register("name", "module:attr")`."""


@hookspec
def tau_register_agents(register: Register) -> None:
    """Register agent factories: `register("name", factory)`; `factory(episode) -> Agent`."""


@hookspec
def tau_register_users(register: Register) -> None:
    """Register user-simulator factories: `register("name", factory)`; `factory(episode) -> User`."""


@hookspec
def tau_register_metrics(register: Register) -> None:
    """Register metrics: `register("name", fn)`; `fn(results: list[EpisodeResult], config) -> dict`."""


@hookspec
def tau_register_executors(register: Register) -> None:
    """Register executors: `register("name", cls)`; `cls(concurrency).run(jobs, on_result)` runs episode jobs."""


@hookspec
def tau_register_stores(register: Register) -> None:
    """Register result stores: `register("name", cls)`; `cls(path)` persists runs and finished trials."""


@hookspec
def tau_register_trainers(register: Register) -> None:
    """Register trainers (SFT, DPO): `register("name", "module:attr")`; heavy imports stay lazy."""


@hookspec
def tau_register_suites(register: Register) -> None:
    """Register suites, named plugin lists: `register("tau-bench", ["taubench-airline", ...])`."""


# ----------------------------------------------------------------------------- pipeline


@hookspec
def tau_modify_tasks(tasks: list[Task], config: RunConfig, pluginmanager: pluggy.PluginManager) -> list[Task] | None:
    """Filter, reorder or rewrite the selected tasks, returning a new list (or None to leave them).

    Implementations run in turn, each seeing the list the previous one returned.
    `pluginmanager` lets a plugin call hooks that other plugins added.
    """


@hookspec
def tau_run_start(run: Run) -> None:
    """A run is about to execute its pending trials (`run.pending`)."""


@hookspec
def tau_run_end(run: Run, summary: dict[str, Any]) -> None:
    """A run has finished; `summary` holds the metrics that `--summary-json` writes."""


@hookspec(firstresult=True)
def tau_run_episode(episode: Episode) -> EpisodeResult | None:
    """Run one episode and return its result. firstresult; the core default is `trylast`.

    Implementations may be coroutine functions (awaited by the runner).
    """


@hookspec
def tau_episode_start(episode: Episode) -> None:
    """An episode's agent, user and database state are ready; no message has been sent."""


@hookspec
def tau_episode_end(episode: Episode, result: EpisodeResult) -> None:
    """An episode ended and was scored; plugins may add to `result` before it is stored."""


@hookspec
def tau_user_prompt(episode: Episode, prompt: str) -> str | None:
    """Return a section to append to a user simulator's system prompt (every non-None is appended)."""


@hookspec(firstresult=True)
def tau_check_termination(episode: Episode, message: Message) -> Termination | None:
    """Called after every message joins the transcript; return a Termination to end the episode. firstresult."""


@hookspec
def tau_turn_end(episode: Episode, turn: Turn) -> None:
    """A turn (an agent step with its tool results, or a user message) was added to the transcript."""
