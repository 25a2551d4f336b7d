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

from tau_emotion.domain_packs.retail.tracer_situation import situation
from tau_emotion.tracer.hints import (
    Choice,
    GroundingContext,
    Instrument,
    IntentDraft,
    Mood,
    Output,
    Persona,
    Rate,
    Rates,
    Reference,
    Refusal,
    TracerHints,
    difference,
    draft,
    fact_wording,
    goals_in,
    instrument_options,
    money,
    name_instrument,
    need,
    per_database,
    pick_fresh,
    pick_instrument,
)


class RetailRates(Rates):
    #: a swap goes to a dearer variant (where a decision rule on the price difference fits) when there is one
    dearer_variant: Rate = 0.95
    #: the user is found by email (else by name and zip code)
    find_by_email: Rate = 0.6
    #: a "not pending" cancellation or modification challenge is given up, so it does not crowd out the other kinds
    not_pending_held_back: Rate = 0.85
    #: an exchange or return takes two items at once (the policy wants every item collected before the one call)
    two_items: Rate = 0.6
    other_product: Rate = 0.4

OCCASIONS = [
    ("it is a birthday present for {{my}} daughter", 2, "positive"),
    ("{{I}} {{am}} moving to a new flat next week", 2, "neutral"),
    ("{{I}} {{am}} starting a new job on Monday", 2, "positive"),
    ("money is tight this month", 3, "negative"),
    ("{{I}} {{am}} getting ready for a hiking trip", 1, "positive"),
    ("it is for {{my}} home office", 1, "neutral"),
    ("{{my}} son is going off to college", 2, "positive"),
    ("{{I}} {{am}} recovering from surgery and stuck at home", 3, "negative"),
    # a loss that is what an address change is for (`tracer_situation`: only with one); sorrow needs a loss
    ("{{I}} {{am}} moving to a smaller place since {{my}} partner died", 3, "negative"),
    ("it is just a little treat", 0, "positive"),
]

# a new address is one fact, said as one address; each field is a leaf the address tools' arguments come from
NEW_ADDRESSES = [
    {"address1": "48 Harbor View Rd", "city": "Portland", "state": "ME", "country": "USA", "zip": "04101"},
    {"address1": "912 Aspen Ct", "address2": "Apt 3", "city": "Boulder", "state": "CO", "country": "USA", "zip": "80302"},
    {"address1": "77 Magnolia St", "city": "Savannah", "state": "GA", "country": "USA", "zip": "31401"},
    {"address1": "2301 Lakeshore Dr", "address2": "Unit 12", "city": "Madison", "state": "WI", "country": "USA", "zip": "53703"},
    {"address1": "5 Canyon Pass", "city": "Tucson", "state": "AZ", "country": "USA", "zip": "85701"},
    {"address1": "130 Birch Hollow", "address2": "Suite 8", "city": "Burlington", "state": "VT", "country": "USA", "zip": "05401"},
]

def _users(db: Any) -> list[str]:
    return [uid for uid, u in db.tables["users"].items() if u["orders"]]

def _user(ctx: GroundingContext) -> dict:
    return ctx.state["users"].peek(ctx.persona.entity)

def _orders(ctx: GroundingContext, *status: str) -> list[dict]:
    return [o for o in ctx.rows("orders", _user(ctx)["orders"]) if o["status"] in status]

def _pick(ctx: GroundingContext, *status: str) -> dict:
    """An order in one of `status` that no earlier intent of the task used (else the grounder gives up)."""
    return need(pick_fresh(ctx, _orders(ctx, *status), "order_id", "order"))

def _new_address(ctx: GroundingContext, current: dict) -> dict | None:
    """The address a user gives: the one an earlier request of the task named (one move), else a new one."""
    for earlier in ctx.history:
        said = earlier.facts.get("new_address")
        if said is not None:
            return None if _addr_args(said) == _addr_args(current) else said
    return ctx.rng.choice([a for a in NEW_ADDRESSES if _addr_args(a) != _addr_args(current)])

def _addr_args(a: dict) -> dict:
    return {("state_code" if k == "state" else k): a.get(k, "") for k in ("address1", "address2", "city", "state", "country", "zip")}

def _order(order: dict) -> Reference:
    """The user names an order by its id; the agent reads it before acting on it."""
    oid = order["order_id"]
    return Reference(facts={"order_id": oid}, reads={"get_order_details": [{"order_id": oid}]},
                     evidence=["get_order_details"], reads_first=True)

def _payment(ctx: GroundingContext, charge: float, *, exclude: str | None = None,
             allowed: set[str] | None = None) -> Instrument:
    """A payment method able to pay `charge`, named so it is the only fit."""
    options = instrument_options(_user(ctx)["payment_methods"], {"paypal": "PayPal account"})
    return need(pick_instrument(ctx, "payment method", options, lambda o: o.value != exclude and (
        allowed is None or o.value in allowed) and (o.attrs["kind"] != "gift card" or o.attrs["balance"] >= charge)))

def _once(order: dict) -> list[dict]:
    """The items of `order` whose product appears once in it (so the product's name picks each)."""
    names = [i["name"] for i in order["items"]]
    return [i for i in order["items"] if names.count(i["name"]) == 1]

# how a person names a variant's options: "navy, size small", "large room size, HEPA filter"; an option's
# value said in words of its own ("water-resistant") comes first, else its option's wording, else the value alone
_OPTION_WORDS = {"size": "size {}", "power source": "{} power", "battery life": "{} battery life",
                 "deck": "{} deck", "room size": "{} room size", "filter": "{} filter", "strap": "{} strap",
                 "dial": "{} dial", "frame": "{} frame", "lens": "{} lenses", "cover": "{} cover", "paper": "{} paper",
                 "switch": "{} switches", "layout": "{} layout", "backlight": "{} backlight"}
_VALUE_WORDS = {("water resistance", "yes"): "water-resistant", ("water resistance", "no"): "not water-resistant",
                ("adjustable", "yes"): "adjustable", ("adjustable", "no"): "fixed", ("waterproof", "yes"): "waterproof",
                ("waterproof", "no"): "not waterproof", ("backlight", "none"): "no backlight"}

def _options(options: dict[str, str]) -> str:
    return ", ".join(_VALUE_WORDS.get((k, v)) or _OPTION_WORDS.get(k, "{}").format(v) for k, v in options.items())

def _plural(name: str) -> bool:
    """'Running Shoes', 'Sunglasses': the product names of this store that are plurals end in s."""
    return name.endswith("s")

def _a(name: str) -> str:
    """'a pair of Running Shoes', 'an Office Chair', 'a Tablet'."""
    return f"a pair of {name}" if _plural(name) else f"{'an' if name[0] in 'AEIOU' else 'a'} {name}"

def _variant_swap(ctx: GroundingContext, item: dict) -> tuple[dict, Choice] | None:
    """An available other variant of the item's product and the choice its stated options settle."""
    product = ctx.state["products"].peek(item["product_id"])
    others = [v for v in product["variants"].values() if v["available"] and v["item_id"] != item["item_id"]]
    if not others:
        return None  # not Ungrounded: the caller draws a swap for every item before it gives up
    dearer = [v for v in others if v["price"] - item["price"] >= 20]
    # most people who swap want something better, which costs more: that is where a decision rule fits
    new = ctx.rng.choice(dearer if dearer and ctx.chance("dearer_variant") else others)
    available = [v for v in product["variants"].values() if v["available"]]
    return new, Choice.among("item", new, available, "item_id", lambda v: dict(v["options"]))

def _address(a: dict) -> str:
    line = a["address1"] + (f", {a['address2']}" if a.get("address2") else "")
    return f"{line}, {a['city']}, {a['state']} {a['zip']}, {a['country']}"

_REASONS = {"no longer needed": "you no longer need it", "ordered by mistake": "you ordered it by mistake"}
_THE, _VERSION = "the {}".format, "the {} version".format

#: the instruction's wording of a known fact ("your new address is 48 Harbor View Rd, Portland, ...")
fact_phrase = fact_wording({
    "order_id": ("your order number is {}", "your order numbers are {}"),
    "new_address": ("your new address is {}", _address),
    # two intents, two methods: named in the intents' order
    "refund_to": ("the refund goes to your {}", "the refunds go to your {} respectively"),
    "payment_method": ("the payment method is your {}", "the payment methods are your {} respectively"),
    "new_payment_method": ("you want to pay with your {} instead", "you want to pay with your {} respectively instead"),
    "cancellation_reason": ("you are cancelling because {}", _REASONS),
    "item_to_return": ("you are sending back {}", _THE),
    "item_to_change": ("the item is {}", "the items are {}", _THE),
    "wanted_options": ("you want {}", "you want {} respectively", _VERSION),
    "options": ("you want {}", "you want {} respectively", _VERSION),
    "product": ("you are asking about {}", _THE),
})

# --------------------------------------------------------------------------- persona

def persona(ctx: GroundingContext) -> Persona | None:
    uid = ctx.rng.choice(per_database(ctx, _users))
    user = ctx.state["users"].peek(uid)
    name = user["name"]
    facts = {"first_name": name["first_name"], "last_name": name["last_name"]}
    if ctx.chance("find_by_email"):
        reads = {"find_user_id_by_email": [{"email": user["email"]}]}
    else:
        reads = {"find_user_id_by_name_zip": [{**facts, "zip": user["address"]["zip"]}]}
    facts.update(next(iter(reads.values()))[0])  # what the user says is what the lookup takes
    # no user id among the facts: the agent must find it (the policy's authentication)
    reads["get_user_details"] = [{"user_id": uid}]
    return Persona(name=f"{name['first_name']} {name['last_name']}", facts=facts, reads=reads, entity=uid)

# --------------------------------------------------------------------------- pending orders

def ground_cancel_pending_order(ctx: GroundingContext) -> IntentDraft | None:
    reason = ctx.rng.choice(["no longer needed", "ordered by mistake"])
    if ctx.want_challenge:
        need(not ctx.chance("not_pending_held_back"))
        order = _pick(ctx, "processed", "delivered")
        return draft("cancel_not_pending", "cancel_pending_order", {"order_id": order["order_id"], "reason": reason},
                     [f"cancel order {order['order_id']}"], _order(order), refusal=Refusal("not_pending", "processed"),
                     mood=Mood("{{I}} really do not want this order any more", "negative", 2))
    order = _pick(ctx, "pending")
    oid = order["order_id"]
    paid = sum(p["amount"] for p in order["payment_history"] if p["transaction_type"] == "payment")
    said = "{{I}} no longer need it" if reason == "no longer needed" else "{{I}} ordered it by mistake"
    return draft("cancel", "cancel_pending_order", {"order_id": oid, "reason": reason},
                 [f"cancel order {oid}", f"cancel {{{{my}}}} order {oid} and get {{{{my}}}} money back"],
                 _order(order),
                 facts={"cancellation_reason": reason}, context=said,
                 outputs=[Output(money(paid), "the refund total", from_goal=True)],
                 # the feeling stands alone: no "it" without the request before it
                 mood=Mood("{{I}} no longer need what {{I}} ordered" if reason == "no longer needed"
                           else "{{I}} ordered something by mistake", "neutral", 1))

def ground_modify_pending_order_address(ctx: GroundingContext) -> IntentDraft | None:
    order = _pick(ctx, "pending")
    oid = order["order_id"]
    new = need(_new_address(ctx, order["address"]))
    return draft("modify_address", "modify_pending_order_address", {"order_id": oid, **_addr_args(new)},
                 [f"ship order {oid} to {_address(new)} instead",
                  f"change the shipping address of order {oid} to {_address(new)}"], _order(order),
                 facts={"new_address": dict(new)},
                 mood=Mood("{{I}} will not be at the old address when the parcel arrives", "neutral", 1,
                           # the same redirection lived as a harm still ahead (what fear at stakes 2 rests on)
                           others=(Mood("the parcel will sit outside {{my}} old flat with nobody there to take it in",
                                        "negative", 2),)))

def ground_modify_pending_order_payment(ctx: GroundingContext) -> IntentDraft | None:
    order = need(pick_fresh(ctx, [o for o in _orders(ctx, "pending") if sum(
        p["transaction_type"] == "payment" for p in o["payment_history"]) == 1], "order_id", "order"))
    oid = order["order_id"]
    total, current = order["payment_history"][0]["amount"], order["payment_history"][0]["payment_id"]
    methods = _user(ctx)["payment_methods"]
    if ctx.want_challenge:
        short = need([pid for pid, m in methods.items() if m["source"] == "gift_card" and m["balance"] < total and pid != current])
        need(sum(m["source"] == "gift_card" for m in methods.values()) == 1)
        return draft("gift_card_short", "modify_pending_order_payment",
                     {"order_id": oid, "payment_method_id": short[0]},
                     [f"pay for order {oid} with {{{{my}}}} gift card instead"], _order(order),
                     evidence=["get_user_details"], refusal=Refusal("gift_card_balance", "balance"),
                     mood=Mood("{{I}} want to use up {{my}} gift card", "neutral", 1))
    pay = _payment(ctx, total, exclude=current)
    return draft("modify_payment", "modify_pending_order_payment", {"order_id": oid, "payment_method_id": pay.value},
                 [f"pay for order {oid} with {{{{my}}}} {pay.words} instead"],
                 _order(order), facts={"new_payment_method": pay.words},
                 choices=[pay.choice], outputs=[Output(money(total), "the order total")],
                 decline="keep the order on the payment method it has now", mood=Mood("{{I}} would rather pay another way", "neutral", 1))

def _swap_intent(ctx: GroundingContext, kind: str, goal: str, statuses: tuple[str, ...], verb: str) -> IntentDraft | None:
    order = _pick(ctx, *statuses)
    once = need(_once(order))
    # often two items at once: the policy wants every item collected before the one call
    items = ctx.rng.sample(once, 2 if len(once) >= 2 and ctx.chance("two_items") else 1)
    swaps = [_variant_swap(ctx, item) for item in items]
    need(None not in swaps)
    news = [sw[0] for sw in swaps]
    diff = round(sum(n["price"] for n in news) - sum(i["price"] for i in items), 2)
    pay = _payment(ctx, max(diff, 0))
    oid = order["order_id"]
    wanted = [_options(n["options"]) for n in news]
    pairs = " and ".join(f"the {i['name']} ({_options(i['options'])}) for the {w} {'pair' if _plural(i['name']) else 'one'}" for i, w in zip(items, wanted, strict=True))
    short = " and ".join(f"{{{{my}}}} {i['name']} for the {w} version" for i, w in zip(items, wanted, strict=True))
    expression = difference([n["price"] for n in news], [i["price"] for i in items])[0]
    # two items: the names and the options in the same order ("you want ... respectively")
    facts = {"payment_method": pay.words, "item_to_change": [i["name"] for i in items], "wanted_options": wanted}
    what = " and ".join(i["name"] for i in items)
    many = len(items) > 1 or _plural(what)
    return draft(kind, goal,
                 {"order_id": oid, "item_ids": [i["item_id"] for i in items], "new_item_ids": [n["item_id"] for n in news],
                  "payment_method_id": pay.value},
                 [f"{verb} {pairs} in order {oid}", f"{verb} {short} from order {oid}"], _order(order),
                 facts=facts, outputs=[Output(money(abs(diff)), "the price difference")] if diff else [],
                 reads={"get_product_details": [{"product_id": i["product_id"]} for i in items],
                        "calculate": [{"expression": expression}]},
                 evidence=["get_product_details"], choices=[*(sw[1] for sw in swaps), pay.choice],
                 preferences=[f"settle any difference with {{{{my}}}} {pay.words}"],
                 decline=f"keep {{{{my}}}} {what} as {'they are' if many else 'it is'}" if diff > 0 else None,
                 mood=Mood(f"the {what} {'are' if many else 'is'} not quite what {{{{I}}}} wanted", "negative", 1,
                           # the same swap lived as a choice made, not a letdown (pride or excitement rest on it)
                           others=(Mood(f"{{{{I}}}} found {'versions' if many else 'a version'} of the {what} "
                                        f"{{{{I}}}} like better", "positive", 1),)))

def ground_modify_pending_order_items(ctx: GroundingContext) -> IntentDraft | None:
    if ctx.want_challenge:
        need(not ctx.chance("not_pending_held_back"))
        order = _pick(ctx, "processed")
        item = ctx.choose(_once(order))
        return draft("modify_items_not_pending", "modify_pending_order_items",
                     {"order_id": order["order_id"], "item_ids": [item["item_id"]], "new_item_ids": [item["item_id"]],
                      "payment_method_id": order["payment_history"][0]["payment_id"]},
                     [f"change the {item['name']} in order {order['order_id']} to another size or color"],
                     _order(order),
                     refusal=Refusal("not_pending", "processed"),
                     mood=Mood("{{I}} picked the wrong option", "negative", 2))
    return _swap_intent(ctx, "modify_items", "modify_pending_order_items", ("pending",), "swap")

# --------------------------------------------------------------------------- delivered orders

def _wrong_refund(ctx: GroundingContext) -> IntentDraft | None:
    """A return refunded to a card or PayPal account that did not pay for the order."""
    order = _pick(ctx, "delivered")
    item = ctx.choose(_once(order))
    paid = order["payment_history"][0]["payment_id"]
    options = instrument_options(_user(ctx)["payment_methods"], {"paypal": "PayPal account"})
    wrong = need([o for o in options if o.value != paid and o.attrs["kind"] != "gift card"])[0]  # the first of them
    named = need(name_instrument("payment method", wrong, options))
    return draft("return_wrong_refund", "return_delivered_order_items",
                 {"order_id": order["order_id"], "item_ids": [item["item_id"]], "payment_method_id": wrong.value},
                 [f"return the {item['name']} from order {order['order_id']} and get the money on {{{{my}}}} {named[1]}"],
                 _order(order),
                 choices=[named[0]], facts={"refund_to": named[1]}, refusal=Refusal("refund_destination", "original payment"),
                 mood=Mood("{{I}} want the money where {{I}} can use it", "neutral", 1))

def ground_return_delivered_order_items(ctx: GroundingContext) -> IntentDraft | None:
    if ctx.want_challenge:
        # no second return on an order that has one: its status has left 'delivered' too, so the refusal has two
        # policy grounds (one_return_or_exchange, order_status_allows) while the gold names one (issue 34)
        kind = ctx.rng.choice(["early", "wrong"])
        if kind != "early":
            return _wrong_refund(ctx)
        order = _pick(ctx, "pending", "processed")
        item = ctx.choose(_once(order))
        return draft("return_not_delivered", "return_delivered_order_items",
                     {"order_id": order["order_id"], "item_ids": [item["item_id"]],
                      "payment_method_id": order["payment_history"][0]["payment_id"]},
                     [f"return the {item['name']} from order {order['order_id']}"], _order(order),
                     refusal=Refusal("not_delivered", "delivered"),
                     mood=Mood("{{I}} do not want this after all", "negative", 1))
    order = _pick(ctx, "delivered")
    once = need(_once(order))
    # often two items: the policy wants every item collected first, and the refund confirmed before the write
    items = ctx.rng.sample(once, 2 if len(once) >= 2 and ctx.chance("two_items") else 1)
    # a refund goes to the method that paid or to a gift card
    gift_cards = {p for p, m in _user(ctx)["payment_methods"].items() if m["source"] == "gift_card"}
    pay = _payment(ctx, 0, allowed={order["payment_history"][0]["payment_id"], *gift_cards})
    oid = order["order_id"]
    what = " and ".join(i["name"] for i in items)
    refund = round(sum(i["price"] for i in items), 2)
    # two items: the total is confirmed with the customer before the return is made (policy: amounts before writes)
    reads = {"calculate": [{"expression": " + ".join(str(i["price"]) for i in items)}]} if len(items) > 1 else {}
    outputs = [Output(money(refund), "the refund amount" if len(items) == 1 else "the total refund", from_goal=len(items) == 1)]
    return draft("return", "return_delivered_order_items",
                 {"order_id": oid, "item_ids": [i["item_id"] for i in items], "payment_method_id": pay.value},
                 [f"return the {what} from order {oid}", f"send back {{{{my}}}} {what} from order {oid}"],
                 _order(order),
                 facts={"refund_to": pay.words, "item_to_return": [i["name"] for i in items]}, choices=[pay.choice], reads=reads,
                 preferences=[f"get the refund on {{{{my}}}} {pay.words}"], outputs=outputs,
                 mood=Mood(f"the {what} did not work out", "negative", 1))

def ground_exchange_delivered_order_items(ctx: GroundingContext) -> IntentDraft | None:
    # no second exchange on an order that has a request: two policy grounds (see ground_return_delivered_order_items)
    if ctx.want_challenge:
        # most exchanges are possible; asking for another product is one challenge among several
        return _other_product(ctx) if ctx.chance("other_product") else None
    return _swap_intent(ctx, "exchange", "exchange_delivered_order_items", ("delivered",), "exchange")

def _other_product(ctx: GroundingContext) -> IntentDraft | None:
    """An exchange for an item of another product type, which the policy does not allow."""
    order = _pick(ctx, "delivered")
    item = ctx.choose(_once(order))
    product = ctx.choose([p for _pid, p in ctx.state["products"].scan() if p["product_id"] != item["product_id"]])
    new = need(next((v for v in product["variants"].values() if v["available"]), None))
    return draft("exchange_other_product", "exchange_delivered_order_items",
                 {"order_id": order["order_id"], "item_ids": [item["item_id"]], "new_item_ids": [new["item_id"]],
                  "payment_method_id": order["payment_history"][0]["payment_id"]},
                 [f"exchange the {item['name']} from order {order['order_id']} for {_a(product['name'])}"],
                 _order(order),
                 refusal=Refusal("same_product_only", "same product"),
                 mood=Mood(f"{{{{I}}}} would rather have {_a(product['name'])} than the {item['name']}", "neutral", 1))

# --------------------------------------------------------------------------- profile and products

def ground_modify_user_address(ctx: GroundingContext) -> IntentDraft | None:
    user = _user(ctx)
    need(all(d.goal != "modify_user_address" for d in ctx.history))
    new = need(_new_address(ctx, user["address"]))
    return draft("user_address", "modify_user_address", {"user_id": user["user_id"], **_addr_args(new)},
                 [f"change {{{{my}}}} default address to {_address(new)}", f"update the address on {{{{my}}}} account to {_address(new)}"],
                 facts={"new_address": dict(new)}, mood=Mood("{{I}} {{am}} moving to a new home", "positive", 1))

def ground_get_product_details(ctx: GroundingContext) -> IntentDraft | None:
    pid, product = ctx.rng.choice(list(ctx.state["products"].scan()))
    v = ctx.choose([v for v in product["variants"].values() if v["available"]])
    wanted = _options(v["options"])
    return draft("product_price", "get_product_details", {"product_id": pid},
                 [f"find out the price of the {product['name']} in {wanted}", f"check what the {product['name']} costs in {wanted}"],
                 facts={"product": product["name"], "options": wanted}, reads={"list_all_product_types": [{}]},
                 choices=[Choice.among("item", v, product["variants"].values(), "item_id", lambda x: dict(x["options"]))],
                 outputs=[Output(money(v["price"]), "the price", from_goal=True)],
                 mood=Mood("{{I}} {{am}} thinking of buying something", "positive", 0))

HINTS = TracerHints(
    persona=persona,
    goals=goals_in(globals()),  # each ground_<tool> function above grounds <tool>
    goal_weights={"get_product_details": 0.15, "modify_user_address": 0.3, "modify_pending_order_address": 0.4,
                  "exchange_delivered_order_items": 2.5, "modify_pending_order_items": 2.5,
                  "cancel_pending_order": 0.7},
    entry_tools=["find_user_id_by_email", "find_user_id_by_name_zip"],
    occasions=OCCASIONS,
    occasion_intents=["modify_items", "exchange", "modify_address", "modify_payment", "product_price", "user_address"],
    fact_phrase=fact_phrase,
    # a customer knows their order numbers; user, product and payment records (paypal_1488918) are internal
    visible_ids=frozenset({"order_id"}),
    # an occasion must fit the products the task is about (no hiking trip for an office chair)
    situation=situation,
    rates=RetailRates(),
    # few retail requests carry an amount (an item swap's price difference, a payment moved): at the default 0.7 the
    # appraisal's stricter causes left 5 of 58 test tasks with a decision rule (the audit wants 20%)
    decision_rate=1.0,
)
