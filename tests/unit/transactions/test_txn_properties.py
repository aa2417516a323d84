"""Hypothesis properties: the tax-only split and marked-line netting."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st
from txn_helpers import indexed, line, split_lines
from txn_helpers import st as st_line

from levy.domain.transactions.rules import tax_on_create
from levy.domain.transactions.tax_only import attribute_tax_only

CODES = [f"US-J-{i}" for i in range(8)]

groups = st.lists(st.lists(st.sampled_from(CODES), min_size=1, max_size=5), min_size=1, max_size=4)


@settings(max_examples=200, deadline=None)
@given(total=st.integers(0, 10**9), reached=groups, registered=st.sets(st.sampled_from(CODES)))
def test_tax_only_split_sums_to_total_and_parts_within_one(total, reached, registered):
    a = attribute_tax_only(total, reached, registered)
    expected = {c for g in reached for c in g if c in registered}
    if not expected:
        assert a.held_off_reason == "not_registered" and a.allocations == ()
        return
    codes = [c for c, _ in a.allocations]
    parts = [p for _, p in a.allocations]
    assert set(codes) == expected and len(codes) == len(expected)
    assert sum(parts) == total
    assert max(parts) - min(parts) <= 1
    # per address group too (a subset of the same equal parts)
    for g in reached:
        mine = [p for c, p in a.allocations if c in g]
        if mine:
            assert max(mine) - min(mine) <= 1


amounts = st.integers(-5000, 5000)


@settings(max_examples=200, deadline=None)
@given(
    marked=st.lists(amounts, min_size=1, max_size=5),
    plain=st.lists(st.integers(0, 5000), max_size=3),
    sent=st.one_of(st.none(), st.integers(0, 10000)),
    goods=st.booleans(),
    source=st.sampled_from(["quickbooks", "chargebee", "stripe"]),
)
def test_netting_document_tax_never_below_zero(marked, plain, sent, goods, source):
    lines = [line(f"M{i}", a, marked=True) for i, a in enumerate(marked)]
    lines += [st_line(f"T{i}", a) for i, a in enumerate(plain)]
    if goods:
        lines.append(line("G", 1000))
    s = split_lines(indexed(*lines), source=source, transaction_type="sale")
    t = tax_on_create(calculated=77, tax_amount=sent, split=s)
    assert t.tax_amount >= 0 and t.filing_tax_amount_source == "provided"
    net = sum(marked)
    if any(a < 0 for a in marked):
        assert s.netted
        assert s.reduction == max(0, -net)
        assert s.collected_amount == sum(plain) + max(0, net)
        assert len([c for c in s.collected if c.from_marked_product]) == (1 if net >= 0 else 0)
    else:
        assert s.reduction == 0 and s.collected_amount == sum(plain) + net
    assert t.tax_amount == max(0, (sent or 0) + sum(plain) + net)
    assert [g.id for g in s.goods] == (["G"] if goods else [])
