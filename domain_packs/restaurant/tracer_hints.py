"""Tracer hints for the restaurant pack: who the guest is and how each goal tool is grounded.

The Tracer (`tau_emotion.tracer`) samples workflows from the tool graph and validates them; this
module is the restaurant knowledge it needs to turn a goal tool into a concrete request on the database
(`tau_emotion.tracer.hints`). The guest gives their phone number, names a booking by its number, restaurant
or day, restaurants and set menus by name and a card by brand or last digits; the agent finds the ids.

Goals: book, move or resize a booking, add a request or a set menu, cancel (late: with the fee), join a
full seating's waitlist. Challenges: one per policy rule (`rules.py`), a party above 10 sometimes
handed to the events team; a fee-free late cancellation is throttled, since many guests can ask it.
"""

from __future__ import annotations

import dataclasses
import datetime as _dt
from typing import Any

from tau_emotion.domain_packs.restaurant.rules import MAX_DAYS_AHEAD, MAX_PARTY, SET_MENU_ABOVE
from tau_emotion.domain_packs.restaurant.tools import (
    DEPOSIT_ABOVE,
    TODAY,
    WEEKDAYS,
    free_tables,
    hours_until,
    late_fee,
    table_for,
)
from tau_emotion.domain_packs.restaurant.tracer_situation import situation
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
    TracerHints,
    days_between,
    draft,
    fact_wording,
    money,
    month_day,
    per_database,
    pick_instrument,
    settle,
    shift_date,
    used_by_earlier_intents,
)


class RestaurantRates(Rates):
    #: a booking is named by its booking number (else by its restaurant and date)
    booking_number: Rate = 0.4
    #: a guest with no dietary profile states a dietary need; one with no access need states one (a high chair)
    dietary_need: Rate = 0.3
    access_need: Rate = 0.2
    #: a party too large for the restaurant insists on the events team (as the task's last request)
    large_party_insists: Rate = 0.5
    #: a late-cancellation challenge is given up (many guests hold a booking inside 24 hours: it would crowd out the
    #: others); a cancellation the policy allows is inside 24 hours (else weeks ahead)
    late_cancellation_held_back: Rate = 0.85
    late_cancellation: Rate = 0.5

OCCASIONS = [
    ("{{I}} {{am}} celebrating {{my}} parents' fortieth wedding anniversary", 3, "positive"),
    ("{{my}} daughter just graduated", 2, "positive"),
    ("{{I}} got a promotion at work", 2, "positive"),
    ("{{I}} {{am}} hosting a lunch after {{my}} grandfather's funeral", 3, "negative"),
    ("{{my}} best friend is moving abroad and {{I}} {{am}} taking them out to say goodbye", 2, "negative"),
    ("{{I}} {{am}} taking an important client out", 2, "neutral"),
    ("{{I}} {{am}} meeting {{my}} partner's parents for the first time", 2, "neutral"),
    ("{{my}} old school friends are in town for one weekend", 1, "positive"),
    ("{{I}} {{am}} recovering from an operation and do not get out much", 2, "negative"),
    ("{{I}} lost {{my}} partner this year and this meal matters to {{me}}", 3, "negative"),
    # a grave harm still ahead (what dread and desperation at stakes 3 rest on; a loss that happened is grief)
    ("{{my}} father is very ill and this may be his last birthday dinner with the family", 3, "negative"),
    ("it is just an ordinary night out", 0, "neutral"),
]

DIETS = ("vegetarian", "vegan", "gluten_free", "dairy_free", "nut_allergy", "shellfish_allergy", "halal", "kosher")
_SAY = {"gluten_free": "gluten-free", "dairy_free": "dairy-free", "nut_allergy": "a nut allergy", "shellfish_allergy":
        "a shellfish allergy", "high_chair": "a high chair", "quiet_table": "a quiet table", "wheelchair": "wheelchair access"}

def _day(date: str) -> str:  # 'Friday, June 20'
    return f"{WEEKDAYS[_dt.date.fromisoformat(date).weekday()]}, {month_day(date)}"

def _guest(ctx: GroundingContext) -> dict:
    return ctx.state["guests"].peek(ctx.persona.entity)

def _rest(ctx: GroundingContext, code: str) -> dict:
    return ctx.state["restaurants"].peek(code)

def _restaurants(ctx: GroundingContext) -> list[dict]:
    return [r for _, r in ctx.state["restaurants"].scan()]

def _own(ctx: GroundingContext) -> list[dict]:
    return [ctx.state["bookings"].peek(b) for b in _guest(ctx)["booking_ids"]]

def _upcoming(ctx: GroundingContext, low: float = 0, high: float = 24 * MAX_DAYS_AHEAD) -> list[dict]:
    """The guest's confirmed bookings between `low` and `high` hours away that no earlier intent touched."""
    used = used_by_earlier_intents(ctx, "booking_id", reads=True)
    return [b for b in _own(ctx) if b["status"] == "confirmed" and b["booking_id"] not in used
            and low < hours_until(b["date"], b["time"]) < high]

def _booked_days(ctx: GroundingContext) -> set[str]:
    return {b["date"] for b in _own(ctx) if b["status"] == "confirmed"}

def _open_on(restaurant: dict, date: str) -> bool:
    return WEEKDAYS[_dt.date.fromisoformat(date).weekday()] not in restaurant["closed_on"]

def _free(ctx: GroundingContext, code: str, date: str, time: str, party: int, exclude: str | None = None) -> bool:
    return table_for(free_tables(ctx.state, code, date, time, exclude), party) is not None

def _restaurant_choice(ctx: GroundingContext, code: str) -> Choice:
    options = [Option(r["restaurant_code"], {"name": r["name"]}) for r in _restaurants(ctx)]
    return Choice("restaurant", code, options, {"name": _rest(ctx, code)["name"]})

def _menu_choice(restaurant: dict, menu: dict) -> Choice:
    options = [Option(m["set_menu_code"], {"name": m["name"]}) for m in restaurant["set_menus"]]
    return Choice("set menu", menu["set_menu_code"], options, {"name": menu["name"]})

def _booking_ref(ctx: GroundingContext, booking: dict) -> Reference | None:
    """How the guest points at a booking: by its booking number, or by its restaurant and/or day."""
    options = [Option(b["booking_id"], {"booking_number": b["booking_number"], "date": b["date"],
                                        "restaurant": _rest(ctx, b["restaurant_code"])["name"]}) for b in _own(ctx)]
    wanted = options[[o.value for o in options].index(booking["booking_id"])].attrs
    orders = [("restaurant",), ("date",), ("restaurant", "date")]
    choice = settle("booking", booking["booking_id"], options, wanted,
                    [("booking_number",)] if ctx.chance("booking_number") else orders)
    if choice is None:
        return None
    said = choice.selectors
    words = (f" {said['booking_number']}" if "booking_number" in said else "") + \
        (f" at {said['restaurant']}" if "restaurant" in said else "") + (f" on {_day(said['date'])}" if "date" in said else "")
    facts = {("booking_number" if k == "booking_number" else f"booking_{k}"): v for k, v in said.items()}
    return Reference(f"{{{{my}}}} booking{words}", facts=facts, choices=[choice],
                     reads={"get_booking_details": [{"booking_id": booking["booking_id"]}]},
                     evidence=["get_booking_details"])

def _card(ctx: GroundingContext) -> tuple[str, Choice, dict, str] | None:
    """A card of the guest, worded so it is the only fit: (id, choice, facts, words)."""
    options = [Option(cid, {"kind": "card", "brand": c["brand"], "last_four": c["last_four"]})
               for cid, c in _guest(ctx)["cards"].items()]
    picked = pick_instrument(ctx, "card", options)
    if picked is None:
        return None
    pick, choice, words = picked.option, picked.choice, picked.words
    words = words.replace("Amex", "American Express")
    if len(options) == 1:
        choice = Choice("card", pick.value, options, {})
        words = "card on file"
    facts = {"card": words, **({"card_last_four_digits": pick.attrs["last_four"]} if "last_four" in choice.selectors
                               else {})}
    return pick.value, choice, facts, words

def _word(key: str, value: Any) -> str:
    if key in ("date", "new_date", "booking_date", "waitlist_date"):
        return _day(str(value))
    return _SAY.get(str(value), str(value).replace("_", " "))

fact_phrase = fact_wording({
    "restaurant": ("the restaurant is {}", "the restaurants are {}"),
    "booking_restaurant": ("the booking is at {}", "the bookings are at {}"),
    "booking_date": ("the booking is on {}", "the bookings are on {}"),
    "booking_number": ("the booking number is {}", "the booking numbers are {}"),
    "date": ("the day you want is {}", "the days you want are {}"),
    "new_date": ("the new day is {}", "the new days are {}"),
    "time": ("the seating you want is {}", "the seatings you want are {}"),
    "party_size": ("you are a party of {}", "the parties are of {} guests"),
    "new_party_size": ("you will now be {} guests", "the new party sizes are {}"),
    "set_menu": ("the set menu you want is the {}", "the set menus you want are the {}"),
    "dietary_requirements": ("the party's dietary needs are {}", "the dietary needs are {}"),
    "accessibility_requests": ("you need {}", "you need {}"),
    "need_to_add": ("what you want added is {}", "what you want added is {}"),
    "card": lambda said: f"you pay with your {' and your '.join(said)}" + (" respectively" if len(said) > 1 else ""),
}, _word, unsaid=["card_last_four_digits"])

def persona(ctx: GroundingContext) -> Persona | None:
    gid = ctx.rng.choice(per_database(ctx, lambda db: sorted(db.tables["guests"])))
    guest = ctx.state["guests"].peek(gid)
    return Persona(name=f"{guest['first_name']} {guest['last_name']}",
                   facts={"first_name": guest["first_name"], "last_name": guest["last_name"],
                          "phone_number": guest["phone_number"]},
                   reads={"find_guest": [{"phone_number": guest["phone_number"]}]}, entity=gid)

_BOOK_CHALLENGES = ("party_too_large", "one_booking_per_day", "beyond_booking_horizon", "not_wheelchair_accessible",
                    "set_menu_required")

def ground_book_table(ctx: GroundingContext) -> IntentDraft | None:
    kind = ctx.rng.choice(_BOOK_CHALLENGES) if ctx.want_challenge else None
    restaurant = ctx.rng.choice([r for r in _restaurants(ctx) if kind != "not_wheelchair_accessible"
                                 or not r["step_free_access"]])
    busy = _booked_days(ctx)
    if kind == "one_booking_per_day":
        dates = sorted(d for d in busy if 0 < days_between(TODAY, d) <= MAX_DAYS_AHEAD)
    elif kind == "beyond_booking_horizon":
        dates = [shift_date(TODAY, MAX_DAYS_AHEAD + ctx.rng.randint(5, 40))]
    else:
        dates = [shift_date(TODAY, ctx.rng.randint(2, 45)) for _ in range(4)]
        dates = [d for d in dates if d not in busy]
    dates = [d for d in dates if _open_on(restaurant, d)]
    if not dates:
        return None
    date = ctx.rng.choice(dates)
    size = {"party_too_large": ctx.rng.randint(MAX_PARTY + 1, MAX_PARTY + 4),
            "set_menu_required": ctx.rng.randint(SET_MENU_ABOVE + 1, MAX_PARTY)}.get(
        kind, ctx.rng.choice([2, 2, 3, 4, 4, 5, 6, 7, 8, 8, 9, 10]))
    times = [t for t in restaurant["seatings"] if kind or _free(ctx, restaurant["restaurant_code"], date, t, size)]
    if not times:
        return None
    time = ctx.rng.choice(times)
    paid = _card(ctx)
    if paid is None:
        return None
    card_id, card_choice, card_facts, words = paid
    code = restaurant["restaurant_code"]
    args: dict[str, Any] = {"guest_id": ctx.persona.entity, "restaurant_code": code, "date": date, "time": time,
                            "party_size": size, "card_id": card_id}
    facts: dict[str, Any] = {"restaurant": restaurant["name"], "date": date, "time": time, "party_size": size,
                             **card_facts}
    choices = [_restaurant_choice(ctx, code), card_choice]
    request = [f"book a table for {size} at {restaurant['name']} on {_day(date)} at {time}",
               f"reserve a table for {size} people at {restaurant['name']} for {time} on {_day(date)}"]
    if size > SET_MENU_ABOVE and kind != "set_menu_required":
        menu = ctx.rng.choice(restaurant["set_menus"])
        args["set_menu_code"], facts["set_menu"] = menu["set_menu_code"], menu["name"]
        choices.append(_menu_choice(restaurant, menu))
        request = [f"{r}, with the {menu['name']} for everyone" for r in request]
    diets = list(_guest(ctx)["dietary_profile"]) or ([ctx.rng.choice(DIETS)] if ctx.chance("dietary_need") else [])
    if diets and not kind:
        args["dietary_requirements"] = facts["dietary_requirements"] = diets
    if kind == "not_wheelchair_accessible" or (not kind and ctx.chance("access_need")):
        need = "wheelchair" if restaurant["step_free_access"] or kind else "high_chair"
        args["accessibility_requests"] = facts["accessibility_requests"] = [need]
    if notes := [*args.get("dietary_requirements", []), *args.get("accessibility_requests", [])]:  # said, not hidden
        request = [f"{r}, noting {' and '.join(_word('', n) for n in notes)}" for r in request]
    found = ctx.violations("book_table", args)
    # who the party is comes from the occasion (a client, the family after a funeral), not from this event
    mood = Mood("{{I}} want to take " + ("a big group" if size > 6 else "a few people" if size > 2 else "someone") + " out for a meal", "positive",
                1, days_between(TODAY, date))
    if kind:
        if len(found) != 1:
            return None
        keyword = {"party_too_large": "events team", "one_booking_per_day": "one booking per day",
                   "beyond_booking_horizon": "60 days", "not_wheelchair_accessible": "step-free access",
                   "set_menu_required": "set menu"}[kind]
        transfer = kind == "party_too_large" and ctx.insists("large_party_insists")
        if kind == "set_menu_required":
            request = [f"{r}, ordering from the menu on the night rather than a set menu" for r in request]
        return draft(kind, "book_table", args, request, facts=facts, refused=True, choices=choices,
                     outputs=[Output(keyword, reason=kind)], on_refusal="transfer" if transfer else "accept",
                     handoff_summary=f"guest wants a table for {size} at {restaurant['name']} on {date} at {time}",
                     reads={"get_restaurants": [{}]} if kind == "not_wheelchair_accessible" else {},
                     evidence=["get_restaurants"] if kind == "not_wheelchair_accessible" else [], mood=mood)
    if found:
        return None
    deposit = restaurant["deposit_per_guest"] * size if size > DEPOSIT_ABOVE else 0
    return draft("book", "book_table", args, request, facts=facts, choices=choices,
                 reads={"get_restaurants": [{}], "check_availability": [{"restaurant_code": code, "date": date,
                                                                          "party_size": size}]},
                 evidence=["check_availability"], policy_values=[deposit] if deposit else [],
                 outputs=[Output(money(deposit), "the deposit {{I}} pay now")] if deposit else [],
                 preferences=[f"guarantee it with {{{{my}}}} {words}"], decline="not book the table after all",
                 mood=mood)

def _move(ctx: GroundingContext, booking: dict, ref: Reference) -> IntentDraft | None:
    restaurant = _rest(ctx, booking["restaurant_code"])
    code, party = booking["restaurant_code"], booking["party_size"]
    late = hours_until(booking["date"], booking["time"]) < 4
    kind = ctx.rng.choice(["one_booking_per_day", "beyond_booking_horizon"] + ["too_late_to_change"] * 2 * late) \
        if ctx.want_challenge else None
    busy = _booked_days(ctx) - {booking["date"]}
    if kind == "one_booking_per_day":
        dates = sorted(d for d in busy if d > TODAY and _open_on(restaurant, d))
    elif kind == "beyond_booking_horizon":
        dates = [shift_date(TODAY, MAX_DAYS_AHEAD + ctx.rng.randint(5, 40))]
    else:
        dates = [d for d in (shift_date(booking["date"], s) for s in (1, 2, 7, -1)) if d > TODAY and d not in busy]
    dates = [d for d in dates if _open_on(restaurant, d)]
    if not dates:
        return None
    date = ctx.rng.choice(dates)
    times = [t for t in restaurant["seatings"] if hours_until(date, t) > 4 and (kind or _free(ctx, code, date, t, party))]
    if kind == "too_late_to_change":
        date, times = booking["date"], [t for t in restaurant["seatings"] if t > booking["time"]]
    if not times:
        return None
    time = ctx.rng.choice(times)
    args = {"booking_id": booking["booking_id"], "date": date, "time": time}
    found = ctx.violations("modify_booking", args)
    if len(found) != (1 if kind else 0):
        return None
    when = f"{_day(date)} at {time}" if date != booking["date"] else f"{time} the same day"
    request = [f"move {ref.phrase} to {when}", f"change {ref.phrase} to {when}"]
    facts = {"new_date": date, "time": time} if date != booking["date"] else {"time": time}
    mood = Mood("{{my}} plans changed and {{I}} need another time", "neutral", 1, days_between(TODAY, booking["date"]))
    if kind:
        keyword = {"one_booking_per_day": "one booking per day", "beyond_booking_horizon": "60 days",
                   "too_late_to_change": "4 hours"}[kind]
        return draft(f"move_{kind}", "modify_booking", args, request, ref, facts=facts, refused=True,
                     outputs=[Output(keyword, reason=kind)], mood=mood)
    return draft("move", "modify_booking", args, request, ref, facts=facts, mood=mood,
                 reads={"get_restaurants": [{}], "check_availability": [{"restaurant_code": code, "date": date,
                                                                          "party_size": party}]},
                 evidence=["get_restaurants", "check_availability"])

def _party(ctx: GroundingContext, booking: dict, ref: Reference) -> IntentDraft | None:
    restaurant = _rest(ctx, booking["restaurant_code"])
    old = booking["party_size"]
    if ctx.want_challenge:
        kind = "too_large" if hours_until(booking["date"], booking["time"]) > 4 else "too_late"
        new = ctx.rng.randint(MAX_PARTY + 1, MAX_PARTY + 3) if kind == "too_large" else old + 1
    else:
        kind, new = None, old + ctx.rng.choice([1, 2, 2, 3, -1])
    if new < 2 or (not kind and (not _free(ctx, booking["restaurant_code"], booking["date"], booking["time"], new,
                                            booking["booking_id"]) or new > SET_MENU_ABOVE)):
        return None
    args = {"booking_id": booking["booking_id"], "party_size": new}
    rules = {v.rule for v in ctx.violations("modify_booking", args)}
    if bool(rules) != bool(kind) or (kind == "too_late" and rules != {"change_window"}):
        return None
    request = [f"change {ref.phrase} from {old} to {new} guests", f"make {ref.phrase} a table for {new} instead of {old}"]
    mood = Mood("{{my}} group " + ("got bigger" if new > old else "got smaller"), "neutral", 1,
                days_between(TODAY, booking["date"]))
    if kind:
        reason = "party_too_large" if kind == "too_large" else "too_late_to_change"
        # a group grown above the limit goes to the events team: a guest who insists is handed over (the booking was
        # read first, and a handover may follow that read; a refused new booking has no read to follow)
        transfer = kind == "too_large" and ctx.insists("large_party_insists")
        return draft(f"party_{kind}", "modify_booking", args, request, ref, facts={"new_party_size": new}, refused=True,
                     outputs=[Output("events team" if kind == "too_large" else "4 hours", reason=reason)], mood=mood,
                     on_refusal="transfer" if transfer else "accept",
                     handoff_summary=f"guest wants booking {booking['booking_number']} changed to a party of {new}")
    # the deposit is recomputed for the new size and only the difference from what the booking holds is charged
    extra = (restaurant["deposit_per_guest"] * new if new > DEPOSIT_ABOVE else 0) - (booking.get("deposit") or 0)
    return draft("party", "modify_booking", args, request, ref, facts={"new_party_size": new}, mood=mood,
                 reads={"check_availability": [{"restaurant_code": booking["restaurant_code"], "date": booking["date"],
                                                "party_size": new}], "get_restaurants": [{}]},
                 evidence=["get_restaurants", "check_availability"], policy_values=[extra] if extra > 0 else [],
                 outputs=[Output(money(extra), "the extra deposit {{I}} pay")] if extra > 0 else [],
                 decline="keep the party size as it is")

def _requests(ctx: GroundingContext, booking: dict, ref: Reference) -> IntentDraft | None:
    restaurant = _rest(ctx, booking["restaurant_code"])
    if ctx.want_challenge:
        if restaurant["step_free_access"]:
            return None
        field, item = "accessibility_requests", "wheelchair"
    else:
        field = ctx.rng.choice(["dietary_requirements", "accessibility_requests"])
        pool = DIETS if field == "dietary_requirements" else \
            (["high_chair", "quiet_table"] + ["wheelchair"] * restaurant["step_free_access"])
        item = ctx.rng.choice(pool)
    if item in booking[field]:
        return None
    args = {"booking_id": booking["booking_id"], field: [*booking[field], item]}
    ctx.challenged("modify_booking", args)
    note = "dietary" if field == "dietary_requirements" else "accessibility"
    request = [f"add {_SAY.get(item, item)} to the {note} notes of {ref.phrase}",
               f"note {_SAY.get(item, item)} on {ref.phrase}"]
    fact_key = "need_to_add"  # the booking's other needs stay: the agent reads them
    mood = Mood("{{I}} want the restaurant to be ready for " + ("{{my}} guests' needs" if note == "dietary" else "us"),
                "neutral", 2 if item in ("wheelchair", "nut_allergy", "shellfish_allergy") else 1, None)
    if ctx.want_challenge:
        return draft("wheelchair", "modify_booking", args, request, ref, facts={fact_key: [item]}, refused=True,
                     reads={"get_restaurants": [{}]}, evidence=["get_restaurants"], mood=mood,
                     outputs=[Output("step-free access", reason="not_wheelchair_accessible")])
    return draft(f"add_{note}", "modify_booking", args, request, ref, facts={fact_key: [item]}, mood=mood)

def _set_menu(ctx: GroundingContext, booking: dict, ref: Reference) -> IntentDraft | None:
    restaurant = _rest(ctx, booking["restaurant_code"])
    menus = [m for m in restaurant["set_menus"] if m["set_menu_code"] != booking["set_menu_code"]]
    menu = ctx.rng.choice(menus)
    args = {"booking_id": booking["booking_id"], "set_menu_code": menu["set_menu_code"]}
    ctx.challenged("modify_booking", args)
    request = [f"pre-order the {menu['name']} for everyone on {ref.phrase}", f"add the {menu['name']} to {ref.phrase}"] \
        if booking["set_menu_code"] is None else [f"switch the set menu on {ref.phrase} to the {menu['name']}"] * 2
    mood = Mood(f"{{{{I}}}} want everything ready for the meal on {_day(booking['date'])}", "positive", 1,
                days_between(TODAY, booking["date"]))
    if ctx.want_challenge:
        return draft("preorder_closed", "modify_booking", args, request, ref, facts={"set_menu": menu["name"]},
                     refused=True, outputs=[Output("24 hours", reason="preorder_closed")], mood=mood)
    total = menu["price_per_guest"] * booking["party_size"]
    return draft("set_menu", "modify_booking", args, request, ref, facts={"set_menu": menu["name"]},
                 reads={"get_restaurants": [{}]}, choices=[_menu_choice(restaurant, menu)], policy_values=[total],
                 outputs=[Output(money(total), "what the set menu costs for the whole party",
                                noun="the set menu's total for the whole party")],
                 decline="keep the set menu {{I}} chose before" if booking["set_menu_code"] else
                 "leave the booking without a set menu", mood=mood)

def ground_modify_booking(ctx: GroundingContext) -> IntentDraft | None:
    how = ctx.rng.choice([_move, _move, _party, _requests, _set_menu, _set_menu])
    if ctx.want_challenge:
        late = ctx.rng.choice([(0, 4), (4, 1440)])
        window = {_move: late, _party: late, _requests: (4, 1440), _set_menu: (4, 24)}[how]
    else:
        window = {_set_menu: (48, 1440)}.get(how, (6, 1440))
    booking = ctx.rng.choice(_upcoming(ctx, *window) or [None])
    ref = booking and _booking_ref(ctx, booking)
    return how(ctx, booking, ref) if ref else None

def ground_cancel_booking(ctx: GroundingContext) -> IntentDraft | None:
    if ctx.want_challenge and ctx.chance("late_cancellation_held_back"):
        return None
    late = ctx.want_challenge or ctx.chance("late_cancellation")
    booking = ctx.rng.choice(_upcoming(ctx, *((0, 24) if late else (30, 1440))) or [None])
    ref = booking and _booking_ref(ctx, booking)
    if ref is None:
        return None
    fee = late_fee(ctx.state, booking)
    args = {"booking_id": booking["booking_id"], "charge_late_fee": late and not ctx.want_challenge}
    ctx.challenged("cancel_booking", args)
    request = [f"cancel {ref.phrase}", f"call off {ref.phrase}"]
    days = days_between(TODAY, booking["date"])
    mood, rule = Mood(f"{{{{my}}}} plans for {_day(booking['date'])} fell through", "negative", 1, days, others=(
        Mood(f"{{{{I}}}} decided to have the meal on {_day(booking['date'])} at home instead", "neutral", 1, days),
        Mood(f"friends invited {{{{me}}}} to a dinner of their own on {_day(booking['date'])}", "positive", 1, days))), [late]
    if ctx.want_challenge:
        return draft("free_late_cancel", "cancel_booking", args, [f"{r} without paying any fee" for r in request], ref,
                     refused=True, outputs=[Output("late fee", reason="late_cancellation_fee")], mood=mood)
    if not late:
        return draft("cancel", "cancel_booking", args, request, ref, mood=mood, policy_values=rule)
    # a late cancellation costs a fee (the policy's, which the caller may know): something to dislike of its own
    fee_mood = Mood("cancelling this late means paying a fee", "negative", 1, days)
    return draft("cancel_late", "cancel_booking", args, request, ref, decline="keep the booking", policy_values=rule,
                 outputs=[Output(money(fee), "the late-cancellation fee")],
                 mood=dataclasses.replace(mood, others=(*mood.others, fee_mood)))

def ground_join_waitlist(ctx: GroundingContext) -> IntentDraft | None:
    busy = _booked_days(ctx)
    spots = [(r, d, t) for r in _restaurants(ctx) for d in (shift_date(TODAY, k) for k in (0, 1, 7, 8, 14))
             for t in r["seatings"] if d not in busy and _open_on(r, d) and hours_until(d, t) > 1]
    ctx.rng.shuffle(spots)
    party = ctx.rng.choice([2, 2, 3, 4, 4, 5, 6])
    full = not ctx.want_challenge
    pick = next(((r, d, t) for r, d, t in spots if _free(ctx, r["restaurant_code"], d, t, party) != full), None)
    if pick is None:
        return None
    restaurant, date, time = pick
    code = restaurant["restaurant_code"]
    args = {"guest_id": ctx.persona.entity, "restaurant_code": code, "date": date, "time": time, "party_size": party}
    ctx.challenged("join_waitlist", args)
    waiting = [w for _, w in ctx.state["waitlist"].scan() if (w["restaurant_code"], w["date"], w["time"], w["status"])
               == (code, date, time, "waiting")]
    if any(w["guest_id"] == ctx.persona.entity for w in waiting):
        return None
    facts = {"restaurant": restaurant["name"], "date": date, "time": time, "party_size": party}
    reads = {"get_restaurants": [{}], "check_availability": [{"restaurant_code": code, "date": date, "party_size": party}]}
    mood = Mood("{{I}} really hoped to eat at " + restaurant["name"], "neutral", 1, days_between(TODAY, date))
    if ctx.want_challenge:
        return draft("waitlist_table_free", "join_waitlist", args,
                     [f"join the waitlist for the {time} seating at {restaurant['name']} on {_day(date)}, party of {party}"], facts=facts, reads=reads, evidence=["check_availability"],
                     choices=[_restaurant_choice(ctx, code)], refused=True,
                     outputs=[Output("book it instead", reason="table_available")], mood=mood)
    return draft("waitlist", "join_waitlist", args,
                 [f"get a table for {party} at {restaurant['name']} on {_day(date)} at {time}, or a place on the "
                  "waitlist if that seating is full"], facts=facts, reads=reads, evidence=["check_availability"],
                 choices=[_restaurant_choice(ctx, code)], mood=mood,
                 outputs=[Output(str(len(waiting) + 1), "{{my}} place on the waitlist", from_goal=True)])

HINTS = TracerHints(
    persona=persona,
    goals={
        "book_table": ground_book_table,
        "modify_booking": ground_modify_booking,
        "cancel_booking": ground_cancel_booking,
        "join_waitlist": ground_join_waitlist,
    },
    # booking and joining a waitlist end a workflow (nothing follows them in the graph): draw them less often
    goal_weights={"modify_booking": 2.0, "cancel_booking": 1.5, "book_table": 0.8, "join_waitlist": 0.5},
    entry_tools=["find_guest"],
    occasions=OCCASIONS,
    occasion_intents=["book", "party", "set_menu", "waitlist", "party_too_large", "set_menu_required",
                      "not_wheelchair_accessible", "add_dietary", "add_accessibility", "move", "cancel_late"],
    fact_phrase=fact_phrase,
    # an occasion must fit the meal's day, seating and party (old friends in town for a weekend eat on a weekend)
    situation=situation,
    decision_rate=0.9,  # few restaurant requests carry an amount (set menus, late cancellations, deposits)
    rates=RestaurantRates(),
)
