"""Tax-only transactions: where their tax goes on returns (spec 4.7 "Tax-only transactions").

A sale, or a credit naming no parent, whose only lines are collected-tax
lines is stored with no line items. Its tax is attributed to the
jurisdictions that the lines' customer addresses reach where the seller is
registered, split equally (exact integers, largest remainder). The wiring
gives, per collected line, the jurisdiction codes its address reaches (from
the rate table) or ``None`` when the line has no address, and the registered
jurisdictions (from registrations on the transaction date). The result is
stored with the transaction so that filing can report it with gross and
taxable sales 0.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass
from typing import Literal

from levy.domain.money import allocate

HeldOffReason = Literal[
    "line_without_address",
    "not_registered",
    "credit_with_parent",
    "negative_marked_only",
]

HELD_OFF_DETAILS: dict[str, str] = {
    "line_without_address": "a collected-tax line has no customer address: the tax is held off returns",
    "not_registered": "the seller is registered in none of the jurisdictions the addresses reach: on no return",
    "credit_with_parent": "a credit of only collected-tax lines that names a parent: held off returns",
    "negative_marked_only": "only marked lines netting below 0 (source stores it off returns): held off returns",
}


@dataclass(frozen=True, slots=True)
class TaxOnlyAttribution:
    """Either ``allocations`` (jurisdiction code, amount) summing to the tax, or a held-off reason."""

    allocations: tuple[tuple[str, int], ...] = ()
    held_off_reason: HeldOffReason | None = None

    @property
    def on_returns(self) -> bool:
        return self.held_off_reason is None

    @property
    def detail(self) -> str:
        return HELD_OFF_DETAILS[self.held_off_reason] if self.held_off_reason else ""


def held_off(reason: HeldOffReason) -> TaxOnlyAttribution:
    return TaxOnlyAttribution((), reason)


def attribute_tax_only(
    total: int,
    reached: Sequence[Sequence[str] | None],
    registered: Callable[[str], bool] | Collection[str],
) -> TaxOnlyAttribution:
    """Split ``total`` equally over the registered jurisdictions the addresses reach.

    ``reached[i]`` lists the jurisdiction codes the address of collected line
    ``i`` reaches (e.g. ``["US-ST-CA", "US-CO-06037", "US-CI-0644000"]``), or
    ``None`` when that line has no customer address. Jurisdictions reached by
    several addresses count once: the lines share the total equally across
    the set of jurisdictions they reach where registered (first-seen order;
    largest-remainder rounding gives the extra minor units to the earlier
    ones). ``registered`` is a predicate or a set of codes.
    """
    if total < 0:
        raise ValueError("a tax-only transaction's tax is never negative")
    if any(r is None for r in reached) or not reached:
        return held_off("line_without_address")
    is_reg = registered if callable(registered) else registered.__contains__
    seen: dict[str, None] = {}
    for codes in reached:
        assert codes is not None
        for code in codes:
            if code not in seen and is_reg(code):
                seen[code] = None
    if not seen:
        return held_off("not_registered")
    parts = allocate(total, [1] * len(seen))
    return TaxOnlyAttribution(tuple(zip(seen, parts)))


def is_tax_only(transaction_type: str, has_parent: bool, only_collected_lines: bool) -> bool:
    """A sale, or a credit naming no parent, whose only lines are collected-tax lines."""
    return only_collected_lines and (transaction_type == "sale" or not has_parent)
