"""Provided tax over jurisdictions, liability reports, LineResult input and the CSV layout."""

from __future__ import annotations

import csv
import io
from datetime import date
from decimal import Decimal

from filing_helpers import CO, LOCAL, ST, line, row, txn

from levy.domain.filing import (
    CSV_COLUMNS,
    distribute_filing_tax,
    filing_lines_from_results,
    liability_report,
    prepare_return,
    return_to_csv,
)
from levy.domain.tax.model import LineResult, TaxRow

Q1 = (date(2026, 1, 1), date(2026, 3, 31))


def test_provided_tax_is_split_in_proportion_to_calculated_tax_exactly():
    # calculated 600 / 125 / 25 (750); provided 700:
    # 700*600/750 = 560; 700*125/750 = 116 r 500; 700*25/750 = 23 r 250 -> the missing 1 goes to LOCAL.
    t = txn("T", [line("L", 10000, [row(ST, 600, 10000), row(LOCAL, 125, 10000), row(CO, 25, 10000)])],
            source="provided", filing=700)
    assert distribute_filing_tax(t) == {ST: 560, LOCAL: 117, CO: 23}
    ret = prepare_return("US-ST-CA", *Q1, [t])
    assert [(j.tax_calculated, j.tax_provided, j.filing_tax_amount) for j in ret.jurisdictions] == [
        (600, 560, 560), (125, 117, 117), (25, 23, 23)]
    assert ret.filing_tax_amount == 700


def test_provided_tax_with_nothing_calculated_goes_to_the_state_rows_by_net_sales():
    # CA line 3000 (exempt), NY line 1000 (exempt): 50 provided -> 37.5 / 12.5, the tie to the first: 38 / 12.
    t = txn("T", [line("A", 3000, [row(ST, 0, 0, "exemption_certificate"), row(CO, 0, 0, "exemption_certificate")]),
                  line("B", 1000, [row("US-ST-NY", 0, 0, "exemption_certificate")])],
            source="provided", filing=50)
    assert distribute_filing_tax(t) == {ST: 38, CO: 0, "US-ST-NY": 12}
    assert prepare_return("US-ST-CA", *Q1, [t]).filing_tax_amount == 38
    assert prepare_return("US-ST-NY", *Q1, [t]).filing_tax_amount == 12


def test_provided_tax_without_a_state_row_is_held_off():
    t = txn("T", [line("A", 3000, [row("DE", 0, 0, "no_tax")])], source="provided", filing=50)
    assert distribute_filing_tax(t) is None
    ret = prepare_return("US-ST-CA", *Q1, [t])
    assert [(h.transaction_id, h.reason) for h in ret.held_off] == [("T", "provided_tax_unplaced")]
    assert ret.transaction_ids == () and ret.jurisdictions == ()


def test_liability_report_covers_finalized_and_filed_per_state_without_floor():
    sale = txn("S", [line("L", 1000, [row(ST, 60, 1000)])], status="filed", filed_states={"CA"},
               on=date(2026, 1, 5))
    credit = txn("C", [line("L", 2000, [row(ST, 120, 2000)])], type="credit", on=date(2026, 2, 5))
    ny = txn("N", [line("L", 500, [row("US-ST-NY", 20, 500)])], on=date(2026, 3, 5))
    draft = txn("D", [line("L", 500, [row(ST, 30, 500)])], status="draft")
    outside = txn("O", [line("L", 500, [row(ST, 30, 500)])], on=date(2026, 4, 1))
    rep = liability_report(*Q1, [sale, credit, ny, draft, outside])
    assert [s.state_code for s in rep.states] == ["US-ST-CA", "US-ST-NY"]
    ca, ny_ = rep.states
    # 60 - 120 = -60: a report shows the net as it is, nothing is carried.
    assert ca.totals.filing_tax_amount == -60 and ca.totals.credits_carried_forward == 0
    assert ca.totals.gross_sales == 1000 - 2000
    assert ca.transaction_ids == ("S", "C")
    assert ny_.totals.filing_tax_amount == 20


def _tax_row(code, tax, base):
    return TaxRow(code, code, "state", Decimal("0.06"), base, tax, True, "rule")


def test_filing_lines_from_results_skip_collected_tax_lines():
    goods = LineResult("G", 60, 60, (_tax_row(ST, 60, 1000),), (), amount=1000, taxable_amount=1000)
    collected = LineResult("T", 0, 0, (), (), amount=90, taxable_amount=90, is_sales_tax=True)
    lines = filing_lines_from_results([goods, collected])
    assert [(ln.id, ln.amount, ln.net_amount) for ln in lines] == [("G", 1000, 1000)]
    t = txn("X", list(lines), source="provided", filing=150)
    st = prepare_return("US-ST-CA", *Q1, [t]).jurisdictions[0]
    assert (st.gross_sales, st.taxable_sales, st.filing_tax_amount) == (1000, 1000, 150)


def test_csv_has_header_one_row_per_jurisdiction_and_a_total():
    t = txn("T", [line("L", 10000, [row(ST, 540, 9000), row(CO, 23, 9000)], net=9000)])
    text = return_to_csv(prepare_return("US-ST-CA", *Q1, [t]), "USD")
    assert text.endswith("\r\n")
    rows = list(csv.reader(io.StringIO(text)))
    assert rows[0] == list(CSV_COLUMNS)
    assert rows[0][:4] == ["jurisdiction_code", "jurisdiction_name", "jurisdiction_type", "gross_sales"]
    assert len(rows) == 4
    st = dict(zip(rows[0], rows[1]))
    assert st["jurisdiction_code"] == ST and st["jurisdiction_name"] == "California"
    assert (st["gross_sales"], st["discounts"], st["taxable_sales"]) == ("10000", "1000", "9000")
    assert st["exempt_sales_non_taxable_product"] == "0"
    assert st["filing_tax_amount"] == "540"
    total = dict(zip(rows[0], rows[3]))
    assert total["jurisdiction_code"] == "TOTAL"
    # The sale counts once in the total (gross 10000, discounts 1000, taxable 9000); tax 540 + 23.
    assert total["filing_tax_amount"] == "563" and total["gross_sales"] == "10000"
    assert (total["discounts"], total["taxable_sales"]) == ("1000", "9000")
