"""California's official CDTFA table resolved by the address city, through REST and gRPC on
SQLite and PostgreSQL (issue 17): a ZIP that spans two cities.

A server on a database of its own; the March CA ZIP table and CDTFA's table of 2026-01-01 imported
the way a user does it (``levy rates import``, the raw file as CDTFA publishes it). Expected figures
are worked by hand from the files' lines, quoted below, on a line of 100.00 (10000 minor units):

* CDTFA line 525 ``West Hollywood,0.105,Los Angeles,City``: 6% state (600) + 1.25% statewide local
  (125) + 10.5 - 7.25 = 3.25% district taxes (325) = 1050;
* CDTFA line 263 ``Los Angeles,9.75...E-2,Los Angeles,City``: 600 + 125 + 2.5% (250) = 975;
* ZIP table line 47 ``CA,90046,WEST HOLLYWOOD TOURISM IMPROVEMENT DISTRICT,0.105000,0.060000,0.002500,
  0.007500,0.035000``: the statewide 1.25% is taken from the county 0.25% (all of it) then the special
  3.5% (1% of it): 600 + 125 + city 0.75% (75) + special 2.5% (250) = 1050, the ZIP default.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import grpc
import httpx
import pytest

from levyserver import LevyServer, Tenant, create_tenant
from rates_servers import server_with_rates
from test_calculations import Caller, _Sql, body, line
from levy.v1 import calculations_pb2_grpc as pbg

from shared_data import CDTFA_DIR, ZIP5_DIR  # noqa: E402

MAY = "2026-05-01T12:00:00Z"
CDTFA = CDTFA_DIR / "SalesTaxRates1-1-26.csv"
CA_ZIP = ZIP5_DIR / "TAXRATES_ZIP5_CA202603.csv"


@pytest.fixture(scope="module", params=["sqlite", "postgres"])
def cdtfa_server(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[LevyServer]:
    yield from server_with_rates(request.param, tmp_path_factory, CA_ZIP, CDTFA)


@pytest.fixture(scope="module")
def seller(cdtfa_server: LevyServer) -> Tenant:
    t = create_tenant(cdtfa_server.database_url)
    _Sql(cdtfa_server.database_url).register(t.organization_id, "CA")
    return t


@pytest.fixture(params=["rest", "grpc"])
def calc(request: pytest.FixtureRequest, cdtfa_server: LevyServer) -> Iterator[Caller]:
    with httpx.Client(base_url=cdtfa_server.http_url, timeout=30) as rest, \
            grpc.insecure_channel(cdtfa_server.grpc_target) as ch:
        yield Caller(request.param, rest, pbg.CalculationServiceStub(ch))


def at(calc: Caller, seller: Tenant, **address: str) -> tuple[str, str, list[tuple[str, str, str]], str]:
    item: dict[str, Any] = line("1", "CA", ["GENERAL.TANGIBLE.GOODS"], zip="90046")
    item["customer"]["address"].update(address)
    li = calc(seller.key, body(item, date=MAY))["line_items"][0]
    rows = [(t["jurisdiction_type"], t["tax_rate"], t["tax_amount"]) for t in li["taxes"]]
    return li["tax_amount"], li["resolution"], rows, li["taxes"][-1]["detail"]


def test_a_zip_spanning_two_cities_resolves_by_city(calc: Caller, seller: Tenant) -> None:
    total, level, rows, detail = at(calc, seller, city="West Hollywood")
    assert (total, level) == ("1050", "city")
    assert rows == [("state", "0.06", "600"), ("county", "0.0125", "125"), ("special", "0.0325", "325")]
    assert "resolved by city 'West Hollywood'" in detail and "SalesTaxRates1-1-26.csv line 525" in detail

    total, level, rows, detail = at(calc, seller, city="los angeles")
    assert (total, level) == ("975", "city")
    assert rows == [("state", "0.06", "600"), ("county", "0.0125", "125"), ("special", "0.025", "250")]
    assert "SalesTaxRates1-1-26.csv line 263" in detail


def test_without_a_known_city_the_zip_default_applies_and_says_so(calc: Caller, seller: Tenant) -> None:
    for address in ({}, {"city": "Laurel Canyon"}):
        total, level, rows, detail = at(calc, seller, **address)
        assert (total, level) == ("1050", "zip5")
        assert rows == [("state", "0.06", "600"), ("county", "0.0125", "125"), ("city", "0.0075", "75"),
                        ("special", "0.025", "250")]
        assert "ZIP 90046 default" in detail and "TAXRATES_ZIP5_CA202603.csv line 47" in detail
