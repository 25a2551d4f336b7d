"""What a pack's tool graph must be, whatever its exact size: every tool a node, every gold path of the pack's
Tracer-built tasks a walk along its edges from an entry tool (each call following one made since the last write), its density in a band, the hints' policy edges in and
their forbidden edges out, and nothing after a terminal tool."""

from __future__ import annotations

from typing import Any

#: a graph this dense lets reads follow one another in many orders without every tool following every other
DENSITY = (0.25, 0.43)


def check_graph(domain: Any, graph: Any, hints: Any = None, density: tuple[float, float] = DENSITY) -> None:
    g = graph.graph
    assert set(g.nodes) == set(domain.toolset.tools)
    assert density[0] <= graph.density <= density[1], graph.density
    for name, tool in domain.toolset.tools.items():
        if tool.terminal:
            assert not list(g.successors(name)), name
    if hints is None:
        return
    assert all(g.has_edge(a, b) for a, b in hints.policy_edges)
    assert not any(g.has_edge(a, b) for a, b in hints.forbidden_edges)
    built = [t for t in domain.tasks(None) if t.split in ("test", "train")]
    assert built
    for task in built:
        path = [a.name for a in task.gold.actions]
        assert path[0] in graph.entry_tools, (task.id, path[0])
        for j, b in enumerate(path[1:], 1):
            # b follows a call made since the last write (what that call read still holds: no repeat needed)
            window = []
            for a in reversed(path[:j]):
                window.append(a)
                if domain.toolset[a].writes:
                    break
            assert any(g.has_edge(a, b) for a in window), (task.id, window, b)
