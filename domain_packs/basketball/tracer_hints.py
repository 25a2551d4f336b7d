"""Tracer hints for the basketball pack: who the fan is and how each goal tool is grounded.

This module is the club knowledge the Tracer needs to turn a goal tool into a concrete request on the
database (see `tau_emotion.tracer.hints`). The fan gives their email, names a ticket order by its order
number (HT-...) or by its game (opponent and date), a shop order by its order number (SO-...) or its
items, a game by opponent and date, a section by its name, a youth player by name, a program by its name
and a card by its brand or last digits; the agent finds the ids.

Goals: buy, upgrade, transfer and resell tickets, relocate a membership seat, register a player, cancel a
registration, return a shop order. Challenges: one per policy rule (`rules.py`), fourteen reasons.
Decision rules weigh what tickets, an upgrade, a relocation or a registration cost.
"""

from __future__ import annotations

import dataclasses

from tau_emotion.domain_packs.basketball.rules import MAX_TICKETS
from tau_emotion.domain_packs.basketball.tools import (
    FULL_REFUND_DAYS,
    HALF_REFUND_DAYS,
    UPGRADE_FEE,
    active_membership,
    age_on,
    days_until,
    ticket_price,
)
from tau_emotion.domain_packs.basketball.tracer_situation import refund_words, situation, world
from tau_emotion.tracer.hints import (
    Choice,
    GroundingContext,
    IntentDraft,
    Mood,
    Option,
    Output,
    Persona,
    Rate,
    Rates,
    Reference,
    Refusal,
    TracerHints,
    draft,
    fact_wording,
    goals_in,
    money,
    month_day,
    need,
    per_database,
    pick_instrument,
    refused_calls,
    settle,
    used_by_earlier_intents,
)


class BasketballRates(Rates):
    #: a ticket order is named by its order number (else by its opponent and date)
    order_number: Rate = 0.4
    #: challenges many fans can make, kept from crowding out the others: over the ticket limit, a downgrade, a resale
    #: above face value
    over_limit_challenge: Rate = 0.3
    downgrade_challenge: Rate = 0.5
    above_face_challenge: Rate = 0.4
    #: a resale is at face value (else a little below)
    resale_at_face: Rate = 0.5
    #: a refused fan insists on a person (as the task's last request): a transfer or a refund; a registration
    refusal_insists: Rate = 0.3
    registration_insists: Rate = 0.2

OCCASIONS = [
    ("{{my}} child's birthday is coming up and the Herons are their favourite team", 2, "positive"),
    ("{{I}} {{am}} taking {{my}} father to his first game in years", 2, "positive"),
    ("{{I}} just got a new job and want to treat {{my}} friends", 1, "positive"),
    ("{{I}} have been a Herons fan since {{I}} was a kid", 1, "positive"),
    ("{{my}} best friend is moving away next month", 1, "negative"),
    # what the tickets are for, grave enough for sorrow and desperation (`tracer_situation.PARTY`: two seats or more)
    ("{{my}} father is in hospital and this may be the last game {{I}} see with him", 3, "negative"),
    ("money is tight for {{me}} this month", 2, "negative"),
    ("{{I}} like to have {{my}} plans settled early", 1, "neutral"),
    ("{{I}} {{am}} sorting out {{my}} family's schedule for the season", 1, "neutral"),
    ("it is just a routine request", 0, "neutral"),
]

_REFUSALS = {  # rule -> how the refusal is told: a phrase of data/policy.md on one line
    "ticket_limit": Refusal("ticket_limit", "8 tickets for one game", "buy_over_limit"),
    "game_day_cutoff": Refusal("game_day_cutoff", "game day"),
    "transfer_limit": Refusal("transfer_limit", "transferred only once", "transfer_twice"),
    "resale_price_cap": Refusal("resale_price_cap", "face value", "resale_above_face"),
    "upgrade_only_higher": Refusal("no_downgrade", "never to a cheaper one", "upgrade_down"),
    "relocation_once_per_season": Refusal("relocation_limit", "at most once per season", "relocate_twice"),
    "relocation_needs_good_standing": Refusal("payment_overdue", "overdue", "relocate_overdue"),
    "relocation_within_level": Refusal("tier_level", "within the sections the tier", "relocate_tier"),
    "guardian_only": Refusal("guardian_only", "guardian registers them", "register_not_guardian"),
    "waiver_required": Refusal("waiver_required", "waiver", "register_no_waiver"),
    "age_group": Refusal("age_group", "age group", "register_age"),
    "registration_cancellation_window": Refusal("camp_refund_window", "Less than 3 days before", "cancel_reg_late"),
    "return_window": Refusal("return_window", "30 days of delivery", "return_late"),
    "final_sale": Refusal("final_sale", "Final-sale items", "return_final_sale"),
}

# --------------------------------------------------------------------------- lookups
def _fan(ctx: GroundingContext) -> dict:
    return ctx.state["fans"].peek(ctx.persona.entity)

def _game(ctx: GroundingContext, code: str) -> dict:
    return ctx.state["games"].peek(code)

def _section(ctx: GroundingContext, code: str) -> dict:
    return ctx.state["sections"].peek(code)

def _day(date: str) -> str:
    return month_day(date)

def _orders(ctx: GroundingContext, statuses: tuple[str, ...] = ("active",)) -> list[dict]:
    used = used_by_earlier_intents(ctx, "order_id", reads=True)
    return [o for o in ctx.rows("ticket_orders", _fan(ctx)["ticket_order_ids"])
            if o["status"] in statuses and o["order_id"] not in used]

def _seats_left(ctx: GroundingContext, game_code: str, section_code: str) -> int:
    stock = ctx.state["inventory"].peek(f"{game_code}:{section_code}")
    return stock["capacity"] - stock["sold"] if stock else 0

def _games(ctx: GroundingContext) -> list[dict]:
    return [g for _, g in ctx.state["games"].scan()]

def _sections(ctx: GroundingContext) -> list[dict]:
    return [s for _, s in ctx.state["sections"].scan()]

def _n(k: int) -> str:
    return "one ticket" if k == 1 else f"{k} tickets"

# --------------------------------------------------------------------------- references
def _game_choice(ctx: GroundingContext, game: dict) -> Choice:
    return Choice.among("game", game, _games(ctx), "game_code", lambda g: {"opponent": g["opponent"], "date": g["date"]})

def _section_choice(ctx: GroundingContext, section: dict) -> Choice:
    return Choice.among("section", section, _sections(ctx), "section_code", "name")

def _order_ref(ctx: GroundingContext, order: dict) -> Reference:
    """How the fan points at a ticket order: by its order number, or by its game (opponent, then date)."""
    def says(o: dict) -> dict:
        game = _game(ctx, o["game_code"])
        return {"order_number": o["order_number"], "opponent": game["opponent"], "date": game["date"]}
    options = [Option(o["order_id"], says(o)) for o in ctx.rows("ticket_orders", _fan(ctx)["ticket_order_ids"])]
    orders = [("order_number",)] if ctx.chance("order_number") else [("opponent", "date"), ("order_number",)]
    choice = need(settle("ticket order", order["order_id"], options, says(order), orders))
    said = choice.selectors
    if "order_number" in said:
        phrase, facts = f"{{{{my}}}} ticket order {said['order_number']}", {"order_number": said["order_number"]}
    else:
        phrase = f"{{{{my}}}} tickets for the {said['opponent']} game on {_day(said['date'])}"
        facts = {"game": said["opponent"], "game_date": said["date"]}
    return Reference(phrase, facts=facts, choices=[choice], reads={}, evidence=[])

def _the_game(ref: Reference, game: dict) -> str:
    """'the Denver Summit game' when the request points at the order by its game, else 'the game on my ticket order
    HT-…': a feeling that names a game the instruction never does gives the user a fact it does not hold
    (basketball-test-051 named the Denver Summit game of 'ticket order HT-2545236', and the scripted user said it
    did not know the game); a bare 'the game' beside another request's game read as one game
    (basketball-test-039: "better seats for the game" and "cannot go to the game" were two orders)."""
    return f"the {game['opponent']} game" if "game" in ref.facts else f"the game on {ref.phrase}"

def _card(ctx: GroundingContext) -> tuple[str, Choice, dict, str]:
    """A card of the fan, worded so it is the only fit: (id, choice, facts, words)."""
    cards = _fan(ctx)["payment_methods"]
    options = [Option(k, {"kind": "card", "brand": c["brand"], "last_four": c["last_four"]}) for k, c in cards.items()]
    pay = need(pick_instrument(ctx, "card", options))
    words = pay.words.replace("Amex card", "American Express card").replace("Mastercard card", "Mastercard")
    facts = {"card": words, **({"card_last_four_digits": pay.option.attrs["last_four"]}
                               if "last_four" in pay.choice.selectors else {})}
    return pay.value, pay.choice, facts, words

def _refused(ctx: GroundingContext, goal: str, calls: list) -> tuple:
    """A refused call, its reason drawn first (so a reason many calls break does not crowd out the others)."""
    found = refused_calls(ctx, goal, calls, _REFUSALS)
    reason = ctx.choose(sorted({r.reason for _, _, r in found}))
    return ctx.choose([f for f in found if f[2].reason == reason])

# --------------------------------------------------------------------------- wording of facts
fact_phrase = fact_wording({
    "order_number": ("the order number is {}", "the order numbers are {}"),
    "game": ("the game is against the {}", "the games are against the {}"),
    "game_date": ("the game is on {}", "the games are on {}", month_day),
    "section": ("the section you want is {}", "the sections you want are {}"),
    "quantity": "",  # the request says it
    "recipient": ("the tickets go to {}", "the tickets go to {}"),
    "recipient_email": ("their email is {}", "their emails are {}"),
    "price_each": "",  # the request says it
    "member_number": ("your member number is {}", "your member numbers are {}"),
    "program": ("the program is the {}", "the programs are the {}"),
    "shop_order": ("the shop order number is {}", "the shop order numbers are {}"),
    "card": lambda said: f"you pay with your {' and your '.join(said)}" + (" respectively" if len(said) > 1 else ""),
}, unsaid=["card_last_four_digits", "player", "players"])  # the request names the player (`_called`)

def persona(ctx: GroundingContext) -> Persona | None:
    pools = per_database(ctx, lambda db: [sorted(f for f, r in db.tables["fans"].items() if test(r)) for test in (
        lambda r: r["membership_id"], lambda r: r["player_ids"], lambda r: r["merch_order_ids"],
        lambda r: r["ticket_order_ids"])])  # members, families and shop customers first: ticket holders are most fans
    fid = ctx.rng.choice(ctx.rng.choices(pools, weights=[3, 3, 2, 2])[0])
    fan = ctx.state["fans"].peek(fid)
    return Persona(name=f"{fan['name']['first_name']} {fan['name']['last_name']}",
                   facts={**fan["name"], "email": fan["email"]},
                   reads={"find_fan_by_email": [{"email": fan["email"]}], "get_fan_details": [{"fan_id": fid}]},
                   entity=fid)

# --------------------------------------------------------------------------- tickets
def ground_buy_tickets(ctx: GroundingContext) -> IntentDraft | None:
    fan = _fan(ctx)
    held: dict[str, int] = {}
    for o in ctx.rows("ticket_orders", fan["ticket_order_ids"]):
        if o["status"] in ("active", "listed"):
            held[o["game_code"]] = held.get(o["game_code"], 0) + len(o["seats"])
    over = ctx.want_challenge
    need(not over or ctx.chance("over_limit_challenge"))
    games = [g for g in _games(ctx) if days_until(g["date"]) >= 1 and (held.get(g["game_code"], 0) > 1 if over
                                                                       else held.get(g["game_code"], 0) == 0)]
    game = ctx.choose(games)
    have = held.get(game["game_code"], 0)
    qty = MAX_TICKETS - have + ctx.rng.randint(1, 2) if over else ctx.choose([1, 2, 2, 3, 4])
    section = ctx.choose([s for s in _sections(ctx) if _seats_left(ctx, game["game_code"], s["section_code"]) >= qty])
    card, card_choice, card_facts, words = _card(ctx)
    args = {"fan_id": fan["fan_id"], "game_code": game["game_code"], "section_code": section["section_code"],
            "quantity": qty, "payment_id": card}
    when = f"the {game['opponent']} game on {_day(game['date'])}"
    request = [f"buy {_n(qty)} in {section['name']} for {when}", f"get {_n(qty)} in {section['name']} for {when}"]
    facts = {"game": game["opponent"], "game_date": game["date"], "section": section["name"], "quantity": qty,
             **card_facts}
    choices = [_game_choice(ctx, game), _section_choice(ctx, section), card_choice]
    reads = {"get_game_schedule": [{}], "get_seat_availability": [{"game_code": game["game_code"]}]}
    mood = Mood("{{I}} want to see the Herons play the " + game["opponent"], "positive", 1, days_until(game["date"]))
    if over:
        (_, args, refusal), = need(refused_calls(ctx, "buy_tickets", [(game, args)], _REFUSALS))
        return draft(refusal.kind, "buy_tickets", args, request, facts=facts, refusal=refusal, choices=choices,
                     reads=reads, evidence=["get_game_schedule"], mood=mood)
    need(not ctx.violations("buy_tickets", args))
    price = ticket_price(ctx.state, game["game_code"], section["section_code"])
    return draft("buy", "buy_tickets", args, request, facts=facts, choices=choices,
                 reads={**reads, "calculate": [{"expression": f"{price} * {qty}"}]},
                 evidence=["get_seat_availability"], preferences=[f"pay with {{{{my}}}} {words}"],
                 outputs=[Output(money(price * qty), "what the tickets cost {{me}} in all", noun="the ticket total")],
                 decline="not buy the tickets after all", mood=mood)

def _ticket_orders(ctx: GroundingContext, goal: str, statuses: tuple[str, ...] = ("active",)) -> list[dict]:
    """Orders to act on: on a challenge tonight's (game day) when the fan holds some, else ones for later games.

    Few fans hold tickets for tonight's game, so a challenge takes them whenever the fan has them (the game-day
    cutoff was never drawn when each order was a coin toss)."""
    days = {o["order_id"]: days_until(_game(ctx, o["game_code"])["date"]) for o in _orders(ctx, statuses)}
    tonight = [o for o in _orders(ctx, statuses) if days[o["order_id"]] == 0]
    if ctx.want_challenge and tonight and ctx.index > 0:  # a first intent leaves too short a task to stand alone
        return tonight
    return [o for o in _orders(ctx, statuses) if days[o["order_id"]] >= 1]

def _today(refusal: Refusal) -> dict:
    """A game-day refusal rests on the game's date, which only the schedule gives."""
    return {"get_game_schedule": {}} if refusal.reason == "game_day_cutoff" else {}

def ground_upgrade_tickets(ctx: GroundingContext) -> IntentDraft | None:
    order = ctx.choose(_ticket_orders(ctx, "upgrade_tickets"))
    game, n = _game(ctx, order["game_code"]), len(order["seats"])
    calls = [(s, {"order_id": order["order_id"], "section_code": s["section_code"]}) for s in _sections(ctx)
             if s["section_code"] != order["section_code"] and _seats_left(ctx, game["game_code"], s["section_code"]) >= n]
    ref = _order_ref(ctx, order)
    mood = Mood("{{I}} want better seats for " + _the_game(ref, game), "positive", 1, days_until(game["date"]))
    if ctx.want_challenge:
        section, args, refusal = _refused(ctx, "upgrade_tickets", calls)
        need(refusal.reason != "no_downgrade" or ctx.chance("downgrade_challenge"))
    else:
        section, args = ctx.choose([c for c in calls if not ctx.violations("upgrade_tickets", c[1])])
        refusal = None
    # a move to a cheaper section is no upgrade (basketball-test-029 asked to "upgrade" to spend less)
    down = refusal is not None and refusal.reason == "no_downgrade"
    request = [f"move {ref.phrase} to {section['name']}"] + ([] if down else [f"upgrade {ref.phrase} to {section['name']}"])
    facts = {"section": section["name"]}
    choices = [_section_choice(ctx, section)]
    reads = {"get_seat_availability": [{"game_code": game["game_code"]}]}
    if refusal:
        looks = ["get_seat_availability"] if refusal.reason == "no_downgrade" else []
        if refusal.reason == "no_downgrade":  # a move to a cheaper section is no wish for better seats
            mood = Mood("{{I}} want to spend less on " + _the_game(ref, game), "neutral", 1, days_until(game["date"]))
        return draft(refusal.kind or "upgrade_game_day", "upgrade_tickets", args, request, ref, refusal=refusal,
                     facts=facts, choices=choices, reads=reads, evidence=looks, mood=mood, verify=_today(refusal))
    new = ticket_price(ctx.state, game["game_code"], section["section_code"])
    fee = 0 if active_membership(ctx.state, _fan(ctx)) else UPGRADE_FEE
    cost = money((new - order["face_value"]) * n + fee * n)
    if fee:  # a non-member pays the upgrade fee: something to resent of its own, an opinion that invents nothing
        mood = dataclasses.replace(mood, others=(*mood.others, Mood(
            "{{I}} think the upgrade fee for fans without a membership is unfair", "negative", 1, mood.days_left)))
    return draft("upgrade", "upgrade_tickets", args, request, ref, facts=facts, choices=choices,
                 reads={**reads, "calculate": [{"expression": f"({new} - {order['face_value']} + {fee}) * {n}"}]},
                 evidence=["get_seat_availability"], policy_values=[UPGRADE_FEE] if fee else [],
                 outputs=[Output(cost, "what the upgrade costs {{me}} in all, fee included",
                                noun="the cost of the upgrade, fee included")],
                 decline="keep {{my}} seats as they are", mood=mood)

def ground_transfer_tickets(ctx: GroundingContext) -> IntentDraft | None:
    order = ctx.choose(_ticket_orders(ctx, "transfer_tickets", ("active", "listed")))
    if ctx.want_challenge and days_until(_game(ctx, order["game_code"])["date"]) >= 1:
        need(order["transfers"] >= 1)  # a second transfer: the order came from someone else
    friends = per_database(ctx, lambda db: sorted(f for f, r in db.tables["fans"].items() if not r["player_ids"]))
    friend = ctx.state["fans"].peek(ctx.rng.choice([f for f in friends if f != order["fan_id"]]))
    name = f"{friend['name']['first_name']} {friend['name']['last_name']}"
    args = {"order_id": order["order_id"], "recipient_email": friend["email"]}
    game = _game(ctx, order["game_code"])
    ref = _order_ref(ctx, order)
    request = [f"transfer {ref.phrase} to {{{{my}}}} friend {name}", f"send {ref.phrase} to {{{{my}}}} friend {name}"]
    facts = {"recipient": name, "recipient_email": friend["email"]}
    mood = Mood("{{I}} cannot go to " + _the_game(ref, game) + " and {{my}} friend can", "neutral", 1,
                days_until(game["date"]), others=(Mood("something came up and {{I}} cannot go to " + _the_game(ref, game),
                                                       "negative", 1, days_until(game["date"])),))
    if any(o["game_code"] == order["game_code"] and o["order_id"] != order["order_id"] for o in _orders(ctx, ("active",))):
        # a fan who keeps other seats for the same game is going (basketball-test-007): the friend goes along
        mood = Mood("{{my}} friend " + name.split()[0] + " is coming to " + _the_game(ref, game) + " with {{me}}",
                    "positive", 1, days_until(game["date"]))
    if ctx.want_challenge:
        _, args, refusal = _refused(ctx, "transfer_tickets", [(order, args)])
        return draft(refusal.kind or "transfer_game_day", "transfer_tickets", args, request, ref, refusal=refusal,
                     facts=facts, mood=mood, verify=_today(refusal),
                     **ctx.handoff("refusal_insists", f"fan wants ticket order {order['order_number']} transferred to "
                                                      f"{friend['email']}"))
    need(not ctx.violations("transfer_tickets", args))
    return draft("transfer", "transfer_tickets", args, request, ref, facts=facts, mood=mood)

def ground_list_tickets_for_resale(ctx: GroundingContext) -> IntentDraft | None:
    order = ctx.choose(_ticket_orders(ctx, "list_tickets_for_resale"))
    game, face, n = _game(ctx, order["game_code"]), order["face_value"], len(order["seats"])
    days = days_until(game["date"])
    above = ctx.want_challenge and days >= 1
    need(not above or ctx.chance("above_face_challenge"))
    price = float(int(face) + ctx.rng.choice([10, 20, 30])) if above else \
        (face if ctx.chance("resale_at_face") else float(max(5, int(face * 0.8) // 5 * 5)))
    args = {"order_id": order["order_id"], "price_each": price}
    ref = _order_ref(ctx, order)
    request = [f"list {ref.phrase} for resale at ${money(price)} each", f"put {ref.phrase} up for resale at "
               f"${money(price)} a ticket"]
    facts = {"price_each": price}
    mood = Mood("{{I}} cannot make " + _the_game(ref, game) + " and want some money back", "negative", 1, days)
    if ctx.want_challenge:
        _, args, refusal = _refused(ctx, "list_tickets_for_resale", [(order, args)])
        return draft(refusal.kind or "resale_game_day", "list_tickets_for_resale", args, request, ref,
                     refusal=refusal, facts=facts, mood=mood, verify=_today(refusal))
    need(not ctx.violations("list_tickets_for_resale", args))
    return draft("resell", "list_tickets_for_resale", args, request, ref, facts=facts, mood=mood,
                 reads={"calculate": [{"expression": f"{price} * {n}"}]},
                 outputs=[Output(money(price * n), "what {{I}} get if all the tickets sell",
                                noun="the payout if all the tickets sell")])

# --------------------------------------------------------------------------- season memberships
def ground_relocate_membership_seat(ctx: GroundingContext) -> IntentDraft | None:
    fan = _fan(ctx)
    member = ctx.state["memberships"].peek(need(fan["membership_id"]))
    need(member["membership_id"] not in used_by_earlier_intents(ctx, "membership_id", reads=True))
    calls = [(s, {"membership_id": member["membership_id"], "section_code": s["section_code"]})
             for s in _sections(ctx) if s["season_price"] != _section(ctx, member["section_code"])["season_price"]]
    if ctx.want_challenge:
        section, args, refusal = _refused(ctx, "relocate_membership_seat", calls)
    else:
        section, args = ctx.choose([c for c in calls if not ctx.violations("relocate_membership_seat", c[1])])
        refusal = None
    request = [f"move {{{{my}}}} season seat to {section['name']}", f"relocate {{{{my}}}} season seat to {section['name']}"]
    facts = {"section": section["name"], "member_number": member["member_number"]}
    choices = [_section_choice(ctx, section)]
    # the sections' names and codes: the seat list of a game the fan holds tickets for (its code is on the account)
    held = sorted({o["game_code"] for o in ctx.rows("ticket_orders", fan["ticket_order_ids"])})
    reads = {"get_membership_details": [{"membership_id": member["membership_id"]}],
             "get_seat_availability": [{"game_code": ctx.choose(held)}]}
    up = section["season_price"] > _section(ctx, member["section_code"])["season_price"]
    mood = Mood("{{I}} want " + ("a better view" if up else "to spend less") + " for the rest of the season",
                "neutral", 1, None, others=(Mood("the seats {{I}} have now are not what {{I}} hoped for", "negative", 1,
                                                 None),
                                            # a whole season behind a railing: an obstacle that matters (anger at
                                            # stakes 2 rests on it); a move to better seats only
                                            *((Mood("a railing is blocking {{my}} view from the seats {{I}} have for "
                                                    "the whole season", "negative", 2, None),) if up else ())))
    if refusal:
        return draft(refusal.kind, "relocate_membership_seat", args, request, refusal=refusal, facts=facts,
                     choices=choices, reads=reads, evidence=["get_membership_details"], mood=mood)
    return draft("relocate", "relocate_membership_seat", args, request, facts=facts, choices=choices, reads=reads,
                 evidence=["get_membership_details"], mood=mood,
                 outputs=[Output(money(abs(_relocation_change(ctx, member, section))),
                                 "how much {{my}} balance goes " + ("up" if up else "down") + " by", from_goal=True)])

def _relocation_change(ctx: GroundingContext, member: dict, section: dict) -> float:
    games = _games(ctx)
    left = sum(days_until(g["date"]) >= 0 for g in games)
    return (section["season_price"] - _section(ctx, member["section_code"])["season_price"]) * left / len(games)

# --------------------------------------------------------------------------- youth programs
def _players(ctx: GroundingContext) -> list[dict]:
    used = used_by_earlier_intents(ctx, "player_id", reads=True)
    return [p for p in ctx.rows("players", _fan(ctx)["player_ids"]) if p["player_id"] not in used]

def _called(ctx: GroundingContext, player: dict) -> str:
    """How the caller names a player: the first name when the player has the caller's surname and no other player of
    theirs shares it ("my kid Yara"), else the full name ("Tara Jensen's place"); the instruction adds no form-like
    "The player is Yara Dias." (the `player` fact is unsaid)."""
    fan = _fan(ctx)
    first, _, last = player["name"].partition(" ")
    others = [p for p in ctx.rows("players", fan["player_ids"]) if p["player_id"] != player["player_id"]]
    if last == fan["name"]["last_name"] and not any(p["name"].split()[0] == first for p in others):
        return first
    return player["name"]

def _program_choice(ctx: GroundingContext, program: dict) -> Choice:
    return Choice.among("program", program, [p for _, p in ctx.state["programs"].scan()], "program_code", "name")

#: how many years outside a program's age group a registration refused for age may be
AGE_SLIP = 2


def _years_off(player: dict, program: dict) -> int:
    """How many years the player's age on the program's first day lies outside its age group (0: inside)."""
    age = age_on(player["dob"], program["start_date"])
    return max(program["min_age"] - age, age - program["max_age"], 0)


def ground_register_player(ctx: GroundingContext) -> IntentDraft | None:
    fan = _fan(ctx)
    player = ctx.choose(_players(ctx))
    programs = [p for _, p in ctx.state["programs"].scan() if days_until(p["start_date"]) >= 1
                and p["enrolled"] < p["capacity"]]
    calls = [(p, {"fan_id": fan["fan_id"], "player_id": player["player_id"], "program_code": p["program_code"],
                  "payment_id": next(iter(fan["payment_methods"]))}) for p in programs]
    if ctx.want_challenge:
        # a parent may misjudge an age group by a year or two, never sign a 17-year-old up for an under-10s league
        # (basketball-test-050)
        near = [(p, a) for p, a in calls if _years_off(player, p) <= AGE_SLIP]
        program, args, refusal = _refused(ctx, "register_player", near)
    else:
        program, args = ctx.choose([c for c in calls if not ctx.violations("register_player", c[1])])
        refusal = None
    args["payment_id"], card_choice, card_facts, words = _card(ctx)
    ctx.challenged("register_player", args)
    kid = ctx.rng.choice(["child", "kid"])  # a contact (a grandparent, a neighbour) names the player in full
    first = player["name"].split()[0]
    who = f"{{{{my}}}} {kid} {_called(ctx, player)}" if player["guardian_fan_id"] == fan["fan_id"] else player["name"]
    request = [f"sign {who} up for the {program['name']}", f"register {who} for the {program['name']}"]
    facts = {"player": player["name"], "program": program["name"], **card_facts}
    choices = [_program_choice(ctx, program), card_choice]
    reads = {"get_player_details": [{"player_id": player["player_id"]}], "list_youth_programs": [{}]}
    mood = Mood(f"{first} loves basketball and wants to play more", "positive", 1, days_until(program["start_date"]))
    if refusal:
        return draft(refusal.kind, "register_player", args, request, refusal=refusal, facts=facts, choices=choices,
                     reads=reads, evidence=["get_player_details"], mood=mood,
                     **ctx.handoff("registration_insists", f"fan wants {player['name']} registered for {program['name']}"))
    return draft("register", "register_player", args, request, facts=facts, choices=choices, reads=reads,
                 evidence=["get_player_details", "list_youth_programs"], preferences=[f"pay with {{{{my}}}} {words}"],
                 outputs=[Output(money(program["fee"]), "what the " + program["name"] + " costs",
                                noun="the fee for the " + program["name"])],
                 decline=f"not sign {first} up after all", mood=mood)

def ground_cancel_registration(ctx: GroundingContext) -> IntentDraft | None:
    late = ctx.want_challenge
    pairs = [(p, r) for p in _players(ctx) for r in ctx.rows("registrations", p["registration_ids"])
             if r["status"] == "registered" and (days_until(ctx.state["programs"].peek(r["program_code"])["start_date"])
                                                 < HALF_REFUND_DAYS) == late]
    player, reg = ctx.choose(pairs)
    program = ctx.state["programs"].peek(reg["program_code"])
    args = {"registration_id": reg["registration_id"]}
    first = player["name"].split()[0]
    called = _called(ctx, player)
    request = [f"cancel {called}'s place in the {program['name']}", f"take {called} out of the {program['name']}"]
    facts = {"player": player["name"], "program": program["name"]}
    reads = {"get_player_details": [{"player_id": player["player_id"]}], "list_youth_programs": [{}]}
    days = days_until(program["start_date"])
    mood = Mood(f"{first} cannot take part after all", "negative", 1, days if days >= 0 else None)
    if late:
        _, args, refusal = _refused(ctx, "cancel_registration", [(reg, args)])
        return draft(refusal.kind, "cancel_registration", args, request, refusal=refusal, facts=facts, reads=reads,
                     evidence=["list_youth_programs"], mood=mood,
                     **ctx.handoff("refusal_insists", f"fan wants {player['name']}'s registration for {program['name']} "
                                                      f"refunded"))
    need(not ctx.violations("cancel_registration", args))
    refund = reg["fee_paid"] * (1 if days >= FULL_REFUND_DAYS else 0.5)
    return draft("cancel_reg", "cancel_registration", args, request, facts=facts, reads=reads,
                 evidence=["list_youth_programs"], mood=mood,
                 outputs=[Output(money(refund), "how much comes back to " +
                                 refund_words(ctx.state, _fan(ctx)["fan_id"], reg["payment_id"]), from_goal=True)])

# --------------------------------------------------------------------------- shop
def ground_return_merch_order(ctx: GroundingContext) -> IntentDraft | None:
    used = used_by_earlier_intents(ctx, "order_id", reads=True)
    orders = [o for o in ctx.rows("merch_orders", _fan(ctx)["merch_order_ids"])
              if o["status"] == "delivered" and o["order_id"] not in used]
    calls = [(o, {"order_id": o["order_id"]}) for o in orders]
    if ctx.want_challenge:
        order, args, refusal = _refused(ctx, "return_merch_order", calls)
    else:
        order, args = ctx.choose([c for c in calls if not ctx.violations("return_merch_order", c[1])])
        refusal = None
    items = [i["name"] if i["name"].startswith("Herons") else i["name"][0].lower() + i["name"][1:] for i in order["items"]]
    what = " and ".join(items)
    request = [f"return {{{{my}}}} shop order {order['order_number']} (the {what})",
               f"send back {{{{my}}}} shop order {order['order_number']}, the {what}"]
    facts = {"shop_order": order["order_number"]}
    mood = Mood("the " + items[0] + " {{I}} ordered is not what {{I}} hoped for", "negative", 1, None)
    if refusal:
        return draft(refusal.kind, "return_merch_order", args, request, refusal=refusal, facts=facts, mood=mood)
    return draft("return", "return_merch_order", args, request, facts=facts, mood=mood,
                 outputs=[Output(money(order["total"]), "how much comes back to {{my}} card", from_goal=True)])

HINTS = TracerHints(
    persona=persona,
    goals=goals_in(globals()),  # each ground_<tool> function above grounds <tool>
    goal_weights={"buy_tickets": 1.0, "upgrade_tickets": 1.0, "relocate_membership_seat": 2.0, "register_player": 2.0,
                  "cancel_registration": 1.5, "return_merch_order": 1.2, "transfer_tickets": 1.0,
                  "list_tickets_for_resale": 0.8},
    entry_tools=["find_fan_by_email"],
    # a game-day refusal rests on the game's date, which only the schedule gives: it may be read after any step
    # (the mined graph reaches it only from the fan's account, so a game-day request never followed another one)
    policy_edges=[(t, "get_game_schedule") for t in ("buy_tickets", "upgrade_tickets", "relocate_membership_seat",
                                                     "register_player", "cancel_registration", "return_merch_order",
                                                     "get_player_details", "get_membership_details",
                                                     "get_seat_availability", "list_youth_programs", "calculate")],
    occasions=OCCASIONS,
    occasion_intents=["buy", "upgrade", "register", "buy_over_limit", "upgrade_down", "register_age"],
    fact_phrase=fact_phrase,
    visible_ids=frozenset(),
    situation=situation,
    world=world,
    rates=BasketballRates(),
)
