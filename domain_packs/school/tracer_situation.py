"""The school's situation check for the Tracer (`TracerHints.situation`): the task's occasion must be the caller's.

Most occasions tell the student's own life ("I am the first in my family to go to college", "I work full time
and study in the evenings"). Said by a guardian calling for their child they put the student's life in the
parent's mouth: the occasion needs the caller to be the student. The occasions any caller can have (money is
tight, planning the year ahead, a routine question) pass for both.
"""

from __future__ import annotations

from typing import Any

#: words of the occasions only the student lives (see `tracer_hints.OCCASIONS`)
STUDENT_ONLY = ("first in {{my}} family to go to college", "transfer to a four-year university",
                "depends on finishing this program", "study in the evenings", "juggling classes",
                "applying for a scholarship")


def caller_kind(cand: Any) -> str:
    """'student' or 'guardian': who is on the phone."""
    return cand.persona.identified["session"]["current"]["kind"]


def situation(state: Any, cand: Any) -> str | None:
    """Why the candidate's occasion contradicts who calls, or None."""
    occasion = cand.occasion or ""
    if caller_kind(cand) == "guardian" and any(p in occasion for p in STUDENT_ONLY):
        return f"occasion '{occasion}' is the student's own, but the caller is their guardian"
    return None
