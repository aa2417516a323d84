"""Item rules (issue 31 part A) end to end, through REST and gRPC on SQLite and PostgreSQL: delivery
that follows the goods (TX, NY) and single-article bands (TN, FL).

A server on a database of its own with a small rate file written here, imported the way a user does
it (``levy rates import``). Its rows are those of the March 2026 per-ZIP tables for these ZIPs:

* TX 78701 Austin 8.25%: state 6.25%, city 1%, special (transit) 1%;
* NY 12203 Colonie 8%: state 4%, Albany County 4% (which taxes clothing under $110; the state does
  not, N.Y. Tax Law 1115(a)(30));
* TN 37201 Nashville 9.25%: state 7%, Davidson County 2.25%;
* FL 33101 Miami 7%: state 6%, Miami-Dade surtax 1%.

Connecticut (6.35%, no local tax), Wisconsin (5%) and Iowa (6%) are taxed at state level. The rows also of
28607 Boone (region WILKES), 32091 Starke (region CLAY) and 35004 Moody (region LEEDS) test the names of the
rows (issue 31, "Names that belong to the rate"). Expected figures are worked by hand in each
test from the sources the data cites: 34 TAC 3.303, NY TB-ST-838, T.C.A. 67-6-702(a) and 67-6-202, Fla.
Stat. 212.054(2)(b), Conn. Gen. Stat. 12-408(1)(H) with 12-407(a)(8).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import grpc
import pytest
from levyserver import LevyServer, Tenant, create_tenant
from rates_servers import caller, server_with_rates
from test_calculations import Caller, _Sql, assert_consistent, body, line
from txn_api import Txn, uid
from txn_api import body as txn_body
from txn_api import line as txn_line

HEADER = "State,ZipCode,TaxRegionName,EstimatedCombinedRate,StateRate,EstimatedCountyRate,EstimatedCityRate," \
         "EstimatedSpecialRate,RiskLevel"
ROWS = {
    "TX": "TX,78701,AUSTIN,0.082500,0.062500,0.000000,0.010000,0.010000,0",
    "NY": "NY,12203,COLONIE,0.080000,0.040000,0.040000,0.000000,0.000000,0",
    "TN": "TN,37201,NASHVILLE,0.092500,0.070000,0.022500,0.000000,0.000000,0",
    "FL": "FL,33101,MIAMI,0.070000,0.060000,0.010000,0.000000,0.000000,0\n"
          "FL,32091,CLAY,0.075000,0.060000,0.015000,0.000000,0.000000,0",  # Starke, Bradford County
    "NC": "NC,28607,WILKES,0.070000,0.047500,0.022500,0.000000,0.000000,0",  # Boone, Watauga County
    "AL": "AL,35004,LEEDS,0.100000,0.040000,0.000000,0.040000,0.020000,0",  # Moody, St. Clair County
}
DAY = "2026-05-01T12:00:00Z"
GOODS, GROCERY, SHIRT = ["GENERAL.TANGIBLE.GOODS"], ["FOOD.GROCERY.GENERAL"], ["CLOTHING.APPAREL.GENERAL"]
SHIP = ["SHIPPING.DELIVERY.COMMON_CARRIER"]


def _rate_files(folder: Path) -> list[Path]:
    files = []
    for state, row in ROWS.items():
        f = folder / f"TAXRATES_ZIP5_{state}202603.csv"
        f.write_text(f"{HEADER}\n{row}\n", encoding="utf-8")
        files.append(f)
    return files


@pytest.fixture(scope="module", params=["sqlite", "postgres"])
def items_server(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[LevyServer]:
    yield from server_with_rates(request.param, tmp_path_factory, *_rate_files(tmp_path_factory.mktemp("item-rates")))


@pytest.fixture(scope="module")
def seller(items_server: LevyServer) -> Tenant:
    t = create_tenant(items_server.database_url)
    _Sql(items_server.database_url).register(t.organization_id, *ROWS, "CT", "WI", "IA")
    return t


@pytest.fixture(params=["rest", "grpc"])
def calc(request: pytest.FixtureRequest, items_server: LevyServer) -> Iterator[Caller]:
    yield from caller(request.param, items_server)


def _send(calc: Caller, seller: Tenant, *items: dict[str, Any]) -> dict[str, Any]:
    resp = calc(seller.key, body(*items, date=DAY))
    assert_consistent(resp)
    return resp


def _rows(li: dict[str, Any]) -> list[tuple[str, str, str, str]]:
    return [(t["jurisdiction_type"], t["tax_rate"], t["taxable_base"], t["tax_amount"]) for t in li["taxes"]]


def test_austin_groceries_and_their_delivery_tax_0(calc: Caller, seller: Tenant) -> None:
    # $50.00 of groceries (exempt, Tex. Tax Code 151.314) and $9.99 delivery: 34 TAC 3.303(a) taxes
    # delivery only when a taxable item is sold: 0 + 0 = 0.
    resp = _send(calc, seller, line("1", "TX", GROCERY, price=5000, zip="78701"),
                 line("2", "TX", SHIP, price=999, zip="78701"))
    assert resp["tax_amount"] == "0"
    ship = resp["line_items"][1]
    assert all(t["taxable_base"] == "0" and "3.303" in t["rule_name"] for t in ship["taxes"]), ship
    assert all("every good delivered is exempt" in t["detail"] for t in ship["taxes"])


def test_austin_delivery_with_a_taxable_good_is_taxed(calc: Caller, seller: Tenant) -> None:
    # Groceries, a $20.00 taxable good and $9.99 delivery: the delivery is taxed in full:
    # 999 x 6.25% = 62.44 -> 62; city 1% 9.99 -> 10; special 1% -> 10: 82. The good: 125 + 20 + 20 = 165.
    resp = _send(calc, seller, line("1", "TX", GROCERY, price=5000, zip="78701"),
                 line("2", "TX", GOODS, price=2000, zip="78701"), line("3", "TX", SHIP, price=999, zip="78701"))
    assert [li["tax_amount"] for li in resp["line_items"]] == ["0", "165", "82"]
    assert resp["tax_amount"] == "247"


def test_ny_mixed_shipment_delivery_taxed_on_its_taxable_share(calc: Caller, seller: Tenant) -> None:
    # Colonie: a $50.00 shirt (state-exempt under $110, taxed by Albany County: 4% = 2.00), a $150.00
    # lamp (8%: 6.00 + 6.00) and $10.00 delivery. TB-ST-838, by jurisdiction:
    #   state: taxable goods 150.00 of 200.00 -> base 10.00 x 150/200 = 7.50 -> 4% = 0.30
    #   county: taxable goods 200.00 of 200.00 -> base 10.00 -> 4% = 0.40
    resp = _send(calc, seller, line("1", "NY", SHIRT, price=5000, zip="12203"),
                 line("2", "NY", GOODS, price=15000, zip="12203"), line("3", "NY", SHIP, price=1000, zip="12203"))
    shirt, lamp, ship = resp["line_items"]
    assert _rows(shirt) == [("state", "0", "0", "0"), ("county", "0.04", "5000", "200")]
    assert lamp["tax_amount"] == "1200"
    assert _rows(ship) == [("state", "0.04", "750", "30"), ("county", "0.04", "1000", "40")]
    assert resp["tax_amount"] == str(200 + 1200 + 70)
    assert "TB-ST-838" in ship["taxes"][0]["rule_name"] and "$150.00 of $200.00" in ship["taxes"][0]["detail"]


@pytest.mark.parametrize(("price", "qty", "expected", "rows"), [
    # Nashville: state 7%; Davidson County 2.25% on the first $1,600 of a single article (67-6-702(a));
    # state single article tax 2.75% on $1,600.01-$3,200 (67-6-202), a row after the state row.
    ("100000", "1", 9250, [("state", "0.07", "100000", "7000"), ("county", "0.0225", "100000", "2250")]),
    ("160000", "1", 14800, [("state", "0.07", "160000", "11200"), ("county", "0.0225", "160000", "3600")]),
    # $2,500: 175.00 + 2.75% of 900.00 = 24.75 + 2.25% of 1,600.00 = 36.00 -> 235.75
    ("250000", "1", 23575, [("state", "0.07", "250000", "17500"), ("state", "0.0275", "90000", "2475"),
                            ("county", "0.0225", "160000", "3600")]),
    # $5,000: 350.00 + 2.75% of 1,600.00 = 44.00 + 36.00 -> 430.00
    ("500000", "1", 43000, [("state", "0.07", "500000", "35000"), ("state", "0.0275", "160000", "4400"),
                            ("county", "0.0225", "160000", "3600")]),
    # five $1,000 articles: the cap is per article, none reaches it: 350.00 + 2.25% of 5,000 = 112.50
    ("100000", "5", 46250, [("state", "0.07", "500000", "35000"), ("county", "0.0225", "500000", "11250")]),
])
def test_tennessee_single_article(calc: Caller, seller: Tenant, price: str, qty: str, expected: int,
                                  rows: list[tuple[str, str, str, str]]) -> None:
    li = _send(calc, seller, line("1", "TN", GOODS, qty=qty, price=int(price), zip="37201"))["line_items"][0]
    assert _rows(li) == rows
    assert li["tax_amount"] == str(expected)
    if len(rows) == 3:
        assert "67-6-202" in li["taxes"][1]["rule_name"] and "67-6-702" in li["taxes"][2]["detail"]


@pytest.mark.parametrize(("price", "expected"), [
    (499900, 29994 + 4999),  # Miami $4,999: 6% = 299.94; surtax 1% = 49.99
    (500000, 30000 + 5000),  # $5,000: 300.00 + 50.00
    (720000, 43200 + 5000),  # $7,200: 432.00 + surtax on the first $5,000 only, 50.00
])
def test_florida_surtax_on_the_first_5000(calc: Caller, seller: Tenant, price: int, expected: int) -> None:
    li = _send(calc, seller, line("1", "FL", GOODS, price=price, zip="33101"))["line_items"][0]
    assert li["tax_amount"] == str(expected)
    county = li["taxes"][1]
    assert county["taxable_base"] == str(min(price, 500000))
    assert ("212.054" in county["detail"]) == (price > 500000)


def test_ct_luxury_threshold_counts_delivery(calc: Caller, seller: Tenant) -> None:
    # A $990 coat and $20 delivery: the sales price 1,010 is above $1,000 (delivery is part of the sales
    # price, 12-407(a)(8)): 7.75% of 990 = 76.725 -> 76.73; the delivery at 6.35%: 1.27. Alone: 6.35% of
    # 990 = 62.865 -> 62.87.
    alone = _send(calc, seller, line("1", "CT", ["CLOTHING.APPAREL.GENERAL"], price=99000))
    assert alone["tax_amount"] == "6287"
    resp = _send(calc, seller, line("1", "CT", ["CLOTHING.APPAREL.GENERAL"], price=99000),
                 line("2", "CT", SHIP, price=2000))
    coat, ship = resp["line_items"]
    assert (coat["tax_amount"], coat["taxes"][0]["tax_rate"], ship["tax_amount"]) == ("7673", "0.0775", "127")
    assert "share of delivery" in coat["taxes"][0]["detail"]


@pytest.mark.parametrize("transport", ["rest", "grpc"])
def test_transaction_stores_the_single_article_rows(items_server: LevyServer, seller: Tenant, transport: str) -> None:
    # A finalized transaction of one $5,000 article in Nashville: the three rows of the calculation
    # (state 350.00, the single article 2.75% 44.00 on the same jurisdiction, county 36.00 = 430.00) are
    # stored and read back as they were.
    with grpc.insecure_channel(items_server.grpc_target) as ch:
        txn = Txn(transport, items_server, ch, seller.key)
        try:
            item = txn_line("1", 500000, None, customer={"address": {"state": "TN", "postal_code": "37201"}})
            made = txn.create(txn_body(item, status="finalized", reference_id=f"tn-{uid()}"))
            got = txn.get(made["id"])
        finally:
            txn.close()
    for out in (made, got):
        li = out["line_items"][0]
        assert li["tax_amount"] == "43000"
        assert _rows(li) == [("state", "0.07", "500000", "35000"), ("state", "0.0275", "160000", "4400"),
                             ("county", "0.0225", "160000", "3600")]


# ----------------------------------------------------------------- tax-inclusive lines with item rules
INCLUSIVE = {"tax_behavior": "inclusive"}


def _figures(li: dict[str, Any]) -> list[tuple[str, str, str]]:
    return [(t["jurisdiction_type"], t["taxable_base"], t["tax_amount"]) for t in li["taxes"]]


def test_tennessee_5000_inclusive(calc: Caller, seller: Tenant) -> None:
    # $5,000.00 paid, tax included, Nashville: above $3,200 of price the tax is 0.07 P + 36.00 + 44.00:
    # P = 492000 / 1.07 = 459813.08 -> 459813; tax 40187: state 32186.91 -> 32187, the single article
    # 2.75% on 1,600.00 = 4400, county 2.25% on 1,600.00 = 3600 (32187 + 4400 + 3600 = 40187).
    li = _send(calc, seller, line("1", "TN", GOODS, price=500000, zip="37201", **INCLUSIVE))["line_items"][0]
    assert li["tax_amount"] == "40187"
    assert _figures(li) == [("state", "459813", "32187"), ("state", "160000", "4400"), ("county", "160000", "3600")]


def test_florida_7200_inclusive(calc: Caller, seller: Tenant) -> None:
    # $7,200.00 paid, Miami: P + 0.06 P + 50.00 = 7,200.00 -> P = 715000 / 1.06 = 674528.30 -> 674528;
    # tax 45472: state 40471.68 -> 40472, surtax on the first 5,000.00: 5000.
    li = _send(calc, seller, line("1", "FL", GOODS, price=720000, zip="33101", **INCLUSIVE))["line_items"][0]
    assert li["tax_amount"] == "45472"
    assert _figures(li) == [("state", "674528", "40472"), ("county", "500000", "5000")]


def test_ny_mixed_inclusive_shipment(calc: Caller, seller: Tenant) -> None:
    # Colonie, all tax included. Shirt $50 (state-exempt, county 4%): P = 5000 / 1.04 = 4807.69 -> 4808, 192.
    # Lamp $150 at 8%: P = 15000 / 1.08 = 13888.89 -> 13889, tax 1111 = 555 + 556 (556 twice is one over:
    # back from the earlier row on the tie). Delivery $10: goods 18697, state-taxable 13889 (TB-ST-838):
    # P (1 + 0.04 x 13889 / 18697 + 0.04) = 1000 -> P = 934.83 -> 935, tax 65: state base 935 x 13889 / 18697
    # = 694.56 -> 695, 27.8 -> 28; county 935, 37.4 -> 37.
    resp = _send(calc, seller, line("1", "NY", SHIRT, price=5000, zip="12203", **INCLUSIVE),
                 line("2", "NY", GOODS, price=15000, zip="12203", **INCLUSIVE),
                 line("3", "NY", SHIP, price=1000, zip="12203", **INCLUSIVE))
    shirt, lamp, ship = resp["line_items"]
    assert _figures(shirt) == [("state", "0", "0"), ("county", "4808", "192")]
    assert _figures(lamp) == [("state", "13889", "555"), ("county", "13889", "556")]
    assert _figures(ship) == [("state", "695", "28"), ("county", "935", "37")]
    assert resp["tax_amount"] == str(192 + 1111 + 65)
    assert "TB-ST-838" in ship["taxes"][0]["rule_name"]


def test_austin_groceries_and_inclusive_delivery(calc: Caller, seller: Tenant) -> None:
    # 34 TAC 3.303: groceries only: the $9.99 delivery paid carries no tax (its price is all of it).
    resp = _send(calc, seller, line("1", "TX", GROCERY, price=5000, zip="78701", **INCLUSIVE),
                 line("2", "TX", SHIP, price=999, zip="78701", **INCLUSIVE))
    assert resp["tax_amount"] == "0"
    assert all(t["taxable_base"] == "0" for t in resp["line_items"][1]["taxes"])


# ----------------------------------------------------------------- delivery rules of other states
def test_wisconsin_mixed_shipment_delivery_taxed_on_its_taxable_share(calc: Caller, seller: Tenant) -> None:
    # Wis. Admin. Code Tax 11.94(2)(c): $50 of groceries (exempt), a $150 lamp, $10 delivery at 5%:
    # base 1000 x 150 / 200 = 750 -> 37.5 -> 38; the lamp 750.
    resp = _send(calc, seller, line("1", "WI", GROCERY, price=5000), line("2", "WI", GOODS, price=15000),
                 line("3", "WI", SHIP, price=1000))
    assert [_figures(li) for li in resp["line_items"]] == [
        [("state", "0", "0")], [("state", "15000", "750")], [("state", "750", "38")]]
    assert "Tax 11.94" in resp["line_items"][2]["taxes"][0]["rule_name"]
    # Groceries alone: 11.94(2)(b): the delivery is not taxed either.
    alone = _send(calc, seller, line("1", "WI", GROCERY, price=5000), line("2", "WI", SHIP, price=1000))
    assert alone["tax_amount"] == "0"


def test_iowa_exempts_separately_stated_delivery(calc: Caller, seller: Tenant) -> None:
    # Iowa Code 423.1(47)(b) (the taxability file): separately stated delivery is not part of the sales price,
    # even with taxable goods: the $150 lamp 6% = 900, the $10 delivery 0.
    resp = _send(calc, seller, line("1", "IA", GOODS, price=15000), line("2", "IA", SHIP, price=1000))
    assert [li["tax_amount"] for li in resp["line_items"]] == ["900", "0"]


# ----------------------------------------------------------------- names that belong to the rate
def _named(li: dict[str, Any]) -> list[tuple[str, str, str]]:
    return [(t["jurisdiction_type"], t["jurisdiction_name"], t["tax_amount"]) for t in li["taxes"]]


def test_rows_are_named_after_the_region_of_the_rate(calc: Caller, seller: Tenant) -> None:
    # 28607 Boone: region WILKES: 4.75% = 475 + Wilkes County 2.25% = 225 (not Watauga County).
    resp = _send(calc, seller, line("1", "NC", GOODS, zip="28607"), line("2", "FL", GOODS, zip="32091"),
                 line("3", "AL", GOODS, zip="35004"))
    boone, starke, moody = resp["line_items"]
    assert _named(boone) == [("state", "North Carolina", "475"), ("county", "Wilkes County", "225")]
    assert "region WILKES (per-ZIP table)" in boone["taxes"][1]["detail"]
    # 32091 Starke: region CLAY: 6% = 600 + Clay County 1.5% = 150 (not Bradford County).
    assert _named(starke) == [("state", "Florida", "600"), ("county", "Clay County", "150")]
    # 35004 (the ZIP directory's Moody): region LEEDS, no county: its 4% city rate is the region's: Leeds 400;
    # state 4% = 400; special 2% = 200.
    assert _named(moody) == [("state", "Alabama", "400"), ("city", "Leeds", "400"),
                             ("special", "Leeds special district", "200")]
    assert all("region LEEDS (per-ZIP table)" in t["detail"] for t in moody["taxes"])
