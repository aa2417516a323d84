"""Tax-only transactions (spec 4.7): detection and attribution to registered jurisdictions."""

from __future__ import annotations

import pytest
from txn_helpers import CA, NY, indexed, line, plan_lines, st

from levy.domain.transactions.tax_only import attribute_tax_only, is_tax_only

LA = ["US-ST-CA", "US-CO-06037", "US-CI-0644000"]
SF = ["US-ST-CA", "US-CO-06075"]
NYC = ["US-ST-NY", "US-CI-3651000"]


def test_one_address_split_equally_over_registered_jurisdictions():
    a = attribute_tax_only(1000, [LA], set(LA))
    # 1000 / 3 = 333 r 1: the first gets the extra cent
    assert a.allocations == (("US-ST-CA", 334), ("US-CO-06037", 333), ("US-CI-0644000", 333))
    assert a.on_returns and a.held_off_reason is None


def test_only_registered_jurisdictions_get_a_share():
    a = attribute_tax_only(1000, [LA], {"US-ST-CA"})
    assert a.allocations == (("US-ST-CA", 1000),)


def test_several_addresses_share_the_total_across_all_they_reach():
    registered = {"US-ST-CA", "US-CO-06037", "US-ST-NY"}
    a = attribute_tax_only(1000, [LA, NYC], registered)
    assert a.allocations == (("US-ST-CA", 334), ("US-CO-06037", 333), ("US-ST-NY", 333))


def test_a_jurisdiction_reached_by_two_addresses_counts_once():
    a = attribute_tax_only(1001, [LA, SF], lambda code: True)
    # CA, Los Angeles county, LA city, SF county: 1001 / 4 = 250 r 1
    assert a.allocations == (("US-ST-CA", 251), ("US-CO-06037", 250), ("US-CI-0644000", 250), ("US-CO-06075", 250))


def test_registered_nowhere_is_on_no_return():
    a = attribute_tax_only(500, [LA, NYC], {"US-ST-TX"})
    assert a.allocations == () and a.held_off_reason == "not_registered" and not a.on_returns
    assert "no return" in a.detail


def test_a_line_without_address_holds_the_transaction_off_returns():
    a = attribute_tax_only(500, [LA, None], set(LA))
    assert a.allocations == () and a.held_off_reason == "line_without_address"


def test_zero_tax():
    assert attribute_tax_only(0, [SF], set(SF)).allocations == (("US-ST-CA", 0), ("US-CO-06075", 0))


def test_negative_total_is_a_programming_error():
    with pytest.raises(ValueError):
        attribute_tax_only(-1, [SF], set(SF))


def test_is_tax_only():
    assert is_tax_only("sale", False, True)
    assert is_tax_only("credit", False, True)
    assert not is_tax_only("credit", True, True)
    assert not is_tax_only("sale", False, False)


def test_plan_sale_of_only_collected_lines_is_tax_only_with_no_line_items():
    plan = plan_lines(indexed(st("T1", 300, address=CA), st("T2", 200, address=NY)), transaction_type="sale")
    assert plan.tax_only and plan.needs_attribution and plan.split.goods == ()
    assert plan.split.collected_amount == 500 and plan.collected_addresses == (CA, NY)


def test_plan_credit_without_parent_is_tax_only():
    plan = plan_lines(indexed(st("T1", 300)), transaction_type="credit", has_parent=False)
    assert plan.needs_attribution


def test_plan_credit_with_parent_of_only_collected_lines_is_held_off():
    plan = plan_lines(indexed(st("T1", 300)), transaction_type="credit", has_parent=True)
    assert plan.record and plan.tax_only and plan.held_off_reason == "credit_with_parent"
    assert not plan.needs_attribution


def test_plan_with_goods_is_not_tax_only():
    plan = plan_lines(indexed(line("A", 100), st("T1", 300)), transaction_type="sale")
    assert not plan.tax_only and plan.held_off_reason is None and plan.collected_addresses == ()


def test_plan_keeps_missing_addresses_for_the_attribution():
    plan = plan_lines(indexed(st("T1", 300, address=None)), transaction_type="sale")
    assert plan.collected_addresses == (None,)
    reached = [None if a is None else ["US-ST-CA"] for a in plan.collected_addresses]
    assert attribute_tax_only(300, reached, {"US-ST-CA"}).held_off_reason == "line_without_address"
