"""Builders of filing inputs for the tests (no figures are computed here)."""

from __future__ import annotations

from datetime import date

from levy.domain.filing import FilingLine, FilingRow, FilingTransaction

ST, LOCAL, CO, CI = "US-ST-CA", "US-ST-CA-LOCAL", "US-CO-CA-LOS_ANGELES", "US-CI-CA-LOS_ANGELES"
NAMES = {ST: ("California", "state"), LOCAL: ("California statewide local", "county"),
         CO: ("Los Angeles County", "county"), CI: ("Los Angeles", "city"),
         "US-ST-NY": ("New York", "state")}


def row(code: str, tax: int, base: int, reason: str | None = None, registered: bool = True) -> FilingRow:
    name, typ = NAMES.get(code, (code, "special"))
    return FilingRow(code, name, typ, base, tax, registered, reason)


def line(id: str, amount: int, rows: list[FilingRow], net: int | None = None) -> FilingLine:
    return FilingLine(id, amount, amount if net is None else net, tuple(rows))


def exempt_line(id: str, amount: int, reason: str, codes=(ST, LOCAL, CO)) -> FilingLine:
    return line(id, amount, [row(c, 0, 0, reason, registered=reason != "unregistered") for c in codes])


def txn(
    id: str,
    lines: list[FilingLine] = (),
    *,
    type: str = "sale",
    status: str = "finalized",
    on: date = date(2026, 2, 1),
    filing: int | None = None,
    source: str = "calculated",
    allocations=(),
    held: str | None = None,
    filed_states=frozenset(),
    states=frozenset(),
) -> FilingTransaction:
    if filing is None:
        filing = sum(a for _, a in allocations) if allocations else sum(r.tax_amount for ln in lines for r in ln.rows)
    return FilingTransaction(
        id=id, type=type, status=status, transaction_date=on, lines=tuple(lines), filing_tax_amount=filing,
        filing_tax_amount_source=source, tax_provided=filing if source == "provided" else None,
        tax_only_allocations=tuple(allocations), held_off_reason=held, filed_states=frozenset(filed_states),
        states=frozenset(states),
    )
