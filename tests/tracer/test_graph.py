"""The dependency graph: declared edges, edges inferred by running tools, policy edges, JSON and DOT."""

import json

import networkx as nx
import pytest

from tau_emotion.tracer.graph import build_graph, consumed_fields
from tests.tracer.tiny_pack import HINTS as TINY_HINTS


def test_airline_graph_keeps_declared_edges_and_adds_inferred_ones(airline):
    graph = build_graph(airline)
    g = graph.graph
    assert sorted(g.nodes) == sorted(airline.toolset.tools)
    declared = {tuple(e) for e in airline.graph_edges}
    assert declared <= set(g.edges)
    inferred = {(a, b) for a, b, d in g.edges(data=True) if d["sources"] == ["dataflow"]}
    assert inferred, "running the tools on the database found no edge the pack did not declare"
    # a list of reservation ids in a user profile feeds get_reservation_details, found by calling it
    data = g.edges["get_user_details", "get_reservation_details"]
    assert "dataflow" in data["sources"] and "reservations" in data["via"]
    assert ("list_all_airports", "search_direct_flight") in set(g.edges)
    assert "iata" in g.edges["list_all_airports", "search_direct_flight"]["via"]
    assert 0.25 <= graph.density <= 0.45
    assert graph.entry_tools == ["get_user_details"]


def test_terminal_tools_have_no_successors_and_policy_edges_are_marked(airline):
    g = build_graph(airline).graph
    assert list(g.successors("transfer_to_human_agents")) == []
    assert "policy" in g.edges["get_reservation_details", "send_certificate"]["sources"]
    assert g.edges["get_flight_status", "send_certificate"]["sources"] == ["declared"]  # the pack's graph has it


def test_graph_exports(airline):
    graph = build_graph(airline)
    data = graph.to_json()
    json.dumps(data)
    assert data["tools"] == 15 and data["n_edges"] == graph.graph.number_of_edges()
    assert {"from", "to", "sources", "via"} <= set(data["edges"][0])
    dot = graph.to_dot()
    assert dot.startswith('digraph "airline"') and '"get_user_details" -> "get_reservation_details"' in dot


def test_domain_without_graph_gets_inferred_edges_and_a_warning(domains):
    nograph = domains.get("tiny_nograph")
    assert nograph.graph_edges is None
    graph = build_graph(nograph, TINY_HINTS)
    assert any("declares no tool graph" in w for w in graph.warnings)
    assert all(d["sources"] == ["dataflow"] for _, _, d in graph.graph.edges(data=True))
    # `look` returns no id, so nothing may follow it; mark's item_id refers to the `items` table by name
    assert list(graph.graph.successors("look")) == []


def test_mock_without_declared_graph_infers_account_edges(domains):
    from tau_emotion.core.domain import Domain
    from tau_emotion.tracer.hints import TracerHints

    mock = domains.get("mock")
    bare = Domain("bare_mock", "tau_emotion.domain_packs.mock.tools", load_database=lambda: mock.database,
                  load_policy=lambda: mock.policy)
    graph = build_graph(bare, TracerHints())  # no pack gives it hints
    assert graph.warnings and ("find_owner", "get_account") in set(graph.graph.edges)
    assert nx.density(graph.graph) > 0


@pytest.mark.parametrize("tool,fields", [("get_reservation_details", {"reservation_id"}),
                                         ("update_reservation_flights", {"reservation_id", "cabin", "flight_number",
                                                                         "date", "payment_id"})])
def test_consumed_fields_reach_into_typed_dicts(airline, tool, fields):
    assert set(consumed_fields(airline.toolset[tool])) == fields


def test_the_graph_follows_the_hints_it_is_given_whatever_was_built_before(domains):
    """No graph is remembered between calls: a second build with other hints has their edges (issue 33)."""
    from tau_emotion.domain_packs.basketball.tracer_hints import HINTS
    from tau_emotion.tracer.hints import TracerHints

    basketball = domains.get("basketball")
    hinted = build_graph(basketball, HINTS)
    bare = build_graph(basketball, TracerHints())
    assert HINTS.policy_edges and all(hinted.has_edge(a, b) for a, b in HINTS.policy_edges)
    assert not all(bare.has_edge(a, b) for a, b in HINTS.policy_edges)
    assert build_graph(basketball, HINTS).edges() == hinted.edges()
