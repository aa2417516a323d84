"""The importers of issue 17 as pure parsers: California's CDTFA table, SST rate
files without a boundary file (placed by county), Levy's generic CSV, and the
import report. Real rows of the shared files are read by path (never copied);
every expected figure is worked out by hand from the quoted file lines."""

from __future__ import annotations

import json
from datetime import date
from decimal import Decimal
from importlib import resources

import pytest

from levy.domain.errors import ValidationFailed
from levy.domain.tax.local_rates import Component, LocalRecord
from levy.domain.tax.model import Address
from levy.domain.tax.rate_table import RateTable
from levy.ratefiles.builtin import county_names, load_local_limits, load_states, zip5_records, zip_counties, zip_directory
from levy.ratefiles.cdtfa import effective_from_name, parse_cdtfa
from levy.ratefiles.generic import parse_generic
from levy.ratefiles.report import LocalLimit, build_report, cdtfa_disagreements, find_anomalies, zip_disagreements
from levy.ratefiles.sst import parse_sst_rates
from levy.ratefiles.sst_county import sst_county_records
from levy.ratefiles.zip5 import parse_zip5
from shared_data import RATES, SST_DIR, ZIP5_DIR

CDTFA_DIR = RATES / "cdtfa-ca-2026-01-01"
RAW = CDTFA_DIR / "SalesTaxRates1-1-26.csv"
CLEANED = CDTFA_DIR / "SalesTaxRates1-1-26-cleaned.csv"
GA = SST_DIR / "GAR2026Q2FEB19.csv"
WI = SST_DIR / "WIR2026Q2FEB18.csv"
needs = pytest.mark.skipif(not CDTFA_DIR.is_dir() or not SST_DIR.is_dir() or not ZIP5_DIR.is_dir(),
                           reason=f"shared rate files not present under {RATES}")
CA_BASE = Decimal("0.0725")  # 6% state + 1.25% statewide local (state_rates.json)
STATES = {s.code: s for s in load_states()}


def _lines(path) -> list[str]:  # type: ignore[no-untyped-def]
    return path.read_text(encoding="utf-8").splitlines()


def _cdtfa(path) -> list[LocalRecord]:  # type: ignore[no-untyped-def]
    return parse_cdtfa(_lines(path), path.name, base_rate=CA_BASE)


def _rates(table: RateTable, on: date, **address: str) -> tuple[Decimal, str]:
    res = table.resolve(Address(**address), on)
    return sum((r.rate for r in res.rows), Decimal(0)), res.level


# ------------------------------------------------------------------ CDTFA


@needs
def test_cdtfa_raw_and_cleaned_files_give_the_same_records() -> None:
    raw, cleaned = _cdtfa(RAW), _cdtfa(CLEANED)
    # 549 raw lines = 2 title lines + header + 546 rows, 5 of them "Please refer ..." (Del Norte, Kern, Monterey,
    # Santa Cruz, Yuba County: split into an "Unincorporated Area" row) -> 541 records.
    assert len(raw) == len(cleaned) == 541

    def key(r: LocalRecord) -> tuple[object, ...]:
        return (r.city, r.county, r.unincorporated, r.components, r.effective_from)

    assert [key(r) for r in raw] == [key(r) for r in cleaned]
    # One unincorporated-area record per California county (58).
    assert sum(r.unincorporated for r in raw) == 58
    assert {r.source_kind for r in raw} == {"official_zip"} and all(r.zip5 is None for r in raw)


@needs
def test_cdtfa_rows_by_hand() -> None:
    recs = {(r.city or f"{r.county} uninc."): r for r in _cdtfa(RAW)}
    # Line 4 "Adelanto,7.7499999999999999E-2,San Bernardino,City": 7.75% - 7.25% = 0.5% district taxes.
    adelanto = recs["Adelanto"]
    assert adelanto.line == 4 and adelanto.county == "San Bernardino County" and not adelanto.unincorporated
    assert adelanto.components == (
        Component("special", "Adelanto district taxes", Decimal("0.005"), "US-SP-CA-ADELANTO_DISTRICT_TAXES"),)
    assert adelanto.effective_from == date(2026, 1, 1) and adelanto.effective_to is None
    # Line 219 "Kern County Unincorporated Area,8.2500000000000004E-2,Kern,County": 8.25% - 7.25% = 1%.
    kern = recs["Kern County uninc."]
    assert kern.unincorporated and kern.city is None and kern.line == 219
    assert [(c.name, c.rate, c.code) for c in kern.components] == [
        ("Kern County unincorporated area district taxes", Decimal("0.01"),
         "US-SP-CA-KERN_COUNTY_UNINCORPORATED_AREA_DISTRICT_TAXES")]
    # Line 10 "Alpine County,7.2499999999999995E-2,Alpine,County": exactly 7.25%, no district tax.
    assert recs["Alpine County uninc."].components == ()
    # Line 121 "Del Norte County,Del Norte,County,Please refer ...": skipped; line 122 (Unincorporated Area) is the
    # county's only unincorporated record; line 110 "Crescent City,...,Del Norte,City" its one city.
    assert [(r.line, r.unincorporated) for r in _cdtfa(RAW) if r.county == "Del Norte County"] == [
        (110, False), (122, True)]


def test_cdtfa_effective_date_from_the_name_or_given() -> None:
    assert effective_from_name("SalesTaxRates1-1-26.csv") == date(2026, 1, 1)
    assert effective_from_name("SalesTaxRates4-1-2026-cleaned.csv") == date(2026, 4, 1)
    with pytest.raises(ValidationFailed, match="--effective-from"):
        effective_from_name("rates.csv")
    rows = ["Location,Rate,County,Type,Notes", "Adelanto,0.0775,San Bernardino,City"]
    [r] = parse_cdtfa(rows, "rates.csv", base_rate=CA_BASE, effective_from=date(2026, 7, 1))
    assert r.effective_from == date(2026, 7, 1)


def test_cdtfa_bad_rows_reported_together_with_file_and_line() -> None:
    rows = ["Effective Sales and Use Tax Rates", "Location,Rate,County,Type,Notes",
            "Adelanto,0.0775,San Bernardino,City", "Nowhere,abc,Kern,City", "Town,0.08,Kern,Village",
            "Low,0.07,Kern,City"]
    with pytest.raises(ValidationFailed) as e:
        parse_cdtfa(rows, "SalesTaxRates1-1-26.csv", base_rate=CA_BASE)
    details = [i.detail for i in e.value.items]
    assert len(details) == 3
    assert details[0].startswith("SalesTaxRates1-1-26.csv:4: rate 'abc' is not a number")
    assert details[1].startswith("SalesTaxRates1-1-26.csv:5: Town: unknown Type 'Village'")
    assert details[2].startswith("SalesTaxRates1-1-26.csv:6: Low: rate 0.07 is below the statewide rate 0.0725")
    with pytest.raises(ValidationFailed, match="not a CDTFA rate table"):
        parse_cdtfa(["a,b", "c,d"], "SalesTaxRates1-1-26.csv", base_rate=CA_BASE)


@needs
def test_a_zip_spanning_two_california_cities_resolved_by_city_with_cdtfa_rates() -> None:
    with open(ZIP5_DIR / "TAXRATES_ZIP5_CA202603.csv", encoding="utf-8") as f:
        zip_rows = zip5_records(parse_zip5(f, "TAXRATES_ZIP5_CA202603.csv"))
    table = RateTable.build(load_states(), [*zip_rows, *_cdtfa(RAW)], zip_directory())
    on = date(2026, 4, 15)
    # ZIP 90046 lies in Los Angeles and West Hollywood (ZIP directory: Los Angeles, also "West Hollywood").
    # CDTFA line 263 "Los Angeles,9.75%" and line 525 "West Hollywood,10.5%" (combined, state included).
    assert _rates(table, on, state="CA", postal_code="90046", city="West Hollywood") == (Decimal("0.105"), "city")
    assert _rates(table, on, state="CA", postal_code="90046", city="Los Angeles") == (Decimal("0.0975"), "city")
    # Oakland 94611 also covers Piedmont: line 327 "Oakland,0.1075", line 355 "Piedmont,0.10249999999999999".
    assert _rates(table, on, state="CA", postal_code="94611", city="Piedmont") == (Decimal("0.1025"), "city")
    assert _rates(table, on, state="CA", postal_code="94611", city="Oakland") == (Decimal("0.1075"), "city")


# ------------------------------------------------------------------ SST without a boundary file


def _ga_table(with_zip_table: bool) -> RateTable:
    placed = sst_county_records(parse_sst_rates(_lines(GA), GA.name), county_names=county_names(),
                                zip_counties=zip_counties("GA"), source=GA.name)
    records: list[LocalRecord] = []
    if with_zip_table:
        with open(ZIP5_DIR / "TAXRATES_ZIP5_GA202603.csv", encoding="utf-8") as f:
            records += zip5_records(parse_zip5(f, "TAXRATES_ZIP5_GA202603.csv"))
    return RateTable.build(load_states(), [*records, *placed.records], zip_directory())


@needs
def test_ga_county_rate_changes_on_2026_04_01_which_the_march_zip_table_lacks() -> None:
    # GAR2026Q2FEB19.csv lines 46-47, Bibb County (FIPS 13021, Macon):
    #   13,00,021,0.03,...,20251001,20260331   13,00,021,0.04,...,20260401,29991231
    # TAXRATES_ZIP5_GA202603.csv line 653: GA,31201,MACON,0.07 = 4% state + 3% county (no April change).
    zip_only = RateTable.build(load_states(), zip5_records(parse_zip5(_lines(ZIP5_DIR / "TAXRATES_ZIP5_GA202603.csv"),
                                                                      "TAXRATES_ZIP5_GA202603.csv")), zip_directory())
    assert _rates(zip_only, date(2026, 4, 15), state="GA", postal_code="31201")[0] == Decimal("0.07")
    table = _ga_table(with_zip_table=True)
    assert _rates(table, date(2026, 3, 31), state="GA", postal_code="31201") == (Decimal("0.07"), "zip5")  # 4 + 3
    assert _rates(table, date(2026, 4, 1), state="GA", postal_code="31201") == (Decimal("0.08"), "zip5")  # 4 + 4
    res = table.resolve(Address(state="GA", postal_code="31201"), date(2026, 4, 1))
    county = [r for r in res.rows if r.type == "county"]
    assert [(r.code, r.name, r.source) for r in county] == [("US-CO-GA-BIBB_COUNTY", "Bibb County", GA.name)]
    assert res.how == ("resolved by ZIP 31201 (estimated: TAXRATES_ZIP5_GA202603.csv line 653); county rate from "
                       "official_zip: GAR2026Q2FEB19.csv line 47 over the estimated record's")
    # Every dated row is kept: line 45 (2022-01-01..2025-09-30) had 4%, line 44 (2012-04-01..2021-12-31) 3%.
    assert _rates(table, date(2023, 6, 1), state="GA", postal_code="31201")[0] == Decimal("0.08")
    assert _rates(table, date(2021, 6, 1), state="GA", postal_code="31201")[0] == Decimal("0.07")


@needs
def test_atlanta_keeps_its_city_and_district_taxes_under_the_official_county_rate() -> None:
    # TAXRATES_ZIP5_GA202603.csv line 233: GA,30303,ATLANTA,0.089000,0.04,0.03,0.015,0.004 (state, county, city,
    # special); the ZIP directory puts 30303 in Fulton County. GAR2026Q2FEB19.csv line 165: 13,00,121,0.03 from
    # 2011-01-01, open-ended (Fulton County, FIPS 13121). The SST file's county record states the county only, so:
    # 4% state + 3% Fulton (SST) + 1.5% Atlanta + 0.4% district = 8.9% (the county-only record alone gave 7%).
    table = _ga_table(with_zip_table=True)
    for on in (date(2026, 3, 31), date(2026, 4, 1)):
        res = table.resolve(Address(state="GA", postal_code="30303"), on)
        assert sum((r.rate for r in res.rows), Decimal(0)) == Decimal("0.089") and res.level == "zip5"
        assert [(r.type, r.rate, r.source) for r in res.rows if r.type != "state"] == [
            ("county", Decimal("0.03"), GA.name), ("city", Decimal("0.015"), "TAXRATES_ZIP5_GA202603.csv"),
            ("special", Decimal("0.004"), "TAXRATES_ZIP5_GA202603.csv")]
        assert res.how.endswith("county rate from official_zip: GAR2026Q2FEB19.csv line 165 over the estimated record's")
    # The SST file alone: Fulton's 3% with the state, and the rows say the city and district rates are missing.
    alone = _ga_table(with_zip_table=False).resolve(Address(state="GA", postal_code="30303"), date(2026, 4, 1))
    assert sum((r.rate for r in alone.rows), Decimal(0)) == Decimal("0.07")
    assert alone.how == ("resolved by ZIP 30303: county rate from official_zip: GAR2026Q2FEB19.csv line 165; the city "
                         "and special-district rates are not in the imported data")


@needs
def test_sst_county_records_by_hand() -> None:
    placed = sst_county_records(parse_sst_rates(_lines(GA), GA.name), county_names=county_names(),
                                zip_counties=zip_counties("GA"), source=GA.name)
    # Bibb County has 5 rows (lines 43-47) and the ZIP directory 22 ZIPs (31052, 31201-31213, 31216, 31217,
    # 31220, 31221, 31294-31297): 5 x 22 = 110 records, each with the row's own window.
    bibb = [r for r in placed.records if r.county == "Bibb County"]
    assert len(bibb) == 110 and len({r.zip5 for r in bibb}) == 22
    assert sorted({(r.line, r.effective_from, r.effective_to) for r in bibb})[-2:] == [
        (46, date(2025, 10, 1), date(2026, 3, 31)), (47, date(2026, 4, 1), None)]
    assert all(r.primary and r.source_kind == "official_zip" and r.scope == ("county",) for r in bibb)
    assert bibb[0].components[0].authority == "SST-13-county-021"
    # The 12 city rows (type 01) and 4 special rows (type 63) cannot be placed without the boundary file.
    assert len(placed.unplaced) == 16 and {r.type for r in placed.unplaced} == {"city", "special"}
    assert placed.unmatched_counties == [] and placed.warnings() == []
    # 9 of them have a rate in force on or after 2026-04-01 (lines 6, 9-15, 17; line 16 is 0%); from 2022-07-01
    # also lines 5 and 8 (1.5% until 2022-09-30).
    def lines(on: date) -> list[str]:
        return [note.split(": ")[1] for note in placed.unplaced_notes(on)]

    assert lines(date(2026, 4, 1)) == [f"line {n}" for n in (6, 9, 10, 11, 12, 13, 14, 15, 17)]
    assert lines(date(2022, 7, 1)) == [f"line {n}" for n in (5, 6, 8, 9, 10, 11, 12, 13, 14, 15, 17)]


@needs
def test_wisconsin_milwaukee_county_from_the_sst_file() -> None:
    placed = sst_county_records(parse_sst_rates(_lines(WI), WI.name), county_names=county_names(),
                                zip_counties=zip_counties("WI"), source=WI.name)
    table = RateTable.build(load_states(), placed.records, zip_directory())
    # WIR2026Q2FEB18.csv line 49: 55,00,079,0.005 until 2023-12-31; line 50: 0.009 from 2024-01-01. State 5%.
    assert _rates(table, date(2023, 6, 1), state="WI", postal_code="53202")[0] == Decimal("0.055")
    assert _rates(table, date(2026, 4, 15), state="WI", postal_code="53202")[0] == Decimal("0.059")
    # With the March WI table (line 152: WI,53202,MILWAUKEE,0.079 = 5% state + 0.9% county + 2% city) the city's
    # 2% stays: 5% + 0.9% (WIR line 50) + 2% = 7.9%.
    with open(ZIP5_DIR / "TAXRATES_ZIP5_WI202603.csv", encoding="utf-8") as f:
        estimated = zip5_records(parse_zip5(f, "TAXRATES_ZIP5_WI202603.csv"))
    table = RateTable.build(load_states(), [*estimated, *placed.records], zip_directory())
    res = table.resolve(Address(state="WI", postal_code="53202"), date(2026, 4, 15))
    assert sum((r.rate for r in res.rows), Decimal(0)) == Decimal("0.079")
    assert [(r.type, r.source) for r in res.rows if r.type != "state"] == [
        ("county", WI.name), ("city", "TAXRATES_ZIP5_WI202603.csv")]


def test_a_zip_in_two_counties_gets_one_candidate_per_county() -> None:
    rates = parse_sst_rates(["13,00,021,0.03,0.03,0.03,0.03,20260101,29991231",
                             "13,00,153,0.02,0.02,0.02,0.02,20260101,29991231"], "GAR2026Q1.csv")
    placed = sst_county_records(rates, county_names=county_names(), source="GAR2026Q1.csv",
                                zip_counties={"31005": ("Houston County", "Bibb County"), "31201": ("Bibb County",)})
    got = sorted((r.zip5, r.county, r.primary, r.components[0].rate) for r in placed.records)
    # 13153 is Houston County (Census list); 31005's own county first, so primary.
    assert got == [("31005", "Bibb County", False, Decimal("0.03")), ("31005", "Houston County", True, Decimal("0.02")),
                   ("31201", "Bibb County", True, Decimal("0.03"))]
    report = build_report("GAR2026Q1.csv", placed.records, rows_read=2, states=STATES, limits={})
    assert (report.zips_covered, report.zips_with_several_candidates) == (2, 1)


# ------------------------------------------------------------------ generic CSV

GENERIC = [
    "state,zip5,plus4_low,plus4_high,city,county,primary,effective_from,effective_to,components",
    "GA,31201,,,Macon,Bibb County,yes,2026-04-01,,county:Bibb County:4%",
    "ga,30303,,,Atlanta,Fulton County,no,2026-01-01,2026-12-31,county:Fulton County:0.03;city:Atlanta:1.9%",
    "GA,30303,0001,0099,,,,2026-01-01,,special:Test District:0.005",
]


def test_generic_rows_by_hand() -> None:
    macon, atlanta, plus4 = parse_generic(GENERIC, "mine.csv")
    assert (macon.state, macon.zip5, macon.city, macon.county, macon.primary) == ("GA", "31201", "Macon", "Bibb County", True)
    assert macon.components == (Component("county", "Bibb County", Decimal("0.04"), "US-CO-GA-BIBB_COUNTY"),)
    assert (macon.effective_from, macon.effective_to, macon.source_kind, macon.line) == (
        date(2026, 4, 1), None, "official_zip", 2)
    assert [(c.type, c.rate, c.code) for c in atlanta.components] == [
        ("county", Decimal("0.03"), "US-CO-GA-FULTON_COUNTY"), ("city", Decimal("0.019"), "US-CI-GA-ATLANTA")]
    assert atlanta.state == "GA" and not atlanta.primary and atlanta.effective_to == date(2026, 12, 31)
    assert (plus4.plus4_low, plus4.plus4_high, plus4.city) == ("0001", "0099", None)
    [est] = parse_generic(["state,zip5,effective_from,components,source_kind", "GA,31201,2026-04-01,,estimated"],
                          "e.csv", source_kind="official_address")
    assert est.source_kind == "estimated" and est.components == ()
    [addr] = parse_generic(["State,ZIP5,Effective_From,Components", "GA,31201,2026-04-01,"], "e.csv",
                           source_kind="official_address")
    assert addr.source_kind == "official_address"


def test_generic_scope_makes_a_partial_record() -> None:
    [city, full] = parse_generic([
        "state,zip5,effective_from,components,scope",
        "GA,30303,2026-04-01,city:Atlanta:1.9%;special:MOST:0, Special ; CITY",
        "GA,30303,2026-04-01,county:Fulton County:3%,"], "mine.csv")
    assert (city.scope, full.scope) == (("city", "special"), ())
    # With the SST county-only record and the March table: county 3% (SST) + city 1.9% and special 0% (this
    # file, official_zip over the table's estimated 1.5% and 0.4%) = 4.9% local, 8.9% with the state's 4%.
    county = LocalRecord(state="GA", zip5="30303", components=(Component("county", "Fulton County", Decimal("0.03"),
                         "US-CO-GA-FULTON_COUNTY"),), effective_from=date(2011, 1, 1), effective_to=None,
                         source="GAR.csv", source_kind="official_zip", scope=("county",))
    table_row = parse_zip5(["State,ZipCode,TaxRegionName,EstimatedCombinedRate,StateRate,EstimatedCountyRate,"
                            "EstimatedCityRate,EstimatedSpecialRate,RiskLevel",
                            "GA,30303,ATLANTA,0.089,0.04,0.03,0.015,0.004,0"], "TAXRATES_ZIP5_GA202603.csv")
    table = RateTable.build(load_states(), [*zip5_records(table_row), county, city], zip_directory())
    res = table.resolve(Address(state="GA", postal_code="30303"), date(2026, 4, 15))
    assert [(r.type, r.rate, r.source) for r in res.rows if r.type != "state"] == [
        ("county", Decimal("0.03"), "GAR.csv"), ("city", Decimal("0.019"), "mine.csv"),
        ("special", Decimal("0"), "mine.csv")]
    assert sum((r.rate for r in res.rows), Decimal(0)) == Decimal("0.089")


def test_generic_bad_rows_reported_together_with_file_and_line() -> None:
    rows = ["state,zip5,plus4_low,plus4_high,effective_from,effective_to,components",
            "GA,3120,,,2026-04-01,,county:Bibb County:0.04",
            "GA,31201,0001,,2026-04-01,,",
            "GA,31201,,,2026-04-01,2026-03-01,",
            "GA,31201,,,2026-04-01,,town:Macon:0.01",
            "GA,31201,,,2026-04-01,,county:Bibb County:1.5",
            "GA,31201,,,2026-04-01,,county:Bibb County",
            "GA,31201,,,2026-04-01,,county:Bibb:0.01;county:BIBB:0.02",
            "GA,31201,,,April,,"]
    with pytest.raises(ValidationFailed) as e:
        parse_generic(rows, "mine.csv")
    assert [i.detail.split(": ", 1)[0] for i in e.value.items] == [f"mine.csv:{n}" for n in range(2, 10)]
    text = " | ".join(i.detail for i in e.value.items)
    for part in ("bad zip5 '3120'", "plus4_low and plus4_high go together", "effective_to is before effective_from",
                 "component type 'town'", "must be in [0, 1)", "must be type:name:rate", "appears twice",
                 "effective_from 'April' is not a date"):
        assert part in text
    scoped = ["state,zip5,plus4_low,plus4_high,effective_from,components,scope",
              "GA,31201,,,2026-04-01,county:Bibb County:4%,town",
              "GA,31201,,,2026-04-01,county:Bibb County:4%,city",
              "GA,31201,0001,0099,2026-04-01,county:Bibb County:4%,county"]
    with pytest.raises(ValidationFailed) as e:
        parse_generic(scoped, "mine.csv")
    assert [i.detail for i in e.value.items] == [
        "mine.csv:2: scope type(s) town must be county, city or special",
        "mine.csv:3: component type(s) county outside the row's scope 'city'",
        "mine.csv:4: scope is for ZIP-level rows only (no plus4_low/plus4_high)"]
    with pytest.raises(ValidationFailed, match="mine.csv:2: unknown state 'GE'"):
        parse_generic(["state,zip5,effective_from,components", "GE,31201,2026-04-01,"], "mine.csv", states={"GA"})
    with pytest.raises(ValidationFailed, match="header lacks components"):
        parse_generic(["state,zip5,effective_from", "GA,31201,2026-04-01"], "mine.csv")


# ------------------------------------------------------------------ report


def _rec(zip5: str | None, *components: Component, line: int, state: str = "NV", **kw: object) -> LocalRecord:
    return LocalRecord(state=state, zip5=zip5, components=components, effective_from=date(2026, 4, 1),
                       effective_to=None, source="t.csv", source_kind="official_zip", line=line, **kw)  # type: ignore[arg-type]


def _c(kind: str, name: str, rate: str) -> Component:
    return Component(kind, name, Decimal(rate), f"X-{name}")  # type: ignore[arg-type]


def test_report_figures_and_anomalies_by_hand() -> None:
    limits = {"NV": LocalLimit(Decimal("0.01525"), Decimal("0.08375"), "test")}
    records = [
        # NV: 4.6% state + 2.25% statewide local. Line 1: 4.6 + 2.25 + 1.525 = 8.375%: at the maxima, no anomaly.
        _rec("89101", _c("county", "Clark County", "0.01525"), line=1, city="Las Vegas"),
        # Line 2, same ZIP, another city: a second candidate. Special 5% > state 4.6% and > max local 1.525%;
        # combined 4.6 + 2.25 + 5 = 11.85% > 8.375%: three anomalies.
        _rec("89101", _c("special", "Tribal", "0.05"), line=2, city="Reservation"),
        # Line 3: ZIP+4 range in another ZIP; county 1.6% > 1.525%, combined 4.6 + 2.25 + 1.6 = 8.45% > 8.375%.
        _rec("89501", _c("county", "Washoe County", "0.016"), line=3, plus4_low="0001", plus4_high="0009"),
        # Line 4: a local tax in Connecticut (no local sales taxes in the built-in data).
        _rec("06101", _c("city", "Hartford", "0.01"), line=4, state="CT"),
    ]
    report = build_report("t.csv", records, rows_read=5, states=STATES, limits=limits)
    assert (report.rows_read, report.records, report.states) == (5, 4, ("CT", "NV"))
    assert (report.zips_covered, report.zips_with_several_candidates, report.places) == (3, 1, 0)
    assert [(a.line, a.kind) for a in report.anomalies] == [
        (2, "combined_above_max"), (2, "component_above_max_local"), (2, "special_above_state"),
        (3, "combined_above_max"), (3, "component_above_max_local"),
        (4, "local_tax_in_state_without_local_taxes")]
    assert report.anomalies[0].detail == "combined rate 11.85% above the documented maximum 8.375%"
    text = "\n".join(report.lines())
    assert "t.csv: 5 rows read, 4 records, states CT, NV, 3 ZIPs covered (1 with several candidates)" in text
    assert "anomalies: 6" in text
    assert report.summary()["anomalies"][5]["kind"] == "local_tax_in_state_without_local_taxes"


def test_one_anomaly_per_source_line_counting_the_zips() -> None:
    limits = {"NV": LocalLimit(Decimal("0.01525"), None, "test")}
    over = _c("county", "Big County", "0.02")
    # Line 7 gives three ZIPs (89003 in two records, as a ZIP cut into two windows: still three ZIPs).
    records = [_rec(z, over, line=7) for z in ("89001", "89002", "89003", "89003")]
    [a] = find_anomalies(records, STATES, limits)
    assert (a.kind, a.line, a.count, a.where) == ("component_above_max_local", 7, 3, "ZIP 89001")
    assert "(and 2 more ZIPs/places from this line)" in a.text()


@needs
def test_the_estimated_ca_table_folds_a_reservation_into_a_zip() -> None:
    # TAXRATES_ZIP5_CA202603.csv line 616: CA,92082,RINCON RESERVATION,0.155,0.06,0.0025,0,0.0925.
    # The 1.25% statewide local comes out of county (0.25%) then special (1%): special 8.25%.
    # 8.25% > 6% state; 8.25% > CA max local 4%; combined 6 + 1.25 + 8.25 = 15.5% > 11.25%. No other CA row.
    with open(ZIP5_DIR / "TAXRATES_ZIP5_CA202603.csv", encoding="utf-8") as f:
        rows = zip5_records(parse_zip5(f, "TAXRATES_ZIP5_CA202603.csv"))
    anomalies = find_anomalies(rows, STATES, load_local_limits())
    assert [(a.line, a.kind) for a in anomalies] == [
        (616, "combined_above_max"), (616, "component_above_max_local"), (616, "special_above_state")]
    assert "15.5%" in anomalies[0].detail


def test_zip_disagreements_by_hand() -> None:
    bibb_3, bibb_4 = _c("county", "Bibb County", "0.03"), _c("county", "Bibb County", "0.04")

    def zrec(zip5: str, comp: Component, source: str, start: date, end: date | None = None) -> LocalRecord:
        return LocalRecord(state="GA", zip5=zip5, components=(comp,), effective_from=start, effective_to=end,
                           source=source, source_kind="official_zip", county="Bibb County", primary=True)

    new = [zrec("31201", bibb_3, "GAR.csv", date(2025, 10, 1), date(2026, 3, 31)),
           zrec("31201", bibb_4, "GAR.csv", date(2026, 4, 1)), zrec("31204", bibb_4, "GAR.csv", date(2026, 4, 1))]
    table = [zrec("31201", bibb_3, "ZIP5.csv", date(2026, 3, 1)), zrec("31204", bibb_4, "ZIP5.csv", date(2026, 3, 1)),
             zrec("31210", bibb_3, "ZIP5.csv", date(2026, 3, 1))]
    # On 2026-04-01: 31201 new 4% vs table 3% (differs); 31204 4% both; 31210 not in the new file.
    [d] = zip_disagreements(new, table, date(2026, 4, 1), "GAR.csv")
    assert d.text() == "ZIP 31201 (Bibb County): GAR.csv local 4%, ZIP5.csv local 3%"
    # On 2026-03-15 the new file's 3% row is in force: no disagreement.
    assert zip_disagreements(new, table, date(2026, 3, 15), "GAR.csv") == []


def test_zip_disagreements_of_a_county_only_record_compare_the_county_rate() -> None:
    fulton, atlanta = _c("county", "Fulton County", "0.03"), _c("city", "Atlanta", "0.015")
    district = _c("special", "Atlanta special district", "0.004")
    common: dict[str, object] = dict(state="GA", effective_from=date(2026, 3, 1), effective_to=None, primary=True,
                                     county="Fulton County")
    new = [LocalRecord(zip5="30303", components=(fulton,), source="GAR.csv", source_kind="official_zip",
                       scope=("county",), **common),  # type: ignore[arg-type]
           LocalRecord(zip5="30305", components=(_c("county", "Fulton County", "0.04"),), source="GAR.csv",
                       source_kind="official_zip", scope=("county",), **common)]  # type: ignore[arg-type]
    table = [LocalRecord(zip5=z, components=(fulton, atlanta, district), source="ZIP5.csv", source_kind="estimated",
                         **common) for z in ("30303", "30305")]  # type: ignore[arg-type]
    # 30303: county 3% both (the table's 1.5% + 0.4% city and district are not the SST file's to compare): agrees.
    # 30305: SST county 4%, table county 3%.
    [d] = zip_disagreements(new, table, date(2026, 4, 1), "GAR.csv")
    assert d.text() == "ZIP 30305 (Fulton County): GAR.csv county 4%, ZIP5.csv county 3%"


def test_cdtfa_disagreements_by_hand() -> None:
    cdtfa = parse_cdtfa(["Location,Rate,County,Type,Notes", "Los Angeles,0.0975,Los Angeles,City",
                         "Los Angeles County,0.1025,Los Angeles,County"], "SalesTaxRates1-1-26.csv", base_rate=CA_BASE)
    ca = STATES["CA"]
    table = parse_zip5(["State,ZipCode,TaxRegionName,EstimatedCombinedRate,StateRate,EstimatedCountyRate,"
                        "EstimatedCityRate,EstimatedSpecialRate,RiskLevel",
                        "CA,90001,HUNTINGTON PARK,0.105,0.06,0.0025,0.0075,0.035,0",
                        "CA,90012,LOS ANGELES,0.0975,0.06,0.0025,0.0075,0.0275,0"], "TAXRATES_ZIP5_CA202603.csv")
    assert ca.code == "CA"
    records = zip5_records(table)
    found = cdtfa_disagreements(cdtfa, records, zip_directory(), date(2026, 1, 1))
    # 90001 (directory city Los Angeles): table local 10.5% - 7.25% = 3.25%, CDTFA Los Angeles 9.75% - 7.25% = 2.5%.
    # 90012: table 9.75% - 7.25% = 2.5% = CDTFA: no disagreement.
    assert [(d.zip5, d.place, d.rate, d.table_rate) for d in found] == [
        ("90001", "Los Angeles", Decimal("0.025"), Decimal("0.0325"))]
    assert found[0].text() == "ZIP 90001 (Los Angeles): CDTFA local 2.5%, TAXRATES_ZIP5_CA202603.csv local 3.25%"


def test_every_documented_maximum_has_a_source() -> None:
    raw = json.loads(resources.files("levy.data.tax").joinpath("local_rate_limits.json").read_text())
    for code, entry in raw["states"].items():
        assert code in STATES, code
        assert entry["source"], code
        if entry["max_combined_rate"] is None:
            assert entry["source"].startswith("unsourced"), code
        else:
            assert entry["source"].startswith("http") or "(http" in entry["source"], code
            # The maximum combined rate is at least the state rate plus the statewide local portion.
            info = STATES[code]
            on = date.fromisoformat(entry["as_of"])
            swl = info.statewide_local_on(on)
            floor = info.rate_on(on).rate + (swl.rate if swl else 0)  # type: ignore[union-attr]
            assert Decimal(entry["max_combined_rate"]) == floor + Decimal(entry["max_local_rate"]), code
    assert load_local_limits()["WI"].max_local_rate == Decimal("0.029")


def test_county_fips_list_names_the_counties_of_the_sst_files() -> None:
    names = county_names()
    assert names[("13", "021")] == "Bibb County" and names[("55", "079")] == "Milwaukee County"
    assert names[("27", "053")] == "Hennepin County"
    assert sum(1 for s, _ in names if s == "13") == 159  # Georgia's 159 counties


# ------------------------------------------------------------------ app layer: sniffing and reports of real files


@needs
def test_build_tells_the_formats_apart_and_reports_on_the_real_files() -> None:
    from levy.app.rate_import import build

    parsed = {p.path.name: p for p in build([CLEANED, GA, ZIP5_DIR / "TAXRATES_ZIP5_CA202603.csv"])}
    cleaned, ga, ca = parsed[CLEANED.name], parsed[GA.name], parsed["TAXRATES_ZIP5_CA202603.csv"]
    assert (cleaned.format, ga.format, ca.format) == ("cdtfa", "sst_county", "zip5")
    # Cleaned CDTFA: 546 rows under the header (547 lines - header), 541 records (see above), all place-wide.
    assert cleaned.report is not None and (cleaned.report["rows_read"], cleaned.report["places"]) == (546, 541)
    # GA alone: 449 rate rows; county rows placed on 970 ZIPs; of its 16 city/special rows, 9 have a rate in force
    # on or after 2026-04-01 (Q2): 6 city rows (lines 6, 9, 10-13) and specials 00060, 00044, 99999 (lines 14, 15,
    # 17; line 16, 00031, is 0%): one unplaced_local_taxes warning each, not an anomaly (the county records are
    # partial: each ZIP keeps the city and district rates of its other imports, nothing is lost).
    assert ga.rate_report is not None
    assert (ga.rate_report.rows_read, ga.rate_report.records, ga.rate_report.zips_covered) == (449, 2297, 970)
    assert ga.effective_from == date(2011, 1, 1) and ga.effective_to is None
    assert ga.rate_report.anomalies == ()
    assert [w.split(": ")[:2] for w in ga.rate_report.warnings] == [
        ["unplaced_local_taxes", f"line {n}"] for n in (6, 9, 10, 11, 12, 13, 14, 15, 17)]
    assert ga.rate_report.warnings[0] == (
        "unplaced_local_taxes: line 6: GA city 04000: 1.9% in force from 2022-10-01 cannot be placed on ZIPs without "
        "the boundary file: not applied (the records state county rates only; each ZIP keeps the city and "
        "special-district rates of its other imports)")
    # The estimated CA table: one record per ZIP, the 3 rate checks line 616 fails (see above) are expected of an
    # estimated table (Rincon Reservation folded into ZIP 92082): notes, not anomalies.
    assert ca.rate_report is not None and ca.rate_report.source_kinds == ("estimated",)
    assert ca.rate_report.anomalies == () and len(ca.rate_report.expected) == 3
