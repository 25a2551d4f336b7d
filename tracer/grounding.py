"""Grounding: turn a sampled workflow into a reference trajectory on the real database.

For each intent the pack's goal grounder picks concrete entities from the current state and
returns an `IntentDraft` (goal arguments, facts the user can tell, the reads that could precede
the goal). The reads are then drawn one call at a time: the next call must legally follow the
previous one in the graph, its arguments must be derivable from what the user knows and what
earlier calls returned, and it must bring something the intent needs (a value of the goal's
arguments, of an output, or a fact the decision rests on). Every call is executed, so the result is
a trajectory whose every argument has a recorded provenance. A candidate that cannot be completed
ends in a `DeadEnd`, which the validator turns into the rejection `ungroundable` (or `length`).
"""

from __future__ import annotations

import json
import random
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import networkx as nx

from tau_emotion.core.facts import plural_key
from tau_emotion.core.models import Action
from tau_emotion.tracer.answers import DECLINE_LESS, compliant_variant
from tau_emotion.tracer.decisions import attach_decision
from tau_emotion.tracer.drafts import Ungrounded
from tau_emotion.tracer.hints import GroundingContext, IntentDraft, Persona, TracerHints
from tau_emotion.tracer.provenance import Knowledge, leaves, norm, phrase_in
from tau_emotion.tracer.sampling import Profile, goal_sequence, legal_next, weighted_choice
from tau_emotion.tracer.world import told_from_reads

if TYPE_CHECKING:
    from tau_emotion.core.domain import Domain
    from tau_emotion.core.models import Task
    from tau_emotion.tracer.graph import ToolGraph


class DeadEnd(Exception):
    """Grounding cannot go on: no persona, no goal, no legal useful read, a tool error, or a walk past the
    profile's length (`too_long`). `Validator.check_grounding` turns it into the rejection."""

    def __init__(self, detail: str, *, too_long: bool = False):
        super().__init__(detail)
        self.detail = detail
        self.too_long = too_long


def __getattr__(name: str) -> Any:
    # `Reject` lived here before the validator owned every rejection; old imports keep working
    if name == "Reject":
        from tau_emotion.tracer.validate import Reject

        return Reject
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


@dataclass
class Step:
    """One executed gold call."""

    name: str
    arguments: dict[str, Any]
    text: str
    intent: int
    role: str  # read | goal | handoff


@dataclass
class Refusal:
    """A goal call the user asks for that the policy forbids: the agent must refuse it."""

    intent: int
    at: int  # how many gold steps run before it
    name: str
    arguments: dict[str, Any]


@dataclass
class Candidate:
    """A grounded task before (and after) refinement."""

    domain: str
    split: str
    index: int
    persona: Persona
    drafts: list[IntentDraft]
    steps: list[Step]
    refusals: list[Refusal]
    walk: list[str]
    known: dict[str, Any]
    outputs: list[str]
    evidence: list[str] = field(default_factory=list)
    reasons: list[str] = field(default_factory=list)
    #: per intent: the gold outputs it must tell and the reasons it must explain
    intent_outputs: list[list[str]] = field(default_factory=list)
    intent_reasons: list[list[str]] = field(default_factory=list)
    end_hash: str = ""
    occasion: str | None = None
    occasion_stakes: int = 0
    occasion_valence: str = "neutral"
    task: Task | None = None
    feeling: str | None = None
    #: set by the build when it stalls (0-3): how much weaker a cause the appraisal accepts (`tracer.appraisal.cause`)
    relax: int = 0
    emotion: dict[str, Any] | None = None

    @property
    def gold_actions(self) -> list[Action]:
        return [Action(name=s.name, arguments=s.arguments) for s in self.steps]

    @property
    def policy_challenge(self) -> bool:
        return bool(self.refusals)


def merge_facts(known: dict[str, Any], facts: dict[str, Any]) -> None:
    """Add an intent's facts; a key already holding another value becomes a plural list ("reservation_ids")."""
    for key, value in facts.items():
        plural = plural_key(key)
        if plural in known and plural != key and isinstance(known[plural], list):
            if value not in known[plural]:
                known[plural].append(value)
            continue
        if plural == key and isinstance(value, list) and isinstance(known.get(key), list):
            # two requests' lists under a plural key ('ticket_types'): one flat list, not a list inside a list
            known[key] = [*known[key], *(v for v in value if v not in known[key])]
            continue
        if key not in known or known[key] == value:
            known[key] = value
            continue
        old = known.pop(key)
        values = old if plural == key and isinstance(old, list) else [old]
        if value not in values:
            values = [*values, value]
        known[plural] = values


def attempt(grounder: Any, ctx: GroundingContext) -> Any:
    """Call a pack's `persona` or goal grounder: its result, or None when it gave up (`Ungrounded`)."""
    try:
        return grounder(ctx)
    except Ungrounded:
        return None


def _needed(draft: IntentDraft, with_goal: bool) -> set[tuple[str, Any]]:
    keys: set[tuple[str, Any]] = set()
    if with_goal:
        keys.update(k for _, v in leaves(draft.arguments) if (k := norm(v)) is not None)
    keys.update(k for o in draft.outputs if (k := norm(o.text)) is not None)
    for args in draft.reads.get("calculate", []):
        for token in str(args.get("expression", "")).replace("(", " ").replace(")", " ").split():
            if (k := norm(token)) is not None and k[0] == "n":
                keys.add(k)
    return keys


class Grounder:
    """Grounds candidates for one domain; one instance serves a whole build."""

    def __init__(self, domain: Domain, graph: ToolGraph, hints: TracerHints, profile: Profile):
        self.domain = domain
        self.graph = graph
        self.hints = hints
        self.profile = profile
        self.base_knowledge = Knowledge()
        self.base_knowledge.add_policy(domain.policy)
        terminal = [n for n, t in domain.toolset.tools.items() if t.terminal]
        self.handoff = hints.handoff_tool or (terminal[0] if len(terminal) == 1 else None)
        self.retries = 3  # goals tried per intent before the candidate is given up
        self.walks = 3  # read walks tried per intent before it is given up
        self.evidence_first = 0.8  # chance that a walk step tries the pending evidence reads first
        #: the pack's `TracerHints.reads_once`: no identical read twice with no write between (`_legal`)
        self.reads_once = hints.reads_once
        self.indexes: dict[Any, Any] = {}  # the pack's lookups over the initial data (`per_database`), for this build

    def ground(self, rng: random.Random, index: int, split: str) -> Candidate:
        domain, hints = self.domain, self.hints
        if hints.persona is None:
            raise DeadEnd(f"domain '{domain.name}' gives no persona() in its tracer hints")
        state = domain.database.state()
        ctx = GroundingContext(domain=domain, state=state, persona=None, rng=rng,  # type: ignore[arg-type]
                               rates=hints.rates, indexes=self.indexes)
        persona = attempt(hints.persona, ctx)
        if persona is None:
            raise DeadEnd("no persona")
        ctx.persona = persona
        n_intents = self.profile.draw_intents(rng)
        goals = goal_sequence(self.graph, list(hints.goals), rng, n_intents, hints.goal_weights)
        if not goals:
            raise DeadEnd("no goal tool in the graph")
        knowledge = self.base_knowledge.copy()
        known = dict(persona.facts)
        knowledge.add_known(known)
        cand = Candidate(domain=domain.name, split=split, index=index, persona=persona, drafts=[], steps=[],
                         refusals=[], walk=[], known=known, outputs=[], evidence=sorted(persona.reads))
        identification = {tool: list(args) for tool, args in persona.reads.items()}
        prev: str | None = None
        reachable: set[str] = set()
        for i, goal in enumerate(goals):
            ctx.index, ctx.is_last = i, i == len(goals) - 1
            ctx.want_challenge = rng.random() < self.profile.challenge_rate
            draft = attempt(hints.goals[goal], ctx)
            tried = [goal]
            while draft is None and len(tried) < self.retries:
                # another goal the graph allows at this point, for the same persona
                allowed = [g for g in hints.goals if g not in tried and (i == 0 or g in reachable)]
                if not allowed:
                    break
                goal = weighted_choice(rng, allowed, hints.goal_weights)
                tried.append(goal)
                draft = attempt(hints.goals[goal], ctx)
            if draft is None:
                raise DeadEnd(f"{', '.join(tried)}: nothing to ground for this persona")
            reachable = nx.descendants(self.graph.graph, draft.goal)
            if (draft.refused and draft.on_refusal == "accept" and ctx.is_last and self.handoff is not None
                    and rng.random() < self.profile.handover):
                # the user insists on the refused request and asks for a person: a handover, whatever the pack
                # (its own transfers stay as they are; its explanation of the refusal is still owed)
                draft.on_refusal = "transfer"
                draft.handoff_summary = draft.handoff_summary or (
                    f"The user asks for a human agent after a refused request ({draft.kind.replace('_', ' ')}).")
            if draft.refused and draft.on_refusal == "transfer" and not ctx.is_last:
                raise DeadEnd(f"{goal}: a handover must end the task")
            attach_decision(draft, rng, self.hints.decision_rate)
            ctx.history.append(draft)
            cand.drafts.append(draft)
            merge_facts(known, draft.facts)
            knowledge.add_known(draft.facts)
            knowledge.add_derived(draft.policy_values)
            for tool in draft.evidence:
                if tool not in cand.evidence:
                    cand.evidence.append(tool)
            prev = self._intent(cand, i, draft, state, knowledge, prev, rng, identification)
            cand.intent_outputs.append([o.text for o in draft.outputs if o.reason is None])
            cand.intent_reasons.append([o.reason for o in draft.outputs if o.reason is not None])
            for output in draft.outputs:
                told, text = (cand.reasons, output.reason) if output.reason else (cand.outputs, output.text)
                if text not in told:
                    told.append(text)
        n = len(cand.steps)
        if not self.profile.min_calls <= n <= self.profile.max_calls:
            raise DeadEnd(f"{n} gold calls, outside {self.profile.min_calls}-{self.profile.max_calls}", too_long=True)
        cand.end_hash = state.content_hash
        return cand

    # ----------------------------------------------------------------------- one intent

    def _run(self, cand: Candidate, state: Any, name: str, arguments: dict[str, Any], intent: int, role: str,
             knowledge: Knowledge, text: str | None = None) -> None:
        if text is None:
            text, is_error = self.domain.toolset.call(state, name, arguments)
            if is_error:
                raise DeadEnd(f"{name} failed while grounding: {text}")
        cand.steps.append(Step(name=name, arguments=arguments, text=text, intent=intent, role=role))
        cand.walk.append(name)
        knowledge.add_result_text(len(cand.steps) - 1, text, arguments)

    def _reads(self, cand: Candidate, i: int, draft: IntentDraft, state: Any, knowledge: Knowledge, prev: str | None,
               rng: random.Random, available: dict[str, list[dict[str, Any]]], needed: set[tuple[str, Any]],
               evidence: list[str], done: Any) -> str | None:
        """Draw useful legal reads until `done(prev)` holds and the walk stops; returns the last tool called."""
        toolset = self.domain.toolset
        # a read changes nothing, so within this walk the same read gives the same text: an option tried and passed
        # over is not run again at the next step (writes and handovers are never kept)
        results: dict[tuple[str, str], tuple[str, bool]] = {}
        while True:
            # a read made again with no write between returns what it returned: the fact it would check is read
            for tool in [t for t in evidence if available.get(t) and self.reads_once]:
                if all(self._read_since_write(cand, tool, args) for args in available[tool]):
                    evidence.remove(tool)
            ready = done(prev)
            if ready and rng.random() < self.profile.stop:
                return prev
            if len(cand.steps) >= self.profile.max_calls:
                raise DeadEnd(f"more than {self.profile.max_calls} gold calls", too_long=True)
            options = [(tool, j) for tool, sets in available.items() for j in range(len(sets))
                       if self._legal(cand, prev, tool) and not knowledge.missing(sets[j])
                       and not (self.reads_once and self._read_since_write(cand, tool, sets[j]))]
            rng.shuffle(options)
            if rng.random() < self.evidence_first:
                # facts the decision rests on are usually looked up first
                options.sort(key=lambda o: o[0] not in evidence)
            picked = None
            for tool, j in options:
                args = available[tool][j]
                key = (tool, json.dumps(args, sort_keys=True, default=str))
                if key in results:
                    text, is_error = results[key]
                else:
                    text, is_error = toolset.call(state, tool, args)
                    if not (is_error or toolset[tool].writes or toolset[tool].terminal):  # an error may be a timeout
                        results[key] = (text, is_error)
                if is_error:
                    continue
                if tool in evidence or knowledge.gains_text(text, needed, told_from_reads(draft) & needed):
                    picked = (tool, j, text)
                    break
            if picked is None:
                if ready:
                    return prev
                missing = [f"{p}={v!r}" for p, v in knowledge.missing(draft.arguments)][:2]
                raise DeadEnd(f"{draft.goal}: no legal useful read after {prev or 'the start'}"
                             + (f" (missing {', '.join(missing)})" if missing else ""))
            tool, j, text = picked
            args = available[tool].pop(j)
            if tool in evidence:
                evidence.remove(tool)
            self._run(cand, state, tool, args, i, "read", knowledge, text)
            prev = tool

    def _intent(self, cand: Candidate, i: int, draft: IntentDraft, state: Any, knowledge: Knowledge,
                prev: str | None, rng: random.Random, identification: dict[str, list[dict[str, Any]]]) -> str | None:
        available = {tool: list(sets) for tool, sets in draft.reads.items() if tool != draft.goal}
        evidence = [t for t in draft.evidence if t in available]
        pending = list(evidence)  # the decision rests on these facts: read them before the goal
        for tool, sets in identification.items():
            if sets:
                available[tool] = [*sets, *available.get(tool, [])]
                if tool not in evidence:
                    evidence.append(tool)
        needed = _needed(draft, with_goal=not (draft.refused or draft.declined))
        free = self._free_params(draft.goal)
        before = [k for o in draft.outputs if not o.from_goal and not self._policy_phrase(o.text)
                  and (k := norm(o.text)) is not None]
        # a figure the user asks for is read, never taken from a number the policy happens to write (issue 34)
        asked = told_from_reads(draft)

        def goal_ready(p: str | None) -> bool:
            if p is None or not self._legal(cand, p, draft.goal) or any(t in evidence for t in pending):
                return False
            if any(k not in knowledge.sources or (k in asked and k not in knowledge.results) for k in before):
                return False
            return draft.refused or draft.declined or not knowledge.missing(draft.arguments, skip=free)

        start = (prev, len(cand.steps), len(cand.walk), dict(knowledge.sources), set(knowledge.results),
                 {t: list(v) for t, v in available.items()}, list(evidence))
        for attempt in range(self.walks):
            try:
                prev = self._reads(cand, i, draft, state, knowledge, prev, rng, available, needed, evidence,
                                   goal_ready)
                break
            except DeadEnd as exc:
                if exc.too_long or attempt == self.walks - 1:
                    raise
                # a dead end: walk again from where this intent started (reads change nothing)
                prev, n_steps, n_walk, sources, results, reads, ev = start
                del cand.steps[n_steps:], cand.walk[n_walk:]
                knowledge.sources, knowledge.results = dict(sources), set(results)
                available = {t: list(v) for t, v in reads.items()}
                evidence[:] = ev
        for tool in identification:
            identification[tool] = [a for a in identification[tool] if a in available.get(tool, [])]
        if draft.refused:
            cand.refusals.append(Refusal(intent=i, at=len(cand.steps), name=draft.goal, arguments=draft.arguments))
            cand.walk.append(f"!{draft.goal}")
            if DECLINE_LESS not in draft.preferences and compliant_variant(self.domain, state, draft.goal,
                                                                           draft.arguments):
                # the rules accept less than the user asks (a credit of 50, not 75): the user says they turn it
                # down, so refusing stays the one right answer (issue 21)
                draft.preferences = [*draft.preferences, DECLINE_LESS]
        elif draft.declined:
            cand.walk.append(f"~{draft.goal}")  # the user's own rule says no once the figure is known
        else:
            self._run(cand, state, draft.goal, draft.arguments, i, "goal", knowledge)
            prev = draft.goal
        missing_outputs = {k for o in draft.outputs if (k := norm(o.text)) is not None and not self._policy_phrase(o.text)
                           and (k not in knowledge.sources or (k in asked and k not in knowledge.results))}
        if missing_outputs:
            evidence.clear()

            def outputs_known(p: str | None) -> bool:
                return all(k in knowledge.sources and (k not in asked or k in knowledge.results)
                           for k in missing_outputs)

            prev = self._reads(cand, i, draft, state, knowledge, prev, rng, available, missing_outputs, evidence,
                               outputs_known)
        if draft.refused and draft.on_refusal == "transfer":
            if self.handoff is None or not self._legal(cand, prev, self.handoff):
                raise DeadEnd(f"no legal handover after {prev}")
            tool = self.domain.toolset[self.handoff]
            args = {p: draft.handoff_summary or draft.kind for p in tool.parameters.get("required", [])}
            self._run(cand, state, self.handoff, args, i, "handoff", knowledge)
            prev = self.handoff
        return prev

    def _legal(self, cand: Candidate, prev: str | None, tool: str) -> bool:
        """`tool` may come next: it follows the previous call in the graph or, for a pack whose hints ask that the
        gold read nothing twice (`reads_once`), any call made since the last write (what that call read still holds,
        so reading it again only to reach `tool` would be a needless repeat)."""
        if legal_next(self.graph, prev, tool):
            return True
        if prev is None or not self.reads_once:
            return False
        for step in reversed(cand.steps):
            if self.graph.has_edge(step.name, tool):
                return True
            if self.domain.toolset[step.name].writes:
                return False
        return False

    def _read_since_write(self, cand: Candidate, tool: str, arguments: dict[str, Any]) -> bool:
        """Whether the gold already made this very call after its last write (the state it reads is unchanged)."""
        for step in reversed(cand.steps):
            if self.domain.toolset[step.name].writes:
                return False
            if step.name == tool and step.arguments == arguments:
                return True
        return False

    def _free_params(self, name: str) -> tuple[str, ...]:
        """Free-text parameters of a terminal tool (a handover summary) need no provenance."""
        tool = self.domain.toolset[name]
        if not tool.terminal:
            return ()
        props = tool.parameters.get("properties", {})
        return tuple(p for p, spec in props.items() if spec.get("type") == "string")

    def _policy_phrase(self, text: str) -> bool:
        return norm(text) is not None and norm(text)[0] == "s" and phrase_in(text, self.domain.policy)
