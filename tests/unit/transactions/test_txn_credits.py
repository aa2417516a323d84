"""Credits (spec 4.6 workflows 3-5): workflow choice, full-credit copies, parents, limits."""

from __future__ import annotations

import pytest

from levy.domain.errors import RequiredField, ValidationFailed
from levy.domain.transactions.rules import (
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


def test_credit_goods_amounts_are_positive():
    from txn_helpers import indexed, line, plan_lines

    lines = indexed(line("A", 1000), line("B", -1000))
    with pytest.raises(ValidationFailed) as ei:
        plan_lines(lines, transaction_type="credit", has_parent=True)
    item = ei.value.first
    assert item.pointer == "/line_items/1/unit_price" and "line 'B' (line_items[1])" in item.detail
    assert "-1000" in item.detail
    assert len(plan_lines(indexed(line("A", 1000)), transaction_type="credit").split.goods) == 1
