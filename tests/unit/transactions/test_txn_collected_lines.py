"""Collected-tax (SALES_TAX) lines on transactions (spec 4.7): split, amounts, every rule accepted and refused."""

from __future__ import annotations

import pytest
from txn_helpers import indexed, line, plan_lines, split_lines, st

from levy.domain.errors import ValidationFailed
from levy.domain.transactions.collected import (
    INVALID_SALES_TAX_LINE,
    RULE_ATTRIBUTE_SUFFIX,
    RULE_DISCOUNT,
    RULE_DUPLICATE_ID,
    RULE_MARKED_NEGATIVE,
    RULE_NEGATIVE,
    RULE_ONLY_CODE,
    check_no_merged_customers,
    effective_codes,
)


def _rules(exc: ValidationFailed) -> list[str]:
    return [i.meta["rule"] for i in exc.items]


def test_split_removes_collected_lines_and_sums_their_amounts():
    lines = indexed(
        line("A", 1000, qty="2"),
        st("T1", 150),
        line("B", 500),
        st("T2", 37, qty="2"),
    )
    s = split_lines(lines)
    assert [t.id for t in s.goods] == ["A", "B"]
    assert [ln.id for ln in s.engine_lines] == ["A", "B"]  # the engine sees goods lines only
    assert [t.id for t in s.collected] == ["T1", "T2"]
    # 150 x 1 + 37 x 2 = 150 + 74
    assert s.collected_amount == 224
    assert s.has_collected and not s.only_collected and s.reduction == 0


def test_collected_amount_rounds_half_up_per_line():
    # 33 x 1.5 = 49.5 -> 50; 11 x 0.5 = 5.5 -> 6: total 56 (rounding the sum 55.0 would give 55)
    s = split_lines(indexed(st("T1", 33, qty="1.5"), st("T2", 11, qty="0.5")))
    assert s.collected_amount == 56


def test_no_collected_line_means_none_and_zero_line_still_counts():
    assert split_lines(indexed(line("A", 100))).collected_amount is None
    s = split_lines(indexed(line("A", 100), st("T", 0)))
    assert s.collected_amount == 0 and s.has_collected


def test_only_code_rule_names_line_and_rule():
    with pytest.raises(ValidationFailed) as ei:
        split_lines(indexed(line("A", 100), st("T", 10, codes=("SALES_TAX", "GENERAL"))))
    item = ei.value.first
    assert item.status == 422 and item.code == "validation_error" and item.type == INVALID_SALES_TAX_LINE
    assert item.pointer == "/line_items/1"
    assert "line 'T' (line_items[1])" in item.detail and "only tax code" in item.detail and "GENERAL" in item.detail
    assert item.meta == {"rule": RULE_ONLY_CODE, "line_id": "T", "index": 1}


def test_attribute_suffix_rule():
    with pytest.raises(ValidationFailed) as ei:
        split_lines(indexed(st("T", 10, codes=("SALES_TAX._B2B",))))
    assert _rules(ei.value) == [RULE_ATTRIBUTE_SUFFIX]
    assert "'SALES_TAX._B2B'" in ei.value.first.detail and "line 'T'" in ei.value.first.detail


def test_lowercase_sales_tax_is_not_a_collected_line():
    s = split_lines(indexed(line("x", 100, codes=("sales_tax",))))
    assert s.collected_amount is None and [t.id for t in s.goods] == ["x"]


@pytest.mark.parametrize(
    "kw", [{"discounts": (10,)}, {"discount_amount": 5}, {"vendor_discount_amount": 5}]
)
def test_collected_line_cannot_carry_a_discount(kw):
    with pytest.raises(ValidationFailed) as ei:
        split_lines(indexed(line("A", 100), st("T", 50, **kw)))
    assert _rules(ei.value) == [RULE_DISCOUNT]
    assert "cannot carry a discount" in ei.value.first.detail and "line 'T' (line_items[1])" in ei.value.first.detail


def test_zero_discounts_are_no_discount():
    s = split_lines(indexed(st("T", 50, discounts=(0,), discount_amount=0, vendor_discount_amount=0)))
    assert s.collected_amount == 50


def test_negative_collected_line_refused():
    with pytest.raises(ValidationFailed) as ei:
        split_lines(indexed(st("T", -100)))
    assert _rules(ei.value) == [RULE_NEGATIVE]
    assert "(-100)" in ei.value.first.detail and "credit" in ei.value.first.detail


def test_collected_line_id_unique_within_the_transaction():
    with pytest.raises(ValidationFailed) as ei:
        split_lines(indexed(line("A", 100), st("A", 10)))
    assert _rules(ei.value) == [RULE_DUPLICATE_ID]
    with pytest.raises(ValidationFailed) as ei:
        split_lines(indexed(st("T", 10), st("T", 20)))
    # both collected lines named, at their own index
    assert _rules(ei.value) == [RULE_DUPLICATE_ID, RULE_DUPLICATE_ID]
    assert [i.pointer for i in ei.value.items] == ["/line_items/0", "/line_items/1"]


def test_duplicate_goods_ids_are_not_this_rules_business():
    s = split_lines(indexed(line("A", 100), line("A", 200)))
    assert len(s.goods) == 2


def test_all_violations_reported_together():
    lines = indexed(
        st("T1", 10, codes=("SALES_TAX", "X")),
        st("T2", -5, discount_amount=1),
        line("G", 100),
    )
    with pytest.raises(ValidationFailed) as ei:
        split_lines(lines)
    assert _rules(ei.value) == [RULE_ONLY_CODE, RULE_DISCOUNT, RULE_NEGATIVE]
    assert [i.pointer for i in ei.value.items] == ["/line_items/0", "/line_items/1", "/line_items/1"]


# -- marked products -------------------------------------------------------------------------


def test_effective_codes_line_attributes_take_precedence():
    assert effective_codes(None, ["SALES_TAX"]) == (("SALES_TAX",), True)
    assert effective_codes([], ["SALES_TAX"]) == (("SALES_TAX",), True)
    assert effective_codes(["GENERAL"], ["SALES_TAX"]) == (("GENERAL",), False)
    # a line sending exactly SALES_TAX itself is a plain collected line, not a marked one
    assert effective_codes(["SALES_TAX"], ["GENERAL"]) == (("SALES_TAX",), False)
    # a product with SALES_TAX and another code is not marked
    assert effective_codes(None, ["SALES_TAX", "GENERAL"]) == (("SALES_TAX", "GENERAL"), False)
    assert effective_codes(None, None) == ((), False)


def test_marked_line_may_carry_discounts_amount_less_own_discounts():
    # 1000 - (150 + 50) = 800; the vendor-funded discount does not change what was collected
    s = split_lines(indexed(line("M", 1000, marked=True, discounts=(150,), discount_amount=50,
                                 vendor_discount_amount=100)))
    assert s.collected_amount == 800 and [t.id for t in s.collected] == ["M"]


def test_marked_line_amount_rounded_once_half_up():
    # 333 x 1.5 = 499.5; less 100 -> 399.5 -> 400
    s = split_lines(indexed(line("M", 333, qty="1.5", marked=True, discounts=(100,))))
    assert s.collected_amount == 400


def test_marked_line_exactly_zero_after_discounts_is_fine():
    assert split_lines(indexed(line("M", 100, marked=True, discounts=(100,)))).collected_amount == 0


@pytest.mark.parametrize("source", ["native", "xero", "netsuite", "paypal"])
def test_negative_marked_line_refused_on_non_netting_sources(source):
    with pytest.raises(ValidationFailed) as ei:
        split_lines(indexed(line("G", 100), line("M", 100, marked=True, discounts=(130,))), source=source)
    assert _rules(ei.value) == [RULE_MARKED_NEGATIVE]
    assert "-30" in ei.value.first.detail and "line 'M' (line_items[1])" in ei.value.first.detail


def test_marked_line_rule1_still_applies_to_its_codes():
    # a product whose codes carried a suffix would not be "marked"; but a line built as marked with a
    # wrong code list must still be named
    tl = line("M", 10, marked=True)
    from dataclasses import replace

    bad = replace(tl, tax_codes=("SALES_TAX._X",))
    with pytest.raises(ValidationFailed) as ei:
        split_lines([bad])
    assert _rules(ei.value) == [RULE_ATTRIBUTE_SUFFIX]


# -- merged customers ----------------------------------------------------------------------------


def test_merged_customer_line_refused_on_a_new_sale():
    lines = indexed(line("A", 100), line("B", 100, merged_into="cust_01SURVIVOR"))
    with pytest.raises(ValidationFailed) as ei:
        check_no_merged_customers(lines, "sale")
    item = ei.value.first
    assert item.pointer == "/line_items/1/customer/preset"
    assert "line 'B' (line_items[1])" in item.detail and "cust_01SURVIVOR" in item.detail
    check_no_merged_customers(lines, "credit")  # credits of earlier sales may still name it


def test_plan_lines_reports_merged_and_collected_errors_together():
    lines = indexed(line("A", 100, merged_into="cust_X"), st("T", 10, discount_amount=1))
    with pytest.raises(ValidationFailed) as ei:
        plan_lines(lines, transaction_type="sale")
    assert len(ei.value.items) == 2
    assert ei.value.items[0].pointer == "/line_items/0/customer/preset"
    assert ei.value.items[1].meta["rule"] == RULE_DISCOUNT
