"""Sourcing (issue 19) through REST and gRPC on SQLite and PostgreSQL, against a real server.

A server on a database of its own, with the synthetic local records of
tests/sourcing_cases.py imported through the application's import path. Every
expected figure is worked by hand in tests/sourcing_cases.py (a line of 100.00)
or in the comments here; none comes from the engine.

Tenants: ``plain`` has no business location (today's behaviour); ``located`` has a
default location in Austin, TX (city 1% + MTA 1%) and one in Buda, TX (city 1%);
``other`` has a location of its own (a 404 for the others)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import grpc
import httpx
import pytest
from levyserver import LevyServer, Tenant, create_tenant
from rates_servers import caller, server_with_records
from sourcing_cases import (
    DAY,
    HOUSTON_ROWS,
    INTERSTATE,
    INTRASTATE,
    RECORDS,
    SOURCE,
    STATES,
    address,
    goods_line,
)
from test_calculations import Caller, _Sql, _wait_for, assert_consistent
from txn_api import Txn

from levy.v1 import filings_pb2 as fpb
from levy.v1 import filings_pb2_grpc as fpbg

AUSTIN = {"line1": "100 Congress Ave", "city": "Austin", **address("TX", "78701")}
BUDA = {"line1": "100 Main St", "city": "Buda", **address("TX", "78610")}
HOUSTON = ("TX", "77002")
ALL = sorted({*STATES, "TX"})


@pytest.fixture(scope="module", params=["sqlite", "postgres"])
def server(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[LevyServer]:
    yield from server_with_records(request.param, tmp_path_factory, SOURCE, RECORDS)


def _tenant(server: LevyServer) -> Tenant:
    t = create_tenant(server.database_url)
    _Sql(server.database_url).register(t.organization_id, *ALL)
    return t


def _location(server: LevyServer, t: Tenant, name: str, addr: dict[str, str], default: bool) -> str:
    with httpx.Client(base_url=server.http_url, headers={"X-API-Key": t.admin_key}, timeout=30) as c:
        r = c.post("/organization/locations", json={"name": name, "address": addr, "effective_from": "2026-01-01",
                                                     "is_default": default})
        assert r.status_code == 201, r.text
        return r.json()["id"]


@pytest.fixture(scope="module")
def plain(server: LevyServer) -> Tenant:
    t = _tenant(server)
    with httpx.Client(base_url=server.http_url, timeout=30) as rest:
        def loaded() -> bool:  # the server picked the import up: Houston has its city row
            r = rest.post("/calculations", headers={"X-API-Key": t.key},
                          json={"transaction_date": DAY, "line_items": [goods_line(HOUSTON)]}).json()
            return len(r["line_items"][0]["taxes"]) == 3

        assert _wait_for(loaded), "the server did not pick the import up"
    return t


@pytest.fixture(scope="module")
def located(server: LevyServer, plain: Tenant) -> tuple[Tenant, str, str]:
    """(tenant, Austin's id (the default), Buda's id)."""
    t = _tenant(server)
    return t, _location(server, t, "Austin store", AUSTIN, True), _location(server, t, "Buda warehouse", BUDA, False)


@pytest.fixture(scope="module")
def other(server: LevyServer) -> tuple[Tenant, str]:
    t = _tenant(server)
    return t, _location(server, t, "Elsewhere", AUSTIN, True)


@pytest.fixture(scope="module")
def channel(server: LevyServer) -> Iterator[grpc.Channel]:
    with grpc.insecure_channel(server.grpc_target) as ch:
        yield ch


@pytest.fixture(params=["rest", "grpc"])
def calc(request: pytest.FixtureRequest, server: LevyServer) -> Iterator[Caller]:
    yield from caller(request.param, server)


def rows(li: dict[str, Any]) -> list[tuple[str, str, str]]:
    return [(_code(t), t["tax_amount"], t["sourcing"]) for t in li["taxes"]]


def _code(t: dict[str, Any]) -> str:
    """The API's rows carry no code: the synthetic names and the built-in state names find it."""
    from levy.ratefiles.builtin import load_states

    names = {c.name: c.code for r in RECORDS for c in r.components}
    for st in load_states():
        names[st.name] = f"US-ST-{st.code}"
        names.update({w.name: f"US-ST-{st.code}-LOCAL" for w in st.statewide_local})
    return names[t["jurisdiction_name"]]


def one(calc: Caller, key: str, item: dict[str, Any]) -> dict[str, Any]:
    out = calc(key, {"transaction_date": DAY, "line_items": [item]})
    assert_consistent(out)
    return out["line_items"][0]


# ------------------------------------------------------------------ the table: each state's rule


@pytest.mark.parametrize("case", INTRASTATE, ids=[c[0] for c in INTRASTATE])
def test_intrastate_by_ship_from_address(case: tuple[Any, ...], calc: Caller, plain: Tenant) -> None:
    _, origin, delivery, kind, total, expected = case
    li = one(calc, plain.key, goods_line(delivery, {"address": address(*origin)}))
    assert (li["sourcing"], li["tax_amount"], rows(li)) == (kind, total, expected)
    assert all("sourced" in t["detail"] and "the line's ship_from address" in t["detail"] for t in li["taxes"])


@pytest.mark.parametrize("state, origin", INTERSTATE, ids=[s for s, _ in INTERSTATE])
def test_interstate_from_each_origin_state_is_destination(state: str, origin: tuple[str, str], calc: Caller,
                                                          plain: Tenant) -> None:
    li = one(calc, plain.key, goods_line(HOUSTON, {"address": address(*origin)}))
    assert (li["sourcing"], li["tax_amount"]) == ("destination", "825")
    assert rows(li) == [(c, t, "destination") for c, t, _ in HOUSTON_ROWS]
    assert "interstate sales are destination-sourced" in li["taxes"][0]["detail"]


# ------------------------------------------------------------------ locations


def test_no_location_is_todays_behaviour(calc: Caller, plain: Tenant) -> None:
    li = one(calc, plain.key, goods_line(HOUSTON))
    assert (li["sourcing"], li["tax_amount"], rows(li)) == ("", "825", HOUSTON_ROWS)
    assert not any("sourced" in t["detail"] for t in li["taxes"])


def test_default_location_is_the_origin(calc: Caller, located: tuple[Tenant, str, str]) -> None:
    t, austin, _ = located
    li = one(calc, t.key, goods_line(HOUSTON))
    # Austin -> Houston: 625 + Austin city 100 + Austin MTA 100 (the 2% cap reached at origin).
    assert (li["sourcing"], li["tax_amount"]) == ("mixed", "825")
    assert rows(li) == [("US-ST-TX", "625", "origin"), ("US-CI-TX-AUSTIN", "100", "origin"),
                        ("US-SP-TX-AUSTIN_MTA", "100", "origin")]
    assert all(f"default location {austin}" in r["detail"] for r in li["taxes"])
    # Before the location's effective_from (2026-01-01) there is no default: today's behaviour (Houston's rows).
    out = calc(t.key, {"transaction_date": "2025-06-01T12:00:00Z", "line_items": [goods_line(HOUSTON)]})
    li = out["line_items"][0]
    assert (li["sourcing"], li["tax_amount"], rows(li)) == ("", "825", HOUSTON_ROWS)


def test_archived_location_is_422(calc: Caller, server: LevyServer) -> None:
    t = _tenant(server)
    loc = _location(server, t, "Closed", BUDA, False)
    with httpx.Client(base_url=server.http_url, headers={"X-API-Key": t.admin_key}, timeout=30) as c:
        assert c.post(f"/organization/locations/{loc}/archive", json={}).status_code == 200
    status, _ = calc.raw(t.key, {"transaction_date": DAY, "line_items": [goods_line(HOUSTON, {"location_id": loc})]})
    assert status == 422


def test_line_ship_from_overrides_the_default(calc: Caller, located: tuple[Tenant, str, str]) -> None:
    t, _, buda = located
    # Buda (city 1%) -> Houston: Houston's MTA 1% added up to the cap; its city tax not (city collected at Buda).
    for ship_from, label in (({"location_id": buda}, f"location {buda}"),
                             ({"address": BUDA}, "the line's ship_from address")):
        li = one(calc, t.key, goods_line(HOUSTON, ship_from))
        assert (li["sourcing"], li["tax_amount"]) == ("mixed", "825")
        assert rows(li) == [("US-ST-TX", "625", "origin"), ("US-CI-TX-BUDA", "100", "origin"),
                            ("US-SP-TX-HOUSTON_MTA", "100", "destination")]
        assert label in li["taxes"][0]["detail"] and "2% local cap: Houston MTA 1%" in li["taxes"][0]["detail"]


def test_two_lines_two_origins_total_is_the_sum(calc: Caller, located: tuple[Tenant, str, str]) -> None:
    t, _, buda = located
    out = calc(t.key, {"transaction_date": DAY, "line_items": [
        goods_line(("TX", "77301"), {"location_id": buda}, id="a"),  # 775 (sourcing_cases: Buda -> Conroe)
        goods_line(("CA", "91302"), id="b"),  # Austin -> Calabasas is interstate: 600 + 125 + 25 + 225 = 975
    ]})
    assert_consistent(out)
    assert [li["tax_amount"] for li in out["line_items"]] == ["775", "975"] and out["tax_amount"] == "1750"
    assert [li["sourcing"] for li in out["line_items"]] == ["mixed", "destination"]


def test_location_of_another_organization_is_404(calc: Caller, server: LevyServer, plain: Tenant,
                                                  other: tuple[Tenant, str]) -> None:
    _, theirs = other
    for missing in (theirs, "loc_01HZZZZZZZZZZZZZZZZZZZZZZZ"):
        status, out = calc.raw(plain.key, {"transaction_date": DAY,
                                           "line_items": [goods_line(HOUSTON, {"location_id": missing})]})
        if calc.transport == "rest":
            assert status == 404, out
            assert out["errors"][0]["code"] == "not_found"
            assert out["errors"][0]["source"]["pointer"] == "/line_items/0/ship_from/location_id"
        else:
            assert out.code == grpc.StatusCode.NOT_FOUND, out
            assert out.errors[0]["source"]["pointer"] == "/line_items/0/ship_from/location_id"


def test_invalid_ship_from_address_is_422_with_pointer(calc: Caller, plain: Tenant) -> None:
    # 90210 is a California ZIP, sent with TX.
    status, out = calc.raw(plain.key, {"transaction_date": DAY, "line_items": [
        goods_line(HOUSTON, {"address": {**address("TX", "90210")}})]})
    if calc.transport == "rest":
        assert status == 422, out
        assert out["detail"][0]["loc"] == ["body", "line_items", 0, "ship_from", "address", "postal_code"]
    else:
        assert out.code == grpc.StatusCode.INVALID_ARGUMENT
        assert out.violations[0][0] == "/line_items/0/ship_from/address/postal_code"
    status, out = calc.raw(plain.key, {"transaction_date": DAY, "line_items": [
        goods_line(HOUSTON, {"location_id": "loc_x", "address": address("TX", "78701")})]})
    assert status == 422, out


# ------------------------------------------------------------------ transactions, credits, returns


@pytest.mark.parametrize("transport", ["rest", "grpc"])
def test_transaction_stores_the_ship_from_and_credit_copies_it(transport: str, server: LevyServer,
                                                              channel: grpc.Channel,
                                                              located: tuple[Tenant, str, str]) -> None:
    t, austin, buda = located
    tx = Txn(transport, server, channel, t.key)
    try:
        sale = tx.create({"type": "sale", "status": "finalized", "transaction_date": DAY, "line_items": [
            goods_line(HOUSTON, id="a"), goods_line(HOUSTON, {"location_id": buda}, id="b")]})
        a, b = sale["line_items"]
        assert a["ship_from_used"] == {"location_id": austin, "address": {k: v for k, v in AUSTIN.items()}}
        assert not a.get("ship_from")  # not sent: the default location was used
        assert b["ship_from_used"]["location_id"] == buda and b["ship_from"]["location_id"] == buda
        assert (a["sourcing"], b["sourcing"]) == ("mixed", "mixed")
        # 825 + 825 (Austin's rows; Buda's + Houston MTA).
        assert sale["tax_amount"] == "1650" and sale["calculated_tax_amount"] == "1650"
        again = tx.get(sale["id"])
        assert [li["ship_from_used"] for li in again["line_items"]] == [a["ship_from_used"], b["ship_from_used"]]
        assert [[r["sourcing"] for r in li["taxes"]] for li in again["line_items"]] == [
            ["origin", "origin", "origin"], ["origin", "origin", "destination"]]
        # A partial credit of half of line a, sent with another ship_from (Houston): its rows and its ship-from
        # are the sale line's (Austin), halved: 625/2 = 312.5 -> 313, 100/2 = 50, 50: 413.
        credit = tx.create({"type": "credit", "status": "finalized", "transaction_date": DAY,
                            "parent_transaction_id": sale["id"], "line_items": [
                                {**goods_line(HOUSTON, {"address": address("TX", "77002")}, id="a"),
                                 "unit_price": "5000"}]})
        (c,) = credit["line_items"]
        assert c["ship_from_used"] == a["ship_from_used"] and c["sourcing"] == "mixed"
        assert [r["tax_amount"] for r in c["taxes"]] == ["313", "50", "50"] and credit["tax_amount"] == "413"
        # A full credit copies every line of its sale, ship-from included.
        sale2 = tx.create({"type": "sale", "status": "finalized", "transaction_date": DAY, "line_items": [
            goods_line(HOUSTON, {"location_id": buda}, id="b")]})
        full = tx.create({"type": "credit", "status": "draft", "transaction_date": DAY,
                          "parent_transaction_id": sale2["id"]})
        assert [li["ship_from_used"] for li in full["line_items"]] == [b["ship_from_used"]]
        assert full["tax_amount"] == "825" and [r["sourcing"] for r in full["line_items"][0]["taxes"]] == [
            "origin", "origin", "destination"]
    finally:
        tx.close()


@pytest.mark.parametrize("transport", ["rest", "grpc"])
def test_filing_attributes_origin_sourced_tax_to_the_origin(transport: str, server: LevyServer,
                                                            channel: grpc.Channel) -> None:
    t = _tenant(server)
    _location(server, t, "Austin store", AUSTIN, True)
    tx = Txn(transport, server, channel, t.key)
    try:
        # Austin -> Houston, 100.00: Texas 625, Austin city 100, Austin MTA 100 (origin); nothing for Houston.
        tx.create({"type": "sale", "status": "finalized", "transaction_date": DAY,
                   "line_items": [goods_line(HOUSTON)]})
    finally:
        tx.close()
    want = {"US-ST-TX": "625", "US-CI-TX-AUSTIN": "100", "US-SP-TX-AUSTIN_MTA": "100"}
    if transport == "rest":
        with httpx.Client(base_url=server.http_url, headers={"X-API-Key": t.admin_key}, timeout=30) as c:
            r = c.post("/filings", json={"jurisdiction": "US-ST-TX", "period_start": "2026-05-01",
                                         "period_end": "2026-05-31"})
            assert r.status_code in (200, 201), r.text
            filing = r.json()
            report = c.get("/reports/liability", params={"from": "2026-05-01", "to": "2026-05-31"}).json()
    else:
        from google.protobuf import json_format
        from levytest import md

        stub = fpbg.FilingServiceStub(channel)
        meta = md(t.admin_key)
        filing = json_format.MessageToDict(stub.CreateFiling(fpb.CreateFilingRequest(filing=fpb.Filing(
            jurisdiction="US-ST-TX", period_start="2026-05-01", period_end="2026-05-31")), metadata=meta),
            preserving_proto_field_name=True)
        report = json_format.MessageToDict(stub.GetLiabilityReport(fpb.GetLiabilityReportRequest(
            **{"from": "2026-05-01", "to": "2026-05-31"}), metadata=meta), preserving_proto_field_name=True)
    for doc in (filing, report):
        got = {j["jurisdiction"]: j["filing_tax_amount"] for j in doc["jurisdictions"]}
        assert got == want, doc["jurisdictions"]
        assert not any("HOUSTON" in code for code in got)


@pytest.mark.parametrize("transport", ["rest", "grpc"])
def test_tax_only_sale_is_attributed_by_sourcing(transport: str, server: LevyServer, channel: grpc.Channel,
                                                 plain: Tenant, located: tuple[Tenant, str, str]) -> None:
    # A tax-only sale (one collected-tax line of 3.00 delivered in Houston): split equally over the
    # jurisdictions reached, 100 each. Without a location: Houston's; from the Austin default: Austin's.
    tax_line = {"id": "T", "quantity": "1", "unit_price": "300", "product": {"tax_attributes": ["SALES_TAX"]},
                "customer": {"address": address(*HOUSTON)}}
    for t, codes in ((plain, ["US-ST-TX", "US-CI-TX-HOUSTON", "US-SP-TX-HOUSTON_MTA"]),
                     (located[0], ["US-ST-TX", "US-CI-TX-AUSTIN", "US-SP-TX-AUSTIN_MTA"])):
        tx = Txn(transport, server, channel, t.key)
        try:
            out = tx.create({"type": "sale", "status": "finalized", "transaction_date": DAY, "line_items": [tax_line]})
        finally:
            tx.close()
        got = {a["jurisdiction_code"]: a["tax_amount"] for a in out["tax_only_attributions"]}
        assert got == {c: "100" for c in codes}, out
