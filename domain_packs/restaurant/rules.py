"""Machine-checkable parts of the restaurant policy (`data/policy.md`).

Each rule has the signature `rule(state, action_name, arguments) -> str | None`: given the state
*before* a write action and the action's raw arguments, it returns a one-line reason when the
policy forbids that action, else None. Rules ignore actions they are not about and arguments they
cannot read (the tool itself reports those). Tools stay permissive on purpose: the agent must
apply the policy, and these rules let the Tracer reject policy-breaking gold trajectories.
"""

from __future__ import annotations

from typing import Any

from tau_emotion.core.domain import Rule, rule
from tau_emotion.core.state import State
from tau_emotion.domain_packs.restaurant.tools import days_ahead, free_tables, hours_until, table_for

MAX_PARTY = 10  # guests per booking; larger groups go to the events team
SET_MENU_ABOVE = 8  # parties larger than this pre-order a set menu
MAX_DAYS_AHEAD = 60  # bookings open this many days ahead
CHANGE_WINDOW_HOURS = 4  # date, time and party size change up to this long before the seating
PREORDER_CUTOFF_HOURS = 24  # set menus are chosen or changed up to this long before the seating
LATE_CANCEL_HOURS = 24  # a cancellation inside this many hours pays the late fee

BOOKING_WRITES = ("book_table", "modify_booking")


def _str(arguments: dict, key: str) -> str | None:
    value = arguments.get(key)
    return value if isinstance(value, str) else None


def _int(arguments: dict, key: str) -> int | None:
    value = arguments.get(key)
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _booking(state: State, arguments: dict) -> dict | None:
    key = _str(arguments, "booking_id")
    return state["bookings"].peek(key) if key else None


def _after(state: State, action_name: str, arguments: dict) -> dict[str, Any] | None:
    """The booking fields (restaurant, guest, date, time, party, set menu) a booking write would leave, or None."""
    if action_name == "book_table":
        fields = {k: arguments.get(k) for k in ("guest_id", "restaurant_code", "date", "time", "party_size",
                                                "set_menu_code", "accessibility_requests")}
        return fields if all(isinstance(fields[k], str) for k in ("guest_id", "restaurant_code", "date", "time")) else None
    if action_name == "modify_booking":
        booking = _booking(state, arguments)
        if booking is None:
            return None
        fields = {k: booking[k] for k in ("guest_id", "restaurant_code", "date", "time", "party_size", "set_menu_code",
                                          "accessibility_requests")}
        fields.update({k: v for k, v in arguments.items() if k in fields and v is not None})
        if fields["set_menu_code"] == "none":
            fields["set_menu_code"] = None
        return fields
    return None


# --------------------------------------------------------------------------- rules


@rule
def party_size_limit(state: State, action_name: str, arguments: dict) -> str | None:
    """A booking or a waitlist entry is for at most 10 guests."""
    if action_name not in (*BOOKING_WRITES, "join_waitlist"):
        return None
    party = _int(arguments, "party_size")
    if party is None or party <= MAX_PARTY:
        return None
    return f"a booking is for at most {MAX_PARTY} guests, not {party}: larger groups go to the events team"


@rule
def one_booking_per_day(state: State, action_name: str, arguments: dict) -> str | None:
    """A guest holds at most one confirmed booking per day across the group's restaurants."""
    after = _after(state, action_name, arguments)
    if after is None or not isinstance(after["date"], str):
        return None
    guest = state["guests"].peek(after["guest_id"])
    if guest is None:
        return None
    for booking_id in guest["booking_ids"]:
        other = state["bookings"].peek(booking_id)
        if (other["status"] == "confirmed" and other["date"] == after["date"]
                and booking_id != arguments.get("booking_id")):
            return (f"guest {guest['guest_id']} already has a confirmed booking on {after['date']} "
                    f"({other['booking_number']}): one booking per day")
    return None


@rule
def booking_horizon(state: State, action_name: str, arguments: dict) -> str | None:
    """Bookings, date changes and waitlist entries are at most 60 days ahead."""
    if action_name not in (*BOOKING_WRITES, "join_waitlist"):
        return None
    date = _str(arguments, "date")
    try:
        ahead = days_ahead(date) if date else None
    except ValueError:
        return None
    if ahead is None or ahead <= MAX_DAYS_AHEAD:
        return None
    return f"{date} is {ahead} days ahead: bookings open at most {MAX_DAYS_AHEAD} days ahead"


@rule
def change_window(state: State, action_name: str, arguments: dict) -> str | None:
    """A booking's date, time or party size changes only up to 4 hours before its seating."""
    if action_name != "modify_booking":
        return None
    booking = _booking(state, arguments)
    if booking is None:
        return None
    moved = any(arguments.get(k) is not None and arguments.get(k) != booking[k] for k in ("date", "time", "party_size"))
    left = hours_until(booking["date"], booking["time"])
    if not moved or left >= CHANGE_WINDOW_HOURS:
        return None
    return (f"booking {booking['booking_number']} starts in {left:.1f} hours: its date, time and party size "
            f"change only up to {CHANGE_WINDOW_HOURS} hours before")


@rule
def preorder_cutoff(state: State, action_name: str, arguments: dict) -> str | None:
    """A set menu is chosen, changed or dropped only up to 24 hours before the seating."""
    after = _after(state, action_name, arguments)
    if after is None or not isinstance(after["date"], str) or not isinstance(after["time"], str):
        return None
    booking = _booking(state, arguments) if action_name == "modify_booking" else None
    before = booking["set_menu_code"] if booking else None
    if after["set_menu_code"] == before:
        return None
    try:
        left = hours_until(after["date"], after["time"])
    except ValueError:
        return None
    if booking is not None:
        left = min(left, hours_until(booking["date"], booking["time"]))
    if left >= PREORDER_CUTOFF_HOURS:
        return None
    return f"the seating is {left:.1f} hours away: set menus are chosen or changed up to {PREORDER_CUTOFF_HOURS} hours before"


@rule
def set_menu_for_large_parties(state: State, action_name: str, arguments: dict) -> str | None:
    """A party of more than 8 guests pre-orders one of the restaurant's set menus."""
    after = _after(state, action_name, arguments)
    if after is None or not isinstance(after["party_size"], int) or after["party_size"] <= SET_MENU_ABOVE:
        return None
    if after["set_menu_code"]:
        return None
    return f"a party of {after['party_size']} (more than {SET_MENU_ABOVE}) must pre-order a set menu"


@rule
def late_cancellation_fee(state: State, action_name: str, arguments: dict) -> str | None:
    """Inside 24 hours of the seating a cancellation pays the late fee (or forfeits the deposit); before that it is free."""
    if action_name != "cancel_booking":
        return None
    booking, charge = _booking(state, arguments), arguments.get("charge_late_fee")
    if booking is None or not isinstance(charge, bool):
        return None
    late = hours_until(booking["date"], booking["time"]) < LATE_CANCEL_HOURS
    if late and not charge:
        return f"booking {booking['booking_number']} is less than {LATE_CANCEL_HOURS} hours away: the late fee applies"
    if not late and charge:
        return f"booking {booking['booking_number']} is more than {LATE_CANCEL_HOURS} hours away: no late fee is due"
    return None


@rule
def wheelchair_access(state: State, action_name: str, arguments: dict) -> str | None:
    """A wheelchair request is accepted only at a restaurant with step-free access."""
    after = _after(state, action_name, arguments)
    if after is None or not isinstance(after["accessibility_requests"], list):
        return None
    restaurant = state["restaurants"].peek(str(after["restaurant_code"]))
    if restaurant is None or "wheelchair" not in after["accessibility_requests"] or restaurant["step_free_access"]:
        return None
    return f"{restaurant['name']} has no step-free access: it cannot take a wheelchair booking"


@rule
def waitlist_only_when_full(state: State, action_name: str, arguments: dict) -> str | None:
    """A guest joins a seating's waitlist only when no table for the party is free at it (else: book it)."""
    if action_name != "join_waitlist":
        return None
    code, date, time, party = (_str(arguments, "restaurant_code"), _str(arguments, "date"), _str(arguments, "time"),
                               _int(arguments, "party_size"))
    if None in (code, date, time, party) or state["restaurants"].peek(code) is None:
        return None
    if table_for(free_tables(state, code, date, time), party) is None:
        return None
    return f"a table for {party} is free at {date} {time}: book it instead of joining the waitlist"


RULES: list[Rule] = [
    party_size_limit,
    one_booking_per_day,
    booking_horizon,
    change_window,
    preorder_cutoff,
    set_menu_for_large_parties,
    late_cancellation_fee,
    wheelchair_access,
    waitlist_only_when_full,
]


def violations(state: State, action_name: str, arguments: dict) -> list[str]:
    """Every rule's complaint about one action (empty when the action is policy-valid)."""
    return [msg for r in RULES if (msg := r(state, action_name, arguments))]
