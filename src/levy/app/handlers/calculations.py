"""POST /calculations (CalculationService.CreateCalculation): thin adapter over
:func:`levy.app.calculate.calculate`; stores nothing. :func:`calculation_request` turns the
calculation request fields of a message (a calculation's or a transaction's) into plain values."""

from __future__ import annotations

from collections.abc import Iterable
from decimal import Decimal
from typing import Any

from levy.app.calculate import (
    CalculationRequest,
    DiscountSent,
    LineRequest,
    PresetRef,
    ShipFromSent,
    TaxIdSent,
    calculate,
)
from levy.app.context import CallContext
from levy.app.handlers.messages import optional, timestamp_utc
from levy.app.registry import handles
from levy.domain.memo import BoundedMemo
from levy.domain.tax.model import Address, CalculationResult, VatCheck
from levy.v1 import calculations_pb2 as pb


@handles("levy.v1.CalculationService.CreateCalculation")
async def create_calculation(req: pb.CreateCalculationRequest, ctx: CallContext) -> pb.Calculation:
    result, _ = await calculate(ctx, calculation_request(req))  # presets cached, else one read unit of work
    return to_message(result)


def calculation_request(msg: Any) -> CalculationRequest:
    """The calculation request fields of ``msg`` (a ``CreateCalculationRequest`` or a ``Transaction``)."""
    return CalculationRequest(
        currency=optional(msg, "currency"),
        discount_amount=optional(msg, "discount_amount"),
        vendor_discount_amount=optional(msg, "vendor_discount_amount"),
        transaction_date=timestamp_utc(msg.transaction_date) if msg.HasField("transaction_date") else None,
        tax_behavior=optional(msg, "tax_behavior"),
        line_items=tuple(_line(li) for li in msg.line_items),
    )


def _line(li: Any) -> LineRequest:
    """One request line (``LineItem`` or ``TransactionLineItem``) as plain values."""
    has = li.HasField
    product, customer = li.product, li.customer
    preset = product.preset if product.HasField("preset") else None
    cp = customer.preset if customer.HasField("preset") else None
    return LineRequest(
        id=li.id,
        quantity=li.quantity if has("quantity") else None,
        unit_price=li.unit_price if has("unit_price") else None,
        discounts=tuple(DiscountSent(d.id, d.amount if d.HasField("amount") else None) for d in li.discounts),
        discount_amount=li.discount_amount if has("discount_amount") else None,
        vendor_discount_amount=li.vendor_discount_amount if has("vendor_discount_amount") else None,
        tax_attributes=tuple(product.tax_attributes),
        product_preset=None if preset is None else PresetRef(preset.id, optional(preset, "source")),
        address=_address(customer.address) if customer.HasField("address") else None,
        tax_ids=tuple(TaxIdSent(t.type, t.value, t.country) for t in customer.tax_ids),
        customer_preset=None if cp is None else PresetRef(cp.id, optional(cp, "source"),
                                                          optional(cp, "source_account_id")),
        ship_from=_ship_from(li.ship_from) if has("ship_from") else None,
        tax_behavior=li.tax_behavior if has("tax_behavior") else None,
    )


def _ship_from(sf: Any) -> ShipFromSent:
    return ShipFromSent(optional(sf, "location_id"), _address(sf.address) if sf.HasField("address") else None)


def _address(a: Any) -> Address:
    # Unset optional strings read as "": None for those (ListFields names the set ones).
    given = {f.name: v for f, v in a.ListFields()}
    return Address(given.get("line1"), given.get("city"), given.get("state"), given.get("country"),
                   given.get("postal_code"))


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
