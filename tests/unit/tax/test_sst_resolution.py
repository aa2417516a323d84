"""SST boundary records resolved (issue 17): the real MN rate file and boundary
sample (read by path; the sample's records are dated 2016-2019), and synthetic
files in the official layout with 100,000 ZIP+4 and 100,000 address records.
Expected figures are worked by hand from the files' lines (quoted)."""

from __future__ import annotations

import os
from datetime import date
from decimal import Decimal

import pytest
from tax_helpers import REG_ALL

from bench import sst_synthetic
from levy.domain.tax.engine import calculate
from levy.domain.tax.model import Address, CalculationInput, LineInput
from levy.domain.tax.rate_table import RateTable
from levy.ratefiles.builtin import load_states, states_by_code, zip_directory
from levy.ratefiles.sst import parse_sst_boundaries, parse_sst_rates, sst_records
from levy.ratefiles.zip5 import parse_zip5
from levy.ratefiles.builtin import zip5_records

from shared_data import SST_DIR, ZIP5_DIR  # noqa: E402

ON = date(2019, 2, 1)  # covered by every record of the sample (they end 2019-03-31)
SOURCE = "MNR2026Q2FEB18.csv+MNB2026Q2FEB18-sample.csv"
needs_sst = pytest.mark.skipif(not os.path.isdir(SST_DIR), reason=f"SST sample files not present at {SST_DIR}")


def tax(table: RateTable, rules, on: date, **address: str):  # type: ignore[no-untyped-def]
    line = LineInput(id="1", quantity=Decimal(1), unit_price=10000, category="GENERAL.TANGIBLE.GOODS",
                     attributes=(), address=Address(state="MN", **address), pointer="/line_items/0")
    res = calculate(CalculationInput(lines=(line,), transaction_date=on), table, rules, REG_ALL)
    [li] = res.lines
    return res.tax_amount, li.resolution, [(t.jurisdiction_type, t.tax_rate) for t in li.taxes], li.taxes


def _sample_records():  # type: ignore[no-untyped-def]
    with open(SST_DIR / "MNR2026Q2FEB18.csv", encoding="utf-8") as f:
        rates = parse_sst_rates(f, "MNR2026Q2FEB18.csv")
    with open(SST_DIR / "MNB2026Q2FEB18-sample.csv", encoding="utf-8") as f:
        bounds = parse_sst_boundaries(f, "MNB2026Q2FEB18-sample.csv")
    return sst_records(rates, bounds, SOURCE, states_by_code(), zip_directory())


@pytest.fixture(scope="module")
def mn() -> RateTable:
    if not os.path.isdir(SST_DIR):
        pytest.skip(f"SST sample files not present at {SST_DIR}")
    return RateTable.build(load_states(), _sample_records(), zip_directory())


# State 6.875% of 100.00 = 687.5 -> 688 on every line below.
@needs_sst
@pytest.mark.parametrize(("postal", "expected", "rows"), [
    # line 87: 4,20171001,20190331,...,55101,2300,55101,2300,,27,27,037 -> Dakota County (MNR 27,00,037,0.0025): 25
    ("55101-2300", 688 + 25, [("state", "0.06875"), ("county", "0.0025")]),
    # line 88: 4,20180101,...,55101,2301,55101,2316,,27,27,123,58000 -> Ramsey 0.5% (27,00,123 from 20171001)
    # and Saint Paul 0.5% (27,01,58000,0.0050 until 20240331): 50 + 50
    ("551012301", 688 + 50 + 50, [("state", "0.06875"), ("county", "0.0050"), ("city", "0.0050")]),
    # 4,20161001,20190331,...,55012,0011,55013,9999,,27,27,025: the range's second ZIP, Chisago 0.5% (27,00,025
    # from 20160401): 50
    ("55013-0005", 688 + 50, [("state", "0.06875"), ("county", "0.0050")]),
])
def test_zip4_rows_of_the_sample(mn: RateTable, rules, postal: str, expected: int, rows) -> None:  # type: ignore[no-untyped-def]
    total, level, got, taxes = tax(mn, rules, ON, postal_code=postal)
    assert (total, level) == (expected, "zip4")
    assert got == [(t, Decimal(r)) for t, r in rows]
    assert taxes[0].detail.startswith(f"resolved by ZIP+4 range {postal[:5]}-")
    assert f"(official_address: {SOURCE} line" in taxes[0].detail


@needs_sst
def test_sample_names_and_authorities(mn: RateTable) -> None:
    res = mn.resolve(Address(state="MN", postal_code="55101-2301"), ON)
    assert [(r.code, r.name) for r in res.rows[1:]] == [
        ("US-CO-MN-RAMSEY_COUNTY", "Ramsey County"), ("US-CI-MN-SAINT_PAUL", "Saint Paul")]
    # Code 037 is Dakota County, although 55101 (Ramsey) has a few 037 ZIP+4 records: names come from the ZIPs
    # where a code is the main one (55033 Hastings, 55044 Lakeville, 55075 South Saint Paul).
    assert mn.resolve(Address(state="MN", postal_code="55101-2300"), ON).rows[1].name == "Dakota County"


@needs_sst
def test_zip_default_of_the_sample(mn: RateTable, rules) -> None:  # type: ignore[no-untyped-def]
    # 55101 without +4: z,20161001,20190331,...,55092,,55102,,,27,27 (no county, no place): state only, official.
    total, level, rows, taxes = tax(mn, rules, ON, postal_code="55101")
    assert (total, level, rows) == (688, "zip5", [("state", Decimal("0.06875"))])
    assert "send the city or ZIP+4 for a more precise rate" in taxes[0].detail
    # 55012-0005 is below the 4 record's 0011: the z record 55012..55013 (county 025): 688 + 50.
    assert tax(mn, rules, ON, postal_code="55012-0005")[:2] == (688 + 50, "zip5")


@needs_sst
def test_past_date_after_a_newer_import(rules) -> None:  # type: ignore[no-untyped-def]
    # The SST sample (2016-2019) imported first, the March 2026 ZIP table after it: each date uses its rows.
    with open(ZIP5_DIR / "TAXRATES_ZIP5_MN202603.csv", encoding="utf-8") as f:
        estimated = zip5_records(parse_zip5(f, "TAXRATES_ZIP5_MN202603.csv"))
    table = RateTable.build(load_states(), [*_sample_records(), *estimated], zip_directory())
    # 2019: the sample's 4 record for 55101-2301 (Ramsey 0.5% + Saint Paul 0.5%).
    assert tax(table, rules, ON, postal_code="55101-2301")[:2] == (688 + 50 + 50, "zip4")
    # 2026-03-15: MN,55101,SAINT PAUL,0.098750,0.068750,0,0.015,0.015 -> city 1.5% + special 1.5% = 150 + 150.
    assert tax(table, rules, date(2026, 3, 15), postal_code="55101-2301")[:2] == (688 + 150 + 150, "zip5")


# ------------------------------------------------------------ synthetic files
N = 100_000


@pytest.fixture(scope="module")
def synthetic() -> RateTable:
    rates = parse_sst_rates(sst_synthetic.rate_lines(), "MNR2026Q2SYN.csv")
    bounds = parse_sst_boundaries(sst_synthetic.boundary_lines(N, N), "MNB2026Q2SYN.csv")
    assert len(bounds) == 2 * N
    records = sst_records(rates, bounds, "SYN", states_by_code(), zip_directory())
    # 2N boundary records, and a ZIP candidate per county for each of the 2,000 ZIPs (55001..57000: ZIP+4
    # record i in 55001 + i // 50, address pair k in 55001 + k // 25), each in counties 053 and 025: 4,000.
    assert len(records) == 2 * N + 4000
    assert {r.source_kind for r in records if r.zip5 and (r.plus4_low or r.street)} == {"official_address"}
    assert sum(1 for r in records if r.source_kind == "official_zip") == 4000
    return RateTable.build(load_states(), records, zip_directory())


SYN_ON = date(2026, 5, 1)


@pytest.mark.parametrize(("k", "line1", "county_tax"), [
    (7, "101 N Oak7 St", 15),  # odd side: county 053 at 0.15%
    (7, "102 North OAK7 Street", 50),  # even side: county 025 at 0.5%
    (7, "999 n oak7 st apt 3", 15),  # the odd side's last number
    (7, "998 N Oak7", 50),  # suffix left out
    (49_999, "1 N OAK49999 ST", 15),  # the last pair in the file (k = N / 2 - 1, ZIP 55001 + 49999 // 25 = 57000)
    (1234, "2 N OAK1234 ST", 50),
])
def test_synthetic_street_sides(synthetic: RateTable, rules, k: int, line1: str, county_tax: int) -> None:  # type: ignore[no-untyped-def]
    zip5, _ = sst_synthetic.street_of(k)
    total, level, rows, taxes = tax(synthetic, rules, SYN_ON, postal_code=zip5, line1=line1)
    assert (total, level) == (688 + county_tax, "address")
    parity = "odd" if county_tax == 15 else "even"
    assert f"resolved by street range {'1-999' if parity == 'odd' else '2-998'} ({parity}) N OAK{k} ST in ZIP {zip5}" \
        in taxes[0].detail


@pytest.mark.parametrize(("i", "plus4", "county_tax"), [
    (3, "0650", 50),  # record 3: ZIP 55001, 0600..0799, i odd: county 025 at 0.5%
    (4, "0900", 15),  # record 4: 0800..0999, i even: county 053 at 0.15%
    (N - 1, "9999", 50),  # the last record: ZIP 55001 + 99999 // 50 = 56000, 9800..9999, odd
])
def test_synthetic_zip4(synthetic: RateTable, rules, i: int, plus4: str, county_tax: int) -> None:  # type: ignore[no-untyped-def]
    zip5, low, high, _ = sst_synthetic.zip4_of(i)
    assert low <= plus4 <= high
    total, level, _, taxes = tax(synthetic, rules, SYN_ON, postal_code=f"{zip5}-{plus4}")
    assert (total, level) == (688 + county_tax, "zip4")
    assert taxes[0].detail.startswith(f"resolved by ZIP+4 range {zip5}-{low}..{zip5}-{high}")


def test_synthetic_misses(synthetic: RateTable, rules) -> None:  # type: ignore[no-untyped-def]
    zip5, _ = sst_synthetic.street_of(7)
    # Beyond both sides' ranges: the ZIP's default among its two county candidates (55001 has 50 records
    # in county 053 and 50 in 025; on the tie the first seen, record 0 in 053 at 0.15%: 15).
    total, level, rows, taxes = tax(synthetic, rules, SYN_ON, postal_code=zip5, line1="1001 N Oak7 St")
    assert (total, level, rows) == (703, "zip5", [("state", Decimal("0.06875")), ("county", Decimal("0.0015"))])
    assert "ZIP 55001 default among 2 candidates (official_zip: SYN)" in taxes[0].detail
    # Outside the records' window (2026-04-01..2026-06-30).
    assert tax(synthetic, rules, date(2026, 7, 1), postal_code=zip5, line1="101 N Oak7 St")[:2] == (688, "state")


def test_a_zip_in_two_counties_has_a_candidate_for_each() -> None:
    """Issue 33: the boundary records of a ZIP without a z record give one ZIP candidate per county."""
    rates = parse_sst_rates(sst_synthetic.rate_lines(), "MNR2026Q2SYN.csv")
    # 55001 only: ZIP+4 records 0..2 (counties 053, 025, 053) and one address pair (053 odd, 025 even).
    bounds = parse_sst_boundaries(sst_synthetic.boundary_lines(3, 2), "MNB2026Q2SYN.csv")
    records = sst_records(rates, bounds, "SYN", states_by_code(), zip_directory())
    zip_level = [r for r in records if r.plus4_low is None and r.street is None]
    # 053: 2 ZIP+4 + 1 address record = 3, 025: 1 + 1 = 2: 053 is the primary candidate.
    assert [(r.zip5, r.components[0].authority, r.components[0].rate, r.primary) for r in zip_level] == [
        ("55001", "27-00-053", Decimal("0.0015"), True), ("55001", "27-00-025", Decimal("0.0050"), False)]
    assert {r.source_kind for r in zip_level} == {"official_zip"} and zip_level[0].county == zip_level[0].components[0].name
