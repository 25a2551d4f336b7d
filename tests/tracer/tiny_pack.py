"""Tiny domains for Tracer tests, loaded as a plugin by module path (`--plugins tests.tracer.tiny_pack`).

- `tiny_chain`: two tools, one declared edge `look -> mark`, so no workflow is longer than 2 calls.
- `tiny_nograph`: the same tools with no declared edges at all.
- `tiny_counter`: a write whose result depends on a process-wide counter (never replays the same).
This module also gives the tiny domains' Tracer hints (`HINTS`).
"""

from __future__ import annotations

import itertools

from tau_emotion.core import hookimpl
from tau_emotion.core.domain import Domain
from tau_emotion.core.state import Database, State
from tau_emotion.core.tools import ToolError, tool
from tau_emotion.tracer.hints import GroundingContext, IntentDraft, Output, Persona, TracerHints

_TICKS = itertools.count(1)


@tool
def look(db: State, item_id: str) -> dict:
    """Look at an item.

    Args:
        item_id: The item's id, such as 'i1'.
    """
    if item_id not in db["items"]:
        raise ToolError(f"no item {item_id}")
    return {"label": db["items"].peek(item_id)["label"]}


@tool(writes=True)
def mark(db: State, item_id: str, note: str) -> str:
    """Write a note on an item.

    Args:
        item_id: The item's id.
        note: The note.
    """
    db["items"][item_id]["note"] = note
    return "marked"


@tool(writes=True)
def stamp(db: State, item_id: str) -> str:
    """Stamp an item with the next number of a counter.

    Args:
        item_id: The item's id.
    """
    number = next(_TICKS)
    db["items"][item_id]["stamp"] = number
    return f"stamped {number}"


def _database() -> Database:
    return Database({"items": {"i1": {"label": "red box"}, "i2": {"label": "blue box"}}})


def persona(ctx: GroundingContext) -> Persona:
    return Persona(name="Tess Tiny", facts={"owner_name": "Tess Tiny", "item_id": "i1"})


def ground_mark(ctx: GroundingContext) -> IntentDraft:
    return IntentDraft(kind="mark", goal="mark", arguments={"item_id": "i1", "note": "fragile"},
                       request=["put the note 'fragile' on item i1"], facts={"note": "fragile"},
                       reads={"look": [{"item_id": "i1"}]}, evidence=["look"],
                       outputs=[Output("red box", "the item's label")])


HINTS = TracerHints(persona=persona, goals={"mark": ground_mark}, entry_tools=["look"])


@hookimpl
def tau_register_domains(register):
    register(Domain("tiny_chain", [look, mark], graph_edges=[("look", "mark")], load_database=_database,
                    load_policy=lambda: "Notes may be written on any item.", load_tasks=lambda: []))
    register(Domain("tiny_nograph", [look, mark], load_database=_database,
                    load_policy=lambda: "Notes may be written on any item.", load_tasks=lambda: []))
    register(Domain("tiny_counter", [look, stamp], graph_edges=[("look", "stamp")], load_database=_database,
                    load_policy=lambda: "Items may be stamped.", load_tasks=lambda: []))


@hookimpl(optionalhook=True)
def tau_tracer_hints(domain):
    if domain.name in ("tiny_chain", "tiny_nograph"):
        return HINTS
