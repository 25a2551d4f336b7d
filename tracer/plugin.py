"""The `tau tracer` commands: `graph` (the tool dependency graph), `build` (tasks for a split) and `audit`.

Importing this module costs nothing: the pipeline (networkx, Jinja2, the emotion pack's classifier,
litellm for the optional model-backed steps) is imported inside the commands.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import click

from tau_emotion.core import hookimpl
from tau_emotion.core.cli import command_pm, debug_option, guarded, plugins_option


def _domain(name: str, extra_plugins: tuple[str, ...] = ()) -> Any:
    """The domain `name`, with its Tracer hints resolved through the command's plugin manager."""
    from tau_emotion.core.domain import Domain
    from tau_emotion.tracer.hints import load_hints

    pm = command_pm(extra_plugins)
    obj = pm.catalog("domains").get(name)
    domain = obj if isinstance(obj, Domain) else obj()
    load_hints(domain, pm)
    return domain


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

    graph = build_graph(_domain(domain, extra_plugins))
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
        Path(json_path).write_text(json.dumps(graph.to_json(), indent=1) + "\n", encoding="utf-8")
        click.echo(f"wrote {json_path}", err=True)
    if dot_path:
        Path(dot_path).write_text(graph.to_dot(), encoding="utf-8")
        click.echo(f"wrote {dot_path}", err=True)


@tracer_group.command("build")
@click.argument("domain")
@click.option("--split", default="test", show_default=True, help="Split to build (test, train, ...).")
@click.option("--n", "n", default=58, show_default=True, type=click.IntRange(1), help="Tasks to build.")
@click.option("--seed", default=0, show_default=True, type=int)
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
@plugins_option
@debug_option
@guarded
def build_command(domain: str, split: str, n: int, seed: int, out: str | None, min_calls: int | None,
                  max_calls: int | None, challenge_rate: float | None, refine_model: str | None,
                  refine_api_base: str | None, feelings_model: str | None, feelings_api_base: str | None,
                  no_emotion: bool, rollout_model: str | None, rollout_api_base: str | None,
                  extra_plugins: tuple[str, ...]) -> None:
    """Build N validated tasks of SPLIT for DOMAIN; prints how many candidates each check rejected."""
    from tau_emotion.core.models import ModelSettings
    from tau_emotion.tracer.build import build_tasks, default_avoid, dump_tasks, merge_into_file, pack_tasks_path
    from tau_emotion.tracer.graph import build_graph

    dom = _domain(domain, extra_plugins)
    for warning in build_graph(dom).warnings:
        click.echo(f"warning: {warning}", err=True)
    refiner = feelings = labeler = rollout = None
    if refine_model:
        from tau_emotion.tracer.refine import LLMRefiner

        refiner = LLMRefiner(dom, command_pm().model_client(ModelSettings.for_role(
            "refine", refine_model, refine_api_base, temperature=0.7)))
    if feelings_model:
        from tau_emotion.tracer.feelings import LLMFeelings

        feelings = LLMFeelings(command_pm().model_client(ModelSettings.for_role(
            "feelings", feelings_model, feelings_api_base, temperature=0.8)))
    if not no_emotion:
        from tau_emotion.tracer.feelings import EmotionLabeler

        labeler = EmotionLabeler.from_emotion_pack()
    if rollout_model:
        from tau_emotion.tracer.rollout import RolloutCheck

        rollout = RolloutCheck(dom, rollout_model, rollout_api_base)
    target = None if out else pack_tasks_path(dom)
    report = build_tasks(dom, split, n, seed, min_calls=min_calls, max_calls=max_calls, challenge_rate=challenge_rate,
                         refiner=refiner, feelings=feelings, labeler=labeler, rollout=rollout,
                         avoid=default_avoid(dom, split))
    for line in report.summary_lines():
        click.echo(line)
    if out:
        Path(out).write_text(dump_tasks(report.tasks), encoding="utf-8")
        click.echo(f"wrote {len(report.tasks)} task(s) to {out}", err=True)
    else:
        assert target is not None
        total = merge_into_file(target, split, report.tasks)
        click.echo(f"replaced split '{split}' in {target} ({total} task(s) in the file)", err=True)


@tracer_group.command("audit")
@click.argument("domain")
@click.option("--split", default="test", show_default=True, help="Split to audit.")
@click.option("--json", "as_json", is_flag=True, help="Print the tables and checks as JSON.")
@plugins_option
@debug_option
@guarded
def audit_command(domain: str, split: str, as_json: bool, extra_plugins: tuple[str, ...]) -> None:
    """Distribution tables and consistency checks of DOMAIN's SPLIT; exits 1 when a check fails."""
    from tau_emotion.tracer.audit import audit_split
    from tau_emotion.tracer.hints import load_hints

    dom = _domain(domain, extra_plugins)
    result = audit_split(dom, split, transfer_tool=load_hints(dom).handoff_tool)
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
