"""Tools of the movie domain: a cinema chain's customers, showtimes, seat maps, bookings and memberships.

Every tool is a typed function over the episode's database `State`. Tools do what they are asked
when it is mechanically possible (the seats exist and are free, the payment method is the
customer's, a gift card covers the charge, the membership has the credits) and raise `ToolError`
otherwise; whether an action is *allowed* by the policy (nothing after a showtime starts, age
ratings, credit rules, one exchange per booking, group refund windows) is the agent's call,
checked separately by the pack's `rules.py`.

Tools never read the clock or draw random numbers: now is the constant `NOW`, and new ids are
derived from a hash of the request and the rows that already exist, so replaying the same calls
always produces the same database.
"""

from __future__ import annotations

import datetime as _dt
from functools import lru_cache
from typing import Any, Literal

from typing_extensions import TypedDict

from tau_emotion.core.state import State
from tau_emotion.core.tools import ToolError, find_row, tool
from tau_emotion.domain_packs.values import arithmetic
from tau_emotion.domain_packs.values import digest as _digest
from tau_emotion.domain_packs.values import money as _money
from tau_emotion.domain_packs.values import new_id as _new_id

TODAY = "2025-06-14"
NOW = "2025-06-14T15:00"
MONTH_START = "2025-06-01"
GROUP_SIZE = 10  # a booking of this many tickets or more is a group booking
GROUP_DISCOUNT = 0.10  # off every ticket of a group booking
EXCHANGE_FEE = 2  # per ticket, when the customer has no active membership
CODE_CHARS = "ABCDEFGHJKLMNPQRSTUVWXYZ23456789"

TicketType = Literal["adult", "child", "senior"]
TierCode = Literal["TIER_STANDARD", "TIER_PREMIUM"]


class TicketSpec(TypedDict):
    """One ticket of a booking: the seat (row letter and number, such as 'F7') and the ticket type."""

    seat: str
    type: TicketType


# --------------------------------------------------------------------------- helpers


def _confirmation_code(db: State, *parts: Any) -> str:
    bookings = db["bookings"]
    for attempt in range(1000):
        n = int(_digest("code", attempt, *parts), 16)
        code = "".join(CODE_CHARS[(n >> (5 * i)) % len(CODE_CHARS)] for i in range(6))
        if next(bookings.where(_code_of, code), None) is None:
            return code
    raise ToolError("could not allocate a confirmation code")  # pragma: no cover


def hours_until(start: str) -> float:
    """Hours from `NOW` to a showtime's start ('YYYY-MM-DDTHH:MM'); negative once it has started."""
    delta = _dt.datetime.fromisoformat(start) - _dt.datetime.fromisoformat(NOW)
    return delta.total_seconds() / 3600


def _code_of(booking: dict) -> str:
    return booking["confirmation_code"]


def _day_of(show: dict) -> str:
    return show["start"].partition("T")[0]


def screen_seats(theatre: dict, screen: str) -> list[str]:
    """Every seat of a screen, row by row ('A1', 'A2', ...)."""
    layout = next((s for s in theatre["screens"] if s["screen"] == screen), None)
    if layout is None:
        raise ToolError(f"theatre {theatre['theatre_code']} has no screen {screen}")
    return list(_seat_names(layout["rows"], layout["seats_per_row"]))


@lru_cache(maxsize=256)
def _seat_names(rows: int, seats_per_row: int) -> tuple[str, ...]:
    return tuple(f"{chr(ord('A') + r)}{n}" for r in range(rows) for n in range(1, seats_per_row + 1))


def active_membership(db: State, customer: dict) -> dict | None:
    mid = customer.get("membership_id")
    membership = db["memberships"].peek(mid) if mid else None
    return membership if membership and membership["status"] == "active" else None


def _payment_method(customer: dict, payment_id: str) -> dict:
    method = customer["payment_methods"].get(payment_id)
    if method is None:
        raise ToolError(f"payment method '{payment_id}' is not in the profile of customer '{customer['customer_id']}'")
    return method


def _charge(customer: dict, payment_id: str, amount: float) -> None:
    """Charge (or, for a negative amount, refund) a payment method; a gift card must cover a charge."""
    method = customer["payment_methods"][payment_id]
    if method["source"] == "gift_card":
        if amount > method["balance"] + 1e-9:
            raise ToolError(f"gift card {payment_id} has a balance of {method['balance']}, less than {_money(amount)}")
        method["balance"] = _money(method["balance"] - amount)


def _ticket_prices(db: State, showtime: dict, types: list[str]) -> list[float]:
    prices = db["formats"].peek(showtime["format"])
    factor = 1 - GROUP_DISCOUNT if len(types) >= GROUP_SIZE else 1
    return [_money(prices[t] * factor) for t in types]


def _check_seats(db: State, showtime: dict, seats: list[str], own: list[str] = ()) -> None:
    if not seats:
        raise ToolError("at least one seat is needed")
    if len(set(seats)) != len(seats):
        raise ToolError("a seat is listed twice")
    valid = set(screen_seats(db["theatres"].peek(showtime["theatre_code"]), showtime["screen"]))
    taken = set(showtime["taken"]) - set(own)
    for seat in seats:
        if seat not in valid:
            raise ToolError(f"seat {seat} does not exist on screen {showtime['screen']}")
        if seat in taken:
            raise ToolError(f"seat {seat} is already taken for showtime {showtime['showtime_id']}")


def _summary(db: State, booking: dict) -> dict:
    show = db["showtimes"].peek(booking["showtime_id"])
    film = db["films"].peek(show["film_code"])
    return {"booking_id": booking["booking_id"], "confirmation_code": booking["confirmation_code"],
            "film": film["title"], "theatre_code": show["theatre_code"], "start": show["start"],
            "tickets": len(booking["tickets"]), "status": booking["status"]}


# --------------------------------------------------------------------------- look-ups


@tool
def find_customer_by_email(db: State, email: str) -> dict:
    """Find a customer by the email address on their account.

    Args:
        email: The customer's email address, such as 'maya.okafor12@example.com'.
    """
    wanted = email.strip().lower()
    for _, customer in db["customers"].scan():
        if customer["email"] == wanted:
            return {"customer_id": customer["customer_id"], "first_name": customer["name"]["first_name"],
                    "last_name": customer["name"]["last_name"]}
    raise ToolError(f"no customer with email '{email}'")


@tool
def get_customer_details(db: State, customer_id: str) -> dict:
    """Get a customer's profile: name, date of birth, email, payment methods, membership id and their bookings (id, confirmation code, film, theatre, start, tickets, status).

    Args:
        customer_id: The customer's id, such as 'CU104233'.
    """
    customer = find_row(db, "customers", customer_id, "customer")
    bookings = [_summary(db, db["bookings"].peek(b)) for b in customer["booking_ids"]]
    return {**{k: v for k, v in customer.items() if k != "booking_ids"}, "bookings": bookings}


@tool
def get_booking_details(db: State, booking_id: str) -> dict:
    """Get a booking: confirmation code, showtime (film, rating, theatre, screen, format, start), tickets with seat, type, price and how each was paid (card or membership credit), concessions, payment method, total, status and how many times it was exchanged.

    Args:
        booking_id: The booking's id, such as 'BK482913'.
    """
    booking = find_row(db, "bookings", booking_id, "booking")
    show = db["showtimes"].peek(booking["showtime_id"])
    film = db["films"].peek(show["film_code"])
    showtime = {"showtime_id": show["showtime_id"], "film_code": film["film_code"], "film": film["title"],
                "rating": film["rating"], "theatre_code": show["theatre_code"], "screen": show["screen"],
                "format": show["format"], "start": show["start"]}
    return {**booking, "showtime": showtime}


@tool
def get_membership_details(db: State, membership_id: str) -> dict:
    """Get a membership: member number, tier, status, monthly fee, credits left and used this month, credits per showtime, concession discount, renewal date and the date the tier last changed.

    Args:
        membership_id: The membership's id, such as 'MB310442'.
    """
    membership = find_row(db, "memberships", membership_id, "membership")
    tier = db["tiers"].peek(membership["tier_code"])
    return {**membership, "tier": tier["name"], "monthly_fee": tier["monthly_fee"],
            "monthly_credits": tier["monthly_credits"], "credits_per_showtime": tier["credits_per_showtime"],
            "concession_discount": tier["concession_discount"]}


@tool
def get_catalogue(db: State) -> dict:
    """List the films (code, title, age rating, runtime), the theatres and their screens (format, size), ticket prices by format and type, concessions (code, price) and membership tiers (fee, credits, discount)."""
    return {"films": [row for _, row in db["films"].scan()],
            "theatres": [row for _, row in db["theatres"].scan()],
            "ticket_prices": [row for _, row in db["formats"].scan()],
            "concessions": [row for _, row in db["concessions"].scan()],
            "membership_tiers": [row for _, row in db["tiers"].scan()]}


@tool
def list_showtimes(db: State, date: str, film_code: str | None = None, theatre_code: str | None = None) -> list:
    """List the showtimes on a date, optionally of one film and/or at one theatre: id, film, rating, theatre, screen, format, start and free seats.

    Args:
        date: The date, 'YYYY-MM-DD'.
        film_code: Only this film (its code in the catalogue, such as 'FLM_ORBIT'); omit for every film.
        theatre_code: Only this theatre (such as 'TH_HARBOR'); omit for every theatre.
    """
    out = []
    # the day's showtimes through the table's index (a date holding "T" is no day: every showtime is looked at)
    shows = db["showtimes"].scan() if "T" in date else db["showtimes"].where(_day_of, date)
    for _, show in shows:
        if not show["start"].startswith(date + "T"):
            continue
        if film_code not in (None, show["film_code"]) or theatre_code not in (None, show["theatre_code"]):
            continue
        film = db["films"].peek(show["film_code"])
        total = len(screen_seats(db["theatres"].peek(show["theatre_code"]), show["screen"]))
        out.append({"showtime_id": show["showtime_id"], "film_code": film["film_code"], "film": film["title"],
                    "rating": film["rating"], "theatre_code": show["theatre_code"], "screen": show["screen"],
                    "format": show["format"], "start": show["start"], "free_seats": total - len(show["taken"])})
    return sorted(out, key=lambda s: (s["start"], s["theatre_code"], s["screen"]))


@tool
def get_seat_map(db: State, showtime_id: str) -> dict:
    """Get a showtime's seat map: the free seats row by row (row letter and seat numbers; seat 1 is on the aisle).

    Args:
        showtime_id: The showtime's id, such as 'S204117'.
    """
    show = find_row(db, "showtimes", showtime_id, "showtime")
    taken = set(show["taken"])
    rows: dict[str, list[int]] = {}
    for seat in screen_seats(db["theatres"].peek(show["theatre_code"]), show["screen"]):
        rows.setdefault(seat[0], [])
        if seat not in taken:
            rows[seat[0]].append(int(seat[1:]))
    return {"showtime_id": showtime_id, "start": show["start"], "free_seats_by_row": rows,
            "free_seats": sum(len(v) for v in rows.values())}


# --------------------------------------------------------------------------- changes


@tool(writes=True)
def book_tickets(db: State, customer_id: str, showtime_id: str, tickets: list[TicketSpec], payment_id: str,
                 credits: int = 0) -> dict:
    """Book tickets for a showtime: each ticket a free seat and a type (adult, child, senior), priced by the showtime's format; 10 or more tickets are a group booking with 10% off each ticket.

    Membership credits pay for whole tickets (the dearest first); the rest is charged to the payment method.

    Args:
        customer_id: The customer's id.
        showtime_id: The showtime's id.
        tickets: The tickets, each {'seat': 'F7', 'type': 'adult'}.
        payment_id: The payment method (credit card or gift card) from the customer's profile that pays the rest.
        credits: How many tickets to pay with membership credits (0 for none).
    """
    customer = find_row(db, "customers", customer_id, "customer", write=True)
    show = find_row(db, "showtimes", showtime_id, "showtime", write=True)
    _payment_method(customer, payment_id)
    seats = [t["seat"] for t in tickets]
    _check_seats(db, show, seats)
    prices = _ticket_prices(db, show, [t["type"] for t in tickets])
    membership = None
    if credits < 0 or credits > len(tickets):
        raise ToolError(f"credits must be between 0 and the number of tickets ({len(tickets)})")
    if credits:
        if not customer.get("membership_id"):
            raise ToolError(f"customer {customer_id} has no membership, so no credits")
        membership = db["memberships"][customer["membership_id"]]
        if membership["credits_left"] < credits:
            raise ToolError(f"membership {membership['membership_id']} has {membership['credits_left']} credits left")
    by_price = sorted(range(len(tickets)), key=lambda i: -prices[i])
    credited = set(by_price[:credits])
    rows = [{"seat": t["seat"], "type": t["type"], "price": 0 if i in credited else prices[i],
             "paid_with": "credit" if i in credited else "card"} for i, t in enumerate(tickets)]
    total = _money(sum(r["price"] for r in rows))
    _charge(customer, payment_id, total)
    if membership is not None:
        membership["credits_left"] -= credits
        membership["credits_used_this_month"] += credits
    booking_id = _new_id(db, "bookings", "BK", customer_id, showtime_id, seats)
    code = _confirmation_code(db, booking_id)
    db["bookings"][booking_id] = {"booking_id": booking_id, "confirmation_code": code, "customer_id": customer_id,
                                  "showtime_id": showtime_id, "tickets": rows, "concessions": [],
                                  "payment_id": payment_id, "total": total, "status": "confirmed",
                                  "exchanges": 0, "booked_at": NOW}
    customer["booking_ids"].append(booking_id)
    show["taken"] = sorted([*show["taken"], *seats])
    return {"booking_id": booking_id, "confirmation_code": code, "tickets": rows, "credits_used": credits,
            "charged": total, "payment_id": payment_id}


@tool(writes=True)
def exchange_tickets(db: State, booking_id: str, new_showtime_id: str, seats: list[str]) -> dict:
    """Move a booking's tickets to another showtime (any film), keeping each ticket's type and how it was paid.

    The price difference is charged to (or refunded to) the booking's payment method, plus an exchange fee
    of 2 per ticket when the customer has no active membership.

    Args:
        booking_id: The booking's id.
        new_showtime_id: The showtime to move to.
        seats: The new seats, one per ticket, in the order of the booking's tickets.
    """
    booking = find_row(db, "bookings", booking_id, "booking", write=True)
    if booking["status"] != "confirmed":
        raise ToolError(f"booking {booking_id} is {booking['status']}")
    if new_showtime_id == booking["showtime_id"]:
        raise ToolError(f"booking {booking_id} is already for showtime {new_showtime_id}")
    new = find_row(db, "showtimes", new_showtime_id, "showtime", write=True)
    if len(seats) != len(booking["tickets"]):
        raise ToolError(f"booking {booking_id} has {len(booking['tickets'])} tickets; give one seat for each")
    _check_seats(db, new, seats)
    customer = db["customers"][booking["customer_id"]]
    old_total = sum(t["price"] for t in booking["tickets"])
    prices = _ticket_prices(db, new, [t["type"] for t in booking["tickets"]])
    tickets = [{**t, "seat": seat, "price": 0 if t["paid_with"] == "credit" else price}
               for t, seat, price in zip(booking["tickets"], seats, prices, strict=True)]
    difference = _money(sum(t["price"] for t in tickets) - old_total)
    fee = 0 if active_membership(db, customer) else EXCHANGE_FEE * len(tickets)
    _charge(customer, booking["payment_id"], difference + fee)
    old = db["showtimes"][booking["showtime_id"]]
    old["taken"] = sorted(set(old["taken"]) - {t["seat"] for t in booking["tickets"]})
    new["taken"] = sorted([*new["taken"], *seats])
    booking.update(showtime_id=new_showtime_id, tickets=tickets, exchanges=booking["exchanges"] + 1,
                   total=_money(booking["total"] + difference + fee))
    return {"booking_id": booking_id, "showtime_id": new_showtime_id, "seats": seats,
            "price_difference": difference, "exchange_fee": fee, "charged": _money(difference + fee),
            "payment_id": booking["payment_id"]}


@tool(writes=True)
def refund_booking(db: State, booking_id: str) -> dict:
    """Cancel a whole booking and refund it: the amount paid (tickets, concessions and any exchange fees) goes back to the payment method, membership credits go back to the membership, and the seats are freed.

    Args:
        booking_id: The booking's id.
    """
    booking = find_row(db, "bookings", booking_id, "booking", write=True)
    if booking["status"] != "confirmed":
        raise ToolError(f"booking {booking_id} is {booking['status']}")
    customer = db["customers"][booking["customer_id"]]
    _charge(customer, booking["payment_id"], -booking["total"])
    credits = sum(t["paid_with"] == "credit" for t in booking["tickets"])
    if credits and customer.get("membership_id"):
        membership = db["memberships"][customer["membership_id"]]
        membership["credits_left"] += credits
        membership["credits_used_this_month"] = max(0, membership["credits_used_this_month"] - credits)
    show = db["showtimes"][booking["showtime_id"]]
    show["taken"] = sorted(set(show["taken"]) - {t["seat"] for t in booking["tickets"]})
    booking["status"] = "refunded"
    return {"booking_id": booking_id, "refunded": booking["total"], "credits_returned": credits,
            "payment_id": booking["payment_id"], "status": "refunded"}


@tool(writes=True)
def add_concessions(db: State, booking_id: str, item_code: str, quantity: int) -> dict:
    """Pre-order concessions (popcorn, drinks, snacks) on a booking, to collect at the counter; an active membership's concession discount applies and the booking's payment method pays.

    Args:
        booking_id: The booking's id.
        item_code: The concession's code in the catalogue, such as 'CON_POPCORN_L'.
        quantity: How many.
    """
    booking = find_row(db, "bookings", booking_id, "booking", write=True)
    if booking["status"] != "confirmed":
        raise ToolError(f"booking {booking_id} is {booking['status']}")
    item = find_row(db, "concessions", item_code, "concession")
    if quantity < 1:
        raise ToolError("the quantity must be at least 1")
    customer = db["customers"][booking["customer_id"]]
    membership = active_membership(db, customer)
    discount = db["tiers"].peek(membership["tier_code"])["concession_discount"] if membership else 0
    price = _money(item["price"] * quantity * (1 - discount))
    _charge(customer, booking["payment_id"], price)
    booking["concessions"].append({"item_code": item_code, "name": item["name"], "quantity": quantity,
                                   "price": price})
    booking["total"] = _money(booking["total"] + price)
    return {"booking_id": booking_id, "item": item["name"], "quantity": quantity, "discount": discount,
            "charged": price, "payment_id": booking["payment_id"]}


@tool(writes=True)
def change_membership_tier(db: State, membership_id: str, tier_code: TierCode) -> dict:
    """Move a membership to another tier from today: this month's credits become the new tier's monthly credits less those already used, and the new monthly fee is billed from the next renewal.

    Args:
        membership_id: The membership's id.
        tier_code: 'TIER_STANDARD' or 'TIER_PREMIUM'.
    """
    membership = find_row(db, "memberships", membership_id, "membership", write=True)
    tier = find_row(db, "tiers", tier_code, "tier")
    if membership["status"] == "cancelled":
        raise ToolError(f"membership {membership_id} is cancelled")
    if membership["tier_code"] == tier_code:
        raise ToolError(f"membership {membership_id} is already on {tier['name']}")
    membership["tier_code"] = tier_code
    membership["tier_changed_on"] = TODAY
    membership["credits_left"] = max(0, tier["monthly_credits"] - membership["credits_used_this_month"])
    return {"membership_id": membership_id, "tier": tier["name"], "monthly_fee": tier["monthly_fee"],
            "credits_left": membership["credits_left"], "next_renewal": membership["renews_on"]}


# --------------------------------------------------------------------------- utilities


@tool
def calculate(db: State, expression: str) -> str:
    """Evaluate an arithmetic expression with numbers, + - * / and parentheses; the result is rounded to 2 decimals.

    Args:
        expression: The expression, such as '(17 - 15) * 3'.
    """
    return str(arithmetic(expression))


@tool(terminal=True)
def transfer_to_human_agents(db: State, summary: str) -> str:
    """Hand the conversation to a human agent, with a short summary of the customer's issue; this ends your part.

    Use it only when the request is outside what you can do under the policy and the customer asks for a person.

    Args:
        summary: What the customer needs and what has been done so far.
    """
    return "Transfer successful"
