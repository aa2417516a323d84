"""Sourcing (issue 19): synthetic local records and hand-worked cases shared by the
unit tests (tests/unit/tax/test_sourcing.py) and the API tests (tests/api/test_sourcing_api.py).

The records are synthetic (rates chosen to tell origin from destination), at real ZIP
codes of each state so that the ZIP directory agrees. Every figure below is worked by
hand for a line of 100.00 (10000 cents): tax = rate x 10000, ROUND_HALF_UP per row.
State rates (levy/data/tax/state_rates.json): TX 6.25%, CA 6% + statewide local 1.25%,
AZ 5.6%, IL 6.25%, MO 4.225%, NM 4.875%, OH 5.75%, PA 6%, TN 7%, UT 4.85% + statewide
local 1.25%, VA 4.3% + statewide local 1%, MS 7%.
"""

from __future__ import annotations

from datetime import date
from decimal import Decimal
from typing import Any

from levy.domain.tax.local_rates import Component, LocalRecord

DAY = "2026-05-01T12:00:00Z"
SOURCE = "sourcing-synthetic.csv"


def _rec(state: str, zip5: str, *parts: tuple[str, str, str, str]) -> LocalRecord:
    comps = tuple(Component(kind, name, Decimal(rate), code) for kind, name, rate, code in parts)
    return LocalRecord(state=state, zip5=zip5, components=comps, effective_from=date(2020, 1, 1), effective_to=None,
                       source=SOURCE, source_kind="official_zip", primary=True, line=1)


# (state, zip, components): (type, name, rate, code)
RECORDS = [
    _rec("TX", "78701", ("city", "Austin", "0.01", "US-CI-TX-AUSTIN"),
         ("special", "Austin MTA", "0.01", "US-SP-TX-AUSTIN_MTA")),
    _rec("TX", "77002", ("city", "Houston", "0.01", "US-CI-TX-HOUSTON"),
         ("special", "Houston MTA", "0.01", "US-SP-TX-HOUSTON_MTA")),
    _rec("TX", "78610", ("city", "Buda", "0.01", "US-CI-TX-BUDA")),
    _rec("TX", "77301", ("county", "Montgomery County", "0.005", "US-CO-TX-MONTGOMERY_COUNTY"),
         ("city", "Conroe", "0.015", "US-CI-TX-CONROE"),
         ("special", "Montgomery County ESD", "0.01", "US-SP-TX-MONTGOMERY_ESD")),
    _rec("CA", "94103", ("special", "San Francisco district taxes", "0.01375", "US-SP-CA-SAN_FRANCISCO_DISTRICTS")),
    _rec("CA", "91302", ("city", "Calabasas", "0.0025", "US-CI-CA-CALABASAS"),
         ("special", "Los Angeles County district taxes", "0.0225", "US-SP-CA-LOS_ANGELES_COUNTY_DISTRICTS")),
    _rec("AZ", "85004", ("county", "Maricopa County", "0.007", "US-CO-AZ-MARICOPA_COUNTY"),
         ("city", "Phoenix", "0.023", "US-CI-AZ-PHOENIX")),
    _rec("AZ", "85701", ("county", "Pima County", "0.005", "US-CO-AZ-PIMA_COUNTY"),
         ("city", "Tucson", "0.026", "US-CI-AZ-TUCSON")),
    _rec("IL", "60601", ("county", "Cook County", "0.0175", "US-CO-IL-COOK_COUNTY"),
         ("city", "Chicago", "0.0125", "US-CI-IL-CHICAGO"), ("special", "RTA", "0.01", "US-SP-IL-RTA")),
    _rec("IL", "62701", ("city", "Springfield", "0.025", "US-CI-IL-SPRINGFIELD")),
    _rec("MO", "63101", ("city", "St. Louis", "0.05", "US-CI-MO-ST_LOUIS")),
    _rec("MO", "64105", ("county", "Jackson County", "0.0125", "US-CO-MO-JACKSON_COUNTY"),
         ("city", "Kansas City", "0.03", "US-CI-MO-KANSAS_CITY")),
    _rec("NM", "87102", ("city", "Albuquerque", "0.025", "US-CI-NM-ALBUQUERQUE")),
    _rec("NM", "87501", ("city", "Santa Fe", "0.035", "US-CI-NM-SANTA_FE")),
    _rec("OH", "43215", ("county", "Franklin County", "0.0125", "US-CO-OH-FRANKLIN_COUNTY")),
    _rec("OH", "45202", ("county", "Hamilton County", "0.015", "US-CO-OH-HAMILTON_COUNTY")),
    _rec("PA", "19103", ("city", "Philadelphia", "0.02", "US-CI-PA-PHILADELPHIA")),
    _rec("PA", "15222", ("county", "Allegheny County", "0.01", "US-CO-PA-ALLEGHENY_COUNTY")),
    _rec("TN", "37203", ("county", "Davidson County", "0.0225", "US-CO-TN-DAVIDSON_COUNTY")),
    _rec("TN", "38103", ("county", "Shelby County", "0.0225", "US-CO-TN-SHELBY_COUNTY"),
         ("city", "Memphis", "0.005", "US-CI-TN-MEMPHIS")),
    _rec("UT", "84101", ("special", "Salt Lake County options", "0.011", "US-SP-UT-SALT_LAKE_OPTIONS")),
    _rec("UT", "84601", ("city", "Provo", "0.006", "US-CI-UT-PROVO")),
    _rec("VA", "23219", ("special", "Central Virginia regional", "0.007", "US-SP-VA-CENTRAL_VIRGINIA")),
    _rec("VA", "23185", ("special", "Historic Triangle", "0.017", "US-SP-VA-HISTORIC_TRIANGLE")),
    _rec("MS", "39201", ("city", "Jackson", "0.01", "US-CI-MS-JACKSON")),
    _rec("MS", "38801", ("city", "Tupelo", "0.0025", "US-CI-MS-TUPELO")),
]
STATES = sorted({r.state for r in RECORDS})


def address(state: str, zip5: str) -> dict[str, str]:
    return {"state": state, "postal_code": zip5, "country": "US"}


# Houston (no ship-from, or shipped from another state): TX 625 + Houston city 1% = 100 + MTA 1% = 100.
HOUSTON_ROWS = [("US-ST-TX", "625", ""), ("US-CI-TX-HOUSTON", "100", ""), ("US-SP-TX-HOUSTON_MTA", "100", "")]

# (name, ship-from (state, zip), delivery (state, zip), line sourcing, total, [(code, tax, row sourcing)])
INTRASTATE: list[tuple[str, tuple[str, str], tuple[str, str], str, str, list[tuple[str, str, str]]]] = [
    # Austin -> Houston: Austin's city 1% + MTA 1% = the 2% cap, nothing added: 625 + 100 + 100.
    ("TX origin at the cap", ("TX", "78701"), ("TX", "77002"), "mixed", "825",
     [("US-ST-TX", "625", "origin"), ("US-CI-TX-AUSTIN", "100", "origin"), ("US-SP-TX-AUSTIN_MTA", "100", "origin")]),
    # Buda (city 1%) -> Houston: Houston's city tax is not added (a city tax was collected at Buda); its MTA 1%
    # is (1% + 1% = 2% <= 2%): 625 + 100 + 100.
    ("TX origin below 2%, destination added to the cap", ("TX", "78610"), ("TX", "77002"), "mixed", "825",
     [("US-ST-TX", "625", "origin"), ("US-CI-TX-BUDA", "100", "origin"),
      ("US-SP-TX-HOUSTON_MTA", "100", "destination")]),
    # Buda (city 1%) -> Conroe: city 1.5% not added (city at origin); county 0.5% added (1.5%); ESD 1% left
    # out (2.5% > 2%): 625 + 100 + 50 = 775.
    ("TX destination county added, district over the cap", ("TX", "78610"), ("TX", "77301"), "mixed", "775",
     [("US-ST-TX", "625", "origin"), ("US-CO-TX-MONTGOMERY_COUNTY", "50", "destination"),
      ("US-CI-TX-BUDA", "100", "origin")]),
    # San Francisco -> Calabasas: state 6% = 600 and statewide 1.25% = 125 at origin; Calabasas's district taxes
    # (city 0.25% = 25, county districts 2.25% = 225) at destination; SF's districts not charged: 975.
    ("CA statewide at origin, districts at destination", ("CA", "94103"), ("CA", "91302"), "mixed", "975",
     [("US-ST-CA", "600", "origin"), ("US-ST-CA-LOCAL", "125", "origin"), ("US-CI-CA-CALABASAS", "25", "destination"),
      ("US-SP-CA-LOS_ANGELES_COUNTY_DISTRICTS", "225", "destination")]),
    # Phoenix -> Tucson: 560 + Maricopa 0.7% = 70 + Phoenix 2.3% = 230: 860.
    ("AZ origin", ("AZ", "85004"), ("AZ", "85701"), "origin", "860",
     [("US-ST-AZ", "560", "origin"), ("US-CO-AZ-MARICOPA_COUNTY", "70", "origin"), ("US-CI-AZ-PHOENIX", "230", "origin")]),
    # Chicago -> Springfield: 625 + Cook 1.75% = 175 + Chicago 1.25% = 125 + RTA 1% = 100: 1025.
    ("IL origin", ("IL", "60601"), ("IL", "62701"), "origin", "1025",
     [("US-ST-IL", "625", "origin"), ("US-CO-IL-COOK_COUNTY", "175", "origin"), ("US-CI-IL-CHICAGO", "125", "origin"),
      ("US-SP-IL-RTA", "100", "origin")]),
    # St. Louis -> Kansas City: 4.225% = 422.5 -> 423 + St. Louis 5% = 500: 923.
    ("MO origin", ("MO", "63101"), ("MO", "64105"), "origin", "923",
     [("US-ST-MO", "423", "origin"), ("US-CI-MO-ST_LOUIS", "500", "origin")]),
    # New Mexico is destination since 1 July 2021: Albuquerque -> Santa Fe: 4.875% = 487.5 -> 488 + Santa Fe
    # 3.5% = 350: 838.
    ("NM destination since 2021-07-01", ("NM", "87102"), ("NM", "87501"), "destination", "838",
     [("US-ST-NM", "488", "destination"), ("US-CI-NM-SANTA_FE", "350", "destination")]),
    # Columbus -> Cincinnati: 575 + Franklin 1.25% = 125: 700.
    ("OH origin", ("OH", "43215"), ("OH", "45202"), "origin", "700",
     [("US-ST-OH", "575", "origin"), ("US-CO-OH-FRANKLIN_COUNTY", "125", "origin")]),
    # Philadelphia -> Pittsburgh: 600 + Philadelphia 2% = 200: 800.
    ("PA origin", ("PA", "19103"), ("PA", "15222"), "origin", "800",
     [("US-ST-PA", "600", "origin"), ("US-CI-PA-PHILADELPHIA", "200", "origin")]),
    # Nashville -> Memphis: 700 + Davidson 2.25% = 225: 925.
    ("TN origin", ("TN", "37203"), ("TN", "38103"), "origin", "925",
     [("US-ST-TN", "700", "origin"), ("US-CO-TN-DAVIDSON_COUNTY", "225", "origin")]),
    # Salt Lake City -> Provo: 4.85% = 485 + statewide 1.25% = 125 + SLC options 1.1% = 110: 720.
    ("UT origin", ("UT", "84101"), ("UT", "84601"), "origin", "720",
     [("US-ST-UT", "485", "origin"), ("US-ST-UT-LOCAL", "125", "origin"),
      ("US-SP-UT-SALT_LAKE_OPTIONS", "110", "origin")]),
    # Richmond -> Williamsburg: 4.3% = 430 + statewide 1% = 100 + Central Virginia 0.7% = 70: 600.
    ("VA origin", ("VA", "23219"), ("VA", "23185"), "origin", "600",
     [("US-ST-VA", "430", "origin"), ("US-ST-VA-LOCAL", "100", "origin"),
      ("US-SP-VA-CENTRAL_VIRGINIA", "70", "origin")]),
    # Mississippi is destination here: Jackson -> Tupelo: 700 + Tupelo 0.25% = 25: 725.
    ("MS destination", ("MS", "39201"), ("MS", "38801"), "destination", "725",
     [("US-ST-MS", "700", "destination"), ("US-CI-MS-TUPELO", "25", "destination")]),
]

# Each origin state's ship-from to Houston: interstate, destination-sourced (the Houston rows, sourcing destination).
INTERSTATE = [(name.split()[0], origin) for name, origin, *_ in INTRASTATE if not name.startswith("TX")]


def goods_line(delivery: tuple[str, str], ship_from: dict[str, Any] | None = None, id: str = "1") -> dict[str, Any]:
    out: dict[str, Any] = {"id": id, "quantity": "1", "unit_price": "10000",
                           "product": {"tax_attributes": ["GENERAL.TANGIBLE.GOODS"]},
                           "customer": {"address": address(*delivery)}}
    if ship_from is not None:
        out["ship_from"] = ship_from
    return out
