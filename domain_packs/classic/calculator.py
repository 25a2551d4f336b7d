"""A bounded arithmetic evaluator that stands in for their `calculate` tool.

Their tool checks the expression's characters (`0123456789+-*/(). `) and hands it to `eval`. The
whitelist lets `**` through, so `9**9**9**9` starts a big-integer power that holds the GIL until the
process runs out of memory; no thread timeout can stop it. Here the expression is parsed, its syntax
tree may hold only numbers, `+ - * / //`, unary signs, parentheses and powers whose base and exponent
are bounded, and it is evaluated node by node with Python's own operators. Nothing reaches `eval`.
Whatever their tool accepts within these bounds gives the same text here, errors included
("Error: division by zero"); a longer expression or a larger power is refused with an error.
"""

from __future__ import annotations

import ast
import operator
from typing import Any

ALLOWED_CHARS = frozenset("0123456789+-*/(). ")
MAX_LENGTH = 200
MAX_EXPONENT = 100
MAX_BASE = 10**6

_BINARY = {ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul, ast.Div: operator.truediv,
           ast.FloorDiv: operator.floordiv, ast.Pow: operator.pow}
_UNARY = {ast.UAdd: operator.pos, ast.USub: operator.neg}


class Refused(ValueError):
    """An expression outside the evaluator's bounds."""


def _power(base: Any, exponent: Any) -> Any:
    numbers = (int, float, complex)
    if isinstance(base, numbers) and isinstance(exponent, numbers) and (
            abs(exponent) > MAX_EXPONENT or abs(base) > MAX_BASE):
        raise Refused(f"powers are limited to |base| <= {MAX_BASE} and |exponent| <= {MAX_EXPONENT}")
    return base**exponent


def _value(node: ast.expr) -> Any:
    if isinstance(node, ast.Constant) and (type(node.value) in (int, float) or node.value is Ellipsis):
        return node.value  # `...` passes their whitelist too; float() then fails the same way
    if isinstance(node, ast.Tuple) and not node.elts:
        return ()
    if isinstance(node, ast.UnaryOp) and type(node.op) in _UNARY:
        return _UNARY[type(node.op)](_value(node.operand))
    if isinstance(node, ast.BinOp) and type(node.op) in _BINARY:
        left, right = _value(node.left), _value(node.right)
        return _power(left, right) if isinstance(node.op, ast.Pow) else _BINARY[type(node.op)](left, right)
    if isinstance(node, ast.Call) and not node.keywords:  # `2(3)`: their eval fails it, so do we, calling nothing
        func = _value(node.func)
        for arg in node.args:
            value = _value(arg.value if isinstance(arg, ast.Starred) else arg)
            if isinstance(arg, ast.Starred) and not isinstance(value, tuple):
                raise TypeError(f"{func} argument after * must be an iterable, not {type(value).__name__}")
        raise TypeError(f"'{type(func).__name__}' object is not callable")
    raise Refused(f"unsupported expression: {ast.unparse(node)}")


def calculate(data: Any, expression: str) -> str:
    """Their `Calculate.invoke(data, expression)`, without `eval`: the result rounded to 2 places, or an error."""
    if not isinstance(expression, str):
        return "Error: the expression must be a string"
    if not all(char in ALLOWED_CHARS for char in expression):
        return "Error: invalid characters in expression"
    if len(expression) > MAX_LENGTH:
        return f"Error: expression too long (at most {MAX_LENGTH} characters)"
    try:
        # eval skips leading blanks and ast.parse does not; with eval's filename, syntax errors read the same
        tree = ast.parse(expression.lstrip(" "), "<string>", "eval")
        return str(round(float(_value(tree.body)), 2))
    except Exception as exc:  # their tool's own `except Exception` and wording
        return f"Error: {exc}"
