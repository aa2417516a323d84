"""Taxability of states MT..WY, DC and PR (issue 18) through POST /calculations over REST and gRPC, on SQLite
and PostgreSQL: the built-in rules reach callers with their names, details and dated entries.

Every figure is worked out by hand from the cited source, state level only (no postal code; the statewide local
portion of VA applies): tax = ROUND_HALF_UP(base x rate) per row, in cents."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from levyserver import LevyServer, Tenant, create_tenant, start_server
from test_calculations import ALL_STATES, Caller, _Sql, assert_consistent, body, line

# (id, state, tax_attributes, price, transaction date, expected tax, rule-name fragment, source)
CASES = [
    ("NY candy", "NY", ["FOOD.CANDY.GENERAL"], 1000, None, 40, "Candy", "20 NYCRR 528.2"),  # 10.00 x 4%
    ("NY bottled water", "NY", ["FOOD.GROCERY.BOTTLED_WATER"], 150, None, 6, "Bottled water", "20 NYCRR 528.3"),
    ("NY textbook cautious", "NY", ["PUBLICATIONS.BOOKS.TEXTBOOKS"], 10000, None, 400, "textbooks", "N.Y. Tax Law 1115(a)(34)"),
    ("NY textbook student", "NY", ["PUBLICATIONS.BOOKS.TEXTBOOKS._COURSE_TEXTBOOK"], 10000, None, 0, "enrolled student",
     "N.Y. Tax Law 1115(a)(34)"),
    ("NC soft drink", "NC", ["FOOD.SOFT_DRINKS.GENERAL"], 1000, None, 48, "Soft drinks taxable", "N.C. Gen. Stat. 105-164.13B"),  # 47.5
    ("NC DME cautious", "NC", ["MEDICAL.DEVICES.DURABLE"], 10000, None, 475, "prescription", "N.C. Gen. Stat. 105-164.13(12)"),
    ("NC DME prescription", "NC", ["MEDICAL.DEVICES.DURABLE._PRESCRIPTION"], 10000, None, 0, "prescription", "N.C. Gen. Stat. 105-164.13(12)"),
    ("TN grocery 4%", "TN", ["FOOD.GROCERY.GENERAL"], 10000, None, 400, "4%", "Tenn. Code 67-6-228"),
    ("TN grocery holiday", "TN", ["FOOD.GROCERY.GENERAL"], 10000, "2023-09-15T12:00:00Z", 0, "holiday", "Tenn. Pub. Ch. 377 (2023)"),
    ("TN candy holiday", "TN", ["FOOD.CANDY.GENERAL"], 1000, "2023-09-15T12:00:00Z", 70, "Candy taxable", "Tenn. Pub. Ch. 377 (2023)"),
    ("VA grocery 2022", "VA", ["FOOD.GROCERY.GENERAL"], 10000, "2022-12-31T12:00:00Z", 250, "2.5%", "Va. Code 58.1-611.1"),  # 150 + 100
    ("VA grocery 2026", "VA", ["FOOD.GROCERY.GENERAL"], 10000, None, 100, "1% local", "Va. Code 58.1-611.1"),  # state 0 + 1%
    ("WA custom software before", "WA", ["SOFTWARE.CUSTOM.DEVELOPMENT"], 100000, "2025-09-30T12:00:00Z", 0, "before 2025-10-01",
     "ESSB 5814"),
    ("WA custom software after", "WA", ["SOFTWARE.CUSTOM.DEVELOPMENT"], 100000, "2025-10-01T12:00:00Z", 6500, "from 2025-10-01",
     "ESSB 5814"),  # 1000.00 x 6.5%
    ("TX magazine subscription", "TX", ["PUBLICATIONS.PERIODICALS.MAGAZINES._SUBSCRIPTION"], 1000, None, 0, "subscriptions",
     "Tex. Tax Code 151.320"),
    ("DC soft drink 8%", "DC", ["FOOD.SOFT_DRINKS.GENERAL"], 1000, None, 80, "8%", "D.C. Code 47-2002"),
    # Comptroller Publication 94-155 and STAR 200311235L: no tax is due on dietary supplements: 10.00 -> 0
    ("TX dietary supplement", "TX", ["FOOD.SUPPLEMENTS.DIETARY"], 1000, None, 0, "Dietary supplements exempt", "STAR 200311235L"),
    # Neb. Rev. Stat. 77-2704.24(2)(c): food does not include dietary supplements: 10.00 x 5.5% = 55
    ("NE dietary supplement", "NE", ["FOOD.SUPPLEMENTS.DIETARY"], 1000, None, 55, "Dietary supplements taxable", "77-2704.24"),
]


@pytest.fixture(scope="module")
def tx_server(database_url: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[LevyServer]:
    srv = start_server(database_url, tmp_path_factory.mktemp("taxability-b-logs"))
    try:
        yield srv
    finally:
        assert srv.stop() == 0, srv.log()


@pytest.fixture(scope="module")
def registered(tx_server: LevyServer) -> Tenant:
    t = create_tenant(tx_server.database_url)
    _Sql(tx_server.database_url).register(t.organization_id, *ALL_STATES)
    return t


@pytest.fixture(scope="module")
def clients(tx_server: LevyServer) -> Iterator[tuple[Any, Any]]:
    import grpc
    import httpx

    from levy.v1 import calculations_pb2_grpc as pbg

    with httpx.Client(base_url=tx_server.http_url, timeout=30) as rest, grpc.insecure_channel(tx_server.grpc_target) as ch:
        yield rest, pbg.CalculationServiceStub(ch)


@pytest.fixture(params=["rest", "grpc"])
def caller(request: pytest.FixtureRequest, clients: tuple[Any, Any]) -> Caller:
    return Caller(request.param, *clients)


@pytest.mark.parametrize("case", CASES, ids=[c[0] for c in CASES])
def test_taxability_through_the_api(case: tuple[Any, ...], caller: Caller, registered: Tenant) -> None:
    _, state, codes, price, on, expected, fragment, source = case
    assert source
    resp = caller(registered.key, body(line("1", state, codes, "1", price), **({"date": on} if on else {})))
    assert_consistent(resp)
    li = resp["line_items"][0]
    assert li["tax_amount"] == str(expected), li["taxes"]
    assert fragment.lower() in li["taxes"][0]["rule_name"].lower(), li["taxes"][0]["rule_name"]


def test_cautious_default_is_said_in_every_row(caller: Caller, registered: Tenant) -> None:
    resp = caller(registered.key, body(line("1", "NC", ["MEDICAL.DEVICES.DURABLE"])))
    rows = resp["line_items"][0]["taxes"]
    assert rows and all("_PRESCRIPTION" in r["detail"] and "Cautious" in r["detail"] for r in rows), rows
