"""Registration thresholds outside the US: the EU's EUR 10,000, Canada's CAD 30,000,
Australia's AUD 75,000 and the UK's none for a seller not established there. Plain Python, no I/O.

The thresholds are data with their dates and sources (``levy/data/nexus/international_thresholds.json``,
:func:`international_thresholds`). Sales are measured in the threshold's currency: the caller
passes each stored transaction already converted (:func:`levy.domain.transactions.records.to_filing`
at the reference rate of its day, the conversion returns use). A sale counts the gross of its goods
lines with a row of the threshold's jurisdictions that is not reverse charged (a business customer
accounting for the tax is not a sale to a consumer); a credit counts negatively.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping
from dataclasses import dataclass
from datetime import date, timedelta
from decimal import ROUND_HALF_UP, Decimal
from typing import Any

from levy.domain.filing import LIABLE_STATUSES, FilingTransaction

_REVERSE_CHARGE = "reverse_charge"
_SHARE = Decimal("0.0001")


@dataclass(frozen=True, slots=True)
class InternationalThreshold:
    jurisdiction: str
    name: str
    currency: str
    sales_threshold: int | None  # minor units; None: registration from the first sale
    measurement_period: str
    rows: frozenset[str]
    registration: str
    effective_from: date
    crossed_when: str  # "exceeds" or "meets"
    source: str

    def windows(self, as_of: date) -> list[tuple[date, date]]:
        """The periods measured on ``as_of``, the deciding one first when several."""
        if self.measurement_period == "current_or_previous_calendar_year":
            return [(date(as_of.year, 1, 1), as_of), (date(as_of.year - 1, 1, 1), date(as_of.year - 1, 12, 31))]
        year_before = as_of.replace(year=as_of.year - 1, day=28 if (as_of.month, as_of.day) == (2, 29) else as_of.day)
        return [(year_before + timedelta(days=1), as_of)]

    def crossed(self, sales: int) -> bool:
        limit = self.sales_threshold or 0
        return sales >= limit if self.crossed_when == "meets" and limit else sales > limit


@dataclass(frozen=True, slots=True)
class InternationalNexus:
    """One threshold on ``as_of``: the sales of its deciding period and whether they crossed it."""

    threshold: InternationalThreshold
    period_start: date
    period_end: date
    sales: int
    transactions: int
    share: Decimal | None  # 1 = 100 %; None without a threshold
    exceeded: bool
    registered: bool

    @property
    def needs_registration(self) -> bool:
        return self.exceeded and not self.registered


def parse_thresholds(doc: Mapping[str, Any]) -> tuple[InternationalThreshold, ...]:
    """The thresholds of ``international_thresholds.json`` (its parsed document)."""
    return tuple(
        InternationalThreshold(
            t["jurisdiction"], t["name"], t["currency"], t["sales_threshold"], t["measurement_period"],
            frozenset(t["rows"]), t["registration"], date.fromisoformat(t["effective_from"]), t["crossed_when"],
            t["source"])
        for t in doc["thresholds"]
    )


def in_force(thresholds: Iterable[InternationalThreshold], as_of: date) -> tuple[InternationalThreshold, ...]:
    """The ``thresholds`` in force on ``as_of``."""
    return tuple(t for t in thresholds if t.effective_from <= as_of)


def earliest_start(thresholds: Iterable[InternationalThreshold], as_of: date) -> date:
    """The first day any of ``thresholds`` in force on ``as_of`` measures."""
    return min((start for t in in_force(thresholds, as_of) for start, _ in t.windows(as_of)), default=as_of)


def counted_sales(t: InternationalThreshold, txn: FilingTransaction) -> int:
    """``txn``'s signed gross toward ``t`` (0 when none of its lines counts)."""
    if txn.status not in LIABLE_STATUSES or txn.held_off_reason is not None or txn.marketplace_facilitator:
        return 0
    gross = sum(ln.amount for ln in txn.lines
                if any(r.jurisdiction_code in t.rows and r.exempt_reason != _REVERSE_CHARGE for r in ln.rows))
    return txn.sign * gross


def evaluate(t: InternationalThreshold, as_of: date, txns: Iterable[FilingTransaction],
             registered: Collection[str]) -> InternationalNexus:
    """``t`` on ``as_of`` for ``txns`` (in ``t.currency``); ``registered``: the registration codes in force."""
    txns = list(txns)
    measured = []
    for start, end in t.windows(as_of):
        counted = [(txn, counted_sales(t, txn)) for txn in txns if start <= txn.transaction_date <= end]
        sales = sum(s for _, s in counted)
        measured.append((start, end, sales, sum(1 for txn, s in counted if s and txn.type == "sale")))
    deciding = next((m for m in measured if t.crossed(m[2])), measured[0])
    start, end, sales, count = deciding
    share = None
    if t.sales_threshold:
        share = (Decimal(sales) / Decimal(t.sales_threshold)).quantize(_SHARE, rounding=ROUND_HALF_UP)
    return InternationalNexus(t, start, end, sales, count, share, t.crossed(sales), t.registration in registered)


def international_nexus(thresholds: Iterable[InternationalThreshold], as_of: date,
                        txns_by_currency: Mapping[str, Iterable[FilingTransaction]],
                        registered: Collection[str]) -> tuple[InternationalNexus, ...]:
    """Every one of ``thresholds`` in force on ``as_of``; ``txns_by_currency``: the transactions in each
    threshold's currency."""
    return tuple(evaluate(t, as_of, txns_by_currency.get(t.currency, ()), registered)
                 for t in in_force(thresholds, as_of))
