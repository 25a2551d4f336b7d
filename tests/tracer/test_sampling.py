"""Workflow sampling: legal walks, composed goals, and a clear error when no walk is long enough."""

import random

import networkx as nx
import pytest

from tau_emotion.tracer.graph import build_graph
from tau_emotion.tracer.sampling import SamplingError, check_lengths, goal_sequence, legal_next, profile_for
from tests.tracer.tiny_pack import HINTS as TINY_HINTS


def test_no_workflow_of_the_requested_length_names_domain_and_longest_path(domains):
    graph = build_graph(domains.get("tiny_chain"), TINY_HINTS)
    check_lengths(graph, ["mark"], 1, 2)
    with pytest.raises(SamplingError) as info:
        check_lengths(graph, ["mark"], 3, 12)
    message = str(info.value)
    assert "domain 'tiny_chain'" in message and "longest path found has 2 call(s): look -> mark" in message


def test_goal_sequences_follow_reachability_and_the_seed(airline):
    graph = build_graph(airline)
    goals = ["cancel_reservation", "update_reservation_baggages", "book_reservation", "send_certificate"]
    seqs = [goal_sequence(graph, goals, random.Random(s), 3) for s in range(30)]
    assert seqs == [goal_sequence(graph, goals, random.Random(s), 3) for s in range(30)]
    assert len({tuple(s) for s in seqs}) > 5
    for seq in seqs:
        for a, b in zip(seq, seq[1:], strict=False):
            assert b in nx.descendants(graph.graph, a)


def test_legal_next_starts_at_an_entry_tool(airline):
    graph = build_graph(airline)
    assert legal_next(graph, None, "get_user_details")
    assert not legal_next(graph, None, "cancel_reservation")
    assert legal_next(graph, "get_reservation_details", "cancel_reservation")
    assert not legal_next(graph, "transfer_to_human_agents", "get_user_details")


def test_profiles_validate_their_bounds():
    assert profile_for("test").min_calls == 5 and profile_for("train").min_calls == 3
    assert profile_for("train", max_calls=6).max_calls == 6
    with pytest.raises(SamplingError):
        profile_for("train", min_calls=9, max_calls=4)
