"""Names that belong to the rate (issue 31): a per-ZIP table row is named after the jurisdiction whose rate it
applies, from the table's region, not after the ZIP directory's guess; where the region name is all the table
gives, the rows say so. A small synthetic per-ZIP file (the rows as in the March 2026 tables) parsed as
``levy rates import`` parses it; figures worked by hand on a line of 100.00 = 10000 minor units."""

from __future__ import annotations

from datetime import date

import pytest
from tax_helpers import REG_ALL, mkline

from levy.domain.tax.engine import calculate
from levy.domain.tax.model import CalculationInput
from levy.domain.tax.rate_table import RateTable
from levy.ratefiles.builtin import load_states, zip5_records, zip_directory
from levy.ratefiles.zip5 import parse_zip5

HEADER = ("State,ZipCode,TaxRegionName,EstimatedCombinedRate,StateRate,EstimatedCountyRate,EstimatedCityRate,"
          "EstimatedSpecialRate,RiskLevel\n")
ROWS = [
    "NC,28607,WILKES,0.070000,0.047500,0.022500,0.000000,0.000000,0\n",  # Boone, Watauga County in the directory
    "FL,32091,CLAY,0.075000,0.060000,0.015000,0.000000,0.000000,0\n",  # Starke, Bradford County in the directory
    "AL,35004,LEEDS,0.100000,0.040000,0.000000,0.040000,0.020000,0\n",  # Moody, St. Clair County in the directory
    "TX,78701,AUSTIN,0.082500,0.062500,0.000000,0.010000,0.010000,0\n",  # region = the directory's city
    "TN,38103,PEABODY HOTEL TOURISM DEVELOPMENT ZONE,0.097500,0.070000,0.022500,0.005000,0.000000,0\n",  # Memphis
]


@pytest.fixture(scope="module")
def table() -> RateTable:
    rows = []
    for text in ROWS:  # one file per state, as the tables come
        rows += parse_zip5([HEADER, text], f"TAXRATES_ZIP5_{text[:2]}202603.csv")
    return RateTable.build(load_states(), zip5_records(rows), zip_directory())


def rows_of(table, rules, state, zip5):  # type: ignore[no-untyped-def]
    res = calculate(CalculationInput(lines=(mkline("1", state, zip=zip5),), transaction_date=date(2026, 4, 15)),
                    table, rules, REG_ALL)
    return [(r.jurisdiction_type, r.jurisdiction_name, r.jurisdiction_code, r.tax_amount) for r in res.lines[0].taxes], \
        res.lines[0].taxes


def test_boone_and_starke_name_the_county_of_the_rate(table, rules):
    # 28607: 4.75% = 475 to North Carolina, 2.25% = 225 to Wilkes County (the table's region), not Watauga.
    found, taxes = rows_of(table, rules, "NC", "28607")
    assert found == [("state", "North Carolina", "US-ST-NC", 475),
                     ("county", "Wilkes County", "US-CO-NC-WILKES_COUNTY", 225)]
    assert "region WILKES (per-ZIP table)" in taxes[1].detail and "Watauga County" in taxes[1].detail
    # 32091: 6% = 600 to Florida, 1.5% = 150 to Clay County, not Bradford.
    found, _ = rows_of(table, rules, "FL", "32091")
    assert found == [("state", "Florida", "US-ST-FL", 600), ("county", "Clay County", "US-CO-FL-CLAY_COUNTY", 150)]


def test_a_city_rate_of_another_region_is_named_after_the_region(table, rules):
    # 35004 (the directory's Moody): region LEEDS, no county of Alabama: its 4% city rate is the region's:
    # "Leeds" 400, not "Moody"; state 4% = 400, the region's special district 2% = 200: 1000.
    found, taxes = rows_of(table, rules, "AL", "35004")
    assert found == [("state", "Alabama", "US-ST-AL", 400), ("city", "Leeds", "US-CI-AL-LEEDS", 400),
                     ("special", "Leeds special district", "US-SP-AL-LEEDS", 200)]
    assert all("region LEEDS (per-ZIP table)" in t.detail and "city Moody" in t.detail for t in taxes)


def test_a_region_that_is_no_place_leaves_the_city_named_and_says_so(table, rules):
    # 38103 Memphis: the region is a district, no place of Tennessee the ZIP directory knows: the 0.5% city rate
    # keeps the directory's city (Memphis) and every row says the region is all the table gives. 7% = 700, Shelby County 2.25% = 225,
    # Memphis 0.5% = 50.
    found, taxes = rows_of(table, rules, "TN", "38103")
    assert [(t, n, a) for t, n, _, a in found] == [("state", "Tennessee", 700), ("county", "Shelby County", 225),
                                                   ("city", "Memphis", 50)]
    assert all("region PEABODY HOTEL TOURISM DEVELOPMENT ZONE (per-ZIP table): no city the ZIP directory knows"
               in t.detail for t in taxes)


def test_a_region_that_is_the_directorys_city_says_nothing_more(table, rules):
    # 78701: region AUSTIN is the directory's city: 625 + Austin 100 + special 100, no region note.
    found, taxes = rows_of(table, rules, "TX", "78701")
    assert [(t, n, a) for t, n, _, a in found] == [("state", "Texas", 625), ("city", "Austin", 100),
                                                   ("special", "Austin special district", 100)]
    assert not any("per-ZIP table)" in t.detail for t in taxes)


UNMAPPED = [
    # TAXRATES_ZIP5_TX202603.csv line 269: Bogata (Red River County in the directory); the region is a crime
    # control district, no county of Texas and no place the directory knows there.
    "TX,75417,BOGATA CRIME CONTROL & PREVENTION,0.082500,0.062500,0.005000,0.010000,0.005000,0\n",
    # TAXRATES_ZIP5_NC202603.csv line 2: Advance (Davie County in the directory); region BERMUDA RUN, a town the
    # directory does not list: the 2% county rate only.
    "NC,27006,BERMUDA RUN,0.067500,0.047500,0.020000,0.000000,0.000000,0\n",
]


@pytest.fixture(scope="module")
def unmapped_table() -> RateTable:
    rows = []
    for text in UNMAPPED:
        rows += parse_zip5([HEADER, text], f"TAXRATES_ZIP5_{text[:2]}202603.csv")
    return RateTable.build(load_states(), zip5_records(rows), zip_directory())


def test_a_region_that_names_no_county_or_city_says_every_name_rests_on_the_directory(unmapped_table, rules):
    # 75417: 6.25% = 625, Red River County 0.5% = 50, Bogata 1% = 100, the region's district 0.5% = 50: 825. The
    # county and city names are the directory's guess, which the table does not confirm: every row says so.
    found, taxes = rows_of(unmapped_table, rules, "TX", "75417")
    assert [(t, n, a) for t, n, _, a in found] == [("state", "Texas", 625), ("county", "Red River County", 50),
                                                   ("city", "Bogata", 100),
                                                   ("special", "Bogata Crime Control & Prevention special district",
                                                    50)]
    note = ("region BOGATA CRIME CONTROL & PREVENTION (per-ZIP table): no city the ZIP directory knows in the state "
            "and no county of the state: the county rate is named after the ZIP directory's Red River County, the "
            "city rate is named after the ZIP directory's city Bogata, the special district rate is named after "
            "the region")
    assert all(note in t.detail for t in taxes)


def test_a_county_rate_under_an_unknown_region_says_whose_name_it_carries(unmapped_table, rules):
    # 27006: 4.75% = 475, the 2% county rate = 200 under the directory's Davie County, and the rows say the name
    # is the directory's (before, nothing said so although the region, Bermuda Run, is no county).
    found, taxes = rows_of(unmapped_table, rules, "NC", "27006")
    assert [(t, n, a) for t, n, _, a in found] == [("state", "North Carolina", 475), ("county", "Davie County", 200)]
    assert all("region BERMUDA RUN (per-ZIP table): no city the ZIP directory knows in the state and no county of "
               "the state: the county rate is named after the ZIP directory's Davie County" in t.detail for t in taxes)
    assert not any("city rate" in t.detail for t in taxes)
