"""The way the wiring is meant to use this domain with the tax engine (goods lines only)."""

from __future__ import annotations

from datetime import date
from decimal import Decimal

import pytest
from txn_helpers import plan_lines

from levy.domain.tax.engine import calculate
from levy.domain.tax.model import Address, CalculationInput, LineInput, Registration
from levy.domain.transactions.rules import tax_on_create
from levy.domain.transactions.collected import TransactionLine

TX = Address(state="TX", postal_code=None)
REG = (Registration("US-ST-TX", date(2000, 1, 1)),)


@pytest.fixture(scope="module")
def engine_data():
    from levy.ratefiles.builtin import builtin_rate_table, load_taxability

    return builtin_rate_table(), load_taxability()


def _goods(i: int, id: str, price: int) -> TransactionLine:
    li = LineInput(id, Decimal(1), price, category="GENERAL.TANGIBLE.GOODS", address=TX, pointer=f"/line_items/{i}")
    return TransactionLine(li, i, ("GENERAL.TANGIBLE.GOODS",))


def _collected(i: int, id: str, price: int) -> TransactionLine:
    li = LineInput(id, Decimal(1), price, is_sales_tax=True, address=TX, pointer=f"/line_items/{i}")
    return TransactionLine(li, i, ("SALES_TAX",))


def test_transaction_discount_applies_to_goods_lines_only(engine_data):
    rates, rules = engine_data
    lines = [_goods(0, "a", 3000), _collected(1, "st", 500), _goods(2, "b", 1000)]
    plan = plan_lines(lines, transaction_type="sale")
    res = calculate(
        CalculationInput(plan.split.engine_lines, transaction_date=date(2026, 3, 15), discount_amount=700),
        rates, rules, REG,
    )
    # Only a and b share the 700: 525 and 175; nets 2475 and 825 at Texas 6.25%:
    # 154.6875 -> 155 and 51.5625 -> 52: calculated 207. The collected 500 is not taxed.
    assert [ln.id for ln in res.lines] == ["a", "b"]
    assert [ln.taxable_amount for ln in res.lines] == [2475, 825]
    assert res.tax_amount == 207
    t = tax_on_create(calculated=res.tax_amount, tax_amount=None, split=plan.split)
    assert (t.tax_amount, t.filing_tax_amount_source, t.calculated) == (500, "provided", 207)


def test_without_collected_line_the_engine_tax_is_filed(engine_data):
    rates, rules = engine_data
    plan = plan_lines([_goods(0, "a", 3000)], transaction_type="sale")
    res = calculate(CalculationInput(plan.split.engine_lines, transaction_date=date(2026, 3, 15)), rates, rules, REG)
    # 3000 x 6.25% = 187.5 -> 188
    t = tax_on_create(calculated=res.tax_amount, tax_amount=None, split=plan.split)
    assert (t.tax_amount, t.filing_tax_amount_source) == (188, "calculated")
