"""Their task records (`user_id`, `instruction`, `actions`, `outputs`) as our `Task` model.

Ids are `<domain>-<split>-<index>`, and `meta.task_index` is the index in their list, so a task can be
found again in their env. The scripted user gets the facts its instruction states (`known_facts`).
A τ-Emotion-Bench task's condition becomes our `emotion` block (`emotions.py`), and an emotional
task is linked to its no-emotion twin for the control arm (`link_no_emotion_twins`).
"""

from __future__ import annotations

import copy
import re
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from tau_emotion.core.models import Task
from tau_emotion.domain_packs.classic import emotions
from tau_emotion.domain_packs.classic.source import NO_EMOTION_SPLIT, EnvModule

if TYPE_CHECKING:
    from tau_emotion.core.conditions import ConditionSpace

_EMAIL = re.compile(r"[\w.+-]+@[\w-]+(?:\.[\w-]+)+")
_ZIP = re.compile(r"(?:\bzip code(?: is)?|\bzip(?: is)?|\bin|,)\s+(\d{5})\b", re.IGNORECASE)
_NAME = re.compile(r"\bYou(?:r)? (?:are|name is) ([A-Z][a-z]+(?: [A-Z][a-z]+)+)")


def known_facts(instruction: str, user_id: str) -> dict[str, Any]:
    """Facts the instruction gives the user, for the scripted user to answer with.

    The user id is only known when the instruction states it: in τ-bench retail the user
    authenticates by email or name and zip code, and an LLM user told its id would skip that.
    """
    known: dict[str, Any] = {}
    if user_id and user_id in instruction:
        known["user_id"] = user_id
    for key, pattern in (("name", _NAME), ("email", _EMAIL), ("zip_code", _ZIP)):
        m = pattern.search(instruction)
        if m:
            known[key] = (m.group(1) if m.groups() else m.group(0)).rstrip(".")
    return known


def _get(obj: Any, name: str, default: Any = None) -> Any:
    return obj.get(name, default) if isinstance(obj, Mapping) else getattr(obj, name, default)


def convert_task(raw: Any, *, domain: str, split: str, index: int, source: str, tools: set[str],
                 space: ConditionSpace | None = None) -> Task:
    """One of their task records as our `Task`.

    Gold actions that name no tool do nothing in their env ("Unknown action"), so they are dropped
    (kept in meta); a gold `respond` is not a tool call either. A record's emotion condition becomes the
    `emotion` block when `space` (the emotion plugin's condition space) is given; without it the task has no
    block and its emotion paragraph leaves the instruction all the same (a run without the plugin has no emotion).
    """
    actions: list[dict[str, Any]] = []
    dropped: list[dict[str, Any]] = []
    for i, action in enumerate(_get(raw, "actions") or []):
        name = _get(action, "name")
        kwargs = copy.deepcopy(dict(_get(action, "kwargs", None) or _get(action, "arguments", None) or {}))
        if name in tools:
            actions.append({"name": name, "arguments": kwargs})
        else:
            dropped.append({"index": i, "name": name, "arguments": kwargs})
    user_id = str(_get(raw, "user_id") or "")
    instruction = _get(raw, "instruction") or ""
    meta: dict[str, Any] = {"source": source, "task_index": index, "user_id": user_id}
    if _get(raw, "annotator") is not None:
        meta["annotator"] = str(_get(raw, "annotator"))
    if dropped:
        meta["dropped_gold_actions"] = dropped
    task_id = f"{domain}-{split}-{index:03d}"
    blocks: dict[str, Any] = {}
    if space is None and emotions.has_condition(lambda name: _get(raw, name)):
        instruction = emotions.split_instruction(instruction)[0]  # no emotion plugin: the user is not conditioned
    elif emotions.has_condition(lambda name: _get(raw, name)):
        rest, anchor = emotions.split_instruction(instruction)
        block, meta["emotion_source"], notes = emotions.emotion_block(space, lambda name: _get(raw, name), task_id,
                                                                      anchor)
        if block is not None:  # its anchor is the instruction's emotion paragraph, which leaves the instruction
            blocks[emotions.BLOCK] = block
            instruction = rest
        if notes:
            meta["notes"] = notes
    return Task.model_validate({
        "id": task_id,
        "domain": domain,
        "split": split,
        "user": {"instruction": instruction, "known": known_facts(instruction, user_id), "intents": []},
        "gold": {"actions": actions, "outputs": [str(o) for o in _get(raw, "outputs") or []]},
        "meta": meta,
        **blocks,
    })


def link_no_emotion_twins(tasks: list[Task]) -> None:
    """Give each task of a split with a `<split>-no-emotion` twin split its twin's user, for the control arm.

    Twins pair by index and are checked: a pair links only when the twin has the same user id and the
    same gold (actions and outputs), else the task gets a note and no link. A linked twin whose
    instruction is not the task's own without its emotion paragraph is linked with a note (their
    telecom test split words four twins slightly differently). The link is `meta.emotion_control_user`
    (instruction and known facts), which the emotion plugin's `--emotion-control` copy plays instead of
    the emotional instruction.
    """
    by_split: dict[str, list[Task]] = {}
    for task in tasks:
        by_split.setdefault(task.split, []).append(task)
    for split, twins in by_split.items():
        base = split.removesuffix(NO_EMOTION_SPLIT)
        if base == split or base not in by_split:
            continue
        twin_at = {t.meta["task_index"]: t for t in twins}
        for task in by_split[base]:
            twin = twin_at.get(task.meta["task_index"])
            if twin is None:
                _note(task, f"{task.id}: no no-emotion twin at index {task.meta['task_index']} of {split}; "
                            "not linked for the control arm")
                continue
            differs = [what for what, same in (("user", task.meta.get("user_id") == twin.meta.get("user_id")),
                                               ("gold", task.gold == twin.gold)) if not same]
            if differs:
                _note(task, f"{task.id}: its no-emotion twin {twin.id} has another {' and '.join(differs)}; "
                            "not linked for the control arm")
            else:
                task.meta["emotion_control_user"] = {"task": twin.id, "instruction": twin.user.instruction,
                                                     "known": dict(twin.user.known)}
                if twin.user.instruction.strip() != task.user.instruction.strip():
                    _note(task, f"{task.id}: its no-emotion twin {twin.id} (same user and gold, linked) words the "
                                "instruction differently")


def _note(task: Task, note: str) -> None:
    task.meta.setdefault("notes", []).append(note)


def load_tasks(env: EnvModule, *, domain: str, source: str, tools: set[str],
               space: ConditionSpace | None = None) -> tuple[list[Task], dict[str, str]]:
    """Every split's tasks, and the splits that failed to import (split -> why); `space` as in `convert_task`.

    A split that does not import is skipped, not fatal: tau-trait's telecom env imports a `TASKS_DEV`
    that its dev module lacks.
    """
    tasks: list[Task] = []
    skipped: dict[str, str] = {}
    for split in env.splits:
        try:
            raw = env.raw_tasks(split)
        except Exception as exc:
            skipped[split] = f"{type(exc).__name__}: {exc}"
            continue
        tasks.extend(convert_task(r, domain=domain, split=split, index=i, source=source, tools=tools, space=space)
                     for i, r in enumerate(raw))
    link_no_emotion_twins(tasks)
    return tasks, skipped
