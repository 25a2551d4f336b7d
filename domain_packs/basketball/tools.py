"""Tools of the basketball domain: a professional club's fans, game tickets, season memberships, youth programs and shop.

The club is the Harbor City Herons (home games at Pier 9 Arena, season 2025-26). Every tool is a
typed function over the episode's database `State`. Tools do what they are asked when it is
mechanically possible (seats are left in the section, the program has places, the recipient has a
fan account, the order was delivered) and raise `ToolError` otherwise; whether an action is
*allowed* by the policy (game-day cut-offs, transfer and resale rules, upgrade and relocation
rules, age groups, waivers, guardians, refund and return windows) is the agent's call, checked
separately by the pack's `rules.py`. Prices and fees are the tools' arithmetic.

Tools never read the clock or draw random numbers: today is the constant `TODAY`, and new ids are
derived from a hash of the request and the rows that already exist, so replaying the same calls
always produces the same database.
"""

from __future__ import annotations

import datetime as _dt
from typing import Any

from tau_emotion.core.state import State
from tau_emotion.core.tools import ToolError, find_row, tool
from tau_emotion.domain_packs.values import arithmetic
from tau_emotion.domain_packs.values import digest as _digest
from tau_emotion.domain_packs.values import money as _money
from tau_emotion.domain_packs.values import new_id as _new_id

TODAY = "2025-11-12"
UPGRADE_FEE = 10  # per ticket, waived for fans with an active season membership
SEATS_PER_ROW = 20
FULL_REFUND_DAYS = 14  # a program registration cancelled at least this many days before the start: full refund
HALF_REFUND_DAYS = 3  # ... at least this many days before: half the fee back


# --------------------------------------------------------------------------- helpers


def _order_number(db: State, *parts: Any) -> str:
    orders = db["ticket_orders"]
    for attempt in range(1000):
        number = f"HT-{int(_digest('number', attempt, *parts), 16) % 9000000 + 1000000}"
        if next(orders.where(_number_of, number), None) is None:
            return number
    raise ToolError("could not allocate an order number")  # pragma: no cover


def _number_of(order: dict) -> str:
    return order["order_number"]


def days_until(date: str) -> int:
    """Days from `TODAY` to a date; 0 on the day, negative after."""
    return (_dt.date.fromisoformat(date) - _dt.date.fromisoformat(TODAY)).days


def age_on(dob: str, date: str) -> int:
    """A person's age in whole years on a date."""
    born, day = _dt.date.fromisoformat(dob), _dt.date.fromisoformat(date)
    return day.year - born.year - ((day.month, day.day) < (born.month, born.day))


def ticket_price(db: State, game_code: str, section_code: str) -> float:
    """The face value of one ticket in a section for a game (the section's base price times the game's tier)."""
    game = db["games"].peek(game_code)
    section = db["sections"].peek(section_code)
    return _money(section["base_price"] * db["game_tiers"].peek(game["tier"])["multiplier"])


def active_membership(db: State, fan: dict) -> dict | None:
    mid = fan.get("membership_id")
    membership = db["memberships"].peek(mid) if mid else None
    return membership if membership and membership["status"] == "active" else None


def _card(fan: dict, payment_id: str) -> None:
    if payment_id not in fan["payment_methods"]:
        raise ToolError(f"payment method '{payment_id}' is not in the profile of fan '{fan['fan_id']}'")


def _take_seats(db: State, game_code: str, section_code: str, quantity: int) -> list[str]:
    key = f"{game_code}:{section_code}"
    stock = db["inventory"][key] if key in db["inventory"] else None
    if stock is None:
        raise ToolError(f"section {section_code} is not sold for game {game_code}")
    if stock["capacity"] - stock["sold"] < quantity:
        raise ToolError(f"section {section_code} has {stock['capacity'] - stock['sold']} seats left for game {game_code}")
    first = stock["sold"]
    stock["sold"] += quantity
    return [f"{section_code.split('_')[-1]}-{chr(ord('A') + i // SEATS_PER_ROW)}-{i % SEATS_PER_ROW + 1}"
            for i in range(first, first + quantity)]


def _release(db: State, game_code: str, section_code: str, quantity: int) -> None:
    db["inventory"][f"{game_code}:{section_code}"]["sold"] -= quantity


# --------------------------------------------------------------------------- look-ups


@tool
def find_fan_by_email(db: State, email: str) -> dict:
    """Find a fan account by its email address.

    Args:
        email: The fan's email address, such as 'omar.rossi7@example.com'.
    """
    wanted = email.strip().lower()
    for _, fan in db["fans"].scan():
        if fan["email"] == wanted:
            return {"fan_id": fan["fan_id"], "first_name": fan["name"]["first_name"],
                    "last_name": fan["name"]["last_name"]}
    raise ToolError(f"no fan account with email '{email}'")


@tool
def get_fan_details(db: State, fan_id: str) -> dict:
    """Get a fan's account: name, date of birth, email, cards, season membership id, the youth players they are guardian or contact of, their ticket orders (order number, game, section, seats, face value, status, transfers, resale listing) and their shop orders (items, status, delivery date).

    Args:
        fan_id: The fan's id, such as 'FN104233'.
    """
    fan = find_row(db, "fans", fan_id, "fan")
    orders = [db["ticket_orders"].peek(o) for o in fan["ticket_order_ids"]]
    merch = [db["merch_orders"].peek(o) for o in fan["merch_order_ids"]]
    players = []
    for pid in fan["player_ids"]:
        player = db["players"].peek(pid)
        role = "guardian" if player["guardian_fan_id"] == fan_id else "contact"
        players.append({"player_id": pid, "name": player["name"], "role": role})
    return {**{k: v for k, v in fan.items() if not k.endswith("_ids")}, "players": players,
            "ticket_orders": orders, "shop_orders": merch}


@tool
def get_game_schedule(db: State) -> list:
    """List the season's home games: game code, date, tip-off time, opponent, pricing tier (regular, premium, rivalry) and status (played or scheduled)."""
    games = [{**game, "status": "played" if days_until(game["date"]) < 0 else "scheduled"}
             for _, game in db["games"].scan()]
    return sorted(games, key=lambda g: g["date"])


@tool
def get_seat_availability(db: State, game_code: str) -> list:
    """List a game's seating sections with level, face value per ticket for that game and seats left.

    Args:
        game_code: The game's code, such as 'G1115_DEN'.
    """
    find_row(db, "games", game_code, "game")
    out = []
    for code, section in db["sections"].scan():
        stock = db["inventory"].peek(f"{game_code}:{code}")
        out.append({"section_code": code, "name": section["name"], "level": section["level"],
                    "price": ticket_price(db, game_code, code), "seats_left": stock["capacity"] - stock["sold"]})
    return out


@tool
def get_membership_details(db: State, membership_id: str) -> dict:
    """Get a season membership: member number, tier, seat (section, row, seat), season price, payment plan and installments, balance due, next due date, status and relocations used this season.

    Args:
        membership_id: The membership's id, such as 'SM310442'.
    """
    return find_row(db, "memberships", membership_id, "membership")


@tool
def list_youth_programs(db: State) -> list:
    """List the youth camps and leagues: program code, name, kind, age group (minimum and maximum age on the start date), dates, fee and places left."""
    return [{**p, "places_left": p["capacity"] - p["enrolled"]} for _, p in db["programs"].scan()]


@tool
def get_player_details(db: State, player_id: str) -> dict:
    """Get a youth player: name, date of birth, guardian and contact fan ids, whether the guardian signed this season's waiver, and the player's registrations (program, status, fee paid).

    Args:
        player_id: The player's id, such as 'PL204117'.
    """
    player = find_row(db, "players", player_id, "player")
    registrations = [db["registrations"].peek(r) for r in player["registration_ids"]]
    return {**{k: v for k, v in player.items() if k != "registration_ids"}, "registrations": registrations}


@tool
def calculate(db: State, expression: str) -> str:
    """Evaluate an arithmetic expression with numbers, + - * / and parentheses; the result is rounded to 2 decimals.

    Args:
        expression: The expression, such as '4 * (96 - 60) + 40'.
    """
    return str(arithmetic(expression))


# --------------------------------------------------------------------------- changes


@tool(writes=True)
def buy_tickets(db: State, fan_id: str, game_code: str, section_code: str, quantity: int, payment_id: str) -> dict:
    """Buy tickets for a home game in one section (seats side by side, assigned in order), charged at face value to a card from the fan's profile.

    Args:
        fan_id: The fan's id.
        game_code: The game's code.
        section_code: The section's code, such as 'SEC_LOWER_104'.
        quantity: How many tickets.
        payment_id: The card from the fan's profile that pays.
    """
    fan = find_row(db, "fans", fan_id, "fan", write=True)
    game = find_row(db, "games", game_code, "game")
    find_row(db, "sections", section_code, "section")
    _card(fan, payment_id)
    if days_until(game["date"]) < 0:
        raise ToolError(f"game {game_code} was played on {game['date']}")
    if quantity < 1:
        raise ToolError("buy at least one ticket")
    seats = _take_seats(db, game_code, section_code, quantity)
    price = ticket_price(db, game_code, section_code)
    order_id = _new_id(db, "ticket_orders", "TO", fan_id, game_code, section_code, seats)
    number = _order_number(db, order_id)
    db["ticket_orders"][order_id] = {"order_id": order_id, "order_number": number, "fan_id": fan_id,
                                     "game_code": game_code, "section_code": section_code, "seats": seats,
                                     "face_value": price, "total_paid": _money(price * quantity),
                                     "payment_id": payment_id, "status": "active", "transfers": 0,
                                     "resale_price": None, "upgraded": False}
    fan["ticket_order_ids"].append(order_id)
    return {"order_id": order_id, "order_number": number, "seats": seats, "face_value": price,
            "charged": _money(price * quantity), "payment_id": payment_id}


@tool(writes=True)
def upgrade_tickets(db: State, order_id: str, section_code: str) -> dict:
    """Move all the tickets of an order to another section of the same game; the order's card pays the difference in face value per ticket plus an upgrade fee of 10 per ticket (no fee for a fan with an active season membership).

    Args:
        order_id: The ticket order's id.
        section_code: The new section's code.
    """
    order = find_row(db, "ticket_orders", order_id, "ticket order", write=True)
    if order["status"] != "active":
        raise ToolError(f"ticket order {order['order_number']} is {order['status']}")
    if section_code == order["section_code"]:
        raise ToolError(f"order {order['order_number']} is already in section {section_code}")
    find_row(db, "sections", section_code, "section")
    n = len(order["seats"])
    seats = _take_seats(db, order["game_code"], section_code, n)
    _release(db, order["game_code"], order["section_code"], n)
    price = ticket_price(db, order["game_code"], section_code)
    difference = _money((price - order["face_value"]) * n)
    fee = 0 if active_membership(db, db["fans"].peek(order["fan_id"])) else UPGRADE_FEE * n
    order.update(section_code=section_code, seats=seats, face_value=price, upgraded=True,
                 total_paid=_money(order["total_paid"] + difference + fee))
    return {"order_number": order["order_number"], "section_code": section_code, "seats": seats,
            "price_difference": difference, "upgrade_fee": fee, "charged": _money(difference + fee),
            "payment_id": order["payment_id"]}


@tool(writes=True)
def transfer_tickets(db: State, order_id: str, recipient_email: str) -> dict:
    """Transfer all the tickets of an order to another fan account, found by its email; the tickets leave the sender's account.

    Args:
        order_id: The ticket order's id.
        recipient_email: The email of the recipient's fan account.
    """
    order = find_row(db, "ticket_orders", order_id, "ticket order", write=True)
    if order["status"] not in ("active", "listed"):
        raise ToolError(f"ticket order {order['order_number']} is {order['status']}")
    wanted = recipient_email.strip().lower()
    recipient = next((f for _, f in db["fans"].scan() if f["email"] == wanted), None)
    if recipient is None:
        raise ToolError(f"no fan account with email '{recipient_email}'")
    if recipient["fan_id"] == order["fan_id"]:
        raise ToolError("the recipient already holds the order")
    sender = db["fans"][order["fan_id"]]
    sender["ticket_order_ids"].remove(order_id)
    db["fans"][recipient["fan_id"]]["ticket_order_ids"].append(order_id)
    order.update(fan_id=recipient["fan_id"], transfers=order["transfers"] + 1, status="active", resale_price=None)
    return {"order_number": order["order_number"], "from_fan_id": sender["fan_id"], "to_fan_id": recipient["fan_id"],
            "seats": order["seats"], "transfers": order["transfers"]}


@tool(writes=True)
def list_tickets_for_resale(db: State, order_id: str, price_each: float) -> dict:
    """List all the tickets of an order on the club's official resale exchange at a price per ticket; the fan is paid when they sell.

    Args:
        order_id: The ticket order's id.
        price_each: The asking price per ticket.
    """
    order = find_row(db, "ticket_orders", order_id, "ticket order", write=True)
    if order["status"] not in ("active", "listed"):
        raise ToolError(f"ticket order {order['order_number']} is {order['status']}")
    if price_each <= 0:
        raise ToolError("the price must be positive")
    order.update(status="listed", resale_price=_money(price_each))
    return {"order_number": order["order_number"], "status": "listed", "price_each": order["resale_price"],
            "tickets": len(order["seats"])}


@tool(writes=True)
def relocate_membership_seat(db: State, membership_id: str, section_code: str) -> dict:
    """Move a season membership's seat to another section for the rest of the season; the difference in season price for the remaining home games is added to (or taken off) the membership's balance.

    Args:
        membership_id: The membership's id.
        section_code: The new section's code.
    """
    membership = find_row(db, "memberships", membership_id, "membership", write=True)
    section = find_row(db, "sections", section_code, "section")
    if section_code == membership["section_code"]:
        raise ToolError(f"membership {membership['member_number']} is already in section {section_code}")
    games = [g for _, g in db["games"].scan()]
    left = sum(days_until(g["date"]) >= 0 for g in games)
    old = db["sections"].peek(membership["section_code"])
    difference = _money((section["season_price"] - old["season_price"]) * left / len(games))
    target = db["sections"][section_code]
    index = target["member_seats_taken"]
    target["member_seats_taken"] = index + 1
    membership.update(section_code=section_code, row=chr(ord("A") + index // SEATS_PER_ROW),
                      seat=index % SEATS_PER_ROW + 1, season_price=section["season_price"],
                      balance=_money(membership["balance"] + difference),
                      relocations_this_season=membership["relocations_this_season"] + 1)
    return {"member_number": membership["member_number"], "section_code": section_code, "row": membership["row"],
            "seat": membership["seat"], "games_left": left, "balance_change": difference,
            "balance": membership["balance"]}


@tool(writes=True)
def register_player(db: State, fan_id: str, player_id: str, program_code: str, payment_id: str) -> dict:
    """Register a youth player for a camp or league, paid with a card of the registering fan.

    Args:
        fan_id: The fan who registers and pays (the caller).
        player_id: The player's id.
        program_code: The program's code, such as 'CAMP_HOLIDAY_U12'.
        payment_id: The card from the fan's profile that pays the fee.
    """
    fan = find_row(db, "fans", fan_id, "fan")
    player = find_row(db, "players", player_id, "player", write=True)
    program = find_row(db, "programs", program_code, "program", write=True)
    _card(fan, payment_id)
    if any(db["registrations"].peek(r)["program_code"] == program_code
           and db["registrations"].peek(r)["status"] == "registered" for r in player["registration_ids"]):
        raise ToolError(f"{player['name']} is already registered for {program_code}")
    if program["enrolled"] >= program["capacity"]:
        raise ToolError(f"{program['name']} is full")
    program["enrolled"] += 1
    reg_id = _new_id(db, "registrations", "RG", player_id, program_code)
    db["registrations"][reg_id] = {"registration_id": reg_id, "player_id": player_id, "program_code": program_code,
                                   "registered_by": fan_id, "fee_paid": program["fee"], "payment_id": payment_id,
                                   "status": "registered", "refund": None}
    player["registration_ids"].append(reg_id)
    return {"registration_id": reg_id, "player": player["name"], "program": program["name"],
            "starts": program["start_date"], "charged": program["fee"], "payment_id": payment_id}


@tool(writes=True)
def cancel_registration(db: State, registration_id: str) -> dict:
    """Cancel a youth registration and refund it to the card that paid: the full fee at least 14 days before the program starts, half the fee from 3 to 13 days before, nothing later.

    Args:
        registration_id: The registration's id.
    """
    reg = find_row(db, "registrations", registration_id, "registration", write=True)
    if reg["status"] != "registered":
        raise ToolError(f"registration {registration_id} is {reg['status']}")
    program = db["programs"][reg["program_code"]]
    days = days_until(program["start_date"])
    share = 1 if days >= FULL_REFUND_DAYS else (0.5 if days >= HALF_REFUND_DAYS else 0)
    refund = _money(reg["fee_paid"] * share)
    program["enrolled"] -= 1
    reg.update(status="cancelled", refund=refund)
    return {"registration_id": registration_id, "status": "cancelled", "days_before_start": days,
            "refunded": refund, "payment_id": reg["payment_id"]}


@tool(writes=True)
def return_merch_order(db: State, order_id: str) -> dict:
    """Return a delivered shop order in full; the amount paid is refunded to the card that paid.

    Args:
        order_id: The shop order's id.
    """
    order = find_row(db, "merch_orders", order_id, "shop order", write=True)
    if order["status"] != "delivered":
        raise ToolError(f"shop order {order['order_number']} is {order['status']}, not delivered")
    order["status"] = "returned"
    return {"order_number": order["order_number"], "status": "returned", "refunded": order["total"],
            "payment_id": order["payment_id"]}


# --------------------------------------------------------------------------- hand-over


@tool(terminal=True)
def transfer_to_human_agents(db: State, summary: str) -> str:
    """Hand the conversation to a human agent, with a short summary of the fan's issue; this ends your part.

    Use it only when the request is outside what you can do under the policy and the fan asks for a person.

    Args:
        summary: What the fan needs and what has been done so far.
    """
    return "Transfer successful"
