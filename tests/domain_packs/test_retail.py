"""The retail pack's tools and rules against its generated database (the conformance suite covers the tasks)."""

from __future__ import annotations

import json
from importlib.resources import files

import pytest

from tau_emotion.domain_packs.retail import generate_db, rules, tau_register_domains


@pytest.fixture(scope="module")
def domain():
    found = []
    tau_register_domains(found.append)
    return found[0]


def call(domain, state, name, **arguments):
    text, is_error = domain.toolset.call(state, name, arguments)
    assert not is_error, text
    return json.loads(text) if text[:1] in "[{" else text


def _first(domain, status):
    return next(o for o in domain.database.tables["orders"].values() if o["status"] == status)


def test_generator_is_deterministic_and_matches_the_shipped_file():
    shipped = json.loads(files("tau_emotion.domain_packs.retail").joinpath("data/db.json").read_text())
    assert generate_db.generate(0) == shipped
    assert len(shipped["users"]) == 500 and len(shipped["orders"]) == 2000


def test_authentication_by_email_and_by_name_zip(domain):
    state = domain.database.state()
    uid, user = next(iter(domain.database.tables["users"].items()))
    assert call(domain, state, "find_user_id_by_email", email=user["email"]) == uid
    name = user["name"]
    assert call(domain, state, "find_user_id_by_name_zip", first_name=name["first_name"],
                last_name=name["last_name"], zip=user["address"]["zip"]) == uid


def test_cancel_refunds_and_status_rule(domain):
    state = domain.database.state()
    order = _first(domain, "pending")
    out = call(domain, state, "cancel_pending_order", order_id=order["order_id"], reason="no longer needed")
    assert out["status"] == "cancelled" and out["payment_history"][-1]["transaction_type"] == "refund"
    delivered = _first(domain, "delivered")
    assert rules.order_status_allows(state, "cancel_pending_order", {"order_id": delivered["order_id"]})
    text, is_error = domain.toolset.call(state, "cancel_pending_order",
                                         {"order_id": delivered["order_id"], "reason": "no longer needed"})
    assert is_error


def test_return_refund_destination_rule(domain):
    state = domain.database.state()
    for order in domain.database.tables["orders"].values():
        methods = domain.database.tables["users"][order["user_id"]]["payment_methods"]
        original = order["payment_history"][0]["payment_id"]
        other = [p for p, m in methods.items() if p != original and m["source"] != "gift_card"]
        if order["status"] == "delivered" and other:
            args = {"order_id": order["order_id"], "item_ids": [order["items"][0]["item_id"]]}
            assert rules.refund_destination(state, "return_delivered_order_items", {**args, "payment_method_id": other[0]})
            assert not rules.refund_destination(state, "return_delivered_order_items",
                                                {**args, "payment_method_id": original})
            break
    else:
        pytest.fail("no delivered order with a second payment method")


def test_calculate_is_bounded(domain):
    state = domain.database.state()
    assert call(domain, state, "calculate", expression="(10 + 5) * 2") == "30"
    _text, is_error = domain.toolset.call(state, "calculate", {"expression": "9**9**9**9"})
    assert is_error


def test_splits_are_rich_and_worded_as_a_customer_would(domain):
    """Both Tracer splits average 6.5 gold calls or more; instructions state facts in plain words."""
    tasks = domain.tasks(None)
    for split in ("test", "train"):
        built = [t for t in tasks if t.split == split]
        assert sum(len(t.gold.actions) for t in built) / len(built) >= 6.5, split
    for task in (t for t in tasks if t.split in ("test", "train")):
        words = task.user.instruction
        for mechanical in ("address1", "new zip is", "item 1", "wanted options", "refund to is", "option 1"):
            assert mechanical not in words, (task.id, mechanical)
        if "new_address" in task.user.known:
            address = task.user.known["new_address"]
            assert f"{address['address1']}, " in words and address['zip'] in words, task.id  # said once, whole
