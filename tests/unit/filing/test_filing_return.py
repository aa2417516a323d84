"""prepare_return: a period's figures per jurisdiction, worked out by hand in each test."""

from __future__ import annotations

from datetime import date

import pytest
from filing_helpers import CI, CO, LOCAL, ST, exempt_line, line, row, txn

from levy.domain.filing import ExemptSales, prepare_return

Q1 = (date(2026, 1, 1), date(2026, 3, 31))


def _by_code(ret):
    return {j.jurisdiction_code: j for j in ret.jurisdictions}


def _period_transactions():
    # T1: two lines in Los Angeles; L2 carries a 1000 discount (net 4000).
    t1 = txn("T1", [
        line("L1", 10000, [row(ST, 600, 10000), row(LOCAL, 125, 10000), row(CO, 25, 10000)]),
        line("L2", 5000, [row(ST, 240, 4000), row(LOCAL, 50, 4000), row(CO, 10, 4000)], net=4000),
    ], on=date(2026, 1, 10))
    t2 = txn("T2", [exempt_line("L1", 3000, "exemption_certificate")], on=date(2026, 2, 1))
    t3 = txn("T3", [exempt_line("L1", 2000, "non_taxable_product")], on=date(2026, 2, 15))
    t4 = txn("T4", [exempt_line("L1", 1500, "unregistered")], on=date(2026, 3, 31))
    # T5: a credit for part of T1 (amounts positive, type marks the credit).
    t5 = txn("T5", [line("L1", 2000, [row(ST, 120, 2000), row(LOCAL, 25, 2000), row(CO, 5, 2000)])],
             type="credit", on=date(2026, 3, 1))
    sale = [row(ST, 60, 1000), row(LOCAL, 13, 1000), row(CO, 3, 1000)]
    excluded = [
        txn("D", [line("L1", 1000, sale)], status="draft"),
        txn("V", [line("L1", 1000, sale)], status="void"),
        txn("LATE", [line("L1", 1000, sale)], on=date(2026, 4, 1)),
        txn("EARLY", [line("L1", 1000, sale)], on=date(2025, 12, 31)),
        txn("FILED", [line("L1", 1000, sale)], status="filed", filed_states={"CA"}),
        txn("NY", [line("L1", 1000, [row("US-ST-NY", 40, 1000)])]),
    ]
    return [t1, t2, t3, t4, t5, *excluded]


def test_period_with_sales_every_exempt_reason_and_a_credit_netted():
    ret = prepare_return("US-ST-CA", *Q1, _period_transactions())
    assert ret.transaction_ids == ("T1", "T2", "T3", "T4", "T5")
    assert [j.jurisdiction_code for j in ret.jurisdictions] == [ST, LOCAL, CO]
    st = _by_code(ret)[ST]
    # gross: 10000 + 5000 + 3000 + 2000 + 1500 - 2000 (credit) = 19500
    assert st.gross_sales == 19500
    assert st.discounts == 1000
    assert st.exempt_sales == ExemptSales(exemption_certificate=3000, non_taxable_product=2000, unregistered=1500)
    # taxable: 10000 + 4000 - 2000 = 12000; and 1000 + 3000 + 2000 + 1500 + 12000 = 19500
    assert st.taxable_sales == 12000
    assert st.tax_calculated == 600 + 240 - 120 == 720
    assert (st.sales_filing_tax, st.credits_filing_tax, st.filing_tax_amount) == (840, 120, 720)
    assert st.tax_provided == 0  # every tax here is calculated
    assert st.jurisdiction_name == "California" and st.jurisdiction_type == "state"
    local, county = _by_code(ret)[LOCAL], _by_code(ret)[CO]
    assert local.filing_tax_amount == 125 + 50 - 25 == 150
    assert county.filing_tax_amount == 25 + 10 - 5 == 30
    assert county.taxable_sales == 12000
    assert ret.totals.jurisdiction_code == "TOTAL"
    assert ret.totals.filing_tax_amount == ret.filing_tax_amount == 720 + 150 + 30
    # A sale counts once in the state's total however many jurisdictions tax it (docs/filing.md):
    # the TOTAL row's sales figures are the state row's, its tax the sum of the rows'.
    assert (ret.totals.gross_sales, ret.totals.discounts, ret.totals.taxable_sales) == (19500, 1000, 12000)
    assert ret.totals.exempt_sales == ExemptSales(exemption_certificate=3000, non_taxable_product=2000,
                                                  unregistered=1500)
    assert ret.totals.tax_calculated == 720 + 150 + 30
    assert ret.credits_carried_forward == {}
    assert ret.held_off == ()


def test_partial_base_counts_the_rest_as_non_taxable():
    # A percentage rule taxes 80 % of 1000: base 800, the other 200 is exempt as non-taxable.
    ret = prepare_return("US-ST-CA", *Q1, [txn("T", [line("L", 1000, [row(ST, 48, 800)])])])
    st = _by_code(ret)[ST]
    assert (st.gross_sales, st.taxable_sales, st.exempt_sales.non_taxable_product) == (1000, 800, 200)


def test_resale_and_no_tax_reasons_fall_in_the_three_buckets():
    t = txn("T", [exempt_line("A", 700, "resale", codes=(ST,)), exempt_line("B", 300, "no_tax", codes=(ST,))])
    st = _by_code(prepare_return("US-ST-CA", *Q1, [t]))[ST]
    assert st.exempt_sales == ExemptSales(exemption_certificate=700, non_taxable_product=300, unregistered=0)


def test_credit_larger_than_the_period_tax_is_carried_forward_and_used_next_period():
    q2 = (date(2026, 4, 1), date(2026, 6, 30))
    sale = txn("S", [line("L", 1000, [row(ST, 100, 1000), row(LOCAL, 20, 1000)])], on=date(2026, 4, 5))
    credit = txn("C", [line("L", 3000, [row(ST, 300, 3000), row(LOCAL, 10, 3000)])], type="credit",
                 on=date(2026, 5, 5))
    ret = prepare_return("US-ST-CA", *q2, [sale, credit], carried_credits={ST: 50})
    st, local = _by_code(ret)[ST], _by_code(ret)[LOCAL]
    # state: 100 - 300 = -200 -> 0 due; 200 + the 50 carried in (unused) go forward
    assert (st.filing_tax_amount, st.carried_credits_applied, st.credits_carried_forward) == (0, 0, 250)
    # local: 20 - 10 = 10 due, nothing carried
    assert (local.filing_tax_amount, local.credits_carried_forward) == (10, 0)
    assert ret.filing_tax_amount == 10
    assert ret.credits_carried_forward == {ST: 250}
    assert st.gross_sales == 1000 - 3000  # sales figures are netted as they are

    q3 = (date(2026, 7, 1), date(2026, 9, 30))
    later = txn("S3", [line("L", 4000, [row(ST, 400, 4000)])], on=date(2026, 7, 2))
    nxt = prepare_return("US-ST-CA", *q3, [later], carried_credits=ret.credits_carried_forward)
    st3 = _by_code(nxt)[ST]
    assert (st3.carried_credits_applied, st3.filing_tax_amount, st3.credits_carried_forward) == (250, 150, 0)
    assert nxt.credits_carried_forward == {}


def test_carried_credit_without_activity_stays_on_the_return_and_goes_forward():
    ret = prepare_return("US-ST-CA", *Q1, [], carried_credits={CO: 7})
    co = _by_code(ret)[CO]
    assert (co.filing_tax_amount, co.carried_credits_applied, co.credits_carried_forward) == (0, 0, 7)
    assert ret.credits_carried_forward == {CO: 7}


def test_carried_credit_of_another_state_is_a_wiring_error():
    with pytest.raises(ValueError):
        prepare_return("US-ST-CA", *Q1, [], carried_credits={"US-ST-NY": 5})


def test_tax_only_allocations_are_reported_with_zero_sales():
    sale = txn("TO", allocations=[(ST, 34), (CO, 33), (CI, 33)], source="provided")
    credit = txn("TOC", allocations=[(ST, 10)], source="provided", type="credit", on=date(2026, 2, 2))
    ret = prepare_return("US-ST-CA", *Q1, [sale, credit])
    by = _by_code(ret)
    assert [j.jurisdiction_code for j in ret.jurisdictions] == [ST, CO, CI]
    assert (by[ST].gross_sales, by[ST].taxable_sales, by[ST].tax_calculated) == (0, 0, 0)
    assert (by[ST].tax_only_tax, by[ST].tax_provided, by[ST].filing_tax_amount) == (24, 24, 24)
    assert by[CI].filing_tax_amount == 33 and by[CI].jurisdiction_type == "city"
    assert ret.filing_tax_amount == 24 + 33 + 33
    assert [(e.transaction_id, e.jurisdiction_code, e.amount) for e in ret.tax_only_allocations] == [
        ("TO", ST, 34), ("TO", CO, 33), ("TO", CI, 33), ("TOC", ST, -10)]
    assert ret.transaction_ids == ("TO", "TOC")


def test_held_off_transactions_are_listed_but_neither_counted_nor_filed():
    goods = txn("OK", [line("L", 1000, [row(ST, 60, 1000)])])
    no_address = txn("H1", held="line_without_address", source="provided", filing=30)
    other_state = txn("H2", held="credit_with_parent", type="credit", source="provided", filing=5, states={"NY"})
    here = txn("H3", held="negative_marked_only", states={"CA"})
    late = txn("H4", held="line_without_address", on=date(2026, 4, 2))
    ret = prepare_return("US-ST-CA", *Q1, [goods, no_address, other_state, here, late])
    assert [(h.transaction_id, h.reason) for h in ret.held_off] == [
        ("H1", "line_without_address"), ("H3", "negative_marked_only")]
    assert "no customer address" in ret.held_off[0].detail
    assert ret.transaction_ids == ("OK",)
    assert ret.filing_tax_amount == 60


def test_collected_tax_lines_count_in_tax_but_not_in_sales():
    # A sale of 1000 whose billing system recorded 90 of tax as a SALES_TAX line: the wiring stores
    # only the goods line; the tax is provided (90) against 60 calculated.
    t = txn("T", [line("L", 1000, [row(ST, 60, 1000)])], source="provided", filing=90)
    st = _by_code(prepare_return("US-ST-CA", *Q1, [t]))[ST]
    assert (st.gross_sales, st.taxable_sales) == (1000, 1000)
    assert (st.tax_calculated, st.tax_provided, st.filing_tax_amount) == (60, 90, 90)


def test_a_sale_counts_once_in_the_state_total_and_a_local_only_line_by_its_first_row():
    # Austin: state 6.25 %, city 1 %, MTA 1 % of 10000 -> 625 + 100 + 100.
    tx, city, mta = "US-ST-TX", "US-CI-TX-AUSTIN", "US-SP-TX-AUSTIN_MTA"
    a = txn("A", [line("L1", 10000, [row(tx, 625, 10000), row(city, 100, 10000), row(mta, 100, 10000)])])
    # A line taxed by the city only (no state row), exempt there by certificate: counted once, as the city row says.
    b = txn("B", [line("L1", 3000, [row(mta, 0, 0, "exemption_certificate"), row(city, 0, 0, "exemption_certificate")])])
    # A line the state taxes while the city row is exempt: the state row decides the total (taxable).
    c = txn("C", [line("L1", 2000, [row(tx, 125, 2000), row(city, 0, 0, "non_taxable_product")])])
    ret = prepare_return("US-ST-TX", *Q1, [a, b, c])
    rows = _by_code(ret)
    assert rows[tx].gross_sales == 10000 + 2000
    assert rows[city].gross_sales == 10000 + 3000 + 2000 and rows[mta].gross_sales == 10000 + 3000
    t = ret.totals
    # gross 10000 + 3000 + 2000 = 15000 (not 12000 + 15000 + 13000 = 40000)
    assert t.gross_sales == 15000
    # exempt by certificate: B's 3000 (its first row in return order is the city's); taxable 10000 + 2000
    assert t.exempt_sales == ExemptSales(exemption_certificate=3000) and t.taxable_sales == 12000
    assert t.gross_sales == t.discounts + t.exempt_sales.total + t.taxable_sales
    # tax sums as before: 625 + 100 + 100 + 125
    assert t.tax_calculated == t.filing_tax_amount == 950
