"""The console's CSV exports: transactions, customers and the liability report.

Plain functions, no I/O: the application core pages through the store and feeds the rows here,
the console streams the lines. Every file has a header row, RFC 4180 quoting and CRLF line
ends; money is in major units of the row's currency (``12345`` USD cents -> ``123.45``, JPY
``10000`` -> ``10000``) with the currency in its own column, so a spreadsheet sums it as is.

Formula injection (OWASP, "CSV Injection"): a text cell starting with ``=``, ``+``, ``-``, ``@``,
a tab or a carriage return is read by spreadsheets as a formula, so it is written with a
leading ``'``. The amounts Levy writes (``-12.50``, a credit) are plain decimal numbers and stay
numbers.
"""

from __future__ import annotations

import csv
import io
import re
from collections.abc import Iterable, Mapping
from decimal import Decimal
from typing import Any

from levy.domain.customers import CustomerRecord
from levy.domain.filing import state_of
from levy.domain.money import currency_exponent
from levy.domain.transactions.records import TransactionRecord

#: The first characters that make a spreadsheet read a cell as a formula.
FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")
_NUMBER = re.compile(r"-?\d+(\.\d+)?\Z")


def safe_cell(value: Any) -> str:
    """``value`` as a CSV cell that no spreadsheet runs: ``=HYPERLINK(..)`` -> ``'=HYPERLINK(..)``;
    a plain number (``-12.50``) is left a number; None is empty."""
    if value is None:
        return ""
    text = str(value)
    if text.startswith(FORMULA_STARTS) and not _NUMBER.match(text):
        return "'" + text
    return text


def major_units(minor: Any, currency: str) -> str:
    """Integer minor units as a decimal string in major units of ``currency`` (its ISO 4217
    exponent): (12345, USD) -> ``123.45``, (-5, USD) -> ``-0.05``, (10000, JPY) -> ``10000``.
    Empty for no amount."""
    if minor in (None, ""):
        return ""
    exponent = currency_exponent(currency)
    return f"{Decimal(int(minor)).scaleb(-exponent):.{exponent}f}"


def csv_line(cells: Iterable[Any]) -> bytes:
    """One CSV line (CRLF), every cell through :func:`safe_cell`, UTF-8."""
    buf = io.StringIO()
    csv.writer(buf, lineterminator="\r\n").writerow([safe_cell(c) for c in cells])
    return buf.getvalue().encode()


# -- transactions ------------------------------------------------------------------------------


def customer_label(c: CustomerRecord | None) -> str:
    """How a customer is named in lists: its name, else its email, else its source id."""
    return (c.name or c.email or c.source_id) if c else ""


def summarize(rec: TransactionRecord, customers: Mapping[str, CustomerRecord]) -> dict[str, Any]:
    """What the console's transaction list and its export show of a transaction: its date (UTC),
    its first stored customer, the states it was taxed in (two-letter codes of its tax rows'
    jurisdictions, ``US-ST-TX`` -> ``TX``, as the search's state filter and nexus count them), the
    amount (goods lines after discounts) and the tax (the API's ``tax_amount``), in minor units."""
    customer_id = next((ln.customer_id for ln in rec.lines if ln.customer_id), None)
    states = sorted({state_of(row.jurisdiction_code) for ln in rec.lines for row in ln.result.taxes} - {None})
    return {"id": rec.id, "date": rec.transaction_date.date().isoformat(), "reference_id": rec.reference_id,
            "type": rec.type, "status": rec.status, "customer_id": customer_id,
            "customer": customer_label(customers.get(customer_id or "")), "ship_to_state": " ".join(states),
            "amount": rec.net_amount, "tax": rec.tax.tax_amount, "currency": rec.currency,
            "parent_transaction_id": rec.parent_transaction_id}


TRANSACTION_COLUMNS: tuple[str, ...] = (
    "transaction_id", "transaction_date", "reference_id", "type", "status", "customer_id", "customer",
    "ship_to_state", "amount", "tax", "total", "currency", "parent_transaction_id",
)


def transaction_row(summary: Mapping[str, Any]) -> list[Any]:
    """A row of :data:`TRANSACTION_COLUMNS` from a transaction summary
    (``levy.app.transactions.summarize``): amount (goods after discounts), tax and their sum."""
    currency = summary["currency"]
    return [summary["id"], summary["date"], summary["reference_id"], summary["type"], summary["status"],
            summary["customer_id"], summary["customer"], summary["ship_to_state"],
            major_units(summary["amount"], currency), major_units(summary["tax"], currency),
            major_units(summary["amount"] + summary["tax"], currency), currency, summary["parent_transaction_id"]]


# -- customers ---------------------------------------------------------------------------------

CUSTOMER_COLUMNS: tuple[str, ...] = (
    "customer_id", "source", "source_account_id", "source_id", "name", "email", "merged_into_customer_id",
    "created_at", "deleted_at",
)


def customer_row(c: CustomerRecord) -> list[Any]:
    return [c.id, c.source, c.source_account_id, c.source_id, c.name, c.email, c.merged_into_customer_id,
            c.created_at.isoformat(), c.deleted_at.isoformat() if c.deleted_at else None]


# -- liability report --------------------------------------------------------------------------

#: The report's amount fields (``levy.v1.JurisdictionTotals``), in minor units.
LIABILITY_AMOUNTS: tuple[str, ...] = (
    "gross_sales", "discounts", "exempt_sales_certificate", "exempt_sales_non_taxable", "exempt_sales_unregistered",
    "taxable_sales", "tax_calculated", "tax_provided", "tax_only_allocated", "sales_filing_tax",
    "credits_filing_tax", "carried_credits_applied", "filing_tax_amount", "credits_carried_forward",
)
LIABILITY_COLUMNS: tuple[str, ...] = (
    "from", "to", "row", "jurisdiction", "jurisdiction_name", "jurisdiction_type", *LIABILITY_AMOUNTS, "currency",
)


def liability_rows(report: Mapping[str, Any]) -> list[list[Any]]:
    """The liability report (the API's ``LiabilityReport`` as a dict): one ``jurisdiction`` row per
    jurisdiction, state by state, then one ``state_total`` row per state."""
    currency = report.get("currency") or "USD"
    head = [report.get("from", ""), report.get("to", "")]
    rows: list[list[Any]] = []
    for kind, items in (("jurisdiction", report.get("jurisdictions", ())),
                        ("state_total", report.get("state_totals", ()))):
        for j in items:
            rows.append([*head, kind, j.get("jurisdiction", ""), j.get("jurisdiction_name", ""),
                         j.get("jurisdiction_type", ""),
                         *(major_units(j.get(name) or 0, currency) for name in LIABILITY_AMOUNTS), currency])
    return rows

