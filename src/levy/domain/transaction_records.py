"""What a stored transaction holds (plain data, no I/O), and its filing view.

A stored transaction keeps the full result of the engine (per line and per
jurisdiction rows, rule names, registrations used) and its :class:`TaxState`,
so that returns and credits never recalculate history. :func:`to_filing`
gives the :class:`levy.domain.filing.FilingTransaction` the filing issue uses.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from levy.domain.filing import FilingTransaction, filing_lines_from_results
from levy.domain.tax.model import LineResult
from levy.domain.transactions import TaxState


@dataclass(frozen=True, slots=True)
class StoredLine:
    """A goods line: the request line as received and its engine result. ``input`` is the line's
    input fields as a serialized ``levy.v1.TransactionLineItem`` (deterministic serialization:
    equal lines, equal bytes)."""

    input: bytes
    result: LineResult
    customer_id: str | None = None
    product_id: str | None = None
    # The ship-from the line was taxed with (issue 19), as ``{"location_id"?, "address": {...}}``; None: none.
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


def to_filing(rec: TransactionRecord, filed_states: frozenset[str] = frozenset()) -> FilingTransaction:
    """The filing view of a stored transaction (docs/filing.md, "Wiring"); nothing is recalculated."""
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
    )
