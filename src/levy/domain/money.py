"""Exact money: integer minor units, Decimal rates, explicit ROUND_HALF_UP."""

from __future__ import annotations

import re
from collections.abc import Sequence
from decimal import ROUND_HALF_UP, Decimal, InvalidOperation
from functools import lru_cache
from typing import Final

import iso4217

from levy.domain.errors import ValidationFailed
from levy.domain.memo import BoundedMemo

_INT_RE = re.compile(r"-?[0-9]+\Z")
_DEC_RE = re.compile(r"-?[0-9]+(\.[0-9]+)?\Z")
_ONE = Decimal(1)

#: The largest size of an amount Levy accepts or works out, in minor units (and of a
#: quantity): the signed 64-bit range its amount columns hold (BIGINT on SQLite and
#: PostgreSQL). Request amounts, a line's quantity x unit_price and the totals a
#: transaction stores (its lines together, its tax) all stay within it, for
#: calculations and transactions alike; past it is 422 at the field.
MAX_AMOUNT: Final = 2**63 - 1


@lru_cache(maxsize=256)
def _exponent(code: str) -> int | None:
    try:
        exp = iso4217.Currency(code).exponent
    except ValueError:
        return None
    return exp


def currency_exponent(code: str, pointer: str = "/currency") -> int:
    """ISO 4217 minor-unit exponent of ``code`` (USD 2, JPY 0, BHD 3).

    Codes without a minor unit (XAU, XXX, ...) and unknown codes are refused.
    """
    if not isinstance(code, str) or len(code) != 3 or not code.isalpha() or not code.isupper():
        raise ValidationFailed(f"'{code}' is not an ISO 4217 currency code.", pointer=pointer, input=code)
    exp = _exponent(code)
    if exp is None:
        raise ValidationFailed(f"'{code}' is not a supported ISO 4217 currency code.", pointer=pointer, input=code)
    return exp


def parse_amount(text: object, pointer: str, *, allow_negative: bool = False) -> int:
    """A string holding an integer in minor units ("1999", "-5" where allowed)."""
    if isinstance(text, bool) or not isinstance(text, str) or not _INT_RE.match(text):
        raise ValidationFailed(
            "Amounts are strings holding an integer in the smallest currency unit.", pointer=pointer, input=text
        )
    value = int(text)
    if value < 0 and not allow_negative:
        raise ValidationFailed("The amount must not be negative.", pointer=pointer, input=text)
    if not -MAX_AMOUNT <= value <= MAX_AMOUNT:
        raise out_of_range("The amount", value, pointer)
    return value


def parse_quantity(text: object, pointer: str) -> Decimal:
    """A non-negative decimal string ("1", "2.5")."""
    if isinstance(text, bool) or not isinstance(text, str) or not _DEC_RE.match(text):
        raise ValidationFailed("The quantity must be a decimal number string.", pointer=pointer, input=text)
    try:
        value = Decimal(text)
    except InvalidOperation:  # pragma: no cover - the regex already guards this
        raise ValidationFailed("The quantity must be a decimal number string.", pointer=pointer, input=text) from None
    if value < 0:
        raise ValidationFailed("The quantity must not be negative.", pointer=pointer, input=text)
    if value > MAX_AMOUNT:
        raise out_of_range("The quantity", value, pointer)
    return value


def out_of_range(what: str, value: int | Decimal, pointer: str) -> ValidationFailed:
    """422 for a number past :data:`MAX_AMOUNT` (``what`` names it: "The amount", ...)."""
    return ValidationFailed(
        f"{what} is {value}, past the largest Levy handles: {MAX_AMOUNT} (the signed 64-bit range amounts "
        "are stored in), negative amounts likewise.",
        pointer=pointer, input=str(value), type="less_than_equal",
    )


def range_errors(parts: Sequence[tuple[int, str, str]], what: str, pointer: str) -> list[ValidationFailed]:
    """Amounts that together make one stored figure: each ``(value, what it is, its pointer)``
    and the sum of their sizes (``what`` at ``pointer``) within :data:`MAX_AMOUNT`.

    One pass when all is well (each size is at most the sum), which is every real request.
    """
    total = sum(abs(v) for v, _, _ in parts)
    if total <= MAX_AMOUNT:
        return []
    errors = [out_of_range(name, v, ptr) for v, name, ptr in parts if abs(v) > MAX_AMOUNT]
    return errors or [out_of_range(what, total, pointer)]


def round_half_up(value: Decimal) -> int:
    """Round to the nearest integer, halves away from zero (ROUND_HALF_UP)."""
    return int(value.quantize(_ONE, rounding=ROUND_HALF_UP))


# Decimal -> (numerator, denominator), exact; rates and percentages are few.
_RATIOS: BoundedMemo[Decimal, tuple[int, int]] = BoundedMemo(4096)


def mul_round(amount: int, factor: Decimal) -> int:
    """``round_half_up(amount * factor)``, exactly, in integer arithmetic.

    ``factor`` (a rate or a percentage) is taken as the exact fraction n/d it
    holds (``Decimal.as_integer_ratio``), so ``amount * n / d`` is rounded half
    away from zero with no intermediate rounding: ``(2|a|n + d) // 2d`` with the
    sign put back. Same result as the Decimal path wherever that one is exact
    (products within the default context's 28 digits; a property test checks
    it), about five times faster; the engine does this for every jurisdiction
    row.
    """
    ratio = _RATIOS.get(factor)
    if ratio is None:
        if not factor.is_finite():
            raise ValueError(f"cannot multiply by {factor}")
        ratio = _RATIOS.put(factor, factor.as_integer_ratio())
    n, d = ratio
    product = amount * n
    if product >= 0:
        return (2 * product + d) // (2 * d)
    return -((-2 * product + d) // (2 * d))


def share_half_up(total: int, part: int, whole: int) -> int:
    """``total * part / whole`` rounded half up, exactly (integers; ``total`` and ``part`` >= 0, ``whole`` > 0)."""
    return (2 * total * part + whole) // (2 * whole)


def allocate(total: int, weights: list[int]) -> list[int]:
    """Split ``total`` in proportion to ``weights`` (largest remainder method).

    Parts sum exactly to ``total``; zero weights get 0; ties in the remainder go
    to the lower index. Weights must be non-negative. If every weight is zero the
    total cannot be placed and all parts are 0 only when ``total`` is 0.
    """
    if len(weights) == 1:  # the common single discount: no arithmetic to do
        (w,) = weights
        if w < 0:
            raise ValueError("weights must be non-negative")
        if w == 0 and total != 0:
            raise ValueError("cannot allocate a non-zero total over zero weights")
        return [total if w else 0]
    if any(w < 0 for w in weights):
        raise ValueError("weights must be non-negative")
    wsum = sum(weights)
    if wsum == 0:
        if total != 0:
            raise ValueError("cannot allocate a non-zero total over zero weights")
        return [0] * len(weights)
    sign = -1 if total < 0 else 1
    t = abs(total)
    parts = []
    rems = []
    for i, w in enumerate(weights):
        q, r = divmod(t * w, wsum)
        parts.append(q)
        rems.append((-r, i))
    left = t - sum(parts)
    for _, i in sorted(rems)[:left]:
        parts[i] += 1
    return [sign * p for p in parts]
