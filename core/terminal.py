"""One sanitiser for everything shown on a terminal: data is shown, never interpreted.

Model replies, tool names, server error texts, task ids and model names reach `tau show`, `tau runs`,
`tau tasks` and error lines. On a TTY a raw `ESC[2J` clears the screen, an OSC 52 sequence writes the
clipboard, and a newline in an id forges a line; in a rich table `[/]` raises MarkupError and
`[link=...]` emits a hyperlink. `safe` shows control characters, escape sequences, bidirectional
overrides and lone surrogates escaped (`\\x1b`); `cell` makes a rich `Text` (never parsed as markup).
"""

from __future__ import annotations

import re
from typing import Any

_UNSAFE = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u200e\u200f\u202a-\u202e\u2066-\u2069\ud800-\udfff]")
_UNSAFE_LINE = re.compile("[\x00-\x1f\x7f-\x9f\u200e\u200f\u202a-\u202e\u2066-\u2069\ud800-\udfff]")


def _escape(match: re.Match[str]) -> str:
    code = ord(match.group(0))
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def safe(value: Any, multiline: bool = False) -> str:
    """`value` as text fit for a terminal: every control character (newlines and tabs too, unless
    `multiline`) and escape sequence shown escaped."""
    text = value if isinstance(value, str) else str(value)
    return (_UNSAFE if multiline else _UNSAFE_LINE).sub(_escape, text)


def cell(value: Any) -> Any:
    """A rich table cell showing `value` literally: sanitised, and never parsed as markup."""
    from rich.text import Text

    return Text(safe(value))
