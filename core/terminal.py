"""One sanitiser for everything shown on a terminal: data is shown, never interpreted.

Model replies, tool names, server error texts, task ids and model names reach `tau show`, `tau runs`,
`tau tasks` and error lines. On a TTY a raw `ESC[2J` clears the screen, an OSC 52 sequence writes the
clipboard, and a newline in an id forges a line; in a rich table `[/]` raises MarkupError and
`[link=...]` emits a hyperlink. `safe` shows control characters, escape sequences, bidirectional
overrides and lone surrogates escaped (`\\x1b`); `cell` makes a rich `Text` (never parsed as markup);
`reward` shows a number as a few characters (`+1`, `-0.5`, `+1e+308`, `nan`), never a 309-digit integer.
"""

from __future__ import annotations

import math
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


#: largest magnitude shown as a whole number; beyond it (or with a fraction) a reward is shown in 4 significant digits
WHOLE_UP_TO = 1e6


def reward(value: Any) -> str:
    """A reward or score as a terminal shows it: signed, short whatever its size (`f"{1e308:+.0f}"` is 309 digits),
    `nan`/`+inf`/`-inf` for a non-finite one, and the text of anything that is not a number."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return safe(value)
    try:
        number = float(value)
    except OverflowError:  # an int beyond a float
        return "+huge" if value > 0 else "-huge"
    if math.isnan(number):
        return "nan"
    if math.isinf(number):
        return "+inf" if number > 0 else "-inf"
    if number == int(number) and abs(number) < WHOLE_UP_TO:
        return f"{number:+.0f}"
    return f"{number:+.4g}"
