"""The values packs compute alike: one rounding rule for money (a number to store, a text to tell) and a
bounded calculator."""

import pytest

from tau_emotion.core.tools import ToolError
from tau_emotion.domain_packs.values import arithmetic, money, money_text


@pytest.mark.parametrize(("value", "number", "text"), [
    (327.0, 327, "327"), (54.5, 54.5, "54.50"), (0.1 + 0.2, 0.3, "0.30"), (-4.254, -4.25, "-4.25"),
    (99.999, 100, "100"), (12, 12, "12"),
])
def test_money_is_one_rounding_rule_with_a_number_and_a_text(value, number, text):
    assert money(value) == number and type(money(value)) is type(number)
    assert money_text(value) == text


def test_arithmetic_is_bounded_and_rounded():
    assert arithmetic("1,200 - 200 * 1.5 / 3") == 1100
    assert arithmetic("(10 + 5) / 4") == 3.75
    for bad, message in [("2**8", "only numbers"), ("1/0", "division by zero"), ("__import__('os')", "only numbers"),
                         ("1 +", "not a valid"), ("1" * 501, "too long")]:
        with pytest.raises(ToolError, match=message):
            arithmetic(bad)
