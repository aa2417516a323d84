"""Credits (spec 4.6 workflows 3-5): workflow choice, full-credit copies, parents, limits."""

from __future__ import annotations

import pytest

from levy.domain.errors import RequiredField, ValidationFailed
from levy.domain.transactions import (
    check_credit_limits,
    check_full_credit_not_empty,
    check_parent_found,
    credit_kind,
    full_credit_lines,
)


def test_credit_kind():
    assert credit_kind("sale", has_parent=False, line_items_sent=True) == "sale"
    assert credit_kind("credit", has_parent=True, line_items_sent=False) == "full_credit"
    # lines sent are used even when a parent is present
    assert credit_kind("credit", has_parent=True, line_items_sent=True) == "credit_with_lines"
    assert credit_kind("credit", has_parent=False, line_items_sent=True) == "credit_with_lines"


def test_credit_kind_refusals():
    with pytest.raises(RequiredField) as ei:
        credit_kind("sale", has_parent=False, line_items_sent=False)
    assert ei.value.first.pointer == "/line_items"
    with pytest.raises(RequiredField, match="must name its parent"):
        credit_kind("credit", has_parent=False, line_items_sent=False)


def test_full_credit_copies_stored_lines_except_products_marked_since():
    stored = [{"id": "A", "product": "prd_1"}, {"id": "B", "product": "prd_2"}, {"id": "C", "product": None}]
    marked_now = {"prd_2"}
    copied = full_credit_lines(stored, lambda ln: ln["product"] in marked_now)
    assert [ln["id"] for ln in copied] == ["A", "C"]
    assert full_credit_lines(stored, lambda ln: False) == stored


def test_full_credit_of_a_tax_only_parent_needs_tax_amount():
    with pytest.raises(ValidationFailed, match="send the credit's tax_amount") as ei:
        check_full_credit_not_empty([], None)
    assert ei.value.first.pointer == "/line_items"
    check_full_credit_not_empty([], 150)
    check_full_credit_not_empty(["A"], None)


def test_parent_must_exist_unless_collected_only():
    assert check_parent_found(True, only_collected_lines=False) is True
    with pytest.raises(ValidationFailed) as ei:
        check_parent_found(False, only_collected_lines=False)
    assert ei.value.first.pointer == "/parent_transaction_id" and ei.value.first.status == 422
    with pytest.raises(ValidationFailed) as ei:
        check_parent_found(False, only_collected_lines=False, pointer="/parent_reference_id")
    assert ei.value.first.pointer == "/parent_reference_id"
    # a credit of only collected-tax lines may name a parent matching nothing (held off returns)
    assert check_parent_found(False, only_collected_lines=True) is False


# Parent charged 10000 and 825 tax; earlier credits 4000 and 330 -> 6000 and 495 remain.
def test_credit_up_to_what_remains_is_fine():
    check_credit_limits(10000, 825, 4000, 330, 6000, 495)
    check_credit_limits(10000, 825, 0, 0, 10000, 825)


def test_over_credit_amount_refused_with_remaining_amounts():
    with pytest.raises(ValidationFailed) as ei:
        check_credit_limits(10000, 825, 4000, 330, 6001, 495)
    item = ei.value.first
    assert item.status == 422 and item.pointer == "/line_items"
    assert "remaining amount 6000, remaining tax 495" in item.detail
    assert "amount 6001 exceeds the 6000" in item.detail
    assert item.meta == {"remaining_amount": 6000, "remaining_tax": 495}


def test_over_credit_tax_refused():
    with pytest.raises(ValidationFailed) as ei:
        check_credit_limits(10000, 825, 4000, 330, 5000, 496)
    assert ei.value.first.pointer == "/tax_amount"
    assert "tax 496 exceeds the 495" in ei.value.first.detail


def test_over_credit_both():
    with pytest.raises(ValidationFailed) as ei:
        check_credit_limits(10000, 825, 0, 0, 10001, 826)
    assert "amount 10001 exceeds the 10000" in ei.value.first.detail and "tax 826 exceeds the 825" in ei.value.first.detail


def test_fully_credited_parent_leaves_nothing():
    with pytest.raises(ValidationFailed) as ei:
        check_credit_limits(10000, 825, 10000, 825, 1, 0)
    assert ei.value.first.meta == {"remaining_amount": 0, "remaining_tax": 0}
    check_credit_limits(10000, 825, 10000, 825, 0, 0)


def test_credit_goods_amounts_are_positive():
    from txn_helpers import indexed, line

    from levy.domain.transactions import plan_lines

    lines = indexed(line("A", 1000), line("B", -1000))
    with pytest.raises(ValidationFailed) as ei:
        plan_lines(lines, transaction_type="credit", has_parent=True)
    item = ei.value.first
    assert item.pointer == "/line_items/1/unit_price" and "line 'B' (line_items[1])" in item.detail
    assert "-1000" in item.detail
    assert len(plan_lines(indexed(line("A", 1000)), transaction_type="credit").split.goods) == 1
