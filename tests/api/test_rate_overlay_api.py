"""Imports that never stack tax and rows named after the rate's jurisdiction (issue 31), through REST and
gRPC on SQLite and PostgreSQL: the shared GA SST rate file laid over the March per-ZIP tables, imported the way a
user does it (``levy rates import --strict``, the tables first) before the server starts. Figures worked by hand
from the quoted file lines; a line of 100.00 = 10000 minor units."""

from __future__ import annotations

from collections.abc import Iterator

import grpc
import httpx
import pytest
from levyserver import LevyServer, Tenant, create_tenant
from rates_servers import server_with_rates
from shared_data import SST_DIR, ZIP5_DIR
from test_calculations import Caller, _Sql, body
from test_resolution_api import addr

from levy.v1 import calculations_pb2_grpc as pbg

FILES = (ZIP5_DIR / "TAXRATES_ZIP5_GA202603.csv", ZIP5_DIR / "TAXRATES_ZIP5_NC202603.csv",
         ZIP5_DIR / "TAXRATES_ZIP5_FL202603.csv", SST_DIR / "GAR2026Q2FEB19.csv")
APRIL_15 = "2026-04-15T12:00:00Z"


@pytest.fixture(scope="module", params=["sqlite", "postgres"])
def server(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[LevyServer]:
    yield from server_with_rates(request.param, tmp_path_factory, *FILES, import_flags=("--strict",))


@pytest.fixture(scope="module")
def seller(server: LevyServer) -> Tenant:
    t = create_tenant(server.database_url)
    for state in ("GA", "NC", "FL"):
        _Sql(server.database_url).register(t.organization_id, state)
    return t


@pytest.fixture(params=["rest", "grpc"])
def calc(request: pytest.FixtureRequest, server: LevyServer) -> Iterator[Caller]:
    with httpx.Client(base_url=server.http_url, timeout=30) as rest, \
            grpc.insecure_channel(server.grpc_target) as channel:
        yield Caller(request.param, rest, pbg.CalculationServiceStub(channel))


def rows(calc: Caller, seller: Tenant, state: str, zip5: str) -> tuple[str, list[tuple[str, str, str]]]:
    li = calc(seller.key, body(addr(state, zip5), date=APRIL_15))["line_items"][0]
    return li["tax_amount"], [(t["jurisdiction_type"], t["jurisdiction_name"], t["tax_amount"]) for t in li["taxes"]]


def test_augusta_official_county_rate_replaces_the_tables_tsplost(calc: Caller, seller: Tenant) -> None:
    # TAXRATES_ZIP5_GA202603.csv line 534: GA,30901,AUGUSTA,0.085,0.04,0.035,0,0.01 (county 3.5% + special 1%).
    # GAR2026Q2FEB19.csv line 334: 13,00,245,0.045 (Richmond County) from 2024-04-01: the county rate contains the
    # regional TSPLOST (level_inclusions.json), and 3.5% + 1% = 4.5% confirms it. 4% = 400 + 4.5% = 450: 850
    # (stacked, the table's 1% special on top gave 950).
    assert rows(calc, seller, "GA", "30901") == ("850", [("state", "Georgia", "400"),
                                                         ("county", "Richmond County", "450")])


def test_atlanta_keeps_its_own_district_tax(calc: Caller, seller: Tenant) -> None:
    # Line 233: GA,30303,ATLANTA,0.089,0.04,0.03,0.015,0.004; SST line 165: Fulton 3% = the table's county alone,
    # so the 0.4% district is not part of it: 400 + 300 + 150 + 40 = 890.
    total, found = rows(calc, seller, "GA", "30303")
    assert total == "890" and [t for _, _, t in found] == ["400", "300", "150", "40"]


def test_rows_name_the_county_of_the_rate(calc: Caller, seller: Tenant) -> None:
    # TAXRATES_ZIP5_NC202603.csv line 892: NC,28607,WILKES,0.07,0.0475,0.0225 (Boone is in Watauga County, the
    # table's region is Wilkes): 4.75% = 475, Wilkes County 2.25% = 225.
    assert rows(calc, seller, "NC", "28607") == ("700", [("state", "North Carolina", "475"),
                                                         ("county", "Wilkes County", "225")])
    # TAXRATES_ZIP5_FL202603.csv line 51: FL,32091,CLAY,0.075,0.06,0.015 (Starke, Bradford County): 600 + 150.
    assert rows(calc, seller, "FL", "32091") == ("750", [("state", "Florida", "600"),
                                                         ("county", "Clay County", "150")])


def test_the_liability_report_groups_by_the_county_of_the_rate(server: LevyServer, seller: Tenant) -> None:
    # A finalized 100.00 sale at Boone 28607 on 2026-04-15: 475 to North Carolina and 225 to Wilkes County (the
    # county whose 2.25% the table's line 892 gives), nothing to Watauga County. Through REST (the rows' names and
    # codes are the calculation's, tested above on both transports).
    sale = {"type": "sale", "status": "finalized", "transaction_date": APRIL_15,
            "line_items": [addr("NC", "28607")]}
    with httpx.Client(base_url=server.http_url, timeout=30) as http:
        r = http.post("/transactions", json=sale, headers={"X-API-Key": seller.key})
        assert r.status_code == 200, r.text
        r = http.get("/reports/liability", params={"from": "2026-04-01", "to": "2026-04-30"},
                     headers={"X-API-Key": seller.admin_key})
        assert r.status_code == 200, r.text
    found = {j["jurisdiction"]: j["filing_tax_amount"] for j in r.json()["jurisdictions"]}
    assert found["US-CO-NC-WILKES_COUNTY"] == "225" and found["US-ST-NC"] == "475"
    assert "US-CO-NC-WATAUGA_COUNTY" not in found


def test_a_region_that_names_no_county_or_city_says_the_names_are_the_directorys(calc: Caller, seller: Tenant) -> None:
    # TAXRATES_ZIP5_NC202603.csv line 2: NC,27006,BERMUDA RUN,0.0675,0.0475,0.02 (the ZIP directory's Advance,
    # Davie County; the region, Bermuda Run, is no county of North Carolina and no place the directory knows there):
    # 4.75% = 475, the 2% county rate = 200 under the directory's Davie County, and every row says the name is the
    # directory's, not the table's.
    assert rows(calc, seller, "NC", "27006") == ("675", [("state", "North Carolina", "475"),
                                                         ("county", "Davie County", "200")])
    li = calc(seller.key, body(addr("NC", "27006"), date=APRIL_15))["line_items"][0]
    assert all("region BERMUDA RUN (per-ZIP table): no city the ZIP directory knows in the state and no county of "
               "the state: the county rate is named after the ZIP directory's Davie County" in t["detail"]
               for t in li["taxes"])
