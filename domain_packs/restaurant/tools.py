"""Tools of the restaurant domain: guests, the group's restaurants, table availability, bookings and waitlists.

Every tool is a typed function over the episode's database `State`. Tools do what they are asked
when it is mechanically possible (the restaurant is open, a table of the right size is free, the
booking is still confirmed) and raise `ToolError` otherwise; whether an action is *allowed* by the
policy (party size, one booking a day, change and pre-order windows, late-cancellation fees,
wheelchair access, the waitlist) is the agent's call, checked separately by the pack's `rules.py`.

Tools never read the clock or draw random numbers: now is the constant `NOW`, and new ids and
booking numbers are derived from a hash of the request and the rows that already exist, so
replaying the same calls always produces the same database.
"""

from __future__ import annotations

import datetime as _dt
from typing import Any, Literal

from tau_emotion.core.state import State
from tau_emotion.core.tools import ToolError, find_row, tool
from tau_emotion.domain_packs.values import digest as _digest
from tau_emotion.domain_packs.values import money as _money

TODAY = "2025-06-13"  # a Friday
NOW = "2025-06-13T14:45"
DEPOSIT_ABOVE = 6  # parties larger than this pay a deposit per guest when they book
LATE_FEE_PER_GUEST = 25  # charged for a cancellation inside 24 hours when no deposit is held
MAX_DAYS_AHEAD_MECHANICAL = 180  # the reservation system's own limit (the policy's is shorter)
WEEKDAYS = ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday")
BOOKING_ALPHABET = "ABCDEFGHJKLMNPQRSTUVWXYZ23456789"

Dietary = Literal["vegetarian", "vegan", "gluten_free", "dairy_free", "nut_allergy", "shellfish_allergy", "halal",
                  "kosher"]
Accessibility = Literal["wheelchair", "high_chair", "quiet_table", "ground_floor"]


# --------------------------------------------------------------------------- helpers (rules use them too)


def _new_key(rows: Any, prefix: str, *parts: Any) -> tuple[str, int]:
    """A free key `PREFIX123456` for a new row, and the digest it came from."""
    for attempt in range(1000):
        digest = int(_digest(attempt, *parts), 16)
        key = f"{prefix}{digest % 900000 + 100000}"
        if key not in rows:
            return key, digest
    raise ToolError("could not allocate a new id")  # pragma: no cover


def hours_until(date: str, time: str) -> float:
    """Hours from `NOW` to a seating (negative when it has passed)."""
    seating = _dt.datetime.fromisoformat(f"{date}T{time}")
    return (seating - _dt.datetime.fromisoformat(NOW)).total_seconds() / 3600


def days_ahead(date: str) -> int:
    return (_dt.date.fromisoformat(date) - _dt.date.fromisoformat(TODAY)).days


def free_tables(state: State, restaurant_code: str, date: str, time: str, exclude: str | None = None) -> dict[int, int]:
    """Table size -> tables of that size still free at one seating (`exclude`: a booking not to count)."""
    restaurant = state["restaurants"].peek(restaurant_code)
    free = {int(size): count for size, count in restaurant["tables"].items()}
    for booking_id, booking in state["bookings"].where(_seating, (restaurant_code, date, time, "confirmed")):
        if booking_id != exclude:
            free[booking["table_size"]] -= 1
    return free


def _seating(booking: dict) -> tuple[str, str, str, str]:
    """What `free_tables` looks bookings up by (the bookings table is indexed on it once per database)."""
    return booking["restaurant_code"], booking["date"], booking["time"], booking["status"]


def table_for(free: dict[int, int], party_size: int) -> int | None:
    """The smallest free table that seats the party, or None."""
    return next((size for size in sorted(free) if size >= party_size and free[size] > 0), None)


def late_fee(state: State, booking: dict) -> float:
    """What cancelling this booking now costs under the policy: nothing more than 24 hours ahead; inside 24 hours
    the deposit is kept, or the late fee per guest is charged when no deposit is held."""
    if booking["status"] != "confirmed" or hours_until(booking["date"], booking["time"]) >= 24:
        return 0
    return booking["deposit"] or LATE_FEE_PER_GUEST * booking["party_size"]


def _restaurant(state: State, code: str) -> dict:
    return find_row(state, "restaurants", code, "restaurant")


def _check_seating(restaurant: dict, date: str, time: str) -> None:
    try:
        day = _dt.date.fromisoformat(date)
    except ValueError:
        raise ToolError(f"'{date}' is not a date (YYYY-MM-DD)") from None
    if WEEKDAYS[day.weekday()] in restaurant["closed_on"]:
        raise ToolError(f"{restaurant['name']} is closed on {WEEKDAYS[day.weekday()]}s")
    if time not in restaurant["seatings"]:
        raise ToolError(f"{restaurant['name']} has no seating at '{time}' (seatings: {', '.join(restaurant['seatings'])})")
    if hours_until(date, time) <= 0:
        raise ToolError(f"the {time} seating on {date} has already started")
    if days_ahead(date) > MAX_DAYS_AHEAD_MECHANICAL:
        raise ToolError(f"the reservation system opens at most {MAX_DAYS_AHEAD_MECHANICAL} days ahead")


def _set_menu(restaurant: dict, code: str) -> dict:
    menu = next((m for m in restaurant["set_menus"] if m["set_menu_code"] == code), None)
    if menu is None:
        raise ToolError(f"{restaurant['name']} has no set menu '{code}'")
    return menu


def _card(state: State, guest_id: str, card_id: str) -> None:
    if card_id not in state["guests"].peek(guest_id)["cards"]:
        raise ToolError(f"card '{card_id}' is not on the profile of guest '{guest_id}'")


def _deposit(restaurant: dict, party_size: int) -> float:
    return _money(restaurant["deposit_per_guest"] * party_size) if party_size > DEPOSIT_ABOVE else 0


# --------------------------------------------------------------------------- look-ups


@tool
def find_guest(db: State, phone_number: str) -> dict:
    """Find a guest by their phone number: profile, cards on file, bookings (id, booking number, restaurant, date, time, party size, status) and waitlist entries.

    Args:
        phone_number: The guest's phone number as 'NNN-NNN-NNNN', such as '617-555-0142'.
    """
    for _, guest in db["guests"].scan():
        if guest["phone_number"] == phone_number:
            bookings = []
            for booking_id in guest["booking_ids"]:
                b = db["bookings"].peek(booking_id)
                bookings.append({k: b[k] for k in ("booking_id", "booking_number", "restaurant_code", "date", "time",
                                                    "party_size", "status")})
            waitlist = [db["waitlist"].peek(w) for w in guest["waitlist_ids"]]
            return {**{k: v for k, v in guest.items() if k not in ("booking_ids", "waitlist_ids")},
                    "bookings": bookings, "waitlist": waitlist}
    raise ToolError(f"no guest with phone number '{phone_number}'")


@tool
def get_booking_details(db: State, booking_id: str) -> dict:
    """Get a booking: restaurant, date, seating time, party size, table, set menu, dietary and accessibility requests, deposit, charges, and what cancelling it now would cost.

    Args:
        booking_id: The booking's id, such as 'BK104233' (not the guest's booking number).
    """
    booking = find_row(db, "bookings", booking_id, "booking")
    restaurant = db["restaurants"].peek(booking["restaurant_code"])
    return {**booking, "restaurant_name": restaurant["name"],
            "hours_until_seating": round(hours_until(booking["date"], booking["time"]), 2),
            "late_cancellation_fee_now": _money(late_fee(db, booking))}


@tool
def get_restaurants(db: State) -> list:
    """List the group's restaurants: code, name, cuisine, city, seatings, days closed, table sizes, step-free access, deposit per guest for large parties and set menus with prices."""
    return [row for _, row in db["restaurants"].scan()]


@tool
def check_availability(db: State, restaurant_code: str, date: str, party_size: int) -> dict:
    """Check which seatings of a restaurant on a date still have a free table for a party of that size.

    Args:
        restaurant_code: The restaurant's code, such as 'R_OLIVA'.
        date: The date as 'YYYY-MM-DD'.
        party_size: How many guests, children included.
    """
    restaurant = _restaurant(db, restaurant_code)
    day = _dt.date.fromisoformat(date)
    if WEEKDAYS[day.weekday()] in restaurant["closed_on"]:
        return {"restaurant_code": restaurant_code, "date": date, "open": False, "seatings": []}
    if party_size < 1 or party_size > max(int(s) for s in restaurant["tables"]):
        raise ToolError(f"{restaurant['name']} has no table for {party_size}")
    seatings = []
    for time in restaurant["seatings"]:
        if hours_until(date, time) <= 0:
            continue
        free = free_tables(db, restaurant_code, date, time)
        seatings.append({"time": time, "available": table_for(free, party_size) is not None})
    return {"restaurant_code": restaurant_code, "date": date, "party_size": party_size, "open": True,
            "seatings": seatings}


# --------------------------------------------------------------------------- changes


@tool(writes=True)
def book_table(db: State, guest_id: str, restaurant_code: str, date: str, time: str, party_size: int, card_id: str,
               set_menu_code: str | None = None, dietary_requirements: list[Dietary] | None = None,
               accessibility_requests: list[Accessibility] | None = None) -> dict:
    """Book a table at a seating, guaranteed by a card on the guest's profile; a party above 6 pays its deposit on that card now.

    Args:
        guest_id: The guest's id, such as 'G104233'.
        restaurant_code: The restaurant's code, such as 'R_OLIVA'.
        date: The date as 'YYYY-MM-DD'.
        time: The seating time as 'HH:MM', one of the restaurant's seatings.
        party_size: How many guests, children included.
        card_id: The card on the guest's profile that guarantees the booking (and pays any deposit).
        set_menu_code: A set menu of the restaurant pre-ordered for the whole party, or null for none.
        dietary_requirements: Dietary needs of the party, such as ['vegetarian', 'nut_allergy'].
        accessibility_requests: Such as ['wheelchair'] or ['high_chair'].
    """
    guest = find_row(db, "guests", guest_id, "guest", write=True)
    restaurant = _restaurant(db, restaurant_code)
    _check_seating(restaurant, date, time)
    _card(db, guest_id, card_id)
    if set_menu_code is not None:
        _set_menu(restaurant, set_menu_code)
    if party_size < 1:
        raise ToolError("a party has at least one guest")
    size = table_for(free_tables(db, restaurant_code, date, time), party_size)
    if size is None:
        raise ToolError(f"no table for {party_size} is free at {restaurant['name']} on {date} at {time}")
    booking_id, digest = _new_key(db["bookings"], "BK", guest_id, restaurant_code, date, time, party_size)
    booking_number = "".join(BOOKING_ALPHABET[(digest >> (20 + 5 * i)) % len(BOOKING_ALPHABET)] for i in range(6))
    deposit = _deposit(restaurant, party_size)
    booking = {"booking_id": booking_id, "booking_number": booking_number, "guest_id": guest_id,
               "restaurant_code": restaurant_code, "date": date, "time": time, "party_size": party_size,
               "table_size": size, "status": "confirmed", "set_menu_code": set_menu_code,
               "dietary_requirements": sorted(set(dietary_requirements or [])),
               "accessibility_requests": sorted(set(accessibility_requests or [])), "card_id": card_id,
               "deposit": deposit, "charges": [], "created_on": TODAY}
    if deposit:
        booking["charges"].append({"kind": "deposit", "amount": deposit, "date": TODAY})
    db["bookings"][booking_id] = booking
    guest["booking_ids"].append(booking_id)
    return booking


@tool(writes=True)
def modify_booking(db: State, booking_id: str, date: str | None = None, time: str | None = None,
                   party_size: int | None = None, set_menu_code: str | None = None,
                   dietary_requirements: list[Dietary] | None = None,
                   accessibility_requests: list[Accessibility] | None = None) -> dict:
    """Change a confirmed booking; arguments left null stay as they are.

    A new date, time or party size needs a free table at the (new) seating. When the party size
    changes, the deposit is recomputed and the difference charged to or refunded on the booking's card.
    The dietary and accessibility lists replace the booking's lists: pass the full new list.

    Args:
        booking_id: The booking's id, such as 'BK104233'.
        date: The new date as 'YYYY-MM-DD', or null to keep it.
        time: The new seating time as 'HH:MM', or null to keep it.
        party_size: The new number of guests, or null to keep it.
        set_menu_code: A set menu to pre-order for the party, 'none' to drop the pre-order, or null to keep it.
        dietary_requirements: The party's full list of dietary needs, or null to keep it.
        accessibility_requests: The full list of accessibility requests, or null to keep it.
    """
    booking = find_row(db, "bookings", booking_id, "booking", write=True)
    if booking["status"] != "confirmed":
        raise ToolError(f"booking {booking_id} is {booking['status']}, not confirmed")
    if hours_until(booking["date"], booking["time"]) <= 0:
        raise ToolError(f"the seating of booking {booking_id} has already started")
    restaurant = db["restaurants"].peek(booking["restaurant_code"])
    changes = {"date": date, "time": time, "party_size": party_size, "set_menu_code": set_menu_code,
               "dietary_requirements": dietary_requirements, "accessibility_requests": accessibility_requests}
    if all(v is None for v in changes.values()):
        raise ToolError("nothing to change: give at least one new value")
    new_date, new_time = date or booking["date"], time or booking["time"]
    new_party = party_size if party_size is not None else booking["party_size"]
    if set_menu_code not in (None, "none"):  # every check before the first write: a refusal changes nothing
        _set_menu(restaurant, set_menu_code)
    if (new_date, new_time, new_party) != (booking["date"], booking["time"], booking["party_size"]):
        _check_seating(restaurant, new_date, new_time)
        if new_party < 1:
            raise ToolError("a party has at least one guest")
        size = table_for(free_tables(db, booking["restaurant_code"], new_date, new_time, exclude=booking_id), new_party)
        if size is None:
            raise ToolError(f"no table for {new_party} is free at {restaurant['name']} on {new_date} at {new_time}")
        booking.update(date=new_date, time=new_time, party_size=new_party, table_size=size)
    if set_menu_code is not None:
        booking["set_menu_code"] = None if set_menu_code == "none" else set_menu_code
    if dietary_requirements is not None:
        booking["dietary_requirements"] = sorted(set(dietary_requirements))
    if accessibility_requests is not None:
        booking["accessibility_requests"] = sorted(set(accessibility_requests))
    deposit = _deposit(restaurant, booking["party_size"])
    if deposit != booking["deposit"]:
        kind = "deposit" if deposit > booking["deposit"] else "deposit_refund"
        booking["charges"].append({"kind": kind, "amount": _money(abs(deposit - booking["deposit"])), "date": TODAY})
        booking["deposit"] = deposit
    return booking


@tool(writes=True)
def cancel_booking(db: State, booking_id: str, charge_late_fee: bool) -> dict:
    """Cancel a confirmed booking and settle its money on the booking's card.

    With charge_late_fee the deposit is kept, or, when no deposit is held, the late fee of 25 per
    guest is charged; without it any deposit is refunded in full and nothing is charged.

    Args:
        booking_id: The booking's id, such as 'BK104233'.
        charge_late_fee: Whether the late-cancellation fee applies.
    """
    booking = find_row(db, "bookings", booking_id, "booking", write=True)
    if booking["status"] != "confirmed":
        raise ToolError(f"booking {booking_id} is {booking['status']}, not confirmed")
    if hours_until(booking["date"], booking["time"]) <= 0:
        raise ToolError(f"the seating of booking {booking_id} has already started")
    booking["status"] = "cancelled"
    kept = refunded = charged = 0
    if charge_late_fee and booking["deposit"]:
        kept = booking["deposit"]
    elif charge_late_fee:
        charged = LATE_FEE_PER_GUEST * booking["party_size"]
        booking["charges"].append({"kind": "late_cancellation_fee", "amount": charged, "date": TODAY})
    elif booking["deposit"]:
        refunded = booking["deposit"]
        booking["charges"].append({"kind": "deposit_refund", "amount": refunded, "date": TODAY})
        booking["deposit"] = 0
    return {"booking_id": booking_id, "status": "cancelled", "deposit_kept": kept, "late_fee_charged": charged,
            "deposit_refunded": refunded, "card_id": booking["card_id"]}


@tool(writes=True)
def join_waitlist(db: State, guest_id: str, restaurant_code: str, date: str, time: str, party_size: int) -> dict:
    """Put a guest on a seating's waitlist; the restaurant calls them in turn when a table frees up.

    Args:
        guest_id: The guest's id, such as 'G104233'.
        restaurant_code: The restaurant's code, such as 'R_OLIVA'.
        date: The date as 'YYYY-MM-DD'.
        time: The seating time as 'HH:MM'.
        party_size: How many guests.
    """
    guest = find_row(db, "guests", guest_id, "guest", write=True)
    restaurant = _restaurant(db, restaurant_code)
    _check_seating(restaurant, date, time)
    ahead = [w for _, w in db["waitlist"].scan() if (w["restaurant_code"], w["date"], w["time"]) ==
             (restaurant_code, date, time) and w["status"] == "waiting"]
    if any(w["guest_id"] == guest_id for w in ahead):
        raise ToolError(f"guest {guest_id} is already on this waitlist")
    waitlist_id, _ = _new_key(db["waitlist"], "WL", guest_id, restaurant_code, date, time)
    entry = {"waitlist_id": waitlist_id, "guest_id": guest_id, "restaurant_code": restaurant_code, "date": date,
             "time": time, "party_size": party_size, "position": len(ahead) + 1, "status": "waiting",
             "created_on": TODAY}
    db["waitlist"][waitlist_id] = entry
    guest["waitlist_ids"].append(waitlist_id)
    return entry


@tool(terminal=True)
def transfer_to_human_agents(db: State, summary: str) -> str:
    """Hand the conversation to a human agent, with a short summary of the guest's request; this ends your part.

    Use it only when the request is outside what you can do under the policy and the guest asks for a person.

    Args:
        summary: What the guest needs and what has been done so far.
    """
    return "Transfer successful"
