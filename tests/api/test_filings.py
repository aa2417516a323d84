"""Filing, returns, liability reports and nexus (issue 8) through REST and gRPC
against a real server and database (SQLite and PostgreSQL).

Transactions and registrations are created through the API (``POST /transactions``,
``POST /organization/registrations``). Every expected figure is worked out by hand
in the comments: a TX address without postal code is Texas state 6.25% only; CA
is California 6% plus the statewide local 1.25% (amounts in cents, ROUND_HALF_UP).
"""

from __future__ import annotations

import concurrent.futures
import csv
import io
from collections.abc import Iterator
from typing import Any

import grpc
import httpx
import pytest
from google.protobuf import json_format

from levyserver import LevyServer, Tenant
from levytest import call_error, md
from levy.app.registry import methods
from levy.v1 import filings_pb2 as pb
from levy.v1 import filings_pb2_grpc as pbg
from security.security_helpers import assert_other_tenant_gets_404
from txn_api import line, register, tax_line

JAN = ("2026-01-01", "2026-01-31")
FEB = ("2026-02-01", "2026-02-28")


def day(d: str) -> str:
    return f"{d}T12:00:00Z"


class Filings:
    """The filing operations through one transport with the tenant's admin key; (status, JSON body)."""

    def __init__(self, transport: str, server: LevyServer, channel: grpc.Channel, key: str) -> None:
        self.transport, self.key = transport, key
        self.http = httpx.Client(base_url=server.http_url, headers={"X-API-Key": key}, timeout=60)
        self.stub = pbg.FilingServiceStub(channel)

    def close(self) -> None:
        self.http.close()

    def _grpc(self, method: Any, req: Any) -> tuple[int, Any]:
        try:
            resp = method(req, metadata=md(self.key))
        except grpc.RpcError:
            err = call_error(method, req, md(self.key))
            return int(err.errors[0]["status"]), {"errors": err.errors}
        if method is self.stub.ExportFiling:
            return 200, resp.data.decode()
        return 200, json_format.MessageToDict(resp, preserving_proto_field_name=True,
                                              always_print_fields_with_no_presence=True)

    def _rest(self, r: httpx.Response) -> tuple[int, Any]:
        if r.headers.get("content-type", "").startswith("text/csv"):
            return r.status_code, r.text
        return r.status_code, r.json()

    def create(self, body: dict[str, Any]) -> tuple[int, Any]:
        if self.transport == "rest":
            return self._rest(self.http.post("/filings", json=body))
        return self._grpc(self.stub.CreateFiling, pb.CreateFilingRequest(filing=json_format.ParseDict(body, pb.Filing())))

    def update(self, filing_id: str, body: dict[str, Any]) -> tuple[int, Any]:
        if self.transport == "rest":
            return self._rest(self.http.post(f"/filings/{filing_id}", json=body))
        return self._grpc(self.stub.UpdateFiling, pb.UpdateFilingRequest(
            filing_id=filing_id, filing=json_format.ParseDict(body, pb.Filing())))

    def get(self, filing_id: str) -> tuple[int, Any]:
        if self.transport == "rest":
            return self._rest(self.http.get(f"/filings/{filing_id}"))
        return self._grpc(self.stub.GetFiling, pb.GetFilingRequest(filing_id=filing_id))

    def list(self, **params: Any) -> tuple[int, Any]:
        if self.transport == "rest":
            return self._rest(self.http.get("/filings", params=params))
        return self._grpc(self.stub.ListFilings, pb.ListFilingsRequest(**params))

    def export(self, filing_id: str) -> tuple[int, Any]:
        if self.transport == "rest":
            return self._rest(self.http.get(f"/filings/{filing_id}/export"))
        return self._grpc(self.stub.ExportFiling, pb.ExportFilingRequest(filing_id=filing_id))

    def liability(self, **params: str) -> tuple[int, Any]:
        if self.transport == "rest":
            return self._rest(self.http.get("/reports/liability", params=params))
        return self._grpc(self.stub.GetLiabilityReport, pb.GetLiabilityReportRequest(**params))

    def nexus(self, **params: str) -> tuple[int, Any]:
        if self.transport == "rest":
            return self._rest(self.http.get("/nexus", params=params))
        return self._grpc(self.stub.GetNexusReport, pb.GetNexusReportRequest(**params))

    def ok(self, result: tuple[int, Any], status: int = 200) -> Any:
        code, out = result
        expected = 201 if (status == 201 and self.transport == "rest") else 200
        assert code == expected, out
        return out


@pytest.fixture(params=["rest", "grpc"])
def fil(request: pytest.FixtureRequest, server: LevyServer, channel: grpc.Channel, tenant: Tenant) -> Iterator[Filings]:
    f = Filings(request.param, server, channel, tenant.admin_key)
    yield f
    f.close()


def txn(http: httpx.Client, date: str, *lines: dict[str, Any], type: str = "sale", status: str = "finalized",
        **extra: Any) -> str:
    r = http.post("/transactions", json={"type": type, "status": status, "transaction_date": day(date),
                                         "line_items": list(lines), **extra})
    assert r.status_code == 200, r.text
    return str(r.json()["id"])


def status_of(http: httpx.Client, txn_id: str) -> str:
    r = http.get(f"/transactions/{txn_id}")
    assert r.status_code == 200, r.text
    return str(r.json()["status"])


def period(p: tuple[str, str], jurisdiction: str = "US-ST-TX", **extra: Any) -> dict[str, Any]:
    return {"jurisdiction": jurisdiction, "period_start": p[0], "period_end": p[1], **extra}


def row(filing: dict[str, Any], code: str) -> dict[str, Any]:
    rows = [j for j in filing["jurisdictions"] if j["jurisdiction"] == code]
    assert len(rows) == 1, filing["jurisdictions"]
    return rows[0]


def figures(r: dict[str, Any], *names: str) -> tuple[str, ...]:
    return tuple(r[n] for n in names)


MONEY = ("gross_sales", "taxable_sales", "tax_calculated", "tax_provided", "sales_filing_tax", "credits_filing_tax",
         "filing_tax_amount")


# ------------------------------------------------------------------ filing a period


def test_file_a_period_amounts_by_hand(fil: Filings, http: httpx.Client, admin_http: httpx.Client) -> None:
    register(admin_http, "TX", "CA")
    a = txn(http, "2026-01-05", line("1", 10000, "TX"))  # 625
    b = txn(http, "2026-01-20", line("1", 2500, "TX", qty="2"))  # 5000 x 6.25% = 312.5 -> 313
    c = txn(http, "2026-01-25", line("1", 4000, "TX"), tax_amount="300")  # calculated 250, provided 300
    d = txn(http, "2026-01-28", line("1", 2000, "TX"), type="credit")  # credit: 125
    h = txn(http, "2026-01-12", line("g", 8000, "TX"), tax_line("T", 500, "TX"))  # goods 8000 (500), 500 collected
    e = txn(http, "2026-02-02", line("1", 10000, "TX"))  # outside the period
    f = txn(http, "2026-01-15", line("1", 10000, "TX"), status="draft")  # drafts never count
    g = txn(http, "2026-01-10", line("1", 10000, "CA"))  # California: on CA's return only

    out = fil.ok(fil.create(period(JAN)), 201)
    assert out["id"].startswith("fil_") and out["status"] == "prepared" and out.get("filed_at") is None
    assert [j["jurisdiction"] for j in out["jurisdictions"]] == ["US-ST-TX"]
    tx = row(out, "US-ST-TX")
    # gross: 10000 + 5000 + 4000 + 8000 (the collected 500 is not a sale) - 2000 (credit) = 25000.
    # calculated: 625 + 313 + 250 + 500 - 125 = 1563; provided: 300 (c) + 500 (h, collected) = 800.
    # filing tax of the sales: 625 + 313 + 300 + 500 = 1738; of the credit: 125; due 1738 - 125 = 1613.
    assert figures(tx, *MONEY) == ("25000", "25000", "1563", "800", "1738", "125", "1613")
    assert figures(tx, "discounts", "exempt_sales_certificate", "exempt_sales_non_taxable",
                   "exempt_sales_unregistered", "credits_carried_forward") == ("0",) * 5
    assert out["filing_tax_amount"] == "1613" and out["transaction_count"] == 5
    assert out["totals"]["jurisdiction"] == "TOTAL" and out["totals"]["filing_tax_amount"] == "1613"
    assert out["held_transactions"] == [] and out["tax_only_allocations"] == []
    # Preparing files nothing.
    assert {status_of(http, t) for t in (a, b, c, d, h)} == {"finalized"}

    # California's return: state 6% (600) and the statewide local 1.25% (125) of g.
    ca = fil.ok(fil.create(period(JAN, "US-ST-CA")), 201)
    assert ca["jurisdictions"][0]["jurisdiction"] == "US-ST-CA"
    assert figures(row(ca, "US-ST-CA"), "gross_sales", "tax_calculated", "filing_tax_amount") == ("10000", "600", "600")
    assert len(ca["jurisdictions"]) == 2 and ca["jurisdictions"][1]["filing_tax_amount"] == "125"
    assert ca["filing_tax_amount"] == "725" and ca["transaction_count"] == 1

    filed = fil.ok(fil.update(out["id"], {"status": "filed"}))
    assert filed["status"] == "filed" and filed["filed_at"] and filed["filing_tax_amount"] == "1613"
    assert {t: status_of(http, t) for t in (a, b, c, d, h)} == dict.fromkeys((a, b, c, d, h), "filed")
    assert (status_of(http, e), status_of(http, f), status_of(http, g)) == ("finalized", "draft", "finalized")
    # A filed transaction cannot be changed through the API any more.
    r = http.post(f"/transactions/{a}", json={"status": "void"})
    assert r.status_code == 422, r.text

    got = fil.ok(fil.get(out["id"]))
    assert got == filed
    page = fil.ok(fil.list())
    assert [x["id"] for x in page["data"]] == [ca["id"], out["id"]] and page["has_more"] is False
    page = fil.ok(fil.list(limit=1))
    assert [x["id"] for x in page["data"]] == [ca["id"]] and page["has_more"] is True
    page = fil.ok(fil.list(limit=1, starting_after=ca["id"]))
    assert [x["id"] for x in page["data"]] == [out["id"]] and page["has_more"] is False

    # CSV export: header, the TX row, the TOTAL row.
    text = fil.ok(fil.export(out["id"]))
    assert text.endswith("\r\n")
    rows = list(csv.DictReader(io.StringIO(text)))
    assert [r["jurisdiction_code"] for r in rows] == ["US-ST-TX", "TOTAL"]
    assert rows[0]["gross_sales"] == "25000" and rows[0]["filing_tax_amount"] == "1613"
    assert rows[1]["jurisdiction_name"] == "Total US-ST-TX" and rows[1]["tax_provided"] == "800"


def test_export_content_type(http: httpx.Client, admin_http: httpx.Client) -> None:
    register(admin_http, "TX")
    txn(http, "2026-01-05", line("1", 10000, "TX"))
    r = admin_http.post("/filings", json=period(JAN))
    assert r.status_code == 201, r.text
    r = admin_http.get(f"/filings/{r.json()['id']}/export")
    assert r.status_code == 200 and r.headers["content-type"].startswith("text/csv")
    assert r.text.splitlines()[0].startswith("jurisdiction_code,jurisdiction_name,jurisdiction_type,gross_sales")


# ------------------------------------------------------------------ double filing


def test_double_filing_refused(fil: Filings, http: httpx.Client, admin_http: httpx.Client) -> None:
    register(admin_http, "TX")
    a = txn(http, "2026-01-05", line("1", 10000, "TX"))
    first = fil.ok(fil.create(period(JAN, status="filed")), 201)
    assert first["status"] == "filed" and first["filing_tax_amount"] == "625" and status_of(http, a) == "filed"

    # The same period again, or any overlapping one: 409, naming the filed return.
    for p in (JAN, ("2026-01-15", "2026-02-15")):
        code, err = fil.create(period(p, status="filed"))
        assert code == 409, err
        assert err["errors"][0]["code"] == "conflict" and first["id"] in err["errors"][0]["detail"]
    # Preparing an overlapping period is allowed; it holds nothing already filed; filing it is refused.
    again = fil.ok(fil.create(period(JAN)), 201)
    assert again["transaction_count"] == 0 and again["filing_tax_amount"] == "0"
    code, err = fil.update(again["id"], {"status": "filed"})
    assert code == 409, err
    # Filing a filed return again is a no-op; it can never go back to prepared.
    assert fil.ok(fil.update(first["id"], {"status": "filed"}))["filed_at"] == first["filed_at"]
    code, err = fil.update(first["id"], {"status": "prepared"})
    assert code == 422 and err["errors"][0]["code"] == "invalid_state", err
    # Nothing but status can change.
    code, err = fil.update(again["id"], {"status": "filed", "period_end": "2026-01-30"})
    assert code == 422 and err["errors"][0]["source"]["pointer"] == "/period_end", err

    # A prepared return whose transactions changed since is not filed (409); prepare again.
    prepared = fil.ok(fil.create(period(FEB)), 201)
    txn(http, "2026-02-10", line("1", 10000, "TX"))
    code, err = fil.update(prepared["id"], {"status": "filed"})
    assert code == 409 and "changed" in err["errors"][0]["detail"], err
    fresh = fil.ok(fil.create(period(FEB)), 201)
    assert fil.ok(fil.update(fresh["id"], {"status": "filed"}))["filing_tax_amount"] == "625"


def test_filing_validation(fil: Filings, admin_http: httpx.Client) -> None:
    code, err = fil.create({})
    assert code == 422, err
    assert {e["source"]["pointer"] for e in err["errors"]} == {"/jurisdiction", "/period_start", "/period_end"}
    code, err = fil.create(period(("2026-02-01", "2026-01-01"), "us-st-tx"))
    assert code == 422
    assert {e["source"]["pointer"] for e in err["errors"]} == {"/jurisdiction", "/period_end"}
    code, err = fil.create(period(JAN, "US-ST-OR"))  # no sales tax
    assert code == 422 and "no sales tax" in err["errors"][0]["detail"]
    code, err = fil.create(period(("2026-01-01", "2099-12-31"), status="filed"))  # not ended
    assert code == 422 and err["errors"][0]["code"] == "invalid_state", err
    code, err = fil.create(period(JAN, status="void"))
    assert code == 422 and err["errors"][0]["source"]["pointer"] == "/status"
    code, err = fil.get("fil_00000000000000000000000000")
    assert code == 404
    code, err = fil.liability(**{"from": "2026-01-01"})
    assert code == 422 and err["errors"][0]["source"]["parameter"] == "to"
    code, err = fil.nexus(as_of="2026-13-01")
    assert code == 422 and err["errors"][0]["source"]["parameter"] == "as_of"


# ------------------------------------------------------------------ credits carried forward


def test_credits_carried_forward(fil: Filings, http: httpx.Client, admin_http: httpx.Client) -> None:
    register(admin_http, "TX")
    txn(http, "2026-01-05", line("1", 4000, "TX"))  # 250
    txn(http, "2026-01-20", line("1", 16000, "TX"), type="credit")  # 1000
    txn(http, "2026-02-10", line("1", 20000, "TX"))  # 1250
    jan = fil.ok(fil.create(period(JAN, status="filed")), 201)
    tx = row(jan, "US-ST-TX")
    # 250 - 1000 = -750: nothing due, 750 carried forward (never a negative return); gross 4000 - 16000.
    assert figures(tx, "gross_sales", "sales_filing_tax", "credits_filing_tax", "filing_tax_amount",
                   "credits_carried_forward") == ("-12000", "250", "1000", "0", "750")
    assert jan["filing_tax_amount"] == "0" and jan["credits_carried_forward"] == "750"
    feb = fil.ok(fil.create(period(FEB, status="filed")), 201)
    tx = row(feb, "US-ST-TX")
    # 1250 - 750 carried = 500.
    assert figures(tx, "sales_filing_tax", "carried_credits_applied", "filing_tax_amount",
                   "credits_carried_forward") == ("1250", "750", "500", "0")
    assert feb["filing_tax_amount"] == "500" and feb["credits_carried_forward"] == "0"
    # Nothing is left to carry into March.
    mar = fil.ok(fil.create(period(("2026-03-01", "2026-03-31"))), 201)
    assert mar["jurisdictions"] == [] and mar["filing_tax_amount"] == "0"


# ------------------------------------------------------------------ tax-only and held-off transactions


def test_tax_only_allocation_and_held_off(fil: Filings, http: httpx.Client, admin_http: httpx.Client) -> None:
    register(admin_http, "TX", "CA")
    t1 = txn(http, "2026-01-05", tax_line("T1", 500, "TX"), tax_line("T2", 400, "CA"))  # 900 / 3 = 300 each
    t2 = txn(http, "2026-01-06", tax_line("T", 500, None))  # line_without_address: held off
    t3 = txn(http, "2026-01-07", tax_line("T", 500, "NY"))  # not registered in NY: held off
    s = txn(http, "2026-01-08", line("1", 10000, "TX"))  # 625

    out = fil.ok(fil.create(period(JAN)), 201)
    tx = row(out, "US-ST-TX")
    # Goods: 10000 (625). Tax-only: 300 allocated to Texas, provided.
    assert figures(tx, "gross_sales", "tax_calculated", "tax_only_allocated", "tax_provided", "filing_tax_amount") == (
        "10000", "625", "300", "300", "925")
    assert out["tax_only_allocations"] == [{"transaction_id": t1, "jurisdiction": "US-ST-TX", "tax_amount": "300"}]
    held = {h["transaction_id"]: h["reason"] for h in out["held_transactions"]}
    assert held == {t2: "line_without_address", t3: "not_registered"}
    assert all(h["detail"] for h in out["held_transactions"])
    assert out["transaction_count"] == 2

    ca = fil.ok(fil.create(period(JAN, "US-ST-CA")), 201)
    assert [(j["gross_sales"], j["tax_only_allocated"], j["filing_tax_amount"]) for j in ca["jurisdictions"]] == [
        ("0", "300", "300"), ("0", "300", "300")]
    assert ca["filing_tax_amount"] == "600" and {h["transaction_id"] for h in ca["held_transactions"]} == {t2, t3}

    fil.ok(fil.update(out["id"], {"status": "filed"}))
    # Held-off transactions stay finalized; the tax-only one moves to filed with Texas's return.
    assert (status_of(http, t1), status_of(http, s), status_of(http, t2), status_of(http, t3)) == (
        "filed", "filed", "finalized", "finalized")
    # Still on California's return until California files it.
    ca2 = fil.ok(fil.create(period(JAN, "US-ST-CA", status="filed")), 201)
    assert ca2["filing_tax_amount"] == "600" and ca2["transaction_count"] == 1


# ------------------------------------------------------------------ liability report


def test_liability_report(fil: Filings, http: httpx.Client, admin_http: httpx.Client) -> None:
    register(admin_http, "TX", "CA")
    txn(http, "2026-01-05", line("1", 10000, "TX"))  # 625
    txn(http, "2026-01-20", line("1", 16000, "TX"), type="credit")  # 1000
    txn(http, "2026-02-10", line("1", 10000, "CA"))  # 600 + 125
    txn(http, "2026-02-11", line("1", 10000, "TX"), status="draft")  # never counts
    fil.ok(fil.create(period(JAN, status="filed")), 201)  # filed transactions still count on the report
    rep = fil.ok(fil.liability(**{"from": "2026-01-01", "to": "2026-02-28"}))
    assert (rep["from"], rep["to"]) == ("2026-01-01", "2026-02-28")
    totals = {t["jurisdiction"]: t for t in rep["state_totals"]}
    assert set(totals) == {"US-ST-CA", "US-ST-TX"}
    # Texas: 625 - 1000 = -375 (a report has no floor and carries nothing).
    assert figures(totals["US-ST-TX"], "gross_sales", "filing_tax_amount") == ("-6000", "-375")
    # California: the sale counts once in the state total (state and statewide local rows): 10000; 600 + 125.
    assert figures(totals["US-ST-CA"], "gross_sales", "filing_tax_amount") == ("10000", "725")
    assert [j["jurisdiction"] for j in rep["jurisdictions"]][0] == "US-ST-CA"
    rep = fil.ok(fil.liability(**{"from": "2026-02-01", "to": "2026-02-28"}))
    assert [t["jurisdiction"] for t in rep["state_totals"]] == ["US-ST-CA"]


# ------------------------------------------------------------------ nexus


def test_nexus_crossed_by_amount_and_count(server: LevyServer, channel: grpc.Channel, tenant: Tenant,
                                           http: httpx.Client, admin_http: httpx.Client) -> None:
    register(admin_http, "TX")
    # GA (200 transactions or $100,000, previous or current calendar year): 200 sales of $1 on Feb 1.
    for _ in range(200):
        txn(http, "2026-02-01", line("1", 100, "GA"))
    # CA ($500,000, sales only): 499,900.00 of goods plus 100.00 of collected tax on Mar 10: not crossed,
    # since collected-tax lines never count; a tax-only sale in CA adds neither amount nor count.
    txn(http, "2026-03-10", line("g", 49_990_000, "CA"), tax_line("T", 10_000, "CA"))
    txn(http, "2026-03-12", tax_line("T", 10_000, "CA"))
    # TX ($500,000, trailing twelve months, registered): 600,000.00 on Apr 1.
    txn(http, "2026-04-01", line("1", 60_000_000, "TX"))
    for transport in ("rest", "grpc"):
        fil = Filings(transport, server, channel, tenant.admin_key)
        try:
            rep = fil.ok(fil.nexus(as_of="2026-03-15"))
            states = {s["state"]: s for s in rep["states"]}
            assert rep["as_of"] == "2026-03-15"
            ca = states["CA"]
            assert (ca["sales_amount"], ca["transaction_count"], ca["exceeded"]) == ("49990000", 1, False)
            assert ca["threshold_share"] == "0.9998" and ca.get("crossed_on") is None
            ga = states["GA"]
            assert (ga["sales_amount"], ga["transaction_count"], ga["exceeded"], ga["crossed_on"]) == (
                "20000", 200, True, "2026-02-01")
            assert ga["is_registered"] is False and ga["needs_registration"] is True
            assert ga["rule"] == "sales_or_transactions" and ga["transaction_threshold"] == 200
            assert rep["states"][0]["state"] == "GA"
            assert "OR" not in states and "DE" not in states  # no sales tax

            # A second CA sale crosses the amount on Mar 20; TX crosses on Apr 1 but is registered.
            if transport == "rest":
                txn(http, "2026-03-20", line("1", 10_000, "CA"))
            rep = fil.ok(fil.nexus(as_of="2026-06-30"))
            states = {s["state"]: s for s in rep["states"]}
            assert (states["CA"]["sales_amount"], states["CA"]["exceeded"], states["CA"]["crossed_on"]) == (
                "50000000", True, "2026-03-20")
            assert states["CA"]["sales_threshold"] == "50000000" and states["CA"]["threshold_share"] == "1.0000"
            assert (states["TX"]["exceeded"], states["TX"]["is_registered"], states["TX"]["crossed_on"]) == (
                True, True, "2026-04-01")
            # Crossed and unregistered first (earliest crossing first), then crossed and registered.
            assert [s["state"] for s in rep["states"][:3]] == ["GA", "CA", "TX"]
        finally:
            fil.close()


def test_nexus_credits_reduce_sales(fil: Filings, http: httpx.Client) -> None:
    txn(http, "2026-01-05", line("1", 30_000_000, "CA"))
    txn(http, "2026-01-06", line("1", 10_000_000, "CA"), type="credit")  # counts -100,000.00, 0 transactions
    rep = fil.ok(fil.nexus(as_of="2026-02-01"))
    ca = {s["state"]: s for s in rep["states"]}["CA"]
    assert (ca["sales_amount"], ca["transaction_count"], ca["threshold_share"]) == ("20000000", 1, "0.4000")


# ------------------------------------------------------------------ concurrency (PostgreSQL)


def test_concurrent_filings_exactly_one_succeeds(server: LevyServer, http: httpx.Client, admin_http: httpx.Client,
                                                 tenant: Tenant) -> None:
    register(admin_http, "TX")
    for i in range(5):
        txn(http, f"2026-01-0{i + 1}", line("1", 10000, "TX"))

    def file_once(_: int) -> int:
        with httpx.Client(base_url=server.http_url, headers={"X-API-Key": tenant.admin_key}, timeout=60) as c:
            return c.post("/filings", json=period(JAN, status="filed")).status_code

    with concurrent.futures.ThreadPoolExecutor(max_workers=6) as pool:
        codes = sorted(pool.map(file_once, range(6)))
    assert codes == [201] + [409] * 5, codes
    page = admin_http.get("/filings").json()["data"]
    assert [f["status"] for f in page] == ["filed"] and page[0]["filing_tax_amount"] == "3125"


# ------------------------------------------------------------------ access


def test_admin_only(server: LevyServer, channel: grpc.Channel, http: httpx.Client, tenant: Tenant) -> None:
    ops = [m for m in methods() if m.service == "levy.v1.FilingService"]
    assert len(ops) == 8 and all(m.policy.admin_only for m in ops)
    for path in ("/filings", "/filings/fil_00000000000000000000000000", "/reports/liability?from=2026-01-01&to=2026-01-31",
                 "/nexus"):
        r = http.get(path)
        assert r.status_code == 403, (path, r.text)
    assert http.post("/filings", json=period(JAN)).status_code == 403
    stub = pbg.FilingServiceStub(channel)
    err = call_error(stub.ListFilings, pb.ListFilingsRequest(), md(tenant.key))
    assert err.code == grpc.StatusCode.PERMISSION_DENIED
    err = call_error(stub.GetNexusReport, pb.GetNexusReportRequest(), md(tenant.key))
    assert err.code == grpc.StatusCode.PERMISSION_DENIED


def test_other_tenant_gets_404(server: LevyServer, channel: grpc.Channel, tenant: Tenant, other_tenant: Tenant,
                               http: httpx.Client, admin_http: httpx.Client) -> None:
    register(admin_http, "TX")
    txn(http, "2026-01-05", line("1", 10000, "TX"))
    r = admin_http.post("/filings", json=period(JAN))
    assert r.status_code == 201, r.text
    filing_id = r.json()["id"]
    ops = [m for m in methods() if "{filing_id}" in m.http_path]
    assert {m.name for m in ops} == {"GetFiling", "UpdateFiling", "ExportFiling", "ListFilingTransactions"}

    def client(key: str) -> httpx.Client:
        return httpx.Client(base_url=server.http_url, headers={"X-API-Key": key}, timeout=30)

    assert_other_tenant_gets_404(tenant, other_tenant, client, channel, {"filing_id": filing_id}, ops,
                                 bodies={m.name: {"status": "filed"} for m in ops}, owner_values=["US-ST-TX"])
    # The other organization's list and reports show nothing of it.
    with client(other_tenant.admin_key) as c:
        assert c.get("/filings").json()["data"] == []
        rep = c.get("/reports/liability", params={"from": "2026-01-01", "to": "2026-01-31"}).json()
        assert rep["state_totals"] == []
    # The owner's filing is untouched.
    assert admin_http.get(f"/filings/{filing_id}").json()["status"] == "prepared"
