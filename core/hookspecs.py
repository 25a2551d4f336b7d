"""Every hook of the core: this module is the plugin API.

Hooks are added by adding arguments, never by breaking them. Types are imported only for type
checking, so importing this module imports nothing heavy. Plugins may add their own hooks
through `tau_addhooks`; docs/hooks.md lists every hook, core and plugin-added, with who
implements it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import pluggy

if TYPE_CHECKING:
    from collections.abc import Awaitable, Callable

    import click

    from tau_emotion.core.episode import Episode
    from tau_emotion.core.models import EpisodeResult, Message, RunConfig, Task, Termination, Turn
    from tau_emotion.core.protocols import UserStyle
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
    """Check or adjust the run configuration before tasks load; raise a `TauError` for a bad option.

    A plugin reads its own options with `config.options_for(GROUP, Model)`.
    """


# ----------------------------------------------------------------------------- catalogs


@hookspec
def tau_register_domains(register: Register, pluginmanager: pluggy.PluginManager) -> None:
    """Register domains: `register(Domain(...))` or `register("name", "module:attr")`.

    `pluginmanager` is the manager whose catalog is being filled: an adapter whose tasks carry what another
    plugin's contract describes gets that contract there (a condition space: `conditions.condition_space`).
    """


@hookspec
def tau_register_agents(register: Register) -> None:
    """Register agent factories: `register("name", factory)`; `factory(view)` returns a `protocols.Agent`.

    `view` is the trial's `episode.EpisodeView`: its own task copy, the tools, a read-only state, rng,
    options, a model client; never the plugin manager or the run.
    """


@hookspec
def tau_register_users(register: Register) -> None:
    """Register user-simulator factories: `register("name", factory)`; `factory(view)` returns a `protocols.User`.

    `view` is the trial's `episode.EpisodeView` (prompt sections, user style and end tokens included).
    """


@hookspec
def tau_register_metrics(register: Register) -> None:
    """Register metrics: `register("name", fn)`, a `protocols.Metric`: `fn(results, config) -> dict`.

    Each metric's keys join the run summary; two metrics giving the same top-level key is an error.
    `results` come without their transcripts (`messages` empty), so a summary never holds a whole
    run's conversations in memory; `register("name", fn, transcripts=True)` gets them (read back
    from the store, at a cost in time and memory that grows with the run).
    """


@hookspec
def tau_register_executors(register: Register) -> None:
    """Register executors: `register("name", cls)`; `cls(concurrency)` is a `protocols.Executor`."""


@hookspec
def tau_register_stores(register: Register) -> None:
    """Register result stores: `register("name", cls, default=True?)`; `cls(path, create=...)` is a `protocols.Store`.

    `tau run`, `runs`, `show`, `export` and `--resume` reach results only through this catalog
    (`--store NAME`); the entry registered with `default=True` serves when `--store` is not given.
    """


@hookspec
def tau_register_trainers(register: Register) -> None:
    """Register trainers (SFT, DPO): `register("name", "module:attr")`, a `protocols.Trainer`; heavy imports stay lazy."""


@hookspec
def tau_register_model_clients(register: Register) -> None:
    """Register chat-model clients: `register("name", factory, default=True?)`.

    `factory(settings: ModelSettings, config: RunConfig | None)` returns a `protocols.ModelClient`.
    Every caller of a model (agents, users, task builders, collectors) gets its client here, so
    one plugin owns how models are reached (retries, timeouts, which library).
    """


@hookspec
def tau_register_options(register: Register) -> None:
    """Register a plugin's `tau run` options: `register("group", PydanticModel)`.

    Each field becomes `--field-name` (its description is the help; `bool` fields are flags), and
    also `-o field_name=VALUE`. Values land in `config.options["group"]`; read them with
    `config.options_for("group", Model)`. Setting an option of a plugin the run does not load is
    an error naming the plugin to add. A field marked `Field(json_schema_extra=models.defines_run())`
    defines the run: `--resume` refuses to change it. A plugin reads and writes only its own groups
    (role model options go through `core.roles`).
    """


@hookspec
def tau_register_roles(register: Register) -> None:
    """Register a role a chat model plays: `register("judge", roles.Role("the judge"))`.

    Each role gets the one role-model option set (`--judge-model`, `--judge-api-base`, `--judge-api-key`,
    `--judge-temperature`, `--judge-client`, `--judge-args`) in option group `judge`, owned by the
    registering plugin; read it with `roles.role_settings(config, "judge")`. The core registers `agent`
    and `user`.
    """


@hookspec
def tau_register_blocks(register: Register) -> None:
    """Register the pydantic model of a task block: `register("name", Model)`.

    A block is a top-level key of a task that the plugin of the same name owns (a plugin
    `weather` owns `"weather": {...}`). When that plugin is loaded the runner validates every selected
    task's block with the model and keeps the validated object in `task.blocks[name]`.
    """


@hookspec
def tau_register_condition_spaces(register: Register) -> None:
    """Register a space of user conditions: `register("NAME", "module:attr")`, a `conditions.ConditionSpace`.

    NAME is the task block the conditions are stored in (the registering plugin owns it). A plugin that
    designs, writes or adapts tasks for those conditions gets the space with
    `conditions.condition_space(pm, NAME)`, never by importing its owner.
    """


@hookspec
def tau_register_end_tokens(register: Register) -> None:
    """Register the tokens that end a conversation: `register("done", "###STOP###")`.

    The names are roles users ask for (`protocols.DONE`: the user's requests are settled;
    `protocols.GIVE_UP`: the user gives up). A token is declared once, by the plugin whose
    `tau_check_termination` ends the episode on it; users read them from `view.end_tokens`.
    """


@hookspec
def tau_register_suites(register: Register) -> None:
    """Register suites, named plugin lists: `register("my-suite", ["plugin-a", "plugin-b"])`."""


# ----------------------------------------------------------------------------- pipeline


@hookspec
def tau_modify_tasks(tasks: list[Task], config: RunConfig, pluginmanager: pluggy.PluginManager) -> None:
    """Filter, reorder or rewrite the selected tasks by editing `tasks` in place (`tasks[:] = ...`).

    Implementations run in turn (pytest's `pytest_collection_modifyitems`), each seeing the
    list as the previous one left it. `pluginmanager` lets a plugin call hooks other plugins added.
    """


@hookspec
def tau_task_tags(task: Task) -> dict[str, str] | None:
    """Flat tags for the results of `task`, e.g. `{"weather.kind": "rain"}`; every non-None is merged.

    Tags are stored with each result; the metrics break every figure down by any tag.
    """


@hookspec
def tau_summary_rows(summary: dict[str, Any]) -> list[tuple[str, dict[str, Any]]] | None:
    """Rows for the printed summary table: `[(label, group), ...]`, a group as the metric that gives the columns
    makes it (the `metrics` plugin: "all", each domain, then its breakdowns). Every non-None joins, in hook order."""


@hookspec
def tau_summary_columns(summary: dict[str, Any]) -> list[tuple[str, Callable[[dict[str, Any]], str]]] | None:
    """Columns for the printed summary table: `[(header, cell), ...]`; `cell(group)` is the text of one row's group.

    The core prints a `scope` column and what plugins give here; every non-None joins, in hook order.
    """


@hookspec
def tau_run_row(run: dict[str, Any]) -> dict[str, str] | None:
    """Cells for one stored run in `tau runs` (and fields of `tau runs --json`): `{"status": "complete", ...}`.

    `run` is the run as `Store.runs()` lists it (run_id, config, summary, meta, n_trials). The core gives
    run, agent, user, plugins, trials and errors; a plugin that knows better (the planned number of trials of
    a run still going) may give one of these too. Every non-None joins, in hook order.
    """


@hookspec
def tau_run_header(run: dict[str, Any]) -> list[str] | None:
    """Lines `tau show RUN` prints above the run's summary (`run` as in `tau_run_row`); every non-None joins."""


@hookspec
def tau_run_start(run: Run) -> None:
    """A run is about to execute its pending trials (`run.pending`)."""


@hookspec
def tau_run_end(run: Run, summary: dict[str, Any]) -> None:
    """A run has finished; `summary` holds the metrics that `--summary-json` writes."""


@hookspec
def tau_live_counters(run: Run) -> dict[str, int] | None:
    """Counters a plugin keeps while `run` goes, for live displays: `{"retry": 3}`. Called at each refresh (a few
    times a second): answer from memory. Every non-None is shown."""


@hookspec
def tau_run_episode(episode: Episode) -> EpisodeResult | Awaitable[EpisodeResult | None] | None:
    """Run one episode and return its result, or None to leave it to the next implementation.

    Implementations may be coroutine functions: the runner awaits the answers in hook order
    (tryfirst first) and takes the first that is not None, closing the rest unawaited, so an
    async implementation can decline by returning None. A plain function runs during the hook
    call itself. The core's own loop is the `trylast` default.
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


@hookspec
def tau_player_brief(episode: Episode) -> str | None:
    """Return a section shown to a person who plays the user (`tau play --as user`), in words for a person (a
    feeling to play, a condition), never the prompt block meant for a model; every non-None is shown."""


@hookspec(firstresult=True)
def tau_user_style(episode: Episode, neutral: UserStyle) -> UserStyle | None:
    """The `protocols.UserStyle` (phrasing, patience budget) of a rule-following user in `episode`, or None
    for `neutral`, the user's own style (a style may delegate to it what it does not change). firstresult;
    called once per episode by users that have a style (the `scripted` user)."""


@hookspec(firstresult=True)
def tau_check_termination(episode: Episode, message: Message) -> Termination | None:
    """Called after every message joins the transcript; return a Termination to end the episode. firstresult."""


@hookspec
def tau_turn_end(episode: Episode, turn: Turn) -> None:
    """A turn (an agent step with its tool results, or a user message) was added to the transcript."""
