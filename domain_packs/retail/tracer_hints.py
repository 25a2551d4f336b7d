"""Tracer hints for the retail pack: who the user is and how each goal tool is grounded.

The Tracer samples workflows from the tool graph; this module turns a goal tool into a concrete
intent on the retail database (see `tau_emotion.tracer.hints`). The user authenticates by email or
by name and zip code, names orders by id and items by product and options, and names payment
methods by kind, brand or last digits, so every argument is either told or read.

Goals: cancel a pending order, change a pending order's address, payment or items, return or
exchange delivered items, change the default address, ask a product's price. Challenges:
cancelling or modifying an order that is no longer pending, returning an order not yet
delivered, refunding a return to a card that did not pay, paying with a gift card that is short.
"""

from __future__ import annotations

from typing import Any

from tau_emotion.tracer.hints import (
    Choice,
    GroundingContext,
    IntentDraft,
    Mood,
    Option,
    Output,
    Persona,
    Reference,
    TracerHints,
    draft,
    fact_wording,
    money,
    name_instrument,
    per_database,
    pick_fresh,
    pick_instrument,
)

OCCASIONS = [
    ("it is a birthday present for {{my}} daughter", 2, "positive"),
    ("{{I}} {{am}} moving to a new flat next week", 2, "neutral"),
    ("{{I}} {{am}} starting a new job on Monday", 2, "positive"),
    ("money is tight this month", 3, "negative"),
    ("{{I}} {{am}} getting ready for a hiking trip", 1, "positive"),
    ("it is for {{my}} home office", 1, "neutral"),
    ("{{my}} son is going off to college", 2, "positive"),
    ("{{I}} {{am}} recovering from surgery and stuck at home", 3, "negative"),
    ("it is just a little treat", 0, "positive"),
]

NEW_ADDRESSES = [
    {"address1": "48 Harbor View Rd", "address2": "", "city": "Portland", "state": "ME", "country": "USA", "zip": "04101"},
    {"address1": "912 Aspen Ct", "address2": "Apt 3", "city": "Boulder", "state": "CO", "country": "USA", "zip": "80302"},
    {"address1": "77 Magnolia St", "address2": "", "city": "Savannah", "state": "GA", "country": "USA", "zip": "31401"},
    {"address1": "2301 Lakeshore Dr", "address2": "Unit 12", "city": "Madison", "state": "WI", "country": "USA", "zip": "53703"},
    {"address1": "5 Canyon Pass", "address2": "", "city": "Tucson", "state": "AZ", "country": "USA", "zip": "85701"},
    {"address1": "130 Birch Hollow", "address2": "Suite 8", "city": "Burlington", "state": "VT", "country": "USA", "zip": "05401"},
]


class _Index:
    def __init__(self, db: Any):
        self.users = [uid for uid, u in db.tables["users"].items() if u["orders"]]


def _user(ctx: GroundingContext) -> dict:
    return ctx.state["users"].peek(ctx.persona.entity)


def _orders(ctx: GroundingContext, *status: str) -> list[dict]:
    table = ctx.state["orders"]
    return [o for oid in _user(ctx)["orders"] if (o := table.peek(oid)) is not None and o["status"] in status]


def _pick(ctx: GroundingContext, orders: list[dict]) -> dict | None:
    return pick_fresh(ctx, orders, "order_id", "order")


def _addr_words(a: dict) -> str:
    line = a["address1"] + (f", {a['address2']}" if a["address2"] else "")
    return f"{line}, {a['city']}, {a['state']} {a['zip']}, {a['country']}"


def _addr_facts(a: dict) -> dict:
    # one fact, said as one address; each field is a leaf the address tools' arguments come from
    return {"new_address": {k: v for k, v in a.items() if v}}


def _new_address(ctx: GroundingContext, current: dict) -> dict | None:
    """The address a user gives: the one an earlier request of the task named (one move), else a new one."""
    for earlier in ctx.history:
        said = earlier.facts.get("new_address")
        if said is not None:
            new = next(a for a in NEW_ADDRESSES if {k: v for k, v in a.items() if v} == said)
            return None if new == current else new
    return ctx.rng.choice([a for a in NEW_ADDRESSES if a != current])


def _addr_args(a: dict) -> dict:
    return {("state_code" if k == "state" else k): v for k, v in a.items()}


def _order(order: dict) -> Reference:
    """The user names an order by its id; the agent reads it before acting on it."""
    oid = order["order_id"]
    return Reference(facts={"order_id": oid}, reads={"get_order_details": [{"order_id": oid}]},
                     evidence=["get_order_details"], reads_first=True)


def _payment(ctx: GroundingContext, charge: float, *, exclude: str | None = None,
             allowed: set[str] | None = None) -> tuple[str, Choice, str] | None:
    """A payment method able to pay `charge`: (id, choice, words), named so it is the only fit."""
    methods = _user(ctx)["payment_methods"]
    options = []
    for pid, m in methods.items():
        attrs: dict[str, Any] = {"kind": m["source"].replace("_", " ").replace("paypal", "PayPal account")}
        if m["source"] == "credit_card":
            attrs.update(brand=m["brand"], last_four=m["last_four"])
        else:
            attrs.update(last_four=pid[-4:])
        options.append(Option(pid, attrs))

    def usable(o: Option) -> bool:
        m = methods[o.value]
        return o.value != exclude and (allowed is None or o.value in allowed) and (
            m["source"] != "gift_card" or m["balance"] >= charge)

    picked = pick_instrument(ctx, "payment method", options, usable)
    return None if picked is None else (picked[0].value, picked[1], picked[2])


def _item(ctx: GroundingContext, order: dict) -> dict | None:
    """An item of `order` whose product appears once in it (so the product's name picks it)."""
    names = [i["name"] for i in order["items"]]
    once = [i for i in order["items"] if names.count(i["name"]) == 1]
    return ctx.rng.choice(once) if once else None


# how a person names a variant's options: "navy, size small", "large room size, HEPA filter"
_OPTION_WORDS = {"size": "size {}", "power source": "{} power", "battery life": "{} battery life",
                 "deck": "{} deck", "room size": "{} room size", "filter": "{} filter", "strap": "{} strap",
                 "dial": "{} dial", "frame": "{} frame", "lens": "{} lenses", "cover": "{} cover", "paper": "{} paper",
                 "switch": "{} switches", "layout": "{} layout", "backlight": "{} backlight"}
_YES_NO = {"water resistance": ("water-resistant", "not water-resistant"), "adjustable": ("adjustable", "fixed"),
           "waterproof": ("waterproof", "not waterproof")}


def _options(options: dict[str, str]) -> str:
    words = []
    for k, v in options.items():
        if k in _YES_NO:
            words.append(_YES_NO[k][0 if v == "yes" else 1])
        elif k == "backlight" and v == "none":
            words.append("no backlight")
        else:
            words.append(_OPTION_WORDS.get(k, "{}").format(v))
    return ", ".join(words)


def _plural(name: str) -> bool:
    """'Running Shoes', 'Sunglasses': the product names of this store that are plurals end in s."""
    return name.endswith("s")


def _a(name: str) -> str:
    """'a pair of Running Shoes', 'an Office Chair', 'a Tablet'."""
    return f"a pair of {name}" if _plural(name) else f"{'an' if name[0] in 'AEIOU' else 'a'} {name}"


def _item_words(item: dict) -> str:
    opts = _options(item["options"])
    return f"{item['name']} ({opts})"


def _variant_swap(ctx: GroundingContext, item: dict) -> tuple[dict, Choice] | None:
    """An available other variant of the item's product and the choice its stated options settle."""
    product = ctx.state["products"].peek(item["product_id"])
    others = [v for v in product["variants"].values() if v["available"] and v["item_id"] != item["item_id"]]
    if not others:
        return None
    dearer = [v for v in others if v["price"] - item["price"] >= 20]
    # most people who swap want something better, which costs more: that is where a decision rule fits
    new = ctx.rng.choice(dearer if dearer and ctx.rng.random() < 0.95 else others)
    options = [Option(v["item_id"], dict(v["options"])) for v in product["variants"].values() if v["available"]]
    return new, Choice("item", new["item_id"], options, dict(new["options"]))


def _address(a: dict) -> str:
    line = a["address1"] + (f", {a['address2']}" if a.get("address2") else "")
    return f"{line}, {a['city']}, {a['state']} {a['zip']}, {a['country']}"


_REASONS = {"no longer needed": "you no longer need it", "ordered by mistake": "you ordered it by mistake"}


def _word(key: str, value: Any) -> str:
    if key == "new_address":
        return _address(value)
    if key == "cancellation_reason":
        return _REASONS.get(value, value)
    if key.startswith(("wanted_options", "options")):
        return f"the {value} version"
    return f"the {value}" if key.endswith(("item_to_return", "item_to_change")) or key == "product" else str(value)


def _each(said: list[str]) -> str:
    """Two intents, two methods: named in the intents' order ("credit card and your PayPal account respectively")."""
    return " and your ".join(said) + (" respectively" if len(said) > 1 else "")


#: the instruction's wording of a known fact ("your new address is 48 Harbor View Rd, Portland, ...")
fact_phrase = fact_wording({
    "order_id": ("your order number is {}", "your order numbers are {}"),
    "new_address": ("your new address is {}", "your new address is {}"),
    "refund_to": lambda said: f"the refund{'s go' if len(said) > 1 else ' goes'} to your {_each(said)}",
    "payment_method": lambda said: f"the payment method{'s are' if len(said) > 1 else ' is'} your {_each(said)}",
    "new_payment_method": lambda said: f"you want to pay with your {_each(said)} instead",
    "cancellation_reason": ("you are cancelling because {}", "you are cancelling because {}"),
    "item_to_return": ("you are sending back {}", "you are sending back {}"),
    "first_item_to_return": ("you are sending back {}", "you are sending back {}"),
    "second_item_to_return": ("you are also sending back {}", "you are also sending back {}"),
    "item_to_change": ("the item is {}", "the items are {}"),
    "first_item_to_change": ("the first item is {}", "the first items are {}"),
    "second_item_to_change": ("the second item is {}", "the second items are {}"),
    "wanted_options": ("you want {}", "you want {} respectively"),
    "wanted_options_for_first": ("you want {}", "you want {} respectively"),
    "wanted_options_for_second": ("you want {}", "you want {} respectively"),
    "options": ("you want {}", "you want {} respectively"),
    "product": ("you are asking about {}", "you are asking about {}"),
}, _word)


# --------------------------------------------------------------------------- persona


def persona(ctx: GroundingContext) -> Persona | None:
    uid = ctx.rng.choice(per_database(ctx, _Index).users)
    user = ctx.state["users"].peek(uid)
    name = user["name"]
    facts: dict[str, Any] = {"first_name": name["first_name"], "last_name": name["last_name"]}
    if ctx.rng.random() < 0.6:
        facts["email"] = user["email"]
        reads = {"find_user_id_by_email": [{"email": user["email"]}]}
    else:
        facts["zip"] = user["address"]["zip"]
        reads = {"find_user_id_by_name_zip": [{"first_name": name["first_name"], "last_name": name["last_name"],
                                               "zip": user["address"]["zip"]}]}
    # no user id among the facts: the agent must find it (the policy's authentication)
    reads["get_user_details"] = [{"user_id": uid}]
    return Persona(name=f"{name['first_name']} {name['last_name']}", facts=facts, reads=reads, entity=uid)


# --------------------------------------------------------------------------- pending orders


def _not_pending(ctx: GroundingContext, kind: str, goal: str, arguments_for: Any, words: str) -> IntentDraft | None:
    order = _pick(ctx, _orders(ctx, "processed", "delivered"))
    if order is None:
        return None
    oid = order["order_id"]
    return draft(kind, goal, arguments_for(order), [f"{words} order {oid}"], _order(order), refused=True,
                 outputs=[Output("processed", reason="not_pending")],
                 mood=Mood("{{I}} want to change an order that may already be on its way", "negative", 2))


def ground_cancel_pending_order(ctx: GroundingContext) -> IntentDraft | None:
    reason = ctx.rng.choice(["no longer needed", "ordered by mistake"])
    if ctx.want_challenge:
        if ctx.rng.random() < 0.85:  # keep 'not pending' from crowding out the other challenge kinds
            return None
        return _not_pending(ctx, "cancel_not_pending", "cancel_pending_order",
                            lambda o: {"order_id": o["order_id"], "reason": reason}, "cancel")
    order = _pick(ctx, _orders(ctx, "pending"))
    if order is None:
        return None
    oid = order["order_id"]
    paid = sum(p["amount"] for p in order["payment_history"] if p["transaction_type"] == "payment")
    said = "{{I}} no longer need it" if reason == "no longer needed" else "{{I}} ordered it by mistake"
    return draft("cancel", "cancel_pending_order", {"order_id": oid, "reason": reason},
                 [f"cancel order {oid}", f"cancel {{{{my}}}} order {oid} and get {{{{my}}}} money back"],
                 _order(order),
                 facts={"cancellation_reason": reason}, context=said,
                 outputs=[Output(money(paid), "the refund total", from_goal=True)],
                 mood=Mood(said, "neutral", 1))


def ground_modify_pending_order_address(ctx: GroundingContext) -> IntentDraft | None:
    order = _pick(ctx, _orders(ctx, "pending"))
    if order is None:
        return None
    oid = order["order_id"]
    new = _new_address(ctx, order["address"])
    if new is None:
        return None
    return draft("modify_address", "modify_pending_order_address", {"order_id": oid, **_addr_args(new)},
                 [f"ship order {oid} to {_addr_words(new)} instead",
                  f"change the shipping address of order {oid} to {_addr_words(new)}"], _order(order),
                 facts=_addr_facts(new),
                 mood=Mood("{{I}} will not be at the old address when the parcel arrives", "neutral", 1))


def ground_modify_pending_order_payment(ctx: GroundingContext) -> IntentDraft | None:
    challenge = ctx.want_challenge
    orders = _orders(ctx, "pending")
    orders = [o for o in orders if sum(p["transaction_type"] == "payment" for p in o["payment_history"]) == 1]
    order = _pick(ctx, orders)
    if order is None:
        return None
    oid = order["order_id"]
    total = order["payment_history"][0]["amount"]
    current = order["payment_history"][0]["payment_id"]
    methods = _user(ctx)["payment_methods"]
    if challenge:
        short = [pid for pid, m in methods.items() if m["source"] == "gift_card" and m["balance"] < total and pid != current]
        if not short:
            return None
        options = [Option(pid, {"kind": m["source"].replace("_", " ")}) for pid, m in methods.items()]
        if sum(o.attrs["kind"] == "gift card" for o in options) != 1:
            return None
        return draft("gift_card_short", "modify_pending_order_payment",
                     {"order_id": oid, "payment_method_id": short[0]},
                     [f"pay for order {oid} with {{{{my}}}} gift card instead"], _order(order), refused=True,
                     evidence=["get_user_details"],
                     outputs=[Output("balance", reason="gift_card_balance")],
                     mood=Mood("{{I}} want to use up {{my}} gift card", "neutral", 1))
    paid = _payment(ctx, total, exclude=current)
    if paid is None:
        return None
    pid, choice, words = paid
    return draft("modify_payment", "modify_pending_order_payment", {"order_id": oid, "payment_method_id": pid},
                 [f"pay for order {oid} with {{{{my}}}} {words} instead"],
                 _order(order), facts={"new_payment_method": words},
                 choices=[choice], outputs=[Output(money(total), "the order total")],
                 decline="keep the order on the payment method it has now", mood=Mood("{{I}} would rather pay another way", "neutral", 1))


def _swap_intent(ctx: GroundingContext, kind: str, goal: str, statuses: tuple[str, ...], verb: str) -> IntentDraft | None:
    order = _pick(ctx, _orders(ctx, *statuses))
    if order is None:
        return None
    names = [i["name"] for i in order["items"]]
    once = [i for i in order["items"] if names.count(i["name"]) == 1]
    if not once:
        return None
    # often two items at once: the policy wants every item collected before the one call
    count = 2 if len(once) >= 2 and ctx.rng.random() < 0.6 else 1
    items = ctx.rng.sample(once, count)
    swaps = [_variant_swap(ctx, item) for item in items]
    if any(sw is None for sw in swaps):
        return None
    news = [sw[0] for sw in swaps]
    diff = round(sum(n["price"] for n in news) - sum(i["price"] for i in items), 2)
    paid = _payment(ctx, max(diff, 0))
    if paid is None:
        return None
    pid, pay_choice, pay_words = paid
    oid = order["order_id"]
    wanted = [_options(n["options"]) for n in news]
    pairs = " and ".join(f"the {_item_words(i)} for the {w} {'pair' if _plural(i['name']) else 'one'}" for i, w in zip(items, wanted, strict=True))
    short = " and ".join(f"{{{{my}}}} {i['name']} for the {w} version" for i, w in zip(items, wanted, strict=True))
    new_sum = " + ".join(str(n["price"]) for n in news)
    old_sum = " + ".join(str(i["price"]) for i in items)
    expression = f"({new_sum}) - ({old_sum})" if diff >= 0 else f"({old_sum}) - ({new_sum})"
    outputs = [Output(money(abs(diff)), "the price difference")] if diff else []
    facts: dict[str, Any] = {"payment_method": pay_words}
    if count == 1:
        facts.update(item_to_change=items[0]["name"], wanted_options=wanted[0])
    else:
        facts.update(first_item_to_change=items[0]["name"], wanted_options_for_first=wanted[0],
                     second_item_to_change=items[1]["name"], wanted_options_for_second=wanted[1])
    what = " and ".join(i["name"] for i in items)
    return draft(kind, goal,
                 {"order_id": oid, "item_ids": [i["item_id"] for i in items], "new_item_ids": [n["item_id"] for n in news],
                  "payment_method_id": pid},
                 [f"{verb} {pairs} in order {oid}", f"{verb} {short} from order {oid}"], _order(order),
                 facts=facts,
                 reads={"get_product_details": [{"product_id": i["product_id"]} for i in items],
                        "calculate": [{"expression": expression}]},
                 evidence=["get_product_details"], choices=[*(sw[1] for sw in swaps), pay_choice], outputs=outputs,
                 preferences=[f"settle any difference with {{{{my}}}} {pay_words}"],
                 decline=f"keep {{{{my}}}} {what} as {'it is' if count == 1 and not _plural(what) else 'they are'}"
                 if diff > 0 else None,
                 mood=Mood(f"the {what} {'is' if count == 1 and not _plural(what) else 'are'} not quite what {{{{I}}}} wanted", "neutral", 1))


def ground_modify_pending_order_items(ctx: GroundingContext) -> IntentDraft | None:
    if ctx.want_challenge:
        if ctx.rng.random() < 0.85:
            return None
        order = _pick(ctx, _orders(ctx, "processed"))
        item = _item(ctx, order) if order else None
        if item is None:
            return None
        return draft("modify_items_not_pending", "modify_pending_order_items",
                     {"order_id": order["order_id"], "item_ids": [item["item_id"]], "new_item_ids": [item["item_id"]],
                      "payment_method_id": order["payment_history"][0]["payment_id"]},
                     [f"change the {item['name']} in order {order['order_id']} to another size or color"],
                     _order(order),
                     refused=True, outputs=[Output("processed", reason="not_pending")],
                     mood=Mood("{{I}} picked the wrong option and hope it is not too late", "negative", 2))
    return _swap_intent(ctx, "modify_items", "modify_pending_order_items", ("pending",), "swap")


# --------------------------------------------------------------------------- delivered orders


def _again(ctx: GroundingContext, kind: str, goal: str, verb: str) -> IntentDraft | None:
    """A second return or exchange on an order that already has one."""
    order = _pick(ctx, _orders(ctx, "return requested", "exchange requested"))
    if order is None:
        return None
    done = order.get("return") or order.get("exchange")
    item = next((i for i in order["items"] if i["item_id"] not in done["item_ids"]), None)
    if item is None or [i["name"] for i in order["items"]].count(item["name"]) != 1:
        return None
    args: dict[str, Any] = {"order_id": order["order_id"], "item_ids": [item["item_id"]]}
    if goal == "exchange_delivered_order_items":
        args["new_item_ids"] = [item["item_id"]]
    args["payment_method_id"] = order["payment_history"][0]["payment_id"]
    return draft(kind, goal, args, [f"{verb} the {item['name']} from order {order['order_id']} as well"], _order(order),
                 context="{{I}} already sent other items from that order back", refused=True, outputs=[Output("one return", reason="one_return_or_exchange")],
                 mood=Mood("{{I}} forgot an item when {{I}} sent the others back", "negative", 1))


def _wrong_refund(ctx: GroundingContext) -> IntentDraft | None:
    """A return refunded to a card or PayPal account that did not pay for the order."""
    methods = _user(ctx)["payment_methods"]
    order = _pick(ctx, _orders(ctx, "delivered"))
    item = _item(ctx, order) if order else None
    if item is None:
        return None
    original = order["payment_history"][0]["payment_id"]
    wrong = [p for p, m in methods.items() if p != original and m["source"] != "gift_card"]
    if not wrong:
        return None
    options = [Option(p, {"kind": m["source"].replace("_", " ").replace("paypal", "PayPal account"),
                          "brand": m.get("brand"), "last_four": m.get("last_four", p[-4:])}) for p, m in methods.items()]
    named = name_instrument("payment method", next(o for o in options if o.value == wrong[0]), options)
    if named is None:
        return None
    return draft("return_wrong_refund", "return_delivered_order_items",
                 {"order_id": order["order_id"], "item_ids": [item["item_id"]], "payment_method_id": wrong[0]},
                 [f"return the {item['name']} from order {order['order_id']} and get the money on {{{{my}}}} {named[1]}"],
                 _order(order),
                 refused=True, choices=[named[0]], facts={"refund_to": named[1]},
                 outputs=[Output("original payment", reason="refund_destination")],
                 mood=Mood("{{I}} want the money where {{I}} can use it", "neutral", 1))


def ground_return_delivered_order_items(ctx: GroundingContext) -> IntentDraft | None:
    kind = ctx.rng.choice(["early", "again", "wrong"]) if ctx.want_challenge else ""
    if ctx.want_challenge and kind == "early":
        order = _pick(ctx, _orders(ctx, "pending", "processed"))
        item = _item(ctx, order) if order else None
        if item is None:
            return None
        return draft("return_not_delivered", "return_delivered_order_items",
                     {"order_id": order["order_id"], "item_ids": [item["item_id"]],
                      "payment_method_id": order["payment_history"][0]["payment_id"]},
                     [f"return the {item['name']} from order {order['order_id']}"], _order(order), refused=True,
                     outputs=[Output("delivered", reason="not_delivered")],
                     mood=Mood("{{I}} already know {{I}} do not want this", "negative", 1))
    if ctx.want_challenge and kind == "again":
        return _again(ctx, "return_again", "return_delivered_order_items", "return")
    if ctx.want_challenge:
        return _wrong_refund(ctx)
    order = _pick(ctx, _orders(ctx, "delivered"))
    if order is None:
        return None
    names = [i["name"] for i in order["items"]]
    once = [i for i in order["items"] if names.count(i["name"]) == 1]
    if not once:
        return None
    # often two items: the policy wants every item collected first, and the refund confirmed before the write
    items = ctx.rng.sample(once, 2 if len(once) >= 2 and ctx.rng.random() < 0.6 else 1)
    original = order["payment_history"][0]["payment_id"]
    methods = _user(ctx)["payment_methods"]
    allowed = {original} | {p for p, m in methods.items() if m["source"] == "gift_card"}
    paid = _payment(ctx, 0, allowed=allowed)
    if paid is None:
        return None
    pid, choice, words = paid
    oid = order["order_id"]
    what = " and ".join(i["name"] for i in items)
    refund = round(sum(i["price"] for i in items), 2)
    facts: dict[str, Any] = {"refund_to": words}
    reads: dict[str, list[dict[str, Any]]] = {}
    if len(items) == 1:
        facts["item_to_return"] = items[0]["name"]
        outputs = [Output(money(refund), "the refund amount", from_goal=True)]
    else:
        facts.update(first_item_to_return=items[0]["name"], second_item_to_return=items[1]["name"])
        # the total is confirmed with the customer before the return is made (policy: amounts before writes)
        reads["calculate"] = [{"expression": " + ".join(str(i["price"]) for i in items)}]
        outputs = [Output(money(refund), "the total refund")]
    return draft("return", "return_delivered_order_items",
                 {"order_id": oid, "item_ids": [i["item_id"] for i in items], "payment_method_id": pid},
                 [f"return the {what} from order {oid}", f"send back {{{{my}}}} {what} from order {oid}"],
                 _order(order),
                 facts=facts, choices=[choice], reads=reads,
                 preferences=[f"get the refund on {{{{my}}}} {words}"], outputs=outputs,
                 mood=Mood(f"the {what} did not work out", "negative", 1))


def ground_exchange_delivered_order_items(ctx: GroundingContext) -> IntentDraft | None:
    if ctx.want_challenge and ctx.rng.random() < 0.5:
        return _again(ctx, "exchange_again", "exchange_delivered_order_items", "exchange")
    if ctx.want_challenge:
        # most exchanges are possible; asking for another product is one challenge among several
        return _other_product(ctx) if ctx.rng.random() < 0.4 else None
    return _swap_intent(ctx, "exchange", "exchange_delivered_order_items", ("delivered",), "exchange")


def _other_product(ctx: GroundingContext) -> IntentDraft | None:
    """An exchange for an item of another product type, which the policy does not allow."""
    order = _pick(ctx, _orders(ctx, "delivered"))
    item = _item(ctx, order) if order else None
    if item is None:
        return None
    products = [p for _pid, p in ctx.state["products"].scan() if p["product_id"] != item["product_id"]]
    product = ctx.rng.choice(products)
    new = next((v for v in product["variants"].values() if v["available"]), None)
    if new is None:
        return None
    return draft("exchange_other_product", "exchange_delivered_order_items",
                 {"order_id": order["order_id"], "item_ids": [item["item_id"]], "new_item_ids": [new["item_id"]],
                  "payment_method_id": order["payment_history"][0]["payment_id"]},
                 [f"exchange the {item['name']} from order {order['order_id']} for {_a(product['name'])}"],
                 _order(order),
                 refused=True, outputs=[Output("same product", reason="same_product_only")],
                 mood=Mood(f"{{{{I}}}} would rather have {_a(product['name'])} than the {item['name']}", "neutral", 1))


# --------------------------------------------------------------------------- profile and products


def ground_modify_user_address(ctx: GroundingContext) -> IntentDraft | None:
    user = _user(ctx)
    if any(d.goal == "modify_user_address" for d in ctx.history):
        return None
    new = _new_address(ctx, user["address"])
    if new is None:
        return None
    return IntentDraft(kind="user_address", goal="modify_user_address", arguments={"user_id": user["user_id"], **_addr_args(new)},
                       request=[f"change {{{{my}}}} default address to {_addr_words(new)}",
                                f"update the address on {{{{my}}}} account to {_addr_words(new)}"],
                       facts=_addr_facts(new),
                       mood=Mood("{{I}} just moved", "positive", 1))


def ground_get_product_details(ctx: GroundingContext) -> IntentDraft | None:
    products = list(ctx.state["products"].scan())
    pid, product = ctx.rng.choice(products)
    variants = [v for v in product["variants"].values() if v["available"]]
    if not variants:
        return None
    v = ctx.rng.choice(variants)
    wanted = _options(v["options"])
    options = [Option(x["item_id"], dict(x["options"])) for x in product["variants"].values()]
    return IntentDraft(kind="product_price", goal="get_product_details", arguments={"product_id": pid},
                       request=[f"find out the price of the {product['name']} in {wanted}",
                                f"check what the {product['name']} costs in {wanted}"],
                       facts={"product": product["name"], "options": wanted},
                       reads={"list_all_product_types": [{}]},
                       choices=[Choice("item", v["item_id"], options, dict(v["options"]))],
                       outputs=[Output(money(v["price"]), "the price", from_goal=True)],
                       mood=Mood("{{I}} {{am}} thinking of buying something", "positive", 0))


HINTS = TracerHints(
    persona=persona,
    goals={
        "cancel_pending_order": ground_cancel_pending_order,
        "modify_pending_order_address": ground_modify_pending_order_address,
        "modify_pending_order_payment": ground_modify_pending_order_payment,
        "modify_pending_order_items": ground_modify_pending_order_items,
        "return_delivered_order_items": ground_return_delivered_order_items,
        "exchange_delivered_order_items": ground_exchange_delivered_order_items,
        "modify_user_address": ground_modify_user_address,
        "get_product_details": ground_get_product_details,
    },
    goal_weights={"get_product_details": 0.15, "modify_user_address": 0.3, "modify_pending_order_address": 0.4,
                  "exchange_delivered_order_items": 2.5, "modify_pending_order_items": 2.5,
                  "cancel_pending_order": 0.7},
    entry_tools=["find_user_id_by_email", "find_user_id_by_name_zip"],
    handoff_tool="transfer_to_human_agents",
    policy_edges=[("find_user_id_by_email", "get_user_details"), ("find_user_id_by_name_zip", "get_user_details"),
                  ("get_order_details", "cancel_pending_order"), ("get_order_details", "modify_pending_order_items"),
                  ("get_order_details", "return_delivered_order_items"),
                  ("get_order_details", "exchange_delivered_order_items")],
    occasions=OCCASIONS,
    occasion_intents=["modify_items", "exchange", "modify_address", "modify_payment", "product_price", "user_address"],
    fact_phrase=fact_phrase,
    # a customer knows their order numbers; user, product and payment records (paypal_1488918) are internal
    visible_ids=frozenset({"order_id"}),
)
