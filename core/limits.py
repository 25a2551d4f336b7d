"""Bounds on what an agent or a model server can hand the harness, and scrubbing of secrets.

A model may send tool arguments nested hundreds deep (pydantic's serialiser gives up near 260
levels), megabytes of text, `NaN`, or echo an `Authorization` header in an error text. These
helpers keep each of those to one trial's tool error or a truncated, scrubbed text, so nothing a
model says can abort a run, bloat the results file or leak a key into it.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from typing import Any

#: deepest nesting of tool arguments a tool sees (real tool schemas need a handful of levels)
MAX_ARG_DEPTH = 32
#: largest tool-argument payload (characters of JSON) a tool sees
MAX_ARG_CHARS = 100_000
#: longest text kept in a stored message (tool results, agent and user messages)
MAX_STORED_TEXT = 100_000
#: longest tool error text returned to the agent (and stored)
MAX_ERROR_TEXT = 2_000


def truncate(text: str, limit: int) -> str:
    """`text` cut to `limit` characters with a marker saying how much was dropped."""
    if len(text) <= limit:
        return text
    return text[:limit] + f" …[truncated {len(text) - limit} chars]"


def finite_number(value: Any) -> float | None:
    """`value` as a finite float (a number, or text holding one), or None: a model server's `usage` may
    carry `1e400` (infinity once parsed), `NaN` or `"n/a"`, and a non-finite number stored as JSON
    `null` makes the whole row unreadable."""
    if isinstance(value, bool):
        return float(value)
    if isinstance(value, (int, float)):
        try:
            number = float(value)
        except OverflowError:  # an int too large for a float
            return None
    elif isinstance(value, str) and len(value) < 64:
        try:
            number = float(value)
        except ValueError:
            return None
    else:
        return None
    return number if math.isfinite(number) else None


def finite_usage(usage: Any) -> dict[str, float]:
    """A usage/cost mapping with only finite numbers: anything else (infinite, NaN, text, a nested
    object) is left out, so what a plugin or server reports can never make a stored row unreadable."""
    if not isinstance(usage, Mapping):
        return {}
    out: dict[str, float] = {}
    for key, value in usage.items():
        number = finite_number(value)
        if number is not None:
            out[str(key)[:200]] = number
    return out


def argument_problem(value: Any) -> str | None:
    """Why tool arguments are unacceptable (too deep, too large, a non-finite number), or None.

    Iterative, so an argument tree of any depth is walked without recursion. Flat arguments of
    strings, ints, finite floats and bools (most tool calls) take a fast path.
    """
    if type(value) is dict:
        size = 0
        for key, item in value.items():
            if type(key) is not str:
                break
            size += len(key)
            kind = type(item)
            if kind is str:
                size += len(item)
            elif kind is float and math.isfinite(item):
                size += 8
            elif kind is not int and kind is not bool and item is not None:
                break
        else:
            return None if size <= MAX_ARG_CHARS else f"arguments are larger than {MAX_ARG_CHARS} characters"
    stack: list[tuple[Any, int]] = [(value, 0)]
    size = 0
    while stack:
        item, depth = stack.pop()
        if depth > MAX_ARG_DEPTH:
            return f"arguments nest deeper than {MAX_ARG_DEPTH} levels"
        if isinstance(item, float):
            if not math.isfinite(item):
                return f"arguments contain a non-finite number ({item})"
            size += 8
        elif isinstance(item, str):
            size += len(item)
        elif isinstance(item, Mapping):
            for key, sub in item.items():
                size += len(str(key))
                stack.append((sub, depth + 1))
        elif isinstance(item, (list, tuple)):
            stack.extend((sub, depth + 1) for sub in item)
        else:
            size += 8
        if size > MAX_ARG_CHARS:
            return f"arguments are larger than {MAX_ARG_CHARS} characters"
    return None


_BEARER = re.compile(r"(?i)\b(bearer|basic|token)\s+[A-Za-z0-9._~+/=-]{8,}")
_AUTH_HEADER = re.compile(r"(?i)((?:authorization|x-api-key|api-key|api_key)['\"]?\s*[:=]\s*['\"]?)[^\s'\",}]+")
_KEY_SHAPED = re.compile(
    r"\b(?:sk|pk|rk|ghp|gho|ghs|xox[abprs]|hf|AKIA)[-_][A-Za-z0-9_-]{8,}"  # vendor key prefixes
    r"|\b[A-Fa-f0-9]{32,}\b"  # long hex
    r"|\b(?=[A-Za-z0-9+/_-]*\d)(?=[A-Za-z0-9+/_-]*[A-Z])(?=[A-Za-z0-9+/_-]*[a-z])[A-Za-z0-9+/_-]{32,}={0,2}")  # base64
SECRET_WORDS = ("key", "token", "secret", "password", "passwd", "credential")
REDACTED = "[REDACTED]"


def scrub(text: str) -> str:
    """`text` with bearer tokens, auth header values and key-shaped strings replaced by [REDACTED]."""
    text = _BEARER.sub(lambda m: f"{m.group(1)} {REDACTED}", text)
    text = _AUTH_HEADER.sub(lambda m: m.group(1) + REDACTED, text)
    return _KEY_SHAPED.sub(REDACTED, text)


def is_secret_name(name: str) -> bool:
    """An option whose name says key, token, secret or password holds a secret."""
    lowered = name.lower()
    return any(word in lowered for word in SECRET_WORDS)


def redact_options(options: Mapping[str, Mapping[str, Any]]) -> dict[str, dict[str, Any]]:
    """Plugin options with every secret-named value that is set replaced by [REDACTED]."""
    return {group: {name: (REDACTED if is_secret_name(name) and value not in (None, "") else value)
                    for name, value in values.items()}
            for group, values in options.items()}
