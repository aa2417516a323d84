"""Property: for random valid requests, totals equal the sum of lines and rows; nothing is negative."""

from __future__ import annotations

from datetime import date
from decimal import Decimal

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from tax_helpers import REG_ALL

from levy.domain.tax.engine import calculate
from levy.domain.tax.model import Address, CalculationInput, Certificate, CustomerExemption, Discount, ExemptionSettings, LineInput
from levy.ratefiles.builtin import builtin_rate_table, load_taxability

RATES = builtin_rate_table()
RULES = load_taxability()
STATES = ["TX", "CA", "NY", "MA", "RI", "IL", "UT", "VA", "AK", "WA", "OH", "TN", "NV", "PA", "CT", "LA"]
CATS = ["GENERAL.TANGIBLE.GOODS", "CLOTHING.APPAREL.SHIRTS", "FOOD.GROCERY.PRODUCE", "SOFTWARE.SAAS.CRM",
        "MEDICAL.OTC.PAIN", "SHIPPING.DELIVERY.STANDARD", "DIGITAL.AUDIO.MUSIC", "SERVICES.PROFESSIONAL.LEGAL"]
ATTRS = ["_B2B", "_RESALE", "_DOWNLOADED", "_MANDATORY", "_MANUFACTURING"]


@st.composite
def lines(draw, idx):
    if draw(st.integers(0, 9)) == 0:
        return LineInput(f"st{idx}", Decimal(1), draw(st.integers(0, 10**6)), is_sales_tax=True)
    qty = Decimal(draw(st.integers(0, 5000))) / Decimal(draw(st.sampled_from([1, 10, 100])))
    cert = draw(st.booleans())
    state = draw(st.sampled_from(STATES))
    return LineInput(
        id=str(idx),
        quantity=qty,
        unit_price=draw(st.integers(0, 10**7)),
        category=draw(st.sampled_from(CATS)),
        attributes=tuple(draw(st.lists(st.sampled_from(ATTRS), max_size=2, unique=True))),
        address=Address(state=state),
        discounts=tuple(Discount(f"d{i}", draw(st.integers(0, 10**6))) for i in range(draw(st.integers(0, 2)))),
        vendor_discount_amount=draw(st.integers(0, 1000)),
        exemption=CustomerExemption(certificates=(Certificate(f"US-ST-{state}", "resale"),)) if cert else None,
    )


@st.composite
def requests(draw):
    n = draw(st.integers(1, 8))
    ls = tuple(draw(lines(i)) for i in range(n))
    return CalculationInput(
        lines=ls,
        transaction_date=draw(st.dates(date(2024, 1, 1), date(2027, 12, 31))),
        discount_amount=draw(st.integers(0, 10**6)),
        include_unregistered=draw(st.booleans()),
    )


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(requests(), st.sampled_from([ExemptionSettings(False), ExemptionSettings(True, "certificate_only"),
                                    ExemptionSettings(True, "certificate_and_product_tax_code")]),
       st.booleans())
def test_totals_add_up_and_nothing_negative(inp, exemption_settings, registered):
    res = calculate(inp, RATES, RULES, REG_ALL if registered else (), exemption_settings)
    assert res.tax_amount == sum(ln.tax_amount for ln in res.lines)
    assert res.tax_amount >= 0
    for ln in res.lines:
        assert ln.tax_amount == sum(r.tax_amount for r in ln.taxes)
        assert ln.tax_amount_before_discounts == sum(r.tax_amount_before_discounts for r in ln.taxes)
        assert ln.tax_amount >= 0 and ln.tax_amount_before_discounts >= 0 and ln.taxable_amount >= 0
        assert sum(d.tax_amount_reduction for d in ln.discounts) == max(0, ln.tax_amount_before_discounts - ln.tax_amount)
        for r in ln.taxes:
            assert r.tax_amount >= 0 and r.taxable_base >= 0 and r.tax_rate >= 0
            assert r.taxable_base <= ln.taxable_amount
        if ln.is_sales_tax:
            assert ln.tax_amount == 0 and ln.taxes == ()
