"""The club's situation check for the Tracer (`TracerHints.situation`): the task's occasion must agree with the
fan's household and the tickets the request is about.

- "My child's birthday is coming up": the fan is the guardian of a youth player whose birthday falls in the next
  month; a registration with it is for that child.
- An outing with someone ("taking my father to his first game", "treat my friends", "my best friend is moving
  away", "my father is in hospital and this may be the last game I see with him") is about tickets, enough of
  them to seat the party: at least two (three to treat friends) on the order bought, upgraded or held.
- "Money is tight": every purchase, upgrade or registration the task makes has the fan's own limit on what it may
  cost (a decision rule); an uncapped $840 upgrade beside it reads as a contradiction.
"""

from __future__ import annotations

import datetime as _dt
from typing import Any

from tau_emotion.domain_packs.basketball.tools import TODAY

BIRTHDAY = "birthday is coming up"
#: occasion words -> the fewest tickets that seat the party
PARTY = {"taking {{my}} father": 2, "treat {{my}} friends": 3, "best friend is moving away": 2,
         "last game {{I}} see with him": 2}
BIRTHDAY_DAYS = 31
TIGHT = "money is tight"
#: the goal calls that spend the fan's money
SPENDS = ("buy_tickets", "upgrade_tickets", "register_player")


def birthday_soon(dob: str, today: str = TODAY, days: int = BIRTHDAY_DAYS) -> bool:
    """Whether a birthday (its month and day) falls within `days` days from `today`."""
    now = _dt.date.fromisoformat(today)
    for year in (now.year, now.year + 1):
        try:
            day = _dt.date.fromisoformat(f"{year}{dob[4:]}")
        except ValueError:  # 29 February in a common year
            day = _dt.date(year, 3, 1)
        if 0 <= (day - now).days <= days:
            return True
    return False


def _tickets(state: Any, arguments: dict) -> int | None:
    """How many tickets a goal call buys or acts on (None: it is about no tickets)."""
    if "quantity" in arguments and "game_code" in arguments:
        return int(arguments["quantity"])
    oid = arguments.get("order_id")
    if isinstance(oid, str) and oid in state["ticket_orders"]:
        return len(state["ticket_orders"].peek(oid)["seats"])
    return None


def situation(state: Any, cand: Any) -> str | None:
    """Why the candidate's occasion contradicts the fan's household or tickets, or None."""
    occasion = cand.occasion or ""
    if not occasion:
        return None
    if BIRTHDAY in occasion:
        players = state["players"]
        kids = [pid for pid, p in players.scan() if p["guardian_fan_id"] == cand.persona.entity
                and birthday_soon(p["dob"])]
        if not kids:
            return f"occasion '{occasion}', but no child of fan {cand.persona.entity} has a birthday coming up"
        for draft in cand.drafts:
            pid = draft.arguments.get("player_id")
            if pid is not None and pid not in kids:
                return f"occasion '{occasion}' on {draft.kind} of player {pid}, whose birthday is not coming up"
    if TIGHT in occasion:
        spent = [d for d in cand.drafts if d.goal in SPENDS and not d.refused and not d.decision]
        if spent:
            return f"occasion '{occasion}' beside {spent[0].goal}, which has no limit on what it may cost"
    for words, fewest in PARTY.items():
        if words not in occasion:
            continue
        counts = [_tickets(state, d.arguments) for d in cand.drafts]
        if all(n is None for n in counts):
            return f"occasion '{occasion}' on a task about no tickets"
        if any(n is not None and n < fewest for n in counts):
            return f"occasion '{occasion}' on tickets for fewer than {fewest}"
    return None


def refund_words(state: Any, fan_id: str, payment_id: str) -> str:
    """Where a refund is said to go: "{{my}} card" when the card that paid is the caller's, else the card that paid
    (a guardian's, when a contact who is not the guardian calls)."""
    fan = state["fans"].peek(fan_id) or {}
    return "{{my}} card" if payment_id in fan.get("payment_methods", {}) else "the card that paid for it"


def world(before: Any, after: Any, cand: Any) -> str | None:
    """Why a request is not true of the fan's records (`TracerHints.world`), or None: a refund told to come back to
    the caller's card while it goes to the card that paid, someone else's."""
    for draft in cand.drafts:
        if draft.goal != "cancel_registration":
            continue
        reg = before["registrations"].peek(draft.arguments.get("registration_id")) or {}
        mine = reg.get("payment_id") in (before["fans"].peek(cand.persona.entity) or {}).get("payment_methods", {})
        if not mine and any("{{my}} card" in (o.ask or "") for o in draft.outputs):
            return (f"{draft.kind}: the refund is said to come back to the caller's card, but it goes to "
                    f"{reg.get('payment_id')}, which is not theirs")
    return None
