"""VAT and GST outside the US (issue 34): the data, the jurisdiction codes, tax ids and places.

Engine figures through a real server are in tests/api/test_international_api.py; here the pure parts.
"""

from __future__ import annotations

import itertools
from datetime import date
from decimal import Decimal

import pytest

from levy.domain.errors import ValidationFailed
from levy.domain.jurisdictions import INTERNATIONAL, validate_jurisdiction
from levy.domain.tax.international import reverse_charge
from levy.domain.tax.model import TaxId
from levy.rates.builtin import load_international

INTL = load_international()


def test_the_registration_codes_are_the_data_codes() -> None:
    assert INTL.registration_codes() == INTERNATIONAL
    for code in INTERNATIONAL:
        assert validate_jurisdiction(code, "/jurisdiction") == code


@pytest.mark.parametrize("code", ["CA-PR-ON", "XX", "de", "EU-MOSS", "NY"])
def test_other_codes_are_refused(code: str) -> None:
    with pytest.raises(ValidationFailed):
        validate_jurisdiction(code, "/jurisdiction")


def test_every_rate_and_category_rate_is_dated_and_sourced() -> None:
    levels = [lv for c in INTL.countries.values() for lv in c.levels]
    levels += [lv for c in INTL.countries.values() for s in c.subdivisions.values() for lv in s.levels]
    assert len(INTL.countries) == 27 + 3
    for lv in levels:
        assert lv.rates and all(r.source and r.effective_from for r in lv.rates), lv.code
        assert all(c.source and c.codes for c in lv.categories), lv.code
        # Periods do not overlap: at most one standard rate on any day.
        ordered = sorted(lv.rates, key=lambda r: r.effective_from)
        for a, b in itertools.pairwise(ordered):
            assert a.effective_to is not None and a.effective_to < b.effective_from, lv.code


@pytest.mark.parametrize("country, on, rate", [
    ("DE", date(2026, 6, 1), "0.19"), ("DE", date(2020, 10, 1), "0.16"),  # the temporary 2020 rate
    ("FI", date(2024, 8, 31), "0.24"), ("FI", date(2024, 9, 1), "0.255"),
    ("EE", date(2025, 7, 1), "0.24"), ("RO", date(2025, 8, 1), "0.21"), ("SK", date(2025, 1, 1), "0.23"),
    ("HU", date(2026, 6, 1), "0.27"), ("LU", date(2026, 6, 1), "0.17"),
])
def test_standard_rates_on_a_date(country: str, on: date, rate: str) -> None:
    dated = INTL.countries[country].levels[0].rate_on(on)
    assert dated is not None and dated.rate == Decimal(rate)


def test_nova_scotia_hst_is_14_percent_from_april_2025() -> None:
    ns = INTL.countries["CA"].subdivisions["NS"].levels[0]
    assert ns.rate_on(date(2025, 3, 31)).rate == Decimal("0.15")  # type: ignore[union-attr]
    assert ns.rate_on(date(2025, 4, 1)).rate == Decimal("0.14")  # type: ignore[union-attr]


def test_the_longest_code_prefix_wins() -> None:
    fr = INTL.countries["FR"].levels[0]
    on = date(2026, 6, 1)
    assert fr.category_on("DIGITAL.EBOOKS.NEWSPAPERS", on).rate == Decimal("0.021")  # type: ignore[union-attr]
    assert fr.category_on("DIGITAL.EBOOKS.GENERAL", on).rate == Decimal("0.055")  # type: ignore[union-attr]
    assert fr.category_on("SOFTWARE.SAAS.GENERAL", on) is None
    assert fr.category_on("NONTAXABLE.GENERAL.EXEMPT", on).rate is None  # type: ignore[union-attr]


def test_reverse_charge_by_tax_id() -> None:
    de, gb, ca, au = (INTL.countries[c] for c in ("DE", "GB", "CA", "AU"))
    assert reverse_charge(de, (TaxId("eu_vat", "DE136695976"),)).applies
    # A French VAT number for a sale to Germany: still a taxable person identified in the Union.
    assert reverse_charge(de, (TaxId("eu_vat", "FR40303265045"),)).applies
    bad = reverse_charge(de, (TaxId("eu_vat", "DE123456789"),))
    assert not bad.applies and "not valid" in bad.detail
    other = reverse_charge(de, (TaxId("gb_vat", "GB980780684"),))
    assert not other.applies and "not for Germany" in other.detail
    assert reverse_charge(gb, (TaxId("gb_vat", "GB980780684"),)).applies
    assert reverse_charge(ca, (TaxId("ca_gst_hst", "123456782RT0001"),)).applies
    assert not reverse_charge(ca, (TaxId("ca_gst_hst", "123456782"),)).applies  # no RT program account
    assert reverse_charge(au, (TaxId("au_abn", "51 824 753 556"),)).applies
    assert not reverse_charge(au, (TaxId("au_abn", "51 824 753 557"),)).applies


def test_places_and_their_errors() -> None:
    place = INTL.place("CA", "CA-QC", "H2X 1Y4", "/a")
    assert [lv.code for lv in place.levels] == ["CA", "CA-PR-QC"]
    assert [lv.tax_type for lv in INTL.place("CA", "ON", "M5H 2N2", "/a").levels] == ["hst"]
    assert [lv.code for lv in INTL.place("IE", None, "d02 x285", "/a").levels] == ["IE"]  # case-insensitive
    # Outside Canada the state is not looked at (a UK county, a German Land by name).
    assert [lv.code for lv in INTL.place("GB", "Greater London", "SW1A 1AA", "/a").levels] == ["GB"]
    with pytest.raises(ValidationFailed) as e:
        INTL.place("CA", None, None, "/a")
    assert sorted(i.pointer for i in e.value.items) == ["/a/postal_code", "/a/state"]
