"""Credits against a sale (issue 16): the invariant, the remaining-tax rule and the refusals
of levy.domain.transactions.credits, without a database. Figures worked by hand in comments."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime
from decimal import Decimal

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from levy.domain.errors import FailedPrecondition, ValidationFailed
from levy.domain.tax.model import DiscountResult, LineResult, TaxRow
from levy.domain.transactions.records import StoredLine, TransactionRecord
from levy.domain.transactions.rules import TaxState
from levy.domain.transactions.credits import (
    check_credit,
    check_sale_change,
    credit_against,
    credit_line,
    remaining,
)

NOW = datetime(2026, 3, 15, tzinfo=UTC)


def row(code: str, rate: str, base: int, tax: int) -> TaxRow:
    return TaxRow(code, code, "state" if code.startswith("US-ST") else "special", Decimal(rate), base, tax,
                  True, "general", tax_amount_before_discounts=tax)


def result(id: str, amount: int, *rows: TaxRow) -> LineResult:
    return LineResult(id, sum(r.tax_amount for r in rows), sum(r.tax_amount for r in rows), rows, (),
                      amount, amount)


def la(id: str = "a", amount: int = 10000) -> LineResult:
    """Los Angeles, 9.75% as California 6% + a district 3.75%: 10000 -> 600 + 375 = 975."""
    return result(id, amount, row("US-ST-CA", "0.06", amount, amount * 6 // 100),
                  row("US-SP-CA-LA", "0.0375", amount, amount * 375 // 10000))


def record(id: str, type: str, *lines: LineResult, status: str = "finalized", currency: str = "USD",
           provided: int | None = None, parent: str | None = None) -> TransactionRecord:
    calculated = sum(ln.tax_amount for ln in lines)
    return TransactionRecord(
        id=id, organization_id="org", type=type, status=status, source="native", currency=currency,
        transaction_date=NOW, tax=TaxState(calculated, provided), parent_transaction_id=parent,
        parent_found=parent is not None, lines=tuple(StoredLine(b"", ln) for ln in lines),
    )


def sale(*lines: LineResult, **kw: object) -> TransactionRecord:
    return record("txn_sale", "sale", *(lines or (la(),)), **kw)  # type: ignore[arg-type]


def credit(id: str, *lines: LineResult, **kw: object) -> TransactionRecord:
    return record(id, "credit", *lines, parent="txn_sale", **kw)  # type: ignore[arg-type]


def engine_line(id: str, amount: int) -> LineResult:
    """A credit line as the engine taxes it at the same address: 9.75% per row, each rounded half up."""
    return result(id, amount, row("US-ST-CA", "0.06", amount, (amount * 6 * 2 + 100) // 200),
                  row("US-SP-CA-LA", "0.0375", amount, (amount * 375 * 2 + 10000) // 20000))


# -- the remaining-tax rule -----------------------------------------------------------------------


def test_ten_partial_credits_add_up_to_the_sale():
    """Issue 16 item 5: 10 credits of 1000 on 10000/975. Each partial one: 600 x 1000/10000 = 60 and
    375 x 1000/10000 = 37.5 -> 38, tax 98. After nine: 540 + 342 = 882 credited. The tenth completes
    the line: 600 - 540 = 60 and 375 - 342 = 33, tax 93; 882 + 93 = 975."""
    s = sale()
    credits: list[TransactionRecord] = []
    for n in range(10):
        c = credit_against(s, credits, credit(f"txn_c{n}", engine_line("a", 1000)))
        check_credit(s, credits, c, filing_currency="USD")
        credits.append(c)
    assert [c.tax.filing_tax_amount for c in credits] == [98] * 9 + [93]
    assert [r.tax_amount for r in credits[-1].lines[0].result.taxes] == [60, 33]
    total, per_line = remaining(s, credits)
    assert (total.amount, total.tax) == (0, 0) and (per_line["a"].amount, per_line["a"].tax) == (0, 0)


def test_partial_share_is_half_up_and_never_more_than_what_remains():
    # A row of tax 5 on 10: a credit of 1 is 5 x 1/10 = 0.5 -> 1. Five of them take all 5;
    # the sixth partial credit gets min(1, 0) = 0; the credit completing the line gets 5 - 5 = 0.
    sale_line = result("a", 10, row("US-ST-TX", "0.5", 10, 5))
    earlier: list[LineResult] = []
    for _ in range(6):
        earlier.append(credit_line(sale_line, earlier, result("a", 1)))
    assert [e.tax_amount for e in earlier] == [1, 1, 1, 1, 1, 0]
    last = credit_line(sale_line, earlier, result("a", 4))
    # Bases: six credits of 1 took 1 each (10 x 1/10); the last takes the 10 - 6 = 4 left.
    assert last.tax_amount == 0 and last.taxes[0].taxable_base == 4

def test_credit_line_keeps_its_own_amounts_and_takes_the_sale_rows():
    # The sale's line was taxed in CA; the credit line, whatever the engine gave it, reverses those rows:
    # 4000 of 10000: 600 x 0.4 = 240, 375 x 0.4 = 150.
    c = credit_line(la(), [], result("a", 4000, row("US-ST-TX", "0.0625", 4000, 250)))
    assert [(r.jurisdiction_code, r.tax_amount, r.taxable_base) for r in c.taxes] == [
        ("US-ST-CA", 240, 4000), ("US-SP-CA-LA", 150, 4000)]
    assert (c.amount, c.taxable_amount, c.tax_amount) == (4000, 4000, 390)


def test_credit_line_discount_reductions_follow_its_derived_tax():
    # Sale line: 10000 less a discount of 2000 -> net 8000 taxed 6%: 480 (600 before the discount).
    ca = replace(row("US-ST-CA", "0.06", 8000, 480), tax_amount_before_discounts=600)
    sale_line = LineResult("a", 480, 600, (ca,), (DiscountResult("d", 2000, 120),), 10000, 8000)
    # A credit of half of it (8000 less 1000 and 3000 = 4000 net): 480 / 2 = 240, 600 / 2 = 300;
    # the 60 of reduction spread 1000 : 3000 -> 15 and 45.
    mine = LineResult("a", 0, 0, (), (DiscountResult("x", 1000, 0), DiscountResult("y", 3000, 0)), 8000, 4000)
    c = credit_line(sale_line, [], mine)
    assert (c.tax_amount, c.tax_amount_before_discounts) == (240, 300)
    assert [d.tax_amount_reduction for d in c.discounts] == [15, 45]


def test_a_credit_line_naming_no_sale_line_is_bounded_by_totals_and_states():
    c = credit_against(sale(), [], credit("txn_c", la("a", 100), result("z", 500, row("US-ST-TX", "0.0625", 500, 31))))
    assert c.lines[1].result.tax_amount == 31  # left as the engine taxed it; TX was never charged by the sale:
    with pytest.raises(ValidationFailed) as ei:
        check_credit(sale(), [], c, filing_currency="USD")
    item = ei.value.first
    assert item.pointer == "/line_items" and item.meta == {"jurisdictions": ["US-ST-TX"]}


@settings(max_examples=300, deadline=None)
@given(
    rows=st.lists(st.integers(0, 5000), min_size=1, max_size=3),
    whole=st.integers(1, 100_000),
    cuts=st.lists(st.integers(1, 100_000), max_size=8),
)
def test_credits_of_a_line_never_exceed_it_and_the_completing_one_takes_the_rest(rows, whole, cuts):
    sale_line = result("a", whole, *(row(f"US-J-{i}", "0.01", whole, t) for i, t in enumerate(rows)))
    left = whole
    earlier: list[LineResult] = []
    for cut in cuts:
        part = min(cut, left - 1)
        if part <= 0:
            break
        c = credit_line(sale_line, earlier, result("a", part))
        for i, r in enumerate(c.taxes):
            credited = sum(e.taxes[i].tax_amount for e in earlier)
            # ROUND_HALF_UP share, capped by what remains of the row.
            assert r.tax_amount == min(rows[i] - credited, (2 * rows[i] * part + whole) // (2 * whole))
        earlier.append(c)
        left -= part
    last = credit_line(sale_line, earlier, result("a", left))
    for i, t in enumerate(rows):
        assert sum(e.taxes[i].tax_amount for e in [*earlier, last]) == t
        assert sum(e.taxes[i].taxable_base for e in [*earlier, last]) == whole
    assert sum(e.tax_amount for e in [*earlier, last]) == sum(rows)


# -- refusing a credit ----------------------------------------------------------------------------


def test_credit_in_another_currency_is_refused_at_currency():
    s = sale(currency="JPY")
    with pytest.raises(ValidationFailed) as ei:
        check_credit(s, [], credit("txn_c", la(), currency="USD"), filing_currency="USD")
    item = ei.value.first
    assert item.pointer == "/currency" and item.status == 422 and "JPY" in item.detail
    assert item.meta == {"parent_currency": "JPY"}
    check_credit(s, [], credit("txn_c", la(), currency="JPY"), filing_currency="USD")


def test_credit_over_the_total_states_what_remains():
    # Sale 10000/975; earlier 4000/390 -> 6000 and 585 remain.
    s = sale()
    earlier = [credit("txn_1", la("a", 4000))]
    check_credit(s, earlier, credit("txn_c", la("a", 6000)), filing_currency="USD")
    with pytest.raises(ValidationFailed) as ei:
        check_credit(s, earlier, credit("txn_c", la("a", 6001)), filing_currency="USD")
    item = ei.value.first
    assert item.pointer == "/line_items" and "amount 6001 exceeds the 6000" in item.detail
    assert item.meta == {"remaining_amount": 6000, "remaining_tax": 585}
    with pytest.raises(ValidationFailed) as ei:
        check_credit(s, earlier, credit("txn_c", la("a", 100), provided=586), filing_currency="USD")
    assert ei.value.first.pointer == "/tax_amount" and "tax 586 exceeds the 585" in ei.value.first.detail


def test_credit_over_one_line_is_refused_even_within_the_total():
    # Sale lines a = b = 5000, each taxed 6%: 300.
    a = result("a", 5000, row("US-ST-CA", "0.06", 5000, 300))
    b = result("b", 5000, row("US-ST-CA", "0.06", 5000, 300))
    s = sale(a, b)
    earlier = [credit("txn_1", result("a", 3000, row("US-ST-CA", "0.06", 3000, 180)))]
    # 2500 more of line a: total 5500 of 10000 is fine, line a only has 2000 and 120 left.
    with pytest.raises(ValidationFailed) as ei:
        more_of_a = result("a", 2500, row("US-ST-CA", "0.06", 2500, 150))
        check_credit(s, earlier, credit("txn_c", result("b", 100), more_of_a), filing_currency="USD")
    item = ei.value.first
    assert item.pointer == "/line_items/1" and "line 'a'" in item.detail
    assert item.meta == {"line_id": "a", "remaining_amount": 2000, "remaining_tax": 120}


# -- refusing a change to the sale ----------------------------------------------------------------


def test_sale_with_credits_cannot_be_voided_or_moved_to_draft():
    credits = [credit("txn_1", la()), credit("txn_2", la("a", 0), status="draft")]
    for status in ("void", "draft"):
        with pytest.raises(FailedPrecondition) as ei:
            check_sale_change(sale(status=status), credits, pointer="/tax_amount", filing_currency="USD")
        item = ei.value.first
        assert item.status == 422 and item.code == "invalid_state" and item.pointer == "/status"
        assert "txn_1, txn_2" in item.detail and f"'{status}'" in item.detail
        assert item.meta == {"credit_transaction_ids": ["txn_1", "txn_2"], "credited_amount": 10000,
                             "credited_tax": 975}
    check_sale_change(sale(status="void"), [], pointer="/status", filing_currency="USD")  # nothing credited: free


def test_sale_tax_cannot_go_below_what_is_credited():
    credits = [credit("txn_1", la("a", 4000))]  # 4000 credited, tax 240 + 150 = 390
    check_sale_change(sale(provided=390), credits, pointer="/tax_amount", filing_currency="USD")
    with pytest.raises(FailedPrecondition) as ei:
        check_sale_change(sale(provided=389), credits, pointer="/tax_amount", filing_currency="USD")
    item = ei.value.first
    assert item.pointer == "/tax_amount" and "tax 389 is below the 390 credited" in item.detail
    assert "txn_1" in item.detail and item.meta["credit_transaction_ids"] == ["txn_1"]


def test_sale_currency_cannot_leave_its_credits():
    with pytest.raises(FailedPrecondition) as ei:
        check_sale_change(sale(currency="JPY"), [credit("txn_1", la("a", 100))], pointer="/line_items",
                          filing_currency="USD")
    assert ei.value.first.pointer == "/currency" and "USD" in ei.value.first.detail


def test_sale_lines_cannot_go_below_what_is_credited():
    credits = [credit("txn_1", la("a", 10000))]
    with pytest.raises(FailedPrecondition) as ei:
        check_sale_change(sale(la("a", 100)), credits, pointer="/line_items", filing_currency="USD")
    item = ei.value.first
    assert item.pointer == "/line_items" and "amount 100 is below the 10000 credited" in item.detail
    assert "line 'a' is below what is credited of it" in item.detail


def test_remaining_counts_per_line_and_in_total():
    s = sale(la("a"), la("b", 2000))
    total, per_line = remaining(s, [credit("txn_1", la("a", 4000)), credit("txn_2", la("z", 100))])
    # Total 12000 - 4100; tax 975 + 195 - 390 - 9 (100: 6 + 3.75 -> 6 + 3 by la's floor) = 771.
    assert (total.amount, total.tax) == (7900, 771)
    assert (per_line["a"].amount, per_line["a"].tax) == (6000, 585)
    assert (per_line["b"].amount, per_line["b"].tax) == (2000, 195)


# -- per state: a provided tax is placed in proportion to each transaction's own rows -------------


def two_states(provided: int | None) -> TransactionRecord:
    """Line a in Los Angeles (10000: 600 + 125) and line b in Texas (2000 x 6.25% = 125)."""
    return sale(result("a", 10000, row("US-ST-CA", "0.06", 10000, 600), row("US-SP-CA-LA", "0.0125", 10000, 125)),
                result("b", 2000, row("US-ST-TX", "0.0625", 2000, 125)), provided=provided)


def test_credit_tax_per_state_within_what_the_sale_placed_there():
    # Provided 100 over the calculated 600 / 125 / 125 (850): 70.59, 14.71, 14.71 -> floors 70, 14, 14
    # and the 2 left to the largest remainders (LA, then TX): CA 70 + 15 = 85, TX 15.
    s = two_states(100)
    c = credit_against(s, [], credit("txn_c", result("b", 500)))
    assert c.tax.filing_tax_amount == 31  # 125 x 500/2000 = 31.25 -> 31: within the 100 in total,
    with pytest.raises(ValidationFailed) as ei:  # but Texas only got 15.
        check_credit(s, [], c, filing_currency="USD")
    item = ei.value.first
    assert item.pointer == "/tax_amount" and "TX (by 16; 15 left there)" in item.detail
    assert item.meta == {"remaining_tax_by_state": {"TX": 15}}
    check_credit(s, [], replace(c, tax=replace(c.tax, provided=15)), filing_currency="USD")


def test_sale_tax_per_state_cannot_go_below_its_credits():
    credits = [credit_against(two_states(None), [], credit("txn_1", result("b", 500)))]  # TX 31
    check_sale_change(two_states(None), credits, pointer="/tax_amount", filing_currency="USD")
    # Provided 200: 141.18, 29.41, 29.41 -> 141, 29, 29 and the 1 left to LA: TX 29 < 31, total 200 >= 31.
    with pytest.raises(FailedPrecondition) as ei:
        check_sale_change(two_states(200), credits, pointer="/tax_amount", filing_currency="USD")
    assert "its tax in TX is below what is credited there by 2" in ei.value.first.detail
