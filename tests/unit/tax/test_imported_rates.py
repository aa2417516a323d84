"""Rates imported from the real third-party tables, read by path at run time (never copied)."""

from __future__ import annotations

import glob
import os
from datetime import date
from decimal import Decimal

import pytest
from tax_helpers import REG_ALL, mkline

from levy.domain.errors import ValidationFailed
from levy.domain.tax.engine import calculate
from levy.domain.tax.model import CalculationInput
from levy.domain.tax.rate_table import RateTable
from levy.ratefiles.builtin import load_states, zip_directory
from levy.ratefiles.sst import parse_sst_boundaries, parse_sst_rates
from levy.domain.tax.local_rates import UnitRange
from levy.ratefiles.zip5 import effective_from_name, parse_zip5

from shared_data import SST_DIR as _SST, ZIP5_DIR as _ZIP  # noqa: E402

ZIP_DIR = str(_ZIP)
SST_DIR = str(_SST)
needs_zip = pytest.mark.skipif(not os.path.isdir(ZIP_DIR), reason=f"third-party ZIP tables not present at {ZIP_DIR}")
needs_sst = pytest.mark.skipif(not os.path.isdir(SST_DIR), reason=f"SST sample files not present at {SST_DIR}")
D = date(2026, 3, 15)


def _load(*states):
    rows = []
    for st in states:
        path = f"{ZIP_DIR}/TAXRATES_ZIP5_{st}202603.csv"
        with open(path, encoding="utf-8") as f:
            rows.extend(parse_zip5(f, os.path.basename(path)))
    return RateTable.build(load_states(), rows, zip_directory())


@pytest.fixture(scope="module")
def imported():
    if not os.path.isdir(ZIP_DIR):
        pytest.skip(f"third-party ZIP tables not present at {ZIP_DIR}")
    return _load("CA", "NY", "TX", "NV", "WA")


def _tax(table, rules, **kw):
    res = calculate(CalculationInput(lines=(mkline(**kw),), transaction_date=D), table, rules, REG_ALL)
    return res.tax_amount, res.lines[0].taxes


@needs_zip
def test_all_52_files_parse():
    files = sorted(glob.glob(f"{ZIP_DIR}/TAXRATES_ZIP5_*.csv"))
    assert len(files) == 52
    total = 0
    for path in files:
        with open(path, encoding="utf-8") as f:
            total += len(parse_zip5(f, os.path.basename(path)))
    assert total > 30000


@needs_zip
def test_ca_90001_statewide_local_not_double_counted(imported, rules):
    # File row: CA,90001,HUNTINGTON PARK,0.105,0.06,0.0025,0.0075,0.035. The built-in 1.25% statewide local is
    # taken out of county (0.0025 -> 0) then special (0.035 -> 0.025). Combined stays 10.5%.
    tax, rows = _tax(imported, rules, state="CA", zip="90001")
    assert tax == 600 + 125 + 75 + 250  # 100.00 x (6% + 1.25% + 0.75% city + 2.5% special)
    assert sum(r.tax_rate for r in rows) == Decimal("0.105")
    assert {r.jurisdiction_type for r in rows} == {"state", "county", "city", "special"}
    assert "special district" in [r for r in rows if r.jurisdiction_type == "special"][0].jurisdiction_name


@needs_zip
def test_nyc_clothing_and_goods(imported, rules):
    # NY,10001: state 4%, city 4.5%, special 0.375% -> 8.875%
    tax, rows = _tax(imported, rules, state="NY", zip="10001")
    assert tax == 400 + 450 + 38  # 37.5 -> 38
    assert [r for r in rows if r.jurisdiction_type == "city"][0].jurisdiction_name == "New York"
    tax, _ = _tax(imported, rules, state="NY", zip="10001", cat="CLOTHING.APPAREL.SHIRTS", price=5000)
    assert tax == 0  # under $110: state exempt, locals follow


@needs_zip
def test_nv_and_tx_imported(imported, rules):
    # Look the file rows up by hand and compute the expected tax from them.
    def row_of(st, z):
        with open(f"{ZIP_DIR}/TAXRATES_ZIP5_{st}202603.csv", encoding="utf-8") as f:
            for line in f:
                parts = line.strip().split(",")
                if parts[1] == z:
                    return parts
        raise AssertionError(z)

    for st, z in (("NV", "89101"), ("TX", "75201"), ("WA", "98101")):
        parts = row_of(st, z)
        combined = Decimal(parts[3])  # NV: the 2.25% statewide local sits inside the file's county/special columns
        tax, rows = _tax(imported, rules, state=st, zip=z)
        assert sum(r.tax_rate for r in rows) == combined
        # each row rounds separately; total within half a cent per row of the combined figure
        assert abs(Decimal(tax) - Decimal(10000) * combined) <= Decimal("0.5") * len(rows)


@needs_zip
def test_zip_not_in_state_file_still_checked(imported, rules):
    with pytest.raises(ValidationFailed) as e:
        _tax(imported, rules, state="TX", zip="90001")
    assert e.value.first.pointer.endswith("/customer/address/postal_code")


def test_effective_from_name():
    assert effective_from_name("TAXRATES_ZIP5_CA202603.csv") == date(2026, 3, 1)


def test_zip5_bad_rows_reported_with_file_and_line():
    text = [
        "State,ZipCode,TaxRegionName,EstimatedCombinedRate,StateRate,EstimatedCountyRate,EstimatedCityRate,EstimatedSpecialRate,RiskLevel\n",
        "TX,75201,DALLAS,0.0825,0.0625,0,0.01,0.01,0\n",
        "TX,7520,DALLAS,0.0825,0.0625,0,0.01,0.01,0\n",
        "TX,75202,DALLAS,0.09,0.0625,0,0.01,0.01,0\n",  # parts 8.25%, not 9%: an anomaly of the report, not an error
        "TX,75203,DALLAS,abc,0.0625,0,0.01,0.01,0\n",
    ]
    with pytest.raises(ValidationFailed) as e:
        parse_zip5(text, "TAXRATES_ZIP5_TX202603.csv")
    details = [i.detail for i in e.value.items]
    assert [d.split(":")[1] for d in details] == ["3", "5"]
    assert all(d.startswith("TAXRATES_ZIP5_TX202603.csv:") for d in details)


def test_zip5_bad_header():
    with pytest.raises(ValidationFailed):
        parse_zip5(["a,b,c\n"], "TAXRATES_ZIP5_TX202603.csv")


@needs_sst
def test_sst_rate_files():
    with open(f"{SST_DIR}/MNR2026Q2FEB18.csv", encoding="utf-8") as f:
        rows = parse_sst_rates(f, "MNR2026Q2FEB18.csv")
    state = [r for r in rows if r.type == "state"]
    assert len(state) == 1 and state[0].general_intrastate == Decimal("0.06875")
    assert {r.type for r in rows} == {"state", "county", "city", "special"}
    with open(f"{SST_DIR}/GAR2026Q2FEB19.csv", encoding="utf-8") as f:
        ga = parse_sst_rates(f, "GAR2026Q2FEB19.csv")
    first = ga[0]  # 13,45,13,0.04,0.04,0,0,20110101,29991231
    assert (first.type, first.general_intrastate, first.food_drug_intrastate) == ("state", Decimal("0.04"), Decimal("0"))
    assert first.effective_from == date(2011, 1, 1) and first.effective_to is None


@needs_sst
def test_sst_boundary_sample():
    with open(f"{SST_DIR}/MNB2026Q2FEB18-sample.csv", encoding="utf-8") as f:
        rows = parse_sst_boundaries(f, "MNB2026Q2FEB18-sample.csv")
    assert len(rows) == 100
    mpls = [r for r in rows if r.zip_low == "55401"][0]
    # z,20171001,20190331,...,55401,,55405,,,27,27,053,43000,,,,ST,80004,63
    assert (mpls.zip_high, mpls.county_fips, mpls.place_fips, mpls.specials) == ("55405", "053", "43000", (("80004", "63"),))


def test_sst_bad_rows():
    with pytest.raises(ValidationFailed) as e:
        parse_sst_rates(["27,99,1,0.01,0.01,0,0,20200101,29991231\n", "27,01,1,0.01,0.01,0,0,2020,29991231\n"], "X.csv")
    assert [i.detail.split(":")[1] for i in e.value.items] == ["1", "2"]


def test_sst_secondary_ranges():
    from bench.sst_synthetic import _row

    def line(unit):  # an address record of N OAK1 ST with the secondary columns 10-13 given
        return _row("a", "053", low="1", high="99", parity="O", street="OAK1", zip5="55001", unit=unit)

    rows = parse_sst_boundaries([line(("Suite", "200", "298", "E")), line(("", "A", "F", ""))], "B.csv")
    assert [r.street.unit for r in rows] == [UnitRange("STE", "200", "298", "even"), UnitRange("", "A", "F", "both")]
    with pytest.raises(ValidationFailed) as e:
        parse_sst_boundaries([line(("STE", "", "", "")), line(("STE", "300", "200", "")), line(("STE", "1", "A", "")),
                              line(("STE", "1", "9", "X")), line(("", "", "", ""))], "B.csv")
    assert [i.detail for i in e.value.items] == [
        "B.csv:1: secondary address 'STE' without its low and high", "B.csv:2: bad secondary address range '300'-'200'",
        "B.csv:3: bad secondary address range '1'-'A'", "B.csv:4: bad secondary odd/even indicator 'X'",
    ]


@needs_sst
def test_sst_rates_and_boundaries_feed_the_rate_table(rules):
    from levy.ratefiles.builtin import states_by_code
    from levy.ratefiles.sst import sst_records

    with open(f"{SST_DIR}/MNR2026Q2FEB18.csv", encoding="utf-8") as f:
        rates_rows = parse_sst_rates(f, "MNR2026Q2FEB18.csv")
    with open(f"{SST_DIR}/MNB2026Q2FEB18-sample.csv", encoding="utf-8") as f:
        bounds = parse_sst_boundaries(f, "MNB2026Q2FEB18-sample.csv")
    on = date(2019, 1, 15)  # the sample's boundary records are from 2016-2019
    records = sst_records(rates_rows, bounds, "MNB+MNR", states_by_code(), zip_directory())
    assert records and all(r.state == "MN" for r in records)
    # MNR lines: 27,00,053,0.0015,... ; 27,01,43000,0.0050,... ; 27,63,80004,0.0050,...  -> 0.15% + 0.5% + 0.5%
    # for Minneapolis 55401 (z,20171001,20190331,...,55401,,55405,,,27,27,053,43000,,,,ST,80004,63).
    [row] = [r for r in records if r.zip5 == "55401" and r.covers(on)]
    assert (row.source_kind, row.primary, row.effective_from, row.effective_to) == (
        "official_zip", True, date(2017, 10, 1), date(2019, 3, 31))
    assert [(c.type, c.name, c.rate, c.code, c.authority) for c in row.components] == [
        ("county", "Hennepin County", Decimal("0.0015"), "US-CO-MN-HENNEPIN_COUNTY", "27-00-053"),
        ("city", "Minneapolis", Decimal("0.0050"), "US-CI-MN-MINNEAPOLIS", "27-01-43000"),
        ("special", "Special district 80004", Decimal("0.0050"), "US-SP-MN-80004", "27-63-80004"),
    ]
    table = RateTable.build(load_states(), records, zip_directory())
    res = calculate(CalculationInput(lines=(mkline(state="MN", zip="55401"),), transaction_date=on), table, rules, REG_ALL)
    # 100.00 x (6.875% state -> 687.5 -> 688) + 15 + 50 + 50
    assert res.tax_amount == 688 + 15 + 50 + 50


@needs_zip
def test_puerto_rico_state_ivu_plus_municipal(rules):
    # File row: PR,00601,ADJUNTAS CO,0.115000,0.105000,0.010000,0.000000,0.000000,0.
    # Built-in PR state IVU 10.5% (the file's StateRate column is not used) + the 1% municipal IVU, which the
    # table files as county: the ZIP directory names it "Adjuntas Municipio".
    table = _load("PR")
    res = calculate(CalculationInput(lines=(mkline(state="PR", zip="00601"),), transaction_date=D), table, rules, REG_ALL)
    assert res.tax_amount == 1050 + 100  # 100.00 x 10.5% + 100.00 x 1%
    [li] = res.lines
    assert [(t.jurisdiction_code, t.jurisdiction_name, t.tax_rate) for t in li.taxes] == [
        ("US-ST-PR", "Puerto Rico", Decimal("0.105")),
        ("US-CO-PR-ADJUNTAS_MUNICIPIO", "Adjuntas Municipio", Decimal("0.010000")),
    ]
    assert li.resolution == "zip5"
    # Without a postal code: the state IVU alone, and the row says local taxes were not calculated.
    res = calculate(CalculationInput(lines=(mkline(state="PR"),), transaction_date=D), table, rules, REG_ALL)
    assert res.tax_amount == 1050 and "no postal code" in res.lines[0].taxes[0].detail


def test_zip5_rows_with_no_state_rate_or_parts_not_adding_up_are_left_out_as_anomalies():
    from levy.ratefiles.builtin import states_by_code
    from levy.ratefiles.report import zip_row_anomalies

    text = [
        "State,ZipCode,TaxRegionName,EstimatedCombinedRate,StateRate,EstimatedCountyRate,EstimatedCityRate,EstimatedSpecialRate,RiskLevel\n",
        "SD,57501,PIERRE,0.062,0.042,0,0.02,0,0\n",  # 4.2 + 2 = 6.2: kept
        "SD,57339,CROW CREEK RESERVATION,0.042,0,0,0,0.042,0\n",  # no state rate (SD 4.2% on record): left out
        "TX,75202,DALLAS,0.09,0.0625,0,0.01,0.01,0\n",  # 6.25 + 1 + 1 = 8.25, not 9: left out
    ]
    kept, anomalies = zip_row_anomalies(parse_zip5(text, "TAXRATES_ZIP5_SD202603.csv"), states_by_code())
    assert [r.zip5 for r in kept] == ["57501"]
    assert [(a.kind, a.line, a.where) for a in anomalies] == [
        ("no_state_rate", 3, "ZIP 57339"), ("components_not_summing", 4, "ZIP 75202")]
