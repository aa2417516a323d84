"""Tax-inclusive prices (issue 31) through REST and gRPC on SQLite and PostgreSQL, against a real server.

A server on a database of its own with synthetic local records imported through the application's
import path. Rates (worked by hand from the records below and the built-in state rates):

* TX, no postal code: Texas 6.25% only;
* TX 78701: Texas 6.25% + city 1% + MTA 1% = 8.25%;
* CA 94103: California 6% + statewide local 1.25% + district 2.25% = 9.5%;
* OR 97201: no sales tax, 0%.

For an inclusive line (docs/tax-engine.md, "Tax-inclusive prices"): price P = ROUND_HALF_UP(amount /
(1 + the rows' rates)), tax = amount - P; each row ROUND_HALF_UP(rate x P), and the cents the rows miss
go one per row to the rows that lost most in rounding (taken back from those that gained most).
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import date
from decimal import ROUND_HALF_UP, Decimal
from typing import Any

import grpc
import httpx
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from levyserver import LevyServer, Tenant, create_tenant
from rates_servers import caller, server_with_records
from test_calculations import Caller, _Sql, _wait_for, assert_consistent, calc_error
from txn_api import Txn

from levy.domain.tax.local_rates import Component, LocalRecord

DAY = "2026-05-01T12:00:00Z"
SOURCE = "inclusive-synthetic.csv"


def _rec(state: str, zip5: str, *parts: tuple[str, str, str, str]) -> LocalRecord:
    comps = tuple(Component(kind, name, Decimal(rate), code) for kind, name, rate, code in parts)  # type: ignore[arg-type]
    return LocalRecord(state=state, zip5=zip5, components=comps, effective_from=date(2020, 1, 1), effective_to=None,
                       source=SOURCE, source_kind="official_zip", primary=True, line=1)


RECORDS = [
    _rec("TX", "78701", ("city", "Austin", "0.01", "US-CI-TX-AUSTIN"),
         ("special", "Austin MTA", "0.01", "US-SP-TX-AUSTIN_MTA")),
    _rec("CA", "94103", ("special", "Test district taxes", "0.0225", "US-SP-CA-TEST_DISTRICT_TAXES")),
]
STATES = ("TX", "CA", "OR")


@pytest.fixture(scope="module", params=["sqlite", "postgres"])
def server(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[LevyServer]:
    yield from server_with_records(request.param, tmp_path_factory, SOURCE, RECORDS)


@pytest.fixture(scope="module")
def tenant(server: LevyServer) -> Tenant:
    t = create_tenant(server.database_url)
    _Sql(server.database_url).register(t.organization_id, *STATES)
    with httpx.Client(base_url=server.http_url, timeout=30) as rest:
        def loaded() -> bool:  # the server picked the import up: Austin has its city and MTA rows
            r = rest.post("/calculations", headers={"X-API-Key": t.key},
                          json={"transaction_date": DAY, "line_items": [item("1", "TX", "78701")]}).json()
            return len(r["line_items"][0]["taxes"]) == 3

        assert _wait_for(loaded), "the server did not pick the import up"
    return t


@pytest.fixture(scope="module")
def channel(server: LevyServer) -> Iterator[grpc.Channel]:
    with grpc.insecure_channel(server.grpc_target) as ch:
        yield ch


@pytest.fixture(params=["rest", "grpc"])
def calc(request: pytest.FixtureRequest, server: LevyServer) -> Iterator[Caller]:
    yield from caller(request.param, server)


@pytest.fixture(params=["rest", "grpc"])
def tx(request: pytest.FixtureRequest, server: LevyServer, channel: grpc.Channel, tenant: Tenant) -> Iterator[Txn]:
    t = Txn(request.param, server, channel, tenant.key)
    yield t
    t.close()


def item(id: str, state: str, zip5: str | None = None, price: int = 10000, codes: list[str] | None = None,
         **extra: Any) -> dict[str, Any]:
    address = {"state": state, "country": "US", **({"postal_code": zip5} if zip5 else {})}
    return {"id": id, "quantity": "1", "unit_price": str(price), "customer": {"address": address},
            "product": {"tax_attributes": codes or ["GENERAL.TANGIBLE.GOODS"]}, **extra}


def figures(li: dict[str, Any]) -> list[tuple[str, str, str]]:
    """(jurisdiction name, taxable base, tax) of each row."""
    return [(t["jurisdiction_name"], t["taxable_base"], t["tax_amount"]) for t in li["taxes"]]


INCLUSIVE = {"tax_behavior": "inclusive"}


def test_inclusive_at_several_rates(calc: Caller, tenant: Tenant) -> None:
    out = calc(tenant.key, {"transaction_date": DAY, "line_items": [
        item("tx", "TX", **INCLUSIVE), item("austin", "TX", "78701", **INCLUSIVE),
        item("sf", "CA", "94103", **INCLUSIVE), item("or", "OR", "97201", **INCLUSIVE)]})
    assert_consistent(out)
    tx_, austin, sf, or_ = out["line_items"]
    # 6.25%: P = 10000 / 1.0625 = 9411.76 -> 9412; tax 588 (9412 x 0.0625 = 588.25 -> 588).
    assert (tx_["tax_amount"], figures(tx_)) == ("588", [("Texas", "9412", "588")])
    # 8.25%: P = 10000 / 1.0825 = 9237.88 -> 9238; tax 762. Rows 577.375 -> 577, 92.38 -> 92 twice = 761;
    # the missing cent to the row that lost most (0.38, city before MTA on the tie): 577 + 93 + 92.
    assert austin["tax_amount"] == "762"
    assert [f[1:] for f in figures(austin)] == [("9238", "577"), ("9238", "93"), ("9238", "92")]
    # 9.5%: P = 10000 / 1.095 = 9132.42 -> 9132; tax 868. Rows 547.92 -> 548, 114.15 -> 114, 205.47 -> 205
    # = 867; the missing cent to the district (lost 0.47): 548 + 114 + 206 = 868.
    assert sf["tax_amount"] == "868"
    assert [f[1:] for f in figures(sf)] == [("9132", "548"), ("9132", "114"), ("9132", "206")]
    # 0%: nothing to take out.
    assert or_["tax_amount"] == "0"
    assert out["tax_amount"] == str(588 + 762 + 868)
    assert {li["tax_behavior"] for li in out["line_items"]} == {"inclusive"}


# The four rate sets of the module doc: (state, ZIP, total rate worked by hand).
RATE_SETS = [("TX", None, Decimal("0.0625")), ("TX", "78701", Decimal("0.0825")), ("CA", "94103", Decimal("0.095")),
             ("OR", None, Decimal(0))]


@settings(max_examples=30, deadline=None, suppress_health_check=list(HealthCheck))
@given(amounts=st.lists(st.integers(0, 10**9), min_size=len(RATE_SETS), max_size=len(RATE_SETS)))
def test_property_inclusive_base_plus_tax_is_the_amount(amounts: list[int], server: LevyServer,
                                                        tenant: Tenant) -> None:
    # Any amount at every rate set, one line each, over REST and gRPC: the price P is the amount with the total
    # rate taken out, half up (P = amount / (1 + rate)); P + the line's tax = the amount exactly; every row is
    # taxed on P and the rows add up to the line's tax. Both transports answer the same.
    lines = [item(str(i), state, zip5, price=amount, **INCLUSIVE)
             for i, ((state, zip5, _), amount) in enumerate(zip(RATE_SETS, amounts))]
    answers = []
    for transport in ("rest", "grpc"):
        for calc in caller(transport, server):
            answers.append(calc(tenant.key, {"transaction_date": DAY, "line_items": lines}))
    assert answers[0] == answers[1]
    for li, (_, _, rate), amount in zip(answers[0]["line_items"], RATE_SETS, amounts):
        price = int((Decimal(amount) / (1 + rate)).quantize(Decimal(1), rounding=ROUND_HALF_UP))
        tax = int(li["tax_amount"])
        assert price + tax == amount, (li, amount)
        assert sum(int(t["tax_amount"]) for t in li["taxes"]) == tax
        assert sum((Decimal(t["tax_rate"]) for t in li["taxes"]), Decimal(0)) == rate
        assert all(t["taxable_base"] == str(price) for t in li["taxes"] if Decimal(t["tax_rate"]) > 0)
    assert_consistent(answers[0])


def test_request_default_and_a_line_that_says_otherwise(calc: Caller, tenant: Tenant) -> None:
    out = calc(tenant.key, {"transaction_date": DAY, "tax_behavior": "inclusive", "line_items": [
        item("a", "TX", "78701"), item("b", "TX", "78701", tax_behavior="exclusive")]})
    a, b = out["line_items"]
    assert (a["tax_behavior"], a["tax_amount"]) == ("inclusive", "762")  # as above
    # Exclusive: 10000 x (6.25% + 1% + 1%) = 625 + 100 + 100 = 825 on top.
    assert (b["tax_behavior"], b["tax_amount"]) == ("exclusive", "825")
    # Without any tax_behavior, nothing changes: exclusive.
    plain = calc(tenant.key, {"transaction_date": DAY, "line_items": [item("a", "TX", "78701")]})
    assert (plain["line_items"][0]["tax_behavior"], plain["tax_amount"]) == ("exclusive", "825")


def test_line_and_transaction_discounts(calc: Caller, tenant: Tenant) -> None:
    line = item("a", "TX", "78701", price=6000, quantity="2", discounts=[{"id": "d", "amount": "1000"}], **INCLUSIVE)
    out = calc(tenant.key, {"transaction_date": DAY, "discount_amount": "500", "line_items": [line]})
    (li,) = out["line_items"]
    # Paid: 2 x 6000 - 1000 - 500 = 10500. P = 10500 / 1.0825 = 9699.77 -> 9700; tax 800:
    # 9700 x 0.0625 = 606.25 -> 606, 9700 x 0.01 = 97 twice: 800, nothing to move.
    assert li["tax_amount"] == "800"
    assert [f[1:] for f in figures(li)] == [("9700", "606"), ("9700", "97"), ("9700", "97")]
    # Before discounts, 12000 paid: P = 12000 / 1.0825 = 11085.45 -> 11085; tax 915 (692.8125 -> 693,
    # 110.85 -> 111 twice = 915). The discounts took 915 - 800 = 115, split 1000 : 500 by largest
    # remainder: 76.67 -> 77 and 38.33 -> 38.
    assert li["tax_amount_before_discounts"] == "915"
    assert [(d["id"], d["tax_amount_reduction"]) for d in li["discounts"]] == [("d", "77"), ("discount_amount", "38")]


def test_exempt_lines_the_amount_is_the_price(calc: Caller, server: LevyServer, tenant: Tenant) -> None:
    # Texas groceries are exempt: base 0, tax 0 on every row.
    out = calc(tenant.key, {"transaction_date": DAY, "line_items": [
        item("food", "TX", "78701", price=2500, codes=["FOOD.GROCERY.GENERAL"], **INCLUSIVE)]})
    (li,) = out["line_items"]
    assert li["tax_amount"] == "0" and all(f[1:] == ("0", "0") for f in figures(li))
    # A customer with an exemption override (exemption management on): the same.
    sql = _Sql(server.database_url)
    t = create_tenant(server.database_url)
    sql.register(t.organization_id, *STATES)
    sql.settings(t.organization_id)
    sql.customer(t.organization_id, "exempt-buyer", exempt=True)
    line = item("a", "TX", "78701", **INCLUSIVE)
    line["customer"]["preset"] = {"id": "exempt-buyer"}
    (li,) = calc(t.key, {"transaction_date": DAY, "line_items": [line]})["line_items"]
    assert li["tax_amount"] == "0" and all(f[1:] == ("0", "0") for f in figures(li))


def test_a_bad_tax_behavior_is_422(calc: Caller, tenant: Tenant) -> None:
    status, errs, _ = calc_error(calc.raw(tenant.key, {"transaction_date": DAY, "tax_behavior": "gross",
                                                       "line_items": [item("a", "TX", tax_behavior="net")]}),
                                 calc.transport)
    assert status == 422
    assert sorted(tuple(e["loc"]) for e in errs) == [("body", "line_items", 0, "tax_behavior"),
                                                      ("body", "tax_behavior")]


def test_transaction_stored_finalized_listed_and_credited_exactly(tx: Txn) -> None:
    ref = f"inc-{tx.transport}-{id(tx)}"
    sale = tx.create({"type": "sale", "status": "finalized", "transaction_date": DAY, "reference_id": ref,
                      "tax_behavior": "inclusive",
                      "line_items": [item("a", "TX", "78701"), item("b", "CA", "94103", price=5000)]})
    # a: 762 (above). b: 5000 at 9.5%: P = 5000 / 1.095 = 4566.21 -> 4566; tax 434. Rows 4566 x 0.06 = 273.96
    # -> 274, x 0.0125 = 57.075 -> 57, x 0.0225 = 102.735 -> 103 = 434, nothing to move.
    assert sale["tax_amount"] == str(762 + 434)
    a, b = sale["line_items"]
    assert (a["tax_behavior"], b["tax_behavior"]) == ("inclusive", "inclusive")  # stored with each line
    assert [f[1:] for f in figures(b)] == [("4566", "274"), ("4566", "57"), ("4566", "103")]
    again = tx.get(sale["id"])
    assert [li["taxes"] for li in again["line_items"]] == [li["taxes"] for li in sale["line_items"]]
    assert [li["tax_behavior"] for li in again["line_items"]] == ["inclusive", "inclusive"]
    listed = tx.list(reference_id=ref)["data"]
    assert [t["id"] for t in listed] == [sale["id"]] and listed[0]["tax_amount"] == "1196"
    # A credit of line a, sent again tax-inclusive: it reverses the sale's line row by row.
    credit = tx.create({"type": "credit", "status": "finalized", "transaction_date": DAY,
                        "parent_transaction_id": sale["id"], "line_items": [item("a", "TX", "78701", **INCLUSIVE)]})
    assert credit["tax_amount"] == "762"
    assert figures(credit["line_items"][0]) == figures(a)
    # The rest, line b, by a second credit: 434, row by row.
    rest = tx.create({"type": "credit", "status": "finalized", "transaction_date": DAY,
                      "parent_transaction_id": sale["id"],
                      "line_items": [item("b", "CA", "94103", price=5000, **INCLUSIVE)]})
    assert rest["tax_amount"] == "434" and figures(rest["line_items"][0]) == figures(b)


def test_full_credit_of_an_inclusive_sale(tx: Txn) -> None:
    sale = tx.create({"type": "sale", "status": "finalized", "transaction_date": DAY,
                      "line_items": [item("b", "CA", "94103", price=5000, **INCLUSIVE)]})
    assert sale["tax_amount"] == "434"  # as above
    credit = tx.create({"type": "credit", "status": "finalized", "transaction_date": DAY,
                        "parent_transaction_id": sale["id"]})
    (li,) = credit["line_items"]
    assert (credit["tax_amount"], li["tax_behavior"]) == ("434", "inclusive")
    assert figures(li) == figures(sale["line_items"][0])


def test_update_recalculates_with_the_updates_tax_behavior(tx: Txn) -> None:
    draft = tx.create({"type": "sale", "status": "draft", "transaction_date": DAY,
                       "line_items": [item("a", "TX", "78701")]})
    assert draft["tax_amount"] == "825"  # exclusive: 625 + 100 + 100
    # tax_behavior changes the calculation: only with the full line_items.
    errs = tx.update_raw(draft["id"], {"tax_behavior": "inclusive"})
    assert errs[0] == 422 and [e["source"]["pointer"] for e in errs[1]["errors"]] == ["/tax_behavior"]
    updated = tx.update(draft["id"], {"tax_behavior": "inclusive", "line_items": [item("a", "TX", "78701")]})
    assert updated["tax_amount"] == "762"  # 10000 tax included at 8.25% (above)
    assert updated["line_items"][0]["tax_behavior"] == "inclusive"
    assert tx.get(draft["id"])["tax_amount"] == "762"


def test_returns_count_sales_net_of_the_tax_they_include(tx: Txn, server: LevyServer, channel: grpc.Channel) -> None:
    t = create_tenant(server.database_url)  # a tenant of its own: the report is only this sale
    _Sql(server.database_url).register(t.organization_id, *STATES)
    own = Txn(tx.transport, server, channel, t.key)
    try:
        own.create({"type": "sale", "status": "finalized", "transaction_date": DAY, "line_items": [
            item("a", "TX", "78701", discounts=[{"id": "d", "amount": "1000"}], **INCLUSIVE)]})
        r = own.http.get("/reports/liability", params={"from": "2026-05-01", "to": "2026-05-31"},
                         headers={"X-API-Key": t.admin_key})
    finally:
        own.close()
    assert r.status_code == 200, r.text
    (texas,) = [s for s in r.json()["jurisdictions"] if s["jurisdiction"] == "US-ST-TX"]
    # 10000 tax included, 1000 off: 9000 paid. P = 9000 / 1.0825 = 8314.09 -> 8314; tax 686 (8314 x 0.0625 =
    # 519.625 -> 520, 83.14 -> 83 twice = 686). Before discounts 10000 includes 762 (above): gross sales
    # 10000 - 762 = 9238, discounts 9238 - 8314 = 924, taxable 8314: the tax is in none of them.
    # The state's row: tax 520.
    assert (texas["gross_sales"], texas["discounts"], texas["taxable_sales"], texas["tax_calculated"]) == \
        ("9238", "924", "8314", "520")
