"""POST /calculations (CalculationService.CreateCalculation): thin adapter over
:func:`levy.app.calculate.calculate`; stores nothing."""

from __future__ import annotations

from collections.abc import Iterable
from decimal import Decimal
from typing import Any

from levy.app.calculate import calculate
from levy.app.context import CallContext
from levy.app.registry import handles
from levy.domain.memo import BoundedMemo
from levy.domain.tax.model import CalculationResult, VatCheck
from levy.v1 import calculations_pb2 as pb


@handles("levy.v1.CalculationService.CreateCalculation")
async def create_calculation(req: pb.CreateCalculationRequest, ctx: CallContext) -> pb.Calculation:
    result, _ = await calculate(ctx, req)  # presets cached, else one read unit of work
    return to_message(result)


# Rate -> its text: the rates in use are few (bounded anyway).
_RATE_TEXT: BoundedMemo[Decimal, str] = BoundedMemo(4096)


def rate_string(rate: Decimal) -> str:
    """``Decimal('0.062500')`` -> ``"0.0625"``; never exponent notation."""
    text = _RATE_TEXT.get(rate)
    if text is None:
        text = format(rate.normalize(), "f")
        text = _RATE_TEXT.put(rate, text if text != "-0" else "0")
    return text


def add_vat_checks(out: Any, checks: Iterable[VatCheck]) -> None:
    """The line's online (VIES) checks onto its ``vat_checks`` field."""
    for c in checks:
        out.add(vat_number=c.vat_number, result=c.result, checked_on=c.checked_on.isoformat(),
                request_identifier=c.request_identifier, detail=c.detail)


def to_message(result: CalculationResult) -> pb.Calculation:
    out = pb.Calculation(tax_amount=str(result.tax_amount), currency=result.currency)
    for line in result.lines:
        li = out.line_items.add(
            id=line.id,
            tax_amount=str(line.tax_amount),
            tax_amount_before_discounts=str(line.tax_amount_before_discounts),
            resolution=line.resolution,
            sourcing=line.sourcing,
            tax_behavior="inclusive" if line.inclusive else "exclusive",
        )
        for row in line.taxes:
            li.taxes.add(
                detail=row.detail,
                jurisdiction_name=row.jurisdiction_name,
                jurisdiction_type=row.jurisdiction_type,
                tax_amount=str(row.tax_amount),
                tax_type=row.tax_type,
                is_registered=row.is_registered,
                rule_name=row.rule_name,
                taxable_base=str(row.taxable_base),
                tax_rate=rate_string(row.tax_rate),
                sourcing=row.sourcing,
            )
        for d in line.discounts:
            li.discounts.add(id=d.id, tax_amount_reduction=str(d.tax_amount_reduction))
        add_vat_checks(li.vat_checks, line.vat_checks)
    return out
