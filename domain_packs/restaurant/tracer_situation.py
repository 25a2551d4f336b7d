"""The restaurant pack's situation check for the Tracer (`TracerHints.situation`): the task's occasion must agree
with the meal it is about (the day, seating and party of a new booking, a changed booking or a waitlist place).

- "old school friends are in town for one weekend": a Friday, Saturday or Sunday.
- "a lunch after my grandfather's funeral": a lunch seating (before 16:00), within two weeks.
- An occasion with other people in it needs a party that holds them: at least 3 for the parents' anniversary,
  meeting a partner's parents or a group of old friends, at least 2 for a client or a friend's farewell.
"""

from __future__ import annotations

import datetime as _dt
from typing import Any

from tau_emotion.domain_packs.restaurant.tools import TODAY
from tau_emotion.tracer.hints import days_between

WEEKEND = ("Friday", "Saturday", "Sunday")
LUNCH_BEFORE = "16:00"
FUNERAL_WITHIN_DAYS = 14
#: occasion words -> the smallest party it fits
PARTY_AT_LEAST = {"wedding anniversary": 3, "partner's parents": 3, "old school friends": 3, "important client": 2,
                  "moving abroad": 2, "last birthday dinner with the family": 3}


def meal(state: Any, draft: Any) -> dict | None:
    """The day, seating and party size a draft is about: its own arguments over its booking's (None: no meal)."""
    args = draft.arguments
    bid = args.get("booking_id")
    booking = state["bookings"].peek(bid) if isinstance(bid, str) else None
    base = {k: booking[k] for k in ("date", "time", "party_size")} if booking else {}
    found = {**base, **{k: args[k] for k in ("date", "time", "party_size") if k in args}}
    return found if len(found) == 3 else None


def situation(state: Any, cand: Any) -> str | None:
    """Why the candidate's occasion contradicts the meal it is about, or None."""
    occasion = (cand.occasion or "").lower()
    if not occasion:
        return None
    for draft in cand.drafts:
        m = meal(state, draft)
        if m is None:
            continue
        day = _dt.date.fromisoformat(m["date"]).strftime("%A")
        if "one weekend" in occasion and day not in WEEKEND:
            return f"occasion '{cand.occasion}' for a meal on a {day}"
        if "funeral" in occasion and (m["time"] >= LUNCH_BEFORE or days_between(TODAY, m["date"]) > FUNERAL_WITHIN_DAYS):
            return f"occasion '{cand.occasion}' for a meal at {m['time']} on {m['date']}"
        for words, least in PARTY_AT_LEAST.items():
            if words in occasion and m["party_size"] < least:
                return f"occasion '{cand.occasion}' for a party of {m['party_size']}"
    return None
