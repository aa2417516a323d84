"""levy.domain.tax.level_overlay: an official record stating a level replaces the lower-ranked record's
components of that level and of what the level includes, only where the data says it includes them and the
rates confirm it on the lower-ranked record's date."""

from __future__ import annotations

from datetime import date
from decimal import Decimal

from levy.domain.tax.level_overlay import LevelInclusion, widen_official_levels
from levy.domain.tax.local_rates import Component, LocalRecord

GA = LevelInclusion("GA", "county", ("special",), date(2013, 1, 1), None, "O.C.G.A. 48-8-241")
MARCH, APRIL = date(2026, 3, 1), date(2026, 4, 1)


def table(zip5: str, county: str, special: str) -> LocalRecord:
    comps = (Component("county", "X County", Decimal(county), "US-CO-GA-X_COUNTY"),
             Component("special", "Y special district", Decimal(special), "US-SP-GA-Y"))
    return LocalRecord("GA", zip5, comps, MARCH, None, "TAXRATES_ZIP5_GA202603.csv", "estimated", primary=True, line=2)


def official(zip5: str, rate: str, start: date = date(2024, 4, 1), end: date | None = None) -> LocalRecord:
    return LocalRecord("GA", zip5, (Component("county", "X County", Decimal(rate), "US-CO-GA-X_COUNTY"),), start, end,
                       "GAR.csv", "official_zip", primary=True, line=9, scope=("county",))


def test_widened_where_the_county_rate_is_the_tables_county_plus_special() -> None:
    # 3.5% + 1% = 4.5%: the county level includes the district; widened, one replacement line.
    records, replaced = widen_official_levels([official("30901", "0.045")], [table("30901", "0.035", "0.01")], [GA])
    assert records[0].scope == ("county", "special")
    assert [(r.zip5, r.rate, [c.type for c in r.replaced], r.on) for r in replaced] == [
        ("30901", Decimal("0.045"), ["county", "special"], MARCH)]


def test_kept_where_the_county_rate_is_the_tables_county_alone_or_neither() -> None:
    for rate in ("0.03", "0.05"):  # 3% = the county alone (Atlanta's own district stays); 5%: neither, a disagreement
        records, replaced = widen_official_levels([official("30303", rate)], [table("30303", "0.03", "0.004")], [GA])
        assert records[0].scope == ("county",) and replaced == []


def test_compared_on_the_tables_date_not_after_a_later_change() -> None:
    # 3% until 2026-03-31 then 4% from April: on the table's 2026-03-01, 3% = the table's county alone, so the 1%
    # district is kept even though 3% + 1% equals the April rate.
    new = [official("31201", "0.03", date(2011, 1, 1), date(2026, 3, 31)), official("31201", "0.04", APRIL)]
    records, replaced = widen_official_levels(new, [table("31201", "0.03", "0.01")], [GA])
    assert [r.scope for r in records] == [("county",), ("county",)] and replaced == []


def test_no_inclusion_data_no_widening() -> None:
    records, replaced = widen_official_levels([official("30901", "0.045")], [table("30901", "0.035", "0.01")], [])
    assert records[0].scope == ("county",) and replaced == []


def test_the_rate_table_widens_in_whichever_order_the_records_came() -> None:
    from levy.domain.tax.model import Address
    from levy.domain.tax.rate_table import RateTable
    from levy.ratefiles.builtin import load_states

    # The official county record imported BEFORE the table (it could not be compared at its import): the table
    # is built with the inclusion data, so 30901 gets 4% state + 4.5% county, without the table's 1% district.
    for inclusions, expected in (([GA], Decimal("0.085")), ([], Decimal("0.095"))):
        table_ = RateTable.build(load_states(), [official("30901", "0.045"), table("30901", "0.035", "0.01")], {},
                                 inclusions)
        res = table_.resolve(Address(state="GA", postal_code="30901"), APRIL)
        assert sum((r.rate for r in res.rows), Decimal(0)) == expected
    assert [r.type for r in res.rows] == ["state", "county", "special"]  # without inclusions: stacked (9.5%)
