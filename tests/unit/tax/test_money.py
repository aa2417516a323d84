from decimal import Decimal

import pytest
from hypothesis import given
from hypothesis import strategies as st

from levy.domain.errors import ValidationFailed
from levy.domain.money import allocate, currency_exponent, mul_round, parse_amount, parse_quantity, round_half_up


@pytest.mark.parametrize("code,exp", [("USD", 2), ("JPY", 0), ("BHD", 3), ("EUR", 2)])
def test_currency_exponent(code, exp):
    assert currency_exponent(code) == exp


@pytest.mark.parametrize("code", ["usd", "ZZZ", "US", "XXX", ""])
def test_currency_exponent_refuses(code):
    with pytest.raises(ValidationFailed) as e:
        currency_exponent(code)
    assert e.value.first.pointer == "/currency"


def test_parse_amount():
    assert parse_amount("1999", "/x") == 1999
    assert parse_amount("-5", "/x", allow_negative=True) == -5
    for bad in ["-5", "1.5", "", "abc", 12, None, " 1"]:
        with pytest.raises(ValidationFailed) as e:
            parse_amount(bad, "/line_items/0/unit_price")
        assert e.value.first.pointer == "/line_items/0/unit_price"


def test_parse_quantity():
    assert parse_quantity("2.5", "/q") == Decimal("2.5")
    for bad in ["-1", "1e3", "x", 3]:
        with pytest.raises(ValidationFailed):
            parse_quantity(bad, "/q")


@pytest.mark.parametrize(
    "amount,factor,expected",
    [(1, "0.5", 1), (3, "0.5", 2), (5, "0.5", 3), (-1, "0.5", -1), (-3, "0.5", -2), (1999, "0.0625", 125),
     (8, "0.0625", 1), (7, "0.0625", 0), (-8, "0.0625", -1), (10_000, "0", 0), (3998, "0.8", 3198), (1, "-0.5", -1)],
)
def test_mul_round_halves_away_from_zero(amount, factor, expected):
    assert mul_round(amount, Decimal(factor)) == expected


@given(
    amount=st.integers(min_value=-(10**15), max_value=10**15),
    factor=st.decimals(min_value=Decimal("-10"), max_value=Decimal("10"), places=8, allow_nan=False, allow_infinity=False),
)
def test_mul_round_equals_the_decimal_path(amount, factor):
    """The engine's integer rounding gives the Decimal ROUND_HALF_UP result exactly."""
    assert mul_round(amount, factor) == round_half_up(amount * factor)


def test_mul_round_refuses_non_finite():
    with pytest.raises(ValueError):
        mul_round(5, Decimal("NaN"))


@pytest.mark.parametrize(
    "value,expected",
    [("0.5", 1), ("1.5", 2), ("2.5", 3), ("2.4999", 2), ("-0.5", -1), ("-1.4", -1), ("0", 0)],
)
def test_round_half_up(value, expected):
    assert round_half_up(Decimal(value)) == expected


@pytest.mark.parametrize(
    "total,weights,expected",
    [
        (100, [1, 1, 1], [34, 33, 33]),  # 33.33 each; one extra cent to index 0
        (10, [0, 5, 5], [0, 5, 5]),
        (7, [3000, 1000], [5, 2]),  # 5.25 / 1.75 -> remainders .25/.75 -> index 1
        (0, [1, 2], [0, 0]),
        (-100, [1, 1, 1], [-34, -33, -33]),
        (5, [0, 0, 1], [0, 0, 5]),
    ],
)
def test_allocate(total, weights, expected):
    assert allocate(total, weights) == expected
    assert sum(expected) == total


def test_allocate_zero_weights():
    assert allocate(0, [0, 0]) == [0, 0]
    with pytest.raises(ValueError):
        allocate(1, [0, 0])
