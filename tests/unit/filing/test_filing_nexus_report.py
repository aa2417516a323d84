"""Nexus report: sales and counts per state, collected tax excluded, crossed by amount and by count."""

from __future__ import annotations

from datetime import date
from decimal import Decimal

from filing_helpers import ST, line, row, txn

from levy.domain.filing import filing_lines_from_results
from levy.domain.nexus import DatedSale, MeasurementPeriod, NexusThreshold, Rule, thresholds_in_force
from levy.domain.nexus_report import dated_sales_by_state, nexus_report
from levy.domain.tax.model import LineResult, TaxRow
from levy.store.reference_data import nexus_thresholds

CY = MeasurementPeriod.PREVIOUS_OR_CURRENT_CALENDAR_YEAR
AS_OF = date(2026, 6, 30)
THRESHOLDS = {
    # $500,000 by amount only
    "CA": NexusThreshold("CA", 50_000_000, None, Rule.SALES_ONLY, CY, date(2019, 4, 1), "test"),
    # $100,000 or 3 transactions (a small count to keep the test short)
    "SD": NexusThreshold("SD", 10_000_000, 3, Rule.SALES_OR_TRANSACTIONS, CY, date(2019, 4, 1), "test"),
    "TX": NexusThreshold("TX", 50_000_000, None, Rule.SALES_ONLY, CY, date(2019, 4, 1), "test"),
    "WA": NexusThreshold("WA", 10_000_000, None, Rule.SALES_ONLY, CY, date(2019, 4, 1), "test"),
}


def _ca_sale(id, amount, on, collected=0):
    goods = LineResult("G", 0, 0, (TaxRow(ST, "California", "state", Decimal("0.0725"), amount, 0, False, "r"),),
                       (), amount=amount, taxable_amount=amount)
    lines = [goods]
    if collected:
        lines.append(LineResult("T", 0, 0, (), (), amount=collected, taxable_amount=collected, is_sales_tax=True))
    return txn(id, list(filing_lines_from_results(lines)), on=on)


def test_dated_sales_exclude_collected_tax_drafts_and_tax_only_and_subtract_credits():
    sales = [
        _ca_sale("A", 30_000_000, date(2026, 2, 1), collected=9_000_000),
        txn("CR", [line("L", 1_000_000, [row(ST, 0, 1_000_000)])], type="credit", on=date(2026, 2, 3)),
        txn("D", [line("L", 7_000, [row(ST, 0, 7_000)])], status="draft"),
        txn("TO", allocations=[(ST, 500)], source="provided"),
        txn("NY", [line("L", 2_000, [row("US-ST-NY", 0, 2_000)], net=1_500)], on=date(2026, 3, 1)),
    ]
    assert dated_sales_by_state(sales) == {
        "CA": [DatedSale(date(2026, 2, 1), 30_000_000, 1), DatedSale(date(2026, 2, 3), -1_000_000, 0)],
        "NY": [DatedSale(date(2026, 3, 1), 1_500, 1)],
    }


def test_nexus_crossed_by_amount_and_by_count_unregistered_first():
    txns = [
        # CA: 300,000.00 then 250,000.00 -> 550,000.00 >= 500,000.00 on 2026-03-10. The 90,000.00 of
        # collected tax on the first sale would have crossed it earlier if counted (390,000 + 250,000).
        _ca_sale("C1", 30_000_000, date(2026, 2, 1), collected=9_000_000),
        _ca_sale("C2", 25_000_000, date(2026, 3, 10)),
        # SD: three sales of 1.00 -> 3 transactions reached on 2026-01-07
        *[txn(f"S{d}", [line("L", 100, [row("US-ST-SD", 0, 100)])], on=date(2026, 1, d)) for d in (5, 6, 7)],
        # TX: 100,000.00 of 500,000.00 -> share 0.2
        txn("T1", [line("L", 10_000_000, [row("US-ST-TX", 0, 10_000_000)])], on=date(2026, 4, 1)),
        # WA: 200,000.00 last year, 100,000.00 threshold, registered -> exceeded in 2025
        txn("W1", [line("L", 20_000_000, [row("US-ST-WA", 0, 20_000_000)])], on=date(2025, 5, 1)),
    ]
    rep = nexus_report(AS_OF, dated_sales_by_state(txns), {"US-ST-WA", "SD"}, THRESHOLDS)
    # crossed and unregistered (CA), then crossed and registered by crossing date (WA 2025, SD 2026), then TX
    assert [r.state for r in rep] == ["CA", "WA", "SD", "TX"]
    ca, wa, sd, tx = rep
    assert (ca.sales, ca.transactions, ca.exceeded, ca.registered) == (55_000_000, 2, True, False)
    assert ca.crossed_on == date(2026, 3, 10) and ca.needs_registration
    assert ca.share == Decimal("1.1")  # 550,000 / 500,000
    assert (sd.sales, sd.transactions, sd.exceeded, sd.registered) == (300, 3, True, True)
    assert sd.crossed_on == date(2026, 1, 7) and sd.share == Decimal("1")
    assert (wa.period_start, wa.period_end, wa.crossed_on) == (date(2025, 1, 1), date(2025, 12, 31), date(2025, 5, 1))
    assert (tx.exceeded, tx.crossed_on, tx.share, tx.registered) == (False, None, Decimal("0.2"), False)
    assert tx.sales_threshold == 50_000_000 and tx.threshold_source == "test"


def test_count_below_threshold_when_sales_are_credited_back():
    sales = [
        txn("S1", [line("L", 6_000_000, [row("US-ST-SD", 0, 6_000_000)])], on=date(2026, 1, 5)),
        txn("S2", [line("L", 5_000_000, [row("US-ST-SD", 0, 5_000_000)])], on=date(2026, 1, 6)),
        txn("C1", [line("L", 2_000_000, [row("US-ST-SD", 0, 2_000_000)])], type="credit", on=date(2026, 1, 8)),
    ]
    (sd,) = nexus_report(AS_OF, dated_sales_by_state(sales), set(), {"SD": THRESHOLDS["SD"]})
    # 110,000.00 on Jan 6 crossed 100,000.00; the credit brings it to 90,000.00 with 2 transactions.
    assert (sd.sales, sd.transactions, sd.exceeded, sd.crossed_on) == (9_000_000, 2, False, date(2026, 1, 6))


def test_default_thresholds_come_from_project_data_and_skip_states_without_sales_tax():
    rep = nexus_report(AS_OF, {}, set(), thresholds_in_force(nexus_thresholds(), AS_OF))
    states = {r.state for r in rep}
    assert "CA" in states and "TX" in states
    assert not states & {"DE", "MT", "NH", "OR"}
    assert all(r.sales == 0 and not r.exceeded for r in rep)
