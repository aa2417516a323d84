"""Sales tax holidays (issue 31) through POST /calculations over REST and gRPC, on SQLite and PostgreSQL.

A server on a database of its own, with local rates imported the way a user does it (``levy rates import`` of a
generic CSV written here: test figures for the local rates, the state rates are Levy's built-in ones). Every
figure is worked by hand: tax = ROUND_HALF_UP(base x rate) per row, in cents.

* Texas (Tax Code 151.326; 2026: Aug. 7-9): clothing under $100, state and local.
* Florida (Fla. Stat. 212.08, HB 7031 (2025): every August): clothing $100 or less, school supplies $50 or less,
  state tax and county surtax.
* Missouri (RSMo 144.049): in 2020 (Aug. 7-9) a city could opt out (Columbia did, in the Department's list);
  from 2024 (SB 153) no local jurisdiction may.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from levyserver import LevyServer, Tenant, create_tenant
from rates_servers import server_with_rates
from test_calculations import Caller, _Sql, assert_consistent, body, line

CLOTHING = ["CLOTHING.APPAREL.GENERAL"]
SUPPLIES = ["GENERAL.TANGIBLE.SCHOOL_SUPPLIES"]

# Dallas: city 1% + transit district 1%; Miami: county surtax 1%; Columbia: county 1.75% + city 2% (test figures).
RATES_CSV = """state,zip5,city,county,primary,effective_from,components
TX,75201,Dallas,Dallas County,yes,2020-01-01,city:Dallas:1%;special:Dallas MTA:1%
FL,33131,Miami,Miami-Dade County,yes,2020-01-01,county:Miami-Dade County:1%
MO,65201,Columbia,Boone County,yes,2020-01-01,county:Boone County:1.75%;city:Columbia:2%
"""


def at(day: str) -> str:
    return f"{day}T12:00:00Z"


@pytest.fixture(scope="module", params=["sqlite", "postgres"])
def hol_server(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[LevyServer]:
    csv = Path(tmp_path_factory.mktemp("holiday-rates")) / "holiday_rates.csv"
    csv.write_text(RATES_CSV, encoding="utf-8")
    yield from server_with_rates(request.param, tmp_path_factory, csv)


@pytest.fixture(scope="module")
def seller(hol_server: LevyServer) -> Tenant:
    t = create_tenant(hol_server.database_url)
    _Sql(hol_server.database_url).register(t.organization_id, "TX", "FL", "MO")
    return t


@pytest.fixture(params=["rest", "grpc"])
def calc(request: pytest.FixtureRequest, hol_server: LevyServer) -> Iterator[Caller]:
    import grpc
    import httpx

    from levy.v1 import calculations_pb2_grpc as pbg

    with httpx.Client(base_url=hol_server.http_url, timeout=30) as rest, \
            grpc.insecure_channel(hol_server.grpc_target) as ch:
        yield Caller(request.param, rest, pbg.CalculationServiceStub(ch))


def one(calc: Caller, seller: Tenant, day: str, state: str, zip: str, codes: list[str], price: int,
        qty: str = "1") -> dict[str, Any]:
    resp = calc(seller.key, body(line("1", state, codes, qty, price, zip=zip), date=at(day)))
    assert_consistent(resp)
    return resp["line_items"][0]


def rows_by_type(li: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {r["jurisdiction_type"]: r for r in li["taxes"]}


@pytest.mark.parametrize("day", ["2026-08-07", "2026-08-09"])
def test_texas_clothing_under_the_limit_is_exempt_on_the_first_and_last_day(calc, seller, day) -> None:
    li = one(calc, seller, day, "TX", "75201", CLOTHING, 5000)
    assert li["tax_amount"] == "0"
    assert [r["jurisdiction_type"] for r in li["taxes"]] == ["state", "city", "special"]
    for r in li["taxes"]:
        assert r["tax_amount"] == "0" and r["taxable_base"] == "0"
        assert r["rule_name"] == "Exempt: Texas sales tax holiday 2026 (2026-08-07 to 2026-08-09)"
        assert "under $100 per item" in r["detail"] and "151.326" in r["detail"]


def test_texas_the_day_after_the_holiday_is_taxed(calc, seller) -> None:
    li = one(calc, seller, "2026-08-10", "TX", "75201", CLOTHING, 5000)
    # 5000 x 6.25% = 312.5 -> 313; city 5000 x 1% = 50; MTA 5000 x 1% = 50: 413.
    assert [r["tax_amount"] for r in li["taxes"]] == ["313", "50", "50"]
    assert li["tax_amount"] == "413"
    assert all("holiday" not in r["rule_name"].lower() for r in li["taxes"])


def test_texas_at_and_above_the_limit(calc, seller) -> None:
    # $100.00 is not under $100: 10000 x 6.25% = 625, x 1% = 100, x 1% = 100: 825.
    assert one(calc, seller, "2026-08-08", "TX", "75201", CLOTHING, 10000)["tax_amount"] == "825"
    # $150.00: 937.5 -> 938 + 150 + 150 = 1238.
    assert one(calc, seller, "2026-08-08", "TX", "75201", CLOTHING, 15000)["tax_amount"] == "1238"
    # $99.99 is under: exempt. Quantity does not matter, the limit is per item: 3 x $99.99 exempt.
    assert one(calc, seller, "2026-08-08", "TX", "75201", CLOTHING, 9999)["tax_amount"] == "0"
    assert one(calc, seller, "2026-08-08", "TX", "75201", CLOTHING, 9999, qty="3")["tax_amount"] == "0"


def test_texas_a_category_outside_the_holiday_is_taxed(calc, seller) -> None:
    # Handbags and jewelry (accessories) are not clothing in 151.326: $50 taxed, 413 as above.
    assert one(calc, seller, "2026-08-08", "TX", "75201", ["CLOTHING.ACCESSORIES.GENERAL"], 5000)["tax_amount"] == "413"


@pytest.mark.parametrize("day", ["2025-08-01", "2025-08-31"])
def test_florida_august_holiday_at_the_limit_and_above(calc, seller, day) -> None:
    # $100.00 is "$100 or less": exempt, state and the county surtax.
    li = one(calc, seller, day, "FL", "33131", CLOTHING, 10000)
    assert li["tax_amount"] == "0"
    assert all(r["rule_name"].startswith("Exempt: Florida back-to-school sales tax holiday 2025") for r in li["taxes"])
    # $100.01: 10001 x 6% = 600.06 -> 600; surtax 10001 x 1% = 100.01 -> 100: 700.
    assert one(calc, seller, day, "FL", "33131", CLOTHING, 10001)["tax_amount"] == "700"
    # School supplies: $50.00 exempt; $50.01 taxed: 5001 x 6% = 300.06 -> 300, x 1% = 50.01 -> 50: 350.
    assert one(calc, seller, day, "FL", "33131", SUPPLIES, 5000)["tax_amount"] == "0"
    assert one(calc, seller, day, "FL", "33131", SUPPLIES, 5001)["tax_amount"] == "350"


def test_florida_the_day_after_august_is_taxed(calc, seller) -> None:
    # 2025-09-01: $100 shirt taxed: 10000 x 6% = 600, x 1% = 100: 700.
    assert one(calc, seller, "2025-09-01", "FL", "33131", CLOTHING, 10000)["tax_amount"] == "700"
    # And the same holiday again in August 2026 (permanent since 2025).
    assert one(calc, seller, "2026-08-15", "FL", "33131", CLOTHING, 10000)["tax_amount"] == "0"


def test_missouri_opted_out_city_is_taxed_locally_while_the_state_is_exempt(calc, seller) -> None:
    # 2020 holiday, Columbia opted out: state 0, Boone County 0 (it took part), city 5000 x 2% = 100.
    li = one(calc, seller, "2020-08-07", "MO", "65201", CLOTHING, 5000)
    rows = rows_by_type(li)
    assert (rows["state"]["tax_amount"], rows["county"]["tax_amount"], rows["city"]["tax_amount"]) == ("0", "0", "100")
    assert rows["state"]["rule_name"].startswith("Exempt: Missouri back-to-school sales tax holiday 2020")
    assert "opted out" in rows["city"]["detail"] and rows["city"]["taxable_base"] == "5000"
    assert li["tax_amount"] == "100"


def test_missouri_since_sb_153_every_local_level_is_exempt(calc, seller) -> None:
    # 2025 holiday (Aug. 1-3): no opt-out any more, Columbia exempt too.
    assert one(calc, seller, "2025-08-01", "MO", "65201", CLOTHING, 5000)["tax_amount"] == "0"
    # The day after: 5000 x 4.225% = 211.25 -> 211; x 1.75% = 87.5 -> 88; x 2% = 100: 399.
    assert one(calc, seller, "2025-08-04", "MO", "65201", CLOTHING, 5000)["tax_amount"] == "399"


@pytest.fixture(params=["rest", "grpc"])
def txn(request: pytest.FixtureRequest, hol_server: LevyServer, seller: Tenant) -> Iterator[Any]:
    import grpc

    from txn_api import Txn

    with grpc.insecure_channel(hol_server.grpc_target) as ch:
        t = Txn(request.param, hol_server, ch, seller.key)
        try:
            yield t
        finally:
            t.close()


def test_a_transaction_on_the_holiday_stores_the_exempt_rows(txn) -> None:
    # Dallas, 2026-08-08: a $50 shirt exempt (0), a $120 jacket taxed: 12000 x 6.25% = 750, x 1% = 120, x 1% = 120.
    b = {"type": "sale", "status": "finalized", "transaction_date": at("2026-08-08"),
         "line_items": [line("shirt", "TX", CLOTHING, "1", 5000, zip="75201"),
                        line("jacket", "TX", CLOTHING, "1", 12000, zip="75201")]}
    out = txn.create(b)
    assert out["tax_amount"] == "990"
    stored = txn.get(out["id"])
    shirt, jacket = stored["line_items"]
    assert shirt["tax_amount"] == "0" and jacket["tax_amount"] == "990"
    assert all(r["rule_name"].startswith("Exempt: Texas sales tax holiday 2026") for r in shirt["taxes"])
