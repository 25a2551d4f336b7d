"""Tracer hints for the movie pack: who the customer is and how each goal tool is grounded.

The Tracer (`tau_emotion.tracer`) samples workflows from the tool graph and validates them; this
module is the cinema knowledge it needs to turn a goal tool into a concrete request on the database
(see `tau_emotion.tracer.hints`). The customer gives their email, names a booking by its confirmation
code or by its film, theatre and day, a showtime by film, theatre, day and time, seats by row and
number, concessions and tiers by their names and a payment method by kind, brand or last digits;
the agent finds the ids.

Goals: book tickets (some paid with membership credits), exchange a booking, refund one, pre-order
concessions, change a membership tier. Challenges: one per policy rule (`rules.py`) but the 20-ticket
limit; a showtime that has started is a frequent situation, so those challenges are throttled.
Decision rules rest on what a booking, an exchange, a concession order or a new tier costs.
"""

from __future__ import annotations

import datetime as _dt
from typing import Any

from tau_emotion.domain_packs.movie.rules import GROUP_REFUND_HOURS, RESTRICTED_RATINGS
from tau_emotion.domain_packs.movie.tools import EXCHANGE_FEE, GROUP_SIZE, TODAY, hours_until, screen_seats
from tau_emotion.domain_packs.movie.tracer_situation import situation
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
    days_between,
    draft,
    fact_wording,
    goals_in,
    instrument_options,
    join_and,
    money,
    month_day,
    need,
    per_database,
    pick_instrument,
    refused_calls,
    settle,
    used_by_earlier_intents,
)


class MovieRates(Rates):
    #: a booking is named by its confirmation code (else by its film, and its date and theatre where needed)
    confirmation_code: Rate = 0.4
    #: challenges given up so they do not crowd out the others: a booking for a showing that started or an age-rated
    #: film (any customer can ask them), a refund of a started showing (many have started), snacks for a started one
    common_booking_challenge_held_back: Rate = 0.6
    started_refund_held_back: Rate = 0.7
    late_snacks_held_back: Rate = 0.6
    #: a member's booking uses their credits
    use_credits: Rate = 0.6
    #: an exchange challenge is for a showing that started; else, it is a second exchange (fewest customers can ask)
    late_exchange_challenge: Rate = 0.3
    second_exchange_challenge: Rate = 0.5
    #: an exchange goes to a dearer format (IMAX or 3D) of the same film
    format_upgrade: Rate = 0.5
    #: a showing of another film is a target of an exchange (of a challenge; of any other exchange)
    other_film_challenge: Rate = 0.5
    other_film: Rate = 0.15
    #: a refused group refund insists on a person (as the task's last request)
    group_refund_insists: Rate = 0.5

OCCASIONS = [
    ("it is {{my}} son's ninth birthday and he has waited weeks for this film", 2, "positive"),
    ("it is {{my}} wedding anniversary and {{I}} {{am}} taking {{my}} partner out", 2, "positive"),
    ("{{my}} parents are visiting from out of town for the weekend", 1, "positive"),
    ("{{I}} finally have a free evening after a hard month at work", 1, "positive"),
    ("{{I}} promised {{my}} niece a film after her exams", 1, "positive"),
    ("{{I}} {{am}} organising a night out for {{my}} book club", 1, "neutral"),
    # a friend still recovering is a worry, not a loss: no "I'm grieving, because a close friend has just come out
    # of hospital" (movie-test-043); the treat is for two (`tracer_situation.PARTY`)
    ("a close friend is recovering from a long illness and {{I}} want to give them a treat", 2, "negative"),
    ("{{I}} {{am}} on a tight budget this month", 2, "negative"),
    ("{{I}} saw the first film with {{my}} late father and want to see the sequel", 3, "negative"),
    # a grave harm still ahead (what dread and desperation at stakes 3 rest on; a loss that happened is grief)
    ("{{my}} daughter is seriously ill and this film is the one outing she has asked for", 3, "negative"),
    ("it is just an ordinary trip to the cinema", 0, "neutral"),
]

_SNACKS = {  # how a customer orders one, or several, of each concession
    "CON_POPCORN_S": ("a small popcorn", "{} small popcorns"), "CON_POPCORN_L": ("a large popcorn", "{} large popcorns"),
    "CON_SODA_M": ("a medium soda", "{} medium sodas"), "CON_SODA_L": ("a large soda", "{} large sodas"),
    "CON_NACHOS": ("a portion of nachos with cheese", "{} portions of nachos with cheese"), "CON_HOTDOG": ("a hot dog", "{} hot dogs"),
    "CON_CANDY": ("a candy box", "{} candy boxes"), "CON_WATER": ("a bottle of water", "{} bottles of water"),
    "CON_COMBO": ("a combo (large popcorn and two medium sodas)", "{} combos (large popcorn and two medium sodas)")}
_SAY = {"imax": "IMAX", "3d": "3D", "standard": "standard", "TIER_STANDARD": "Standard", "TIER_PREMIUM": "Premium"}

def _day(date: str) -> str:  # 'Sunday, June 15'
    return f"{_dt.date.fromisoformat(date[:10]).strftime('%A')}, {month_day(date)}"

def _clock(start: str) -> str:  # '2025-06-15T19:45' -> '19:45'
    return start[11:16]

def _customer(ctx: GroundingContext) -> dict:
    return ctx.state["customers"].peek(ctx.persona.entity)

def _bookings(ctx: GroundingContext) -> list[dict]:
    return ctx.rows("bookings", _customer(ctx)["booking_ids"])

def _show(ctx: GroundingContext, booking: dict) -> dict:
    return ctx.state["showtimes"].peek(booking["showtime_id"])

def _film(ctx: GroundingContext, show: dict) -> dict:
    return ctx.state["films"].peek(show["film_code"])

def _theatre_name(ctx: GroundingContext, show: dict) -> str:
    return ctx.state["theatres"].peek(show["theatre_code"])["name"]

def _membership(ctx: GroundingContext) -> dict | None:
    mid = _customer(ctx)["membership_id"]
    return ctx.state["memberships"].peek(mid) if mid else None

def _prices(ctx: GroundingContext, fmt: str) -> dict:
    return ctx.state["formats"].peek(fmt)

def _fresh(ctx: GroundingContext, bookings: list[dict]) -> list[dict]:
    return [b for b in ctx.fresh(bookings, "booking_id", reads=True) if b["status"] == "confirmed"]

def _booking_ref(ctx: GroundingContext, booking: dict) -> Reference:
    """How the customer points at a booking: by its confirmation code, or by its film, theatre and/or day."""
    def says(b: dict) -> dict:
        show = _show(ctx, b)
        return {"confirmation_code": b["confirmation_code"], "film": _film(ctx, show)["title"],
                "theatre": _theatre_name(ctx, show), "date": show["start"][:10]}
    options = [Option(b["booking_id"], says(b)) for b in _bookings(ctx)]
    orders = [("film",), ("film", "date"), ("film", "theatre", "date")]
    choice = need(settle("booking", booking["booking_id"], options, says(booking),
                         [("confirmation_code",)] if ctx.chance("confirmation_code") else orders))
    said = choice.selectors
    if "confirmation_code" in said:
        words = f" {said['confirmation_code']}"
    else:
        words = f" for {said['film']}" + (f" at {said['theatre']}" if "theatre" in said else "") + \
            (f" on {_day(said['date'])}" if "date" in said else "")
    facts = {("confirmation_code" if k == "confirmation_code" else f"booking_{k}"): v for k, v in said.items()}
    return Reference(f"{{{{my}}}} booking{words}", facts=facts, choices=[choice],
                     reads={"get_booking_details": [{"booking_id": booking["booking_id"]}]},
                     evidence=["get_booking_details"])

def _showtime_choice(ctx: GroundingContext, show: dict) -> Choice:
    """The customer names a showtime by its film, theatre, day and start time."""
    def says(s: dict) -> dict:
        return {"film": _film(ctx, s)["title"], "theatre": _theatre_name(ctx, s), "start": s["start"]}
    day = [s for _, s in ctx.state["showtimes"].scan() if s["start"][:10] == show["start"][:10]]
    return Choice("showtime", show["showtime_id"], [Option(s["showtime_id"], says(s)) for s in day], says(show))

def _catalogue_choices(ctx: GroundingContext, show: dict) -> list[Choice]:
    film, theatre = _film(ctx, show), ctx.state["theatres"].peek(show["theatre_code"])
    return [Choice.among("film", film, [r for _, r in ctx.state["films"].scan()], "film_code", "title"),
            Choice.among("theatre", theatre, [r for _, r in ctx.state["theatres"].scan()], "theatre_code", "name"),
            _showtime_choice(ctx, show)]

def _showtime_reads(show: dict) -> dict[str, list[dict[str, Any]]]:
    return {"get_catalogue": [{}],
            "list_showtimes": [{"date": show["start"][:10], "film_code": show["film_code"],
                                "theatre_code": show["theatre_code"]}, {"date": show["start"][:10]}],
            "get_seat_map": [{"showtime_id": show["showtime_id"]}]}

def _free_block(ctx: GroundingContext, show: dict, n: int) -> list[str] | None:
    """`n` free seats side by side in one row of the showtime, picked with the rng."""
    seats = screen_seats(ctx.state["theatres"].peek(show["theatre_code"]), show["screen"])
    taken = set(show["taken"])
    blocks = []
    for row in sorted({s[0] for s in seats}):
        free = [s for s in seats if s[0] == row]
        for i in range(len(free) - n + 1):
            if not taken & set(free[i:i + n]):
                blocks.append(free[i:i + n])
    return ctx.rng.choice(blocks) if blocks else None

def _shows(ctx: GroundingContext, low: float, high: float, **match: Any) -> list[dict]:
    return [s for _, s in ctx.state["showtimes"].scan() if low < hours_until(s["start"]) < high
            and all(s[k] == v for k, v in match.items())]

def _tickets(ctx: GroundingContext, seats: list[str], rating: str, want_child: bool) -> list[dict]:
    kinds = ["adult"] + [ctx.rng.choice(["adult", "adult", "child", "senior"] if rating not in RESTRICTED_RATINGS
                                        else ["adult", "senior"]) for _ in seats[1:]]
    if want_child:
        kinds[-1] = "child"
    order = {"adult": 0, "senior": 1, "child": 2}
    return [{"seat": s, "type": t} for s, t in zip(seats, sorted(kinds, key=order.get), strict=True)]

def _ticket_facts(tickets: list[dict]) -> dict[str, list[str]]:
    facts: dict[str, list[str]] = {"ticket_types": sorted({t["type"] for t in tickets})}  # said with the seats
    for t in tickets:
        facts.setdefault(f"{t['type']}_seats", []).append(t["seat"])
    return facts

def _ticket_words(tickets: list[dict]) -> str:
    parts = []
    for kind in ("adult", "senior", "child"):
        seats = [t["seat"] for t in tickets if t["type"] == kind]
        if seats:
            parts.append(f"{len(seats)} {kind} ticket{'s' if len(seats) > 1 else ''}")
    return ", ".join(parts[:-1]) + (" and " if len(parts) > 1 else "") + parts[-1]

def _word(key: str, value: Any) -> str:
    if key in ("date", "booking_date", "new_date"):
        return _day(str(value))
    return _SAY.get(str(value), str(value))

def _new_seats(said: list[str]) -> str:
    """The seats an exchange moves to, in one of two wordings fixed by their number (no sentence frame fills half
    the split: the audit's sentence-template check), a single seat in the singular."""
    seats = join_and(said)
    if len(said) == 1:
        return f"the new seat you want is {seats}"
    return f"you would like to sit in {seats} at the new showing" if len(said) % 2 else \
        f"the new seats you want are {seats}"


fact_phrase = fact_wording({
    "film": ("the film is {}", "the films are {}"),
    "theatre": ("the cinema is {}", "the cinemas are {}"),
    "date": ("the day you want is {}", "the days you want are {}"),
    "time": ("the showing starts at {}", "the showings start at {}"),
    "new_film": ("the film you want instead is {}", "the films you want instead are {}"),
    "same_film": ("the film stays the same, {}", "the films stay the same, {}"),
    "new_theatre": ("the cinema you want instead is {}", "the cinemas you want instead are {}"),
    "new_date": ("the new day is {}", "the new days are {}"),
    "new_time": ("the new showing starts at {}", "the new showings start at {}"),
    "booking_film": ("the booking is for {}", "the bookings are for {}"),
    "booking_theatre": ("the booking is at {}", "the bookings are at {}"),
    "booking_date": ("the booking is on {}", "the bookings are on {}"),
    "confirmation_code": ("the confirmation code is {}", "the confirmation codes are {}"),
    **{f"{k}_seats": (f"the {k} ticket is for seat {{}}", f"the {k} tickets are for seats {{}}") for k in ("adult", "child", "senior")},
    "ticket_types": "",
    "new_seats": lambda said: _new_seats(said),
    "credits": ("you want {} of the tickets paid with membership credits", "you want {} tickets paid with credits"),
    "concession": "",  # the request says it ("4 bottles of water"); the catalogue name again was a second pass
    "quantity": "",  # the request says it
    "new_tier": ("the tier you want is {}", "the tiers you want are {}"),
    "member_number": ("your member number is {}", "your member numbers are {}"),
    "payment_method": lambda said: f"you pay with your {' and your '.join(said)}" + (" respectively" if len(said) > 1 else ""),
}, _word, unsaid=["payment_last_four_digits"])

#: share of personas drawn among the few customers whose group booking is inside the group refund window (ten
#: bookings of 600 customers hold one): drawn like everyone, the group refusal never came up in a split
GROUP_PERSONAS = 0.06

def _customers(db: Any) -> tuple[list[str], list[str]]:
    """(customers with a booking or a membership, those with a group booking inside the group refund window)."""
    shows = db.tables["showtimes"]
    everyone = sorted(c for c, r in db.tables["customers"].items() if r["booking_ids"] or r["membership_id"])
    groups = sorted({b["customer_id"] for b in db.tables["bookings"].values() if b["status"] == "confirmed"
                     and len(b["tickets"]) >= GROUP_SIZE
                     and 0 < hours_until(shows[b["showtime_id"]]["start"]) < GROUP_REFUND_HOURS})
    return everyone, groups

def persona(ctx: GroundingContext) -> Persona | None:
    everyone, groups = per_database(ctx, _customers)
    cid = ctx.rng.choice(ctx.rng.choices([everyone, groups or everyone], weights=[1 - GROUP_PERSONAS, GROUP_PERSONAS])[0])
    customer = ctx.state["customers"].peek(cid)
    name = customer["name"]
    return Persona(name=f"{name['first_name']} {name['last_name']}",
                   facts={"first_name": name["first_name"], "last_name": name["last_name"], "email": customer["email"]},
                   reads={"find_customer_by_email": [{"email": customer["email"]}],
                          "get_customer_details": [{"customer_id": cid}]}, entity=cid)

def _payment(ctx: GroundingContext, amount: float) -> Any:
    options = instrument_options(_customer(ctx)["payment_methods"])
    return need(pick_instrument(ctx, "payment method", options, lambda o: o.attrs.get("balance", 1e9) >= amount))

_BOOK_REFUSALS = {"before_showtime": Refusal("showtime_started", "already started", "book_started"),
                  "age_rating": Refusal("age_rating", "rated", "book_age_rating"),
                  "credits_need_active_membership": Refusal("membership_inactive", "paused", "book_credits_paused"),
                  "credits_standard_format_only": Refusal("credit_format", "standard", "book_credits_format"),
                  "credits_per_showtime": Refusal("credit_cap", "per showtime", "book_credits_cap")}

def ground_book_tickets(ctx: GroundingContext) -> IntentDraft | None:
    member = _membership(ctx)
    kind = ctx.choose(["book_started", "book_age_rating"] + ["book_credits"] * 3 * bool(member)) \
        if ctx.want_challenge else None
    if kind in ("book_started", "book_age_rating") and ctx.chance("common_booking_challenge_held_back"):
        return None
    low, high = (-2, 0) if kind == "book_started" else (3, 24 * 8)
    restricted = {f for f, r in ((k, v) for k, v in ctx.state["films"].scan()) if r["rating"] in RESTRICTED_RATINGS}
    shows = [s for s in _shows(ctx, low, high) if kind != "book_age_rating" or s["film_code"] in restricted]
    show = ctx.choose(shows)
    film = _film(ctx, show)
    n = ctx.choose([1, 2, 2, 3, 4] if kind != "book_credits" else [2, 3])
    seats = need(_free_block(ctx, show, n))
    tickets = _tickets(ctx, seats, "G" if kind == "book_age_rating" else film["rating"], kind == "book_age_rating")
    prices = _prices(ctx, show["format"])
    credits = 0
    usable = member and member["status"] == "active" and show["format"] == "standard" and member["credits_left"]
    if kind == "book_credits":
        cap = ctx.state["tiers"].peek(member["tier_code"])["credits_per_showtime"]
        credits = cap + 1 if member["status"] == "active" and show["format"] == "standard" else 1
        credits = min(credits, n)
    elif usable and not kind and ctx.chance("use_credits"):
        cap = ctx.state["tiers"].peek(member["tier_code"])["credits_per_showtime"]
        credits = ctx.choose(list(range(1, min(cap, n, member["credits_left"]) + 1)))
    paid = sorted((prices[t["type"]] for t in tickets), reverse=True)[credits:]
    total = sum(paid)
    pay = _payment(ctx, total)
    args = {"customer_id": ctx.persona.entity, "showtime_id": show["showtime_id"], "tickets": tickets,
            "payment_id": pay.value, "credits": credits}
    when = f"{film['title']} at {_theatre_name(ctx, show)} on {_day(show['start'])} at {_clock(show['start'])}"
    request = [f"book {_ticket_words(tickets)} for {when}", f"get {_ticket_words(tickets)} to see {when}"]
    if credits:
        request = [f"{r}, using {credits} membership credit{'s' if credits > 1 else ''}" for r in request]
    facts = {"film": film["title"], "theatre": _theatre_name(ctx, show), "date": show["start"][:10],
             "time": _clock(show["start"]), **_ticket_facts(tickets), **({"credits": credits} if credits else {}),
             **pay.facts("payment_last_four_digits")}
    choices = [*_catalogue_choices(ctx, show), pay.choice]
    reads = _showtime_reads(show)
    if credits:
        reads["get_membership_details"] = [{"membership_id": member["membership_id"]}]
    mood = Mood("{{I}} want to see " + film["title"], "positive", 1, days_between(TODAY, show["start"]))
    if kind:
        (_, _, refusal), = need(refused_calls(ctx, "book_tickets", [(show, args)], _BOOK_REFUSALS))
        return draft(refusal.kind, "book_tickets", args, request, facts=facts, refusal=refusal, choices=choices,
                     reads=reads, evidence=["get_membership_details"] * bool(credits) + ["list_showtimes", "get_seat_map"],
                     mood=mood)
    need(not ctx.violations("book_tickets", args))
    return draft("book", "book_tickets", args, request, facts=facts, choices=choices, reads=reads,
                 evidence=["list_showtimes", "get_seat_map"], policy_values=[total] if len(paid) > 1 else [], outputs=[Output(money(total), "what the tickets cost {{me}}", noun="the ticket total")] if paid else [],
                 preferences=[f"pay with {{{{my}}}} {pay.words}"], decline="not book the tickets after all" if paid else None,
                 mood=mood)

_EXCHANGE_REFUSALS = {"before_showtime": Refusal("showtime_started", "already started", "exchange_started"),
                      "exchange_limit": Refusal("exchange_limit", "at most once", "exchange_twice"),
                      "age_rating": Refusal("age_rating", "rated", "exchange_age_rating"),
                      "credits_standard_format_only": Refusal("credit_format", "standard", "exchange_credits_format")}

def ground_exchange_tickets(ctx: GroundingContext) -> IntentDraft | None:
    late = ctx.want_challenge and ctx.chance("late_exchange_challenge")
    own = [b for b in _fresh(ctx, _bookings(ctx)) if len(b["tickets"]) < GROUP_SIZE
           and (-48 < hours_until(_show(ctx, b)["start"]) < 0 if late else hours_until(_show(ctx, b)["start"]) > 2)]
    if ctx.want_challenge and not late and ctx.chance("second_exchange_challenge"):
        own = [b for b in own if b["exchanges"]] or own  # a second exchange, the challenge fewest customers can make
    booking = ctx.choose(own)
    old = _show(ctx, booking)
    n = len(booking["tickets"])
    upgrade = not ctx.want_challenge and ctx.chance("format_upgrade")
    targets = [s for s in _shows(ctx, 2, 24 * 8) if s["showtime_id"] != old["showtime_id"]
               and (s["film_code"] == old["film_code"] or ctx.chance("other_film_challenge" if ctx.want_challenge else "other_film"))
               and (not upgrade or _prices(ctx, s["format"])["adult"] > _prices(ctx, old["format"])["adult"])]
    if ctx.want_challenge:
        calls = [(s, {"booking_id": booking["booking_id"], "new_showtime_id": s["showtime_id"], "seats": seats})
                 for s in ctx.rng.sample(targets, min(30, len(targets))) if (seats := _free_block(ctx, s, n))]
        show, args, refusal = ctx.choose(refused_calls(ctx, "exchange_tickets", calls, _EXCHANGE_REFUSALS))
    else:
        show = ctx.choose(targets)
        args = {"booking_id": booking["booking_id"], "new_showtime_id": show["showtime_id"],
                "seats": need(_free_block(ctx, show, n))}
    seats = args["seats"]
    film = _film(ctx, show)
    ref = _booking_ref(ctx, booking)
    when = (f"{film['title']} " if show["film_code"] != old["film_code"] else "the showing ") + \
        f"at {_theatre_name(ctx, show)} on {_day(show['start'])} at {_clock(show['start'])}"
    request = [f"move {ref.phrase} to {when}", f"exchange {ref.phrase} for {when}"]
    # the same film at another time is no film "instead" (movie-test-012 exchanged Red Ledger for Red Ledger)
    film_key = "new_film" if show["film_code"] != old["film_code"] else "same_film"
    facts = {film_key: film["title"], "new_theatre": _theatre_name(ctx, show), "new_date": show["start"][:10],
             "new_time": _clock(show["start"]), "new_seats": seats}
    reads = _showtime_reads(show)
    missed = hours_until(old["start"]) < 0
    # a refused request's event never tells the refusal's reason ("I missed my showing" says it has started)
    mood = Mood("{{I}} still want to see the film and hope to find another time" if missed else
                "{{my}} plans changed and {{I}} need another showing", "negative" if missed else "neutral", 1,
                None if missed else days_between(TODAY, old["start"]),
                # the same move lived as a clash still in the way (what dislike and aversion rest on)
                others=() if missed else (Mood("the showing {{I}} booked clashes with something {{I}} cannot move",
                                               "negative", 1, days_between(TODAY, old["start"])),))
    if ctx.want_challenge:
        looks = ["list_showtimes", "get_seat_map"] if refusal.reason in ("age_rating", "credit_format") else []
        return draft(refusal.kind, "exchange_tickets", args, request, ref, facts=facts, refusal=refusal,
                     choices=_catalogue_choices(ctx, show), reads=reads, evidence=looks, mood=mood)
    need(not ctx.violations("exchange_tickets", args))
    new_prices = _prices(ctx, show["format"])
    paid = [t for t in booking["tickets"] if t["paid_with"] != "credit"]
    fee = 0 if (_membership(ctx) or {}).get("status") == "active" else EXCHANGE_FEE
    cost = sum(new_prices[t["type"]] - t["price"] for t in paid) + fee * n
    outputs, decline = [], None
    if cost > 0:
        outputs, decline = [Output(money(cost), "what the exchange costs {{me}} in all", noun="the cost of the exchange")], "keep {{my}} booking as it is"
    elif cost < 0:
        outputs = [Output(money(-cost), "how much comes back to {{me}}")]
    return draft("exchange", "exchange_tickets", args, request, ref, facts=facts, choices=_catalogue_choices(ctx, show),
                 reads=reads, evidence=["list_showtimes", "get_seat_map"],
                 outputs=outputs, decline=decline,
                 policy_values=[abs(cost)] + [EXCHANGE_FEE] * bool(fee),
                 mood=mood)

def ground_refund_booking(ctx: GroundingContext) -> IntentDraft | None:
    group = [b for b in _fresh(ctx, _bookings(ctx)) if len(b["tickets"]) >= GROUP_SIZE
             and 0 < hours_until(_show(ctx, b)["start"]) < GROUP_REFUND_HOURS]
    # few customers hold a group booking inside the 48 hours: the challenge goes to them whenever they call
    # (drawn by lot, the group refusal was never drawn)
    kind = ("refund_group" if group else "refund_started") if ctx.want_challenge else None
    if kind == "refund_started" and ctx.chance("started_refund_held_back"):
        return None
    window = {"refund_started": (-72, 0), "refund_group": (0, GROUP_REFUND_HOURS)}.get(kind, (2, 24 * 8))
    own = [b for b in _fresh(ctx, _bookings(ctx)) if window[0] < hours_until(_show(ctx, b)["start"]) < window[1]
           and (kind != "refund_group" or len(b["tickets"]) >= GROUP_SIZE)]
    booking = ctx.choose(own)
    ref = _booking_ref(ctx, booking)
    args = {"booking_id": booking["booking_id"]}
    request = [f"cancel {ref.phrase} and get {{{{my}}}} money back", f"get a refund for {ref.phrase}"]
    show = _show(ctx, booking)
    mood = Mood("something came up and {{I}} want {{my}} money back", "negative", 2, None) if kind == "refund_started" \
        else Mood("{{I}} can no longer make it to the film", "negative", 1, days_between(TODAY, show["start"]))
    if kind:
        table = {"before_showtime": Refusal("showtime_started", "already started", kind),
                 "group_refund_window": Refusal("group_refund_window", "48 hours", kind)}
        (_, _, refusal), = need(refused_calls(ctx, "refund_booking", [(booking, args)], table))
        return draft(kind, "refund_booking", args, request, ref, refusal=refusal, mood=mood,
                     on_refusal="transfer" if kind == "refund_group" and ctx.insists("group_refund_insists") else "accept",
                     handoff_summary=f"customer wants a refund of booking {booking['confirmation_code']}")
    need(not ctx.violations("refund_booking", args))
    credits = sum(t["paid_with"] == "credit" for t in booking["tickets"])
    outputs = [Output(money(booking["total"]), "how much {{I}} get back")] if booking["total"] else []
    if credits:
        outputs.append(Output(str(credits), "how many membership credits come back", from_goal=True))
    return draft("refund", "refund_booking", args, request, ref, outputs=outputs, mood=mood)

def ground_add_concessions(ctx: GroundingContext) -> IntentDraft | None:
    late = ctx.want_challenge
    if late and ctx.chance("late_snacks_held_back"):
        return None
    own = [b for b in _fresh(ctx, _bookings(ctx))
           if (-3 < hours_until(_show(ctx, b)["start"]) < 0 if late else hours_until(_show(ctx, b)["start"]) > 1)]
    booking = ctx.choose(own)
    item = ctx.choose([r for _, r in ctx.state["concessions"].scan()])
    qty = min(len(booking["tickets"]), 4)  # one each for the party
    args = {"booking_id": booking["booking_id"], "item_code": item["item_code"], "quantity": qty}
    ref = _booking_ref(ctx, booking)
    what = _SNACKS[item["item_code"]][qty > 1].format(qty)
    request = [f"pre-order {what} on {ref.phrase}", f"add {what} to {ref.phrase}"]
    facts = {"concession": item["name"], "quantity": qty}
    choices = [Choice.among("concession", item, [r for _, r in ctx.state["concessions"].scan()], "item_code", "name")]
    mood = Mood("{{I}} want the snacks ready when {{I}} arrive", "positive", 0, days_between(TODAY, _show(ctx, booking)["start"]))
    if late:
        refusal = Refusal("showtime_started", "already started", "snacks_started")
        (_, _, refusal), = need(refused_calls(ctx, "add_concessions", [(item, args)], {"before_showtime": refusal}))
        return draft("snacks_started", "add_concessions", args, request, ref, facts=facts, refusal=refusal,
                     choices=choices, mood=mood)
    member = _membership(ctx)
    discount = ctx.state["tiers"].peek(member["tier_code"])["concession_discount"] if member and \
        member["status"] == "active" else 0
    price = item["price"] * qty * (1 - discount)
    expression = f"{item['price']} * {qty}" + (f" - {item['price']} * {qty} * {discount}" if discount else "")
    reads: dict[str, list[dict[str, Any]]] = {"get_catalogue": [{}]}
    if discount:
        reads["get_membership_details"] = [{"membership_id": member["membership_id"]}]
    if discount or qty > 1:
        reads["calculate"] = [{"expression": expression}]
    return draft("snacks", "add_concessions", args, request, ref, facts=facts, choices=choices, reads=reads,
                 evidence=["get_membership_details"] if discount else [],
                 outputs=[Output(money(price), "what the snacks cost", noun="the price of the snacks")], decline="skip the snacks", mood=mood)

def ground_change_membership_tier(ctx: GroundingContext) -> IntentDraft | None:
    member = need(_membership(ctx))
    need(member["membership_id"] not in used_by_earlier_intents(ctx, "membership_id", reads=True))
    tiers = {c: r for c, r in ctx.state["tiers"].scan()}
    new = next(c for c in tiers if c != member["tier_code"])
    args = {"membership_id": member["membership_id"], "tier_code": new}
    ctx.challenged("change_membership_tier", args)
    up = tiers[new]["monthly_fee"] > tiers[member["tier_code"]]["monthly_fee"]
    name = tiers[new]["name"]
    # the member number in the request: said after the decision rule it read as a form ("Your member number is ...")
    number = member["member_number"]
    request = [f"move {{{{my}}}} membership {number} to the {name} tier", f"switch {{{{my}}}} membership {number} to {name}"]
    facts = {"new_tier": name, "member_number": member["member_number"]}
    reads = {"get_membership_details": [{"membership_id": member["membership_id"]}]}
    mood = Mood("{{I}} " + ("go to the cinema more often now" if up else "want to spend less on the cinema"),
                "neutral", 1, None,
                # a move down lived as a fee the customer finds too high (what distaste at a charge rests on)
                others=() if up else (Mood("the monthly fee of {{my}} tier is more than {{I}} want to pay for how "
                                           "often {{I}} go", "negative", 1, None),))
    if ctx.want_challenge:
        table = {"tier_change_once_per_month": Refusal("tier_changed_this_month", "once per calendar month", "tier_twice"),
                 "tier_change_needs_active_membership": Refusal("membership_inactive", "paused", "tier_paused")}
        (_, _, refusal), = need(refused_calls(ctx, "change_membership_tier", [(member, args)], table))
        return draft(refusal.kind, "change_membership_tier", args, request, facts=facts, refusal=refusal, reads=reads,
                     evidence=["get_membership_details"], mood=mood)
    left = max(0, tiers[new]["monthly_credits"] - member["credits_used_this_month"])
    return draft("tier_up" if up else "tier_down", "change_membership_tier", args, request, facts=facts,
                 reads={**reads, "get_catalogue": [{}]}, evidence=["get_membership_details"],
                 choices=[Choice.among("tier", tiers[new], list(tiers.values()), "tier_code", "name")],
                 outputs=[Output(money(tiers[new]["monthly_fee"]), "the new monthly fee"),
                          Output(str(left), "how many credits {{I}} have left this month", from_goal=True)],
                 decline="stay on {{my}} current tier" if up else None, mood=mood)

HINTS = TracerHints(
    persona=persona,
    goals=goals_in(globals()),  # each ground_<tool> function above grounds <tool>
    # every customer can ask a refund: draw it less, so that goals with a figure to decide on (and a rule) lead
    goal_weights={"book_tickets": 2.0, "exchange_tickets": 1.4, "refund_booking": 0.4, "add_concessions": 1.0,
                  "change_membership_tier": 1.0},
    entry_tools=["find_customer_by_email"],
    occasions=OCCASIONS,
    occasion_intents=["book", "book_age_rating", "book_credits_format", "book_credits_cap", "exchange", "snacks",
                      "exchange_age_rating", "refund_group"],
    fact_phrase=fact_phrase,
    situation=situation,
    rates=MovieRates(),
)
