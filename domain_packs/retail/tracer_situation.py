"""The retail pack's situation check for the Tracer (`TracerHints.situation`): the task's occasion must agree with
the products the task is about and with the intents' own events.

- An occasion that names what the things are for ("a hiking trip", "the home office") needs the products the task
  changes to fit it: the items swapped or returned, the product asked about, or, for a request about a whole order
  (its address, its payment), at least one item of that order. A task about no product (the default address) has
  nothing such an occasion could be about.
- "Moving next week" and "I just moved" do not go together.
- "Moving to a smaller place since my partner died" needs an address change in the task; "recovering from surgery
  and stuck at home" does not go with a move or with being away when a parcel arrives (retail-test-035).
"""

from __future__ import annotations

from typing import Any

#: an occasion's words -> the products that fit it
PURPOSES = {
    "hiking trip": frozenset({"Hiking Boots", "Backpack", "Water Bottle", "Sunglasses", "T-Shirt", "Running Shoes",
                              "Wristwatch", "Bluetooth Speaker"}),
    "home office": frozenset({"Office Chair", "Desk Lamp", "Laptop Stand", "Mechanical Keyboard", "Notebook",
                              "Coffee Maker", "Tablet", "Wireless Earbuds", "Air Purifier", "Electric Kettle"}),
}
MOVING_SOON = "moving to a new flat next week"
MOVED = "just moved"
#: a move after a bereavement goes with an address change; being stuck at home does not go with moving or being away
BEREAVED_MOVE = "since {{my}} partner died"
ADDRESS_CHANGES = frozenset({"modify_address", "user_address"})
HOUSEBOUND = "stuck at home"


def _products(state: Any, draft: Any) -> tuple[list[str], bool]:
    """The names of the products `draft` is about, and whether each must fit (items named) or one is enough (an
    order as a whole)."""
    args = draft.arguments
    if "product_id" in args:
        product = state["products"].peek(args["product_id"])
        return ([product["name"]] if product else []), True
    order = state["orders"].peek(args["order_id"]) if isinstance(args.get("order_id"), str) else None
    if order is None:
        return [], True
    items = {i["item_id"]: i["name"] for i in order["items"]}
    if args.get("item_ids"):
        return [items[i] for i in args["item_ids"] if i in items], True
    return list(items.values()), False


def situation(state: Any, cand: Any) -> str | None:
    """Why the candidate's occasion contradicts what it is about, or None."""
    occasion = (cand.occasion or "").lower()
    for words, fits in PURPOSES.items():
        if words not in occasion:
            continue
        for draft in cand.drafts:
            names, each = _products(state, draft)
            if not names:
                return f"occasion '{cand.occasion}' for {draft.kind}, which is about no product"
            misfits = [n for n in names if n not in fits]
            if misfits and (each or len(misfits) == len(names)):
                return f"occasion '{cand.occasion}' for {draft.kind} about {', '.join(misfits)}"
    if BEREAVED_MOVE in occasion and not any(d.kind in ADDRESS_CHANGES for d in cand.drafts):
        return f"occasion '{cand.occasion}' for a task that changes no address"
    if HOUSEBOUND in occasion:
        moving = [d for d in cand.drafts if any(w in d.mood.event.lower() for w in ("moving", "not be at", "old flat"))]
        if moving:
            return f"occasion '{cand.occasion}' with {moving[0].kind}, whose user '{moving[0].mood.event}'"
    if MOVING_SOON in occasion:
        for draft in cand.drafts:
            if MOVED in draft.mood.event.lower() or MOVED in (draft.context or "").lower():
                return f"occasion '{cand.occasion}' with {draft.kind}, whose user '{draft.mood.event}'"
    return None
