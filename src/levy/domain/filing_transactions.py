"""The transactions on a return, each with its amounts on it: plain Python, no I/O.

A return (:func:`levy.domain.filing.prepare_return`) records which transactions it holds
(``Return.transaction_ids``, in return order). A transaction's amounts on a return are the
figures the one aggregation of returns and reports (:func:`levy.domain.filing.liability_report`)
gives it in the return's state had it been alone: the state's total row of that transaction,
a credit's negative. The entries of a return therefore add up to its totals, except what is
the return's own: carried credits applied and carried forward, and the floor of a
jurisdiction's tax due at 0 (a return's ``sales_filing_tax - credits_filing_tax`` is the sum
of its transactions' ``filing_tax_amount``).
"""

from __future__ import annotations

import csv
import io
from collections.abc import Iterable
from dataclasses import dataclass, replace
from datetime import date

from levy.domain.filing import CSV_COLUMNS, FilingTransaction, JurisdictionTotals, _csv_row, liability_report

#: What a return's export names as its second file.
EXPORT_FILES: tuple[str, ...] = ("return", "transactions")


@dataclass(frozen=True, slots=True)
class ReturnEntry:
    """One transaction on a return: what identifies it and its amounts there."""

    transaction_id: str
    type: str
    status: str
    transaction_date: date
    currency: str
    reference_id: str | None
    amounts: JurisdictionTotals


def amounts_on_return(state_code: str, txn: FilingTransaction) -> JurisdictionTotals:
    """``txn``'s figures on the return of ``state_code`` (``US-ST-XX``): zero when it puts nothing
    there (for example voided since a prepared return was made)."""
    alone = replace(txn, filed_states=frozenset())  # the return it is on counted it
    for state in liability_report(txn.transaction_date, txn.transaction_date, [alone]).states:
        if state.state_code == state_code:
            return replace(state.totals, jurisdiction_code=state_code)
    return JurisdictionTotals(state_code, f"Total {state_code}", "")


#: The columns of the transactions file: the transaction (``currency``: its own), then the return's
#: amount columns, in the return's currency (``filing_currency``: the return's last column).
TRANSACTION_CSV_COLUMNS: tuple[str, ...] = (
    "transaction_id", "type", "status", "transaction_date", "currency", "reference_id", *CSV_COLUMNS[3:-1],
    "filing_currency",
)


def entries_to_csv(entries: Iterable[ReturnEntry], currency: str) -> str:
    """A header row (:data:`TRANSACTION_CSV_COLUMNS`) and one row per transaction, as the return's
    CSV (amounts in minor units of the filing ``currency``, RFC 4180 quoting, CRLF line ends)."""
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\r\n")
    w.writerow(TRANSACTION_CSV_COLUMNS)
    for e in entries:
        w.writerow([e.transaction_id, e.type, e.status, e.transaction_date.isoformat(), e.currency,
                    e.reference_id or "", *_csv_row(e.amounts, currency)[3:]])
    return buf.getvalue()
