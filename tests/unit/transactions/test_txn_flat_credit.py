"""Credits by amount (issue 37): levy.domain.transactions.credits.flat_credit without a database.
Figures worked by hand in comments; a Hypothesis property checks exactness and the bounds."""

from __future__ import annotations

from dataclasses import replace

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from levy.domain.errors import ValidationFailed
from levy.domain.transactions.records import StoredLine, TransactionRecord
from levy.domain.transactions.rules import TaxState
from levy.domain.transactions.credits import check_credit, flat_credit, remaining
from test_txn_credit_invariant import credit, la, sale


def as_credit(id: str, s: TransactionRecord, earlier: list[TransactionRecord], amount: int) -> TransactionRecord:
    """The credit ``flat_credit`` builds, as a record (what the wiring stores), checked like any credit."""
    lines = tuple(StoredLine(b"", share.result) for share in flat_credit(s, earlier, amount))
    c = replace(credit(id), lines=lines, tax=TaxState(sum(ln.result.tax_amount for ln in lines)))
    check_credit(s, earlier, c, filing_currency="USD")
    return c


def total(c: TransactionRecord) -> int:
    return c.net_amount + c.tax.filing_tax_amount


def test_two_rows_split_by_their_remaining_tax() -> None:
    # LA 10000: 600 + 375 = 975, total 10975. Flat 1000: tax 1000 x 975 / 10975 = 88.84 -> 89, net 911.
    # Rows 600 : 375: 89 x 600/975 = 54.77, 89 x 375/975 = 34.23 -> 54 + 34 = 88, the unit to .77: 55 and 34.
    # Bases: 10000 x 911/10000 = 911 each.
    (share,) = flat_credit(sale(), [], 1000)
    r = share.result
    assert (r.amount, r.taxable_amount, r.tax_amount) == (911, 911, 89)
    assert [(t.tax_amount, t.taxable_base) for t in r.taxes] == [(55, 911), (34, 911)]


def test_largest_remainder_over_lines_then_complete() -> None:
    # Lines a 10000 (975) and b 5000 (300 + 187.5 -> 187 by the helper's floor = 487): totals 10975 and 5487.
    s = sale(la("a", 10000), la("b", 5000))
    assert [ln.result.tax_amount for ln in s.lines] == [975, 487]
    # Flat 100: quotas 100 x 10975/16462 = 66.67 and 33.33 -> 66 + 33 = 99, the unit to a (.67): 67 and 33.
    # a: tax 67 x 975/10975 = 5.95 -> 6, net 61; b: tax 33 x 487/5487 = 2.93 -> 3, net 30.
    first = as_credit("txn_c1", s, [], 100)
    assert [(ln.id, ln.result.amount, ln.result.tax_amount) for ln in first.lines] == [("a", 61, 6), ("b", 30, 3)]
    # The rest, 16462 - 100 = 16362, completes both lines exactly.
    rest = as_credit("txn_c2", s, [first], 16362)
    left, per_line = remaining(s, [first, rest])
    assert (left.amount, left.tax) == (0, 0) and all((v.amount, v.tax) == (0, 0) for v in per_line.values())
    with pytest.raises(ValidationFailed) as e:
        flat_credit(s, [first, rest], 1)
    assert e.value.items[0].pointer == "/flat_amount" and e.value.items[0].meta["remaining_total"] == 0


@pytest.mark.parametrize("amount", [0, -1])
def test_not_positive_is_refused(amount: int) -> None:
    with pytest.raises(ValidationFailed) as e:
        flat_credit(sale(), [], amount)
    assert e.value.items[0].pointer == "/flat_amount"


def test_a_fully_credited_line_gets_nothing() -> None:
    s = sale(la("a", 1000), la("b", 1000))  # each 60 + 37 = 97: totals 1097 and 1097
    first = as_credit("txn_c1", s, [], 1097)  # quotas 548.5 each -> 549 (a, first on the tie) and 548
    assert [ln.result.amount + ln.result.tax_amount for ln in first.lines] == [549, 548]
    # b reversed whole by a line credit (its own result: the sale's line): b has nothing left...
    b_whole = replace(credit("txn_c2"), lines=(s.lines[1],))
    # ... so a flat credit of 10 takes only from a.
    shares = flat_credit(s, [b_whole], 10)
    assert [sh.sale_line.id for sh in shares] == ["a"]
    # a: tax 10 x 97 / 1097 = 0.88 -> 1, net 9.
    assert (shares[0].result.amount, shares[0].result.tax_amount) == (9, 1)


@settings(max_examples=200, deadline=None)
@given(amounts=st.lists(st.integers(0, 50000), min_size=1, max_size=5),
       refunds=st.lists(st.integers(1, 30000), min_size=1, max_size=6))
def test_flat_credits_are_exact_and_never_over_refund(amounts: list[int], refunds: list[int]) -> None:
    s = sale(*(la(f"l{i}", a) for i, a in enumerate(amounts)))
    whole = s.net_amount + s.tax.filing_tax_amount
    credits: list[TransactionRecord] = []
    for n, amount in enumerate(refunds):
        left = whole - sum(total(c) for c in credits)
        if amount > left:
            with pytest.raises(ValidationFailed):
                flat_credit(s, credits, amount)
            continue
        c = as_credit(f"txn_c{n}", s, credits, amount)  # check_credit passes: within every bound
        assert total(c) == amount  # exact: amounts and tax add up to the flat amount
        for ln in c.lines:
            assert ln.result.tax_amount == sum(t.tax_amount for t in ln.result.taxes)
        credits.append(c)
    # What remains is the sale less the credits, never negative per line.
    left, per_line = remaining(s, credits)
    assert left.amount + left.tax == whole - sum(total(c) for c in credits)
    assert all(v.amount >= 0 and v.tax >= 0 for v in per_line.values())
