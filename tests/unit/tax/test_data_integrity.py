"""The built-in data: every state present, every rule sourced and dated, every category covered."""

from __future__ import annotations

import json
from datetime import date
from importlib import resources

import pytest

from levy.domain.tax.codes import parse_tax_codes
from levy.domain.tax.taxability import THRESHOLD_MODES
from levy.ratefiles.builtin import load_states, load_taxability

STATES = {s.code: s for s in load_states()}
RULES = load_taxability()
NO_TAX = {"AK", "DE", "MT", "NH", "OR"}
REQUIRED = [
    "GENERAL.TANGIBLE.GOODS", "FOOD.GROCERY.PRODUCE", "FOOD.PREPARED.MEALS", "CLOTHING.APPAREL.SHIRTS",
    "MEDICAL.PRESCRIPTION.DRUGS", "MEDICAL.OTC.PAIN", "SOFTWARE.SAAS.CRM", "SOFTWARE.DOWNLOADED.APPS",
    "SOFTWARE.PHYSICAL.APPS", "DIGITAL.AUDIO.MUSIC", "DIGITAL.VIDEO.MOVIES", "DIGITAL.EBOOKS.BOOKS",
    "SHIPPING.DELIVERY.STANDARD", "SERVICES.PROFESSIONAL.LEGAL",
]
ON = date(2026, 3, 15)


def test_every_state_dc_and_puerto_rico():
    assert len(STATES) == 52 and "DC" in STATES and "PR" in STATES
    for code, s in STATES.items():
        assert s.rates and all(r.source for r in s.rates), code
        rate = s.rate_on(ON)
        assert rate is not None, code
        assert (rate.rate == 0) == (code in NO_TAX), code
        if code in NO_TAX:
            assert "no state sales tax" in (s.no_tax_rule or "")


def test_statewide_local_portions():
    expected = {"CA": "0.0125", "NV": "0.0225", "UT": "0.0125", "VA": "0.01"}
    for code, s in STATES.items():
        swl = s.statewide_local_on(ON)
        assert (str(swl.rate) if swl else None) == expected.get(code), code


def test_state_rates_match_the_facts_table_where_checked():
    # Hand-checked figures (percent): PR 10.5 (IVU, Act 72-2015; + 1% municipal from imported tables), CA 6 (+1.25 local), TX 6.25, NY 4, NV 4.6 (+2.25), UT 4.85, LA 5 from 2025.
    for code, pct in {"PR": "10.5", "CA": "6", "TX": "6.25", "NY": "4", "NV": "4.6", "UT": "4.85", "LA": "5", "TN": "7", "IN": "7"}.items():
        assert STATES[code].rate_on(ON).rate * 100 == __import__("decimal").Decimal(pct), code


@pytest.mark.parametrize("state", sorted(set(STATES) - NO_TAX))
def test_every_required_category_has_a_specific_rule(state):
    for cat in REQUIRED:
        top2 = ".".join(cat.split(".")[:2])
        top1 = cat.split(".")[0]
        rule = RULES.lookup(state, cat, (), ON)
        assert rule.code in (top2, top1), (state, cat, rule.code)


def test_every_rule_has_source_dates_and_valid_shape():
    folder = resources.files("levy.data.tax").joinpath("taxability")
    files = [e for e in folder.iterdir() if e.name.endswith(".json")]
    assert len(files) == 52
    for entry in files:
        raw = json.loads(entry.read_text(encoding="utf-8"))
        assert entry.name == f"{raw['state']}.json"
        for r in raw["rules"]:
            assert r["source"].strip() and r["name"].strip(), r
            start = date.fromisoformat(r["effective_from"])
            if r.get("effective_to"):
                assert date.fromisoformat(r["effective_to"]) >= start
            if r["treatment"] == "reduced":
                assert r.get("rate") is not None
            if r["treatment"] == "percentage":
                assert 0 < float(r["percent"]) < 1
            if r["treatment"] == "threshold":
                assert r["threshold"] > 0 and r["threshold_mode"] in THRESHOLD_MODES
            assert all(a.startswith("_") for a in r["attributes"])


def test_no_overlapping_rule_periods():
    for state in STATES:
        seen = {}
        for code in {r.code for r in _all_rules(state)}:
            for rule in RULES.rules(state, code):
                key = (code, rule.attributes)
                for other in seen.get(key, []):
                    assert rule.effective_from > (other.effective_to or date.max) or other.effective_from > (
                        rule.effective_to or date.max
                    ), (state, code)
                seen.setdefault(key, []).append(rule)


def _all_rules(state):
    folder = resources.files("levy.data.tax").joinpath("taxability")
    raw = json.loads(folder.joinpath(f"{state}.json").read_text(encoding="utf-8"))
    return [type("R", (), {"code": r["code"]}) for r in raw["rules"]]


@pytest.mark.parametrize(
    "codes,category,attrs,is_st,violation",
    [
        (["SOFTWARE.SAAS.CRM._B2B"], "SOFTWARE.SAAS.CRM", ("_B2B",), False, False),
        (["CLOTHING.APPAREL.SHIRTS", "_RESALE"], "CLOTHING.APPAREL.SHIRTS", ("_RESALE",), False, False),
        (["SALES_TAX"], None, (), True, False),
        (["SALES_TAX._B2B"], None, (), True, True),
        (["SALES_TAX", "GENERAL.TANGIBLE.GOODS"], None, (), True, True),
        (["sales_tax"], "sales_tax", (), False, False),  # case-sensitive: not recognised
    ],
)
def test_parse_tax_codes(codes, category, attrs, is_st, violation):
    tc = parse_tax_codes(codes)
    assert (tc.category, tc.attributes, tc.is_sales_tax, tc.sales_tax_violation) == (category, attrs, is_st, violation)
