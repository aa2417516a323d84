"""Partial records (``LocalRecord.scope``): a record stating only some component
types, e.g. the county rate of an SST rate file placed by county, laid over the
full candidate chosen at any level when its source ranks higher. Records are
written here by hand with round rates; every expected figure is plain
arithmetic on them (local rows only: the state rows are not touched)."""

from __future__ import annotations

from datetime import date
from decimal import Decimal

import pytest

from levy.domain.tax.local_rates import Component, LocalRecord
from levy.domain.tax.model import Address
from levy.domain.tax.rate_table import RateTable
from levy.ratefiles.builtin import load_states, zip_directory

JAN, APR = date(2026, 1, 1), date(2026, 4, 1)
COUNTY = Component("county", "Hennepin County", Decimal("0.01"), "US-CO-MN-HENNEPIN_COUNTY")
CITY = Component("city", "Minneapolis", Decimal("0.005"), "US-CI-MN-MINNEAPOLIS")
SPECIAL = Component("special", "Transit District", Decimal("0.0025"), "US-SP-MN-TRANSIT_DISTRICT")
OFFICIAL_COUNTY = Component("county", "Hennepin County", Decimal("0.015"), "US-CO-MN-HENNEPIN_COUNTY", "SST-27-county-053")


def rec(*components: Component, kind: str, start: date = JAN, end: date | None = None, zip5: str = "55401",
        source: str = "zip.csv", line: int = 1, **kw: object) -> LocalRecord:
    return LocalRecord(state="MN", zip5=zip5, components=components, effective_from=start, effective_to=end,
                       source=source, source_kind=kind, line=line, **kw)  # type: ignore[arg-type]


def county_only(rate: str = "0.015", *, kind: str = "official_zip", start: date = APR, end: date | None = None,
                line: int = 7, zip5: str = "55401") -> LocalRecord:
    parts = (Component("county", "Hennepin County", Decimal(rate), "US-CO-MN-HENNEPIN_COUNTY"),) if Decimal(rate) else ()
    return rec(*parts, kind=kind, start=start, end=end, zip5=zip5, source="sst.csv", line=line, scope=("county",))


def local(table: RateTable, on: date, **address: str) -> tuple[Decimal, list[tuple[str, str, str]], str, str]:
    """(local rate, [(type, rate, source)], level, how) of ``address`` on ``on``."""
    res = table.resolve(Address(state="MN", **address), on)
    rows = [r for r in res.rows if not r.statewide]
    return (sum((r.rate for r in rows), Decimal(0)), [(r.type, str(r.rate), r.source) for r in rows], res.level,
            res.how)


def build(*records: LocalRecord) -> RateTable:
    return RateTable.build(load_states(), records, zip_directory())


def test_an_official_county_only_record_replaces_the_estimated_county_from_its_start() -> None:
    table = build(rec(COUNTY, CITY, SPECIAL, kind="estimated", primary=True), county_only())
    # From 2026-04-01: official county 1.5% + estimated city 0.5% + special 0.25% = 2.25%.
    rate, rows, level, how = local(table, date(2026, 4, 15), postal_code="55401")
    assert rate == Decimal("0.0225") and level == "zip5"
    assert rows == [("county", "0.015", "sst.csv"), ("city", "0.005", "zip.csv"), ("special", "0.0025", "zip.csv")]
    assert how.endswith("; county rate from official_zip: sst.csv line 7 over the estimated record's")
    # On 2026-03-31 the official record is not yet in force: estimated 1% + 0.5% + 0.25% = 1.75%.
    rate, rows, _, how = local(table, date(2026, 3, 31), postal_code="55401")
    assert rate == Decimal("0.0175") and rows[0] == ("county", "0.01", "zip.csv") and "sst.csv" not in how


def test_a_zero_county_rate_from_the_official_record_removes_the_estimated_county() -> None:
    table = build(rec(COUNTY, CITY, SPECIAL, kind="estimated", primary=True), county_only("0"))
    # County 0% (no component) + city 0.5% + special 0.25% = 0.75%.
    rate, rows, _, _ = local(table, APR, postal_code="55401")
    assert rate == Decimal("0.0075") and [r[0] for r in rows] == ["city", "special"]


def test_an_official_full_record_is_never_overridden_by_a_lower_or_equal_ranked_partial() -> None:
    full_zip = rec(COUNTY, CITY, kind="official_zip", primary=True, source="boundaries.csv")
    plus4 = rec(COUNTY, SPECIAL, kind="official_address", plus4_low="0001", plus4_high="0099", source="plus4.csv")
    table = build(full_zip, plus4, county_only(kind="official_zip"), county_only(kind="estimated", line=8))
    # ZIP level: official_zip full 1% + 0.5% = 1.5% (the official_zip partial ranks equal, not higher).
    rate, rows, level, how = local(table, APR, postal_code="55401")
    assert (rate, level) == (Decimal("0.015"), "zip5") and rows[0] == ("county", "0.01", "boundaries.csv")
    assert "sst.csv" not in how
    # ZIP+4 level: official_address 1% + 0.25% = 1.25%, both partials rank lower.
    rate, rows, level, how = local(table, APR, postal_code="55401-0050")
    assert (rate, level) == (Decimal("0.0125"), "zip4") and "sst.csv" not in how


def test_the_partial_record_is_laid_over_the_candidate_chosen_by_city_and_the_level_is_kept() -> None:
    other_city = Component("city", "Richfield", Decimal("0.02"), "US-CI-MN-RICHFIELD")
    table = build(rec(COUNTY, CITY, kind="estimated", primary=True, city="Minneapolis"),
                  rec(COUNTY, other_city, kind="estimated", city="Richfield", line=2), county_only())
    # Richfield: official county 1.5% + Richfield 2% = 3.5%, resolved by city.
    rate, rows, level, how = local(table, APR, postal_code="55401", city="Richfield")
    assert (rate, level) == (Decimal("0.035"), "city")
    assert rows == [("county", "0.015", "sst.csv"), ("city", "0.02", "zip.csv")]
    assert how.startswith("resolved by city 'Richfield' among 2 candidates") and "sst.csv line 7" in how
    # A ZIP+4 range (estimated, for the test) gets it too: 1.5% + 0.25% = 1.75%.
    table = build(rec(COUNTY, SPECIAL, kind="estimated", plus4_low="0001", plus4_high="0099"), county_only())
    assert local(table, APR, postal_code="55401-0001")[:3] == (
        Decimal("0.0175"), [("county", "0.015", "sst.csv"), ("special", "0.0025", "zip.csv")], "zip4")


def test_a_type_the_candidate_lacks_is_added_in_county_city_special_order() -> None:
    table = build(rec(CITY, kind="estimated", primary=True), county_only())
    # No county in the estimated record: 1.5% county + 0.5% city = 2%, county first.
    assert local(table, APR, postal_code="55401")[:2] == (
        Decimal("0.02"), [("county", "0.015", "sst.csv"), ("city", "0.005", "zip.csv")])


def test_the_best_ranked_partial_per_type_wins() -> None:
    older = county_only("0.012", start=JAN, line=3)
    newer = county_only("0.015", start=APR, line=7)
    both = rec(Component("county", "Hennepin County", Decimal("0.02"), "US-CO-MN-HENNEPIN_COUNTY"), SPECIAL,
               kind="official_address", start=JAN, source="address.csv", scope=("county", "special"))
    table = build(rec(COUNTY, CITY, kind="estimated", primary=True), older, newer)
    # The later start wins among equal kinds: 1.5% + 0.5% = 2%; before it, 1.2% + 0.5% = 1.7%.
    assert local(table, APR, postal_code="55401")[0] == Decimal("0.02")
    assert local(table, date(2026, 3, 1), postal_code="55401")[0] == Decimal("0.017")
    # The stronger kind wins whatever its start: county 2% and special 0.25% from address.csv + city 0.5% = 2.75%.
    table = build(rec(COUNTY, CITY, kind="estimated", primary=True), older, newer, both)
    rate, rows, _, how = local(table, APR, postal_code="55401")
    assert rate == Decimal("0.0275")
    assert rows == [("county", "0.02", "address.csv"), ("city", "0.005", "zip.csv"), ("special", "0.0025", "address.csv")]
    assert how.endswith("; county and special-district rate from official_address: address.csv line 1 over the "
                        "estimated record's")


def test_a_zip_with_only_partial_records_resolves_with_them_and_says_what_is_missing() -> None:
    table = build(county_only(zip5="55402"))
    rate, rows, level, how = local(table, APR, postal_code="55402")
    assert (rate, rows, level) == (Decimal("0.015"), [("county", "0.015", "sst.csv")], "zip5")
    assert how == ("resolved by ZIP 55402: county rate from official_zip: sst.csv line 7; the city and "
                   "special-district rates are not in the imported data")
    # Before its start nothing is in force: state only, local missing.
    res = table.resolve(Address(state="MN", postal_code="55402"), date(2026, 3, 31))
    assert (res.level, res.local_missing) == ("state", True)


def test_only_zip_level_records_may_be_partial() -> None:
    with pytest.raises(ValueError, match="only a ZIP-level record"):
        rec(COUNTY, kind="official_zip", plus4_low="0001", plus4_high="0099", scope=("county",))
    with pytest.raises(ValueError, match="only a ZIP-level record"):
        LocalRecord(state="MN", zip5=None, components=(COUNTY,), effective_from=JAN, effective_to=None, source="x",
                    source_kind="official_zip", city="Minneapolis", scope=("county",))
