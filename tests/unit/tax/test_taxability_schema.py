"""The taxability rule schema (issue 18): loader checks and the engine's new rule keys.

Figures worked out by hand in the comments."""

from __future__ import annotations

from datetime import date
from decimal import Decimal

import pytest
from tax_helpers import REG_ALL, mkline

from levy.domain.tax.engine import _taxed, calculate
from levy.domain.tax.model import CalculationInput
from levy.domain.tax.rate_table import JurisdictionRate
from levy.domain.tax.taxability import Taxability
from levy.ratefiles.builtin import _rule

BASE = {"code": "X", "attributes": [], "treatment": "taxable", "name": "n", "effective_from": "2020-01-01",
        "source": "Statute 1"}
STATE = JurisdictionRate("US-ST-ZZ", "Zed", "state", Decimal("0.05"), "ZZ", True)
COUNTY = JurisdictionRate("US-CO-ZZ-north", "North County", "county", Decimal("0.02"), "ZZ")
CITY = JurisdictionRate("US-CI-ZZ-capital", "Capital", "city", Decimal("0.01"), "ZZ")
OTHER_CITY = JurisdictionRate("US-CI-ZZ-port", "Port", "city", Decimal("0.03"), "ZZ")


def rule(**kw):
    return _rule("ZZ", {**BASE, **kw})


@pytest.mark.parametrize("bad, why", [
    ({"sorce": "x"}, "unknown keys"),
    ({"source": ""}, "source or"),
    ({"treatment": "reduced"}, "needs a rate"),
    ({"treatment": "percentage"}, "needs a percent"),
    ({"treatment": "threshold", "threshold": 100}, "threshold_mode"),
    ({"treatment": "threshold", "threshold": 100, "threshold_mode": "rate_above"}, "needs a rate"),
    ({"local": "sometimes"}, "local mode"),
    ({"local_exceptions": [{"types": ["borough"], "local": "exempt"}]}, "bad local exception"),
])
def test_loader_refuses_bad_rules(bad, why):
    with pytest.raises(ValueError, match=why):
        rule(**bad)


def test_unsourced_rule_loads_without_source():
    r = rule(source="", unsourced=True, note="not found in the department's pages")
    assert r.unsourced and r.source == "" and r.note


def test_existing_data_loads_and_every_rule_is_sourced_or_marked():
    from levy.ratefiles.builtin import load_taxability

    rules = load_taxability()
    for st in rules.states:
        assert all(r.source or r.unsourced for r in rules.all_rules(st))


def test_exempt_at_or_below_includes_the_threshold():
    r = rule(treatment="threshold", threshold=5000, threshold_mode="exempt_at_or_below")
    assert _taxed(r, STATE, 5000, Decimal(1))[2] == 0  # exactly $50.00: exempt
    assert _taxed(r, STATE, 5001, Decimal(1))[2] == 250  # $50.01 x 5% = 2.5005 -> 2.50
    assert _taxed(r, STATE, 10000, Decimal(2))[2] == 0  # 2 items at $50.00 each
    below = rule(treatment="threshold", threshold=5000, threshold_mode="exempt_below")
    assert _taxed(below, STATE, 5000, Decimal(1))[2] == 250  # "below" excludes $50.00 itself


def test_rate_above_changes_only_the_state_rate_above_the_threshold():
    r = rule(treatment="threshold", threshold=100000, threshold_mode="rate_above", rate="0.0775")
    assert _taxed(r, STATE, 100000, Decimal(1))[1:3] == (Decimal("0.05"), 5000)  # $1,000.00 not above: 5%
    assert _taxed(r, STATE, 100001, Decimal(1))[1:3] == (Decimal("0.0775"), 7750)  # 1000.01 x 7.75% = 77.50
    assert _taxed(r, COUNTY, 200000, Decimal(1))[1:3] == (Decimal("0.02"), 4000)  # locals keep their rate


def test_local_exceptions_first_match_wins():
    r = rule(treatment="exempt", local="taxable", local_exceptions=[
        {"types": ["city"], "codes": ["US-CI-ZZ-capital"], "local": "exempt"},
        {"types": ["county"], "local": "taxable", "rate": "0.005"},
    ])
    assert _taxed(r, STATE, 10000, Decimal(1))[2] == 0  # state exempt
    assert _taxed(r, COUNTY, 10000, Decimal(1))[1:3] == (Decimal("0.005"), 50)  # county food rate 0.5%
    assert _taxed(r, CITY, 10000, Decimal(1))[2:] == (0, "non_taxable_product")  # this city exempts
    assert _taxed(r, OTHER_CITY, 10000, Decimal(1))[1:3] == (Decimal("0.03"), 300)  # rule's local: taxable


def test_rule_detail_is_on_every_row():
    data = dict(BASE, code="GENERAL", detail="Cautious default: taxed; send _RESALE to exempt", depends_on=["_RESALE"])
    idx = Taxability([_rule("CA", {**data, "effective_from": "2000-01-01"})])
    inp = CalculationInput(currency="USD", lines=(mkline(state="CA", cat="GENERAL.TANGIBLE.GOODS"),),
                           transaction_date=date(2026, 3, 15))
    res = calculate(inp, _builtin_rates(), idx, REG_ALL)
    rows = res.lines[0].taxes
    assert rows and all("Cautious default" in row.detail for row in rows)
    # Rows the rule does not decide (a resale exemption) do not carry its detail.
    resale = mkline(state="CA", cat="GENERAL.TANGIBLE.GOODS", attrs=("_RESALE",))
    res = calculate(CalculationInput(currency="USD", lines=(resale,), transaction_date=date(2026, 3, 15)), _builtin_rates(), idx, REG_ALL)
    assert all("Cautious default" not in row.detail for row in res.lines[0].taxes)


def _builtin_rates():
    from levy.ratefiles.builtin import builtin_rate_table

    return builtin_rate_table()
