"""Machine-checkable parts of the basketball policy (`data/policy.md`).

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
from tau_emotion.domain_packs.basketball.tools import HALF_REFUND_DAYS, age_on, days_until, ticket_price

MAX_TICKETS = 8  # per fan per game
MAX_TRANSFERS = 1  # per ticket order
MAX_RELOCATIONS = 1  # per membership per season
RETURN_DAYS = 30  # a shop order is returned within this many days of delivery
TICKET_ACTIONS = ("transfer_tickets", "list_tickets_for_resale", "upgrade_tickets")


def _row(state: State, table: str, arguments: dict, key: str) -> dict | None:
    value = arguments.get(key)
    return state[table].peek(value) if isinstance(value, str) else None


def _order_game(state: State, arguments: dict) -> tuple[dict | None, dict | None]:
    order = _row(state, "ticket_orders", arguments, "order_id")
    return order, (state["games"].peek(order["game_code"]) if order else None)


# --------------------------------------------------------------------------- tickets


@rule
def ticket_limit(state: State, action_name: str, arguments: dict) -> str | None:
    """A fan holds at most 8 tickets for one game, counting orders they already hold (`ticket_limit`)."""
    if action_name != "buy_tickets":
        return None
    fan = _row(state, "fans", arguments, "fan_id")
    quantity = arguments.get("quantity")
    if fan is None or not isinstance(quantity, int):
        return None
    held = sum(len(o["seats"]) for o in (state["ticket_orders"].peek(i) for i in fan["ticket_order_ids"])
               if o["game_code"] == arguments.get("game_code") and o["status"] in ("active", "listed"))
    if held + quantity <= MAX_TICKETS:
        return None
    return f"a fan holds at most {MAX_TICKETS} tickets for one game; {held} held plus {quantity} is too many"


@rule
def game_day_cutoff(state: State, action_name: str, arguments: dict) -> str | None:
    """Transfers, resale listings and upgrades end the day before the game (`game_day_cutoff`)."""
    if action_name not in TICKET_ACTIONS:
        return None
    order, game = _order_game(state, arguments)
    if game is None or days_until(game["date"]) >= 1:
        return None
    return f"the game of order {order['order_number']} is on {game['date']}: no {action_name.split('_')[0]} on or after game day"


@rule
def transfer_limit(state: State, action_name: str, arguments: dict) -> str | None:
    """A ticket order is transferred at most once (`transfer_limit`)."""
    if action_name != "transfer_tickets":
        return None
    order, _ = _order_game(state, arguments)
    if order is None or order["transfers"] < MAX_TRANSFERS:
        return None
    return f"order {order['order_number']} was already transferred once"


@rule
def resale_price_cap(state: State, action_name: str, arguments: dict) -> str | None:
    """Tickets are resold at most at face value (`resale_price_cap`)."""
    if action_name != "list_tickets_for_resale":
        return None
    order, _ = _order_game(state, arguments)
    price = arguments.get("price_each")
    if order is None or not isinstance(price, (int, float)) or price <= order["face_value"] + 1e-9:
        return None
    return f"order {order['order_number']} has a face value of {order['face_value']}; {price} is above it"


@rule
def upgrade_only_higher(state: State, action_name: str, arguments: dict) -> str | None:
    """An upgrade moves to a section with a higher face value, never a cheaper one (`no_downgrade`)."""
    if action_name != "upgrade_tickets":
        return None
    order, _ = _order_game(state, arguments)
    section = _row(state, "sections", arguments, "section_code")
    if order is None or section is None:
        return None
    if ticket_price(state, order["game_code"], section["section_code"]) > order["face_value"]:
        return None
    return f"section {section['section_code']} is not dearer than the order's: an upgrade only goes up"


# --------------------------------------------------------------------------- season memberships


@rule
def relocation_once_per_season(state: State, action_name: str, arguments: dict) -> str | None:
    """A membership's seat is relocated at most once per season (`relocation_limit`)."""
    if action_name != "relocate_membership_seat":
        return None
    membership = _row(state, "memberships", arguments, "membership_id")
    if membership is None or membership["relocations_this_season"] < MAX_RELOCATIONS:
        return None
    return f"membership {membership['member_number']} was already relocated this season"


@rule
def relocation_needs_good_standing(state: State, action_name: str, arguments: dict) -> str | None:
    """A membership with an overdue installment (status past_due) is not relocated (`payment_overdue`)."""
    if action_name != "relocate_membership_seat":
        return None
    membership = _row(state, "memberships", arguments, "membership_id")
    if membership is None or membership["status"] != "past_due":
        return None
    return f"membership {membership['member_number']} has an overdue installment"


@rule
def relocation_within_level(state: State, action_name: str, arguments: dict) -> str | None:
    """A relocation stays within the membership tier's levels: courtside only for Courtside members (`tier_level`)."""
    if action_name != "relocate_membership_seat":
        return None
    membership = _row(state, "memberships", arguments, "membership_id")
    section = _row(state, "sections", arguments, "section_code")
    if membership is None or section is None:
        return None
    levels = state["membership_tiers"].peek(membership["tier_code"])["levels"]
    if section["level"] in levels:
        return None
    return f"a {membership['tier_code']} membership seats in {', '.join(levels)} sections, not {section['level']}"


# --------------------------------------------------------------------------- youth programs


@rule
def guardian_only(state: State, action_name: str, arguments: dict) -> str | None:
    """Only a player's guardian registers them (`guardian_only`)."""
    if action_name != "register_player":
        return None
    player = _row(state, "players", arguments, "player_id")
    fan_id = arguments.get("fan_id")
    if player is None or not isinstance(fan_id, str) or fan_id == player["guardian_fan_id"]:
        return None
    return f"fan {fan_id} is not the guardian of {player['name']}"


@rule
def waiver_required(state: State, action_name: str, arguments: dict) -> str | None:
    """A player is registered only once the guardian signed this season's waiver (`waiver_required`)."""
    if action_name != "register_player":
        return None
    player = _row(state, "players", arguments, "player_id")
    if player is None or player["waiver_signed"]:
        return None
    return f"the guardian of {player['name']} has not signed this season's waiver"


@rule
def age_group(state: State, action_name: str, arguments: dict) -> str | None:
    """A player's age on the program's start date is within its age group (`age_group`)."""
    if action_name != "register_player":
        return None
    player = _row(state, "players", arguments, "player_id")
    program = _row(state, "programs", arguments, "program_code")
    if player is None or program is None:
        return None
    age = age_on(player["dob"], program["start_date"])
    if program["min_age"] <= age <= program["max_age"]:
        return None
    return f"{player['name']} will be {age}; {program['name']} is for ages {program['min_age']}-{program['max_age']}"


@rule
def registration_cancellation_window(state: State, action_name: str, arguments: dict) -> str | None:
    """A registration is cancelled only until 3 days before the program starts (`camp_refund_window`)."""
    if action_name != "cancel_registration":
        return None
    reg = _row(state, "registrations", arguments, "registration_id")
    if reg is None:
        return None
    program = state["programs"].peek(reg["program_code"])
    if days_until(program["start_date"]) >= HALF_REFUND_DAYS:
        return None
    return f"{program['name']} starts on {program['start_date']}, less than {HALF_REFUND_DAYS} days from now"


# --------------------------------------------------------------------------- shop


@rule
def return_window(state: State, action_name: str, arguments: dict) -> str | None:
    """A shop order is returned within 30 days of delivery (`return_window`)."""
    if action_name != "return_merch_order":
        return None
    order = _row(state, "merch_orders", arguments, "order_id")
    if order is None or not order.get("delivered_on") or -days_until(order["delivered_on"]) <= RETURN_DAYS:
        return None
    return f"shop order {order['order_number']} was delivered on {order['delivered_on']}, more than {RETURN_DAYS} days ago"


@rule
def final_sale(state: State, action_name: str, arguments: dict) -> str | None:
    """An order with a final-sale item (game-worn, signed, clearance) is not returned (`final_sale`)."""
    if action_name != "return_merch_order":
        return None
    order = _row(state, "merch_orders", arguments, "order_id")
    finals = [i["name"] for i in order["items"] if i["final_sale"]] if order else []
    return f"shop order {order['order_number']} holds final-sale items ({', '.join(finals)})" if finals else None


RULES: list[Rule] = [
    ticket_limit,
    game_day_cutoff,
    transfer_limit,
    resale_price_cap,
    upgrade_only_higher,
    relocation_once_per_season,
    relocation_needs_good_standing,
    relocation_within_level,
    guardian_only,
    waiver_required,
    age_group,
    registration_cancellation_window,
    return_window,
    final_sale,
]


def violations(state: State, action_name: str, arguments: dict) -> list[str]:
    """Every rule's complaint about one action (empty when the action is policy-valid)."""
    return [msg for r in RULES if (msg := r(state, action_name, arguments))]
