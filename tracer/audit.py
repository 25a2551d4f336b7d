"""`tau tracer audit`: what a built split contains, and the checks a split must pass.

The tables (families, emotions, dimension values, distinct conditions, gold calls, intent mix,
challenge kinds, write sequences, label agreement, user overlap) let a researcher see a split at a
glance; the checks turn the issue's promises into exit codes: the emotion design is balanced, the
feelings agree with the assigned condition, test and train share no user and no written entity,
no two tasks repeat a write sequence, policy challenges come in several kinds, and every emotion family
holds about the split's share of them (so no family's scores reflect easier or harder tasks). Only Tracer-built
tasks (`meta.source == "tracer"`) are audited; hand-written splits have no design to check.
"""

from __future__ import annotations

import math
from collections import Counter
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from tau_emotion.tracer.design import INTENT_STRATA

if TYPE_CHECKING:
    from tau_emotion.core.conditions import ConditionSpace
    from tau_emotion.core.domain import Domain
    from tau_emotion.core.models import Task

#: the most any one challenge kind may take of a split's challenges
MAX_KIND_SHARE = 0.4
#: the least share of tasks with a decision rule the agent must resolve with a tool result
MIN_RULE_SHARE = 0.2
#: challenge kinds a split should use when the domain declares at least this many
MIN_KINDS = 4
#: how many tasks a family's policy challenges (and its tasks of 1, 2, 3+ intents) may be from the split's
#: share times the family's size (1.5 of 12 tasks in a 58-task split; the build keeps each within 1 of the
#: running share)
CHALLENGE_TOLERANCE = 1.5


@dataclass
class Audit:
    domain: str
    split: str
    tables: dict[str, dict[str, Any]] = field(default_factory=dict)
    checks: list[tuple[str, bool, str]] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return all(passed for _, passed, _ in self.checks)

    def check(self, name: str, passed: bool, detail: str) -> None:
        self.checks.append((name, bool(passed), detail))

    def to_json(self) -> dict[str, Any]:
        return {"domain": self.domain, "split": self.split, "ok": self.ok, "tables": self.tables,
                "checks": [{"name": n, "ok": p, "detail": d} for n, p, d in self.checks]}

    def lines(self) -> list[str]:
        out = [f"{self.domain}/{self.split}"]
        for name, table in self.tables.items():
            cells = ", ".join(f"{k} {v}" for k, v in table.items())
            out.append(f"  {name:18} {cells}")
        out.append("checks:")
        out += [f"  {'ok  ' if p else 'FAIL'} {n:20} {d}" for n, p, d in self.checks]
        return out


def task_user(task: Task) -> str | None:
    return task.meta.get("user") or task.user.known.get("user_id")


def writes(domain: Domain, task: Task) -> list[tuple[str, tuple[tuple[str, str], ...]]]:
    """The task's write (and handover) calls as (tool, the ids it names), in order."""
    tools = domain.toolset
    out = []
    for action in task.gold.actions:
        tool = tools[action.name] if action.name in tools else None
        if tool is not None and (tool.writes or tool.terminal):
            ids = tuple(sorted((k, str(v)) for k, v in action.arguments.items() if k.endswith("_id")))
            out.append((action.name, ids))
    return out


def written_entities(domain: Domain, task: Task) -> set[tuple[str, str]]:
    return {pair for _, ids in writes(domain, task) for pair in ids}


def challenge_kinds(domain: Domain, task: Task) -> list[str]:
    """A policy challenge's kinds: its refusal reasons, and `transfer` when the user is handed over."""
    if not task.meta.get("policy_challenge"):
        return []
    kinds = list(task.gold.reasons)
    if any(domain.toolset.is_terminal(a.name) for a in task.gold.actions):
        kinds.append("transfer")
    return kinds or ["refusal"]


def _bounds(n: int, k: int, low: float, high: float) -> tuple[int, int]:
    mean = n / k
    return max(1, math.floor(mean * low + 0.5)), math.floor(mean * high + 0.5)


def audit_split(domain: Domain, split: str, *, space: ConditionSpace, transfer_tool: str | None = None) -> Audit:
    """Tables and checks for `split` of `domain` (its tasks as the domain loads them); the tables list every
    family, emotion and dimension value of `space`, the emotion plugin's condition space."""
    FAMILIES, EMOTIONS, DIMENSIONS = space.groups, space.labels, space.dimensions

    everything = domain.tasks(None)
    tasks = [t for t in everything if t.split == split and t.meta.get("source") == "tracer"]
    others = [t for t in everything if t.split != split and t.meta.get("source") == "tracer"]
    result = Audit(domain.name, split)
    n = len(tasks)
    result.tables["tasks"] = {"n": n}
    if not n:
        result.check("tracer tasks", False, f"split '{split}' has no Tracer-built tasks")
        return result
    blocks = [t.blocks.get("emotion") for t in tasks]
    with_emotion = [b for b in blocks if b]
    families = Counter(b["family"] for b in with_emotion)
    emotions = Counter(b["emotion"] for b in with_emotion)
    result.tables["families"] = {f: families.get(f, 0) for f in FAMILIES}
    result.tables["emotions"] = {e: emotions.get(e, 0) for e in EMOTIONS}
    for dim, values in DIMENSIONS.items():
        counts = Counter(b[dim] for b in with_emotion)
        result.tables[dim] = {v: counts.get(v, 0) for v in values}
    conditions = Counter("{family}.{emotion}/{politeness}/{urgency}/{trust}".format(**b) for b in with_emotion)
    result.tables["conditions"] = {"distinct": len(conditions), "most repeated": max(conditions.values(), default=0)}
    calls = [len(t.gold.actions) for t in tasks]
    result.tables["gold calls"] = {"avg": round(sum(calls) / n, 2), "min": min(calls), "max": max(calls)}
    result.tables["intents per task"] = dict(sorted(Counter(len(t.user.intents) for t in tasks).items()))
    result.tables["intent kinds"] = dict(Counter(k for t in tasks for k in t.meta.get("intents", [])).most_common())
    kinds = Counter(k for t in tasks for k in challenge_kinds(domain, t))
    result.tables["challenge kinds"] = dict(kinds.most_common())
    challenges = sum(1 for t in tasks if t.meta.get("policy_challenge"))
    by_family = {f: [0, 0] for f in FAMILIES}
    for t, b in zip(tasks, blocks, strict=True):
        if b:
            by_family[b["family"]][0] += 1
            by_family[b["family"]][1] += int(bool(t.meta.get("policy_challenge")))
    result.tables["challenges by family"] = {"all": f"{challenges}/{n}",
                                            **{f: f"{c}/{k}" for f, (k, c) in by_family.items()}}
    intents_of = {f: Counter() for f in FAMILIES}
    for t, b in zip(tasks, blocks, strict=True):
        if b:
            intents_of[b["family"]][min(len(t.user.intents), INTENT_STRATA)] += 1
    strata = range(1, INTENT_STRATA + 1)
    all_intents = Counter(min(len(t.user.intents), INTENT_STRATA) for t in tasks)
    label = {k: f"{k}+" if k == INTENT_STRATA else str(k) for k in strata}
    result.tables["intents by family"] = {"intents": "/".join(label[k] for k in strata),
                                          "all": "/".join(str(all_intents[k]) for k in strata),
                                          **{f: "/".join(str(intents_of[f][k]) for k in strata) for f in FAMILIES}}
    decisions = [d for t in tasks for d in t.meta.get("decisions", [])]
    with_rule = sum(1 for t in tasks if t.meta.get("decisions"))
    result.tables["decision rules"] = {"tasks": f"{with_rule}/{n}",
                                       **Counter(d["branch"] for d in decisions)}
    sequences = Counter(tuple(writes(domain, t)) for t in tasks if writes(domain, t))
    result.tables["write sequences"] = {"distinct": len(sequences), "tasks writing": sum(sequences.values())}
    readings = [(t.blocks.get("emotion"), t.meta.get("emotion_reading")) for t in tasks]
    agree = sum(1 for b, r in readings if b and r and b["family"] == r["family"] and b["emotion"] == r["emotion"])
    family_agree = sum(1 for b, r in readings if b and r and b["family"] == r["family"])
    dims_agree = sum(1 for b, r in readings if b and r and all(b[d] == r[d] for d in DIMENSIONS))
    result.tables["label agreement"] = {"family": f"{family_agree}/{n}", "family+emotion": f"{agree}/{n}",
                                        "dimensions (info)": f"{dims_agree}/{n}"}
    users = {task_user(t) for t in tasks} - {None}
    overlap = {s: len(users & {task_user(t) for t in others if t.split == s})
               for s in sorted({t.split for t in others})}
    result.tables["users"] = {"distinct": len(users), **{f"shared with {s}": v for s, v in overlap.items()}}

    # ---- checks
    result.check("emotion block", len(with_emotion) == n, f"{len(with_emotion)}/{n} tasks carry an emotion block")
    if n >= len(EMOTIONS):
        lo, hi = _bounds(n, len(EMOTIONS), 0.76, 1.5)
        off = {e: c for e, c in result.tables["emotions"].items() if not lo <= c <= hi}
        result.check("emotion balance", not off, f"every emotion {lo}-{hi} times" + (f"; off: {off}" if off else ""))
        lo, hi = _bounds(n, 3, 0.88, 1.14)
        off = {f"{d}={v}": c for d in DIMENSIONS for v, c in result.tables[d].items() if not lo <= c <= hi}
        result.check("dimension balance", not off, f"every value {lo}-{hi} times" + (f"; off: {off}" if off else ""))
    limit = -(-n // (len(EMOTIONS) * 27))
    result.check("distinct conditions", max(conditions.values(), default=0) <= limit,
                 f"no condition more than {limit} time(s)")
    result.check("label agreement", agree == n, f"{agree}/{n} feelings read back as the assigned family and emotion")
    shared = {s: v for s, v in overlap.items() if v and {split, s} == {"test", "train"}}
    result.check("user overlap", not shared, "test and train share no user" + (f"; shared: {shared}" if shared else ""))
    if {split} <= {"test", "train"}:
        other = "train" if split == "test" else "test"
        mine = set().union(*(written_entities(domain, t) for t in tasks))
        theirs = set().union(*(written_entities(domain, t) for t in others if t.split == other), set())
        both = mine & theirs
        result.check("written entities", not both,
                     f"no entity written in both {split} and {other}" + (f"; e.g. {sorted(both)[:3]}" if both else ""))
    if split == "test" or n >= 50:
        result.check("decision rules", with_rule >= MIN_RULE_SHARE * n,
                     f"{with_rule}/{n} tasks carry a decision rule (at least {MIN_RULE_SHARE:.0%})")
    share = challenges / n
    off_share = {f: f"{c}/{k} ({c / k:.0%})" for f, (k, c) in by_family.items()
                 if k and abs(c - share * k) > CHALLENGE_TOLERANCE}
    result.check("challenge balance", not off_share,
                 f"each family's policy challenges within {CHALLENGE_TOLERANCE:g} task(s) of the split's share "
                 f"({challenges}/{n}, {share:.0%}) times its size" + (f"; off: {off_share}" if off_share else ""))
    off_intents = {f: result.tables["intents by family"][f] for f in FAMILIES
                   if any(abs(intents_of[f][k] - all_intents[k] / n * by_family[f][0]) > CHALLENGE_TOLERANCE
                          for k in strata)}
    result.check("intent balance", not off_intents,
                 f"each family's tasks of 1, 2 and {INTENT_STRATA}+ intents within {CHALLENGE_TOLERANCE:g} task(s) of "
                 f"the split's share times its size" + (f"; off: {off_intents}" if off_intents else ""))
    repeated = [seq for seq, c in sequences.items() if c > 1]
    result.check("write sequences", not repeated,
                 "no two tasks share a write sequence" + (f"; e.g. {repeated[0]}" if repeated else ""))
    total = sum(kinds.values())
    declared = len(getattr(domain, "refusal_reasons", {}) or {}) + (1 if transfer_tool else 0)
    if total:
        need = min(MIN_KINDS, declared) if declared else 1
        top = max(kinds.values()) / total
        result.check("challenge variety", len(kinds) >= need and top <= MAX_KIND_SHARE,
                     f"{len(kinds)} kind(s) (need {need}), largest {top:.0%} (at most {MAX_KIND_SHARE:.0%})")
    return result
