"""Handovers in built splits (issue 21): every pack with a handoff tool gets tasks that end in one.

Real builds on the real packs' databases. Retail and telecom never ask for a person themselves (their hints let
a refused user accept), so their handovers come from the Tracer (`Profile.handover`); airline's own
cancel-after-departure handover used to be refused by its situation check ("would rather not travel" for a trip
already partly flown), which left its test split without one.
"""

from dataclasses import replace

import pytest

from tau_emotion.tracer import sampling
from tau_emotion.tracer.build import build_tasks
from tau_emotion.tracer.plan import policy_challenge, request_kinds


@pytest.fixture(scope="module")
def packs(domains):
    return {name: domains.get(name) for name in ("retail", "telecom", "airline")}


def _handovers(domain, tasks):
    return [t for t in tasks if any(domain.toolset.is_terminal(a.name) for a in t.gold.actions)]


@pytest.mark.parametrize(("pack", "seed"), [("retail", 2), ("telecom", 2)])
def test_a_pack_whose_users_accept_refusals_still_gets_handovers(packs, space, pack, seed, monkeypatch):
    domain = packs[pack]
    tasks = build_tasks(domain, "test", 12, seed, challenge_rate=0.6, space=space).tasks
    handed = _handovers(domain, tasks)
    assert handed, "no task ends in a handover"
    for task in handed:
        assert policy_challenge(task) and domain.toolset.is_terminal(task.gold.actions[-1].name)
        last = task.plan.requests[-1]  # the ask for a person is the user's last request, owning the handover
        assert last.kind == "handover" and last.goal.handover
        assert [task.gold.actions[j].name for j in last.actions] == [task.gold.actions[-1].name]
        assert "human agent" in task.user.instruction and len(task.user.intents) == len(task.plan.requests)
        refused = task.plan.requests[-2]  # the refusal is still explained before the handover, and insisted on
        assert refused.reasons and refused.refusal is not None and refused.refusal.then == "insist"
    monkeypatch.setitem(sampling.PROFILES, "test", replace(sampling.PROFILES["test"], handover=0.0))
    assert not _handovers(domain, build_tasks(domain, "test", 12, seed, challenge_rate=0.6, space=space).tasks)


def test_airline_cancels_a_partly_flown_trip_in_words_its_situation_check_accepts(packs, space):
    domain = packs["airline"]
    # seed 3: since the review of issue 21 only a trip with a flight still ahead is cancelled "after departure"
    # (a trip flown in full has no "rest"), and seed 2's 12 tasks hold none
    tasks = build_tasks(domain, "test", 12, 3, challenge_rate=0.6, space=space).tasks
    flown = [t for t in tasks if "cancel_after_departure" in request_kinds(t)]
    assert flown
    for task in flown:
        assert "would rather not travel" not in task.user.instruction
        assert "no longer need the rest of your trip" in task.user.instruction
