"""Tax provided or calculated (spec 2.8, 4.6 rule 7, 4.7 'Updating'). Figures by hand."""

from __future__ import annotations

import pytest
from txn_helpers import indexed, line, split_lines, st

from levy.domain.errors import ValidationFailed
from levy.domain.transactions.rules import (
    UNSET,
    TaxState,
    tax_on_amount_update,
    tax_on_create,
    tax_on_lines_update,
)

GOODS = indexed(line("A", 10000))
WITH_ST = indexed(line("A", 10000), st("T1", 150, index=1), st("T2", 37, qty="2", index=2))  # 150 + 74 = 224
ZERO_ST = indexed(line("A", 10000), st("T", 0, index=1))


def _s(lines):
    return split_lines(lines)


def test_create_calculated_when_nothing_provided():
    t = tax_on_create(calculated=825, tax_amount=None, split=_s(GOODS))
    assert (t.tax_amount, t.filing_tax_amount, t.filing_tax_amount_source) == (825, 825, "calculated")


def test_create_tax_amount_sent_is_provided_and_calculated_kept():
    t = tax_on_create(calculated=825, tax_amount=700, split=_s(GOODS))
    assert (t.tax_amount, t.filing_tax_amount, t.filing_tax_amount_source) == (700, 700, "provided")
    assert t.calculated == 825


def test_create_zero_collected_line_makes_tax_provided():
    t = tax_on_create(calculated=825, tax_amount=None, split=_s(ZERO_ST))
    assert (t.tax_amount, t.filing_tax_amount_source) == (0, "provided")


def test_create_tax_amount_and_collected_lines_add_up():
    t = tax_on_create(calculated=825, tax_amount=300, split=_s(WITH_ST))
    assert t.tax_amount == 524 and t.filing_tax_amount == 524  # 300 + 224


def test_create_negative_tax_amount_refused():
    with pytest.raises(ValidationFailed) as ei:
        tax_on_create(calculated=0, tax_amount=-1, split=_s(GOODS))
    assert ei.value.first.pointer == "/tax_amount"


def test_lines_update_previous_tax_amount_kept_when_omitted():
    prev = TaxState(calculated=825, provided=300, collected=224)
    new = indexed(line("A", 10000), st("T1", 100, index=1))
    t = tax_on_lines_update(prev, calculated=825, split=_s(new))
    assert t.tax_amount == 400 and t.filing_tax_amount_source == "provided"  # 300 + 100 (T2 left out: removed)


def test_lines_update_tax_amount_sent_replaces_previous():
    prev = TaxState(calculated=825, provided=300, collected=224)
    t = tax_on_lines_update(prev, calculated=900, split=_s(WITH_ST), tax_amount=50)
    assert t.tax_amount == 274  # 50 + 224


def test_lines_update_no_collected_line_left_keeps_previous_tax_amount():
    prev = TaxState(calculated=825, provided=300, collected=224)
    t = tax_on_lines_update(prev, calculated=825, split=_s(GOODS))
    assert t.tax_amount == 300 and t.collected is None


def test_lines_update_nothing_left_becomes_calculated():
    prev = TaxState(calculated=825, provided=None, collected=224)
    t = tax_on_lines_update(prev, calculated=990, split=_s(GOODS))
    assert (t.tax_amount, t.filing_tax_amount_source) == (990, "calculated")


def test_lines_update_explicit_null_clears_tax_amount():
    prev = TaxState(calculated=825, provided=300, collected=None)
    t = tax_on_lines_update(prev, calculated=825, split=_s(GOODS), tax_amount=None)
    assert (t.tax_amount, t.filing_tax_amount_source) == (825, "calculated")
    assert tax_on_lines_update(prev, calculated=825, split=_s(GOODS), tax_amount=UNSET).tax_amount == 300


def test_amount_update_replaces_tax_amount_collected_stay_counted():
    prev = TaxState(calculated=825, provided=300, collected=224)
    t = tax_on_amount_update(prev, 100)
    assert t.tax_amount == 324 and t.collected == 224 and t.calculated == 825  # 100 + 224


def test_amount_update_on_lines_only_tax():
    prev = TaxState(calculated=825, provided=None, collected=224)
    assert tax_on_amount_update(prev, 0).tax_amount == 224
    assert tax_on_amount_update(TaxState(calculated=825), 0).filing_tax_amount_source == "provided"


def test_sending_back_response_tax_amount_double_counts_collected():
    prev = TaxState(calculated=825, provided=300, collected=224)
    assert prev.tax_amount == 524
    assert tax_on_amount_update(prev, prev.tax_amount).tax_amount == 748  # 524 + 224, as 4.7 'Updating' rule 3 says


def test_amount_update_null_clears_back_to_calculated_when_no_lines():
    prev = TaxState(calculated=825, provided=300, collected=None)
    assert tax_on_amount_update(prev, None).filing_tax_amount_source == "calculated"
    with pytest.raises(ValidationFailed):
        tax_on_amount_update(prev, -5)
