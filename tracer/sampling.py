"""Seeded sampling of legal workflows from a tool graph.

A workflow is a walk in the dependency graph: it starts at an entry tool and every call may
legally follow the one before it (or, for a pack with `TracerHints.reads_once`, any call made since
the last write: what that call read still holds, so the gold never reads it again only to go on). A task composes one to three
intents, each ending in a goal tool (a write, a terminal tool or an answered read); the goals are
drawn as a walk over goal reachability, and the reads before each goal are drawn one call at a time
among the graph successors of those calls (`legal_next`, `Grounder._legal`).

`check_lengths` answers, before any grounding, whether the graph has a workflow of the requested
number of calls at all, and names the longest one it found when it does not.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass, field

import networkx as nx

from tau_emotion.core.errors import TauError
from tau_emotion.tracer.graph import ToolGraph


class SamplingError(TauError, ValueError):
    """The graph cannot yield the workflows asked for; the message names the domain."""


@dataclass
class Profile:
    """How the workflows of one split are drawn."""

    min_calls: int = 3
    max_calls: int = 12
    #: number of intents -> weight
    intents: dict[int, float] = field(default_factory=lambda: {1: 0.3, 2: 0.45, 3: 0.25})
    #: chance that a goal is asked for as a policy challenge (where the pack can make one)
    challenge_rate: float = 0.2
    #: chance of stopping before an optional read once the goal's arguments are all derivable
    stop: float = 0.5
    #: chance that a refused last request the pack lets the user accept becomes one the user insists on and is
    #: handed over for (the pack's handoff tool ends the task): every pack with a handoff tool gets handovers
    handover: float = 0.2

    def draw_intents(self, rng: random.Random) -> int:
        counts = sorted(self.intents)
        return rng.choices(counts, weights=[self.intents[c] for c in counts])[0]


PROFILES = {
    "test": Profile(min_calls=5, intents={1: 0.15, 2: 0.55, 3: 0.3}, challenge_rate=0.2, stop=0.35, handover=0.4),
    "train": Profile(),
}


def profile_for(split: str, **overrides: object) -> Profile:
    base = PROFILES.get(split, Profile())
    values = {k: v for k, v in vars(base).items()}
    values.update({k: v for k, v in overrides.items() if v is not None})
    profile = Profile(**values)  # type: ignore[arg-type]
    if not 1 <= profile.min_calls <= profile.max_calls:
        raise SamplingError(f"calls per task must satisfy 1 <= min ({profile.min_calls}) <= max ({profile.max_calls})")
    return profile


def legal_next(graph: ToolGraph, prev: str | None, tool: str) -> bool:
    """Whether `tool` may be the next call: an entry tool to start with, else a graph successor."""
    return tool in graph.entry_tools if prev is None else graph.has_edge(prev, tool)


def weighted_choice(rng: random.Random, items: Sequence[str], weights: dict[str, float] | None = None) -> str:
    if not weights:
        return rng.choice(list(items))
    return rng.choices(list(items), weights=[weights.get(i, 1.0) for i in items])[0]


def goal_sequence(graph: ToolGraph, goals: Sequence[str], rng: random.Random, n: int,
                  weights: dict[str, float] | None = None) -> list[str]:
    """`n` goal tools, each reachable in the graph from the one before."""
    goals = [g for g in goals if g in graph.graph]
    if not goals:
        return []
    sequence = [weighted_choice(rng, goals, weights)]
    while len(sequence) < n:
        reachable = nx.descendants(graph.graph, sequence[-1])
        nexts = [g for g in goals if g in reachable]
        if not nexts:
            break
        sequence.append(weighted_choice(rng, nexts, weights))
    return sequence


def _walk_lengths(graph: ToolGraph, ends: set[str], max_calls: int) -> tuple[dict[int, list[str]], list[str]]:
    """For each walk length reachable from an entry tool and ending in `ends`: one such walk; and the longest walk."""
    layer: dict[str, list[str]] = {t: [t] for t in sorted(graph.entry_tools)}
    found: dict[int, list[str]] = {}
    longest: list[str] = []
    for length in range(1, max_calls + 1):
        if not layer:
            break
        longest = layer[sorted(layer)[0]]
        hits = sorted(t for t in layer if t in ends)
        if hits:
            found[length] = layer[hits[0]]
        nxt: dict[str, list[str]] = {}
        for node in sorted(layer):
            for succ in sorted(graph.graph.successors(node)):
                nxt.setdefault(succ, [*layer[node], succ])
        layer = nxt
    return found, longest


def check_lengths(graph: ToolGraph, goals: Sequence[str], min_calls: int, max_calls: int) -> None:
    """Raise SamplingError unless some workflow of min..max calls ends in a goal tool."""
    ends = set(goals) if goals else set(graph.graph.nodes)
    found, longest = _walk_lengths(graph, ends, max_calls)
    if any(min_calls <= n <= max_calls for n in found):
        return
    if found:
        best = found[max(found)]
        raise SamplingError(
            f"domain '{graph.domain}': no workflow of {min_calls}-{max_calls} calls in its tool graph; "
            f"the longest path found has {len(best)} call(s): {' -> '.join(best)}")
    path = " -> ".join(longest) or "none"
    raise SamplingError(f"domain '{graph.domain}': no workflow in its tool graph reaches a goal tool "
                        f"({', '.join(sorted(ends))}) from an entry tool; the longest path found has "
                        f"{len(longest)} call(s): {path}")
