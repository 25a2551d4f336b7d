"""Machine-checkable parts of the movie policy (`data/policy.md`).

Each rule has the signature `rule(state, action_name, arguments) -> str | None`: given the state
*before* a write action and the action's raw arguments, it returns a one-line reason when the
policy forbids that action, else None. Rules ignore actions they are not about and arguments they
cannot read (the tool itself reports those). Tools stay permissive on purpose: the agent must
apply the policy, and these rules let the Tracer reject policy-breaking gold trajectories.
Each rule's docstring names the refusal reason (`data/refusals.json`) an agent gives for it.
"""

from __future__ import annotations

from tau_emotion.core.domain import Rule, rule
from tau_emotion.core.state import State
from tau_emotion.domain_packs.movie.tools import GROUP_SIZE, MONTH_START, hours_until

RESTRICTED_RATINGS = ("R", "NC-17")  # no child tickets
MAX_TICKETS = 20  # per booking
MAX_EXCHANGES = 1  # per booking
GROUP_REFUND_HOURS = 48  # a group booking is refundable until this many hours before the start
STANDARD_FORMAT = "standard"


def _row(state: State, table: str, arguments: dict, key: str) -> dict | None:
    value = arguments.get(key)
    return state[table].peek(value) if isinstance(value, str) else None


def _booking_show(state: State, arguments: dict) -> tuple[dict | None, dict | None]:
    booking = _row(state, "bookings", arguments, "booking_id")
    return booking, (state["showtimes"].peek(booking["showtime_id"]) if booking else None)


def _ticket_types(arguments: dict) -> list[str]:
    tickets = arguments.get("tickets")
    if not isinstance(tickets, list):
        return []
    return [t.get("type") for t in tickets if isinstance(t, dict)]


# --------------------------------------------------------------------------- rules


@rule
def before_showtime(state: State, action_name: str, arguments: dict) -> str | None:
    """No booking, refund, exchange or concession order once the showtime has started (`showtime_started`)."""
    if action_name == "book_tickets":
        show = _row(state, "showtimes", arguments, "showtime_id")
    elif action_name in ("refund_booking", "exchange_tickets", "add_concessions"):
        _, show = _booking_show(state, arguments)
    else:
        return None
    if show is None or hours_until(show["start"]) > 0:
        return None
    return f"showtime {show['showtime_id']} started at {show['start']}: no {action_name.replace('_', ' ')} after the start"


@rule
def exchange_target_not_started(state: State, action_name: str, arguments: dict) -> str | None:
    """An exchange moves tickets only to a showtime that has not started (`showtime_started`)."""
    if action_name != "exchange_tickets":
        return None
    new = _row(state, "showtimes", arguments, "new_showtime_id")
    if new is None or hours_until(new["start"]) > 0:
        return None
    return f"showtime {new['showtime_id']} started at {new['start']}: no exchange into it"


@rule
def age_rating(state: State, action_name: str, arguments: dict) -> str | None:
    """No child tickets for an R or NC-17 film, when booking or exchanging (`age_rating`)."""
    if action_name == "book_tickets":
        show, types = _row(state, "showtimes", arguments, "showtime_id"), _ticket_types(arguments)
    elif action_name == "exchange_tickets":
        booking = _row(state, "bookings", arguments, "booking_id")
        show = _row(state, "showtimes", arguments, "new_showtime_id")
        types = [t["type"] for t in booking["tickets"]] if booking else []
    else:
        return None
    if show is None or "child" not in types:
        return None
    film = state["films"].peek(show["film_code"])
    if film["rating"] not in RESTRICTED_RATINGS:
        return None
    return f"{film['title']} is rated {film['rating']}: no child tickets"


@rule
def ticket_limit(state: State, action_name: str, arguments: dict) -> str | None:
    """At most 20 tickets in one booking (`group_size_limit`)."""
    if action_name != "book_tickets":
        return None
    n = len(_ticket_types(arguments))
    return f"a booking holds at most {MAX_TICKETS} tickets, not {n}" if n > MAX_TICKETS else None


@rule
def exchange_limit(state: State, action_name: str, arguments: dict) -> str | None:
    """A booking is exchanged at most once (`exchange_limit`)."""
    if action_name != "exchange_tickets":
        return None
    booking = _row(state, "bookings", arguments, "booking_id")
    if booking is None or booking["exchanges"] < MAX_EXCHANGES:
        return None
    return f"booking {booking['booking_id']} was already exchanged; a booking is exchanged at most once"


@rule
def group_refund_window(state: State, action_name: str, arguments: dict) -> str | None:
    """A group booking (10+ tickets) is refunded only until 48 hours before the start (`group_refund_window`)."""
    if action_name != "refund_booking":
        return None
    booking, show = _booking_show(state, arguments)
    if booking is None or len(booking["tickets"]) < GROUP_SIZE or hours_until(show["start"]) <= 0:
        return None  # a started showtime is `before_showtime`'s complaint
    if hours_until(show["start"]) >= GROUP_REFUND_HOURS:
        return None
    return f"group booking {booking['booking_id']} starts within {GROUP_REFUND_HOURS} hours: no refund"


def _credits_request(state: State, action_name: str, arguments: dict) -> tuple[dict, dict, int] | None:
    """(customer, showtime, credits) of a booking or exchange that pays with membership credits."""
    if action_name == "book_tickets":
        credits = arguments.get("credits", 0)
        customer = _row(state, "customers", arguments, "customer_id")
        show = _row(state, "showtimes", arguments, "showtime_id")
    elif action_name == "exchange_tickets":
        booking = _row(state, "bookings", arguments, "booking_id")
        credits = sum(t["paid_with"] == "credit" for t in booking["tickets"]) if booking else 0
        customer = state["customers"].peek(booking["customer_id"]) if booking else None
        show = _row(state, "showtimes", arguments, "new_showtime_id")
    else:
        return None
    if not isinstance(credits, int) or credits <= 0 or customer is None or show is None:
        return None
    return customer, show, credits


@rule
def credits_need_active_membership(state: State, action_name: str, arguments: dict) -> str | None:
    """Credits are used only while the membership is active, not paused (`membership_inactive`)."""
    request = _credits_request(state, action_name, arguments)
    if request is None or action_name != "book_tickets":
        return None
    membership = state["memberships"].peek(request[0].get("membership_id") or "")
    if membership is None or membership["status"] == "active":
        return None
    return f"membership {membership['member_number']} is {membership['status']}: its credits cannot be used"


@rule
def credits_standard_format_only(state: State, action_name: str, arguments: dict) -> str | None:
    """Credits pay only for standard-format showings, not IMAX or 3D (`credit_format`)."""
    request = _credits_request(state, action_name, arguments)
    if request is None or request[1]["format"] == STANDARD_FORMAT:
        return None
    return f"showtime {request[1]['showtime_id']} is {request[1]['format']}: credits pay only for standard showings"


@rule
def credits_per_showtime(state: State, action_name: str, arguments: dict) -> str | None:
    """At most the tier's credits per showtime (1 Standard, 2 Premium), and none on a group booking (`credit_cap`)."""
    request = _credits_request(state, action_name, arguments)
    if request is None or action_name != "book_tickets":
        return None
    customer, show, credits = request
    membership = state["memberships"].peek(customer.get("membership_id") or "")
    if membership is None:
        return None
    if len(_ticket_types(arguments)) >= GROUP_SIZE:
        return "membership credits cannot pay for a group booking"
    cap = state["tiers"].peek(membership["tier_code"])["credits_per_showtime"]
    return f"the {membership['tier_code']} tier allows {cap} credits per showtime, not {credits}" if credits > cap else None


@rule
def tier_change_once_per_month(state: State, action_name: str, arguments: dict) -> str | None:
    """A membership's tier changes at most once per calendar month (`tier_changed_this_month`)."""
    if action_name != "change_membership_tier":
        return None
    membership = _row(state, "memberships", arguments, "membership_id")
    if membership is None or not membership["tier_changed_on"] or membership["tier_changed_on"] < MONTH_START:
        return None
    return f"membership {membership['member_number']} already changed tier on {membership['tier_changed_on']}, this month"


@rule
def tier_change_needs_active_membership(state: State, action_name: str, arguments: dict) -> str | None:
    """A paused membership cannot change tier (`membership_inactive`)."""
    if action_name != "change_membership_tier":
        return None
    membership = _row(state, "memberships", arguments, "membership_id")
    if membership is None or membership["status"] != "paused":
        return None
    return f"membership {membership['member_number']} is paused: no tier change"


RULES: list[Rule] = [
    before_showtime,
    exchange_target_not_started,
    age_rating,
    ticket_limit,
    exchange_limit,
    group_refund_window,
    credits_need_active_membership,
    credits_standard_format_only,
    credits_per_showtime,
    tier_change_once_per_month,
    tier_change_needs_active_membership,
]


def violations(state: State, action_name: str, arguments: dict) -> list[str]:
    """Every rule's complaint about one action (empty when the action is policy-valid)."""
    return [msg for r in RULES if (msg := r(state, action_name, arguments))]
