"""A person's review of generated tasks: decisions kept as data and honoured on every rebuild.

A decision (`Decision`, one JSON line of the pack's `data/review.jsonl`) judges one task as the generator made
it, named by its id and its content hash (`Task.content_hash` of the task without its review record: for a task
not yet reviewed, what `tau tasks --json` shows as `content_hash`). A rebuild (`tau tracer build`) asks
`Review.skip` of every task it finishes, so a rejected task is left out and the next valid candidate is built in
its place; `Review.apply` then applies the edits (re-validated: gold replay, the policy, the gold scoring 1, the
feelings read back as their condition) and writes each task's review record (`ReviewRecord`, `meta.review`).
A decision about a task the generator no longer makes (its hash is not among what the build offered) is stale:
reported, never applied. `tau tracer review` (`review_loop`) is the terminal loop that makes decisions, and
`tau tracer rollout` (`rollout_outcomes`) the observations it shows.
"""

from __future__ import annotations

import json
import os
import subprocess
from collections import Counter
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from tau_emotion.core.errors import TauError
from tau_emotion.core.models import Action, Gold, Task, content_hash
from tau_emotion.core.state import write_text_atomic

if TYPE_CHECKING:
    from collections.abc import Callable, Iterable

    from tau_emotion.core.domain import Domain
    from tau_emotion.tracer.feelings import EmotionLabeler

#: the fields an edit may change: the instruction, the feelings text (the plan's situation) and the gold
EDITABLE = ("instruction", "feeling", "gold")
REVIEW_FILE = "data/review.jsonl"
ROLLOUT_FILE = "data/rollouts.json"


class ReviewError(TauError):
    """A review file or an edit is wrong; the message names the file or task and why."""


class Decision(BaseModel):
    """One reviewer's judgement of one generated task (one line of the review file)."""

    model_config = ConfigDict(extra="forbid")

    task: str
    #: the content hash of the task as the generator made it (`generated_hash`)
    hash: str
    decision: Literal["accept", "reject", "edit"]
    reason: str = ""
    #: for an edit, the changed fields (`EDITABLE`): `{"instruction": "..."}`, `{"gold": {...}}`
    edit: dict[str, Any] | None = None
    reviewer: str
    at: str


class ReviewRecord(BaseModel):
    """What a task records of its review (`meta.review`); a task without one was not reviewed."""

    model_config = ConfigDict(extra="forbid")

    #: None: not reviewed (a replacement of a rejected task, say)
    decision: Literal["accept", "edit"] | None = None
    #: the content hash of the task as generated, before any edit: what the decision judged
    hash: str | None = None
    reviewer: str = ""
    at: str = ""
    reason: str = ""
    #: the fields the edit changed
    fields: list[str] = Field(default_factory=list)
    #: hashes of the rejected tasks this one was built in place of
    replaces: list[str] = Field(default_factory=list)


def record_of(task: Task) -> ReviewRecord | None:
    raw = task.meta.get("review")
    if raw is None:
        return None
    try:
        return ReviewRecord.model_validate(raw)
    except ValidationError as exc:
        raise ReviewError(f"task '{task.id}': meta.review is malformed: {exc.errors()[0]['msg']}") from None


def generated_hash(task: Task) -> str:
    """The content hash of `task` without its review record: a review does not change what it judged."""
    if "review" not in task.meta:
        return task.content_hash
    row = task.model_dump(mode="json")
    row["meta"].pop("review", None)
    return content_hash(row)


def judged_hash(task: Task) -> str:
    """The hash a decision about `task` names: the generated task's (an edited task keeps its pre-edit hash)."""
    record = record_of(task)
    return record.hash if record is not None and record.hash else generated_hash(task)


def review_path(domain: Domain) -> Path:
    if domain.package is None:
        raise ReviewError(f"domain '{domain.name}' has no package to keep a review file in; use --review FILE")
    from importlib.resources import files

    return Path(str(files(domain.package).joinpath(REVIEW_FILE)))


def read_decisions(path: Path) -> list[Decision]:
    """The decisions of a review file, in file order (none when it does not exist); a bad line is one error."""
    if not path.exists():
        return []
    out = []
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        if not line.strip():
            continue
        try:
            out.append(Decision.model_validate_json(line))
        except ValidationError as exc:
            first = exc.errors()[0]
            where = ".".join(str(p) for p in first["loc"]) or "line"
            raise ReviewError(f"{path}:{number}: {where}: {first['msg']}") from None
    return out


def append_decision(path: Path, decision: Decision) -> None:
    """Add one line to the review file; the file is replaced atomically (a reader never sees half a line)."""
    old = path.read_text(encoding="utf-8") if path.exists() else ""
    if old and not old.endswith("\n"):
        old += "\n"
    path.parent.mkdir(parents=True, exist_ok=True)
    write_text_atomic(path, old + decision.model_dump_json(exclude_none=True) + "\n")


def default_reviewer() -> str:
    """`git config user.name`, else $USER."""
    try:
        name = subprocess.run(["git", "config", "user.name"], capture_output=True, text=True, timeout=5).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        name = ""
    return name or os.environ.get("USER", "") or "unknown"


def now() -> str:
    return datetime.now(UTC).replace(microsecond=0).isoformat().replace("+00:00", "Z")


# --------------------------------------------------------------------------- edits


def edited(task: Task, edit: dict[str, Any]) -> Task:
    """`task` with an edit's fields replaced (the review record untouched); a malformed edit is a ReviewError."""
    unknown = sorted(set(edit) - set(EDITABLE))
    if unknown:
        raise ReviewError(f"task '{task.id}': cannot edit '{unknown[0]}' (editable: {', '.join(EDITABLE)})")
    update: dict[str, Any] = {}
    if "instruction" in edit:
        if not isinstance(edit["instruction"], str) or not edit["instruction"].strip():
            raise ReviewError(f"task '{task.id}': the edited instruction is empty or not text")
        update["user"] = task.user.model_copy(update={"instruction": edit["instruction"].strip()})
    if "gold" in edit:
        try:
            update["gold"] = Gold.model_validate(edit["gold"])
        except ValidationError as exc:
            first = exc.errors()[0]
            raise ReviewError(f"task '{task.id}': the edited gold is malformed at "
                              f"{'.'.join(str(p) for p in first['loc'])}: {first['msg']}") from None
    if "feeling" in edit:
        if task.plan is None or task.plan.situation is None:
            raise ReviewError(f"task '{task.id}': has no situation to hold an edited feeling")
        if not isinstance(edit["feeling"], str) or not edit["feeling"].strip():
            raise ReviewError(f"task '{task.id}': the edited feeling is empty or not text")
        situation = task.plan.situation.model_copy(update={"feeling": edit["feeling"].strip()})
        update["plan"] = task.plan.model_copy(update={"situation": situation})
    copy = task.model_copy(update=update)
    copy._source = task.source
    return copy


def edit_problem(domain: Domain, task: Task, labeler: EmotionLabeler | None = None) -> str | None:
    """Why an edited task is not valid (None when it is): gold replay, the policy, the gold scoring 1, the plan's
    calls, and (with a labeler) the feelings read back as the task's condition."""
    from tau_emotion.core.reward import check_task

    state = domain.database.state()
    refusals = task.plan.refusals if task.plan is not None else []
    for i, action in enumerate([*task.gold.actions, None]):
        for refusal in [r for r in refusals if r.after == i]:
            if not domain.violations(state, refusal.call):
                return f"the refused {refusal.call.name} breaks no policy rule any more, so refusing is not required"
        if action is None:
            break
        if action.name not in domain.toolset.tools:
            return f"gold call {i} names unknown tool {action.name}"
        if domain.toolset.tools[action.name].writes:
            broken = domain.violations(state, Action(name=action.name, arguments=action.arguments))
            if broken:
                return f"gold call {i} ({action.name}) breaks the policy: {broken[0].reason}"
        text, is_error = domain.toolset.call(state, action.name, action.arguments)
        if is_error:
            return f"gold call {i} ({action.name}) fails on replay: {(text or '').splitlines()[0] if text else ''}"
    if task.plan is not None:
        calls = len(task.gold.actions)
        for request in task.plan.requests:
            if any(not 0 <= j < calls for j in request.actions):
                return f"the plan's {request.kind} request names gold call(s) {request.actions}, the gold has {calls}"
    problem = check_task(domain, task)
    if problem is not None:
        return problem.split(": ", 1)[-1] if problem.startswith(f"task '{task.id}'") else problem
    block = task.block("emotion")
    if labeler is not None and block and task.plan is not None and task.plan.situation is not None:
        from tau_emotion.tracer.feelings import agrees

        condition = {k: block[k] for k in ("family", "emotion", "politeness", "urgency", "trust") if k in block}
        reading = labeler.read(task.plan.situation.feeling)
        if not agrees(condition, reading):
            return (f"the edited feeling reads as {reading['family']}.{reading['emotion']}, not the task's "
                    f"{condition.get('family')}.{condition.get('emotion')}")
    return None


# --------------------------------------------------------------------------- honouring decisions


@dataclass
class ReviewOutcome:
    tasks: list[Task]
    stale: list[Decision] = field(default_factory=list)
    counts: Counter = field(default_factory=Counter)

    def lines(self) -> list[str]:
        parts = ", ".join(f"{k} {self.counts[k]}" for k in ("accepted", "edited", "rejected") if self.counts[k])
        out = [f"  review: {parts or 'no decision applied'}" + (f"; stale {len(self.stale)}" if self.stale else "")]
        out += [f"  stale: task {d.task}: the {d.decision} by {d.reviewer} at {d.at} judged a task the generator no "
                f"longer makes (hash {d.hash[:12]})" for d in self.stale]
        return out


class Review:
    """The decisions of a review file, the latest per (task, hash), as a rebuild honours them."""

    def __init__(self, decisions: Iterable[Decision], source: str = "review file"):
        self.source = source
        self.latest: dict[tuple[str, str], Decision] = {}
        for d in decisions:
            self.latest[(d.task, d.hash)] = d
        self.offered: set[tuple[str, str]] = set()
        self.replaced: dict[str, list[str]] = {}

    @classmethod
    def load(cls, path: Path) -> Review:
        return cls(read_decisions(path), str(path))

    def decision(self, task: Task) -> Decision | None:
        return self.latest.get((task.id, judged_hash(task)))

    def skip(self, task: Task) -> bool:
        """For `build_tasks(skip=...)`: whether a finished task is one a person rejected (it is then replaced)."""
        key = (task.id, generated_hash(task))
        self.offered.add(key)
        decision = self.latest.get(key)
        if decision is not None and decision.decision == "reject":
            self.replaced.setdefault(task.id, []).append(key[1])
            return True
        return False

    def apply(self, domain: Domain, tasks: list[Task], split: str,
              labeler: EmotionLabeler | None = None) -> ReviewOutcome:
        """The built tasks with edits applied and validated and each one's review record; the stale decisions.

        An edit that breaks the task is a ReviewError naming the task and why (never dropped)."""
        out = ReviewOutcome(tasks=[])
        for task in tasks:
            key = (task.id, generated_hash(task))
            self.offered.add(key)
            decision = self.latest.get(key)
            replaces = self.replaced.get(task.id, [])
            if decision is not None and decision.decision == "reject":  # a build that did not ask `skip`
                raise ReviewError(f"task '{task.id}' was rejected in {self.source}; rebuild it with the review file")
            if decision is not None and decision.decision == "edit":
                task = edited(task, decision.edit or {})
                problem = edit_problem(domain, task, labeler)
                if problem is not None:
                    raise ReviewError(f"task '{task.id}': the edit by {decision.reviewer} at {decision.at} "
                                      f"({', '.join(sorted(decision.edit or {}))}) is not valid: {problem}")
            if decision is not None or replaces:
                record = ReviewRecord(replaces=replaces)
                if decision is not None:
                    record = ReviewRecord(decision=decision.decision, hash=key[1], reviewer=decision.reviewer,
                                          at=decision.at, reason=decision.reason, fields=sorted(decision.edit or {}),
                                          replaces=replaces)
                    out.counts["accepted" if decision.decision == "accept" else "edited"] += 1
                task = task.model_copy(update={"meta": {**task.meta, "review": record.model_dump(exclude_defaults=True)}})
            out.tasks.append(task)
        out.counts["rejected"] = sum(len(v) for v in self.replaced.values())
        ids = {t.id for t in tasks}
        prefix = f"{domain.name}-{split}-"
        out.stale = [d for key, d in self.latest.items() if key not in self.offered
                     and (d.task in ids or d.task.startswith(prefix))]
        return out


def coverage(tasks: list[Task], decisions: list[Decision]) -> dict[str, int]:
    """A built split's review coverage: tasks reviewed (accepted, edited), rejected tasks replaced, decisions not yet
    applied, and tasks unreviewed. A decision not applied is pending when the split holds its task (a rebuild applies
    it) or was not yet built with a review file at all (no task has a review record); else it is stale: a build that
    read the review file did not make its task."""
    counts = Counter()
    held: dict[tuple[str, str], str] = {}  # (id, hash) -> what the split did with it
    for task in tasks:
        record = record_of(task)
        if record is not None and record.decision is not None:
            counts["accepted" if record.decision == "accept" else "edited"] += 1
            held[(task.id, record.hash or "")] = record.decision
        for h in record.replaces if record is not None else []:
            counts["rejected"] += 1
            held[(task.id, h)] = "reject"
    ids = {t.id for t in tasks}
    now_made = {(t.id, judged_hash(t)) for t in tasks}
    latest: dict[tuple[str, str], Decision] = {}
    for d in decisions:
        if d.task in ids:
            latest[(d.task, d.hash)] = d
    reviewed_build = any(record_of(t) is not None for t in tasks)
    for key, d in latest.items():
        if held.get(key) == d.decision:
            continue
        counts["pending" if key in now_made or not reviewed_build else "stale"] += 1
    counts["reviewed"] = counts["accepted"] + counts["edited"]
    counts["unreviewed"] = len(tasks) - counts["reviewed"]
    return {k: counts[k] for k in ("reviewed", "accepted", "edited", "rejected", "stale", "pending", "unreviewed")}


# --------------------------------------------------------------------------- rollout observations


class Observation(BaseModel):
    """How a task fared in rollouts (`tau tracer rollout`): solved by `solved` of `trials`, and how the rest failed."""

    model_config = ConfigDict(extra="forbid")

    task: str
    hash: str
    trials: int
    solved: int
    failures: dict[str, int] = Field(default_factory=dict)
    agent: str = ""
    user: str = ""


def failure_reasons(result: Any) -> list[str]:
    """Why a trial did not score 1, in a reviewer's words (one entry per shortfall)."""
    if result.error:
        text = str(result.error).splitlines()[0]
        text = text.split(f"trial {result.trial}: ", 1)[-1]  # the same failure in every trial counts once per trial
        return [f"error: {text[:120]}"]
    parts = result.parts
    out = []
    if parts is None:
        return [f"ended: {result.termination.reason}"]
    if not parts.db_match:
        out.append("database differs from the gold's")
    out += [f"output not told: {o}" for o in parts.outputs_missing]
    out += [f"reason not explained: {r}" for r in parts.reasons_missing]
    if parts.terminal_done is False:
        out.append("no handover")
    if parts.negative_termination:
        out.append(f"negative ending: {result.termination.reason}")
    return out or [f"ended: {result.termination.reason}"]


def read_observations(path: Path) -> dict[str, Observation]:
    if not path.exists():
        return {}
    try:
        rows = json.loads(path.read_text(encoding="utf-8"))
        return {o.task: o for o in (Observation.model_validate(r) for r in rows)}
    except (ValueError, ValidationError) as exc:
        raise ReviewError(f"{path}: not a rollout file ({str(exc).splitlines()[0]})") from None


def write_observations(path: Path, observations: list[Observation], keep: dict[str, Observation]) -> None:
    """Write `observations` over those of the same tasks in `keep` (other tasks' observations stay)."""
    merged = {**keep, **{o.task: o for o in observations}}
    rows = [merged[k].model_dump() for k in sorted(merged)]
    path.parent.mkdir(parents=True, exist_ok=True)
    write_text_atomic(path, json.dumps(rows, indent=1, ensure_ascii=False) + "\n")


def rollout_outcomes(domain: Domain, tasks: list[Task], config: Any, pm: Any,
                     progress: Callable[[Observation], None] | None = None) -> list[Observation]:
    """Run every task `config.trials` times with the configured agent and user; one observation per task."""
    import asyncio

    from tau_emotion.core.runner import Run, run_one, validate_blocks

    hashes = {t.id: judged_hash(t) for t in tasks}
    tasks = [validate_blocks(pm, t) for t in tasks]
    pm.hook.tau_modify_tasks(tasks=tasks, config=config, pluginmanager=pm)  # as a run does: the user's condition
    run = Run(run_id="tracer-review-rollout", config=config, pm=pm, store=None, domains={domain.name: domain},
              tasks=tasks)
    out = []
    for task in tasks:
        failures: Counter = Counter()
        solved = 0
        for trial in range(config.trials):
            result = asyncio.run(run_one(run, task, trial))
            if result.reward == 1.0:
                solved += 1
            else:
                failures.update(failure_reasons(result))
        obs = Observation(task=task.id, hash=hashes[task.id], trials=config.trials, solved=solved,
                          failures=dict(failures.most_common()), agent=config.agent, user=config.user)
        out.append(obs)
        if progress is not None:
            progress(obs)
    return out


# --------------------------------------------------------------------------- the terminal loop


def task_filter(spec: tuple[str, ...]) -> Callable[[Task], bool]:
    """`--filter family=anger --filter kind=refund --filter challenge=yes|no|REASON`: all must hold."""
    from tau_emotion.tracer.plan import policy_challenge, request_kinds

    wanted: list[tuple[str, str]] = []
    for item in spec:
        key, sep, value = item.partition("=")
        if not sep or key not in ("family", "kind", "challenge"):
            raise ReviewError(f"--filter {item!r}: expected family=NAME, kind=NAME or challenge=yes|no|REASON")
        wanted.append((key, value.strip().lower()))

    def keep(task: Task) -> bool:
        for key, value in wanted:
            if key == "family" and str((task.block("emotion") or {}).get("family", "")).lower() != value:
                return False
            if key == "kind" and value not in [k.lower() for k in request_kinds(task)]:
                return False
            if key == "challenge":
                has = bool(policy_challenge(task))
                if value in ("yes", "no"):
                    if has != (value == "yes"):
                        return False
                elif value not in [r.lower() for r in task.gold.reasons] and not (
                        value == "transfer" and task.plan is not None and any(r.goal.handover for r in task.plan.requests)):
                    return False
        return True

    return keep


def _gold_results(domain: Domain, task: Task) -> list[tuple[Action, str, bool]]:
    state = domain.database.state()
    out = []
    for action in task.gold.actions:
        try:
            text, is_error = domain.toolset.call(state, action.name, action.arguments)
        except Exception as exc:  # a broken gold is shown, not a crash of the review
            text, is_error = f"{type(exc).__name__}: {exc}", True
        out.append((action, text or "", is_error))
    return out


def _policy_lines(domain: Domain, task: Task) -> list[str]:
    """The rules the task's refusals meet (replayed to the point of each) and the reasons the gold names."""
    lines = []
    refusals = task.plan.refusals if task.plan is not None else []
    if refusals:
        state = domain.database.state()
        for i, action in enumerate([*task.gold.actions, None]):
            for refusal in [r for r in refusals if r.after == i]:
                for v in domain.violations(state, refusal.call):
                    lines.append(f"refuse {refusal.call.name} {json.dumps(refusal.call.arguments)}: rule {v.rule}: "
                                 f"{v.reason}")
            if action is not None:
                domain.toolset.call(state, action.name, action.arguments)
    for reason in task.gold.reasons:
        phrasing = domain.refusal_reasons.get(reason, [reason])[0]
        lines.append(f"reason {reason}: the agent must say e.g. \"{phrasing}\"")
    return lines


def render_task(domain: Domain, task: Task, *, decision: Decision | None, observation: Observation | None,
                position: str) -> list[Any]:
    """What an author needs to judge the task, as rich renderables (data is never read as markup)."""
    from rich.panel import Panel
    from rich.text import Text

    record = record_of(task)
    status = "unreviewed"
    if decision is not None:
        status = f"{decision.decision} by {decision.reviewer} at {decision.at}" + (
            f" ({decision.reason})" if decision.reason else "")
    elif record is not None and record.replaces:
        status = f"unreviewed (built in place of {len(record.replaces)} rejected)"
    head = Text(f"{position}  {task.id}  hash {judged_hash(task)[:12]}  {status}", style="bold")
    out: list[Any] = [head, Panel(Text(task.user.instruction), title="instruction", title_align="left")]
    block = task.block("emotion") or {}
    feeling = task.plan.situation.feeling if task.plan is not None and task.plan.situation is not None else ""
    cond = " ".join(f"{k}={block[k]}" for k in ("family", "emotion", "politeness", "urgency", "trust") if k in block)
    text = Text(f"condition: {cond or '(none)'}\n")
    text.append(f"feeling: {feeling}\n")
    text.append(f"anchor: {block.get('anchor', '')}")
    out.append(Panel(text, title="feeling", title_align="left"))
    plan = Text()
    for i, request in enumerate(task.plan.requests if task.plan is not None else []):
        plan.append(f"{i + 1}. {request.kind}  calls {request.actions}\n", style="bold")
        for fact in request.facts:
            plan.append(f"   fact {fact.key} = {json.dumps(fact.value, ensure_ascii=False)}"
                        + (f"  (\"{fact.words}\")" if fact.words else "") + "\n")
        if request.decision is not None:
            d = request.decision
            plan.append(f"   rule: if {d.figure} ({d.amount}) > {d.threshold}: {d.over}, else {d.under} "
                        f"[data: {d.outcome}]\n")
        if request.refusal is not None:
            plan.append(f"   refused: {request.refusal.call.name} {json.dumps(request.refusal.call.arguments)} "
                        f"then {request.refusal.then}\n")
        if request.outputs or request.reasons:
            plan.append(f"   wants to hear: {json.dumps(request.outputs, ensure_ascii=False)} reasons {request.reasons}\n")
    out.append(Panel(plan or Text("(no plan)"), title="intent plan", title_align="left"))
    gold = Text()
    for i, (action, result, is_error) in enumerate(_gold_results(domain, task)):
        gold.append(f"{i}. {action.name} {json.dumps(action.arguments, ensure_ascii=False)}\n", style="bold")
        shown = result if len(result) <= 400 else result[:400] + " ..."
        gold.append(f"   -> {'ERROR ' if is_error else ''}{shown}\n", style="red" if is_error else "")
    gold.append(f"outputs: {json.dumps(task.gold.outputs, ensure_ascii=False)}")
    out.append(Panel(gold, title="gold calls and their results", title_align="left"))
    policy = _policy_lines(domain, task)
    if policy:
        out.append(Panel(Text("\n".join(policy)), title="policy", title_align="left"))
    if observation is not None:
        fresh = observation.hash == judged_hash(task)
        obs = Text(f"solved {observation.solved} of {observation.trials} ({observation.agent} agent, "
                   f"{observation.user} user){'' if fresh else ' - observed on an older version of the task'}\n")
        for why, count in observation.failures.items():
            obs.append(f"  {count}x {why}\n")
        out.append(Panel(obs, title="rollouts", title_align="left"))
    return out


def _edit_text(task: Task, field_name: str) -> str:
    if field_name == "instruction":
        return task.user.instruction + "\n"
    if field_name == "feeling":
        return (task.plan.situation.feeling if task.plan and task.plan.situation else "") + "\n"
    return json.dumps(task.gold.model_dump(mode="json"), indent=1, ensure_ascii=False) + "\n"


def _parse_edit(field_name: str, text: str, task_id_: str) -> Any:
    if field_name != "gold":
        return text.strip()
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise ReviewError(f"task '{task_id_}': the edited gold is not JSON: {exc.msg} at line {exc.lineno}") from None


def review_loop(domain: Domain, tasks: list[Task], path: Path, reviewer: str, *,
                observations: dict[str, Observation] | None = None, labeler: EmotionLabeler | None = None,
                ask: Callable[[str], str] = input, edit: Callable[[str], str | None] | None = None,
                console: Any = None) -> Counter:
    """Show each task and take a decision: [a]ccept, [r]eject (with a reason), [e]dit (instruction, feeling or
    gold in $EDITOR), [s]kip, [q]uit. Each decision is appended to `path` at once. Returns the decisions made."""
    import click
    from rich.console import Console

    console = console or Console(highlight=False)
    edit = edit or (lambda text: click.edit(text, extension=".txt"))
    observations = observations or {}
    made: Counter = Counter()
    decisions = Review(read_decisions(path))
    for n, task in enumerate(tasks, start=1):
        while True:
            console.rule()
            for part in render_task(domain, task, decision=decisions.decision(task),
                                    observation=observations.get(task.id), position=f"[{n}/{len(tasks)}]"):
                console.print(part)
            try:
                key = ask("[a]ccept  [r]eject  [e]dit  [s]kip  [q]uit > ").strip().lower()[:1]
            except EOFError:
                key = "q"
            if key == "q":
                return made
            if key == "s":
                made["skip"] += 1
                break
            decision = None
            if key == "a":
                decision = Decision(task=task.id, hash=judged_hash(task), decision="accept", reviewer=reviewer, at=now())
            elif key == "r":
                reason = ask("reason > ").strip()
                if not reason:
                    console.print("a rejection needs a reason; nothing recorded")
                    continue
                decision = Decision(task=task.id, hash=judged_hash(task), decision="reject", reason=reason,
                                    reviewer=reviewer, at=now())
            elif key == "e":
                field_name = ask("edit which: [i]nstruction  [f]eeling  [g]old > ").strip().lower()[:1]
                field_name = {"i": "instruction", "f": "feeling", "g": "gold"}.get(field_name, "")
                if not field_name:
                    console.print("nothing edited")
                    continue
                before = _edit_text(task, field_name)
                after = edit(before)
                if after is None or after.strip() == before.strip():
                    console.print("no change; nothing recorded")
                    continue
                try:
                    value = _parse_edit(field_name, after, task.id)
                    previous = decisions.decision(task)
                    changes = {**((previous.edit or {}) if previous is not None and previous.decision == "edit" else {}),
                               field_name: value}
                    base = task
                    changed = edited(base, {field_name: value})
                    problem = edit_problem(domain, changed, labeler)
                    if problem is not None:
                        raise ReviewError(f"task '{task.id}': the edit is not valid: {problem}")
                except ReviewError as exc:
                    console.print(f"not recorded: {exc}", markup=False)
                    continue
                reason = ask("why (optional) > ").strip()
                decision = Decision(task=task.id, hash=judged_hash(task), decision="edit", reason=reason,
                                    edit=changes, reviewer=reviewer, at=now())
                task = changed
            else:
                console.print("type a, r, e, s or q")
                continue
            append_decision(path, decision)
            decisions.latest[(decision.task, decision.hash)] = decision
            made[decision.decision] += 1
            console.print(f"recorded: {decision.decision} {task.id} in {path}", markup=False)
            break
    return made
