"""Tracer hints for the airline pack: who the user is and how each goal tool is grounded.

The Tracer (`tau_emotion.tracer`) samples workflows from the tool graph and validates them; this
module is the airline knowledge it needs to turn a goal tool into a concrete intent on the
database (see `tau_emotion.tracer.hints` for the interface). Each grounder picks entities from
the current state, computes the figures the user must be told, says which facts the user knows
and which choices the user's words must settle, and, when asked for a policy challenge, produces a
request that `rules.py` forbids.

Goals: change flights (new date or cabin), add bags, change passengers, cancel, compensation,
book, flight status. Challenges: changing a basic economy flight, changing the cabin of a trip
already partly flown, removing bags, adding a passenger, cancelling without grounds or after
departure, compensation for a reservation that does not qualify, and paying with two
certificates.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

from tau_emotion.domain_packs.airline.tools import BAG_FEE, FLOWN, FREE_BAGS, INSURANCE_PER_PASSENGER, NOW
from tau_emotion.domain_packs.airline.tracer_situation import birth_records, situation, world
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
    bill,
    day_period,
    days_between,
    difference,
    draft,
    fact_wording,
    first_grounded,
    goals_in,
    instrument_options,
    join_and,
    money,
    month_day,
    need,
    per_database,
    pick_fresh,
    pick_instrument,
    shift_date,
    used_by_earlier_intents,
)

TODAY = NOW[:10]

class AirlineRates(Rates):
    #: a reservation the user's words could pick out is named by its code all the same
    tell_reservation_id: Rate = 0.5
    #: a user refused a change or refund of a trip partly flown insists on a person (as the task's last request)
    after_departure_insists: Rate = 0.6
    #: a flight that is the cheapest of a search is asked for as "the cheapest" (else by its time of day)
    cheapest_flight: Rate = 0.6
    #: a date change is the basic economy challenge (else the cabin challenge is tried first); a flight change tries
    #: the date before the cabin
    basic_economy_challenge: Rate = 0.5
    date_change_first: Rate = 0.5
    #: a passenger change corrects a date of birth (else it replaces the passenger)
    fix_birth_date: Rate = 0.5
    #: a refused cancellation is of a trip not yet flown that no grounds cover (else of one partly flown)
    uncovered_cancellation: Rate = 0.6
    #: an insured cancellation is for a storm at home (else at the destination)
    storm_at_home: Rate = 0.4
    #: a booking takes a companion, one of the user's saved passengers; a round trip; a nonstop flight when there is
    #: one; airports said by their codes
    companion: Rate = 0.45
    saved_companion: Rate = 0.6
    round_trip: Rate = 0.35
    nonstop: Rate = 0.7
    airport_codes: Rate = 0.5
    #: a flight status request names the flight number
    flight_number: Rate = 0.4
# (occasion, stakes, valence): the valence keeps feelings fitting (no excitement on the way to a funeral).
OCCASIONS = [
    ("{{I}} {{am}} travelling to {{my}} sister's wedding", 3, "positive"),
    ("this trip is {{my}} honeymoon", 3, "positive"),
    ("{{I}} {{am}} going to a funeral in the family", 3, "negative"),
    ("{{I}} {{am}} flying home because {{my}} father is in hospital", 3, "negative"),
    ("{{I}} {{have}} a job interview at the other end", 2, "neutral"),
    ("{{I}} {{am}} visiting {{my}} grandparents", 2, "positive"),
    ("{{I}} {{am}} flying out for an important client meeting", 2, "neutral"),
    ("{{I}} {{am}} going to a friend's birthday party", 1, "positive"),
    ("this is a long-planned holiday", 1, "positive"),
    ("{{I}} {{am}} attending a conference", 1, "neutral"),
    ("it is just a weekend getaway", 0, "positive"),
]

# --------------------------------------------------------------------------- wording

def _cities(db: Any) -> dict[str, str]:
    """Airport code -> its city as a person names it, with the code where the city has two airports."""
    airports = db.tables["airports"]
    count = Counter(row["city"] for row in airports.values())
    return {code: row["city"] if count[row["city"]] == 1 else f"{row['city']} {code}" for code, row in airports.items()}

def _place(ctx: GroundingContext, code: str) -> str:
    return per_database(ctx, _cities)[code]

def _status(ctx: GroundingContext, leg: dict) -> str | None:
    """The status of a reservation's flight on its date (None: no such flight)."""
    flight = ctx.peek("flights", leg["flight_number"])
    return None if flight is None else flight["dates"].get(leg["date"], {}).get("status")

def _leg(ctx: GroundingContext, res: dict, statuses: tuple[str, ...]) -> dict | None:
    """The reservation's first flight whose status is one of `statuses` (None: none is)."""
    return next((leg for leg in res["flights"] if _status(ctx, leg) in statuses), None)

def _flight(leg: dict) -> dict:
    """A flight as the tools take it: its number and date."""
    return {"flight_number": leg["flight_number"], "date": leg["date"]}

def _user(ctx: GroundingContext) -> dict:
    return ctx.state["users"].peek(ctx.persona.facts["user_id"])

def _reservations(ctx: GroundingContext) -> list[dict]:
    return ctx.rows("reservations", _user(ctx)["reservations"])

def _trip(ctx: GroundingContext, res: dict) -> str:
    kind = "round trip" if res["flight_type"] == "round_trip" else "trip"
    return f"{_place(ctx, res['origin'])} to {_place(ctx, res['destination'])} {kind}"

def _future(ctx: GroundingContext, res: dict) -> bool:
    """Active and no flight departed or departing today (every flight still open for booking)."""
    return res["status"] == "active" and all(_status(ctx, leg) == "available" for leg in res["flights"])

def _birthday(date: str) -> str:
    """'1990-12-24' -> 'December 24, 1990'."""
    return f"{month_day(date)}, {date[:4]}"

def _person(p: Any) -> str:
    """A passenger fact ({first_name, last_name, dob}) as a person names one: 'Sofia Lindqvist, born December 24, 1990'."""
    if isinstance(p, dict) and "first_name" in p:
        name = f"{p['first_name']} {p['last_name']}"
        return f"{name}, born {_birthday(p['dob'])}" if p.get("dob") else name
    return str(p)

def _bags(n: Any) -> str:
    n = int(n)
    return "no checked bags" if n == 0 else "1 checked bag" if n == 1 else f"{n} checked bags"

def _bag_words(n: Any) -> str:
    """A booking's bags as its preference says them ('check 2 bags'): the fact is then said by those words."""
    n = int(n)
    return "travel without checked bags" if n == 0 else "check one bag" if n == 1 else f"check {n} bags"

def _yours(method: str) -> str:
    """'the Visa credit card' / 'gift card ending in 2799' -> 'your Visa credit card' / 'your gift card ending in 2799'."""
    method = str(method).removeprefix("the ")
    return "your " + method.replace(", the rest on the ", ", the rest on your ")

_CANCEL_REASONS = {"change of plans": "your plans changed",
                   "health: doctor advised not to fly": "your doctor advised you not to fly",
                   "weather: a storm is forecast": "a storm is forecast",
                   "the airline cancelled a flight": "the airline cancelled a flight"}

def _insurance(said: list[str]) -> str:
    if len(set(said)) > 1:
        return "you want travel insurance on some bookings and not on others"
    # a booking's own preference words ('take the travel insurance'): the fact is said by them, not again
    return {"yes": "take the travel insurance", "no": "skip the travel insurance"}.get(said[0], f"travel insurance: {said[0]}")

def _flight_days(days: list[str]) -> str:
    """The flight-status dates: a flight of today is said by its request ("your flight ... today"), so it is not
    said again as "the flight is on May 15"; other days are said as a month and day."""
    later = [month_day(d) for d in days if d != TODAY]
    if not later:
        return ""
    return f"the flight is on {later[0]}" if len(later) == 1 else f"the flights are on {join_and(later)}"

#: the instruction's wording of a known fact ("you have the reservation numbers to hand: UN9DQT and 0NDGD6", "you use your gift
#: card ending in 2799"). A plural key is several intents' facts merged, each value once: said without "respectively",
#: since the values need not line up with the intents (each intent's own line names its trip, date or card). A card's
#: last four digits go unsaid: the payment method's words say them ("gift card ending in 2799").
fact_phrase = fact_wording({
    "reservation_id": ("you have the reservation number to hand: {}", "you have the reservation numbers to hand: {}"),
    "trip_origin": ("the trip starts in {}", "the trips start in {}"),
    "trip_destination": ("the trip goes to {}", "the trips go to {}"),
    "trip_date": ("the trip is on {}", "the trips are on {}", month_day),
    "new_travel_date": ("you want to fly on {} instead", "the new dates are {}", month_day),
    "new_cabin": ("you want to switch to {}", {"business": "business class"}),
    "total_checked_bags": ("you want {} in total", _bags),
    "checked_bags": ("{}", _bag_words),
    "checked_bags_wanted": ("you want {}", _bags),
    "cancellation_reason": ("you are cancelling because {}", _CANCEL_REASONS),
    "payment_method": ("you use {}", _yours),
    "payment": ("you pay with {}", _yours),
    "origin": "you fly out of {}",
    "destination": "you are going to {}",
    "travel_date": ("you leave on {}", month_day),
    "return_date": ("you come back on {}", month_day),
    "cabin": ("you fly {}", {"business": "business class"}),
    "trip_type": ("{}", {"one way": "the trip is one-way", "round trip": "it is a round trip"}),
    "travel_insurance": _insurance,
    "companion": ("you travel with {}", _person),
    "companion_name": "you travel with {}",
    "new_passenger": ("the new passenger is {}", "the new passengers are {}", _person),
    "passenger_to_replace": ("the passenger to replace is {}", "the passengers to replace are {}"),
    "passenger_to_correct": ("the passenger whose details are wrong is {}", "the passengers whose details are wrong are {}"),
    "correct_dob": ("the correct date of birth is {}", "the correct dates of birth are {}", _birthday),
    "flight_number": ("the flight number is {}", "the flight numbers are {}"),
    "flight_date": _flight_days,
}, unsaid=["card_last_four_digits"])

# --------------------------------------------------------------------------- shared pieces

def _ref(ctx: GroundingContext, res: dict, cities: bool = True) -> Reference:
    """How the user points at one of their reservations: its id, or words that pick it out.

    With `cities` the request says `phrase` ("your Miami to Denver trip"), so the trip's cities are known facts;
    a request about one flight of the trip (its status, a compensation) names that flight instead and knows the
    trip's cities only where they are what picks the reservation out."""
    rid = res["reservation_id"]
    # the policy asks to read a reservation before acting on it
    ref = Reference(f"{{{{my}}}} {_trip(ctx, res)} on {month_day(res['flights'][0]['date'])}",
                    reads={"get_reservation_details": [{"reservation_id": rid}]}, evidence=["get_reservation_details"])
    # every phrase below names the trip's cities ("your Miami to Denver trip"): the user knows them, as an agent asks
    # for them ("the origin?", "the destination?"), whether or not they are what picks the reservation out
    if cities:
        ref.facts.update({"trip_origin": _place(ctx, res["origin"]), "trip_destination": _place(ctx, res["destination"])})
    if rid not in ctx.domain.database.tables["reservations"]:
        ref.phrase = f"the {_trip(ctx, res)} {{{{I}}}} just booked"
        return ref
    others = _reservations(ctx)
    settled = Choice.fewest("reservation", res, others, "reservation_id", lambda r: {
        "origin": _place(ctx, r["origin"]), "destination": _place(ctx, r["destination"]), "date": r["flights"][0]["date"]},
        (("destination",), ("origin", "destination"), ("origin", "destination", "date")))
    if settled is None or len(others) == 1 or ctx.chance("tell_reservation_id"):
        ref.facts["reservation_id"] = rid
        ref.phrase = f"{{{{my}}}} {_trip(ctx, res)} (reservation {rid})"
        return ref
    ref.choices.append(settled)
    ref.facts.update({f"trip_{k}": v for k, v in settled.selectors.items()})
    ref.reads["list_user_reservations"] = [{"user_id": res["user_id"]}]
    ref.evidence.append("list_user_reservations")
    if "date" not in settled.selectors:
        ref.phrase = f"{{{{my}}}} {_trip(ctx, res)}"
    return ref

def _payment(ctx: GroundingContext, charge: float, *, refund: bool = False) -> tuple[str, Choice, dict, str] | None:
    """A credit or gift card that can pay `charge`: (id, choice, facts, phrase), worded so it is the only fit."""
    pay = need(pick_instrument(ctx, "payment method", instrument_options(_user(ctx)["payment_methods"]),
                               lambda o: o.attrs["kind"] == "credit card" or (
                                   o.attrs["kind"] == "gift card" and (refund or o.attrs["balance"] >= charge))))
    phrase = (f"get the difference back on {{{{my}}}} {pay.words}" if refund else f"pay with {{{{my}}}} {pay.words}"
              if charge else f"use {{{{my}}}} {pay.words} if anything is charged")
    return pay.value, pay.choice, pay.facts("card_last_four_digits"), phrase

def _after_departure(ctx: GroundingContext, res: dict, summary: str) -> dict[str, Any]:
    """A refused change or refund of a trip partly flown, as draft fields: the flown flight's status is the evidence;
    as the task's last request the user may insist and be handed over, and is then owed the handover, not the reason."""
    transfer = ctx.insists("after_departure_insists")
    return {"refused": True, "on_refusal": "transfer" if transfer else "accept", "handoff_summary": summary,
            "outputs": [] if transfer else [Output("flown", reason="already_flown")],
            "verify": {"get_flight_status": _flight(_leg(ctx, res, FLOWN))}}

def _pick(ctx: GroundingContext, items: list[dict]) -> dict:
    """A reservation among `items` no earlier intent of the task was about (none: the grounder gives up)."""
    return need(pick_fresh(ctx, items, "reservation_id", "reservation"))

def _days(res: dict) -> int:
    """Days until the reservation's first flight."""
    return days_between(TODAY, res["flights"][0]["date"])

# --------------------------------------------------------------------------- persona

def persona(ctx: GroundingContext) -> Persona | None:
    ids = list(ctx.state["users"])
    draws = (ctx.rng.choice(ids) for _ in range(10))  # up to 10 draws for a user with a reservation
    uid = need(next((u for u in draws if ctx.peek("users", u)["reservations"]), None))
    name = ctx.peek("users", uid)["name"]
    return Persona(name=f"{name['first_name']} {name['last_name']}",
                   facts={"user_id": uid, "first_name": name["first_name"], "last_name": name["last_name"]},
                   reads={"get_user_details": [{"user_id": uid}]}, entity=uid)

# --------------------------------------------------------------------------- change flights

def _flight_choice(ctx: GroundingContext, search: dict, cabin: str, n: int) -> tuple[dict, Choice, list[str]] | None:
    """One of the bookable results of a direct-flight search and the preference that picks it among every itinerary
    the policy allows, one-stop ones included (airline-test-041: a direct flight at $368 was gold while SKY742+SKY760
    at $352 was cheaper); when no preference picks it among them all, the user wants a direct flight and the choice
    is among the direct ones."""
    found = ctx.call("search_direct_flight", search)
    direct = [Option(f["flight_number"], {"price": f["prices"][cabin],
                                          "period": day_period(f["scheduled_departure_time_est"])})
              for f in found if f["available_seats"][cabin] >= n]
    pick = ctx.choose(direct)
    flight = next(f for f in found if f["flight_number"] == pick.value)
    onestop = [Option("+".join(f["flight_number"] for f in pair),
                      {"price": sum(f["prices"][cabin] for f in pair),
                       "period": day_period(pair[0]["scheduled_departure_time_est"])})
               for pair in ctx.call("search_onestop_flight", search)
               if all(f["available_seats"][cabin] >= n for f in pair)]
    for options, kind in ((direct + onestop, ""), (direct, "direct ")):
        if len(options) == 1:
            return flight, Choice("flight", pick.value, options), ["take a direct flight"] if kind else []
        cheapest = Choice("flight", pick.value, options, order=("price", "min"))
        by_period = Choice("flight", pick.value, options, {"period": pick.attrs["period"]})
        ways = [(cheapest, [f"take the cheapest {kind}option" if not kind else "take the cheapest direct flight"]),
                (by_period, [f"take the {pick.attrs['period']} {kind}flight"])]
        if not ctx.chance("cheapest_flight"):
            ways.reverse()
        for choice, said in ways:
            if choice.resolve() == [pick.value]:
                return flight, choice, said
    return None

def _change_date(ctx: GroundingContext) -> IntentDraft | None:
    challenge = ctx.want_challenge and ctx.chance("basic_economy_challenge")
    wanted = ("basic_economy",) if challenge else ("economy", "business")
    items = [r for r in _reservations(ctx) if r["cabin"] in wanted and _future(ctx, r)
             and (r["flight_type"], len(r["flights"])) in (("one_way", 1), ("round_trip", 2))]
    res = _pick(ctx, items)
    n = len(res["passengers"])
    which = ctx.rng.randrange(len(res["flights"]))
    leg = res["flights"][which]
    new_date = shift_date(leg["date"], ctx.rng.choice([-2, -1, 1, 2, 3]))
    other = res["flights"][1 - which]["date"] if len(res["flights"]) == 2 else None
    need("2024-05-16" <= new_date <= "2024-05-30"
         and not (other and (new_date >= other if which == 0 else new_date <= other)))  # the legs stay in order
    search = {"origin": leg["origin"], "destination": leg["destination"], "date": new_date}
    flight, choice, prefs = need(_flight_choice(ctx, search, res["cabin"], n))
    flights = [_flight(f) for f in res["flights"]]
    flights[which] = {"flight_number": flight["flight_number"], "date": new_date}
    new_price = flight["prices"][res["cabin"]]
    diff = (new_price - leg["price"]) * n
    expression, _ = difference(new_price, leg["price"], n)  # the figure told: no sign
    ref = _ref(ctx, res)
    part = "" if len(res["flights"]) == 1 else ("the outbound flight of " if which == 0 else "the return flight of ")
    request = [f"move {part}{ref.phrase} from {month_day(leg['date'])} to {month_day(new_date)}",
               f"change {part}{ref.phrase} to fly on {month_day(new_date)} instead of {month_day(leg['date'])}"]
    mood = Mood("{{my}} plans moved, so {{I}} need to fly on another day", "neutral", 1, days_between(TODAY, min(leg["date"], new_date)))
    if challenge:
        return draft("change_flight_basic_economy", "update_reservation_flights",
                     {"reservation_id": res["reservation_id"], "cabin": res["cabin"], "flights": flights,
                      "payment_id": next(iter(_user(ctx)["payment_methods"]))},
                     request, ref, facts={"new_travel_date": new_date},
                     refusal=Refusal("basic_economy", "basic economy"),
                     mood=Mood("{{I}} want to move {{my}} flight and fear it may not be allowed", "negative", 2,
                               days_between(TODAY, leg["date"])))
    pid, pay_choice, pay_facts, pay_phrase = need(_payment(ctx, max(diff, 0), refund=diff < 0))
    return draft("change_flight", "update_reservation_flights",
                 {"reservation_id": res["reservation_id"], "cabin": res["cabin"], "flights": flights, "payment_id": pid},
                 request, ref, facts={"new_travel_date": new_date, **pay_facts},
                 reads={"search_direct_flight": [search], "calculate": [{"expression": expression}]},
                 choices=[choice, pay_choice], outputs=[Output(money(abs(diff)), "the fare difference")] if diff else [],
                 preferences=[*prefs, pay_phrase], mood=mood,
                 decline="keep {{my}} original flight" if diff > 0 else None)

def _change_cabin(ctx: GroundingContext) -> IntentDraft | None:
    if ctx.want_challenge:
        items = [r for r in _reservations(ctx) if r["status"] == "active" and r["cabin"] != "business"
                 and _leg(ctx, r, FLOWN) and _leg(ctx, r, ("available",))]
        res = _pick(ctx, items)
        ref = _ref(ctx, res)
        return draft("upgrade_after_departure", "update_reservation_flights",
                     {"reservation_id": res["reservation_id"], "cabin": "business",
                      "flights": [_flight(f) for f in res["flights"]], "payment_id": next(iter(_user(ctx)["payment_methods"]))},
                     [f"upgrade {ref.phrase} to business class for the rest of the trip"], ref,
                     **_after_departure(ctx, res, f"User wants to upgrade reservation {res['reservation_id']} after part of it was flown."),
                     mood=Mood("{{I}} want a more comfortable seat for the rest of {{my}} trip", "negative", 1, 0))
    res = _pick(ctx, [r for r in _reservations(ctx) if _future(ctx, r)])
    cabin = ctx.rng.choice([c for c in ("economy", "business") if c != res["cabin"]])
    n = len(res["passengers"])
    entries = [ctx.peek("flights", leg["flight_number"])["dates"][leg["date"]] for leg in res["flights"]]
    need(all(e["available_seats"][cabin] >= n for e in entries))
    new_prices = [e["prices"][cabin] for e in entries]
    searches = [{"origin": leg["origin"], "destination": leg["destination"], "date": leg["date"]} for leg in res["flights"]]
    searches = [s for i, s in enumerate(searches) if s not in searches[:i]]  # a round trip on one day: one search
    old = [leg["price"] for leg in res["flights"]]
    diff = (sum(new_prices) - sum(old)) * n
    high, low = (new_prices, old) if diff >= 0 else (old, new_prices)
    expression = f"({' + '.join(map(str, high))} - {' - '.join(map(str, low))}) * {n}"
    pid, pay_choice, pay_facts, pay_phrase = need(_payment(ctx, max(diff, 0), refund=diff < 0))
    ref = _ref(ctx, res)
    flights = [_flight(f) for f in res["flights"]]
    verb = "upgrade" if cabin == "business" or res["cabin"] == "basic_economy" else "change"
    return draft("change_cabin", "update_reservation_flights",
                 {"reservation_id": res["reservation_id"], "cabin": cabin, "flights": flights, "payment_id": pid},
                 [f"{verb} {ref.phrase} to {cabin} class, same flights", f"{verb} the cabin of {ref.phrase} to {cabin}"],
                 ref, facts={"new_cabin": cabin, **pay_facts},
                 reads={"search_direct_flight": searches, "calculate": [{"expression": expression}]},
                 choices=[pay_choice], outputs=[Output(money(abs(diff)), "the price difference")] if diff else [],
                 decline="keep {{my}} current cabin" if diff > 0 else None,
                 preferences=[pay_phrase],
                 mood=Mood("{{I}} want to travel in " + cabin, "positive" if verb == "upgrade" else "neutral", 1, _days(res)))

def ground_update_reservation_flights(ctx: GroundingContext) -> IntentDraft | None:
    first, second = (_change_date, _change_cabin) if ctx.chance("date_change_first") else (_change_cabin, _change_date)
    return first_grounded(ctx, first, second)

# --------------------------------------------------------------------------- bags and passengers

def ground_update_reservation_baggages(ctx: GroundingContext) -> IntentDraft | None:
    user = _user(ctx)
    res = _pick(ctx, [r for r in _reservations(ctx) if _future(ctx, r)])
    ref = _ref(ctx, res)
    n = len(res["passengers"])
    if ctx.want_challenge and res["total_baggages"] >= 1:
        total = res["total_baggages"] - 1
        return draft("remove_bag", "update_reservation_baggages",
                     {"reservation_id": res["reservation_id"], "total_baggages": total,
                      "nonfree_baggages": min(res["nonfree_baggages"], total),
                      "payment_id": next(iter(user["payment_methods"]))},
                     [f"remove one checked bag from {ref.phrase}", f"take one of the checked bags off {ref.phrase}"],
                     ref, facts={"checked_bags_wanted": total}, refusal=Refusal("bags_not_removable", "removed"),
                     mood=Mood("{{I}} packed lighter than planned" + (" and want {{my}} money back for a bag"
                                                                      if res["nonfree_baggages"] else ""),
                               "neutral", 1, _days(res)))
    added = ctx.rng.choice([1, 1, 2, 3])
    total = res["total_baggages"] + added
    nonfree = max(0, total - FREE_BAGS[user["membership"]][res["cabin"]] * n)
    need(nonfree >= res["nonfree_baggages"])
    expression, fee = bill((BAG_FEE, nonfree - res["nonfree_baggages"]))
    pid, pay_choice, pay_facts, pay_phrase = need(_payment(ctx, fee))
    bags = "one checked bag" if added == 1 else f"{added} checked bags"
    reads = {"calculate": [{"expression": expression}]} if fee else {}
    return draft("add_bags", "update_reservation_baggages",
                 {"reservation_id": res["reservation_id"], "total_baggages": total, "nonfree_baggages": nonfree,
                  "payment_id": pid},
                 [f"add {bags} to {ref.phrase}" + (f", {total} in total" if total != added else ""),
                  f"put {bags} more on {ref.phrase}" + (f", so {total} in total" if total != added else "")],
                 ref, facts={"total_checked_bags": total, **pay_facts}, reads=reads, choices=[pay_choice],
                 outputs=[Output(money(fee), "the bag fee")] if fee else [], preferences=[pay_phrase] if fee else [],
                 policy_values=[nonfree],
                 decline="travel with the bags {{I}} already {{have}}" if fee else None,
                 mood=Mood("{{I}} need to bring more luggage than planned", "neutral", 0, _days(res)))

#: paying part of a booking with a gift card or a travel certificate: (source, choice, the user's words, the fact)
_SPLITS = {"gift": ("gift_card", "gift card", "all of {{my}} gift card", "the whole gift card"),
           "cert": ("certificate", "travel certificate", "{{my}} travel certificate", "the travel certificate")}

_NEW_PEOPLE = [("Lucia", "Fernandes", "1962-03-17"), ("Omar", "Haddad", "1985-11-02"), ("Mina", "Park", "1993-07-21"),
               ("Tobias", "Keller", "1978-01-30"), ("Ines", "Duarte", "2001-09-12"), ("Ravi", "Menon", "1969-05-08"),
               ("Sofia", "Lindqvist", "1990-12-24"), ("Kwame", "Asante", "1987-04-15")]

def ground_update_reservation_passengers(ctx: GroundingContext) -> IntentDraft | None:
    res = _pick(ctx, [r for r in _reservations(ctx) if _future(ctx, r)])
    ref = _ref(ctx, res)
    passengers = [dict(p) for p in res["passengers"]]
    first, last, dob = ctx.rng.choice(_NEW_PEOPLE)
    newcomer = {"first_name": first, "last_name": last, "dob": dob}
    mood = Mood("someone else has to travel on {{my}} booking", "negative", 1, _days(res))
    if ctx.want_challenge and len(passengers) < 5:
        return draft("add_passenger", "update_reservation_passengers",
                     {"reservation_id": res["reservation_id"], "passengers": [*passengers, newcomer]},
                     [f"add {first} {last} (born {_birthday(dob)}) as another passenger on {ref.phrase}"], ref,
                     facts={"new_passenger": newcomer}, refusal=Refusal("passengers_fixed", "number of passengers"),
                     mood=Mood("{{I}} want {{my}} friend to come along on the same flights", "positive", 1, _days(res)))
    k = ctx.rng.randrange(len(passengers))
    name = f"{passengers[k]['first_name']} {passengers[k]['last_name']}"
    # the caller speaks of themself in the first person ("my date of birth", "my seat"), never by their own name
    me = (passengers[k]["first_name"], passengers[k]["last_name"]) == (ctx.persona.facts.get("first_name"),
                                                                       ctx.persona.facts.get("last_name"))
    # a correction agrees with the database's other records of that person (their profile, saved passengers, other
    # bookings): one that records another date is corrected to it; one the records agree with is no error to fix
    records = birth_records(ctx.state, res["user_id"], passengers[k]["first_name"], passengers[k]["last_name"],
                            skip=res["reservation_id"]) - {passengers[k]["dob"]}
    elsewhere = birth_records(ctx.state, res["user_id"], passengers[k]["first_name"], passengers[k]["last_name"],
                              skip=res["reservation_id"])
    if ctx.chance("fix_birth_date") and (len(records) == 1 or not elsewhere):
        shifted = next(iter(records)) if records else \
            shift_date(passengers[k]["dob"], ctx.rng.choice([-400, -31, 1, 10, 365]))
        passengers[k] = {**passengers[k], "dob": shifted}
        kind, facts = "fix_passenger", {"passenger_to_correct": name, "correct_dob": shifted}
        request = [f"correct {{{{my}}}} date of birth on {ref.phrase} to {_birthday(shifted)}" if me else
                   f"correct the date of birth of {name} on {ref.phrase} to {_birthday(shifted)}"]
        mood = Mood("a date of birth on {{my}} booking is wrong", "neutral", 1, mood.days_left)
    else:
        passengers[k] = newcomer
        kind, facts = "replace_passenger", {"passenger_to_replace": name, "new_passenger": newcomer}
        request = [f"give {{{{my}}}} seat on {ref.phrase} to {first} {last} (born {_birthday(dob)})" if me else
                   f"replace {name} with {first} {last} (born {_birthday(dob)}) on {ref.phrase}"]
    if me:  # the passenger is the caller, whose name the agent has: no "the passenger ... is <my own name>"
        facts = {k_: v for k_, v in facts.items() if k_ not in ("passenger_to_correct", "passenger_to_replace")}
    return draft(kind, "update_reservation_passengers",
                 {"reservation_id": res["reservation_id"], "passengers": passengers}, request, ref, facts=facts,
                 mood=mood)

# --------------------------------------------------------------------------- cancel and compensate

def _flies(ctx: GroundingContext, res: dict) -> bool:
    """Whether the caller is a passenger of the reservation (the booker may have booked it for others)."""
    me = (ctx.persona.facts.get("first_name"), ctx.persona.facts.get("last_name"))
    return any((p.get("first_name"), p.get("last_name")) == me for p in res.get("passengers", []))

def _cancel_grounds(ctx: GroundingContext, res: dict) -> str | None:
    """The first of the policy's grounds for a refunded cancellation the reservation has (None: none)."""
    grounds = {"recent": res["created_at"] >= "2024-05-14T15:00:00", "airline": _leg(ctx, res, ("cancelled",)),
               "business": res["cabin"] == "business", "insured": res["insurance"] == "yes"}
    return next((name for name, holds in grounds.items() if holds), None)

_REASONS = {
    "recent": ("{{my}} plans changed", "change of plans"),
    "airline": ("the airline cancelled one of {{my}} flights", "the airline cancelled a flight"),
    "business": ("{{I}} no longer need to travel", "change of plans"),
    "insured": ("{{I}} {{am}} sick and {{my}} doctor says {{I}} should not fly", "health: doctor advised not to fly"),
    "weather": ("a big storm is forecast where {{I}} {{am}} going", "weather: a storm is forecast"),
    # a booking made for others: the storm is where the trip goes, not where the caller is going
    "weather_there": ("a big storm is forecast where the trip goes", "weather: a storm is forecast"),
    "none": ("{{I}} would rather not travel after all", "change of plans"),
    # a trip partly flown: the traveller's plans changed on the way (not "would rather not travel", which the
    # situation check refuses for a trip that started)
    "flown": ("{{I}} no longer need the rest of {{my}} trip", "change of plans"),
}

def ground_cancel_reservation(ctx: GroundingContext) -> IntentDraft | None:
    active = [r for r in _reservations(ctx) if r["status"] == "active"]
    unflown = [r for r in active if not _leg(ctx, r, FLOWN)]
    if ctx.want_challenge:
        # partly flown: "the rest of my trip" needs a leg still ahead (a trip flown in full has no rest to cancel)
        # and a ground for a refund were it not flown: else the refusal has two grounds and the gold names one
        # (airline-test-058: partly flown and basic economy booked weeks ago, uninsured)
        flown = [r for r in active if _leg(ctx, r, FLOWN) and any(leg["date"] >= TODAY for leg in r["flights"])
                 and _cancel_grounds(ctx, r) is not None]
        stuck = [r for r in unflown if _cancel_grounds(ctx, r) is None]
        # the branch is drawn first: with few partly flown trips left that have a ground for a refund, "the rest of
        # the trip" is rarer, and an uncovered cancellation must not take its share of the challenges instead
        res = _pick(ctx, stuck if ctx.chance("uncovered_cancellation") else flown)
        ref = _ref(ctx, res)
        # "would rather not travel" is a traveller's words: a caller who booked for others says their plans changed
        reason, said = _REASONS["flown" if res in flown else "none" if _flies(ctx, res) else "recent"]
        if res in flown:
            return draft("cancel_after_departure", "cancel_reservation", {"reservation_id": res["reservation_id"]},
                         [f"cancel {ref.phrase} and refund it"], ref, facts={"cancellation_reason": said},
                         context=reason, **_after_departure(ctx, res, f"User wants to cancel reservation {res['reservation_id']}, partly flown."),
                         mood=Mood("{{I}} want {{my}} money back for this booking", "negative", 2, 0))
        return draft("cancel_not_allowed", "cancel_reservation", {"reservation_id": res["reservation_id"]},
                     [f"cancel {ref.phrase} and get a refund"], ref, facts={"cancellation_reason": said},
                     refusal=Refusal("cancel_not_covered", "insurance"), context=reason,
                     mood=Mood("{{I}} changed {{my}} mind about a trip", "negative", 2, _days(res)))
    res = _pick(ctx, [r for r in unflown if _cancel_grounds(ctx, r)])
    grounds = _cancel_grounds(ctx, res)
    # the caller's own words fit whether they fly: one who booked for others is not sick, going or travelling
    aboard = _flies(ctx, res)
    reason, said = _REASONS["weather" if grounds == "insured" and ctx.chance("storm_at_home") else
                            "weather_there" if grounds == "insured" and not aboard else
                            "recent" if grounds == "business" and not aboard else grounds]
    if reason.startswith("a big storm") and not aboard:
        reason, said = _REASONS["weather_there"]
    ref = _ref(ctx, res)
    refund = sum(p["amount"] for p in res["payment_history"] if not p["payment_id"].startswith("certificate_"))
    # the airline's own cancellation: its flight's status shows it
    verify = {"get_flight_status": _flight(_leg(ctx, res, ("cancelled",)))} if grounds == "airline" else {}
    stakes = 3 if grounds in ("airline", "insured") else 1
    return draft("cancel", "cancel_reservation", {"reservation_id": res["reservation_id"]},
                 [f"cancel {ref.phrase}", f"cancel {ref.phrase} and get {{{{my}}}} money back"], ref,
                 facts={"cancellation_reason": said}, verify=verify, context=reason,
                 outputs=[Output(money(refund), "the refund total", from_goal=True)] if refund > 0 else [],
                 mood=Mood(reason, "negative" if grounds in ("airline", "insured") else "neutral", stakes, _days(res)))

#: the certificate per passenger for a cancelled or a delayed flight
_COMPENSATION = {"cancelled": 100, "delayed": 50}

def ground_send_certificate(ctx: GroundingContext) -> IntentDraft | None:
    user = _user(ctx)
    # a disrupted flight, on a reservation that qualifies for compensation (or, for a challenge, does not)
    wanted = [(res, leg) for res in _reservations(ctx) if (leg := _leg(ctx, res, ("cancelled", "delayed")))
              and (user["membership"] in ("silver", "gold") or res["insurance"] == "yes" or res["cabin"] == "business")
              != ctx.want_challenge]
    used = used_by_earlier_intents(ctx, "reservation_id", "reservation")
    res, leg = ctx.choose([w for w in wanted if w[0]["reservation_id"] in used] or wanted)
    ref, n, status = _ref(ctx, res, cities=False), len(res["passengers"]), _status(ctx, leg)
    event = "was cancelled by the airline" if status == "cancelled" else "is delayed"
    context = f"{{{{my}}}} flight from {_place(ctx, leg['origin'])} to {_place(ctx, leg['destination'])} on {month_day(leg['date'])} {event}"
    mood = Mood(context, "negative", 3 if status == "cancelled" else 2, days_between(TODAY, leg["date"]))
    on = f" on reservation {res['reservation_id']}" if "reservation_id" in ref.facts else ""  # as the caller has it
    request = ["get some compensation for the " + ("cancellation" if status == "cancelled" else "delay") + on,
               "see what {{agent}} can offer {{me}} for the " + ("cancelled flight" if status == "cancelled" else "delay") + on]
    amount = _COMPENSATION[status] * n
    args = {"user_id": user["user_id"], "amount": amount, "reservation_id": res["reservation_id"]}
    verify = {"get_flight_status": _flight(leg)}
    if ctx.want_challenge:
        return draft("compensation_not_eligible", "send_certificate", args, request, ref,
                     refusal=Refusal("compensation_not_eligible", "insurance"), context=context, verify=verify, mood=mood)
    # the certificate for this disruption, not for another flight of the trip disrupted otherwise
    reasons = [status, *sorted({_status(ctx, f) for f in res["flights"]} & set(_COMPENSATION) - {status})]
    options = [Option(_COMPENSATION[s] * n, {"reason": s}) for s in reasons]
    return draft("compensation", "send_certificate", args, request, ref, context=context, verify=verify,
                 choices=[Choice("certificate amount", amount, options, {"reason": status})], policy_values=[amount],
                 outputs=[Output(str(amount), "the value of the certificate")], mood=mood)

# --------------------------------------------------------------------------- booking

def ground_book_reservation(ctx: GroundingContext) -> IntentDraft | None:
    rng = ctx.rng
    user = _user(ctx)
    airports = list(ctx.state["airports"])
    origin, destination = rng.sample(airports, 2)
    date = shift_date("2024-05-16", rng.randrange(12))
    cabin = rng.choice(["economy", "economy", "business", "basic_economy"])
    party = [{"first_name": user["name"]["first_name"], "last_name": user["name"]["last_name"], "dob": user["dob"]}]
    facts: dict[str, Any] = {}
    if ctx.chance("companion"):
        if user["saved_passengers"] and ctx.chance("saved_companion"):
            other = dict(rng.choice(user["saved_passengers"]))
            facts["companion_name"] = f"{other['first_name']} {other['last_name']}"
        else:
            first, last, dob = rng.choice(_NEW_PEOPLE)
            other = {"first_name": first, "last_name": last, "dob": dob}
            facts["companion"] = other
        party.append(other)
    n = len(party)
    round_trip = ctx.chance("round_trip")
    reads: dict[str, list[dict]] = {}
    choices: list[Choice] = []
    prefs: list[str] = []
    legs: list[tuple[str, str, int]] = []  # (number, date, price)
    search = {"origin": origin, "destination": destination, "date": date}
    direct = ctx.call("search_direct_flight", search)
    if direct and ctx.chance("nonstop"):
        flight, choice, more = need(_flight_choice(ctx, search, cabin, n))
        reads["search_direct_flight"] = [search]
        choices.append(choice)
        prefs += ["fly nonstop", *more]
        legs.append((flight["flight_number"], date, flight["prices"][cabin]))
    else:
        need(not direct)
        pairs = need([p for p in ctx.call("search_onestop_flight", search) if all(f["available_seats"][cabin] >= n for f in p)])
        totals = [p[0]["prices"][cabin] + p[1]["prices"][cabin] for p in pairs]
        need(totals.count(min(totals)) == 1)  # one cheapest connection for the user to ask for
        pick = pairs[totals.index(min(totals))]
        prefs += ["take the cheapest connection"] if len(pairs) > 1 else []
        reads["search_direct_flight"], reads["search_onestop_flight"] = [search], [dict(search)]
        for what, (i, key) in {"connection": (0, "flight_number"), "connecting flight": (1, "flight_number"),
                               "connection date": (1, "date")}.items():  # each said as "the cheapest"
            options = [Option(p[i][key], {"price": total}) for p, total in zip(pairs, totals, strict=True)]
            choices.append(Choice(what, pick[i][key], options, order=("price", "min")))
        legs += [(f["flight_number"], f["date"], f["prices"][cabin]) for f in pick]
        round_trip = False
    back_date = None
    if round_trip:
        back_date = shift_date(date, rng.randrange(2, 6))
        need(back_date <= "2024-05-30")
        back = {"origin": destination, "destination": origin, "date": back_date}
        flight, choice, more = need(_flight_choice(ctx, back, cabin, n))
        reads["search_direct_flight"].append(back)
        choices.append(choice)
        prefs += [p.replace("option", "return option").replace(" flight", " return flight") for p in more]
        legs.append((flight["flight_number"], back_date, flight["prices"][cabin]))
    insurance = rng.choice(["yes", "no"])
    bags = rng.choice([0, 0, 1, 2, 3])
    nonfree = max(0, bags - FREE_BAGS[user["membership"]][cabin] * n)
    expression, total = bill(([price for *_, price in legs], n), (INSURANCE_PER_PASSENGER, n if insurance == "yes" else 0),
                             (BAG_FEE, nonfree))
    expressions = [expression]
    methods = user["payment_methods"]
    certificates = [pid for pid, m in methods.items() if m["source"] == "certificate"]
    challenge = ctx.want_challenge and len(certificates) >= 2
    if challenge:
        first, second = certificates[:2]
        split = [{"payment_id": first, "amount": methods[first]["amount"]},
                 {"payment_id": second, "amount": round(total - methods[first]["amount"], 2)}]
        payment_words = "pay with both of {{my}} travel certificates together"
        payment_fact = "both travel certificates, nothing else"
    else:
        pay = need(pick_instrument(ctx, "credit card", instrument_options(methods),
                                   lambda o: methods[o.value]["source"] == "credit_card"))
        choices.append(pay.choice)
        split = [{"payment_id": pay.value, "amount": total}]
        payment_words, payment_fact = f"pay with {{{{my}}}} {pay.words}", f"the {pay.words}"
        source, what, words, fact = _SPLITS.get(rng.choice(["card", "gift", "cert"]), ("", "", "", ""))
        # "my gift card" must name one card: only users with a single gift card (certificate) split this way
        extra = [pid for pid, m in methods.items() if m["source"] == source]
        if len(extra) == 1 and 0 < methods[extra[0]]["amount"] < total:
            part = methods[extra[0]]["amount"]
            kinds = [Option(pid, {"kind": m["source"]}) for pid, m in methods.items()]
            choices.append(Choice(what, extra[0], kinds, {"kind": source}))
            split = [{"payment_id": extra[0], "amount": part}, {"payment_id": pay.value, "amount": round(total - part, 2)}]
            expressions.append(f"{money(total)} - {part}")
            payment_words = f"use {words} and put the rest on {{{{my}}}} {pay.words}"
            payment_fact = f"{fact}, the rest on the {pay.words}"
    tell_codes = ctx.chance("airport_codes")
    if not tell_codes:  # the user names cities: the agent finds their airports
        options = [Option(c, {"city": _place(ctx, c)}) for c in airports]
        choices += [Choice("airport", code, options, {"city": _place(ctx, code)}) for code in (origin, destination)]
        reads["list_all_airports"] = [{}]
    where = (lambda c: f"{_place(ctx, c)} ({c})") if tell_codes else (lambda c: _place(ctx, c))
    facts.update({"origin": where(origin), "destination": where(destination), "travel_date": date,
                  "trip_type": "round trip" if round_trip else "one way", "cabin": cabin.replace("_", " "),
                  "checked_bags": bags, "travel_insurance": insurance, "payment": payment_fact,
                  **({"return_date": back_date} if back_date else {})})
    reads["calculate"] = [{"expression": e} for e in expressions]
    who = "just for {{me}}" if n == 1 else ("for {{me}} and " + (facts.get("companion_name")
                                                                   or f"{party[1]['first_name']} {party[1]['last_name']} (born {_birthday(party[1]['dob'])})"))
    trip = (f"a round trip from {where(origin)} to {where(destination)}, leaving {month_day(date)} and returning {month_day(back_date)}"
            if back_date else f"a one-way trip from {where(origin)} to {where(destination)} on {month_day(date)}")
    request = [f"book {trip} in {cabin.replace('_', ' ')}, {who}",
               f"get {trip} booked, {cabin.replace('_', ' ')} class, {who}"]
    flights = [{"flight_number": num, "date": d} for num, d, _ in legs]
    arguments = {"user_id": user["user_id"], "origin": origin, "destination": destination,
                 "flight_type": "round_trip" if round_trip else "one_way", "cabin": cabin, "flights": flights,
                 "passengers": party, "payment_methods": split, "total_baggages": bags, "nonfree_baggages": nonfree,
                 "insurance": insurance}
    return IntentDraft(kind="book_two_certificates" if challenge else "book", goal="book_reservation",
                       arguments=arguments, request=request, facts=facts, reads=reads, choices=choices,
                       outputs=[Output(money(total), "the total price")],
                       preferences=[*prefs, _bag_words(bags), _insurance([insurance]), payment_words],
                       refused=challenge, policy_values=[nonfree], decline="hold off on booking",
                       mood=Mood("{{I}} want to book a trip", "positive", 1, days_between(TODAY, date)))

# --------------------------------------------------------------------------- flight status

def ground_get_flight_status(ctx: GroundingContext) -> IntentDraft | None:
    def news(leg: dict) -> bool:  # a flight of today, or a later one the airline cancelled
        status = _status(ctx, leg)
        return leg["date"] == TODAY and status in ("on time", "delayed", "cancelled", *FLOWN) or (
            leg["date"] > TODAY and status == "cancelled")

    used = used_by_earlier_intents(ctx, "reservation_id", "reservation")
    user = _user(ctx)
    on_board = lambda r: any(p["first_name"] == user["name"]["first_name"] and p["last_name"] == user["name"]["last_name"]  # noqa: E731
                             for p in r["passengers"])  # "my flight" is one the caller flies on, still booked
    res, leg = ctx.choose([(r, leg) for r in _reservations(ctx) if r["reservation_id"] not in used
                           and r.get("status") != "cancelled" and on_board(r)
                           and (leg := next((leg for leg in r["flights"] if news(leg)), None))])
    status = _status(ctx, leg)
    ref = _ref(ctx, res, cities=False)
    when = "today" if leg["date"] == TODAY else f"on {month_day(leg['date'])}"
    flight = f"{{{{my}}}} flight from {_place(ctx, leg['origin'])} to {_place(ctx, leg['destination'])} {when}"
    facts = {"flight_date": leg["date"]}
    if ctx.chance("flight_number"):
        facts["flight_number"] = leg["flight_number"]
        flight += f" ({leg['flight_number']})"
    # a reservation number the caller gives is said with the flight, as a customer reads it off the booking
    asked = flight + (f" on reservation {res['reservation_id']}" if "reservation_id" in ref.facts else "")
    return draft("flight_status", "get_flight_status", {"flight_number": leg["flight_number"], "date": leg["date"]},
                 [f"check whether {asked} is on schedule", f"find out the status of {asked}"], ref, facts=facts,
                 outputs=[Output(status)],
                 mood=Mood("{{I}} {{am}} not sure " + flight + " is going as planned", "negative", 2,
                           days_between(TODAY, leg["date"])))

HINTS = TracerHints(
    persona=persona,
    goals=goals_in(globals()),  # each ground_<tool> function above grounds <tool>
    # few users have a disrupted flight or a changeable one: draw those goals more often
    goal_weights={"send_certificate": 2.5, "update_reservation_flights": 2.0, "get_flight_status": 0.7,
                  "book_reservation": 0.8, "update_reservation_passengers": 0.7},
    entry_tools=["get_user_details"],
    # the policy: read a reservation before compensating for it (the graph declares the other policy successions)
    policy_edges=[("get_reservation_details", "send_certificate")],
    occasions=OCCASIONS,
    # a cancellation states its own reason ("plans changed"): no occasion goes with it
    occasion_intents=["change_flight", "change_flight_basic_economy", "change_cabin", "upgrade_after_departure",
                      "add_bags", "remove_bag", "add_passenger", "fix_passenger", "replace_passenger", "compensation",
                      "compensation_not_eligible", "book", "book_two_certificates", "flight_status"],
    fact_phrase=fact_phrase,
    # a customer knows their user id and reservation codes; payment records (gift_card_6014963) are internal
    visible_ids=frozenset({"user_id", "reservation_id"}),
    situation=situation,
    world=world,
    rates=AirlineRates(),
)
