"""The `tau tracer` commands: `graph` (the tool dependency graph), `build` (tasks for a split), `audit`, `review`
(a person's decisions on built tasks, `review.py`) and `rollout` (observations the review shows).

Importing this module costs nothing: the pipeline (networkx, Jinja2, the emotion pack's classifier,
litellm for the optional model-backed steps) is imported inside the commands. The emotion vocabulary
comes from the command's plugin manager, as the condition space the emotion plugin registers.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import click

from tau_emotion.core import hookimpl
from tau_emotion.core.outputs import write_output
from tau_emotion.core.plugin_cli import (
    command_pm,
    config_file,
    debug_option,
    guarded,
    plugins_option,
    raw_plugin_options,
)


def _domain(name: str, extra_plugins: tuple[str, ...] = ()) -> tuple[Any, Any]:
    """The domain `name` and its Tracer hints, both asked of the command's plugin manager."""
    from tau_emotion.core.domain import Domain
    from tau_emotion.tracer.hints import load_hints

    pm = command_pm(extra_plugins)
    obj = pm.catalog("domains").get(name)
    domain = obj if isinstance(obj, Domain) else obj()
    return domain, load_hints(domain, pm)


@click.group("tracer")
def tracer_group() -> None:
    """Tracer: build a domain's benchmark and training tasks from its tool graph and database."""


@tracer_group.command("graph")
@click.argument("domain")
@click.option("--json", "json_path", type=click.Path(dir_okay=False), default=None, help="Write the graph as JSON.")
@click.option("--dot", "dot_path", type=click.Path(dir_okay=False), default=None, help="Write the graph as Graphviz DOT.")
@plugins_option
@debug_option
@guarded
def graph_command(domain: str, json_path: str | None, dot_path: str | None, extra_plugins: tuple[str, ...]) -> None:
    """Print DOMAIN's tool dependency graph: tools, edges (declared, inferred, policy) and density."""
    from tau_emotion.tracer.graph import build_graph

    graph = build_graph(*_domain(domain, extra_plugins))
    for warning in graph.warnings:
        click.echo(f"warning: {warning}", err=True)
    g = graph.graph
    click.echo(f"{domain}: {len(g)} tools, {g.number_of_edges()} edges, density {graph.density:.3f} "
               f"({', '.join(f'{k} {v}' for k, v in graph.source_counts().items())})")
    click.echo(f"entry tools: {', '.join(graph.entry_tools)}")
    for name, data in g.nodes(data=True):
        kind = "terminal" if data["terminal"] else ("write" if data["writes"] else "read")
        nexts = sorted(g.successors(name))
        click.echo(f"  {name:32} {kind:8} -> {', '.join(nexts) if nexts else '(none)'}")
    if json_path:
        write_output(json_path, json.dumps(graph.to_json(), indent=1) + "\n")
        click.echo(f"wrote {json_path}", err=True)
    if dot_path:
        write_output(dot_path, graph.to_dot())
        click.echo(f"wrote {dot_path}", err=True)


@tracer_group.command("build")
@click.argument("domain")
@click.option("--split", default="test", show_default=True, help="Split to build (test, train, ...).")
@click.option("--n", "n", default=58, show_default=True, type=click.IntRange(1), help="Tasks to build.")
@click.option("--seed", default=0, show_default=True, type=int, help="Seed of every random choice (a run repeats with it).")
@click.option("--out", type=click.Path(dir_okay=False), default=None,
              help="Write the tasks here (a JSON list); default: replace the split in the pack's data/tasks.json.")
@click.option("--min-calls", type=click.IntRange(1), default=None, help="Fewest gold calls per task (split default).")
@click.option("--max-calls", type=click.IntRange(1), default=None, help="Most gold calls per task (split default 12).")
@click.option("--challenge-rate", type=click.FloatRange(0, 1), default=None,
              help="Chance that an intent is a policy challenge (split default).")
@click.option("--refine-model", default=None, help="litellm model for the LLM refiner (default: Jinja2 templates).")
@click.option("--refine-api-base", default=None, help="OpenAI-compatible endpoint for the refiner model.")
@click.option("--feelings-model", default=None, help="litellm model for the feelings generator (default: templates).")
@click.option("--feelings-api-base", default=None, help="OpenAI-compatible endpoint for the feelings model.")
@click.option("--no-emotion", is_flag=True, help="Do not attach emotion conditions (no classifier needed).")
@click.option("--rollout-model", default=None,
              help="Also require a dual-role LLM rollout (agent and user on this model) to solve each task once.")
@click.option("--rollout-api-base", default=None, help="OpenAI-compatible endpoint for the rollout model.")
@click.option("--force", is_flag=True, help="Replace the split even where it holds tasks the Tracer did not build.")
@click.option("--review", "review_file", type=click.Path(dir_okay=False), default=None,
              help="Honour the decisions of this review file (default: the pack's data/review.jsonl, when it exists).")
@plugins_option
@debug_option
@guarded
def build_command(domain: str, split: str, n: int, seed: int, out: str | None, min_calls: int | None,
                  max_calls: int | None, challenge_rate: float | None, refine_model: str | None,
                  refine_api_base: str | None, feelings_model: str | None, feelings_api_base: str | None,
                  no_emotion: bool, rollout_model: str | None, rollout_api_base: str | None, force: bool,
                  review_file: str | None, extra_plugins: tuple[str, ...]) -> None:
    """Build N validated tasks of SPLIT for DOMAIN; prints how many candidates each check rejected.

    The tasks replace SPLIT in the pack's data/tasks.json (or go to --out); a split that holds tasks the
    Tracer did not build is only replaced with --force. The users and written entities of every other
    Tracer-built split are left out, so test and train come out clean in either order. A review file's
    decisions are honoured: rejected tasks are replaced, edits applied and re-validated, stale decisions named."""
    from tau_emotion.core.models import ModelSettings
    from tau_emotion.tracer.build import (
        build_tasks,
        default_avoid,
        dump_tasks,
        foreign_tasks,
        kept_apart,
        merge_into_file,
        pack_tasks_path,
    )
    from tau_emotion.tracer.feelings import condition_space
    from tau_emotion.tracer.graph import build_graph

    dom, hints = _domain(domain, extra_plugins)
    if not out and not force and hints.can_ground:  # without hints the build says what to do first
        hand = foreign_tasks(pack_tasks_path(dom), split)
        if hand:
            raise click.ClickException(
                f"split '{split}' of {domain} holds {len(hand)} task(s) the Tracer did not build ({', '.join(hand[:3])}"
                f"{', ...' if len(hand) > 3 else ''}) that a build would replace: move them to split 'hand', build "
                f"another split, write elsewhere with --out FILE, or pass --force to replace them")
    for warning in build_graph(dom, hints).warnings:
        click.echo(f"warning: {warning}", err=True)
    space = condition_space(command_pm())
    refiner = feelings = labeler = rollout = None
    if refine_model:
        from tau_emotion.tracer.refine import LLMRefiner

        refiner = LLMRefiner(dom, command_pm().model_client(ModelSettings.for_role(
            "refine", refine_model, refine_api_base, temperature=0.7)), hints)
    if feelings_model:
        from tau_emotion.tracer.feelings import LLMFeelings

        feelings = LLMFeelings(command_pm().model_client(ModelSettings.for_role(
            "feelings", feelings_model, feelings_api_base, temperature=0.8)), space)
    if not no_emotion:
        from tau_emotion.tracer.feelings import EmotionLabeler

        labeler = EmotionLabeler.from_space(space)
    if rollout_model:
        from tau_emotion.tracer.rollout import RolloutCheck

        rollout = RolloutCheck(dom, rollout_model, rollout_api_base)
    target = None if out else pack_tasks_path(dom)
    review = _review(dom, review_file)
    report = build_tasks(dom, split, n, seed, min_calls=min_calls, max_calls=max_calls, challenge_rate=challenge_rate,
                         refiner=refiner, feelings=feelings, labeler=labeler, space=space, rollout=rollout,
                         avoid=default_avoid(dom, split), keep_apart=kept_apart(dom, split), hints=hints,
                         skip=review.skip if review is not None else None)
    for line in report.summary_lines():
        click.echo(line)
    if review is not None:
        outcome = review.apply(dom, report.tasks, split, labeler)
        report.tasks = outcome.tasks
        for line in outcome.lines():
            click.echo(line)
    if out:
        write_output(out, dump_tasks(report.tasks))
        click.echo(f"wrote {len(report.tasks)} task(s) to {out}", err=True)
    else:
        assert target is not None
        total = merge_into_file(target, split, report.tasks)
        click.echo(f"replaced split '{split}' in {target} ({total} task(s) in the file)", err=True)


def _review(dom: Any, review_file: str | None) -> Any:
    """The decisions a build honours: --review FILE, else the pack's review file when it has one."""
    from tau_emotion.tracer.review import Review, review_path

    if review_file:
        if not Path(review_file).is_file():
            raise click.ClickException(f"review file {review_file} does not exist")
        return Review.load(Path(review_file))
    if dom.package is None:
        return None
    path = review_path(dom)
    return Review.load(path) if path.is_file() else None


def _split_tasks(dom: Any, split: str, tasks_file: str | None) -> list[Any]:
    from tau_emotion.core.domain import load_tasks_file

    tasks = load_tasks_file(Path(tasks_file), dom.name) if tasks_file else dom.tasks(split)
    tasks = [t for t in tasks if t.split == split and t.domain == dom.name]
    if not tasks:
        where = tasks_file or f"{dom.name}'s data/tasks.json"
        raise click.ClickException(f"{where} holds no {split} task of {dom.name}")
    return tasks


def _rollouts_path(dom: Any, rollouts_file: str | None) -> Path | None:
    if rollouts_file:
        return Path(rollouts_file)
    if dom.package is None:
        return None
    from importlib.resources import files

    from tau_emotion.tracer.review import ROLLOUT_FILE

    return Path(str(files(dom.package).joinpath(ROLLOUT_FILE)))


@tracer_group.command("review")
@click.argument("domain")
@click.option("--split", default="test", show_default=True, help="Split to review.")
@click.option("--task", "task_ids", multiple=True, help="Only these task ids (repeatable).")
@click.option("--unreviewed", is_flag=True, help="Only tasks without a decision on their current version.")
@click.option("--filter", "filters", multiple=True, metavar="KEY=VALUE",
              help="family=NAME, kind=NAME (a request kind) or challenge=yes|no|REASON; repeatable, all must hold.")
@click.option("--review", "review_file", type=click.Path(dir_okay=False), default=None,
              help="Where decisions go (default: the pack's data/review.jsonl).")
@click.option("--reviewer", default=None, help="Who decides (default: git config user.name).")
@click.option("--tasks", "tasks_file", type=click.Path(dir_okay=False, exists=True), default=None,
              help="Review the tasks of this file (a `tau tracer build --out` output) instead of the pack's.")
@click.option("--rollouts", "rollouts_file", type=click.Path(dir_okay=False), default=None,
              help="Rollout observations to show (default: the pack's data/rollouts.json).")
@plugins_option
@debug_option
@guarded
def review_command(domain: str, split: str, task_ids: tuple[str, ...], unreviewed: bool, filters: tuple[str, ...],
                   review_file: str | None, reviewer: str | None, tasks_file: str | None, rollouts_file: str | None,
                   extra_plugins: tuple[str, ...]) -> None:
    """Show DOMAIN's SPLIT one task at a time and take accept / reject (with a reason) / edit / skip / quit.

    Each decision is one JSON line of the review file at once; `tau tracer build` honours them. Tasks that
    failed their rollouts (`tau tracer rollout`) come first."""
    from tau_emotion.tracer.feelings import EmotionLabeler, condition_space
    from tau_emotion.tracer.review import (
        Review,
        default_reviewer,
        read_decisions,
        read_observations,
        review_loop,
        review_path,
        task_filter,
    )

    dom, _ = _domain(domain, extra_plugins)
    tasks = _split_tasks(dom, split, tasks_file)
    if task_ids:
        missing = [i for i in task_ids if i not in {t.id for t in tasks}]
        if missing:
            raise click.ClickException(f"no task {missing[0]} in {split} of {domain}")
        tasks = [t for t in tasks if t.id in task_ids]
    keep = task_filter(filters)
    tasks = [t for t in tasks if keep(t)]
    path = Path(review_file) if review_file else review_path(dom)
    if unreviewed:
        decided = Review(read_decisions(path))
        tasks = [t for t in tasks if decided.decision(t) is None]
    rollouts = _rollouts_path(dom, rollouts_file)
    observations = read_observations(rollouts) if rollouts is not None else {}
    if observations:  # the tasks that fail most first: a reviewer starts where the task may be at fault
        order = {t.id: i for i, t in enumerate(tasks)}
        tasks.sort(key=lambda t: (observations[t.id].solved / observations[t.id].trials if t.id in observations
                                  else 2, order[t.id]))
    if not tasks:
        click.echo("no task to review")
        return
    labeler = EmotionLabeler.from_space(condition_space(command_pm()))
    made = review_loop(dom, tasks, path, reviewer or default_reviewer(), observations=observations, labeler=labeler)
    click.echo(f"{sum(v for k, v in made.items() if k != 'skip')} decision(s) in {path}: "
               + (", ".join(f"{k} {v}" for k, v in sorted(made.items())) or "none"))


@tracer_group.command("rollout")
@click.argument("domain")
@click.option("--split", default="test", show_default=True, help="Split to observe.")
@click.option("--agent", default="tool_calling", show_default=True, help="Agent plugin (oracle, tool_calling, ...).")
@click.option("--user", default="llm", show_default=True, help="User simulator plugin (llm, scripted, ...).")
@click.option("--model", default=None, help="Model for both roles (the paper's dual-role observation).")
@click.option("--api-base", default=None, help="OpenAI-compatible endpoint for --model.")
@click.option("--agent-model", default=None, help="Model for the agent (default: --model).")
@click.option("--user-model", default=None, help="Model for the user (default: --model).")
@click.option("--trials", default=3, show_default=True, type=click.IntRange(1), help="Trials per task.")
@click.option("--max-steps", default=50, show_default=True, type=click.IntRange(1), help="Agent steps per episode.")
@click.option("--task", "task_ids", multiple=True, help="Only these task ids (repeatable).")
@click.option("--tasks", "tasks_file", type=click.Path(dir_okay=False, exists=True), default=None,
              help="Observe the tasks of this file instead of the pack's.")
@click.option("--out", "rollouts_file", type=click.Path(dir_okay=False), default=None,
              help="Where observations go (default: the pack's data/rollouts.json; other tasks' are kept).")
@plugins_option
@debug_option
@guarded
def rollout_command(domain: str, split: str, agent: str, user: str, model: str | None, api_base: str | None,
                    agent_model: str | None, user_model: str | None, trials: int, max_steps: int,
                    task_ids: tuple[str, ...], tasks_file: str | None, rollouts_file: str | None,
                    extra_plugins: tuple[str, ...]) -> None:
    """Run each task of DOMAIN's SPLIT TRIALS times and store how it fared (solved k of n, how trials failed)."""
    from tau_emotion.core.models import RunConfig
    from tau_emotion.tracer.review import read_observations, rollout_outcomes, write_observations

    dom, _ = _domain(domain, extra_plugins)
    tasks = _split_tasks(dom, split, tasks_file)
    if task_ids:
        tasks = [t for t in tasks if t.id in task_ids]
    groups: dict[str, dict[str, Any]] = {"progress": {"no_progress": True}}
    for role, name in (("agent", agent_model or model), ("user", user_model or model)):
        if name:
            groups[role] = {f"{role}_model": name, f"{role}_api_base": api_base}
    config = RunConfig(agent=agent, user=user, max_steps=max_steps, trials=trials, options=groups)
    _check_models(agent, user, groups)
    path = _rollouts_path(dom, rollouts_file)
    if path is None:
        raise click.ClickException(f"domain '{domain}' has no package to keep observations in; use --out FILE")
    from tau_emotion.core.manager import Selection

    base = command_pm(extra_plugins)
    owner = base.catalog("domains").entry(domain).owner
    # as `tau run --plugins emotion,PACK`: the pack, the emotion plugin (the user's condition) and the defaults
    pm = base.select(Selection.parse([owner, "emotion", *extra_plugins]))

    def show(obs: Any) -> None:
        why = "; ".join(f"{k} x{v}" for k, v in obs.failures.items())
        click.echo(f"{obs.task}: solved {obs.solved} of {obs.trials}" + (f" ({why})" if why else ""))

    observations = rollout_outcomes(dom, tasks, config, pm, progress=show)
    write_observations(path, observations, read_observations(path))
    solved = sum(1 for o in observations if o.solved == o.trials)
    click.echo(f"{solved} of {len(observations)} task(s) solved in every trial; wrote {path}", err=True)


@tracer_group.command("collect")
@click.argument("domains", nargs=-1)
@click.option("--config", "config", type=click.Path(dir_okay=False, exists=True), default=None, is_eager=True,
              callback=config_file, help="A TOML file holding any of these flags (as `tau run --config`); flags given win.")
@click.option("--preset", type=click.Choice(["high", "low"]), default=None,
              help="high: the paper's ten domains (Tracer-High); low: airline, retail, telecom, telehealth "
                   "(Tracer-Low); a domain without the split is skipped with a note.")
@click.option("--split", default="train", show_default=True, help="Task split to collect on.")
@click.option("--agent", default="tool_calling", show_default=True, help="Agent plugin.")
@click.option("--agent-model", default=None, help="Model name for the agent, e.g. openai/Qwen3-8B.")
@click.option("--agent-api-base", default=None, help="OpenAI-compatible endpoint for the agent model.")
@click.option("--agent-temperature", default=0.0, show_default=True, type=float, help="Sampling temperature of the agent model.")
@click.option("--agent-api-key", default=None, help="Key for the agent endpoint (default: TAU_API_KEY); never stored.")
@click.option("--agent-client", default=None, help="Model client plugin for the agent (default: the default client).")
@click.option("--agent-args", default=None, help="JSON object of extra request arguments for the agent model, "
                                                 "e.g. '{\"max_tokens\": 512}'.")
@click.option("--user", default="llm", show_default=True, help="User simulator plugin (llm; scripted works offline).")
@click.option("--user-model", default=None, help="Model name for the simulated user.")
@click.option("--user-api-base", default=None, help="OpenAI-compatible endpoint for the user model.")
@click.option("--user-temperature", default=0.0, show_default=True, type=float,
              help="The user simulator's temperature (the paper: 0).")
@click.option("--user-api-key", default=None, help="Key for the user endpoint (default: TAU_API_KEY); never stored.")
@click.option("--user-client", default=None, help="Model client plugin for the user (default: the default client).")
@click.option("--user-args", default=None, help="JSON object of extra request arguments for the user model.")
@click.option("--emotion", default=None, help="Emotion spec for tasks without their own (see `tau run --help`).")
@click.option("--trials", default=1, show_default=True, type=click.IntRange(1), help="Trials per task.")
@click.option("--max-steps", default=50, show_default=True, type=click.IntRange(1), help="Agent steps per episode.")
@click.option("--tasks", "n_tasks", default=None, type=click.IntRange(1), help="Only the first N tasks of each domain.")
@click.option("--task-ids", multiple=True, help="Only these task ids (comma separated or repeated).")
@click.option("--cap", default=None, type=click.IntRange(1), help="Keep at most this many trajectories per domain.")
@click.option("--rebalance/--no-rebalance", default=True, show_default=True,
              help="Under the cap, keep round-robin over emotion families (under-represented first).")
@click.option("--concurrency", default=8, show_default=True, type=click.IntRange(1), help="Episodes in flight at once.")
@click.option("--seed", default=0, show_default=True, type=int, help="Seed of every random choice (a run repeats with it).")
@click.option("--option", "-o", "raw_options", multiple=True, help="Another plugin option as KEY=VALUE (as `tau run -o`).")
@click.option("--resume", "resume_id", default=None, help="Finish an earlier collection: only its missing trials run.")
@click.option("--store", default=None, help="Result store plugin (default: the installed default store).")
@click.option("--db", "db_path", default=None, help="Where results are kept (default: as `tau run`).")
@plugins_option
@debug_option
@guarded
def collect_command(domains: tuple[str, ...], config: str | None, preset: str | None, split: str, agent: str,
                    agent_model: str | None, agent_api_base: str | None, agent_temperature: float,
                    agent_api_key: str | None, agent_client: str | None, agent_args: str | None, user: str,
                    user_model: str | None, user_api_base: str | None, user_temperature: float,
                    user_api_key: str | None, user_client: str | None, user_args: str | None, emotion: str | None,
                    trials: int,
                    max_steps: int, n_tasks: int | None, task_ids: tuple[str, ...], cap: int | None, rebalance: bool,
                    concurrency: int, seed: int, raw_options: tuple[str, ...], resume_id: str | None,
                    store: str | None, db_path: str | None, extra_plugins: tuple[str, ...]) -> None:
    """Run an agent against the emotional user on DOMAINS' train split and keep the +1 trajectories.

    Every trial is stored as it ends (resume with --resume RUN); the kept selection and its
    statistics are saved in the run's summary, where `tau export-sft` finds them.
    """
    from tau_emotion.core.manager import Selection
    from tau_emotion.core.plugin_cli import default_db, execute_run
    from tau_emotion.core.runner import prepare_run, resume_run
    from tau_emotion.tracer import collect

    db_path = db_path or default_db()
    pm = command_pm(extra_plugins)
    options: dict[str, dict[str, Any]] = {}
    for group, name, value, _key in raw_plugin_options(pm, raw_options):
        options.setdefault(group, {})[name] = value
    if resume_id:
        for group, name, value in (("agent", "agent_api_key", agent_api_key), ("user", "user_api_key", user_api_key)):
            if value:  # keys are never stored: a resume takes them again
                options.setdefault(group, {})[name] = value
        run = resume_run(resume_id, db_path, store, pm=pm, options=options)
        previous = (run.store.summary(run.run_id) or {}).get(collect.SUMMARY_KEY) or {}
        cap = cap if cap is not None else previous.get("cap")
    else:
        installed = {name: entry.load().splits for name, entry in pm.catalog("domains").items()}
        chosen, notes = collect.resolve_domains(installed, list(domains), preset, split)
        for note in notes:
            click.echo(f"note: {note}", err=True)
        for group, values in (("agent", {"agent_model": agent_model, "agent_api_base": agent_api_base,
                                         "agent_temperature": agent_temperature, "agent_api_key": agent_api_key,
                                         "agent_client": agent_client, "agent_args": agent_args}),
                              ("user", {"user_model": user_model, "user_api_base": user_api_base,
                                        "user_temperature": user_temperature, "user_api_key": user_api_key,
                                        "user_client": user_client, "user_args": user_args}),
                              ("emotion", {"emotion": emotion})):
            given = {k: v for k, v in values.items() if v is not None}
            if group != "user" or user == "llm":
                options.setdefault(group, {}).update({**given, **options.get(group, {})})
        _check_models(agent, user, options)
        ids = [x.strip() for v in task_ids for x in v.split(",") if x.strip()]
        # the plugin that registered each domain; a domain named after an installed plugin (the classic
        # suites: one entry point per domain, all from one module) also brings that plugin
        from tau_emotion.core.manager import installed_entry_points

        plugins = installed_entry_points()
        owners = [pm.catalog("domains").entry(name).owner for name in chosen] + [n for n in chosen if n in plugins]
        config = collect.collect_config(chosen, owners, split=split, agent=agent, user=user, trials=trials,
                                        max_steps=max_steps, n_tasks=n_tasks, task_ids=ids, concurrency=concurrency,
                                        seed=seed, options=options, extra_plugins=list(extra_plugins), store=store)
        run = prepare_run(config, db_path, pm=pm.select(Selection.parse(config.plugins)))
    summary = execute_run(run, "collect", f"tau tracer collect --resume {run.run_id} --db {db_path}")
    rep = collect.finish(run, summary, cap, rebalance)
    collect.print_report(rep)
    if rep.kept:
        click.echo(f"kept {len(rep.kept)} trajectories; export them with: "
                   f"tau export-sft {run.run_id} --db {db_path} --out DIR", err=True)
    else:
        click.echo("kept no trajectories (no trial ended with reward +1): nothing to export", err=True)
    if summary.get("errors"):
        click.echo(f"warning: {summary['errors']} trial(s) ended in error; re-run them with: "
                   f"tau tracer collect --resume {run.run_id} --db {db_path}", err=True)


@click.command("export-sft")
@click.argument("run_ids", nargs=-1, required=True)
@click.option("--out", required=True, type=click.Path(file_okay=False), help="Folder for the dataset, JSONL and card.")
@click.option("--format", "fmt", type=click.Choice(["sft", "dpo"]), default="sft", show_default=True,
              help="sft: +1 conversations for SFTTrainer; dpo: +1/-1 pairs of the same task for DPOTrainer.")
@click.option("--validation", default=0.1, show_default=True, type=click.FloatRange(0, 0.9),
              help="Share of tasks held out for the validation split.")
@click.option("--seed", default=0, show_default=True, type=int, help="Seed of the train/validation split and the caps' draw.")
@click.option("--mixture", type=click.Choice(["tracer-high", "tracer-low"]), default=None,
              help="The paper's training mixture: tracer-high (all ten domains) or tracer-low (the four seen ones), "
                   "at most 250 rows per domain unless --cap says otherwise; other domains' rows are left out.")
@click.option("--cap", "caps", multiple=True, metavar="N|DOMAIN=N",
              help="With --mixture: the per-domain cap (N or none), or one domain's (DOMAIN=N); repeatable.")
@click.option("--store", default=None, help="Result store plugin (default: the installed default store).")
@click.option("--db", "db_path", default=None, help="Where results are kept (default: as `tau run`).")
@plugins_option
@debug_option
@guarded
def export_sft_command(run_ids: tuple[str, ...], out: str, fmt: str, validation: float, seed: int,
                       mixture: str | None, caps: tuple[str, ...],
                       store: str | None, db_path: str | None, extra_plugins: tuple[str, ...]) -> None:
    """Write RUN_IDS' trajectories as JSONL, a dataset card and (with `datasets`) a save_to_disk dataset.

    A collection run (`tau tracer collect`) contributes the trajectories it kept; any other run
    its +1 trials. With --format dpo, tasks with both a +1 and a -1 trajectory across the runs
    give preference pairs.
    """
    from tau_emotion.core.domain import Domain
    from tau_emotion.core.plugin_cli import default_db
    from tau_emotion.core.runner import open_store, resolve_run
    from tau_emotion.tracer import export

    if caps and not mixture:
        raise export.ExportError("--cap needs --mixture (tracer-high or tracer-low)")
    mix = export.parse_caps(export.MIXTURES[mixture], caps) if mixture else None
    db_path = db_path or default_db()
    pm = command_pm(extra_plugins)
    opened = open_store(pm, store, db_path, create=False)
    runs = {}
    for run_id in dict.fromkeys(resolve_run(opened, ref, db_path) for ref in run_ids):
        runs[run_id] = (opened.results(run_id), opened.summary(run_id))
    from tau_emotion.core.plugin_cli import unreadable, unreadable_error

    lost = {run_id: unreadable(results) for run_id, (results, _) in runs.items()}
    lost = {run_id: n for run_id, n in lost.items() if n}

    def domain(name: str) -> Domain:
        obj = pm.catalog("domains").get(name)
        return obj if isinstance(obj, Domain) else obj()

    from collections import Counter

    exporter = export.Exporter(domain)
    dropped: Counter[str] = Counter()
    rows = export.sft_rows(runs, exporter, dropped) if fmt == "sft" else export.dpo_rows(runs, exporter, dropped)
    unit = "+1 trajectories" if fmt == "sft" else "+1/-1 pair(s)"
    if not rows:
        what = "trajectories with reward +1" if fmt == "sft" else "tasks with both a +1 and a -1 trajectory"
        if dropped:
            raise export.ExportError(f"nothing to export: all {sum(dropped.values())} {unit} in run(s) "
                                     f"{', '.join(runs)} were dropped: {export.describe_drops(dropped)}")
        raise export.ExportError(f"nothing to export: no {what} in run(s) {', '.join(runs)}")
    if dropped:
        click.echo(f"dropped {sum(dropped.values())} of {sum(dropped.values()) + len(rows)} {unit}: "
                   f"{export.describe_drops(dropped)}", err=True)
    report = None
    if mix is not None:
        rows, report = export.mix(rows, mix, seed)
        _mixture_notes(report)
        if not rows:
            raise export.ExportError(f"nothing to export: no row of run(s) {', '.join(runs)} is from a domain of "
                                     f"mixture {mix.name} ({', '.join(mix.domains)})")
    splits = export.split_rows(rows, validation, seed)
    saved = export.write(splits, Path(out), fmt, list(runs), mixture=report, dropped=dropped)
    counts = ", ".join(f"{len(v)} {k}" for k, v in splits.items())
    if saved:
        click.echo(f"wrote {counts} {fmt} row(s) to {out}: JSONL and a dataset (datasets.load_from_disk)", err=True)
    else:
        click.echo(f"wrote {counts} {fmt} row(s) to {out} as JSONL; `datasets` is not installed, so no "
                   f"save_to_disk copy (`tau train` reads the JSONL too; for the copy: {export.DATASETS_HINT})", err=True)
    if lost:  # the dataset is written, but short of trajectories no one could read
        raise unreadable_error(sum(lost.values()), ",".join(lost), "the dataset")


def _mixture_notes(report: dict[str, Any]) -> None:
    """One line each: what the mixture kept per domain, which of its domains gave nothing, what it left out."""
    counts = report["counts"]
    if any(c["available"] for c in counts.values()):
        click.echo(f"mixture {report['name']}: " + ", ".join(
            f"{d} {c['kept']}" + (f" of {c['available']} (cap {c['cap']})" if c["kept"] < c["available"] else "")
            for d, c in counts.items() if c["available"]), err=True)
    empty = [d for d, c in counts.items() if not c["available"]]
    if empty:
        click.echo(f"note: mixture {report['name']}: no trajectories from {', '.join(empty)} "
                   f"(collect on their train split to include them)", err=True)
    if report["left_out"]:
        click.echo(f"note: mixture {report['name']}: left out rows of other domains: "
                   + ", ".join(f"{d} {n}" for d, n in sorted(report["left_out"].items())), err=True)


def _check_models(agent: str, user: str, options: dict[str, dict[str, Any]]) -> None:
    """Fail before any trial runs when the model-backed agent or user has no model (through the roles contract)."""
    from tau_emotion.core.models import RunConfig
    from tau_emotion.core.roles import role_settings

    config = RunConfig(options={k: v for k, v in options.items() if k in ("agent", "user")})
    if agent == "tool_calling":
        role_settings(config, "agent")
    if user == "llm":
        role_settings(config, "user")


@tracer_group.command("audit")
@click.argument("domain")
@click.option("--split", default="test", show_default=True, help="Split to audit.")
@click.option("--json", "as_json", is_flag=True, help="Print the tables and checks as JSON.")
@click.option("--review", "review_file", type=click.Path(dir_okay=False, exists=True), default=None,
              help="Count review coverage against this review file (default: the pack's data/review.jsonl).")
@plugins_option
@debug_option
@guarded
def audit_command(domain: str, split: str, as_json: bool, review_file: str | None,
                  extra_plugins: tuple[str, ...]) -> None:
    """Distribution tables and consistency checks of DOMAIN's SPLIT; exits 1 when a check fails."""
    from tau_emotion.tracer.audit import audit_split
    from tau_emotion.tracer.feelings import condition_space
    dom, hints = _domain(domain, extra_plugins)
    result = audit_split(dom, split, space=condition_space(command_pm()), transfer_tool=hints.handoff_tool,
                         visible_ids=hints.visible_ids)
    from tau_emotion.tracer.review import coverage, read_decisions, review_path

    path = Path(review_file) if review_file else review_path(dom) if dom.package is not None else None
    decisions = read_decisions(path) if path is not None else []
    result.tables["review"] = coverage(dom.tasks(split), decisions)
    click.echo(json.dumps(result.to_json(), indent=1) if as_json else "\n".join(result.lines()))
    if not result.ok:
        raise SystemExit(1)


@hookimpl
def tau_addhooks(pluginmanager: Any) -> None:
    from tau_emotion.tracer.hints import TracerHooks

    pluginmanager.add_hookspecs(TracerHooks)


@hookimpl
def tau_register_commands(cli: click.Group) -> None:
    cli.add_command(tracer_group)
    cli.add_command(export_sft_command)
