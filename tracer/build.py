"""The Tracer pipeline for one domain and split: sample, ground, refine, validate, feel, write.

Candidate `i` of a build draws everything from `random.Random("tracer/<domain>/<split>/<seed>/<i>")`
(and a second stream for its feelings), so the same seed gives the same tasks, byte for byte, and a
candidate's fate does not depend on the ones before it except through the duplicate check.
Rejections are counted per check and reported with one example each.
"""

from __future__ import annotations

import json
import random
import time
from collections import Counter
from dataclasses import dataclass, field
from importlib.resources import files
from pathlib import Path
from typing import TYPE_CHECKING, Any

from tau_emotion.core.errors import TauError
from tau_emotion.core.models import Gold, Task, UserSpec
from tau_emotion.core.state import write_text_atomic
from tau_emotion.tracer.audit import task_user, writes, written_entities
from tau_emotion.tracer.coherence import check_text
from tau_emotion.tracer.design import (
    CHALLENGE_SLACK,
    INTENT_STRATA,
    KIND_SLACK,
    condition_id,
    design_conditions,
    kinds_fit,
    length_bin,
    needs_occasion,
    normalise_occasions,
    occasion_fits,
    pick_occasion,
    share_fits,
)
from tau_emotion.tracer.feelings import feelings_misfit, recorded_situation, situation
from tau_emotion.tracer.graph import ToolGraph, build_graph
from tau_emotion.tracer.grounding import Candidate, Grounder, Reject
from tau_emotion.tracer.hints import TracerHints, load_hints
from tau_emotion.tracer.plan import PLAN_META, policy_challenge, with_plan
from tau_emotion.tracer.refine import TemplateRefiner, intent_fact_keys
from tau_emotion.tracer.sampling import check_lengths, profile_for
from tau_emotion.tracer.validate import CHECKS, Validator

if TYPE_CHECKING:
    from collections.abc import Callable

    from tau_emotion.core.conditions import ConditionSpace
    from tau_emotion.core.domain import Domain
    from tau_emotion.tracer.feelings import EmotionLabeler

SPLIT_ORDER = {"hand": 0, "test": 1, "train": 2}
#: the `Task.meta` keys the Tracer writes and only `tracer/` reads (`tests/test_plan_contract.py` checks); what another
#: plugin needs of them is in the task's `IntentPlan`
TRACER_META = ("source", "user", "graph_path", "seed", "candidate", "refiner", "feelings", "emotion_reading",
               "feelings_tries", "appraisal_relax", *PLAN_META)
#: feelings texts tried per candidate before it is rejected for disagreeing with its condition
FEELINGS_TRIES = 8
#: after this many candidates in a row without an accepted task, the balance strata get one more unit of slack (the
#: last few conditions of a design may ask for a family whose strata few candidates fit; deterministic per seed);
#: challenges and intents per task, which the audit holds to 1.5 tasks, at most STALL_CAP
STALL_CANDIDATES = 1000
#: candidates without an accepted task after which the appraisal accepts a cause one step weaker (after twice as many any
#: setback for anger and disgust, after three times any event): a pack whose situations rarely give an emotion its full
#: cause still completes its design, and the task says so (`meta.appraisal_relax`)
RELAX_CANDIDATES = 200
#: the most a stall relaxes the challenge and intents strata (the audit holds them to 1.5 tasks at the end)
STALL_CAP = 1.25


class TracerError(TauError):
    """A build cannot be done; the message names the domain and what to change."""


@dataclass
class BuildReport:
    domain: str
    split: str
    seed: int
    tasks: list[Task]
    candidates: int
    rejected: Counter = field(default_factory=Counter)
    examples: dict[str, str] = field(default_factory=dict)
    seconds: float = 0.0
    graph: dict[str, Any] = field(default_factory=dict)

    @property
    def accepted(self) -> int:
        return len(self.tasks)

    def breakdown(self) -> dict[str, int]:
        return {check: self.rejected.get(check, 0) for check in CHECKS if self.rejected.get(check, 0)}

    def summary_lines(self) -> list[str]:
        calls = [len(t.gold.actions) for t in self.tasks]
        challenges = sum(1 for t in self.tasks if policy_challenge(t))
        lines = [f"{self.domain}/{self.split} seed {self.seed}: {self.accepted} task(s) accepted of {self.candidates} "
                 f"candidate(s) in {self.seconds:.2f}s",
                 f"  gold calls: avg {sum(calls) / max(len(calls), 1):.2f}, min {min(calls, default=0)}, "
                 f"max {max(calls, default=0)}; policy challenges: {challenges}"]
        total = sum(self.rejected.values())
        lines.append(f"  rejected: {total}" + ("" if total else " (none)"))
        for check, count in self.breakdown().items():
            lines.append(f"    {check:12} {count:6}   e.g. {self.examples.get(check, '')[:150]}")
        return lines


def task_id(domain: str, split: str, k: int, n: int) -> str:
    return f"{domain}-{split}-{k:0{max(3, len(str(n)))}d}"


def intent_gold(cand: Candidate, parts: list[list[str]] | None = None) -> list[dict[str, Any]]:
    """What each of the user's intents needs (its gold calls, outputs and reasons), in the order the refiner
    states them: a refusal the user insists on is two intents, the request and the ask for a human."""
    out: list[dict[str, Any]] = []
    for i, draft in enumerate(cand.drafts):
        steps = [(j, s) for j, s in enumerate(cand.steps) if s.intent == i]
        out.append({"actions": [j for j, s in steps if s.role != "handoff"],
                    "outputs": cand.intent_outputs[i], "reasons": cand.intent_reasons[i],
                    "facts": intent_fact_keys(cand, draft) + list(parts[i] if parts else [])})
        if draft.refused and draft.on_refusal == "transfer":
            out.append({"actions": [j for j, s in steps if s.role == "handoff"], "outputs": [], "reasons": [],
                        "facts": []})
    return out


def make_task(cand: Candidate, refined: Any, refiner: str, seed: int) -> Task:
    meta = {
        "source": "tracer",
        "user": cand.persona.entity or cand.persona.name,
        "graph_path": cand.walk,
        "policy_challenge": cand.policy_challenge,
        "intents": [d.kind for d in cand.drafts],
        "refused": [{"name": r.name, "arguments": r.arguments, "after": r.at} for r in cand.refusals],
        "intent_gold": intent_gold(cand, getattr(refined, "parts", None)),
        "decisions": [{"intent": i, **d.decision} for i, d in enumerate(cand.drafts) if d.decision],
        "seed": seed,
        "candidate": cand.index,
        "refiner": refiner,
    }
    return Task(id=f"{cand.domain}-{cand.split}-candidate-{cand.index}", domain=cand.domain, split=cand.split,
                user=UserSpec(instruction=refined.instruction, known=refined.known, intents=refined.intents),
                gold=Gold(actions=cand.gold_actions, outputs=list(cand.outputs), reasons=list(cand.reasons)),
                meta=meta)


def build_tasks(
    domain: Domain,
    split: str,
    n: int,
    seed: int,
    *,
    min_calls: int | None = None,
    max_calls: int | None = None,
    challenge_rate: float | None = None,
    refiner: Any = None,
    feelings: Any = None,
    labeler: EmotionLabeler | None = None,
    space: ConditionSpace,
    rollout: Callable[[Candidate], None] | None = None,
    avoid: list[Task] | None = None,
    max_candidates: int | None = None,
    on_accept: Callable[[int], None] | None = None,
    keep_apart: list[Task] | None = None,
    hints: TracerHints | None = None,
    graph: ToolGraph | None = None,
) -> BuildReport:
    """Build `n` validated tasks; raise TracerError when the candidates run out first.

    `keep_apart` (`kept_apart`): tasks of other splits whose users and written entities no accepted task may
    share, checked last, so a split built in the documented order (test, then train avoiding it) comes out
    exactly as before, and one built in the other order is still clean.
    `space` is the emotion plugin's condition space (`feelings.condition_space(pm)`): the design draws from it.
    `hints`: the pack's (`load_hints(domain, pm)`); default, those its own package gives. `graph`: the domain's
    tool graph with those hints, when the caller has built it already (`build_graph(domain, hints)`).
    """
    started = time.perf_counter()
    hints = hints if hints is not None else load_hints(domain)
    if not hints.can_ground:
        raise TracerError(f"domain '{domain.name}' gives the Tracer no grounding hints (persona and goals); "
                          f"answer tau_tracer_hints with a TracerHints (see tau_emotion.tracer.hints)")
    profile = profile_for(split, min_calls=min_calls, max_calls=max_calls, challenge_rate=challenge_rate)
    graph = graph if graph is not None else build_graph(domain, hints)
    check_lengths(graph, list(hints.goals), profile.min_calls, profile.max_calls)
    grounder = Grounder(domain, graph, hints, profile)
    validator = Validator(domain, avoid or [], hints)
    # Clean splits: no user and no written entity of another Tracer-built split, no repeated write sequence.
    built = [t for t in avoid or [] if t.meta.get("source") == "tracer"]
    reserved_users = {task_user(t) for t in built} - {None}
    reserved_entities = set().union(set(), *(written_entities(domain, t) for t in built))
    apart_users = {task_user(t) for t in keep_apart or []} - {None} - reserved_users
    apart_entities = set().union(set(), *(written_entities(domain, t) for t in keep_apart or [])) - reserved_entities
    sequences: set[tuple[Any, ...]] = set()
    split_users: set[Any] = set()
    split_entities: set[tuple[str, str]] = set()
    refiner = refiner or TemplateRefiner(domain, hints)
    occasions = normalise_occasions(hints.occasions)
    design = design_conditions(n, f"{domain.name}/{split}/{seed}", space)
    feelings = feelings or _template_feelings()
    report = BuildReport(domain=domain.name, split=split, seed=seed, tasks=[], candidates=0,
                         graph={"tools": len(graph.graph), "edges": graph.graph.number_of_edges(),
                                "density": round(graph.density, 4)})
    accepted: list[Candidate] = []
    readings: list[tuple[dict[str, str], dict[str, str] | None, int]] = []
    # per stratified variable, family -> Counter of the accepted tasks' values
    strata: dict[str, dict[str, Counter]] = {"challenge": {}, "intents": {}, "rule": {}, "length": {}, "kinds": {}}
    limit = max_candidates or max(500, 300 * n)  # the design's last conditions (a rare cause) may need many draws
    index = 0
    last_accept = 0  # the candidate index after the last accepted task (stall relaxes the balance strata)
    while len(accepted) < n and index < limit:
        rng = random.Random(f"tracer/{domain.name}/{split}/{seed}/{index}")
        index += 1
        try:
            cand = grounder.ground(rng, index - 1, split)
            if (cand.persona.entity or cand.persona.name) in reserved_users:
                raise Reject("split", f"user {cand.persona.entity or cand.persona.name} belongs to another split")
            allowed = hints.occasion_intents is None or all(d.kind in hints.occasion_intents for d in cand.drafts)
            stall = (index - 1 - last_accept) // STALL_CANDIDATES
            # stalled: an emotion may rest on a weaker cause (`appraisal.cause`)
            cand.relax = min(3, (index - 1 - last_accept) // RELAX_CANDIDATES)
            condition = take_condition(design, len(accepted), cand, strata, occasions, allowed, slack=1 + stall)
            occasion = occasion_for(occasions, condition, cand, rng, allowed)
            if occasion is not None:
                cand.occasion, cand.occasion_stakes, cand.occasion_valence = occasion
            refined = refiner.refine(cand, rng)
            cand.task = make_task(cand, refined, getattr(refined, "source", None) or getattr(refiner, "name", "template"),
                                  seed)
            validator.check(cand)
            sequence = tuple(writes(domain, cand.task))
            if sequence and sequence in sequences:
                raise Reject("duplicate", f"repeats the write sequence of an accepted task: {sequence}")
            if written_entities(domain, cand.task) & reserved_entities:
                raise Reject("split", "writes an entity another split writes")
            if split != "train":  # issue 21: one task per user, one write per entity (train reuses users by design)
                user = task_user(cand.task)
                if user is not None and user in split_users:
                    raise Reject("duplicate", f"user {user} already has a task in this split")
                again = written_entities(domain, cand.task) & split_entities
                if again:
                    raise Reject("duplicate", f"writes {sorted(again)[0]}, which an accepted task writes")
            if rollout is not None:
                rollout(cand)
            feel = random.Random(f"tracer/{domain.name}/{split}/{seed}/{cand.index}/feelings")
            cand.feeling, reading, tries = write_feelings(feelings, labeler, cand, condition, feel)
            if (cand.persona.entity or cand.persona.name) in apart_users:
                raise Reject("split", f"user {cand.persona.entity or cand.persona.name} belongs to another split")
            if written_entities(domain, cand.task) & apart_entities:
                raise Reject("split", "writes an entity another split writes")
        except Reject as exc:
            report.rejected[exc.check] += 1
            report.examples.setdefault(exc.check, exc.detail)
            continue
        validator.register(cand)
        sequences.add(sequence)
        split_users.add(task_user(cand.task))
        split_entities.update(written_entities(domain, cand.task))
        accepted.append(cand)
        last_accept = index
        readings.append((condition, reading, tries))
        for name, value in stratum(cand).items():
            strata[name].setdefault(condition["family"], Counter())[value] += 1
        strata["kinds"].setdefault(condition["family"], Counter()).update(d.kind for d in cand.drafts)
        if on_accept is not None:
            on_accept(len(accepted))
    report.candidates = index
    if len(accepted) < n:
        detail = ", ".join(f"{k} {v}" for k, v in report.breakdown().items())
        raise TracerError(f"domain '{domain.name}': only {len(accepted)} of {n} {split} task(s) passed validation "
                          f"after {index} candidates (rejected: {detail or 'none'}); try another seed or --min-calls")
    for k, (cand, (condition, reading, tries)) in enumerate(zip(accepted, readings, strict=True), start=1):
        assert cand.task is not None
        anchor_rng = random.Random(f"tracer/{domain.name}/{split}/{seed}/{cand.index}/anchor")
        recorded = recorded_situation(cand, condition)
        emotion = labeler.block(condition, anchor_rng, fits=lambda a, r=recorded: not check_text(a, r, "anchor")) \
            if labeler is not None else None
        extra = {"feeling": cand.feeling, "feelings": getattr(feelings, "name", "template"), "situation": recorded,
                 **({"appraisal_relax": cand.relax} if cand.relax else {})}
        if labeler is not None:
            extra |= {"emotion_reading": reading, "feelings_tries": tries}
        cand.task = with_plan(domain, cand.task.with_block("emotion", emotion, id=task_id(domain.name, split, k, n),
                                                           meta={**cand.task.meta, **extra}))
        report.tasks.append(cand.task)
    report.seconds = time.perf_counter() - started
    return report


def stratum(cand: Candidate) -> dict[str, Any]:
    """What the build balances across emotion families: whether the task is a policy challenge, how many
    intents the user states (1, 2, 3+; a refusal the user insists on is two, as in `intent_gold`), whether it carries a
    decision rule, and its gold length (`design.length_bin`); its request kinds separately (`kinds_fit`)."""
    intents = sum(1 + int(bool(d.refused and d.on_refusal == "transfer")) for d in cand.drafts)
    return {"challenge": bool(cand.policy_challenge), "intents": min(intents, INTENT_STRATA),
            "rule": any(d.decision for d in cand.drafts), "length": length_bin(len(cand.gold_actions))}


def condition_misfit(condition: dict[str, str], cand: Candidate, strata: dict[str, dict[str, Counter]],
                     occasions: list[tuple[str, int, str]], allowed: bool, slack: float = 1) -> Reject | None:
    """Why `cand` cannot take `condition` (None when it can): feelings that would not fit its events, an
    emotion that needs an occasion the task cannot have, or a family with enough (or too few) tasks like it:
    policy challenges, or tasks of its number of intents (`design.share_fits`)."""
    why = None if needs_occasion(condition) else feelings_misfit(condition, situation(cand))
    if needs_occasion(condition) or why is not None:  # the appraisal may find the cause in an occasion instead
        if not _fitting_occasions(occasions, condition, cand, allowed):
            return Reject("feelings", why or f"{condition['emotion']} needs an occasion that gives reason for it")
    for name, value in stratum(cand).items():
        room = CHALLENGE_SLACK * slack if name in ("length", "rule") else min(CHALLENGE_SLACK * slack, STALL_CAP)
        if not share_fits(strata[name], condition["family"], value, room):
            kind = {"challenge": "a policy challenge" if value else "no policy challenge",
                    "intents": f"{value}{'+' if value == INTENT_STRATA else ''} intent(s)",
                    "rule": "a decision rule" if value else "no decision rule",
                    "length": f"gold length bin {value}"}[name]
            return Reject("balance", f"{condition['family']} has enough tasks with {kind} for the split's "
                                     f"running share")
    sizes = Counter({f: sum(c.values()) for f, c in strata["challenge"].items()})
    if not kinds_fit(strata["kinds"], sizes, condition["family"], [d.kind for d in cand.drafts], KIND_SLACK * slack):
        return Reject("balance", f"{condition['family']} has enough {'/'.join(d.kind for d in cand.drafts)} "
                                 f"requests for the split's running share")
    return None


def _fitting_occasions(occasions: list[tuple[str, int, str]], condition: dict[str, str], cand: Candidate,
                       allowed: bool) -> list[tuple[str, int, str]]:
    return [o for o in occasions if occasion_fits(o[2], condition)
            and feelings_misfit(condition, situation(cand, o)) is None] if allowed else []


def occasion_for(occasions: list[tuple[str, int, str]], condition: dict[str, str], cand: Candidate,
                 rng: random.Random, allowed: bool) -> tuple[str, int, str] | None:
    """The occasion the task gets: one that gives the condition its cause when the candidate's own events do not
    (`feelings.feelings_misfit`), else, half the time, one its feelings can still be said beside."""
    if not needs_occasion(condition) and feelings_misfit(condition, situation(cand)) is not None:
        fitting = _fitting_occasions(occasions, condition, cand, allowed)
        return rng.choice(fitting) if fitting else None
    return pick_occasion(occasions, condition, rng, allowed=allowed, fits=lambda o, c=cand, k=condition:
                         feelings_misfit(k, situation(c, o)) is None)


def take_condition(design: list[dict[str, str]], k: int, cand: Candidate, strata: dict[str, dict[str, Counter]],
                   occasions: list[tuple[str, int, str]], allowed: bool, slack: float = 1) -> dict[str, str]:
    """The condition task `k` gets: a later condition whose emotion needs an occasion when the candidate can take
    one, else the design's condition `k` when the candidate can take it, else the first later one it can take,
    swapped into place (the design keeps every condition once; a condition the candidate
    cannot take waits for a candidate that can), else a later one whose urgency, traded with another later
    condition's, fits the candidate's dates and stakes (`_retarget`); a Reject when none fits."""
    # an emotion that needs an occasion (sorrow) fits few candidates: take it whenever one can, so it does not
    # drift to the end of the design and wait there for a candidate that may never come
    for j in range(k, len(design)):
        if needs_occasion(design[j]) and (condition_misfit(design[j], cand, strata, occasions, allowed, slack) is None
                                          or _retarget(design, k, j, cand, strata, occasions, allowed, slack)):
            design[k], design[j] = design[j], design[k]
            return design[k]
    first = condition_misfit(design[k], cand, strata, occasions, allowed, slack)
    if first is None:
        _retarget(design, k, k, cand, strata, occasions, allowed, slack, only=SCARCE_URGENCY)
        return design[k]
    for j in range(k + 1, len(design)):
        if condition_misfit(design[j], cand, strata, occasions, allowed, slack) is None:
            design[k], design[j] = design[j], design[k]
            _retarget(design, k, k, cand, strata, occasions, allowed, slack, only=SCARCE_URGENCY)
            return design[k]
    for j in range(k, len(design)):
        if _retarget(design, k, j, cand, strata, occasions, allowed, slack):
            design[k], design[j] = design[j], design[k]
            return design[k]
    raise first


#: the urgency few situations allow ("no rush" needs no near date and no misfortune): a candidate that can take it
#: takes it, so the split's low-urgency tasks do not run out of situations before the design does
SCARCE_URGENCY = "low"


def _retarget(design: list[dict[str, str]], k: int, j: int, cand: Candidate, strata: dict[str, dict[str, Counter]],
              occasions: list[tuple[str, int, str]], allowed: bool, slack: float, only: str | None = None) -> bool:
    """Give design row `j` an urgency the candidate's situation allows (`appraisal.urgency_misfit`: no "no rush"
    beside a date tomorrow), trading it with a later row's, so the split keeps its count of each urgency and no
    condition comes twice; whether it could. `only`: try that urgency alone."""
    taken = Counter(condition_id(row) for row in design)
    wanted = {row["urgency"] for row in design[k:]} if only is None else {only}
    for urgency in sorted(wanted - {design[j]["urgency"]}):
        mine = {**design[j], "urgency": urgency}
        if taken[condition_id(mine)] or condition_misfit(mine, cand, strata, occasions, allowed, slack) is not None:
            continue
        for i in range(k, len(design)):
            theirs = {**design[i], "urgency": design[j]["urgency"]}
            if i != j and design[i]["urgency"] == urgency and not taken[condition_id(theirs)]:
                design[j], design[i] = mine, theirs
                return True
    return False


def write_feelings(feelings: Any, labeler: EmotionLabeler | None, cand: Candidate, condition: dict[str, str],
                   rng: random.Random) -> tuple[str, dict[str, str] | None, int]:
    """Feelings text for `condition` that the classifier reads back as its family and emotion.

    Returns (text, reading, tries); rejects the candidate after FEELINGS_TRIES texts that disagree.
    Without a labeler (`--no-emotion`) the first text is kept unread.
    """
    from tau_emotion.tracer.feelings import agrees

    reading: dict[str, str] | None = None
    for tries in range(1, FEELINGS_TRIES + 1):
        text = feelings.describe(cand, rng, condition)
        if labeler is None:
            return text, None, tries
        if check_text(text, recorded_situation(cand, condition)):  # the coherence audit would fail it
            continue
        reading = labeler.read(text)
        if agrees(condition, reading):
            return text, reading, tries
    if reading is None:
        raise Reject("feelings", f"{FEELINGS_TRIES} feelings texts for {condition['family']}.{condition['emotion']} "
                                 f"fail the coherence audit")
    raise Reject("feelings", f"{FEELINGS_TRIES} feelings texts for {condition['family']}.{condition['emotion']} "
                             f"were read as {reading['family']}.{reading['emotion']}")


def _template_feelings() -> Any:
    from tau_emotion.tracer.feelings import TemplateFeelings

    return TemplateFeelings()


# --------------------------------------------------------------------------- files


def dump_tasks(tasks: list[Task]) -> str:
    rows = [t.model_dump(mode="json") for t in tasks]
    return json.dumps(rows, indent=1, ensure_ascii=False) + "\n"


def pack_tasks_path(domain: Domain) -> Path:
    if domain.package is None:
        raise TracerError(f"domain '{domain.name}' has no package to write tasks into; use --out FILE")
    return Path(str(files(domain.package).joinpath("data/tasks.json")))


def default_avoid(domain: Domain, split: str) -> list[Task]:
    """Tasks a new split must not duplicate: every other split except `train` (train may echo nothing new)."""
    return [t for t in domain.tasks(None) if t.split != split and (split == "train" or t.split != "train")]


def kept_apart(domain: Domain, split: str) -> list[Task]:
    """Every other Tracer-built split: a new split shares none of their users and written entities, so test and
    train come out clean whichever is built first (`build_tasks(keep_apart=...)`)."""
    return [t for t in domain.tasks(None) if t.split != split and t.meta.get("source") == "tracer"]


def foreign_tasks(path: Path, split: str) -> list[str]:
    """Ids of the tasks in `split` of a task file that the Tracer did not build (hand-written): a build must not
    replace them unasked."""
    raw = json.loads(path.read_text(encoding="utf-8")) if path.exists() else []
    if isinstance(raw, dict) and "tasks" in raw:
        raw = raw["tasks"]
    return [str(row.get("id")) for row in raw
            if row.get("split") == split and (row.get("meta") or {}).get("source") != "tracer"]


def merge_into_file(path: Path, split: str, tasks: list[Task]) -> int:
    """Replace `split` in a task file (other splits kept), ordered hand, test, train, then others."""
    raw = json.loads(path.read_text(encoding="utf-8")) if path.exists() else []
    if isinstance(raw, dict) and "tasks" in raw:
        raw = raw["tasks"]
    kept = [row for row in raw if row.get("split") != split]
    rows = kept + [t.model_dump(mode="json") for t in tasks]
    order = {id(row): i for i, row in enumerate(rows)}
    rows.sort(key=lambda row: (SPLIT_ORDER.get(row.get("split", ""), 3), row.get("split", ""), order[id(row)]))
    write_text_atomic(path, json.dumps(rows, indent=1, ensure_ascii=False) + "\n")  # never half a file of splits
    return len(rows)
