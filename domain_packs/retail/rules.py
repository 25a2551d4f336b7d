"""Machine-checkable parts of the retail policy (`data/policy.md`).

Each rule is a `Rule` (core's policy rules contract, declared with `@rule`): given the state
*before* a write action and its raw arguments, it returns a one-line reason when the policy forbids
the action, else None. Tools stay permissive where the policy is stricter than the mechanics (a
refund to any card, a second return on an order already exchanged is stopped by state, but the
refund destination is not), so these rules let the Tracer and the conformance suite reject
policy-breaking gold. What depends on the user's words (identity, confirmation) is left to the agent.
"""

from __future__ import annotations

from tau_emotion.core.domain import Rule, rule
from tau_emotion.core.state import State

_ORDER_TOOLS = {
    "cancel_pending_order": "pending",
    "modify_pending_order_address": "pending",
    "modify_pending_order_payment": "pending",
    "modify_pending_order_items": "pending",
    "return_delivered_order_items": "delivered",
    "exchange_delivered_order_items": "delivered",
}


def _order(state: State, arguments: dict) -> dict | None:
    oid = arguments.get("order_id")
    return state["orders"].peek(oid) if isinstance(oid, str) else None


def _method(state: State, order: dict, payment_id: object) -> dict | None:
    user = state["users"].peek(order["user_id"])
    return None if user is None or not isinstance(payment_id, str) else user["payment_methods"].get(payment_id)


@rule
def order_status_allows(state: State, action_name: str, arguments: dict) -> str | None:
    """Only pending orders are cancelled or modified; only delivered ones are returned or exchanged."""
    wanted = _ORDER_TOOLS.get(action_name)
    order = _order(state, arguments) if wanted else None
    if order is None or order["status"] == wanted:
        return None
    return f"order {order['order_id']} is {order['status']}, and {action_name} needs a {wanted} order"


@rule
def one_return_or_exchange(state: State, action_name: str, arguments: dict) -> str | None:
    """An order gets at most one return or exchange request (the status leaves 'delivered' after one)."""
    if action_name not in ("return_delivered_order_items", "exchange_delivered_order_items"):
        return None
    order = _order(state, arguments)
    if order is not None and ("return" in order or "exchange" in order):
        return f"order {order['order_id']} already has a return or exchange request"
    return None


@rule
def items_modified_once(state: State, action_name: str, arguments: dict) -> str | None:
    """A pending order's items can be modified only once."""
    if action_name != "modify_pending_order_items":
        return None
    order = _order(state, arguments)
    if order is not None and order.get("modified"):
        return f"the items of order {order['order_id']} have already been modified"
    return None


@rule
def refund_destination(state: State, action_name: str, arguments: dict) -> str | None:
    """A return is refunded to the order's original payment method or to a gift card of the user."""
    if action_name != "return_delivered_order_items":
        return None
    order = _order(state, arguments)
    if order is None:
        return None
    pid = arguments.get("payment_method_id")
    method = _method(state, order, pid)
    if method is None:
        return None
    original = order["payment_history"][0]["payment_id"]
    if pid != original and method["source"] != "gift_card":
        return f"a refund goes to the original payment method ({original}) or a gift card, not {pid}"
    return None


@rule
def gift_card_covers(state: State, action_name: str, arguments: dict) -> str | None:
    """A gift card pays only up to its balance (the tool refuses too; the rule names the policy)."""
    if action_name != "modify_pending_order_payment":
        return None
    order = _order(state, arguments)
    if order is None:
        return None
    method = _method(state, order, arguments.get("payment_method_id"))
    total = sum(p["amount"] for p in order["payment_history"] if p["transaction_type"] == "payment")
    if method is not None and method["source"] == "gift_card" and method["balance"] < total:
        return f"gift card {method['id']} has a balance of {method['balance']}, less than the order total {total}"
    return None


@rule
def same_product_only(state: State, action_name: str, arguments: dict) -> str | None:
    """An item is swapped only for another variant of the same product."""
    if action_name not in ("modify_pending_order_items", "exchange_delivered_order_items"):
        return None
    order = _order(state, arguments)
    old, new = arguments.get("item_ids"), arguments.get("new_item_ids")
    if order is None or not isinstance(old, list) or not isinstance(new, list):
        return None
    owner = {i: p for p, row in state["products"].scan() for i in row["variants"]}
    by_item = {i["item_id"]: i["product_id"] for i in order["items"]}
    for a, b in zip(old, new, strict=False):
        if a in by_item and b in owner and owner[b] != by_item[a]:
            return f"item {b} is a different product than item {a}; only another variant of the same product is allowed"
    return None


RULES: list[Rule] = [order_status_allows, one_return_or_exchange, items_modified_once, refund_destination,
                     gift_card_covers, same_product_only]
