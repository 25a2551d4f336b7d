"""`tau tracer audit`: what a built split contains, and the checks a split must pass.

The tables (families, emotions, dimension values, distinct conditions, gold calls, intent mix,
challenge kinds, write sequences, label agreement, user overlap) let a researcher see a split at a
glance; the checks turn the issue's promises into exit codes: the emotion design is balanced, the
feelings agree with the assigned condition, test and train share no user and no written entity,
no two tasks repeat a write sequence, policy challenges come in several kinds, and every emotion family
holds about the split's share of them (so no family's scores reflect easier or harder tasks). Only Tracer-built
tasks (`meta.source == "tracer"`) are audited; hand-written splits have no design to check.

What a task must not share with its split or the other split (users, written entities, write sequences) is the
validator's to say: the audit replays the split through the build's own `validate.SplitChecks` (`split_findings`)
and fails a check on what they reject, so the build and the audit cannot disagree on it.
"""

from __future__ import annotations

import math
import random
import re
from collections import Counter
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from tau_emotion.tracer.design import INTENT_STRATA
from tau_emotion.tracer.plan import decision_branches, policy_challenge, request_kinds
from tau_emotion.tracer.validate import Reject, SplitChecks, task_user, writes, written_entities

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
#: shuffles of the family labels behind each balance check's tolerance (seeded by domain, split and check)
PERMUTATIONS = 2000
#: a family spread larger than this share of the shuffles' spreads fails (p < 0.05)
PERMUTATION_QUANTILE = 0.95
#: the most tasks one instruction sentence template (its first words, values masked) may appear in: a task has
#: about two requests, so a frame drawn per request among 4-6 variants is in 30-45% of tasks by construction,
#: while boilerplate every task repeats ("If the agent needs to know for this, ...") is in 100%
MAX_TEMPLATE_SHARE = 0.5
#: masked words that make a sentence's template
TEMPLATE_WORDS = 5


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


def _leaves(value: Any) -> list[tuple[str, Any]]:
    if isinstance(value, dict):
        return [leaf for k, v in value.items() for leaf in _leaves(v)]
    if isinstance(value, list):
        return [leaf for v in value for leaf in _leaves(v)]
    return [("", value)]


def split_findings(domain: Domain, split: str, tasks: list[Task], others: list[Task]) -> dict[str, list[str]]:
    """The validator's split checks (`SplitChecks`, as the build runs them) replayed over a built split in task
    order, the other of test and train kept apart: per check, the tasks it rejects ("<task id>: <why>")."""
    other = {"test": "train", "train": "test"}.get(split)
    checks = SplitChecks(domain, split, apart=[t for t in others if t.split == other])
    steps = {"write sequences": checks.check_sequence, "distinct users": checks.check_one_user,
             "entity writes": checks.check_one_write,
             "user overlap": lambda t: checks.check_apart_user(task_user(t)),
             "written entities": checks.check_apart_entities}
    found: dict[str, list[str]] = {name: [] for name in steps}
    for task in tasks:
        for name, check in steps.items():
            try:
                check(task)
            except Reject as exc:
                found[name].append(f"{task.id}: {exc.detail}")
        checks.add(task)
    return found


def challenge_kinds(domain: Domain, task: Task) -> list[str]:
    """A policy challenge's kinds: its refusal reasons, and `transfer` when the user is handed over."""
    if not policy_challenge(task):
        return []
    kinds = list(task.gold.reasons)
    if any(domain.toolset.is_terminal(a.name) for a in task.gold.actions):
        kinds.append("transfer")
    return kinds or ["refusal"]


def permutation_tolerance(values: list[Any], labels: list[str], statistic: Any, seed: str) -> tuple[float, float, float]:
    """(observed, tolerance, p): `statistic(values, labels)` against its PERMUTATION_QUANTILE over PERMUTATIONS
    shuffles of the labels, i.e. what chance alone gives families of these sizes (p: share of shuffles at least as
    spread as the split)."""
    observed = statistic(values, labels)
    rng = random.Random(seed)
    shuffled = list(labels)
    null = []
    for _ in range(PERMUTATIONS):
        rng.shuffle(shuffled)
        null.append(statistic(values, shuffled))
    null.sort()
    tolerance = null[min(len(null) - 1, int(PERMUTATION_QUANTILE * len(null)))]
    p = sum(1 for v in null if v >= observed - 1e-12) / len(null)
    return observed, tolerance, p


def between_families(values: list[float], labels: list[str]) -> float:
    """Between-family sum of squares of a per-task number (a one-way ANOVA's numerator)."""
    mean = sum(values) / len(values)
    groups: dict[str, list[float]] = {}
    for v, f in zip(values, labels, strict=True):
        groups.setdefault(f, []).append(v)
    return sum(len(g) * (sum(g) / len(g) - mean) ** 2 for g in groups.values())


def kind_chi2(values: list[list[str]], labels: list[str]) -> float:
    return kind_contributions(values, labels)[0][0] if values else 0.0


def kind_contributions(values: list[list[str]], labels: list[str]) -> list[tuple[float, str]]:
    """The largest per-kind chi-square of the family x request-kind table (each task counts each of its intents'
    kinds): one kind piled on or missing from a family (airline train: enjoyment held 2 of 99 compensation
    requests) shows even when the other kinds are even; the permutation test of a maximum accounts for there
    being many kinds."""
    table: dict[tuple[str, str], int] = Counter()
    for kinds, f in zip(values, labels, strict=True):
        for k in kinds:
            table[(f, k)] += 1
    rows, cols = Counter(), Counter()
    for (f, k), c in table.items():
        rows[f] += c
        cols[k] += c
    total = sum(rows.values())
    if not total:
        return [(0.0, "-")]
    return sorted(((sum((table.get((f, k), 0) - rows[f] * cols[k] / total) ** 2 / (rows[f] * cols[k] / total)
                        for f in rows), k) for k in cols), reverse=True)


_MASK = re.compile(r"\$?[\d][\d,.:/-]*|#?\b[A-Z0-9]*\d[A-Z0-9_]*\b|\b[A-Z][a-z]+\b")


def sentences(text: str) -> list[str]:
    return [s for s in re.split(r"(?<=[.?!])\s+(?=[A-Z])", text.strip()) if s]


def sentence_template(sentence: str, values: list[str]) -> str:
    """A sentence's frame: its known values, numbers, ids and capitalised words masked, first TEMPLATE_WORDS words."""
    for v in sorted(values, key=len, reverse=True):
        if len(v) >= 3:
            sentence = sentence.replace(v, "_")
    words = _MASK.sub("_", sentence[:1].lower() + sentence[1:]).split()
    return " ".join(words[:TEMPLATE_WORDS])


def id_tails(value: str) -> set[str]:
    """An internal id and the tail a text could give away ('paypal_1488918' -> {'paypal_1488918', '8918'})."""
    out = {value}
    digits = re.search(r"(\d{4,})$", value)
    if digits:
        out.add(digits.group(1)[-4:])
    return out


def leaked_ids(task: Task, visible: frozenset[str]) -> list[str]:
    """Internal ids (arguments of the gold calls whose name the pack does not declare customer-visible) that the
    instruction states, whole or by their last four digits."""
    hidden: dict[str, str] = {}
    for action in task.gold.actions:
        for k, v in action.arguments.items():
            if k.endswith("_id") and k not in visible and isinstance(v, str) and any(c.isdigit() for c in v):
                hidden[v] = k
    text = task.user.instruction
    # a fact the user knows in its own right is no leak, even when an id happens to end in it (a card's last four
    # digits, 9641, beside the record card_739641)
    facts = {str(v) for _, v in _leaves(task.user.known)}
    # a tail standing alone ("ending in 8918"), not part of a longer number the user knows ("415-555-7059", a date of
    # birth "1979-04-05")
    return sorted(f"{k}={v}" + (f" (as {tail!r})" if tail != v else "")
                  for v, k in hidden.items() for tail in id_tails(v) if tail == v or tail not in facts
                  if re.search(rf"(?<![\w{'' if tail == v else '-'}]){re.escape(tail)}(?![\w{'' if tail == v else '-'}])", text))



#: the situation fields a build before the appraisal (issue 34) wrote: a task with only these cannot be judged
_FEELING_ONLY = frozenset({"feeling", "events", "occasion"})


def recorded(situation: Any) -> bool:
    """Whether a task's situation records what the coherence audit reads (valence, stakes, dates, refusals, cause);
    tasks built before the appraisal record only their feeling, events and occasion."""
    return bool(situation.model_fields_set - _FEELING_ONLY)


def coherence_findings(tasks: list[Task]) -> dict[str, list[Any]]:
    """Task id -> the coherence audit's findings (`coherence.check_task_feelings`) on its feelings text and anchor,
    read against the situation its plan records; tasks with nothing to read (no feelings) are left out."""
    from tau_emotion.tracer.coherence import check_task_feelings

    out = {}
    for t in tasks:
        situation = t.plan.situation if t.plan is not None else None
        if situation is None or not recorded(situation):
            continue
        block = t.blocks.get("emotion") or {}
        found = check_task_feelings(situation.feeling, block.get("anchor"), situation.model_dump())
        if found:
            out[t.id] = found
    return out


def _bounds(n: int, k: int, low: float, high: float) -> tuple[int, int]:
    mean = n / k
    return max(1, math.floor(mean * low + 0.5)), math.floor(mean * high + 0.5)


def audit_split(domain: Domain, split: str, *, space: ConditionSpace, transfer_tool: str | None = None,
                visible_ids: frozenset[str] | None = None) -> Audit:
    """Tables and checks for `split` of `domain` (its tasks as the domain loads them); the tables list every
    family, emotion and dimension value of `space`, the emotion plugin's condition space.

    `visible_ids`: the id arguments a customer can know (`TracerHints.visible_ids`); None skips the id-leak check.
    """
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
    result.tables["intent kinds"] = dict(Counter(k for t in tasks for k in request_kinds(t)).most_common())
    kinds = Counter(k for t in tasks for k in challenge_kinds(domain, t))
    result.tables["challenge kinds"] = dict(kinds.most_common())
    challenges = sum(1 for t in tasks if policy_challenge(t))
    by_family = {f: [0, 0] for f in FAMILIES}
    for t, b in zip(tasks, blocks, strict=True):
        if b:
            by_family[b["family"]][0] += 1
            by_family[b["family"]][1] += int(policy_challenge(t))
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
    with_rule = sum(1 for t in tasks if decision_branches(t))
    result.tables["decision rules"] = {"tasks": f"{with_rule}/{n}",
                                       **Counter(b for t in tasks for b in decision_branches(t))}
    findings = split_findings(domain, split, tasks, others)
    sequences = Counter(tuple(writes(domain, t)) for t in tasks if writes(domain, t))
    result.tables["write sequences"] = {"distinct": len(sequences), "tasks writing": sum(sequences.values())}
    readings = [(t.blocks.get("emotion"), t.meta.get("emotion_reading")) for t in tasks]
    agree = sum(1 for b, r in readings if b and r and b["family"] == r["family"] and b["emotion"] == r["emotion"])
    family_agree = sum(1 for b, r in readings if b and r and b["family"] == r["family"])
    dims_agree = sum(1 for b, r in readings if b and r and all(b[d] == r[d] for d in DIMENSIONS))
    result.tables["label agreement"] = {"family": f"{family_agree}/{n}", "family+emotion": f"{agree}/{n}",
                                        "dimensions (info)": f"{dims_agree}/{n}"}
    incoherent = coherence_findings(tasks)
    unjudged = sum(1 for t in tasks if t.plan is not None and t.plan.situation is not None
                   and not recorded(t.plan.situation))
    result.tables["coherence"] = {"tasks clean": f"{n - unjudged - len(incoherent)}/{n - unjudged}",
                                  **({"not recorded (rebuild to judge)": unjudged} if unjudged else {}),
                                  **Counter(f.rule for found in incoherent.values() for f in found)}
    users = {task_user(t) for t in tasks} - {None}
    overlap = {s: len(users & {task_user(t) for t in others if t.split == s})
               for s in sorted({t.split for t in others})}
    result.tables["users"] = {"distinct": len(users), **{f"shared with {s}": v for s, v in overlap.items()}}

    fams = [b["family"] if b else "-" for b in blocks]
    present = [f for f in FAMILIES if f in fams]
    balance: list[tuple[str, float, float, float]] = []
    if len(present) > 1:
        ruled = [1.0 if decision_branches(t) else 0.0 for t in tasks]
        result.tables["decision rules by family"] = {
            "all": f"{with_rule}/{n}", **{f: f"{sum(r for r, g in zip(ruled, fams, strict=True) if g == f):g}/"
                                             f"{fams.count(f)}" for f in present}}
        balance.append(("decision rule balance", *permutation_tolerance(
            ruled, fams, between_families, f"audit/{domain.name}/{split}/rules")))
        lengths = [float(c) for c in calls]
        result.tables["gold calls by family"] = {
            "all": round(sum(lengths) / n, 2),
            **{f: round(sum(c for c, g in zip(lengths, fams, strict=True) if g == f) / fams.count(f), 2)
               for f in present}}
        balance.append(("gold length balance", *permutation_tolerance(
            lengths, fams, between_families, f"audit/{domain.name}/{split}/length")))
        kinds_of = [request_kinds(t) for t in tasks]
        all_kinds = Counter(k for ks in kinds_of for k in ks)
        result.tables["request kinds by family"] = {"families": "/".join(present), **{
            k: "/".join(str(sum(ks.count(k) for ks, g in zip(kinds_of, fams, strict=True) if g == f)) for f in present)
            for k, _ in all_kinds.most_common()}}
        balance.append(("request kind balance", *permutation_tolerance(
            kinds_of, fams, kind_chi2, f"audit/{domain.name}/{split}/kinds")))
        worst_kind = kind_contributions(kinds_of, fams)[0][1]
    entity_tasks: dict[tuple[str, str], list[str]] = {}
    for t in tasks:
        for pair in written_entities(domain, t):
            entity_tasks.setdefault(pair, []).append(t.id)
    rewritten = {f"{k}={v}": ids for (k, v), ids in sorted(entity_tasks.items()) if len(ids) > 1}
    result.tables["entities written"] = {"distinct": len(entity_tasks), "by more than one task": len(rewritten)}
    stems: dict[str, set[str]] = {}
    for t in tasks:
        values = [str(v) for _, v in _leaves(t.user.known)]
        for sentence in sentences(t.user.instruction)[1:]:
            stems.setdefault(sentence_template(sentence, values), set()).add(t.id)
    common = sorted(((len(ids), stem) for stem, ids in stems.items()), reverse=True)
    result.tables["sentence templates"] = {"distinct": len(stems),
                                           **{f"'{stem}'": count for count, stem in common[:3]}}
    leaks = {t.id: leaked_ids(t, visible_ids) for t in tasks} if visible_ids is not None else {}
    leaks = {k: v for k, v in leaks.items() if v}

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
    five = sum(1 for b, r in readings if b and r and all(b[k] == r[k] for k in ("family", "emotion", *DIMENSIONS)))
    result.check("five-label agreement", five == n,
                 f"{five}/{n} feelings read back as the assigned family, emotion, politeness, urgency and trust")
    result.check("coherence", not incoherent,
                 f"{n - unjudged - len(incoherent)}/{n - unjudged} tasks' feelings and anchors have their cause, tempo "
                 f"and history in the task's situation (tracer/coherence.py)"
                 + (f"; {unjudged} task(s) built before the appraisal record no situation to judge: NOT CHECKED, "
                    f"rebuild the split" if unjudged else "")
                 + ("; e.g. " + "; ".join(f"{k}: {v[0]}" for k, v in list(incoherent.items())[:3]) if incoherent else ""))
    if split != "train":  # train is built for volume (600 tasks from the users test left): the tables say it
        result.check("distinct users", not findings["distinct users"],
                     f"{len(users)} distinct users in {n} tasks (one task per user)"
                     + (f"; e.g. {findings['distinct users'][0]}" if findings["distinct users"] else ""))
        result.check("entity writes", not findings["entity writes"],
                     "no entity written by two tasks of the split"
                     + (f"; {len(rewritten)}, e.g. " + "; ".join(f"{k} by {', '.join(v)}" for k, v in
                                                                  list(rewritten.items())[:3]) if rewritten else ""))
    for name, observed, tolerance, p in balance:
        result.check(name, p >= 1 - PERMUTATION_QUANTILE,
                     f"family spread {observed:.3g}, tolerance {tolerance:.3g} (the {PERMUTATION_QUANTILE:.0%} quantile "
                     f"of {PERMUTATIONS} seeded shuffles of the family labels), p={p:.3f}"
                     + (f"; most uneven kind: {worst_kind}" if name == "request kind balance" else ""))
    limit = MAX_TEMPLATE_SHARE * n
    over = [(c, stem) for c, stem in common if c > limit]
    result.check("sentence templates", not over,
                 f"no instruction sentence frame (first {TEMPLATE_WORDS} words, values masked; the opening 'You are' "
                 f"sentence aside) in more than {MAX_TEMPLATE_SHARE:.0%} of tasks"
                 + ("; over: " + "; ".join(f"'{stem}' {c}/{n}" for c, stem in over[:4]) if over else ""))
    if visible_ids is not None:
        result.check("id leak", not leaks,
                     "no instruction states an id the pack does not declare customer-visible "
                     f"({', '.join(sorted(visible_ids)) or 'none'} are)"
                     + (f"; {len(leaks)} tasks, e.g. " + "; ".join(f"{k}: {', '.join(v)}" for k, v in
                                                                    list(leaks.items())[:3]) if leaks else ""))
    shared = findings["user overlap"]
    result.check("user overlap", not shared, "test and train share no user"
                 + (f"; {len(shared)} task(s), e.g. {shared[0]}" if shared else ""))
    if {split} <= {"test", "train"}:
        other = "train" if split == "test" else "test"
        both = findings["written entities"]
        result.check("written entities", not both, f"no entity written in both {split} and {other}"
                     + (f"; {len(both)} task(s), e.g. {both[0]}" if both else ""))
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
    repeated = findings["write sequences"]
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
