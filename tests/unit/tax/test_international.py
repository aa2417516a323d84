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
from levy.domain.tax.international import reverse_charge, rule_name
from levy.domain.tax.model import TaxId, VatCheck
from levy.ratefiles.builtin import load_international

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


def test_the_reverse_charge_rule_names_the_ids_country_and_number() -> None:
    de, gb, ca, au = (INTL.countries[c] for c in ("DE", "GB", "CA", "AU"))
    # A French id for a German address: the row names France's id, compacted (spaces dropped).
    fr = reverse_charge(de, (TaxId("eu_vat", "FR 40 303265045"),))
    assert fr.rule_name.startswith("Reverse charge: customer's FR VAT id FR40303265045, VAT Directive 2006/112/EC "
                                   "Art. 196"), fr.rule_name
    el = reverse_charge(de, (TaxId("eu_vat", "EL094259216"),))
    assert "customer's GR VAT id EL094259216," in el.rule_name
    assert "customer's GB VAT number GB980780684, Value Added Tax Act 1994 s. 8" in \
        reverse_charge(gb, (TaxId("gb_vat", "980780684"),)).rule_name
    assert reverse_charge(ca, (TaxId("ca_bn", "123456782RT0001"),)).rule_name.startswith(
        "Not collected: customer's CA GST/HST number 123456782RT0001, Excise Tax Act Part IX")
    assert "customer's AU ABN 51824753556, GST Act 1999 s. 84-65" in \
        reverse_charge(au, (TaxId("au_abn", "51 824 753 556"),)).rule_name
    # An id valid in two member states' formats is its prefix's: DE518538442 is also a valid French
    # number (key "DE"); python-stdnum lists both countries in the order of a set, which changes with
    # the process's hash seed. Both orders:
    from stdnum.eu import vat
    assert sorted(vat.guess_country("DE518538442")) == ["de", "fr"]
    for reverse in (False, True):
        with pytest.MonkeyPatch.context() as mp:
            mp.setattr(vat, "MEMBER_STATES", sorted(vat.MEMBER_STATES, reverse=reverse))
            both = reverse_charge(de, (TaxId("eu_vat", "DE518538442", "DE"),))
        assert "customer's DE VAT id DE518538442," in both.rule_name and "issued in DE" in both.detail, both
    # Every rule name fits the stored column (transaction_line_taxes.rule_name, 200 characters) with the
    # longest EU VAT number (NL, 14 characters) and a GB branch number (14).
    assert len(rule_name("eu_vat", "NL", "NL123456789B01")) <= 200
    assert all(len(rule_name(t, "XX", "X" * 15)) <= 200 for t in ("gb_vat", "ca_bn", "ca_gst_hst", "au_abn"))


def test_the_vies_answer_decides_with_the_format() -> None:
    de = INTL.countries["DE"]
    on = date(2026, 6, 1)
    valid = VatCheck("DE136695976", "valid", on, "WAPIAAAAW1")
    invalid = VatCheck("DE136695976", "invalid", on, "WAPIAAAAW2")
    down = VatCheck("DE136695976", "unavailable", on, detail="no answer within 3 s")
    yes = reverse_charge(de, (TaxId("eu_vat", "DE136695976", online=valid),))
    assert yes.applies and yes.detail.endswith("; VIES: valid on 2026-06-01, request identifier WAPIAAAAW1")
    no = reverse_charge(de, (TaxId("eu_vat", "DE136695976", online=invalid),))
    assert not no.applies and "not valid according to VIES (checked 2026-06-01, request identifier WAPIAAAAW2)" \
        in no.detail
    unknown = reverse_charge(de, (TaxId("eu_vat", "DE136695976", online=down),))
    assert unknown.applies and "VIES online check unavailable (no answer within 3 s): the format check decides" \
        in unknown.detail
    # A malformed id stays refused whatever VIES would say (it is not asked).
    assert not reverse_charge(de, (TaxId("eu_vat", "DE123456789", online=valid),)).applies


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
