"""The Tracer's hints API as a pack meets it: the typed `TracerHints`, `Reference` + `draft()`, `fact_wording`."""

import pytest
from pydantic import ValidationError

from tau_emotion.tracer.hints import (
    Choice,
    HintsError,
    Option,
    Reference,
    TracerHints,
    draft,
    fact_wording,
    load_hints,
)


def _ground(ctx):
    return None


def test_hints_forbid_unknown_fields_and_fill_every_goal_weight():
    hints = TracerHints(goals={"a": _ground, "b": _ground}, goal_weights={"b": 3})
    assert hints.goal_weights == {"a": 1.0, "b": 3.0}
    assert not hints.can_ground  # no persona
    with pytest.raises(ValidationError, match="goal_weight\n  Extra inputs are not permitted"):
        TracerHints(goals={"a": _ground}, goal_weight={"a": 2.0})
    with pytest.raises(ValidationError, match="goal_weights names c, which is not among the goals"):
        TracerHints(goals={"a": _ground}, goal_weights={"c": 2.0})
    with pytest.raises(ValidationError, match="persona"):
        TracerHints(persona="not callable")


def test_the_hints_of_a_domain_come_from_the_command_manager_only(domains):
    from tau_emotion.core.domain import Domain

    loose = Domain("loose", [], load_tasks=lambda: [])
    with pytest.raises(HintsError, match="domain 'loose': its tracer hints are not resolved yet"):
        load_hints(loose)  # no hidden manager of every installed plugin to fall back on
    chain = domains.get("tiny_chain")
    assert load_hints(chain).entry_tools == ["look"]


def test_draft_puts_the_reference_first():
    ref = Reference("{{my}} order #W1", facts={"order_id": "#W1"},
                    choices=[Choice("order", "#W1", [Option("#W1", {})])],
                    reads={"get_order": [{"order_id": "#W1"}], "get_user": [{"user_id": "u"}]},
                    evidence=["get_order"])
    out = draft("cancel", "cancel_order", {"order_id": "#W1"}, ["cancel {{my}} order"], ref,
                facts={"reason": "mistake", "order_id": "#W1"}, reads={"get_user": [{"user_id": "v"}], "calc": [{}]},
                evidence=["calc", "get_order"])
    assert list(out.facts) == ["order_id", "reason"]
    assert [c.what for c in out.choices] == ["order"]
    assert list(out.reads) == ["get_user", "calc", "get_order"]  # the intent's tools first, then the reference's
    assert out.reads["get_user"] == [{"user_id": "u"}, {"user_id": "v"}]  # the reference's sets first
    assert out.evidence == ["get_order", "calc"]
    ref.reads_first = True
    again = draft("cancel", "cancel_order", {}, ["x"], ref, reads={"calc": [{}]})
    assert list(again.reads) == ["get_order", "get_user", "calc"]
    assert draft("x", "y", {}, ["z"]).facts == {}


def test_fact_wording_finds_a_merged_plural_and_leaves_unsaid_keys_out():
    phrase = fact_wording({"order_id": ("your order is {}", "your orders are {}"),
                           "passenger_to_add": ("add {}", "add {}"),
                           "method": lambda said: " then ".join(said)},
                          word=lambda key, value: value.upper() if key == "passenger_to_add" else str(value),
                          unsaid=["last_four"])
    assert phrase("order_id", "#W1") == "your order is #W1"
    assert phrase("order_ids", ["#W1", "#W2", "#W3"]) == "your orders are #W1, #W2 and #W3"
    assert phrase("passengers_to_add", ["ann", "bo"]) == "add ANN and BO"
    assert phrase("methods", ["card", "gift"]) == "card then gift"
    assert phrase("last_four", "1234") == ""
    assert phrase("user_id", "u1") is None
