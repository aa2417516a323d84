"""Sales tax holidays (issue 31) through POST /calculations over REST and gRPC, on SQLite and PostgreSQL.

A server on a database of its own, with local rates imported the way a user does it (``levy rates import`` of a
generic CSV written here: test figures for the local rates, the state rates are Levy's built-in ones). Every
figure is worked by hand: tax = ROUND_HALF_UP(base x rate) per row, in cents.

* Texas (Tax Code 151.326; 2026: Aug. 7-9): clothing under $100, state and local.
* Florida (Fla. Stat. 212.08, HB 7031 (2025): every August): clothing $100 or less, school supplies $50 or less,
  state tax and county surtax.
* Missouri (RSMo 144.049): in 2020 (Aug. 7-9) a city could opt out (Columbia did, in the Department's list);
  from 2024 (SB 153) no local jurisdiction may.
* Oklahoma (68 O.S. 1357.10; 2025: Aug. 1-3): clothing under $100, state and local.
* Connecticut (Conn. Gen. Stat. 12-407e; 2025: Aug. 17-23): clothing under $100, state (no local tax).
* Massachusetts (M.G.L. c. 64H s. 6A; 2025: Aug. 9-10): most goods of $2,500 or less, state (no local tax).
* Ohio (R.C. 5739.41; 2025: Aug. 1-14): most goods of $500 or less, state and county; not alcohol.
* South Carolina (S.C. Code 12-36-2120(57); 2025: Aug. 1-3): clothing with no price limit, state and local;
  not wallets and handbags (accessories).
* Mississippi (Miss. Code 27-65-111; 2025: July 11-13): clothing under $100, the state level only.
* West Virginia (W. Va. Code 11-15-9s; 2025: Aug. 1-4, Friday to Monday): clothing $125 or less, sports
  equipment $150 or less, state and municipal.
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

# Dallas: city 1% + transit district 1%; Miami: county surtax 1%; Columbia: county 1.75% + city 2%; Oklahoma
# City: city 4.125%; Columbus OH: county 1.25%; Columbia SC: county 2%; Charleston WV: city 1%; Jackson MS: city 1%
# (test figures).
# Hartford and Boston: the state rate alone (Connecticut 6.35%, Massachusetts 6.25%, no local sales tax).
RATES_CSV = """state,zip5,city,county,primary,effective_from,components
TX,75201,Dallas,Dallas County,yes,2020-01-01,city:Dallas:1%;special:Dallas MTA:1%
FL,33131,Miami,Miami-Dade County,yes,2020-01-01,county:Miami-Dade County:1%
MO,65201,Columbia,Boone County,yes,2020-01-01,county:Boone County:1.75%;city:Columbia:2%
OK,73102,Oklahoma City,Oklahoma County,yes,2020-01-01,city:Oklahoma City:4.125%
OH,43215,Columbus,Franklin County,yes,2020-01-01,county:Franklin County:1.25%
SC,29201,Columbia,Richland County,yes,2020-01-01,county:Richland County:2%
WV,25301,Charleston,Kanawha County,yes,2020-01-01,city:Charleston:1%
MS,39201,Jackson,Hinds County,yes,2020-01-01,city:Jackson:1%
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
    _Sql(hol_server.database_url).register(t.organization_id, "TX", "FL", "MO", "OK", "CT", "MA", "OH", "SC", "WV", "MS")
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


# ----------------------------------------------------------------- the holidays of issue 31's second pass
def taxes(li: dict[str, Any]) -> list[str]:
    return [r["tax_amount"] for r in li["taxes"]]


@pytest.mark.parametrize("day", ["2025-08-01", "2025-08-03"])
def test_oklahoma_first_and_last_day_under_the_limit(calc, seller, day) -> None:
    li = one(calc, seller, day, "OK", "73102", CLOTHING, 9999)
    assert li["tax_amount"] == "0" and [r["jurisdiction_type"] for r in li["taxes"]] == ["state", "city"]
    assert all(r["rule_name"] == "Exempt: Oklahoma sales tax holiday 2025 (2025-08-01 to 2025-08-03)"
               and "1357.10" in r["detail"] for r in li["taxes"])


def test_oklahoma_the_day_after_and_at_and_above_the_limit(calc, seller) -> None:
    # 2025-08-04, $50: state 5000 x 4.5% = 225; city 5000 x 4.125% = 206.25 -> 206: 431.
    assert taxes(one(calc, seller, "2025-08-04", "OK", "73102", CLOTHING, 5000)) == ["225", "206"]
    # $100.00 is not less than $100: 10000 x 4.5% = 450; x 4.125% = 412.5 -> 413: 863.
    assert one(calc, seller, "2025-08-02", "OK", "73102", CLOTHING, 10000)["tax_amount"] == "863"
    # $150.00: 675 + 618.75 -> 619 = 1294.
    assert one(calc, seller, "2025-08-02", "OK", "73102", CLOTHING, 15000)["tax_amount"] == "1294"


@pytest.mark.parametrize("day", ["2025-08-17", "2025-08-23"])
def test_connecticut_tax_free_week_first_and_last_day(calc, seller, day) -> None:
    li = one(calc, seller, day, "CT", "06103", CLOTHING, 9999)
    assert li["tax_amount"] == "0" and [r["jurisdiction_type"] for r in li["taxes"]] == ["state"]
    assert li["taxes"][0]["rule_name"].startswith("Exempt: Connecticut sales tax free week 2025")
    # Under $100: $100.00 is taxed, 10000 x 6.35% = 635.
    assert one(calc, seller, day, "CT", "06103", CLOTHING, 10000)["tax_amount"] == "635"


def test_connecticut_the_day_before_and_after_and_above_the_limit(calc, seller) -> None:
    # Saturday 2025-08-16 and Sunday 2025-08-24, $50: 5000 x 6.35% = 317.5 -> 318.
    assert one(calc, seller, "2025-08-16", "CT", "06103", CLOTHING, 5000)["tax_amount"] == "318"
    assert one(calc, seller, "2025-08-24", "CT", "06103", CLOTHING, 5000)["tax_amount"] == "318"
    # $120 in the week: 12000 x 6.35% = 762.
    assert one(calc, seller, "2025-08-20", "CT", "06103", CLOTHING, 12000)["tax_amount"] == "762"


@pytest.mark.parametrize("day", ["2025-08-09", "2025-08-10"])
def test_massachusetts_goods_at_the_limit_are_exempt_above_it_taxed(calc, seller, day) -> None:
    # $2,500.00 is "$2,500 or less": exempt.
    li = one(calc, seller, day, "MA", "02108", ["GENERAL.TANGIBLE.FURNITURE"], 250000)
    assert li["tax_amount"] == "0"
    assert li["taxes"][0]["rule_name"] == "Exempt: Massachusetts sales tax holiday 2025 (2025-08-09 to 2025-08-10)"
    # $2,500.01: taxed in full, 250001 x 6.25% = 15625.0625 -> 15625.
    assert one(calc, seller, day, "MA", "02108", ["GENERAL.TANGIBLE.FURNITURE"], 250001)["tax_amount"] == "15625"


def test_massachusetts_the_day_after(calc, seller) -> None:
    # 2025-08-11, $2,500: 250000 x 6.25% = 15625.
    assert one(calc, seller, "2025-08-11", "MA", "02108", ["GENERAL.TANGIBLE.FURNITURE"], 250000)["tax_amount"] == "15625"


@pytest.mark.parametrize("day", ["2025-08-01", "2025-08-14"])
def test_ohio_two_weeks_at_and_above_the_limit(calc, seller, day) -> None:
    # $500.00 is "$500 or less": state and county exempt.
    li = one(calc, seller, day, "OH", "43215", ["GENERAL.TANGIBLE.ELECTRONICS"], 50000)
    assert li["tax_amount"] == "0" and [r["jurisdiction_type"] for r in li["taxes"]] == ["state", "county"]
    assert all(r["rule_name"].startswith("Exempt: Ohio sales tax holiday 2025") for r in li["taxes"])
    # $500.01: 50001 x 5.75% = 2875.0575 -> 2875; x 1.25% = 625.0125 -> 625: 3500.
    assert taxes(one(calc, seller, day, "OH", "43215", ["GENERAL.TANGIBLE.ELECTRONICS"], 50001)) == ["2875", "625"]


def test_ohio_the_day_after_and_alcohol_during(calc, seller) -> None:
    # 2025-08-15, $500: 50000 x 5.75% = 2875; x 1.25% = 625.
    assert taxes(one(calc, seller, "2025-08-15", "OH", "43215", ["GENERAL.TANGIBLE.ELECTRONICS"], 50000)) == [
        "2875", "625"]
    # Alcohol is excluded on the holiday: $20, 2000 x 5.75% = 115; x 1.25% = 25.
    assert taxes(one(calc, seller, "2025-08-05", "OH", "43215", ["FOOD.GROCERY.ALCOHOL"], 2000)) == ["115", "25"]


@pytest.mark.parametrize("day", ["2025-08-01", "2025-08-03"])
def test_south_carolina_has_no_price_limit(calc, seller, day) -> None:
    # A $1,000 coat: no limit, state and county exempt.
    li = one(calc, seller, day, "SC", "29201", CLOTHING, 100000)
    assert li["tax_amount"] == "0" and all("no price limit" in r["detail"] for r in li["taxes"])
    # A $50 wallet (an accessory, CLOTHING.ACCESSORIES.GENERAL) is taxed: 5000 x 6% = 300; x 2% = 100.
    assert taxes(one(calc, seller, day, "SC", "29201", ["CLOTHING.ACCESSORIES.GENERAL"], 5000)) == ["300", "100"]


def test_south_carolina_the_day_after(calc, seller) -> None:
    # 2025-08-04, $1,000: 100000 x 6% = 6000; x 2% = 2000.
    assert taxes(one(calc, seller, "2025-08-04", "SC", "29201", CLOTHING, 100000)) == ["6000", "2000"]


@pytest.mark.parametrize("day", ["2025-08-01", "2025-08-04"])
def test_west_virginia_friday_to_monday_at_and_above_the_limits(calc, seller, day) -> None:
    # Clothing $125.00 ("$125 or less") and sports equipment $150.00: exempt, state and city.
    assert one(calc, seller, day, "WV", "25301", CLOTHING, 12500)["tax_amount"] == "0"
    sport = one(calc, seller, day, "WV", "25301", ["CLOTHING.ATHLETIC.SPORT"], 15000)
    assert sport["tax_amount"] == "0" and all("sports equipment" in r["detail"] for r in sport["taxes"])
    # Clothing $125.01: 12501 x 6% = 750.06 -> 750; x 1% = 125.01 -> 125.
    assert taxes(one(calc, seller, day, "WV", "25301", CLOTHING, 12501)) == ["750", "125"]
    # Sports equipment $150.01: 15001 x 6% = 900.06 -> 900; x 1% = 150.01 -> 150.
    assert taxes(one(calc, seller, day, "WV", "25301", ["CLOTHING.ATHLETIC.SPORT"], 15001)) == ["900", "150"]


def test_west_virginia_the_day_after(calc, seller) -> None:
    # Tuesday 2025-08-05, $125: 12500 x 6% = 750; x 1% = 125.
    assert taxes(one(calc, seller, "2025-08-05", "WV", "25301", CLOTHING, 12500)) == ["750", "125"]


@pytest.mark.parametrize("day", ["2025-07-11", "2025-07-13"])
def test_mississippi_state_only_holiday_leaves_the_city_taxed(calc, seller, day) -> None:
    # $50 shirt in Jackson: the state row exempt, the city's 1% charged: 5000 x 1% = 50.
    li = one(calc, seller, day, "MS", "39201", CLOTHING, 5000)
    rows = rows_by_type(li)
    assert rows["state"]["tax_amount"] == "0"
    assert rows["state"]["rule_name"].startswith("Exempt: Mississippi back-to-school sales tax holiday 2025")
    assert rows["city"]["tax_amount"] == "50" and "exempts the state level only" in rows["city"]["detail"]
    # $100.00 is not under $100: 10000 x 7% = 700; x 1% = 100.
    assert taxes(one(calc, seller, day, "MS", "39201", CLOTHING, 10000)) == ["700", "100"]


def test_mississippi_the_day_after(calc, seller) -> None:
    # 2025-07-14, $50: 5000 x 7% = 350; x 1% = 50.
    assert taxes(one(calc, seller, "2025-07-14", "MS", "39201", CLOTHING, 5000)) == ["350", "50"]
