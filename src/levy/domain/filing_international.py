"""Returns outside the US: the EU One-Stop-Shop, Canada's GST/HST and provincial taxes,
UK VAT and Australian GST. Plain Python, no I/O.

Which returns exist, what rows each reports, its currency, its period and the day of the exchange
rate that converts a sale in another currency are data: ``levy/data/filing/international_returns.json``
(:func:`international_returns`), every entry with its source. The figures come from the stored
rows of the engine (:class:`levy.domain.filing.FilingRow`, never recalculated), already converted
to the return's currency by the caller (:func:`levy.domain.transactions.records.in_filing_currency`,
the same conversion as US returns). See docs/international.md, "Returns".

A return has one row per jurisdiction of consumption, tax type and rate (``FR``, VAT 20 %;
``CA`` HST 13 % in Ontario), credits netted; its totals sum those rows. Reverse-charged sales
(the customer accounts for the tax) are reported apart, one row per jurisdiction with tax type
``reverse_charge``, rate 0 and tax 0, outside the totals.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import date, timedelta
from decimal import Decimal
from typing import Any

from levy.domain.errors import ValidationFailed
from levy.domain.filing import (
    HELD_OFF_REASON_DETAILS,
    LIABLE_STATUSES,
    ConvertedEntry,
    ExemptSales,
    FilingLine,
    FilingRow,
    FilingTransaction,
    HeldOff,
    JurisdictionTotals,
    Return,
)

#: The ``tax_type`` of the rows that list reverse-charged sales apart.
REVERSE_CHARGE = "reverse_charge"


@dataclass(frozen=True, slots=True)
class InternationalReturn:
    """One kind of return outside the US (a row of the data file)."""

    jurisdiction: str  # the code a filing names: EU-OSS, CA, CA-PR-QC, GB, AU
    name: str
    country: str | None  # the country of the organization's filing_currencies setting; None: EU-OSS
    currency: str
    period: str  # "calendar_quarter" or "any"
    rate_day: str  # "transaction_date" or "period_end"
    rows: frozenset[str]  # the jurisdiction codes of the rows it reports
    registered_under: str
    covers_unless_registered: bool
    source: str

    def currency_for(self, chosen: Mapping[str, str]) -> str:
        """Its currency: the organization's ``filing_currencies`` choice for its country, else the data's."""
        return chosen.get(self.country, self.currency) if self.country else self.currency

    @property
    def filed_key(self) -> str:
        """The key that records a transaction on a filed return of this kind (beside US states'
        two letters: ``INTL-CA`` is Canada's GST/HST, never California)."""
        return f"INTL-{self.jurisdiction}"

    def reports(self, code: str, registrations: frozenset[str]) -> bool:
        """Whether a row of jurisdiction ``code`` of a transaction made under ``registrations`` is on this return."""
        if code not in self.rows or self.registered_under not in registrations:
            return False
        return not (self.covers_unless_registered and code in registrations)


def parse_returns(doc: Mapping[str, Any]) -> dict[str, InternationalReturn]:
    """The returns by jurisdiction, from ``international_returns.json`` (its parsed document)."""
    return {
        e["jurisdiction"]: InternationalReturn(
            e["jurisdiction"], e["name"], e["country"], e["currency"], e["period"], e["rate_day"],
            frozenset(e["rows"]), e["registered_under"], bool(e.get("covers_unless_registered", False)), e["source"])
        for e in doc["returns"]
    }


def check_period(kind: InternationalReturn, start: date, end: date, pointer: str = "/period_start") -> None:
    """A ``calendar_quarter`` return covers one calendar quarter exactly (422 otherwise)."""
    if kind.period != "calendar_quarter":
        return
    q_start = date(start.year, 3 * ((start.month - 1) // 3) + 1, 1)
    after = date(start.year + 1, 1, 1) if q_start.month == 10 else date(start.year, q_start.month + 3, 1)
    if start != q_start or end != after - timedelta(days=1):
        raise ValidationFailed(
            f"An {kind.jurisdiction} return covers one calendar quarter (for example 2026-01-01..2026-03-31); "
            f"got {start.isoformat()}..{end.isoformat()}.", pointer=pointer, input=start.isoformat(),
            meta={"source": kind.source})


def rate_text(rate: str) -> str:
    """``"0.2000"`` -> ``"0.2"``; ``"0"`` for an empty or zero rate."""
    if not rate:
        return "0"
    value = Decimal(rate).normalize()
    return format(value, "f") if value else "0"


class _Row:
    __slots__ = ("credits_tax", "discounts", "exempt", "gross", "key", "sales_tax", "taxable")

    def __init__(self, key: tuple[str, str, str, str, str]) -> None:
        self.key = key
        self.gross = self.discounts = self.taxable = self.sales_tax = self.credits_tax = 0
        self.exempt = {"exemption_certificate": 0, "non_taxable_product": 0, "unregistered": 0}

    def add(self, sign: int, ln: FilingLine, r: FilingRow) -> None:
        self.gross += sign * ln.amount
        self.discounts += sign * (ln.amount - ln.net_amount)
        if r.exempt_reason in ("exemption_certificate", "resale"):
            self.exempt["exemption_certificate"] += sign * ln.net_amount
        elif r.exempt_reason in ("non_taxable_product", "no_tax"):
            self.exempt["non_taxable_product"] += sign * ln.net_amount
        elif r.exempt_reason == REVERSE_CHARGE:  # the value of the supply the customer accounts for
            self.taxable += sign * ln.net_amount
        else:  # taxed (at any rate, 0 included) or reverse charged: the value of the supply
            self.taxable += sign * r.taxable_base
            self.exempt["non_taxable_product"] += sign * (ln.net_amount - r.taxable_base)
        if sign > 0:
            self.sales_tax += r.tax_amount
        else:
            self.credits_tax += r.tax_amount

    def totals(self) -> JurisdictionTotals:
        code, name, jtype, tax_type, rate = self.key
        net = self.sales_tax - self.credits_tax
        return JurisdictionTotals(
            code, name, jtype, self.gross, self.discounts, ExemptSales(**self.exempt), self.taxable,
            tax_calculated=net, sales_filing_tax=self.sales_tax, credits_filing_tax=self.credits_tax,
            filing_tax_amount=net, tax_rate=rate, tax_type=tax_type,
        )


def _row_key(r: FilingRow) -> tuple[str, str, str, str, str]:
    if r.exempt_reason == REVERSE_CHARGE:
        return (r.jurisdiction_code, r.jurisdiction_name, r.jurisdiction_type, REVERSE_CHARGE, "0")
    return (r.jurisdiction_code, r.jurisdiction_name, r.jurisdiction_type, r.tax_type, rate_text(r.tax_rate))


def prepare_international_return(
    kind: InternationalReturn,
    period_start: date,
    period_end: date,
    transactions: Iterable[tuple[FilingTransaction, frozenset[str]]],
) -> Return:
    """The return ``kind`` over ``[period_start, period_end]``: ``transactions`` are each stored
    transaction in the return's currency with the registrations it was made under.

    On it: finalized and filed transactions dated in the period, not yet on a filed return of
    ``kind`` (``filed_states``), with a row the return reports. Rows whose tax was provided by the
    caller, tax-only transactions and marketplace sales are not on these returns (held off, or not
    counted: docs/international.md). Transactions held off (no exchange rate) are listed with why.
    """
    rows: dict[tuple[str, str, str, str, str], _Row] = {}
    held: list[HeldOff] = []
    ids: list[str] = []
    converted: list[ConvertedEntry] = []
    for txn, registrations in transactions:
        if txn.status not in LIABLE_STATUSES or kind.filed_key in txn.filed_states:
            continue
        if not period_start <= txn.transaction_date <= period_end or txn.marketplace_facilitator is not None:
            continue
        lines = [(ln, [r for r in ln.rows if kind.reports(r.jurisdiction_code, registrations)]) for ln in txn.lines]
        lines = [(ln, rs) for ln, rs in lines if rs]
        if txn.held_off_reason is not None:
            if lines or not txn.lines:
                reason = txn.held_off_reason
                held.append(HeldOff(txn.id, reason, HELD_OFF_REASON_DETAILS.get(reason, reason)))
            continue
        if not lines:
            continue
        for ln, rs in lines:
            for r in rs:
                key = _row_key(r)
                rows.setdefault(key, _Row(key)).add(txn.sign, ln, r)
        ids.append(txn.id)
        if txn.currency is not None and txn.exchange_rate is not None:
            share = sum(ln.amount for ln, _ in lines)
            converted.append(ConvertedEntry(txn.id, txn.currency, txn.exchange_rate, txn.exchange_rate_date,
                                            txn.sign * txn.original_gross, txn.sign * share))
    ordered = sorted((r.totals() for r in rows.values()),
                     key=lambda t: (t.tax_type == REVERSE_CHARGE, t.jurisdiction_code, t.jurisdiction_name,
                                    t.tax_type or "", Decimal(t.tax_rate or "0")))
    taxed = [t for t in ordered if t.tax_type != REVERSE_CHARGE]

    def s(attr: str) -> int:
        return sum(getattr(t, attr) for t in taxed)

    exempt = ExemptSales(**{b: sum(getattr(t.exempt_sales, b) for t in taxed)
                            for b in ("exemption_certificate", "non_taxable_product", "unregistered")})
    totals = JurisdictionTotals(
        "TOTAL", f"Total {kind.jurisdiction}", "", s("gross_sales"), s("discounts"), exempt, s("taxable_sales"),
        tax_calculated=s("tax_calculated"), sales_filing_tax=s("sales_filing_tax"),
        credits_filing_tax=s("credits_filing_tax"), filing_tax_amount=s("filing_tax_amount"),
    )
    return Return(kind.jurisdiction, period_start, period_end, tuple(ordered), totals, (), tuple(held), tuple(ids),
                  {}, (), tuple(converted))
