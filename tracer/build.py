"""The Tracer pipeline for one domain and split, as a row of stages:
ground -> design -> refine -> feel -> validate -> select, then `finish` numbers the accepted tasks.

Each stage is a function with a typed input and output (`Grounded`, `Designed`, `Drafted`, `Felt`); `prepare` makes
what every stage reads once per build (`Build`). Any stage may end a candidate with the validator's `Reject`
(`tracer/validate.py` holds every rejection reason); the loop counts them per check, with one example each.
Candidate `i` of a build draws everything from `random.Random("tracer/<domain>/<split>/<seed>/<i>")`
(and a second stream for its feelings, a third for its anchor), so the same seed gives the same tasks, byte for
byte, and a candidate's fate does not depend on the ones before it except through the design's order, the balance
strata and the duplicate checks.
"""

from __future__ import annotations

import json
import random
import time
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, field
from importlib.resources import files
from pathlib import Path
from typing import TYPE_CHECKING, Any

from tau_emotion.core.errors import TauError
from tau_emotion.core.models import Gold, Task, UserSpec
from tau_emotion.core.state import write_text_atomic
from tau_emotion.tracer.appraisal import ANY_CAUSE
from tau_emotion.tracer.coherence import check_text
from tau_emotion.tracer.design import (
    condition_id,
    design_conditions,
    needs_occasion,
    normalise_occasions,
    pick_occasion,
)
from tau_emotion.tracer.feelings import recorded_situation
from tau_emotion.tracer.graph import ToolGraph, build_graph
from tau_emotion.tracer.grounding import Candidate, DeadEnd, Grounder
from tau_emotion.tracer.hints import TracerHints, load_hints
from tau_emotion.tracer.plan import PLAN_META, policy_challenge, with_plan
from tau_emotion.tracer.refine import TemplateRefiner, intent_fact_keys
from tau_emotion.tracer.sampling import check_lengths, profile_for
from tau_emotion.tracer.validate import (
    CHECKS,
    Fits,
    Reject,
    SplitChecks,
    Validator,
    incoherent,
    misread,
    stratum,
)

if TYPE_CHECKING:
    from collections.abc import Callable

    from tau_emotion.core.conditions import ConditionSpace
    from tau_emotion.core.domain import Domain
    from tau_emotion.tracer.feelings import EmotionLabeler

SPLIT_ORDER = {"hand": 0, "test": 1, "train": 2}
#: the `Task.meta` keys the Tracer writes and only `tracer/` reads (`tests/test_plan_contract.py` checks); what another
#: plugin needs of them is in the task's `IntentPlan`
TRACER_META = ("source", "user", "graph_path", "seed", "candidate", "refiner", "feelings", "emotion_reading",
               "feelings_tries", "appraisal_relax", "review", *PLAN_META)
#: feelings texts tried per candidate before it is rejected for disagreeing with its condition
FEELINGS_TRIES = 8
#: after this many candidates in a row without an accepted task, the balance strata get one more unit of slack (the
#: last few conditions of a design may ask for a family whose strata few candidates fit; deterministic per seed);
#: challenges and intents per task, which the audit holds to 1.5 tasks, at most STALL_CAP (`validate.py`)
STALL_CANDIDATES = 1000
#: candidates without an accepted task after which the appraisal accepts a cause one intensity step weaker (after
#: twice as many, anger at any setback): a pack whose situations rarely give an emotion its full cause still completes
#: its design, and the task says so (`meta.appraisal_relax`); the kind of cause fear, sadness and disgust need is never
#: relaxed (`appraisal.cause`)
RELAX_CANDIDATES = 200
#: the most steps a stalled build relaxes the appraisal by (`appraisal.cause`)
MAX_RELAX = 2
#: candidates per task a build tries before it gives up: the appraisal's kinds of cause leave a design's last few
#: conditions (a repugnance, a dread) to rare candidates, which the stall slack above eventually admits
CANDIDATES_PER_TASK = 1000
#: candidates a build tries past its limit, once, with its open conditions free to take another emotion of their
#: family or another urgency (`Widening`): a design whose last dread no situation of the pack carries gets a
#: nervousness instead, and a last sorrow designed as "no rush" (a loss always presses) another urgency, keeping
#: every family's count, each emotion within the design's band and each urgency within WIDEN_DRIFT of its designed
#: count (a build that completes within its limit never widens, so it comes out as it did before)
WIDEN_CANDIDATES = 20000
WIDEN_DRIFT = 2


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
        ordered = [*CHECKS, *sorted(set(self.rejected) - set(CHECKS))]  # `review`: a person rejected the task
        return {check: self.rejected.get(check, 0) for check in ordered if self.rejected.get(check, 0)}

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


@dataclass
class BuildOptions:
    """The optional knobs of a build, given to `build_tasks` as keywords (a misspelt one is a TypeError).

    `avoid`: tasks a new split must not duplicate (`default_avoid`); `keep_apart` (`kept_apart`): tasks of other
    splits whose users and written entities no accepted task may share, checked last (`SplitChecks`).
    `hints`: the pack's (`load_hints(domain, pm)`); default, those its own package gives. `graph`: the domain's
    tool graph with those hints, when the caller has built it already (`build_graph(domain, hints)`).
    `rollout`: a callable (`rollout.RolloutCheck`) saying why a model failed the candidate, None when it solved it.
    `skip`: whether a finished task is one a person rejected (`review.Review.skip`). Such a task holds its place
    until the pass over the candidates ends, so every other task comes out as it did before; then the rejected are
    left out, their conditions and numbers freed, and the next valid candidates are built in their place (`release`).
    """

    min_calls: int | None = None
    max_calls: int | None = None
    challenge_rate: float | None = None
    refiner: Any = None
    feelings: Any = None
    labeler: EmotionLabeler | None = None
    rollout: Callable[[Candidate], str | None] | None = None
    avoid: list[Task] | None = None
    keep_apart: list[Task] | None = None
    #: candidates tried before the build gives up (default CANDIDATES_PER_TASK per task)
    max_candidates: int | None = None
    on_accept: Callable[[int], None] | None = None
    hints: TracerHints | None = None
    graph: ToolGraph | None = None
    skip: Callable[[Task], bool] | None = None


@dataclass
class Build:
    """What one build holds from start to end: made once by `prepare`, read by every stage, and grown by
    `select` (the accepted candidates and the balance strata they fill)."""

    domain: Domain
    split: str
    n: int
    seed: int
    hints: TracerHints
    grounder: Grounder
    #: the split's conditions in task order (`design.design_conditions`); `take_condition` swaps within it
    design: list[dict[str, str]]
    occasions: list[tuple[str, int, str]]
    refiner: Any
    feelings: Any
    labeler: EmotionLabeler | None
    validator: Validator
    split_checks: SplitChecks
    rollout: Callable[[Candidate], str | None] | None
    report: BuildReport
    limit: int
    on_accept: Callable[[int], None] | None = None
    skip: Callable[[Task], bool] | None = None
    accepted: list[Felt] = field(default_factory=list)
    #: the finished task of each accepted candidate, and its task number (`finish_one`)
    tasks: list[Task] = field(default_factory=list)
    slots: list[int] = field(default_factory=list)
    #: the numbers of tasks a person rejected, waiting for a replacement
    free: list[int] = field(default_factory=list)
    #: positions in `accepted` of tasks a person rejected, held until the pass ends (`release`)
    refused: list[int] = field(default_factory=list)
    #: per stratified variable, family -> Counter of the accepted tasks' values
    strata: dict[str, dict[str, Counter]] = field(default_factory=lambda: {
        "challenge": {}, "intents": {}, "rule": {}, "length": {}, "kinds": {}})
    #: the candidate index after the last accepted task (a stall relaxes the balance strata)
    last_accept: int = 0
    #: every emotion of the condition space -> its family (what `widen` may give an open condition)
    emotions: dict[str, str] = field(default_factory=dict)
    #: past the limit (`widen`): what an open condition may change
    widening: Widening | None = None
    #: the candidates `widen` adds: none when the caller capped the candidates or the build attaches no emotion
    widen_by: int = 0

    def rng(self, *parts: Any) -> random.Random:
        """The random stream of one candidate (or one of its parts): `tracer/<domain>/<split>/<seed>/<i>[/part]`."""
        return random.Random("/".join(["tracer", self.domain.name, self.split, str(self.seed), *map(str, parts)]))


@dataclass
class Grounded:
    """The ground stage's output: a candidate on the real database, and the stream its design and refinement draw."""

    cand: Candidate
    rng: random.Random


@dataclass
class Designed:
    """The design stage's output: the grounded candidate with the condition it takes (and its occasion, if any)."""

    cand: Candidate
    rng: random.Random
    condition: dict[str, str]


@dataclass
class Drafted:
    """The refine stage's output: the candidate with its task (`cand.task`: instruction, facts, gold, meta)."""

    cand: Candidate
    condition: dict[str, str]


@dataclass
class Felt:
    """The feel stage's output (and, once validated, what `select` keeps): the feelings text is `cand.feeling`;
    `reading` is the classifier's reading of it (None without a labeler) after `tries` texts."""

    cand: Candidate
    condition: dict[str, str]
    reading: dict[str, str] | None
    tries: int


def build_tasks(domain: Domain, split: str, n: int, seed: int, *, space: ConditionSpace,
                **options: Any) -> BuildReport:
    """Build `n` validated tasks; raise TracerError when the candidates run out first.

    Each candidate goes through the stages ground -> design -> refine -> feel -> validate -> select; any stage may
    end it with the validator's `Reject`, which is counted per check. `space` is the emotion plugin's condition
    space (`feelings.condition_space(pm)`): the design draws from it. `options`: the fields of `BuildOptions`.
    """
    started = time.perf_counter()
    build = prepare(domain, split, n, seed, space, BuildOptions(**options))
    index = 0
    while (len(build.accepted) < n and index < build.limit) or release(build) or widen(build):
        try:
            select(build, validate(build, feel(build, refine(build, design(build, ground(build, index))))))
        except Reject as exc:
            build.report.rejected[exc.check] += 1
            build.report.examples.setdefault(exc.check, exc.detail)
        index += 1
    build.report.candidates = index
    if len(build.accepted) < n:
        detail = ", ".join(f"{k} {v}" for k, v in build.report.breakdown().items())
        raise TracerError(f"domain '{domain.name}': only {len(build.accepted)} of {n} {split} task(s) passed "
                          f"validation after {index} candidates (rejected: {detail or 'none'}); try another seed or "
                          f"--min-calls")
    build.report.tasks = finish(build)
    build.report.seconds = time.perf_counter() - started
    return build.report


def prepare(domain: Domain, split: str, n: int, seed: int, space: ConditionSpace, options: BuildOptions) -> Build:
    """A build's fixed parts, in the order the stages use them: hints, graph, profile, grounder, design, refiner,
    feelings, validator."""
    hints = options.hints if options.hints is not None else load_hints(domain)
    if not hints.can_ground:
        raise TracerError(f"domain '{domain.name}' gives the Tracer no grounding hints (persona and goals); "
                          f"answer tau_tracer_hints with a TracerHints (see tau_emotion.tracer.hints)")
    graph = options.graph if options.graph is not None else build_graph(domain, hints)
    profile = profile_for(split, min_calls=options.min_calls, max_calls=options.max_calls,
                          challenge_rate=options.challenge_rate)
    check_lengths(graph, list(hints.goals), profile.min_calls, profile.max_calls)
    report = BuildReport(domain=domain.name, split=split, seed=seed, tasks=[], candidates=0,
                         graph={"tools": len(graph.graph), "edges": graph.graph.number_of_edges(),
                                "density": round(graph.density, 4)})
    return Build(domain=domain, split=split, n=n, seed=seed, hints=hints,
                 grounder=Grounder(domain, graph, hints, profile),
                 design=design_conditions(n, f"{domain.name}/{split}/{seed}", space),
                 occasions=normalise_occasions(hints.occasions),
                 refiner=options.refiner or TemplateRefiner(domain, hints),
                 feelings=options.feelings or _template_feelings(), labeler=options.labeler,
                 validator=Validator(domain, options.avoid or [], hints),
                 split_checks=SplitChecks(domain, split, options.avoid or [], options.keep_apart or []),
                 rollout=options.rollout, report=report, limit=options.max_candidates or max(500, CANDIDATES_PER_TASK * n),
                 on_accept=options.on_accept, skip=options.skip, emotions=dict(space.labels),
                 widen_by=WIDEN_CANDIDATES if options.max_candidates is None and options.labeler is not None else 0)


def ground(build: Build, index: int) -> Grounded:
    """Candidate `index` grounded on the real database; rejected at a dead end or with a user of another split."""
    rng = build.rng(index)
    try:
        cand = build.grounder.ground(rng, index, build.split)
    except DeadEnd as end:
        build.validator.check_grounding(end)
    build.split_checks.check_user(cand.persona.entity or cand.persona.name)
    return Grounded(cand, rng)


def design(build: Build, grounded: Grounded) -> Designed:
    """The condition the candidate takes (`take_condition`) and an occasion that fits it (`design.pick_occasion`)."""
    cand, rng, hints = grounded.cand, grounded.rng, build.hints
    allowed = hints.occasion_intents is None or all(d.kind in hints.occasion_intents for d in cand.drafts)
    # stalled: an emotion may rest on a weaker cause (`appraisal.cause`)
    # (a build without emotion conditions attaches none, so any stated event will do)
    cand.relax = ANY_CAUSE if build.labeler is None else min(MAX_RELAX, (cand.index - build.last_accept) // RELAX_CANDIDATES)
    slack = 1 + (cand.index - build.last_accept) // STALL_CANDIDATES
    lived = [d.mood for d in cand.drafts]
    try:
        condition = take_condition(build.design, len(build.accepted), cand, build.strata, build.occasions, allowed,
                                   slack=slack, widening=build.widening)
    except Reject:
        # no open condition has its cause in the moods as drawn: another way an intent may be lived may give one
        for i, other in ((i, o) for i, mood in enumerate(lived) for o in mood.others):
            cand.drafts[i].mood = other
            try:
                condition = take_condition(build.design, len(build.accepted), cand, build.strata, build.occasions,
                                           allowed, slack=slack, widening=build.widening)
                break
            except Reject:
                cand.drafts[i].mood = lived[i]
        else:
            raise
    occasion = occasion_for(build.occasions, condition, cand, rng, allowed)
    if occasion is not None:
        cand.occasion, cand.occasion_stakes, cand.occasion_valence = occasion
    return Designed(cand, rng, condition)


def refine(build: Build, designed: Designed) -> Drafted:
    """The user's words for the candidate (the refiner) and its task (`make_task`)."""
    cand = designed.cand
    refined = build.refiner.refine(cand, designed.rng)
    source = getattr(refined, "source", None) or getattr(build.refiner, "name", "template")
    cand.task = make_task(cand, refined, source, build.seed)
    return Drafted(cand, designed.condition)


def feel(build: Build, drafted: Drafted) -> Felt:
    """The feelings text for the candidate's condition, from its own stream (`write_feelings`)."""
    cand = drafted.cand
    cand.feeling, reading, tries = write_feelings(build.feelings, build.labeler, cand, drafted.condition,
                                                  build.rng(cand.index, "feelings"))
    return Felt(cand, drafted.condition, reading, tries)


def validate(build: Build, felt: Felt) -> Felt:
    """Every check of the validator: the candidate's own, against the split so far, the optional rollout, and
    (last, see `SplitChecks`) against the splits kept apart."""
    cand = felt.cand
    assert cand.task is not None
    build.validator.check(cand)
    build.split_checks.check(cand.task)
    build.validator.check_rollout(cand, build.rollout)
    build.split_checks.check_apart(cand.task, cand.persona.entity or cand.persona.name)
    return felt


def select(build: Build, felt: Felt) -> None:
    """Accept a validated candidate: later candidates are compared with it and balanced against it."""
    cand = felt.cand
    assert cand.task is not None
    build.validator.register(cand)
    build.split_checks.add(cand.task)
    build.accepted.append(felt)
    build.last_accept = cand.index + 1
    for name, value in stratum(cand).items():
        build.strata[name].setdefault(felt.condition["family"], Counter())[value] += 1
    build.strata["kinds"].setdefault(felt.condition["family"], Counter()).update(d.kind for d in cand.drafts)
    build.slots.append(build.free.pop(0) if build.free else len(build.accepted))
    build.tasks.append(finish_one(build, felt, build.slots[-1]))
    if build.skip is not None and build.skip(build.tasks[-1]):
        build.refused.append(len(build.accepted) - 1)
        build.report.rejected["review"] += 1
        build.report.examples.setdefault("review", f"{build.tasks[-1].id} was rejected by its reviewer")
    elif build.on_accept is not None:
        build.on_accept(len(build.accepted))


def release(build: Build) -> bool:
    """At the end of a pass: leave out what a person rejected and free its condition, strata and number, so the
    build goes on to fill those places; False when there is nothing to release."""
    if not build.refused or len(build.accepted) < build.n:
        return False
    freed = []
    for pos in sorted(build.refused, reverse=True):
        felt = build.accepted.pop(pos)
        build.tasks.pop(pos)
        build.free.append(build.slots.pop(pos))
        freed.insert(0, felt.condition)
        family = felt.condition["family"]
        build.strata["kinds"][family].subtract(d.kind for d in felt.cand.drafts)
        for name, value in stratum(felt.cand).items():
            build.strata[name][family][value] -= 1
    build.free.sort()
    build.design[:] = [felt.condition for felt in build.accepted] + freed + build.design[build.n:]
    build.refused.clear()
    return True


@dataclass(frozen=True)
class Widening:
    """What a widened build lets an open condition change (`widen`): its emotion, for another of its family, and
    its urgency, while every emotion keeps within the design's band and every urgency within WIDEN_DRIFT of its
    designed count (`Widening.change`)."""

    #: every emotion of the condition space -> its family
    emotions: Mapping[str, str]
    #: the design's count of each urgency
    urgency: Mapping[str, int]

    def change(self, design: list[dict[str, str]], j: int, fits: Fits, taken: Counter) -> bool:
        """Give design row `j` another emotion of its family, else another urgency, that the candidate can take (an
        emotion must keep more than the least rows any emotion has, the other fewer than the most: 2-3 of 58, 0-1
        of 10); whether it could."""
        row = design[j]
        counts = Counter(r["emotion"] for r in design)
        low, high = min(counts[e] for e in self.emotions), max(counts[e] for e in self.emotions)  # none: 0
        others = sorted(e for e, family in self.emotions.items() if family == row["family"] and e != row["emotion"])
        changes = [{**row, "emotion": e} for e in others if counts[row["emotion"]] > low and counts[e] < high]
        urgency = Counter(r["urgency"] for r in design)
        changes += [{**row, "urgency": u} for u in sorted(self.urgency) if u != row["urgency"]
                    and urgency[row["urgency"]] > self.urgency[row["urgency"]] - WIDEN_DRIFT
                    and urgency[u] < self.urgency[u] + WIDEN_DRIFT]
        for mine in changes:
            if not taken[condition_id(mine)] and fits.misfit(mine) is None:
                design[j] = mine
                return True
        return False


def widen(build: Build) -> bool:
    """Once, when the candidates run out short of `n`: WIDEN_CANDIDATES more, each open condition free to change
    as `Widening` allows; False when the build is full, has widened already, or may not (`Build.widen_by`)."""
    if len(build.accepted) >= build.n or build.widening is not None or not build.widen_by:
        return False
    build.widening = Widening(build.emotions, Counter(r["urgency"] for r in build.design))
    build.limit += build.widen_by
    return True


def finish_one(build: Build, felt: Felt, k: int) -> Task:
    """Accepted task number `k` with its emotion block (an anchor from its own stream), its feelings and its
    intent plan."""
    cand, labeler = felt.cand, build.labeler
    assert cand.task is not None
    recorded = recorded_situation(cand, felt.condition)
    emotion = labeler.block(felt.condition, build.rng(cand.index, "anchor"),
                            fits=lambda a, r=recorded: not check_text(a, r, "anchor")) if labeler is not None else None
    extra = {"feeling": cand.feeling, "feelings": getattr(build.feelings, "name", "template"), "situation": recorded,
             **({"appraisal_relax": cand.relax} if cand.relax else {})}
    if labeler is not None:
        extra |= {"emotion_reading": felt.reading, "feelings_tries": felt.tries}
    return with_plan(build.domain, cand.task.with_block(
        "emotion", emotion, id=task_id(build.domain.name, build.split, k, build.n), meta={**cand.task.meta, **extra}))


def finish(build: Build) -> list[Task]:
    """The accepted tasks in task-number order (a replacement takes the number of the task it replaces)."""
    return [task for _, task in sorted(zip(build.slots, build.tasks, strict=True), key=lambda pair: pair[0])]


def occasion_for(occasions: list[tuple[str, int, str]], condition: dict[str, str], cand: Candidate,
                 rng: random.Random, allowed: bool) -> tuple[str, int, str] | None:
    """The occasion the task gets: one that gives the condition its cause when the candidate's own events do not
    (`feelings.feelings_misfit`), else, half the time, one its feelings can still be said beside."""
    fits = Fits(cand, occasions, allowed)
    if not needs_occasion(condition) and fits.feelings(condition) is not None:
        fitting = fits.occasions(condition)
        return rng.choice(fitting) if fitting else None
    return pick_occasion(occasions, condition, rng, allowed=allowed, fits=lambda o: fits.feelings(condition, o) is None)


def take_condition(design: list[dict[str, str]], k: int, cand: Candidate, strata: dict[str, dict[str, Counter]],
                   occasions: list[tuple[str, int, str]], allowed: bool, slack: float = 1,
                   widening: Widening | None = None) -> dict[str, str]:
    """The condition task `k` gets: a later condition whose emotion needs an occasion when the candidate can take
    one, else the design's condition `k` when the candidate can take it, else the first later one it can take,
    swapped into place (the design keeps every condition once; a condition the candidate
    cannot take waits for a candidate that can), else a later one whose urgency, traded with another later
    condition's, fits the candidate's dates and stakes (`_retarget`), else (a widened build only) a later one
    changed as `widening` allows; a Reject when none fits."""
    fits = Fits(cand, occasions, allowed, strata, slack)  # what the candidate can take, asked once per condition
    taken = Counter(condition_id(row) for row in design)  # swaps keep it; a retarget changes it and returns
    # an emotion that needs an occasion (sorrow) fits few candidates: take it whenever one can, so it does not
    # drift to the end of the design and wait there for a candidate that may never come
    for j in range(k, len(design)):
        if needs_occasion(design[j]) and (fits.misfit(design[j]) is None or _retarget(design, k, j, fits, taken)):
            design[k], design[j] = design[j], design[k]
            return design[k]
    first = fits.misfit(design[k])
    if first is None:
        _retarget(design, k, k, fits, taken, only=SCARCE_URGENCY)
        return design[k]
    for j in range(k + 1, len(design)):
        if fits.misfit(design[j]) is None:
            design[k], design[j] = design[j], design[k]
            _retarget(design, k, k, fits, taken, only=SCARCE_URGENCY)
            return design[k]
    for j in range(k, len(design)):
        if _retarget(design, k, j, fits, taken):
            design[k], design[j] = design[j], design[k]
            return design[k]
    for j in range(k, len(design) if widening is not None else k):
        if widening.change(design, j, fits, taken):
            design[k], design[j] = design[j], design[k]
            return design[k]
    raise first


#: the urgency few situations allow ("no rush" needs no near date and no misfortune): a candidate that can take it
#: takes it, so the split's low-urgency tasks do not run out of situations before the design does
SCARCE_URGENCY = "low"


def _retarget(design: list[dict[str, str]], k: int, j: int, fits: Fits, taken: Counter, only: str | None = None) -> bool:
    """Give design row `j` an urgency the candidate's situation allows (`appraisal.urgency_misfit`: no "no rush"
    beside a date tomorrow), trading it with a later row's, so the split keeps its count of each urgency and no
    condition comes twice; whether it could. `only`: try that urgency alone. `taken`: the design's conditions."""
    wanted = {row["urgency"] for row in design[k:]} if only is None else {only}
    for urgency in sorted(wanted - {design[j]["urgency"]}):
        mine = {**design[j], "urgency": urgency}
        if taken[condition_id(mine)] or fits.misfit(mine) is not None:
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
        raise incoherent(condition, FEELINGS_TRIES)
    raise misread(condition, reading, FEELINGS_TRIES)


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
