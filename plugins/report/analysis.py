"""Deterministic analyses of a run's trials, computed from gold vs actual actions and the transcript.

- **error category** of each failed trial (first that applies): error (the trial crashed),
  policy_violation (a call `Domain.violations` refuses), wrong_arguments (a gold action not
  done while its tool was called with arguments no gold action has), gave_up (the user ended
  negatively before the gold was done, while every call the agent made was a gold call),
  missing_action (a gold action never done), extra_action (a database-changing call the gold does
  not make), incomplete (the episode was cut before the agent acted, or after the gold was done
  but before an output was told), wrong_output (database right, a gold output never told), other.
- **UNSATISFIED audit**: false quits (the user ended negatively while the agent had made gold calls
  and only gold calls, and asked few questions) and missed quits (very inefficient trajectories the
  user tolerated), as rates by a tag (default the emotion family).
- **user-hallucination audit**: user messages stating ids or numbers found nowhere in the task's
  facts (instruction, known facts, intents) nor earlier in the conversation.
"""

from __future__ import annotations

import json
import re
from collections import Counter, defaultdict
from typing import TYPE_CHECKING, Any

from tau_emotion.core.models import Action, EpisodeResult
from tau_emotion.plugins.report.reading import RunData, actions, questions

if TYPE_CHECKING:
    from tau_emotion.core.domain import Domain

FEW_QUESTIONS = 2
INEFFICIENT = 3.0  # agent steps (or calls + questions, if more) per gold action
TOKEN = re.compile(r"(?<![\w-])(?=[\w-]*\d)[A-Za-z0-9][\w-]*(?:\.\d+)?")


def _canon(arguments: Any) -> str:
    if isinstance(arguments, str):
        try:
            arguments = json.loads(arguments)
        except json.JSONDecodeError:
            return arguments
    return json.dumps(arguments, sort_keys=True, default=str)


def policy_violations(domain: Domain, calls: list[tuple[str, Any]]) -> list[str]:
    """The domain's policy rules each call breaks, replayed in order from the initial database."""
    if not domain.policy_rules:
        return []
    state = domain.database.state()
    found = []
    for name, arguments in calls:
        call = Action(name=name, arguments=arguments if isinstance(arguments, dict) else {})
        found += [f"{name}: {v.reason}" for v in domain.violations(state, call)]
        domain.toolset.call(state, name, arguments)
    return found


def error_category(data: RunData, result: EpisodeResult) -> str | None:
    """The category of a failed trial (None for a success)."""
    if result.status == "error":
        return "error"
    if result.success:
        return None
    task, domain = data.task(result), data.domains.get(result.domain)
    if task is None or domain is None:
        return "other"
    done = [(n, a) for n, a, ok in actions(result.messages) if ok]
    if policy_violations(domain, done):
        return "policy_violation"
    done_set = {(n, _canon(a)) for n, a in done}
    gold = [(a.name, _canon(a.arguments)) for a in task.gold.actions]
    gold_set = set(gold)
    missing = [g for g in gold if g not in done_set]
    # a gold tool called with arguments no gold action has; a tool the gold calls twice (two lookups) and the
    # agent called once, rightly, before the user quit is not a wrong argument
    misdone = {n for n, a in done_set if (n, a) not in gold_set}
    if any(name in misdone for name, _ in missing):
        return "wrong_arguments"
    cut = result.termination.negative or result.termination.reason in ("max_steps", "tool_errors")
    if missing:
        if result.termination.negative and done_set <= gold_set:
            return "gave_up"  # the user quit while every call the agent made was a gold call
        return "incomplete" if cut and not done else "missing_action"
    writes = {name for name, tool in domain.toolset.tools.items() if getattr(tool, "writes", False)}
    if any(n in writes and (n, _canon(a)) not in gold_set for n, a in done):
        return "extra_action"
    parts = result.parts
    if parts is not None and parts.outputs_missing:
        return "incomplete" if cut else "wrong_output"
    if cut:
        return "incomplete"
    return "other"


def _on_gold_path(data: RunData, result: EpisodeResult) -> bool:
    task = data.task(result)
    if task is None:
        return False
    gold = [(a.name, _canon(a.arguments)) for a in task.gold.actions]
    done = [(n, _canon(a)) for n, a, _ in actions(result.messages)]
    # an agent that did nothing is not on the path (unless the gold is to do nothing)
    return (bool(done) or not gold) and all(call in gold for call in done)


def inefficiency(data: RunData, result: EpisodeResult) -> float | None:
    task = data.task(result)
    if task is None:
        return None
    effort = max(result.n_steps, len(actions(result.messages)) + questions(result.messages))
    return effort / max(1, len(task.gold.actions))


def unsatisfied_audit(data: RunData, by: str) -> dict[str, Any]:
    groups: dict[str, list[EpisodeResult]] = defaultdict(list)
    for r in data.results:
        if r.status == "ok":
            groups[r.tags.get(by, "(none)")].append(r)
    out: dict[str, Any] = {}
    for name, rs in sorted(groups.items()):
        quits = [r for r in rs if r.termination.negative]
        false_quits = [r for r in quits
                       if _on_gold_path(data, r) and questions(r.messages) <= FEW_QUESTIONS]
        tolerated = [r for r in rs if not r.termination.negative]
        missed = [r for r in tolerated if (inefficiency(data, r) or 0) >= INEFFICIENT and not r.success]
        out[name] = {
            "trials": len(rs), "quits": len(quits), "quit_rate": round(len(quits) / len(rs), 4),
            "false_quits": len(false_quits),
            "false_quit_rate": round(len(false_quits) / len(quits), 4) if quits else None,
            "missed_quits": len(missed),
            "missed_quit_rate": round(len(missed) / len(tolerated), 4) if tolerated else None,
            "false_quit_trials": [f"{r.task_id}#{r.trial}" for r in false_quits],
            "missed_quit_trials": [f"{r.task_id}#{r.trial}" for r in missed],
        }
    return out


def _facts(data: RunData, result: EpisodeResult) -> str:
    task = data.task(result)
    if task is None:
        return ""
    spec = task.user
    return " ".join([spec.instruction, json.dumps(spec.known, default=str), *spec.intents, *task.gold.outputs]).lower()


def hallucinations(data: RunData, result: EpisodeResult) -> list[dict[str, Any]]:
    """User messages stating an id or number that neither the task's facts nor the conversation so far hold."""
    if data.task(result) is None:
        return []
    seen = _facts(data, result).replace(",", "")
    found = []
    for i, m in enumerate(result.messages):
        text = m.content or ""
        if m.role == "user":
            new = [t for t in TOKEN.findall(text.replace(",", "")) if t.lower() not in seen]
            if new:
                found.append({"message": i, "tokens": new, "text": text})
        seen += " " + text.lower().replace(",", "")
        for c in m.tool_calls:
            seen += " " + _canon(c.arguments).lower()
    return found


def analyze(data: RunData, by: str = "emotion.family") -> dict[str, Any]:
    trials = []
    for r in data.results:
        category = error_category(data, r)
        halluc = hallucinations(data, r)
        trials.append({"task_id": r.task_id, "domain": r.domain, "trial": r.trial, "success": r.success,
                       "status": r.status, "reward": r.reward, "termination": r.termination.reason,
                       "category": category, "tool_calls": len(actions(r.messages)),
                       "questions": questions(r.messages), "hallucinations": halluc, "tags": r.tags})
    ok = [t for t in trials if t["status"] == "ok"]
    user_msgs = sum(1 for r in data.results for m in r.messages if m.role == "user")
    flagged = sum(len(t["hallucinations"]) for t in trials)
    return {
        "run_id": data.run_id,
        "error_categories": dict(Counter(t["category"] for t in trials if t["category"]).most_common()),
        "unsatisfied_audit": {"by": by, "groups": unsatisfied_audit(data, by)},
        "hallucination_audit": {"user_messages": user_msgs, "flagged_messages": flagged,
                                "rate": round(flagged / user_msgs, 4) if user_msgs else None,
                                "trials": [f"{t['task_id']}#{t['trial']}" for t in trials if t["hallucinations"]]},
        "tool_calls_vs_questions": {
            "trials": len(ok),
            "more_tool_calls_than_questions": round(sum(t["tool_calls"] > t["questions"] for t in ok) / len(ok), 4)
            if ok else None},
        "procedure": procedure_audit(data),
        "trials": trials,
    }


def procedure_audit(data: RunData) -> dict[str, Any]:
    """Every procedure violation of the run's trials (as stored with their score), with the message it happens at
    and the user turn it follows (1: after the opening request), and the counts per rule."""
    found = []
    for r in data.results:
        procedure = r.parts.procedure if r.parts is not None else None
        for v in procedure.violations if procedure is not None else []:
            turn = sum(1 for m in r.messages[: v.message + 1] if m.role == "user")
            found.append({"task_id": r.task_id, "domain": r.domain, "trial": r.trial, "rule": v.rule,
                          "message": v.message, "turn": turn, "tool": v.tool, "detail": v.detail})
    measured = [r for r in data.results if r.parts is not None and r.parts.procedure is not None]
    return {"trials": len(measured), "followed": sum(r.parts.procedure.procedure_ok for r in measured),
            "by_rule": dict(Counter(v["rule"] for v in found).most_common()), "violations": found}
