"""Values a pack's tools compute alike: amounts of money (`money`, and `money_text` for what an agent says)
and a bounded `calculate` (`arithmetic`). Packs import them from here; the core knows no money.

One rounding rule: an amount is rounded to cents and an empty fraction dropped, so a stored figure
reads '327' or '54.5' (`money`, a number) and a told one '327' or '54.50' (`money_text`).
"""

from __future__ import annotations

import ast
import hashlib
import json
import operator
from typing import Any

from tau_emotion.core.tools import ToolError


def money(value: float) -> float | int:
    """Round to cents and drop an empty fraction, so figures read like '327' or '54.5'."""
    value = round(value + 0.0, 2)
    return int(value) if value == int(value) else value


def money_text(value: float) -> str:
    """An amount as an agent tells it (and a gold output says it): '150', '12.50'."""
    amount = money(value)
    return str(amount) if isinstance(amount, int) else f"{amount:.2f}"


_ARITHMETIC = {ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul, ast.Div: operator.truediv,
               ast.UAdd: operator.pos, ast.USub: operator.neg}
MAX_EXPRESSION = 500


def _arithmetic_value(node: ast.AST) -> float:
    if isinstance(node, ast.Expression):
        return _arithmetic_value(node.body)
    if isinstance(node, ast.Constant) and type(node.value) in (int, float):
        return node.value
    if isinstance(node, ast.BinOp) and type(node.op) in _ARITHMETIC:
        return _ARITHMETIC[type(node.op)](_arithmetic_value(node.left), _arithmetic_value(node.right))
    if isinstance(node, ast.UnaryOp) and type(node.op) in _ARITHMETIC:
        return _ARITHMETIC[type(node.op)](_arithmetic_value(node.operand))
    raise ToolError("only numbers, + - * / and parentheses are allowed")


def arithmetic(expression: str) -> float | int:
    """A pack's `calculate` tool: numbers, + - * /, signs and parentheses (thousands commas allowed), rounded
    to cents with `money`; anything else, or a division by zero, is a ToolError. Nothing reaches `eval`, and
    without powers no expression can start an unbounded computation."""
    if len(expression) > MAX_EXPRESSION:
        raise ToolError(f"the expression is too long (at most {MAX_EXPRESSION} characters)")
    try:
        tree = ast.parse(expression.replace(",", "").strip(), mode="eval")
    except SyntaxError:
        raise ToolError(f"'{expression}' is not a valid arithmetic expression") from None
    try:
        return money(_arithmetic_value(tree))
    except ZeroDivisionError:
        raise ToolError("division by zero") from None


def digest(*parts: Any) -> str:
    """A stable hex digest of JSON-able parts: what the packs' tools derive new ids from, so a replay makes the
    same ids."""
    return hashlib.sha256(json.dumps(parts, sort_keys=True, default=str).encode()).hexdigest()


def new_id(db: Any, table: str, prefix: str, *parts: Any) -> str:
    """A new key of `table`, `prefix` plus six digits derived from `parts` (the call's arguments), never one in use."""
    rows = db[table]
    for attempt in range(1000):
        key = f"{prefix}{int(digest(attempt, *parts), 16) % 900000 + 100000}"
        if key not in rows:
            return key
    raise ToolError(f"could not allocate a new {table} id")  # pragma: no cover
