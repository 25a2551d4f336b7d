"""Bounds on what an agent or a model server can hand the harness, and scrubbing of secrets.

A model may send tool arguments nested hundreds deep (pydantic's serialiser gives up near 260
levels), megabytes of text, `NaN`, or echo an `Authorization` header in an error text. These
helpers keep each of those to one trial's tool error or a truncated, scrubbed text, so nothing a
model says can abort a run, bloat the results file or leak a key into it.
"""

from __future__ import annotations

import json
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
#: longest tool name or call id kept from a model's reply
MAX_NAME_CHARS = 256
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


#: characters free text in a tool argument may not hold: C0 controls but tab and newline, DEL, C1 controls,
#: bidirectional marks, overrides and isolates, lone surrogates (an origin of "\x00\x1b[31m\u202e" was stored,
#: then shown and compared as if it were a city)
CONTROL_CHARACTERS = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u200e\u200f\u202a-\u202e\u2066-\u2069\ud800-\udfff]")


def control_problem(arguments: Mapping[str, Any], allowed: frozenset[str] = frozenset()) -> str | None:
    """Why a text in tool `arguments` is refused (it holds a control character), or None. Top-level arguments
    named in `allowed` (a pack's opt-out, `@tool(raw_text=...)`) are not checked, nor anything inside them."""
    search = CONTROL_CHARACTERS.search
    for value in arguments.values():  # the usual call: flat, clean text and numbers (one regex scan per text)
        kind = type(value)
        if (kind is str and search(value) is None) or kind is int or kind is float or kind is bool or value is None:
            continue
        break
    else:
        return None
    stack: list[tuple[str, Any]] = [(k, v) for k, v in arguments.items() if k not in allowed]
    while stack:
        where, item = stack.pop()
        if isinstance(item, str):
            found = CONTROL_CHARACTERS.search(item)
            if found:
                code = ord(found.group(0))
                shown = f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"
                return (f"argument '{where}' holds a control character ({shown}): text arguments may not hold "
                        f"control characters, escape sequences or bidirectional overrides")
        elif isinstance(item, Mapping):
            stack.extend((f"{where}.{k}", v) for k, v in item.items())
            stack.extend((f"{where} (a key)", k) for k in item if isinstance(k, str))
        elif isinstance(item, (list, tuple)):
            stack.extend((f"{where}[{i}]", v) for i, v in enumerate(item))
    return None


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
#: `scheme://user:password@host`: the userinfo part
_USERINFO = re.compile(r"(?i)\b([a-z][a-z0-9+.-]*://)[^/\s@'\"]+@")
#: `--api-key VALUE`, `--hf-token=VALUE` in a command line (serve arguments)
_SECRET_FLAG = re.compile(r"(?i)(--?[a-z0-9_-]*(?:key|token|secret|password|passwd|credential)[a-z0-9_-]*)(=|\s+)"
                          r"(?!\[REDACTED\])(['\"]?)[^\s'\"]+\3")
SECRET_WORDS = ("key", "token", "secret", "password", "passwd", "credential", "authorization", "cookie")
REDACTED = "[REDACTED]"
#: shortest literal secret value replaced wherever it appears (shorter ones would redact ordinary words)
MIN_LITERAL = 5
#: literal values of the secrets this process was given (`remember_secrets`), longest first
_literals: list[str] = []


def remember_secrets(values: Any) -> None:
    """Remember the literal secret values in `values` (options, arguments: walked like `redact`), so every
    scrubbed text, however it words them (a 401 body echoing a key that does not look like one), hides them."""
    found: set[str] = set(_literals)
    stack: list[tuple[Any, bool]] = [(values, False)]
    while stack:
        item, secret = stack.pop()
        if isinstance(item, Mapping):
            stack.extend((v, secret or is_secret_name(str(k))) for k, v in item.items())
        elif isinstance(item, (list, tuple)):
            stack.extend((v, secret) for v in item)
        elif isinstance(item, str):
            if secret and len(item) >= MIN_LITERAL and item != REDACTED:
                found.add(item)
            for match in re.finditer(r"(?i)\b[a-z][a-z0-9+.-]*://([^/\s@'\"]+)@", item):
                password = match.group(1).partition(":")[2] or match.group(1)
                if len(password) >= MIN_LITERAL:
                    found.add(password)
            for match in _SECRET_FLAG.finditer(item):
                value = match.group(0)[len(match.group(1)) + len(match.group(2)):].strip("'\"")
                if len(value) >= MIN_LITERAL:
                    found.add(value)
    _literals[:] = sorted(found, key=len, reverse=True)


def scrub(text: str) -> str:
    """`text` with bearer tokens, auth header values, key-shaped strings, URL userinfo, secret flags' values
    and the literal value of every secret this process was given replaced by [REDACTED]."""
    for literal in _literals:
        if literal in text:
            text = text.replace(literal, REDACTED)
    text = _USERINFO.sub(lambda m: f"{m.group(1)}{REDACTED}@", text)
    text = _SECRET_FLAG.sub(lambda m: f"{m.group(1)}{m.group(2)}{REDACTED}", text)
    text = _BEARER.sub(lambda m: f"{m.group(1)} {REDACTED}", text)
    text = _AUTH_HEADER.sub(lambda m: m.group(1) + REDACTED, text)
    return _KEY_SHAPED.sub(REDACTED, text)


def scrub_literals(text: str) -> str:
    """`text` with only the remembered literal secrets replaced (cheap: for whole stored rows)."""
    for literal in _literals:
        if literal in text:
            text = text.replace(literal, REDACTED)
            escaped = json.dumps(literal)[1:-1]
            if escaped != literal:
                text = text.replace(escaped, REDACTED)
        elif json.dumps(literal)[1:-1] in text:
            text = text.replace(json.dumps(literal)[1:-1], REDACTED)
    return text


def is_secret_name(name: str) -> bool:
    """A name that says key, token, secret, password, credential, authorization or cookie holds a secret."""
    lowered = name.lower().replace("tokens", "")  # max_tokens, prompt_tokens: counts, not secrets
    return any(word in lowered for word in SECRET_WORDS)


def redact(value: Any, secret: bool = False) -> Any:
    """`value` (options, arguments, a summary, metadata: any JSON-like data) with every secret replaced by
    [REDACTED]: each text under a secret-named key at any depth (headers included), and in every other
    text the patterns and literals `scrub` hides. Numbers and booleans stay (counts such as a metric named
    `key_facts` are no secrets). The one walk for everything stored, printed or exported."""
    if isinstance(value, Mapping):
        return {k: redact(v, secret or is_secret_name(str(k))) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [redact(v, secret) for v in value]
    if isinstance(value, str):
        return REDACTED if secret and value and value.upper() != REDACTED else scrub(value)
    return value


def holds_redacted(value: Any) -> bool:
    """Whether `value` (a stored option) had a secret taken out of it."""
    if isinstance(value, str):
        return REDACTED in value
    if isinstance(value, Mapping):
        return any(holds_redacted(v) for v in value.values())
    if isinstance(value, (list, tuple)):
        return any(holds_redacted(v) for v in value)
    return False


def redact_options(options: Mapping[str, Mapping[str, Any]]) -> dict[str, dict[str, Any]]:
    """Plugin options with every secret (`redact`) replaced by [REDACTED]."""
    return {group: redact(values) for group, values in options.items()}
