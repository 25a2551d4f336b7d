"""Tracer hints for the travel pack: who the traveller is and how each goal tool is grounded.

This module is the travel knowledge the Tracer needs to turn a goal tool into a concrete request on the
database (see `tau_emotion.tracer.hints`). The traveller gives their email, names a trip by its trip
number or name, a stay by its hotel (and check-in day), a tour or catalogue entry by its name, a rental
by its car class, and a card by its brand or last digits; the agent finds the ids.

Goals: book a hotel stay, a tour or a car rental on a trip (with points where they may pay), move a
stay's dates, cancel a stay, a tour or a rental. Challenges: one per policy rule (`rules.py`), ten
refusal reasons. Decision rules weigh a booking's total, a date change's cost and a rental's fees.
"""

from __future__ import annotations

import dataclasses
import math

from tau_emotion.domain_packs.travel.rules import POINTS_BLOCK, TOUR_CANCELLATION_DAYS
from tau_emotion.domain_packs.travel.tools import (
    CHANGE_FEE,
    ONE_WAY_FEE,
    TODAY,
    YOUNG_DRIVER_AGE,
    YOUNG_DRIVER_FEE,
    age_on,
    days_until,
    nightly_rate,
    rooms_free,
)
from tau_emotion.domain_packs.travel.tracer_situation import situation, world
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
    join_and,
    money,
    month_day,
    need,
    per_database,
    pick_instrument,
    refused_calls,
    settle,
    shift_date,
    used_by_earlier_intents,
)


class TravelRates(Rates):
    #: a trip is named by its trip number (else by its name), unless an earlier request of the task named it
    trip_number: Rate = 0.4
    #: a booking redeems loyalty points where they may pay
    use_points: Rate = 0.4
    #: a stay challenge of the non-refundable rate is kept (many stays are SAVER: it would crowd out the others)
    non_refundable_challenge: Rate = 0.4
    #: a refused traveller insists on a person (as the task's last request)
    refusal_insists: Rate = 0.3

OCCASIONS = [  # circumstances that fit any trip: a trip's own name says honeymoon, work trip or family holiday
    ("{{I}} {{am}} celebrating {{my}} birthday while away", 2, "positive"),
    ("{{I}} just got a promotion and want to make the most of {{my}} time off", 2, "positive"),
    ("{{I}} saved for two years for these trips", 2, "positive"),
    ("{{I}} finally have some time off after a long, hard project", 1, "positive"),
    ("{{my}} mother died in the spring and this trip means a lot to {{me}}", 3, "negative"),
    ("{{I}} {{am}} still grieving {{my}} grandfather, who died last month", 3, "negative"),
    ("{{my}} old dog died the week before {{I}} booked", 2, "negative"),
    ("{{I}} have to fit work calls around everything {{I}} do", 1, "neutral"),
    ("{{I}} like to have {{my}} travel plans settled early", 1, "neutral"),
    ("it is nothing out of the ordinary", 0, "neutral"),
]

_CLASS = {"CAR_ECONOMY": "economy car", "CAR_COMPACT": "compact car", "CAR_SUV": "SUV", "CAR_VAN": "van",
          "CAR_LUXURY": "luxury car"}
#: a trip's parts: table -> (key, the trip's list of them, what the traveller calls one, its name field, its first day)
_PARTS = {"stays": ("stay_id", "stay_ids", "stay", "hotel", "check_in"),
          "tour_bookings": ("tour_booking_id", "tour_booking_ids", "tour", "tour", "date"),
          "car_rentals": ("car_rental_id", "car_rental_ids", "car", "car_code", "pickup_date")}
_POINTS_WORDS = {"points_limit": "at most half", "points_blocks": "whole thousands"}  # the policy's words
_OPEN = ("upcoming", "in_progress")
_CLOSED = ("completed", "cancelled")

# --------------------------------------------------------------------------- lookups
def _traveller(ctx: GroundingContext) -> dict:
    return ctx.state["travellers"].peek(ctx.persona.entity)

def _trips(ctx: GroundingContext, statuses: tuple[str, ...] = _OPEN) -> list[dict]:
    used = used_by_earlier_intents(ctx, "itinerary_id")  # a booking writes its trip: one booking a trip per task
    return [t for t in ctx.rows("itineraries", _traveller(ctx)["itinerary_ids"])
            if t["status"] in statuses and t["itinerary_id"] not in used]

def _parts(ctx: GroundingContext, table: str) -> list[tuple[dict, dict]]:
    """(trip, row) for the traveller's confirmed stays, tour bookings or rentals no earlier intent touched."""
    key, ids = _PARTS[table][:2]
    used = used_by_earlier_intents(ctx, key, reads=True)
    return [(t, row) for t in ctx.rows("itineraries", _traveller(ctx)["itinerary_ids"])
            for row in ctx.rows(table, t[ids]) if row["status"] == "confirmed" and row[key] not in used]

def _cities(ctx: GroundingContext, trip: dict) -> list[str]:
    """The trip's cities, as its name says them ("Madrid and Seville honeymoon")."""
    return [c for c, _ in ctx.state["cities"].scan() if c in trip["name"]]

def _days(trip: dict) -> list[str]:
    """The trip's days from tomorrow on (a booking is never for the past)."""
    start = max(trip["start_date"], shift_date(TODAY, 1))
    return [shift_date(start, k) for k in range(max(0, days_until(trip["end_date"]) - days_until(start)) + 1)]

def _people(traveller: dict) -> list[tuple[str, str]]:  # who may drive: (name, date of birth)
    return [(f"{traveller['name']['first_name']} {traveller['name']['last_name']}", traveller["dob"]),
            *((c["name"], c["dob"]) for c in traveller["companions"])]

def _a(words: str) -> str:  # 'an SUV', 'a van'
    return f"an {words}" if words[0] in "aeiouAEIOU" or words == "SUV" else f"a {words}"

# --------------------------------------------------------------------------- references
def _trip_ref(ctx: GroundingContext, trip: dict) -> Reference:
    """How the traveller points at a trip: by its trip number, or by its name."""
    trips = ctx.rows("itineraries", _traveller(ctx)["itinerary_ids"])
    said = {v for d in ctx.history for k, v in d.facts.items() if k in ("trip_number", "trip_name")}
    number = trip["trip_number"] in said or (trip["name"] not in said and ctx.chance("trip_number"))  # as said before
    orders = [("trip_number",)] if number else [("name",), ("trip_number",)]
    choice = need(Choice.fewest("trip", trip, trips, "itinerary_id", ("trip_number", "name"), orders))
    if "name" in choice.selectors:
        phrase, facts = f"{{{{my}}}} {trip['name']}", {"trip_name": trip["name"]}
    else:
        phrase, facts = f"{{{{my}}}} trip {trip['trip_number']}", {"trip_number": trip["trip_number"]}
    return Reference(phrase, facts=facts, choices=[choice],
                     reads={"get_itinerary_details": [{"itinerary_id": trip["itinerary_id"]}]},
                     evidence=["get_itinerary_details"])

def _part_ref(ctx: GroundingContext, trip: dict, row: dict, table: str) -> Reference:
    """A stay, tour booking or rental of a trip, named by its hotel, tour or car class (and its first day)."""
    ref, (key, ids, what, name, day) = _trip_ref(ctx, trip), _PARTS[table]
    label = (lambda r: _CLASS[r["car_code"]]) if table == "car_rentals" else (lambda r: r[name])
    options = [Option(r[key], {what: label(r), "day": r[day]}) for r in ctx.rows(table, trip[ids])]
    choice = need(settle(what, row[key], options, {what: label(row), "day": row[day]}, [(what,), (what, "day")]))
    words = {"stay": f"{{{{my}}}} stay at {label(row)}", "tour": f"{{{{my}}}} {label(row)} booking",
             "car": f"{{{{my}}}} {label(row)} rental"}[what]
    facts = {what: label(row)}
    if table == "stays":  # a guest knows the hotel's city, and the agent searches the city's hotels with it
        words += f" in {row['city']}"
        facts["city"] = row["city"]
    if "day" in choice.selectors:
        words += f" from {month_day(row[day])}"
        facts[f"{what}_from"] = row[day]
    return Reference(f"{words} on {ref.phrase.replace('{{my}} ', 'the ', 1)}", facts={**ref.facts, **facts},
                     choices=[*ref.choices, choice], reads=ref.reads, evidence=ref.evidence)

def _card(ctx: GroundingContext) -> tuple[str, Choice, dict, str]:
    """A card of the traveller, worded so it is the only fit: (id, choice, facts, words)."""
    cards = _traveller(ctx)["payment_methods"]
    options = [Option(k, {"kind": "card", "brand": c["brand"], "last_four": c["last_four"]}) for k, c in cards.items()]
    pay = need(pick_instrument(ctx, "card", options))
    words = pay.words.replace("Amex card", "American Express card").replace("Mastercard card", "Mastercard")
    facts = {"card": words, **({"card_last_four_digits": pay.option.attrs["last_four"]}
                               if "last_four" in pay.choice.selectors else {})}
    return pay.value, pay.choice, facts, words

def _points(ctx: GroundingContext, price: float, kind: str | None) -> int:
    """Points a booking of `price` redeems: 0 or a valid amount, or one `kind` of challenge forbids."""
    balance = _traveller(ctx)["loyalty"]["points"]
    if kind == "points_limit":
        low = math.floor(price * 50 / POINTS_BLOCK + 1) * POINTS_BLOCK
        need(low <= min(balance, price * 100))
        return low
    top = int(min(balance, price * 50) // POINTS_BLOCK)  # the most whole thousands a booking may redeem
    if kind == "points_blocks":
        need(top >= 1 and top * POINTS_BLOCK + 500 <= min(balance, price * 50))
        return top * POINTS_BLOCK + 500
    return ctx.rng.choice(range(1, top + 1)) * POINTS_BLOCK if top and ctx.chance("use_points") else 0

def _refused(ctx: GroundingContext, goal: str, calls: list, refusals: dict[str, Refusal]) -> tuple:
    """A refused call, its reason drawn first (so a reason many calls break does not crowd out the others)."""
    found = refused_calls(ctx, goal, calls, refusals)
    reason = ctx.choose(sorted({r.reason for _, _, r in found}))
    return ctx.choose([f for f in found if f[2].reason == reason])

def _cancel(kind: str, goal: str, table: str, row: dict, ref: Reference, mood: Mood) -> IntentDraft:
    """A cancellation the policy allows: the refund (card part) is the goal call's own figure."""
    key, refund = _PARTS[table][0], round(row["price"] - row["points_used"] / 100, 2)
    return draft(kind, goal, {key: row[key]}, [f"cancel {ref.phrase}", f"call off {ref.phrase}"], ref, mood=mood,
                 outputs=[Output(money(refund), "how much comes back to {{my}} card", from_goal=True)])

# --------------------------------------------------------------------------- wording of facts
fact_phrase = fact_wording({
    "trip_number": ("the trip number is {}", "the trip numbers are {}"),
    "trip_name": ("the trip is your {}", "the trips are your {}"),
    "stay": ("the stay is at {}", "the stays are at {}"),
    "stay_from": ("the stay begins on {}", "the stays begin on {}", month_day),
    "tour": ("the tour is the {}", "the tours are the {}"),
    "tour_from": ("the tour is on {}", "the tours are on {}", month_day),
    "car": ("the rental is for {}", "the rentals are for {}", _a),
    "car_from": ("the rental starts on {}", "the rentals start on {}", month_day),
    "city": ("the city is {}", "the cities are {}"), "hotel": ("the hotel you want is {}", "the hotels are {}"),
    "room_type": ("you want a {} room", "you want {} rooms"),
    "rate_plan": ("you want the {} rate", {"FLEX": "refundable FLEX", "SAVER": "non-refundable SAVER"}),
    "check_in": ("check-in is on {}", month_day), "check_out": ("check-out is on {}", month_day),
    "guests": ("the room is for {}", lambda v: "you alone" if v == 1 else f"{v} guests"),
    "tour_date": ("the tour is on {}", month_day),
    # the request says the party ("places for you", "places for 2 people"): "for you alone" would say it twice
    "participants": lambda said: "" if said == ["1"] else f"the places are for {join_and(said)} people",
    "car_class": ("you want {}", _a),
    "pickup_city": ("you pick the car up in {}", "you pick the cars up in {}"),
    "dropoff_city": ("you return it in {}", "you return them in {}"),
    "pickup_date": ("pick-up is on {}", month_day),
    "dropoff_date": ("you return it on {}", "you return them on {}", month_day),
    "points": ("you want to use {} loyalty points", lambda v: f"{v:,}"),
    "card": lambda said: f"you pay with your {' and your '.join(said)}" + (" respectively" if len(said) > 1 else ""),
}, unsaid=["card_last_four_digits",
           # the request names the driver ("with you driving", "with your partner Samir Abbott at the wheel"):
           # "The driver is Pablo Olsen" would be the caller in the third person (travel-test-022)
           "driver_name",
           # the request says "using 6,500 of your points"; the Tracer's check does not read "6,500" as 6500
           # (travel-test-027: "..., using 6,500 of your points. You want to use 6,500 loyalty points.")
           "points"])

def persona(ctx: GroundingContext) -> Persona | None:
    tid = ctx.rng.choice(per_database(ctx, lambda db: sorted(t for t, r in db.tables["travellers"].items()
                                                            if r["itinerary_ids"])))
    t = ctx.state["travellers"].peek(tid)
    return Persona(name=f"{t['name']['first_name']} {t['name']['last_name']}",
                   facts={**t["name"], "email": t["email"]},
                   reads={"find_traveller_by_email": [{"email": t["email"]}],
                          "get_traveller_details": [{"traveller_id": tid}]}, entity=tid)

# --------------------------------------------------------------------------- hotel stays
_STAY_REFUSALS = {"non_refundable_rate": Refusal("non_refundable", "non-refundable", "stay_non_refundable"),
                  "stay_change_window": Refusal("cancellation_window", "3 days before", "stay_too_late")}

def ground_book_hotel_stay(ctx: GroundingContext) -> IntentDraft | None:
    kind = ctx.rng.choice(["points_limit", "points_blocks", "trip_closed"]) if ctx.want_challenge else None
    closed = kind == "trip_closed"
    trip = ctx.choose([t for t in _trips(ctx, _CLOSED if closed else _OPEN) if _cities(ctx, t)])
    last = [s["city"] for s in ctx.rows("stays", trip["stay_ids"]) if s["check_out"] == trip["end_date"]]
    city = last[0] if last else ctx.rng.choice(_cities(ctx, trip))  # more nights where the trip ends
    check_in = max(trip["end_date"], shift_date(TODAY, ctx.rng.randint(4, 30)) if closed else TODAY)
    need(days_until(check_in) >= 1)
    nights = ctx.rng.choice([1, 2, 2, 3])
    check_out, guests = shift_date(check_in, nights), max(1, min(trip["travellers"], 4))
    hotels = [h for _, h in ctx.state["hotels"].scan() if h["city"] == city]
    hotel, room = ctx.choose([(h, r) for h in hotels for r in h["rooms"] if r["capacity"] >= guests
                              and rooms_free(ctx.state, h["hotel_code"], r["room_type"], check_in, check_out) > 0])
    plan = ctx.rng.choice(["FLEX", "SAVER"])
    total = round(nightly_rate(ctx.state, hotel["hotel_code"], room["room_type"], plan) * nights, 2)
    points = _points(ctx, total, None if closed else kind)
    card, card_choice, card_facts, words = _card(ctx)
    ref = _trip_ref(ctx, trip)
    args = {"itinerary_id": trip["itinerary_id"], "hotel_code": hotel["hotel_code"], "room_type": room["room_type"],
            "rate_plan": plan, "check_in": check_in, "check_out": check_out, "guests": guests, "payment_id": card,
            "points": points}
    facts = {"city": city, "hotel": hotel["name"], "room_type": room["room_type"], "rate_plan": plan,
             "check_in": check_in, "check_out": check_out, "guests": guests, **card_facts,
             **({"points": points} if points else {})}
    stay = f"a {room['room_type']} room at {hotel['name']} in {city}, {month_day(check_in)} to {month_day(check_out)},"
    request = [f"add {stay} to {ref.phrase}", f"book {stay} on {ref.phrase}"]
    if points:
        request = [f"{r}, using {points:,} of {{{{my}}}} points" for r in request]
    choices = [Choice.among("hotel", hotel, hotels, "hotel_code", "name"), card_choice]
    reads = {} if closed else {"search_hotels": [{"city": city, "check_in": check_in, "check_out": check_out}]}
    mood = Mood("{{I}} want a few more nights in " + city, "positive", 1, days_until(check_in))
    if kind:
        ctx.challenged("book_hotel_stay", args)
        return draft(kind if closed else f"stay_{kind}", "book_hotel_stay", args, request, ref, facts=facts, mood=mood,
                     refusal=Refusal(kind, _POINTS_WORDS.get(kind, "completed or cancelled trip")), choices=choices,
                     reads=reads, evidence=list(reads))
    need(not ctx.violations("book_hotel_stay", args))
    charged = round(total - points / 100, 2)
    if points:
        reads["calculate"] = [{"expression": f"{total} - {points} * 0.01"}]
    return draft("book_stay", "book_hotel_stay", args, request, ref, facts=facts, choices=choices, reads=reads,
                 evidence=["search_hotels"], preferences=[f"pay with {{{{my}}}} {words}"],
                 outputs=[Output(money(charged), "what {{I}} pay by card for the stay", noun="the card charge for the stay")],
                 decline="not book the extra nights", mood=mood)

def _stay_challenge(ctx: GroundingContext, goal: str) -> tuple[dict, dict, dict, Refusal]:
    """A stay the policy keeps as it is, and one more night asked for it (a cancellation reads the stay id only)."""
    calls = [((t, s), {"stay_id": s["stay_id"], "check_in": s["check_in"], "check_out": shift_date(s["check_out"], 1)})
             for t, s in _parts(ctx, "stays") if days_until(s["check_out"]) > 0]
    (trip, stay), args, refusal = _refused(ctx, goal, calls, _STAY_REFUSALS)
    need(refusal.reason != "non_refundable" or ctx.chance("non_refundable_challenge"))
    return trip, stay, args, refusal

def ground_change_hotel_stay_dates(ctx: GroundingContext) -> IntentDraft | None:
    mood = Mood("{{my}} plans changed and {{I}} need the hotel for other nights", "neutral", 1, None,
                others=(Mood("{{I}} worry {{I}} will have no room for the nights {{I}} need", "negative", 2, None),))
    if ctx.want_challenge:
        trip, stay, args, refusal = _stay_challenge(ctx, "change_hotel_stay_dates")
        ref = _part_ref(ctx, trip, stay, "stays")
        return draft(refusal.kind, "change_hotel_stay_dates", args,
                     [f"add a night to {ref.phrase}, checking out on {month_day(args['check_out'])}"], ref,
                     refusal=refusal, facts={"check_out": args["check_out"]}, mood=mood)
    moves = [(trip, stay, shift_date(stay["check_in"], a), shift_date(stay["check_out"], b))
             for trip, stay in _parts(ctx, "stays") if stay["rate_plan"] == "FLEX" and days_until(stay["check_in"]) >= 4
             for a, b in ((0, 1), (1, 1), (-1, 0), (2, 2), (7, 7))]
    trip, stay, new_in, new_out = ctx.choose([m for m in moves if rooms_free(
        ctx.state, m[1]["hotel_code"], m[1]["room_type"], m[2], m[3]) > 0])
    args = {"stay_id": stay["stay_id"], "check_in": new_in, "check_out": new_out}
    need(not ctx.violations("change_hotel_stay_dates", args))
    ref = _part_ref(ctx, trip, stay, "stays")
    nights = days_until(new_out) - days_until(new_in)
    new = round(nightly_rate(ctx.state, stay["hotel_code"], stay["room_type"], stay["rate_plan"]) * nights, 2)
    cost = round(new - stay["price"] + CHANGE_FEE, 2)
    when = f"from {month_day(new_in)} to {month_day(new_out)}"
    return draft("move_stay", "change_hotel_stay_dates", args,
                 [f"move {ref.phrase} so it runs {when}", f"change {ref.phrase} to run {when}"], ref,
                 facts={"check_in": new_in, "check_out": new_out},
                 reads={"search_hotels": [{"city": stay["city"], "check_in": new_in, "check_out": new_out}],
                        "calculate": [{"expression": f"{new} - {stay['price']} + {CHANGE_FEE}"}]},
                 outputs=[Output(money(cost), "what the change costs {{me}} in all, fee included",
                                noun="the cost of the change, fee included")],
                 policy_values=[CHANGE_FEE], decline="keep {{my}} stay's dates as they are", mood=mood)

def ground_cancel_hotel_stay(ctx: GroundingContext) -> IntentDraft | None:
    # the same cancellation lived as a hotel that put the traveller off (what dislike and distaste rest on)
    mood = Mood("{{I}} no longer need that hotel", "negative", 1, None,
                others=(Mood("the hotel's recent reviews say it is not what its listing shows", "negative", 1, None),))
    if ctx.want_challenge:
        trip, stay, _, refusal = _stay_challenge(ctx, "cancel_hotel_stay")
        ref = _part_ref(ctx, trip, stay, "stays")
        return draft(refusal.kind, "cancel_hotel_stay", {"stay_id": stay["stay_id"]},
                     [f"cancel {ref.phrase} and get {{{{my}}}} money back"], ref, refusal=refusal, mood=mood,
                     **ctx.handoff("refusal_insists", f"traveller wants stay {stay['stay_id']} cancelled"))
    trip, stay = ctx.choose([(t, s) for t, s in _parts(ctx, "stays")
                             if not ctx.violations("cancel_hotel_stay", {"stay_id": s["stay_id"]})])
    return _cancel("cancel_stay", "cancel_hotel_stay", "stays", stay, _part_ref(ctx, trip, stay, "stays"), mood)

# --------------------------------------------------------------------------- tours
def ground_book_tour(ctx: GroundingContext) -> IntentDraft | None:
    kind = ctx.rng.choice(["points_limit", "points_blocks"]) if ctx.want_challenge else None
    trip = ctx.choose([t for t in _trips(ctx) if _cities(ctx, t)])
    party, days, cities = trip["travellers"], _days(trip), _cities(ctx, trip)
    dep = ctx.choose([d for _, d in ctx.state["departures"].scan() if d["date"] in days and d["places_left"] >= party
                      and ctx.state["tours"].peek(d["tour_code"])["city"] in cities])
    tour = ctx.state["tours"].peek(dep["tour_code"])
    found = ctx.call("search_tours", {"city": tour["city"], "date": dep["date"]})
    pick = next(d for d in found if d["departure_id"] == dep["departure_id"])
    choice = Choice.among("departure", pick, found, "departure_id", "tour")
    price = tour["price_per_person"] * party
    points = _points(ctx, price, kind)
    card, card_choice, card_facts, words = _card(ctx)
    ref = _trip_ref(ctx, trip)
    args = {"itinerary_id": trip["itinerary_id"], "departure_id": dep["departure_id"], "participants": party,
            "payment_id": card, "points": points}
    facts = {"city": tour["city"], "tour": tour["name"], "tour_date": dep["date"], "participants": party,
             **card_facts, **({"points": points} if points else {})}
    seats = "places for " + ("{{me}}" if party == 1 else f"{party} people")
    # the tour's city, unless its name says it: else the instruction adds a form-like "The city is Nice."
    where = "" if tour["city"].lower() in tour["name"].lower() else f" in {tour['city']}"
    request = [f"book {seats} on the {tour['name']}{where} on {month_day(dep['date'])} for {ref.phrase}",
               f"add the {tour['name']}{where} on {month_day(dep['date'])} to {ref.phrase}, {seats}"]
    if points:
        request = [f"{r}, using {points:,} of {{{{my}}}} points" for r in request]
    reads = {"search_tours": [{"city": tour["city"], "date": dep["date"]}]}
    mood = Mood("{{I}} want to see more of " + tour["city"], "positive", 1, days_until(dep["date"]))
    if kind:
        need(len(ctx.violations("book_tour", args)) == 1)
        return draft(f"tour_{kind}", "book_tour", args, request, ref, refusal=Refusal(kind, _POINTS_WORDS[kind]),
                     facts=facts, choices=[choice, card_choice], reads=reads, evidence=["search_tours"], mood=mood)
    need(not ctx.violations("book_tour", args))
    expression = f"{tour['price_per_person']} * {party}" + (f" - {points} * 0.01" if points else "")
    return draft("book_tour", "book_tour", args, request, ref, facts=facts, choices=[choice, card_choice],
                 reads={**reads, "calculate": [{"expression": expression}]}, evidence=["search_tours"],
                 outputs=[Output(money(round(price - points / 100, 2)), "what {{I}} pay by card for the tour", noun="the card charge for the tour")],
                 preferences=[f"pay with {{{{my}}}} {words}"], decline="skip the tour", mood=mood)

def ground_cancel_tour_booking(ctx: GroundingContext) -> IntentDraft | None:
    late = ctx.want_challenge
    trip, booking = ctx.choose([(t, b) for t, b in _parts(ctx, "tour_bookings")
                                if (0 <= days_until(b["date"]) < TOUR_CANCELLATION_DAYS) == late
                                and days_until(b["date"]) >= 0])
    ref = _part_ref(ctx, trip, booking, "tour_bookings")
    args = {"tour_booking_id": booking["tour_booking_id"]}
    ctx.challenged("cancel_tour_booking", args)
    mood = Mood("{{I}} cannot make the " + booking["tour"] + " after all", "negative", 1, days_until(booking["date"]),
                others=(Mood("the " + booking["tour"] + " is not quite what {{I}} had in mind", "negative", 1,
                             days_until(booking["date"])),))
    if late:
        return draft("tour_too_late", "cancel_tour_booking", args, [f"cancel {ref.phrase} and get a refund"], ref,
                     refusal=Refusal("tour_cancellation_window", "48 hours"), mood=mood,
                     **ctx.handoff("refusal_insists", f"traveller wants tour booking {booking['tour_booking_id']} refunded"))
    return _cancel("cancel_tour", "cancel_tour_booking", "tour_bookings", booking, ref, mood)

# --------------------------------------------------------------------------- car rentals
_CAR_REFUSALS = {"driver_age": Refusal("driver_age", "age limits", "car_driver_too_young"),
                 "one_way_rentals": Refusal("one_way_not_allowed", "same country", "car_one_way"),
                 "points_not_for_cars": Refusal("points_not_for_cars", "never for car rentals", "car_points")}

def ground_book_car_rental(ctx: GroundingContext) -> IntentDraft | None:
    trip = ctx.choose([t for t in _trips(ctx) if _cities(ctx, t) and len(_days(t)) >= 2])
    days, traveller = _days(trip), _traveller(ctx)
    start = ctx.rng.randint(0, len(days) - 2)
    pickup_date, dropoff_date = days[start], days[ctx.rng.randint(start + 1, len(days) - 1)]
    n = days_until(dropoff_date) - days_until(pickup_date)
    cars = [c for _, c in ctx.state["car_classes"].scan()]
    home = ctx.rng.choice(_cities(ctx, trip))
    if ctx.want_challenge:
        drops = [home, *(c for c, _ in ctx.state["cities"].scan() if c != home)]
        points = [0, POINTS_BLOCK] if traveller["loyalty"]["points"] >= POINTS_BLOCK else [0]
        calls = [((car, drop, name), {"itinerary_id": trip["itinerary_id"], "car_code": car["car_code"],
                                      "pickup_city": home, "dropoff_city": drop, "pickup_date": pickup_date,
                                      "dropoff_date": dropoff_date, "driver_name": name, "points": p})
                 for car in cars for drop in drops for name, _ in _people(traveller) for p in points]
        (car, drop, name), args, refusal = _refused(ctx, "book_car_rental", calls, _CAR_REFUSALS)
    else:
        country = ctx.state["cities"].peek(home)["country"]
        drop = ctx.rng.choice([c for c in _cities(ctx, trip) if ctx.state["cities"].peek(c)["country"] == country])
        car, name = ctx.choose([(car, name) for car in cars for name, dob in _people(traveller)
                                if age_on(dob, pickup_date) >= car["min_driver_age"]
                                and (drop == home or car["one_way_allowed"])])
        args, refusal = {"itinerary_id": trip["itinerary_id"], "car_code": car["car_code"], "pickup_city": home,
                         "dropoff_city": drop, "pickup_date": pickup_date, "dropoff_date": dropoff_date,
                         "driver_name": name, "points": 0}, None
    args["payment_id"], card_choice, card_facts, words = _card(ctx)
    need(len(ctx.violations("book_car_rental", args)) == int(refusal is not None))
    ref = _trip_ref(ctx, trip)
    young = YOUNG_DRIVER_FEE * n if age_on(dict(_people(traveller))[name], pickup_date) < YOUNG_DRIVER_AGE else 0
    one_way = ONE_WAY_FEE if drop != home else 0
    facts = {"car_class": _CLASS[car["car_code"]], "pickup_city": home, "dropoff_city": drop,
             "pickup_date": pickup_date, "dropoff_date": dropoff_date, "driver_name": name, **card_facts,
             **({"points": args["points"]} if args["points"] else {})}
    relation = next((f"{{{{my}}}} {c['relation']} {name}" for c in traveller["companions"] if c["name"] == name),
                    "{{me}}")
    what = f"{_a(facts['car_class'])} {'from ' + home}{' to ' + drop if one_way else ''}, " \
        f"{month_day(pickup_date)} to {month_day(dropoff_date)}"
    request = [f"rent {what}, for {ref.phrase}, with {relation} driving",
               f"add a rental of {what}, to {ref.phrase}, with {relation} at the wheel"]
    if args["points"]:
        request = [f"{r}, paying part with {args['points']:,} of {{{{my}}}} points" for r in request]
    choice = Choice.among("car class", car, cars, "car_code", lambda c: {"car_class": _CLASS[c["car_code"]]})
    mood = Mood(ctx.rng.choice(["{{I}} want to explore the countryside by car", "{{I}} want to get around on {{my}} own"
                                " schedule"]), "positive", 1, days_until(pickup_date))
    if refusal:
        return draft(refusal.kind, "book_car_rental", args, request, ref, refusal=refusal, facts=facts,
                     choices=[choice, card_choice], reads={"get_rental_cars": [{}]}, evidence=["get_rental_cars"],
                     mood=mood)
    expression = f"{car['daily_rate']} * {n}" + (f" + {YOUNG_DRIVER_FEE} * {n}" if young else "") + \
        (f" + {ONE_WAY_FEE}" if one_way else "")
    return draft("book_car", "book_car_rental", args, request, ref, facts=facts, choices=[choice, card_choice],
                 reads={"get_rental_cars": [{}], "calculate": [{"expression": expression}]},
                 evidence=["get_rental_cars"], preferences=[f"pay with {{{{my}}}} {words}"],
                 outputs=[Output(money(car["daily_rate"] * n + young + one_way), "the rental's total with every fee")],
                 decline="not rent the car", mood=mood)

def ground_cancel_car_rental(ctx: GroundingContext) -> IntentDraft | None:
    started = ctx.want_challenge
    trip, rental = ctx.choose([(t, r) for t, r in _parts(ctx, "car_rentals")
                               if ((days_until(r["pickup_date"]) <= 0 < days_until(r["dropoff_date"])) if started
                                   else days_until(r["pickup_date"]) > 0)])
    ref = _part_ref(ctx, trip, rental, "car_rentals")
    args = {"car_rental_id": rental["car_rental_id"]}
    ctx.challenged("cancel_car_rental", args)
    mood = Mood("{{I}} will not need the car after all", "neutral", 1, None)
    if started:
        return draft("rental_started", "cancel_car_rental", args,
                     [f"cancel {ref.phrase} and get a refund, since {{{{I}}}} no longer need the car"], ref,
                     refusal=Refusal("rental_started", "before its pick-up date"), mood=mood)
    # a rental not yet begun may also be called off over its price (what distaste at a charge rests on)
    mood = dataclasses.replace(mood, others=(Mood("the rental charge for that car is more than {{I}} expected", "negative",
                                                  1, None),))
    return _cancel("cancel_car", "cancel_car_rental", "car_rentals", rental, ref, mood)

HINTS = TracerHints(
    reads_once=True,  # its walks read a record again with no write between (issue 34)
    persona=persona,
    goals=goals_in(globals()),  # each ground_<tool> function above grounds <tool>
    goal_weights={"change_hotel_stay_dates": 1.5, "book_car_rental": 1.3, "book_tour": 1.2, "cancel_tour_booking": 0.8},
    entry_tools=["find_traveller_by_email"],
    occasions=OCCASIONS,
    occasion_intents=["book_stay", "book_tour", "book_car", "move_stay", "stay_points_limit", "stay_points_blocks",
                      "tour_points_limit", "tour_points_blocks", "car_driver_too_young", "car_one_way", "car_points",
                      "trip_closed"],
    fact_phrase=fact_phrase,
    situation=situation,
    # the judge rejects a tour or a car the trip already holds, a car cancelled then rented again for the same days,
    # a car picked up where the trip has no stay; the grounders' own fixes starved the split (55-57 of 58 at the
    # README's seed), so here the check alone guards (49 rejections of 3,272 candidates, measured)
    world=world,
    rates=TravelRates(),
)
