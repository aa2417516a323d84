"""Builders for transaction lines as the wiring would make them (codes parsed like the engine does)."""

from __future__ import annotations

from decimal import Decimal
from functools import partial

from levy.domain.transactions import collected as transactions_collected, rules as transactions
from levy.domain.tax.codes import parse_tax_codes
from levy.domain.tax.model import Address, Discount, LineInput
from levy.domain.transactions.collected import TransactionLine
from levy.store.reference_data import netting_policies

# The line rules with the sources' netting policies (reference data) passed in, as the application does.
split_lines = partial(transactions_collected.split_lines, netting=netting_policies())
plan_lines = partial(transactions.plan_lines, netting=netting_policies())

CA = Address(line1="1 Market St", city="San Francisco", state="CA", postal_code="94105")
NY = Address(line1="1 Broadway", city="New York", state="NY", postal_code="10004")


def line(
    id: str,
    price: int,
    *,
    qty: str = "1",
    index: int = 0,
    codes: tuple[str, ...] = ("GENERAL",),
    marked: bool = False,
    discounts: tuple[int, ...] = (),
    discount_amount: int = 0,
    vendor_discount_amount: int = 0,
    address: Address | None = CA,
    merged_into: str | None = None,
) -> TransactionLine:
    """A line; ``marked=True`` means a product marked SALES_TAX and no attributes on the line."""
    if marked:
        codes = ("SALES_TAX",)
    tc = parse_tax_codes(codes)
    li = LineInput(
        id=id,
        quantity=Decimal(qty),
        unit_price=price,
        category=tc.category,
        attributes=tc.attributes,
        is_sales_tax=tc.is_sales_tax,
        from_marked_product=marked,
        sales_tax_violation=tc.sales_tax_violation,
        address=address,
        discounts=tuple(Discount(f"d{i}", a) for i, a in enumerate(discounts)),
        discount_amount=discount_amount,
        vendor_discount_amount=vendor_discount_amount,
        pointer=f"/line_items/{index}",
    )
    return TransactionLine(li, index, tuple(codes), merged_into)


def st(id: str, price: int, *, index: int = 0, **kw) -> TransactionLine:
    """A plain collected-tax line (product.tax_attributes == ["SALES_TAX"])."""
    return line(id, price, index=index, codes=kw.pop("codes", ("SALES_TAX",)), **kw)


def indexed(*lines: TransactionLine) -> list[TransactionLine]:
    """Renumber lines by position (index and pointer)."""
    from dataclasses import replace

    return [TransactionLine(replace(t.line, pointer=f"/line_items/{i}"), i, t.tax_codes, t.merged_into_customer_id)
            for i, t in enumerate(lines)]
