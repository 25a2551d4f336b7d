"""The `emotion` plugin: the user's emotion as a controlled variable (tau-Emotion-Bench).

It owns the task block `emotion` (an `EmotionBlock`: condition plus anchor) and attaches one to
every task (`tau_modify_tasks`), conditions LLM users through `tau_user_prompt` and the scripted
user through `tau_user_style`, and tags every result with its condition
(`tau_task_tags`), so every metric breaks down by emotion, and registers its vocabulary as the
condition space of that block (`tau_register_condition_spaces`), through which the Tracer and the
τ-Emotion-Bench adapter use it. Goal, tools, database and success condition are untouched. It pulls in the `unsatisfied` terminator.
"""

from __future__ import annotations

import random
from typing import Any

from pydantic import BaseModel, Field

from tau_emotion.core import hookimpl
from tau_emotion.core.episode import stable_seed
from tau_emotion.core.protocols import GIVE_UP

tau_requires = ["unsatisfied"]

CONTROL_SUFFIX = "~control"
CLASSIFY = "classify"
BLOCK = "emotion"
CONTROL_USER = "emotion_control_user"  # task meta: the user a --emotion-control copy plays (see control_copy)


class EmotionOptions(BaseModel):
    emotion: str | None = Field(None, description=(
        "CONDITION_ID | random | family:NAME | emotion:NAME | classify (the feelings classifier reads the task's "
        "instruction) | none (the no-emotion control). Default: seeded random; tasks with their own condition keep it."))
    emotion_control: bool = Field(False, description="Run every task both with its emotion and as the no-emotion control.")


def _classifier():
    from tau_emotion.emotion_pack.classifier import FeelingsClassifier

    return FeelingsClassifier.load()


@hookimpl
def tau_addhooks(pluginmanager):
    from tau_emotion.emotion_pack import hookspecs

    pluginmanager.add_hookspecs(hookspecs)


@hookimpl
def tau_register_commands(cli):
    from tau_emotion.emotion_pack.commands import emotions_group

    cli.add_command(emotions_group())


@hookimpl
def tau_register_options(register):
    register("emotion", EmotionOptions)


@hookimpl
def tau_register_blocks(register):
    from tau_emotion.emotion_pack.taxonomy import EmotionBlock

    register(BLOCK, EmotionBlock)


@hookimpl
def tau_register_condition_spaces(register):
    register(BLOCK, "tau_emotion.emotion_pack.taxonomy:SPACE")


def _options(config: Any) -> EmotionOptions:
    return config.options_for("emotion", EmotionOptions)


def _spec(config: Any) -> str:
    return str(_options(config).emotion or "random")


@hookimpl
def tau_configure(config):
    from tau_emotion.emotion_pack.taxonomy import resolve_condition_spec

    if _spec(config) != CLASSIFY:
        resolve_condition_spec(_spec(config), random.Random(0))  # raises ConditionError with the valid values


def control_copy(task: Any) -> Any:
    """The task's no-emotion control: no emotion block and, where the domain offers one, its no-emotion user.

    A domain whose tasks have no-emotion twins (τ-Emotion-Bench's `tasks_<split>_no_emotion`) links
    them as `meta.emotion_control_user` (`instruction`, `known`, `task`: the twin's id); the control
    then plays that instruction, not the emotional one with the block removed.
    """
    meta = {**task.meta, "emotion_control": True}
    twin = task.meta.get(CONTROL_USER)
    update: dict[str, Any] = {"id": task.id + CONTROL_SUFFIX, "meta": meta}
    if twin:
        update["user"] = task.user.model_copy(update={"instruction": twin["instruction"],
                                                      "known": dict(twin.get("known") or {})})
    return task.with_block(BLOCK, None, **update)


@hookimpl
def tau_modify_tasks(tasks, config, pluginmanager):
    from tau_emotion.emotion_pack.anchors import anchor_for
    from tau_emotion.emotion_pack.taxonomy import EmotionBlock, resolve_condition_spec

    control = _options(config).emotion_control
    out = []
    for task in tasks:
        rng = random.Random(stable_seed(config.seed, "emotion", task.id))
        block = task.block(BLOCK)
        if block is not None:
            condition = block.condition
        else:
            chosen = pluginmanager.hook.tau_emotion_condition(task=task, config=config, rng=rng)
            if chosen is None and _spec(config) == CLASSIFY:
                chosen = _classifier().classify(task.user.instruction).condition
            condition = chosen or resolve_condition_spec(_spec(config), rng)
        if condition is None:
            out.append(task)
            continue
        anchor = block.anchor if block is not None and block.anchor else anchor_for(condition, rng)
        out.append(task.with_block(BLOCK, EmotionBlock(**condition.to_dict(), anchor=anchor)))
        if control:
            out.append(control_copy(task))
    tasks[:] = out


@hookimpl
def tau_task_tags(task):
    block = task.block(BLOCK)
    if block is None or isinstance(block, dict):  # raw: the block was not validated by this plugin
        return None
    return {"emotion.condition": block.id, **{f"emotion.{k}": v for k, v in block.to_dict().items()}}


def _feeling(task: Any) -> str:
    """The task's own feelings text (its plan's situation, written for its condition), or ''."""
    situation = task.plan.situation if task.plan is not None else None
    return situation.feeling.strip() if situation is not None else ""


@hookimpl
def tau_user_style(episode, neutral):
    block = episode.task.block(BLOCK)
    if block is None:
        return None
    from tau_emotion.emotion_pack.scripted_style import EmotionalStyle

    return EmotionalStyle(block.condition, episode.rng, neutral, _feeling(episode.task) or None)


@hookimpl
def tau_summary_rows(summary):
    from tau_emotion.emotion_pack.metrics import summary_rows

    return summary_rows(summary)


@hookimpl
def tau_user_prompt(episode, prompt):
    emotion = episode.task.block(BLOCK)
    if emotion is None:
        return None
    tokens = episode.end_tokens
    lines = [
        "<emotion>",
        f"How you feel: {emotion.anchor}",
        f"(condition: {emotion.id})",
    ]
    feeling = _feeling(episode.task)
    if feeling:  # a Tracer task's own feelings text: task instruction + feeling
        lines.append(f"In your own words, your situation and feelings: {feeling}")
    lines += [
        "Your emotion is fixed for the whole conversation, but how you express it responds to how the "
        "conversation goes: it eases when the agent makes real progress and sharpens when it stalls, repeats "
        "itself, or asks you for things it could look up.",
    ]
    if GIVE_UP in tokens and tokens.done:
        lines.append(
            f"End with {tokens.done} only when your requests are done. If you lose patience with the agent before "
            f"that, end the conversation with {tokens[GIVE_UP]} instead, on its own line.")
    lines.append("</emotion>")
    return "\n".join(lines)


@hookimpl
def tau_player_brief(episode):
    """The feeling a person plays in `tau play --as user`, in plain words (the LLM user's `<emotion>` block, with
    its end-token instructions, is for a model)."""
    emotion = episode.task.block(BLOCK)
    if emotion is None or isinstance(emotion, dict):
        return None
    c = emotion.to_dict()
    lines = [f"How you feel: {emotion.anchor}",
             f"Play it as: {c.get('emotion')} ({c.get('family')}), {c.get('politeness')}, {c.get('urgency')} urgency, "
             f"{c.get('trust')}."]
    feeling = _feeling(episode.task)
    if feeling:
        lines.append(f"Your situation, in your words: {feeling}")
    lines.append("Let the feeling ease when the agent makes real progress and sharpen when it stalls.")
    return "\n".join(lines)


@hookimpl
def tau_register_metrics(register):
    register("emotion", "tau_emotion.emotion_pack.metrics:emotion_metrics")
