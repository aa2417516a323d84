"""What a stored transaction holds (plain data, no I/O), and its filing view.

A stored transaction keeps the full result of the engine (per line and per
jurisdiction rows, rule names, registrations used) and its :class:`TaxState`,
so that returns and credits never recalculate history. :func:`to_filing`
gives the :class:`levy.domain.filing.FilingTransaction` the filing issue uses.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, replace
from datetime import date, datetime
from decimal import Decimal
from typing import Any

from levy.domain.currency import convert
from levy.domain.filing import (
    NO_EXCHANGE_RATE,
    FilingLine,
    FilingTransaction,
    filing_lines_from_results,
)
from levy.domain.money import allocate
from levy.domain.tax.model import LineResult
from levy.domain.transactions.rules import TaxState


@dataclass(frozen=True, slots=True)
class StoredLine:
    """A goods line: the request line as received and its engine result. ``input`` is the line's
    input fields as a serialized ``levy.v1.TransactionLineItem`` (deterministic serialization:
    equal lines, equal bytes)."""

    input: bytes
    result: LineResult
    customer_id: str | None = None
    product_id: str | None = None
    # The ship-from the line was taxed with, as ``{"location_id"?, "address": {...}}``; None: none.
    ship_from: dict[str, Any] | None = None
    # The same request line as a message when this process has just built it from the request
    # (responses copy it instead of parsing ``input`` again); None when read from the store.
    message: Any = field(default=None, compare=False, repr=False)

    @property
    def id(self) -> str:
        return self.result.id


@dataclass(frozen=True, slots=True)
class TransactionRecord:
    id: str
    organization_id: str
    type: str
    status: str
    source: str
    currency: str
    transaction_date: datetime
    tax: TaxState
    reference_id: str | None = None
    parent_transaction_id: str | None = None
    parent_reference_id: str | None = None
    parent_found: bool = False
    discount_amount: int = 0
    vendor_discount_amount: int = 0
    lines: tuple[StoredLine, ...] = ()
    tax_only: bool = False
    held_off_reason: str | None = None
    allocations: tuple[tuple[str, int], ...] = ()
    registrations: tuple[str, ...] = ()
    created_at: datetime | None = None
    updated_at: datetime | None = None
    #: Units of the filing currency per unit of ``currency`` (decimal string) and the day it applies
    #: to; None when the transaction is in the filing currency (docs/transactions.md, "Currency").
    exchange_rate: str | None = None
    exchange_rate_date: date | None = None
    #: The marketplace facilitator's name: its tax is the facilitator's to remit.
    marketplace_facilitator: str | None = None

    @property
    def gross_amount(self) -> int:
        """Goods lines: quantity x unit_price."""
        return sum(ln.result.amount for ln in self.lines)

    @property
    def net_amount(self) -> int:
        """Goods lines after their own discounts and their share of the transaction discount."""
        return sum(ln.result.taxable_amount for ln in self.lines)

    @property
    def has_parent(self) -> bool:
        return bool(self.parent_transaction_id or self.parent_reference_id)


def _converted_lines(lines: tuple[FilingLine, ...], c: Callable[[int], int]) -> tuple[FilingLine, ...]:
    return tuple(
        replace(ln, amount=c(ln.amount), net_amount=c(ln.net_amount),
                rows=tuple(replace(r, taxable_base=c(r.taxable_base), tax_amount=c(r.tax_amount)) for r in ln.rows))
        for ln in lines
    )


def in_filing_currency(txn: FilingTransaction, rec: TransactionRecord, filing: str) -> FilingTransaction:
    """``txn`` (in ``rec.currency``) with every amount in the filing currency ``filing`` (the
    organization's setting for the return's country) at ``rec``'s stored rate
    (docs/transactions.md, "Currency"): each line's gross and net and each row's base and tax
    converted half up; a calculated filing tax is the sum of its converted rows, a provided one is
    converted and a tax-only transaction's total spread over its allocations (largest remainder).
    Without a stored rate (a transaction stored before rates existed) it is held off returns."""
    if rec.currency == filing:
        return txn
    original_gross = sum(ln.amount for ln in txn.lines)
    if rec.exchange_rate is None:
        return replace(txn, held_off_reason=NO_EXCHANGE_RATE, currency=rec.currency, original_gross=original_gross)
    rate = Decimal(rec.exchange_rate)

    def c(amount: int) -> int:
        return convert(amount, rec.currency, filing, rate)

    lines = _converted_lines(txn.lines, c)
    if txn.tax_only_allocations:
        total = c(txn.filing_tax_amount)
        parts = allocate(total, [a for _, a in txn.tax_only_allocations])
        allocations = tuple((code, p) for (code, _), p in zip(txn.tax_only_allocations, parts, strict=True))
    else:
        allocations = ()
        total = (c(txn.filing_tax_amount) if txn.filing_tax_amount_source == "provided"
                 else sum(r.tax_amount for ln in lines for r in ln.rows))
    return replace(
        txn, lines=lines, filing_tax_amount=total, tax_only_allocations=allocations,
        tax_provided=None if txn.tax_provided is None else c(txn.tax_provided),
        currency=rec.currency, exchange_rate=rec.exchange_rate, exchange_rate_date=rec.exchange_rate_date,
        original_gross=original_gross,
    )


def to_filing(rec: TransactionRecord, filed_states: frozenset[str] = frozenset(), *, currency: str) -> FilingTransaction:
    """The filing view of a stored transaction (docs/filing.md, "Wiring"), in the filing currency
    ``currency``; nothing is recalculated."""
    return in_filing_currency(_to_filing(rec, filed_states), rec, currency)


def _to_filing(rec: TransactionRecord, filed_states: frozenset[str]) -> FilingTransaction:
    return FilingTransaction(
        id=rec.id,
        type=rec.type,  # type: ignore[arg-type]
        status=rec.status,
        transaction_date=rec.transaction_date.date(),
        lines=filing_lines_from_results(ln.result for ln in rec.lines),
        filing_tax_amount=rec.tax.filing_tax_amount,
        filing_tax_amount_source=rec.tax.filing_tax_amount_source,
        tax_provided=rec.tax.tax_amount if rec.tax.is_provided else None,
        tax_only_allocations=rec.allocations,
        held_off_reason=rec.held_off_reason,
        filed_states=filed_states,
        marketplace_facilitator=rec.marketplace_facilitator,
    )
