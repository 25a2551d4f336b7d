"""Tools of the retail domain: find customers, read orders and products, and change orders.

Every tool is a typed function over the episode's database `State`. Tools do what is mechanically
possible (the order exists and is in the right state, the variant exists and is in stock, the gift
card holds enough) and raise `ToolError` otherwise; whether an action is *allowed* by the policy
is the agent's call, checked separately by the pack's `rules.py`. Tools never read the clock or
draw random numbers, so replaying the same calls always gives the same database.
"""

from __future__ import annotations

from typing import Literal

from tau_emotion.core.state import State
from tau_emotion.core.tools import ToolError, find_row, tool
from tau_emotion.domain_packs.values import arithmetic
from tau_emotion.domain_packs.values import money as _money

CANCEL_REASONS = ("no longer needed", "ordered by mistake")


def _user(db: State, user_id: str, *, write: bool = False) -> dict:
    return find_row(db, "users", user_id, "user", write=write)


def _order(db: State, order_id: str, *, write: bool = False) -> dict:
    return find_row(db, "orders", order_id, "order", write=write)


def _status(order: dict, *wanted: str) -> None:
    if order["status"] not in wanted:
        raise ToolError(f"order {order['order_id']} is {order['status']}; this needs a {' or '.join(wanted)} order")


def _variant(db: State, item_id: str) -> tuple[dict, dict]:
    """The product and variant that an item id names."""
    for _pid, product in db["products"].scan():
        if item_id in product["variants"]:
            return product, product["variants"][item_id]
    raise ToolError(f"item '{item_id}' not found")


def _method(user: dict, payment_id: str) -> dict:
    method = user["payment_methods"].get(payment_id)
    if method is None:
        raise ToolError(f"payment method '{payment_id}' is not in the profile of user '{user['user_id']}'")
    return method


def _pay(user: dict, payment_id: str, amount: float) -> None:
    """Charge (amount > 0) or refund (amount < 0) a payment method; a gift card's balance moves with it."""
    method = _method(user, payment_id)
    if method["source"] == "gift_card":
        if amount > method["balance"] + 1e-9:
            raise ToolError(f"gift card '{payment_id}' has a balance of {method['balance']}, less than {_money(amount)}")
        method["balance"] = _money(method["balance"] - amount)


def _pick_items(order: dict, item_ids: list[str]) -> list[dict]:
    """The order's items that `item_ids` name, each used once (an id listed twice needs two such items)."""
    if not item_ids:
        raise ToolError("name at least one item")
    left = list(order["items"])
    picked = []
    for item_id in item_ids:
        match = next((i for i in left if i["item_id"] == item_id), None)
        if match is None:
            raise ToolError(f"item '{item_id}' is not in order {order['order_id']} (or is listed too often)")
        left.remove(match)
        picked.append(match)
    return picked


def _paid_with(order: dict) -> str:
    return order["payment_history"][0]["payment_id"]


# --------------------------------------------------------------------------- look-ups


@tool
def find_user_id_by_email(db: State, email: str) -> str:
    """Find a customer's user id from their email address.

    Args:
        email: The email address, such as 'mia.garcia123@example.com'.
    """
    wanted = email.strip().lower()
    for uid, user in db["users"].scan():
        if user["email"] == wanted:
            return uid
    raise ToolError(f"no user with email '{email}'")


@tool
def find_user_id_by_name_zip(db: State, first_name: str, last_name: str, zip: str) -> str:
    """Find a customer's user id from their first name, last name and the zip code of their address.

    Args:
        first_name: The first name, such as 'Mia'.
        last_name: The last name, such as 'Garcia'.
        zip: The five-digit zip code, such as '80202'.
    """
    wanted = (first_name.strip().lower(), last_name.strip().lower(), zip.strip())
    for uid, user in db["users"].scan():
        name = user["name"]
        if (name["first_name"].lower(), name["last_name"].lower(), user["address"]["zip"]) == wanted:
            return uid
    raise ToolError(f"no user named {first_name} {last_name} with zip code {zip}")


@tool
def get_user_details(db: State, user_id: str) -> dict:
    """Get a customer's profile: name, email, default address, payment methods and order ids.

    Args:
        user_id: The user's id, such as 'mia_garcia_4215'.
    """
    return _user(db, user_id)


@tool
def get_order_details(db: State, order_id: str) -> dict:
    """Get an order: its status, items with prices, shipping address, payments and any return or exchange.

    Args:
        order_id: The order id, such as '#W1234567'.
    """
    return _order(db, order_id)


@tool
def get_product_details(db: State, product_id: str) -> dict:
    """Get a product with every variant: item id, options, price and whether it is in stock.

    Args:
        product_id: The product id, such as '6086499569'.
    """
    product = db["products"].peek(product_id)
    if product is None:
        raise ToolError(f"product '{product_id}' not found")
    return product


@tool
def list_all_product_types(db: State) -> dict:
    """List every product type the store sells, mapped to its product id."""
    return {row["name"]: pid for pid, row in db["products"].scan()}


@tool
def calculate(db: State, expression: str) -> str:
    """Evaluate an arithmetic expression with numbers, + - * / and parentheses.

    Args:
        expression: The expression, such as '(54.99 + 12.5) * 2'.
    """
    return str(arithmetic(expression))


# --------------------------------------------------------------------------- changes


@tool(writes=True)
def cancel_pending_order(db: State, order_id: str, reason: Literal["no longer needed", "ordered by mistake"]) -> dict:
    """Cancel a pending order; everything paid is refunded to the payment methods it came from.

    Gift card refunds are immediate; other refunds take 5 to 7 business days.

    Args:
        order_id: The order id, such as '#W1234567'.
        reason: 'no longer needed' or 'ordered by mistake'.
    """
    order = _order(db, order_id, write=True)
    _status(order, "pending")
    if reason not in CANCEL_REASONS:
        raise ToolError(f"the reason must be one of {', '.join(CANCEL_REASONS)}")
    user = _user(db, order["user_id"], write=True)
    refunds = []
    for payment in list(order["payment_history"]):
        if payment["transaction_type"] == "payment":
            _pay(user, payment["payment_id"], -payment["amount"])
            refunds.append({"transaction_type": "refund", "amount": payment["amount"], "payment_id": payment["payment_id"]})
    order["payment_history"].extend(refunds)
    order["status"] = "cancelled"
    order["cancel_reason"] = reason
    return order


@tool(writes=True)
def modify_pending_order_address(
    db: State, order_id: str, address1: str, address2: str, city: str, state_code: str, country: str, zip: str
) -> dict:
    """Change the shipping address of a pending order.

    Args:
        order_id: The order id, such as '#W1234567'.
        address1: The first address line, such as '123 Main St'.
        address2: The second address line, such as 'Apt 1' (empty when there is none).
        city: The city.
        state_code: The two-letter state code, such as 'CA'.
        country: The country, such as 'USA'.
        zip: The five-digit zip code.
    """
    order = _order(db, order_id, write=True)
    _status(order, "pending")
    order["address"] = {"address1": address1, "address2": address2, "city": city, "state": state_code,
                        "country": country, "zip": zip}
    return order


@tool(writes=True)
def modify_pending_order_payment(db: State, order_id: str, payment_method_id: str) -> dict:
    """Pay a pending order with another payment method: the new one is charged and the old one refunded.

    Args:
        order_id: The order id, such as '#W1234567'.
        payment_method_id: A payment method from the user's profile, such as 'credit_card_1234567'.
    """
    order = _order(db, order_id, write=True)
    _status(order, "pending")
    payments = [p for p in order["payment_history"] if p["transaction_type"] == "payment"]
    if len(payments) != 1:
        raise ToolError(f"order {order_id} has been paid more than once; its payment cannot be switched")
    old = payments[0]
    if old["payment_id"] == payment_method_id:
        raise ToolError("the new payment method must differ from the current one")
    user = _user(db, order["user_id"], write=True)
    _pay(user, payment_method_id, old["amount"])
    _pay(user, old["payment_id"], -old["amount"])
    order["payment_history"].extend([
        {"transaction_type": "payment", "amount": old["amount"], "payment_id": payment_method_id},
        {"transaction_type": "refund", "amount": old["amount"], "payment_id": old["payment_id"]},
    ])
    return order


@tool(writes=True)
def modify_pending_order_items(
    db: State, order_id: str, item_ids: list[str], new_item_ids: list[str], payment_method_id: str
) -> dict:
    """Swap items of a pending order for other variants of the same product; the price difference is settled.

    Each item in `item_ids` is replaced by the variant at the same position in `new_item_ids`. The
    difference is charged to (or refunded to) `payment_method_id`. This can be done once per order.

    Args:
        order_id: The order id, such as '#W1234567'.
        item_ids: The item ids to replace, such as ['1008292230'].
        new_item_ids: The new item ids, in the same order, such as ['1008292231'].
        payment_method_id: The payment method that pays or receives the difference.
    """
    order = _order(db, order_id, write=True)
    _status(order, "pending")
    if order.get("modified"):
        raise ToolError(f"the items of order {order_id} have already been modified once")
    _swap(db, order, item_ids, new_item_ids, payment_method_id, "payment")
    order["modified"] = True
    return order


def _swap(db: State, order: dict, item_ids: list[str], new_item_ids: list[str], payment_id: str, kind: str) -> float:
    """Check and price a like-for-like swap; for a pending order, apply it to the items at once."""
    if len(item_ids) != len(new_item_ids):
        raise ToolError("item_ids and new_item_ids must have the same length")
    picked = _pick_items(order, item_ids)
    diff = 0.0
    replacements = []
    for item, new_id in zip(picked, new_item_ids, strict=True):
        product, variant = _variant(db, new_id)
        if product["product_id"] != item["product_id"]:
            raise ToolError(f"item '{new_id}' is not a variant of {item['name']}")
        if new_id == item["item_id"]:
            raise ToolError(f"item '{new_id}' is the same as the one it replaces")
        if not variant["available"]:
            raise ToolError(f"item '{new_id}' is out of stock")
        diff += variant["price"] - item["price"]
        replacements.append((item, new_id, variant))
    user = _user(db, order["user_id"], write=True)
    _pay(user, payment_id, diff)
    if kind == "payment":
        for item, new_id, variant in replacements:
            item.update(item_id=new_id, options=dict(variant["options"]), price=variant["price"])
        if diff:
            order["payment_history"].append({"transaction_type": "payment" if diff > 0 else "refund",
                                             "amount": _money(abs(diff)), "payment_id": payment_id})
    return _money(diff)


@tool(writes=True)
def return_delivered_order_items(db: State, order_id: str, item_ids: list[str], payment_method_id: str) -> dict:
    """Return items of a delivered order; their price goes back to the original payment method or a gift card.

    Once a return or exchange has been requested for an order, no other can be.

    Args:
        order_id: The order id, such as '#W1234567'.
        item_ids: The item ids to return, such as ['1008292230'].
        payment_method_id: The original payment method of the order, or a gift card from the profile.
    """
    order = _order(db, order_id, write=True)
    _status(order, "delivered")
    picked = _pick_items(order, item_ids)
    user = _user(db, order["user_id"], write=True)
    amount = _money(sum(i["price"] for i in picked))
    _pay(user, payment_method_id, -amount)
    order["status"] = "return requested"
    order["return"] = {"item_ids": list(item_ids), "payment_method_id": payment_method_id, "refund": amount}
    order["payment_history"].append({"transaction_type": "refund", "amount": amount, "payment_id": payment_method_id})
    return order


@tool(writes=True)
def exchange_delivered_order_items(
    db: State, order_id: str, item_ids: list[str], new_item_ids: list[str], payment_method_id: str
) -> dict:
    """Exchange items of a delivered order for other variants of the same product; the difference is settled.

    Each item in `item_ids` is exchanged for the variant at the same position in `new_item_ids`.
    Once a return or exchange has been requested for an order, no other can be.

    Args:
        order_id: The order id, such as '#W1234567'.
        item_ids: The item ids to exchange.
        new_item_ids: The new item ids, in the same order.
        payment_method_id: The payment method that pays or receives the difference.
    """
    order = _order(db, order_id, write=True)
    _status(order, "delivered")
    diff = _swap(db, order, item_ids, new_item_ids, payment_method_id, "exchange")
    order["status"] = "exchange requested"
    order["exchange"] = {"item_ids": list(item_ids), "new_item_ids": list(new_item_ids),
                         "payment_method_id": payment_method_id, "price_difference": diff}
    if diff:
        order["payment_history"].append({"transaction_type": "payment" if diff > 0 else "refund",
                                         "amount": _money(abs(diff)), "payment_id": payment_method_id})
    return order


@tool(writes=True)
def modify_user_address(
    db: State, user_id: str, address1: str, address2: str, city: str, state_code: str, country: str, zip: str
) -> dict:
    """Change a customer's default address (orders already placed keep theirs).

    Args:
        user_id: The user's id, such as 'mia_garcia_4215'.
        address1: The first address line, such as '123 Main St'.
        address2: The second address line, such as 'Apt 1' (empty when there is none).
        city: The city.
        state_code: The two-letter state code, such as 'CA'.
        country: The country, such as 'USA'.
        zip: The five-digit zip code.
    """
    user = _user(db, user_id, write=True)
    user["address"] = {"address1": address1, "address2": address2, "city": city, "state": state_code,
                       "country": country, "zip": zip}
    return user


@tool(terminal=True)
def transfer_to_human_agents(db: State, summary: str) -> str:
    """Hand the conversation to a human agent with a short summary of the issue; this ends your part.

    Use it only when the user asks for a person or the request cannot be handled under the policy.

    Args:
        summary: What the user needs and what has been done so far.
    """
    return "Transfer successful"
