"""The `emotion` plugin: the user's emotion as a controlled variable (tau-Emotion-Bench).

It attaches a condition (family.emotion/politeness/urgency/trust) and an anchor instruction to
every task (`tau_modify_tasks`), conditions LLM users through `tau_user_prompt` and the scripted
user through a style in `episode.extras`, and breaks every metric down by emotion. Goal, tools,
database and success condition are untouched. It pulls in the `unsatisfied` terminator.
"""

from __future__ import annotations

import random
from typing import Any

from tau_emotion.core import hookimpl
from tau_emotion.core.episode import stable_seed

tau_requires = ["unsatisfied"]

CONTROL_SUFFIX = "~control"
CLASSIFY = "classify"


def _classifier():
    from tau_emotion.emotion_pack.classifier import FeelingsClassifier

    return FeelingsClassifier.load()


@hookimpl
def tau_addhooks(pluginmanager):
    from tau_emotion.emotion_pack import hookspecs

    pluginmanager.add_hookspecs(hookspecs)


@hookimpl
def tau_register_commands(cli):
    import click

    from tau_emotion.emotion_pack.commands import emotions_group

    cli.add_command(emotions_group())
    run = cli.commands.get("run")
    if run is not None and not any(p.name == "emotion" for p in run.params):
        run.params.append(click.Option(
            ["--emotion"], default=None,
            help="emotion plugin: CONDITION_ID | random | family:NAME | emotion:NAME | classify (the feelings "
                 "classifier reads the task's instruction) | none (the no-emotion control). Default: seeded "
                 "random; tasks with their own condition keep it."))
        run.params.append(click.Option(
            ["--emotion-control"], is_flag=True, default=None,
            help="emotion plugin: run every task both with its emotion and as the no-emotion control."))


def _spec(config: Any) -> str:
    return str(config.options.get("emotion") or "random")


@hookimpl
def tau_configure(config):
    from tau_emotion.emotion_pack.taxonomy import resolve_condition_spec

    if _spec(config) != CLASSIFY:
        resolve_condition_spec(_spec(config), random.Random(0))  # raises ConditionError with the valid values


def _task_condition(task: Any) -> Any:
    from tau_emotion.emotion_pack.taxonomy import Condition, ConditionError

    e = task.emotion
    try:
        return Condition(e.family, e.emotion, e.politeness, e.urgency, e.trust)
    except ConditionError as exc:
        source = task.source or "tasks"
        raise ConditionError(f"{source}: task '{task.id}': field 'emotion': {exc}") from None


@hookimpl
def tau_modify_tasks(tasks, config, pluginmanager):
    from tau_emotion.core.models import EmotionSpec
    from tau_emotion.emotion_pack.anchors import anchor_for
    from tau_emotion.emotion_pack.taxonomy import resolve_condition_spec

    control = bool(config.options.get("emotion_control"))
    out = []
    for task in tasks:
        rng = random.Random(stable_seed(config.seed, "emotion", task.id))
        if task.emotion is not None:
            condition = _task_condition(task)
        else:
            chosen = pluginmanager.hook.tau_emotion_condition(task=task, config=config, rng=rng)
            if chosen is None and _spec(config) == CLASSIFY:
                chosen = _classifier().classify(task.user.instruction).condition
            condition = chosen or resolve_condition_spec(_spec(config), rng)
        if condition is None:
            out.append(task)
            continue
        anchor = task.emotion.anchor if task.emotion is not None and task.emotion.anchor else anchor_for(condition, rng)
        spec = EmotionSpec(**condition.to_dict(), anchor=anchor)
        out.append(task.model_copy(update={"emotion": spec}))
        if control:
            meta = {**task.meta, "emotion_control": True}
            out.append(task.model_copy(update={"id": task.id + CONTROL_SUFFIX, "emotion": None, "meta": meta}))
    return out


@hookimpl
def tau_episode_start(episode):
    if episode.task.emotion is None:
        return
    from tau_emotion.emotion_pack.scripted_style import EmotionalStyle

    episode.extras["user_style"] = EmotionalStyle(_task_condition(episode.task), episode.rng)


@hookimpl
def tau_user_prompt(episode, prompt):
    emotion = episode.task.emotion
    if emotion is None:
        return None
    from tau_emotion.emotion_pack.unsatisfied import UNSATISFIED_TOKEN

    lines = [
        "<emotion>",
        f"How you feel: {emotion.anchor}",
        f"(condition: {emotion.condition_id})",
        "Your emotion is fixed for the whole conversation, but how you express it responds to how the "
        "conversation goes: it eases when the agent makes real progress and sharpens when it stalls, repeats "
        "itself, or asks you for things it could look up.",
    ]
    if episode.pm.has_plugin("unsatisfied"):
        lines.append(
            "End with ###STOP### only when your requests are done. If you lose patience with the agent before "
            f"that, end the conversation with {UNSATISFIED_TOKEN} instead, on its own line.")
    lines.append("</emotion>")
    return "\n".join(lines)


@hookimpl
def tau_register_metrics(register):
    register("emotion", "tau_emotion.emotion_pack.metrics:emotion_metrics")
