"""Free text in tool arguments refuses control characters, escape sequences and bidirectional overrides (issue 35
item 6): the shared argument validation (`Toolset.call`) answers with a tool error, for every text parameter of
every installed pack, and a pack opts a field out with `@tool(raw_text=(...))`."""

from __future__ import annotations

import pytest

from tau_emotion.core.manager import load_all_plugins
from tau_emotion.core.state import Database
from tau_emotion.core.tools import Toolset, tool

#: what the probes stored: NUL, a colour escape, a right-to-left override; a carriage return forging a line;
#: an OSC window title; a C1 control; a lone surrogate
HOSTILE = ["\x00\x1b[31m\u202e", "Boston\rNew York", "x\x1b]2;owned\x07", "a\x85b", "\ud800", "left\u2066right"]


def _text_parameters():
    pm = load_all_plugins()
    for name in pm.catalog("domains").names():
        obj = pm.catalog("domains").get(name)
        domain = obj if hasattr(obj, "toolset") else obj()
        for tool_ in domain.toolset.tools.values():
            for param, spec in tool_.parameters.get("properties", {}).items():
                kinds = {spec.get("type")} | {s.get("type") for s in spec.get("anyOf", [])}
                if "string" in kinds:
                    yield name, domain, tool_.name, param


def test_every_text_parameter_of_every_pack_refuses_control_characters():
    seen = 0
    for domain_name, domain, tool_name, param in _text_parameters():
        state = domain.database.state()
        for text in HOSTILE:
            result, is_error = domain.toolset.call(state, tool_name, {param: text})
            assert is_error and "control character" in result, (domain_name, tool_name, param, text, result)
        seen += 1
    assert seen >= 35  # the probe found 35 free-text fields that stored such text; every text field is covered


def test_ordinary_text_with_tabs_newlines_and_accents_passes():
    @tool
    def note(db, text: str) -> str:
        """Keep a note.

        Args:
            text: The note.
        """
        return text

    tools = Toolset([note])
    state = Database({}).state()
    for text in ("Line one\nline two\tand a tab", "Zoë, São Paulo — 北京", "emoji 🙂", ""):
        assert tools.call(state, "note", {"text": text}) == (text, False)


def test_a_pack_opts_a_field_out_and_nested_text_is_checked():
    @tool(raw_text=("payload",))
    def send(db, payload: str, label: str = "") -> str:
        """Send raw bytes to a terminal emulator under test.

        Args:
            payload: Bytes as text, escape sequences included.
            label: A label.
        """
        return "sent"

    @tool
    def book(db, passengers: list[dict]) -> str:
        """Book.

        Args:
            passengers: The passengers.
        """
        return "booked"

    tools = Toolset([send, book])
    state = Database({}).state()
    assert tools.call(state, "send", {"payload": "\x1b[2J"}) == ("sent", False)
    text, is_error = tools.call(state, "send", {"payload": "ok", "label": "\x1b[2J"})
    assert is_error and "argument 'label' holds a control character (\\x1b)" in text
    text, is_error = tools.call(state, "book", {"passengers": [{"name": "Ada"}, {"name": "Ev\u202eil"}]})
    assert is_error and "passengers[1].name" in text and "\\u202e" in text


@pytest.mark.parametrize("text", HOSTILE)
def test_the_refusal_itself_shows_the_character_escaped(text):
    @tool
    def find(db, name: str) -> str:
        """Find.

        Args:
            name: A name.
        """
        return name

    result, is_error = Toolset([find]).call(Database({}).state(), "find", {"name": text})
    assert is_error
    assert not any(c in result for c in "\x00\x1b\r\x85\u202e\u2066\ud800\x07")  # shown escaped, never raw
