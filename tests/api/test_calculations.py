"""POST /calculations through REST and gRPC against a real server and database.

Every expected figure is worked out by hand in the case's comment (amounts in
cents, ROUND_HALF_UP per line per jurisdiction); none is produced by the engine.
Products, customers, certificates, settings and registrations are inserted with
SQL (``_Sql``) because their APIs are built in parallel.
"""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from datetime import UTC, date, datetime
from pathlib import Path
from typing import Any

import grpc
import httpx
import pytest
from google.protobuf import json_format
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from levyserver import ROOT, LevyServer, Tenant, create_tenant, levy_env, start_server
from levytest import call_error, md
from txn_api import assert_resolved
from levy.v1 import calculations_pb2 as pb
from levy.v1 import calculations_pb2_grpc as pbg

from shared_data import SST_DIR, ZIP5_DIR  # noqa: E402
ALL_STATES = [
    "AL", "AK", "AZ", "AR", "CA", "CO", "CT", "DE", "DC", "FL", "GA", "HI", "ID", "IL", "IN", "IA", "KS", "KY", "LA",
    "ME", "MD", "MA", "MI", "MN", "MS", "MO", "MT", "NE", "NV", "NH", "NJ", "NM", "NY", "NC", "ND", "OH", "OK", "OR",
    "PA", "RI", "SC", "SD", "TN", "TX", "UT", "VT", "VA", "WA", "WV", "WI", "WY",
]
D = "2026-03-15T12:00:00Z"


# ------------------------------------------------------------------ SQL fixtures (APIs come later)


class _Sql:
    """Direct inserts of the rows other areas' APIs will create."""

    def __init__(self, url: str) -> None:
        self.url = url

    def run(self, *statements: tuple[str, dict[str, Any]]) -> None:
        async def go() -> None:
            from sqlalchemy import text

            from levy.store.db import create_engine

            engine = create_engine(self.url, pool_size=1)
            try:
                async with engine.begin() as conn:
                    for sql, params in statements:
                        await conn.execute(text(sql), params)
            finally:
                await engine.dispose()

        asyncio.run(go())

    def scalar(self, sql: str) -> Any:
        async def go() -> Any:
            from sqlalchemy import text

            from levy.store.db import create_engine

            engine = create_engine(self.url, pool_size=1)
            try:
                async with engine.connect() as conn:
                    return (await conn.execute(text(sql))).scalar()
            finally:
                await engine.dispose()

        return asyncio.run(go())

    def register(self, org: str, *states: str, start: str = "2000-01-01", end: str | None = None) -> None:
        self.run(*[
            ("INSERT INTO registrations (id, organization_id, jurisdiction, effective_from, effective_to, created_at) "
             "VALUES (:id, :org, :j, :f, :t, :now)",
             {"id": _id("reg"), "org": org, "j": f"US-ST-{s}" if len(s) == 2 else s, "f": date.fromisoformat(start),
              "t": date.fromisoformat(end) if end else None, "now": _now()})
            for s in states
        ])

    def product(self, org: str, codes: list[str], *, archived: bool = False, source: str = "native") -> str:
        pid = _id("prd")
        self.run((
            "INSERT INTO products (id, organization_id, source, source_account_id, source_id, name, tax_codes, "
            "marked_sales_tax, created_at, updated_at, archived_at) VALUES (:id, :org, :src, '__default__', :sid, "
            "'p', :codes, :marked, :now, :now, :arch)",
            {"id": pid, "org": org, "src": source, "sid": pid, "codes": json.dumps(codes),
             "marked": codes == ["SALES_TAX"], "now": _now(), "arch": _now() if archived else None},
        ))
        return pid

    def customer(self, org: str, source_id: str, *, account: str = "__default__", exempt: bool = False,
                 resale: bool = False, manufacturing: bool = False, deleted: bool = False) -> str:
        cid = _id("cust")
        self.run((
            "INSERT INTO customers (id, organization_id, source, source_account_id, source_id, created_at, updated_at, "
            "deleted_at, override_exempt, override_resale, override_manufacturing) VALUES (:id, :org, 'native', :acc, "
            ":sid, :now, :now, :del, :ex, :rs, :mf)",
            {"id": cid, "org": org, "acc": account, "sid": source_id, "now": _now(), "del": _now() if deleted else None,
             "ex": exempt, "rs": resale, "mf": manufacturing},
        ))
        return cid

    def certificate(self, org: str, customer_id: str, state: str, kind: str = "resale", status: str = "valid",
                    starts: str | None = "2020-01-01", expires: str | None = None) -> None:
        self.run((
            "INSERT INTO exemption_certificates (id, organization_id, customer_id, jurisdiction, exemption_type, status, "
            "starts_at, expires_at, created_at, updated_at) VALUES (:id, :org, :cust, :j, :k, :s, :a, :b, :now, :now)",
            {"id": _id("cexc"), "org": org, "cust": customer_id, "j": f"US-ST-{state}", "k": kind, "s": status,
             "a": date.fromisoformat(starts) if starts else None, "b": date.fromisoformat(expires) if expires else None,
             "now": _now()},
        ))

    def settings(self, org: str, *, management: bool = True, treatment: str = "certificate_only",
                 default_codes: list[str] | None = None) -> None:
        self.run((
            "INSERT INTO organization_settings (organization_id, default_tax_codes, exemption_management, "
            "certificate_treatment, updated_at) VALUES (:org, :codes, :m, :t, :now)",
            {"org": org, "codes": json.dumps(default_codes or ["GENERAL.TANGIBLE.GOODS"]), "m": management,
             "t": treatment, "now": _now()},
        ))


def _id(prefix: str) -> str:
    from levy.domain.ids import new_id

    return new_id(prefix)


def _now() -> datetime:
    return datetime.now(UTC)


# ------------------------------------------------------------------ server and clients


@pytest.fixture(scope="module")
def calc_server(database_url: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[LevyServer]:
    """A server on the session's database that re-reads rate imports every 0.3 s."""
    srv = start_server(database_url, tmp_path_factory.mktemp("calc-logs"),
                       extra_env={"LEVY_RATES_REFRESH_SECONDS": "0.3"})
    try:
        yield srv
    finally:
        assert srv.stop() == 0, srv.log()


@pytest.fixture(scope="module")
def sql(calc_server: LevyServer) -> _Sql:
    return _Sql(calc_server.database_url)


@pytest.fixture(scope="module")
def reg_all(calc_server: LevyServer, sql: _Sql) -> Tenant:
    """A tenant registered in every state since 2000 (default settings)."""
    t = create_tenant(calc_server.database_url)
    sql.register(t.organization_id, *ALL_STATES)
    return t


@pytest.fixture(scope="module")
def stub(calc_server: LevyServer) -> Iterator[pbg.CalculationServiceStub]:
    with grpc.insecure_channel(calc_server.grpc_target) as ch:
        yield pbg.CalculationServiceStub(ch)


@pytest.fixture(scope="module")
def rest(calc_server: LevyServer) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=calc_server.http_url, timeout=30) as c:
        yield c


class Caller:
    """Sends one calculation body through REST or gRPC; answers (status, JSON body)."""

    def __init__(self, transport: str, rest: httpx.Client, stub: pbg.CalculationServiceStub) -> None:
        self.transport, self.rest, self.stub = transport, rest, stub

    def __call__(self, key: str, body: dict[str, Any], *, unregistered: bool = False) -> dict[str, Any]:
        status, out = self.raw(key, body, unregistered=unregistered)
        assert status == 200, out
        return assert_resolved(out)

    def raw(self, key: str, body: dict[str, Any], *, unregistered: bool = False) -> tuple[int, Any]:
        if self.transport == "rest":
            headers = {"X-API-Key": key}
            if unregistered:
                headers["X-Include-Unregistered"] = "true"
            r = self.rest.post("/calculations", json=body, headers=headers)
            return r.status_code, r.json() if r.headers.get("content-type", "").startswith("application/json") else r.text
        req = json_format.ParseDict(body, pb.CreateCalculationRequest())
        meta = md(key, **({"x_include_unregistered": "true"} if unregistered else {}))
        try:
            resp = self.stub.CreateCalculation(req, metadata=meta)
        except grpc.RpcError:
            err = call_error(self.stub.CreateCalculation, req, meta)
            return 422 if err.code == grpc.StatusCode.INVALID_ARGUMENT else 500, err
        return 200, json_format.MessageToDict(
            resp, preserving_proto_field_name=True, always_print_fields_with_no_presence=True
        )


@pytest.fixture(params=["rest", "grpc"])
def calc(request: pytest.FixtureRequest, rest: httpx.Client, stub: pbg.CalculationServiceStub) -> Caller:
    return Caller(request.param, rest, stub)


def line(id: str = "1", state: str | None = "TX", codes: list[str] | None = None, qty: str = "1",
         price: int = 10000, zip: str | None = None, country: str | None = None, **extra: Any) -> dict[str, Any]:
    address: dict[str, Any] = {}
    if state is not None:
        address["state"] = state
    if zip is not None:
        address["postal_code"] = zip
    if country is not None:
        address["country"] = country
    out: dict[str, Any] = {"id": id, "quantity": qty, "unit_price": str(price), "customer": {"address": address}}
    if codes is not None:
        out["product"] = {"tax_attributes": codes}
    out.update(extra)
    return out


def body(*lines: dict[str, Any], date: str = D, **extra: Any) -> dict[str, Any]:
    return {"transaction_date": date, "line_items": list(lines), **extra}


def assert_consistent(resp: dict[str, Any]) -> None:
    """The total is the sum of lines; each line the sum of its rows; nothing negative."""
    total = 0
    for li in resp["line_items"]:
        rows = sum(int(t["tax_amount"]) for t in li["taxes"])
        assert int(li["tax_amount"]) == rows, li
        assert int(li["tax_amount"]) >= 0 and int(li["tax_amount_before_discounts"]) >= 0
        for t in li["taxes"]:
            assert int(t["tax_amount"]) >= 0 and int(t["taxable_base"]) >= 0
            assert "E" not in t["tax_rate"] and "e" not in t["tax_rate"]
        total += int(li["tax_amount"])
    assert int(resp["tax_amount"]) == total


def calc_error(status_body: tuple[int, Any], transport: str) -> tuple[int, list[dict[str, Any]], str]:
    """(status, [{type, loc, msg, input}], message) for either transport."""
    status, out = status_body
    if transport == "rest":
        assert isinstance(out["detail"], list), out
        return status, out["detail"], out["detail"][0]["msg"]
    items = []
    # The calculation shape's type is each field violation's reason (the error objects have none).
    for (ptr, msg), reason in zip(out.violations, out.violation_reasons, strict=True):
        loc = ["body"] + [int(p) if p.isdigit() else p for p in ptr.split("/")[1:]] if ptr else ["body"]
        items.append({"type": reason, "loc": loc, "msg": msg})
    assert out.reason == "validation_error"
    return status, items, out.message


# ------------------------------------------------------------------ table-driven cases (state level, no ZIP)

# (case id, state, tax codes, quantity, unit price, transaction date, expected tax, rule name fragment)
CASES = [
    # General tangible goods, state level only (no postal code).
    ("TX general", "TX", ["GENERAL.TANGIBLE.GOODS"], "1", 10000, None, 625, "General tangible"),  # 100.00 x 6.25%
    ("CA general", "CA", ["GENERAL.TANGIBLE.GOODS"], "1", 10000, None, 725, "General tangible"),  # 6% 600 + 1.25% 125
    ("NV general", "NV", ["GENERAL.TANGIBLE.GOODS"], "1", 10000, None, 685, "General tangible"),  # 4.6% 460 + 2.25% 225
    ("UT general", "UT", ["GENERAL.TANGIBLE.GOODS"], "1", 10000, None, 610, "General tangible"),  # 4.85% 485 + 1.25% 125
    ("VA general", "VA", ["GENERAL.TANGIBLE.GOODS"], "1", 10000, None, 530, "General tangible"),  # 4.3% 430 + 1% 100
    ("AK no tax", "AK", ["GENERAL.TANGIBLE.GOODS"], "1", 10000, None, 0, "no state sales tax"),
    ("OR no tax", "OR", ["GENERAL.TANGIBLE.GOODS"], "1", 10000, None, 0, "no state sales tax"),
    ("LA 2026 5%", "LA", ["GENERAL.TANGIBLE.GOODS"], "1", 10000, None, 500, "General tangible"),  # 5%
    ("LA 2024 4.45%", "LA", ["GENERAL.TANGIBLE.GOODS"], "1", 10000, "2024-06-01T00:00:00Z", 445, "General tangible"),
    # Clothing.
    ("NY clothing $50", "NY", ["CLOTHING.APPAREL.GENERAL"], "1", 5000, None, 0, "under $110"),
    ("NY clothing $109.99", "NY", ["CLOTHING.APPAREL.GENERAL"], "1", 10999, None, 0, "under $110"),
    ("NY clothing $110", "NY", ["CLOTHING.APPAREL.GENERAL"], "1", 11000, None, 440, "under $110"),  # 110.00 x 4%
    ("NY accessories", "NY", ["CLOTHING.ACCESSORIES.GENERAL"], "1", 5000, None, 200, "accessories"),  # 50 x 4%
    ("MA clothing $200", "MA", ["CLOTHING.APPAREL.GENERAL"], "1", 20000, None, 156, "$175"),  # 25.00 x 6.25% = 156.25
    ("MA clothing $100", "MA", ["CLOTHING.APPAREL.GENERAL"], "1", 10000, None, 0, "$175"),
    ("RI clothing 2 x $300", "RI", ["CLOTHING.APPAREL.GENERAL"], "2", 30000, None, 700, "$250"),  # 2 x 50.00 x 7%
    ("PA clothing", "PA", ["CLOTHING.APPAREL.GENERAL"], "1", 8000, None, 0, "Clothing exempt"),
    ("PA accessories", "PA", ["CLOTHING.ACCESSORIES.GENERAL"], "1", 8000, None, 480, "accessories"),  # 80 x 6%
    ("MN clothing", "MN", ["CLOTHING.APPAREL.GENERAL"], "1", 5000, None, 0, "Clothing exempt"),
    ("FL clothing", "FL", ["CLOTHING.APPAREL.GENERAL"], "1", 5000, None, 300, "Clothing taxable"),  # 50 x 6%
    # SaaS and software.
    ("TX SaaS 80%", "TX", ["SOFTWARE.SAAS.GENERAL"], "1", 10000, None, 500, "80%"),  # base 80.00 x 6.25% = 5.00
    ("TX SaaS 80% rounding", "TX", ["SOFTWARE.SAAS.GENERAL"], "1", 1001, None, 50, "80%"),  # 800.8->801 x 6.25% = 50.06
    ("CT SaaS 1%", "CT", ["SOFTWARE.SAAS.GENERAL"], "1", 10000, None, 100, "1%"),  # 100.00 x 1%
    ("OH SaaS personal", "OH", ["SOFTWARE.SAAS.GENERAL"], "1", 10000, None, 0, "personal use"),
    ("OH SaaS B2B", "OH", ["SOFTWARE.SAAS.GENERAL._B2B"], "1", 10000, None, 575, "business use"),  # 5.75%
    ("IA SaaS", "IA", ["SOFTWARE.SAAS.GENERAL"], "1", 10000, None, 600, "SaaS taxable"),  # 6%
    ("IA SaaS B2B", "IA", ["SOFTWARE.SAAS.GENERAL", "_B2B"], "1", 10000, None, 0, "commercial"),
    ("CA SaaS", "CA", ["SOFTWARE.SAAS.GENERAL"], "1", 10000, None, 0, "SaaS not taxable"),
    ("VT SaaS 2026", "VT", ["SOFTWARE.SAAS.GENERAL"], "1", 10000, None, 600, "SaaS taxable"),  # 6%
    ("VT SaaS 2024-01", "VT", ["SOFTWARE.SAAS.GENERAL"], "1", 10000, "2024-01-01T00:00:00Z", 0, "before 2024-07-01"),
    ("WA SaaS", "WA", ["SOFTWARE.SAAS.GENERAL"], "1", 10000, None, 650, "SaaS taxable"),  # 6.5%
    ("CA downloaded software", "CA", ["SOFTWARE.DOWNLOADED.PREWRITTEN"], "1", 10000, None, 0, "Downloaded software exempt"),
    ("CA software on media", "CA", ["SOFTWARE.PHYSICAL.PREWRITTEN"], "1", 10000, None, 725, "physical media"),  # 7.25%
    ("CA load and leave", "CA", ["SOFTWARE.PHYSICAL.PREWRITTEN._LOAD_AND_LEAVE"], "1", 10000, None, 0, "Load-and-leave"),
    ("NY downloaded software", "NY", ["SOFTWARE.DOWNLOADED.PREWRITTEN"], "1", 10000, None, 400, "Downloaded"),  # 4%
    # Digital goods.
    ("WA digital audio", "WA", ["DIGITAL.AUDIO.MUSIC"], "1", 1000, None, 65, "Digital goods taxable"),  # 10.00 x 6.5%
    ("CA digital video", "CA", ["DIGITAL.VIDEO.MOVIES"], "1", 1000, None, 0, "Digital goods exempt"),
    ("NJ e-book", "NJ", ["DIGITAL.EBOOKS.GENERAL"], "1", 1000, None, 66, "Digital goods taxable"),  # 66.25 -> 66
    # Food and drugs.
    ("AR grocery 2025 0.125%", "AR", ["FOOD.GROCERY.GENERAL"], "1", 10000, "2025-06-01T00:00:00Z", 13, "0.125%"),  # 12.5
    ("AR grocery 2026 exempt", "AR", ["FOOD.GROCERY.GENERAL"], "1", 10000, None, 0, "exempt from state"),
    ("IL grocery 2025 1%", "IL", ["FOOD.GROCERY.GENERAL"], "1", 10000, "2025-06-01T00:00:00Z", 100, "1%"),
    ("IL grocery 2026 exempt", "IL", ["FOOD.GROCERY.GENERAL"], "1", 10000, None, 0, "exempt from state tax"),
    ("IL prescription 1%", "IL", ["MEDICAL.PRESCRIPTION.DRUGS"], "1", 10000, None, 100, "1%"),  # 100.00 x 1%
    ("TN grocery 4%", "TN", ["FOOD.GROCERY.GENERAL"], "1", 10000, None, 400, "4%"),
    ("UT grocery 3%", "UT", ["FOOD.GROCERY.GENERAL"], "1", 10000, None, 300, "3%"),  # 1.75% 175 + 1.25% 125
    ("VA grocery 1% local", "VA", ["FOOD.GROCERY.GENERAL"], "1", 10000, None, 100, "1% local"),  # state 0 + local 1%
    ("MS grocery 2026 5%", "MS", ["FOOD.GROCERY.GENERAL"], "1", 10000, None, 500, "5%"),
    ("AL grocery 2%", "AL", ["FOOD.GROCERY.GENERAL"], "1", 10000, None, 200, "2%"),
    ("TX grocery exempt", "TX", ["FOOD.GROCERY.GENERAL"], "1", 10000, None, 0, "Groceries exempt"),
    ("FL prepared food", "FL", ["FOOD.PREPARED.RESTAURANT"], "1", 1000, None, 60, "Prepared food"),  # 10.00 x 6%
    ("CA prescription", "CA", ["MEDICAL.PRESCRIPTION.DRUGS"], "1", 1000, None, 0, "Prescription drugs exempt"),
    ("NJ OTC exempt", "NJ", ["MEDICAL.OTC.DRUGS"], "1", 1000, None, 0, "Over-the-counter drugs exempt"),
    ("CA OTC taxable", "CA", ["MEDICAL.OTC.DRUGS"], "1", 1000, None, 73, "Over-the-counter"),  # 60 + 12.5 -> 13
    # Shipping and services.
    ("FL shipping exempt", "FL", ["SHIPPING.DELIVERY.COMMON_CARRIER"], "1", 1000, None, 0, "shipping exempt"),
    ("FL mandatory shipping", "FL", ["SHIPPING.DELIVERY.COMMON_CARRIER._MANDATORY"], "1", 1000, None, 60, "Mandatory"),
    ("MI shipping 2026 exempt", "MI", ["SHIPPING.DELIVERY.COMMON_CARRIER"], "1", 1000, None, 0, "shipping exempt"),
    ("MI shipping 2022", "MI", ["SHIPPING.DELIVERY.COMMON_CARRIER"], "1", 1000, "2022-06-01T00:00:00Z", 60, "before 2023"),
    ("NY shipping taxable", "NY", ["SHIPPING.DELIVERY.COMMON_CARRIER"], "1", 1000, None, 40, "Shipping"),  # 4%
    ("HI professional", "HI", ["SERVICES.PROFESSIONAL.GENERAL"], "1", 10000, None, 400, "gross receipts"),  # 4%
    ("TX professional", "TX", ["SERVICES.PROFESSIONAL.GENERAL"], "1", 10000, None, 0, "not taxable"),
    # _RESALE on the line always exempts.
    ("TX resale", "TX", ["GENERAL.TANGIBLE.GOODS._RESALE"], "1", 10000, None, 0, "resale"),
    # Rounding edges: half cents round up, below half rounds down.
    ("TX 8 cents", "TX", ["GENERAL.TANGIBLE.GOODS"], "1", 8, None, 1, "General"),  # 0.5 -> 1
    ("TX 7 cents", "TX", ["GENERAL.TANGIBLE.GOODS"], "1", 7, None, 0, "General"),  # 0.4375 -> 0
    ("TX 24 cents", "TX", ["GENERAL.TANGIBLE.GOODS"], "1", 24, None, 2, "General"),  # 1.5 -> 2
    ("TX qty 1.5 x 9.99", "TX", ["GENERAL.TANGIBLE.GOODS"], "1.5", 999, None, 94, "General"),  # 1498.5->1499; 93.69
    ("CA 40 cents local half", "CA", ["GENERAL.TANGIBLE.GOODS"], "1", 40, None, 3, "General"),  # 2.4->2 + 0.5->1
]


@pytest.mark.parametrize("case", CASES, ids=[c[0] for c in CASES])
def test_table(case: tuple[Any, ...], calc: Caller, reg_all: Tenant) -> None:
    _, state, codes, qty, price, on, expected, fragment = case
    resp = calc(reg_all.key, body(line("1", state, codes, qty, price), date=on or D))
    assert_consistent(resp)
    assert resp["tax_amount"] == str(expected)
    li = resp["line_items"][0]
    assert li["tax_amount"] == str(expected)
    assert any(fragment.lower() in t["rule_name"].lower() for t in li["taxes"]), [t["rule_name"] for t in li["taxes"]]
    assert all(t["is_registered"] for t in li["taxes"])
    # No postal code: state level only, and the state row says so.
    assert "no postal code" in li["taxes"][0]["detail"]


def test_table_covers_at_least_15_states() -> None:
    assert len(CASES) >= 40 and len({c[1] for c in CASES}) >= 15


def test_row_fields_exactly(calc: Caller, reg_all: Tenant) -> None:
    # CA $100.00: state 6% = 600, statewide local 1.25% = 125.
    resp = calc(reg_all.key, body(line("a", "CA", ["GENERAL.TANGIBLE.GOODS"])))
    assert set(resp) == {"tax_amount", "currency", "line_items"} and resp["currency"] == "USD"
    li = resp["line_items"][0]
    # Levy extensions beside the spec's fields: resolution (issue 17), sourcing (issue 19; empty: no ship-from),
    # tax_behavior (issue 31; exclusive unless the request says inclusive), vat_checks (the online checks of EU
    # VAT ids: none here).
    assert set(li) == {"id", "tax_amount", "tax_amount_before_discounts", "taxes", "discounts", "resolution",
                       "sourcing", "tax_behavior", "vat_checks"}
    assert li["resolution"] == "state" and li["sourcing"] == "" and li["vat_checks"] == []  # no postal code; no location
    assert li["tax_behavior"] == "exclusive"
    state, local = li["taxes"]
    assert set(state) == {"detail", "jurisdiction_name", "jurisdiction_type", "tax_amount", "tax_type",
                          "is_registered", "rule_name", "taxable_base", "tax_rate", "sourcing"}
    assert state["sourcing"] == local["sourcing"] == ""
    assert (state["jurisdiction_name"], state["jurisdiction_type"], state["tax_rate"], state["taxable_base"],
            state["tax_amount"], state["tax_type"]) == ("California", "state", "0.06", "10000", "600", "sales_tax")
    assert (local["tax_rate"], local["tax_amount"]) == ("0.0125", "125")
    assert li["tax_amount_before_discounts"] == "725" and li["discounts"] == []


# ------------------------------------------------------------------ registrations and the unregistered header


def test_unregistered_state_is_zero_unless_header(calc: Caller, calc_server: LevyServer, sql: _Sql) -> None:
    t = create_tenant(calc_server.database_url)
    sql.register(t.organization_id, "CA")
    sql.register(t.organization_id, "WA", start="2026-06-01")  # not yet on the transaction date
    req = body(line("tx", "TX", ["GENERAL.TANGIBLE.GOODS"]), line("ca", "CA", ["GENERAL.TANGIBLE.GOODS"]),
               line("wa", "WA", ["GENERAL.TANGIBLE.GOODS"]))
    resp = calc(t.key, req)
    assert_consistent(resp)
    tx, ca, wa = resp["line_items"]
    assert tx["tax_amount"] == "0" and tx["taxes"][0]["is_registered"] is False
    assert "not registered in Texas" in tx["taxes"][0]["rule_name"] and tx["taxes"][0]["tax_amount"] == "0"
    assert ca["tax_amount"] == "725" and all(r["is_registered"] for r in ca["taxes"])  # 600 + 125
    assert wa["tax_amount"] == "0" and wa["taxes"][0]["is_registered"] is False
    assert resp["tax_amount"] == "725"
    # With the header: TX 6.25% = 625, WA 6.5% = 650, still marked unregistered.
    resp = calc(t.key, req, unregistered=True)
    assert_consistent(resp)
    tx, ca, wa = resp["line_items"]
    assert (tx["tax_amount"], wa["tax_amount"], ca["tax_amount"]) == ("625", "650", "725")
    assert tx["taxes"][0]["is_registered"] is False and wa["taxes"][0]["is_registered"] is False
    assert resp["tax_amount"] == str(625 + 650 + 725)


def test_registration_that_ended(calc: Caller, calc_server: LevyServer, sql: _Sql) -> None:
    t = create_tenant(calc_server.database_url)
    sql.register(t.organization_id, "NY", start="2020-01-01", end="2025-12-31")
    req = body(line("1", "NY", ["GENERAL.TANGIBLE.GOODS"]))
    assert calc(t.key, req)["tax_amount"] == "0"  # 2026-03-15 is after the registration ended
    assert calc(t.key, body(line("1", "NY", ["GENERAL.TANGIBLE.GOODS"]), date="2025-06-01T00:00:00Z"))[
        "tax_amount"] == "400"  # 4%


# ------------------------------------------------------------------ discounts and allocation


def test_transaction_discount_allocated_by_amount(calc: Caller, reg_all: Tenant) -> None:
    # Lines 100.00 and 300.00, discount 10.00 -> shares 2.50 and 7.50 (exact).
    # Line 1: 97.50 x 6.25% = 609.375 -> 609 (before 625, reduction 16).
    # Line 2: 292.50 x 6.25% = 1828.125 -> 1828 (before 1875, reduction 47).
    resp = calc(reg_all.key, body(line("1", price=10000), line("2", price=30000), discount_amount="1000"))
    assert_consistent(resp)
    one, two = resp["line_items"]
    assert (one["tax_amount"], one["tax_amount_before_discounts"]) == ("609", "625")
    assert (two["tax_amount"], two["tax_amount_before_discounts"]) == ("1828", "1875")
    assert one["discounts"] == [{"id": "discount_amount", "tax_amount_reduction": "16"}]
    assert two["discounts"] == [{"id": "discount_amount", "tax_amount_reduction": "47"}]
    assert one["taxes"][0]["taxable_base"] == "9750" and two["taxes"][0]["taxable_base"] == "29250"
    assert resp["tax_amount"] == "2437"


def test_transaction_discount_largest_remainder(calc: Caller, reg_all: Tenant) -> None:
    # Three lines of 100.00, discount 1.00 -> 33.33 each; the leftover cent goes to the first line: 34, 33, 33.
    # Bases 9966, 9967, 9967 -> 622.875 -> 623, 622.9375 -> 623, 623. Collected-tax line takes no share.
    resp = calc(reg_all.key, body(line("1"), line("2"), line("3"),
                                  line("st", None, ["SALES_TAX"], price=500), discount_amount="100"))
    assert_consistent(resp)
    bases = [li["taxes"][0]["taxable_base"] for li in resp["line_items"][:3]]
    assert bases == ["9966", "9967", "9967"]
    assert [li["tax_amount"] for li in resp["line_items"]] == ["623", "623", "623", "0"]
    assert resp["tax_amount"] == "1869"


def test_line_discounts_and_vendor_discount(calc: Caller, reg_all: Tenant) -> None:
    # Line 1: 100.00 less discount d1 20.00 -> 80.00 x 6.25% = 500 (before 625, reduction 125 for d1).
    # Line 2: vendor discount does not reduce the base: 100.00 x 6.25% = 625.
    # Line 3: discount_amount 10.00 on the line: 90.00 x 6.25% = 562.5 -> 563 (before 625, reduction 62).
    resp = calc(reg_all.key, body(
        line("1", discounts=[{"id": "d1", "amount": "2000"}]),
        line("2", vendor_discount_amount="2000"),
        line("3", discount_amount="1000"),
        vendor_discount_amount="500",
    ))
    assert_consistent(resp)
    one, two, three = resp["line_items"]
    assert (one["tax_amount"], one["tax_amount_before_discounts"]) == ("500", "625")
    assert one["discounts"] == [{"id": "d1", "tax_amount_reduction": "125"}]
    assert (two["tax_amount"], two["discounts"]) == ("625", [])
    assert (three["tax_amount"], three["tax_amount_before_discounts"]) == ("563", "625")
    assert three["discounts"] == [{"id": "line_discount_amount", "tax_amount_reduction": "62"}]
    assert resp["tax_amount"] == str(500 + 625 + 563)


# ------------------------------------------------------------------ addresses


def test_outside_us_is_zero_with_detail(calc: Caller, reg_all: Tenant) -> None:
    resp = calc(reg_all.key, body(line("1", None, country="JP")))  # VAT and GST: the EU, GB, CA, AU (issue 34)
    assert resp["tax_amount"] == "0"
    assert "not supported yet" in resp["line_items"][0]["taxes"][0]["detail"]


def test_local_rates_missing_are_said(calc: Caller, reg_all: Tenant) -> None:
    # No ZIP row is in force on 2026-02-15 (imports start 2026-03-01): state level only, said in detail.
    resp = calc(reg_all.key, body(line("1", "TX", zip="75001"), date="2026-02-15T00:00:00Z"))
    state_row = resp["line_items"][0]["taxes"][0]
    assert state_row["tax_amount"] == "625" and "local rates for ZIP 75001 are not loaded" in state_row["detail"]


def test_postal_code_of_another_state(calc: Caller, reg_all: Tenant) -> None:
    status, items, _ = calc_error(calc.raw(reg_all.key, body(line("1", "TX", zip="90001"))), calc.transport)
    assert status == 422
    assert items[0]["loc"] == ["body", "line_items", 0, "customer", "address", "postal_code"]


def test_validation_errors_point_at_fields(calc: Caller, reg_all: Tenant) -> None:
    bad = body(line("1", price=10000, qty="abc"), {"id": "2", "customer": {"address": {"state": "TX"}}},
               line("3", state=None), currency="usd", discount_amount="-5")
    status, items, _ = calc_error(calc.raw(reg_all.key, bad), calc.transport)
    assert status == 422
    locs = {tuple(i["loc"]) for i in items}
    assert ("body", "line_items", 0, "quantity") in locs
    assert ("body", "line_items", 1, "unit_price") in locs
    assert ("body", "line_items", 2, "customer", "address", "state") in locs
    assert ("body", "currency") in locs and ("body", "discount_amount") in locs
    if calc.transport == "rest":
        by_loc = {tuple(i["loc"]): i for i in items}
        assert by_loc[("body", "line_items", 1, "unit_price")]["type"] == "missing"
        assert by_loc[("body", "line_items", 0, "quantity")]["input"] == "abc"
    status, items, _ = calc_error(calc.raw(reg_all.key, {"line_items": []}), calc.transport)
    assert status == 422 and items[0]["loc"] == ["body", "line_items"]


def test_unknown_tax_code_points_at_attribute(calc: Caller, reg_all: Tenant) -> None:
    status, items, _ = calc_error(
        calc.raw(reg_all.key, body(line("1", codes=["GENERAL.TANGIBLE.GOODS", "sales_tax"]))), calc.transport)
    assert status == 422 and items[0]["loc"] == ["body", "line_items", 0, "product", "tax_attributes", 1]


# ------------------------------------------------------------------ collected-tax (SALES_TAX) lines


def test_sales_tax_line_left_out(calc: Caller, reg_all: Tenant) -> None:
    resp = calc(reg_all.key, body(line("g"), line("st", None, ["SALES_TAX"], price=625)))
    assert_consistent(resp)
    g, s = resp["line_items"]
    assert (g["tax_amount"], s["id"], s["tax_amount"], s["taxes"]) == ("625", "st", "0", [])
    assert resp["tax_amount"] == "625"


VIOLATIONS = [
    ("other code beside it", line("st", None, ["SALES_TAX", "GENERAL.TANGIBLE.GOODS"], price=100)),
    ("attribute suffix", line("st", None, ["SALES_TAX._B2B"], price=100)),
    ("discount_amount", line("st", None, ["SALES_TAX"], price=100, discount_amount="10")),
    ("discounts", line("st", None, ["SALES_TAX"], price=100, discounts=[{"id": "d", "amount": "10"}])),
    ("vendor discount", line("st", None, ["SALES_TAX"], price=100, vendor_discount_amount="10")),
    ("negative amount", line("st", None, ["SALES_TAX"], price=-100)),
    ("id used by another line", line("g", None, ["SALES_TAX"], price=100)),
]


@pytest.mark.parametrize("case", VIOLATIONS, ids=[v[0] for v in VIOLATIONS])
def test_sales_tax_violations(case: tuple[str, dict[str, Any]], calc: Caller, reg_all: Tenant) -> None:
    status, items, message = calc_error(calc.raw(reg_all.key, body(line("g"), case[1])), calc.transport)
    assert status == 422
    assert message == "Validation failed: invalid_sales_tax_line"
    assert len(items) == 1 and items[0]["type"] == "invalid_sales_tax_line"
    assert items[0]["loc"] == ["body", "line_items"]  # the line is not named


def test_sales_tax_violation_with_other_errors(calc: Caller, reg_all: Tenant) -> None:
    req = body(line("g", price=10000, qty="x"), line("st", None, ["SALES_TAX"], price=100, discount_amount="1"))
    status, items, message = calc_error(calc.raw(reg_all.key, req), calc.transport)
    assert status == 422 and message == "Validation failed: multiple errors"
    assert items[0]["type"] == "invalid_sales_tax_line"
    assert ["body", "line_items", 0, "quantity"] in [i["loc"] for i in items[1:]]


# ------------------------------------------------------------------ product presets


def test_product_presets(calc: Caller, reg_all: Tenant, sql: _Sql, calc_server: LevyServer) -> None:
    org = reg_all.organization_id
    saas = sql.product(org, ["SOFTWARE.SAAS.GENERAL"])
    plain = sql.product(org, [])  # organization default: general tangible goods
    marked = sql.product(org, ["SALES_TAX"])
    resp = calc(reg_all.key, body(
        line("1", "TX", product={"preset": {"id": saas}}),  # SaaS 80%: 80.00 x 6.25% = 500
        line("2", "TX", product={"preset": {"id": plain}}),  # 100.00 x 6.25% = 625
        line("3", "TX", product={"preset": {"id": marked}}, price=300),  # collected tax: 0, left out
        # the line's own attributes take precedence over the marked product: taxed, 100.00 x 6.25% = 625
        line("4", "TX", product={"preset": {"id": marked}, "tax_attributes": ["GENERAL.TANGIBLE.GOODS"]}),
        # a bare attribute applies to the preset's category: SaaS B2B in TX is still 80%: 500
        line("5", "TX", product={"preset": {"id": saas}, "tax_attributes": ["_B2B"]}),
        # marked product with a discount larger than the line: left out, no error
        line("6", "TX", product={"preset": {"id": marked}}, price=100, discount_amount="300"),
    ))
    assert_consistent(resp)
    assert [li["tax_amount"] for li in resp["line_items"]] == ["500", "625", "0", "625", "500", "0"]
    assert "80%" in resp["line_items"][0]["taxes"][0]["rule_name"]
    assert resp["line_items"][2]["taxes"] == [] and resp["line_items"][5]["taxes"] == []
    assert resp["tax_amount"] == str(500 + 625 + 625 + 500)


def test_product_preset_unknown_archived_or_foreign(calc: Caller, reg_all: Tenant, sql: _Sql,
                                                    calc_server: LevyServer) -> None:
    archived = sql.product(reg_all.organization_id, ["GENERAL.TANGIBLE.GOODS"], archived=True)
    other = create_tenant(calc_server.database_url)
    foreign = sql.product(other.organization_id, ["GENERAL.TANGIBLE.GOODS"])
    for pid in (archived, foreign, "prd_00000000000000000000000000"):
        status, items, _ = calc_error(
            calc.raw(reg_all.key, body(line("1", product={"preset": {"id": pid}}))), calc.transport)
        assert status == 422
        assert items[0]["loc"] == ["body", "line_items", 0, "product", "preset", "id"]


def test_org_default_tax_codes(calc: Caller, calc_server: LevyServer, sql: _Sql) -> None:
    t = create_tenant(calc_server.database_url)
    sql.register(t.organization_id, "TX")
    sql.settings(t.organization_id, default_codes=["FOOD.GROCERY.GENERAL"])
    resp = calc(t.key, body(line("1", "TX")))  # no product: the default, groceries, exempt in TX
    assert resp["tax_amount"] == "0" and "Groceries exempt" in resp["line_items"][0]["taxes"][0]["rule_name"]


# ------------------------------------------------------------------ customer presets and exemptions


@pytest.fixture(scope="module")
def exempt_tenant(calc_server: LevyServer, sql: _Sql) -> tuple[Tenant, str]:
    t = create_tenant(calc_server.database_url)
    sql.register(t.organization_id, *ALL_STATES)
    cust = sql.customer(t.organization_id, "buyer-1")
    sql.certificate(t.organization_id, cust, "TX", "resale")
    sql.certificate(t.organization_id, cust, "WA", "manufacturing")
    sql.certificate(t.organization_id, cust, "NY", "resale", expires="2025-12-31")  # expired on the date
    sql.certificate(t.organization_id, cust, "FL", "resale", status="rejected")
    sql.customer(t.organization_id, "dup", account="acct-1")
    dup2 = sql.customer(t.organization_id, "dup", account="acct-2")
    sql.certificate(t.organization_id, dup2, "TX", "resale")
    sql.customer(t.organization_id, "gone", deleted=True)
    return t, cust


def _buyer(id: str, state: str, codes: list[str] | None = None, **preset: str) -> dict[str, Any]:
    out = line(id, state, codes or ["GENERAL.TANGIBLE.GOODS"])
    out["customer"]["preset"] = {"id": preset.pop("source_id", "buyer-1"), **preset}
    return out


def test_certificate_only_mode(calc: Caller, exempt_tenant: tuple[Tenant, str]) -> None:
    t, _ = exempt_tenant
    resp = calc(t.key, body(
        _buyer("tx", "TX"),  # resale certificate for TX: exempt
        _buyer("wa", "WA"),  # manufacturing certificate covers every line in certificate_only mode
        _buyer("ny", "NY"),  # expired: 100.00 x 4% = 400
        _buyer("fl", "FL"),  # rejected: 100.00 x 6% = 600
        _buyer("ca", "CA"),  # no certificate: 600 + 125 = 725
    ))
    assert_consistent(resp)
    tx, wa, ny, fl, ca = resp["line_items"]
    assert tx["tax_amount"] == "0" and tx["taxes"][0]["rule_name"] == "Exempt: resale exemption certificate"
    assert wa["tax_amount"] == "0" and "manufacturing exemption certificate" in wa["taxes"][0]["rule_name"]
    assert (ny["tax_amount"], fl["tax_amount"], ca["tax_amount"]) == ("400", "600", "725")


def test_certificate_and_product_tax_code_mode(calc: Caller, calc_server: LevyServer, sql: _Sql) -> None:
    t = create_tenant(calc_server.database_url)
    sql.register(t.organization_id, *ALL_STATES)
    sql.settings(t.organization_id, treatment="certificate_and_product_tax_code")
    cust = sql.customer(t.organization_id, "buyer-1")
    sql.certificate(t.organization_id, cust, "WA", "manufacturing")
    sql.certificate(t.organization_id, cust, "TX", "resale")
    resp = calc(t.key, body(
        _buyer("wa-plain", "WA"),  # no _MANUFACTURING attribute: 100.00 x 6.5% = 650
        _buyer("wa-mfg", "WA", ["GENERAL.TANGIBLE.GOODS._MANUFACTURING"]),  # exempt
        _buyer("tx-plain", "TX"),  # resale certificate but no _RESALE: 625
        _buyer("tx-resale", "TX", ["GENERAL.TANGIBLE.GOODS._RESALE"]),  # exempt (_RESALE exempts in both modes)
    ))
    assert_consistent(resp)
    wa_plain, wa_mfg, tx_plain, tx_resale = resp["line_items"]
    assert (wa_plain["tax_amount"], tx_plain["tax_amount"]) == ("650", "625")
    assert wa_mfg["tax_amount"] == "0" and "_MANUFACTURING" in wa_mfg["taxes"][0]["rule_name"]
    assert tx_resale["tax_amount"] == "0" and "resale" in tx_resale["taxes"][0]["rule_name"].lower()


def test_exemption_management_off_ignores_certificates(calc: Caller, calc_server: LevyServer, sql: _Sql) -> None:
    t = create_tenant(calc_server.database_url)
    sql.register(t.organization_id, "TX")
    sql.settings(t.organization_id, management=False)
    cust = sql.customer(t.organization_id, "buyer-1", exempt=True)
    sql.certificate(t.organization_id, cust, "TX", "resale")
    resp = calc(t.key, body(_buyer("1", "TX"), line("2", "TX", ["GENERAL.TANGIBLE.GOODS._RESALE"])))
    assert [li["tax_amount"] for li in resp["line_items"]] == ["625", "0"]  # _RESALE on the line still exempts


def test_customer_overrides(calc: Caller, calc_server: LevyServer, sql: _Sql) -> None:
    t = create_tenant(calc_server.database_url)
    sql.register(t.organization_id, "TX", "CA")
    sql.customer(t.organization_id, "ex", exempt=True)
    sql.customer(t.organization_id, "rs", resale=True)
    resp = calc(t.key, body(_buyer("1", "TX", source_id="ex"), _buyer("2", "CA", source_id="rs")))
    one, two = resp["line_items"]
    assert one["tax_amount"] == "0" and one["taxes"][0]["rule_name"] == "Exempt: customer exemption override"
    assert two["tax_amount"] == "0" and two["taxes"][0]["rule_name"] == "Exempt: customer resale override"


def test_customer_preset_no_match_ambiguous_deleted(calc: Caller, exempt_tenant: tuple[Tenant, str],
                                                    reg_all: Tenant) -> None:
    t, _ = exempt_tenant
    resp = calc(t.key, body(
        _buyer("none", "TX", source_id="nobody"),  # no match: taxed 625, said in detail
        _buyer("amb", "TX", source_id="dup"),  # two accounts, no source_account_id: taxed, said
        _buyer("acct", "TX", source_id="dup", source_account_id="acct-2"),  # that account's certificate: exempt
        _buyer("del", "TX", source_id="gone"),  # deleted customer: no match
    ))
    assert_consistent(resp)
    none, amb, acct, deleted = resp["line_items"]
    assert none["tax_amount"] == "625" and "no customer matches" in none["taxes"][0]["detail"]
    assert amb["tax_amount"] == "625" and "source_account_id" in amb["taxes"][0]["detail"]
    assert acct["tax_amount"] == "0"
    assert deleted["tax_amount"] == "625"
    # Another organization's customer is never matched.
    resp = calc(reg_all.key, body(_buyer("x", "TX")))
    assert resp["tax_amount"] == "625" and "no customer matches" in resp["line_items"][0]["taxes"][0]["detail"]


def test_customer_preset_bad_source(calc: Caller, reg_all: Tenant) -> None:
    status, items, _ = calc_error(calc.raw(reg_all.key, body(_buyer("1", "TX", source="nope"))), calc.transport)
    assert status == 422 and items[0]["loc"] == ["body", "line_items", 0, "customer", "preset", "source"]


# ------------------------------------------------------------------ property: totals add up, nothing negative

_STATES = st.sampled_from(["TX", "CA", "NY", "WA", "FL", "AK", "IL", "UT", "VA", "NJ"])
_CODES = st.sampled_from([["GENERAL.TANGIBLE.GOODS"], ["CLOTHING.APPAREL.GENERAL"], ["SOFTWARE.SAAS.GENERAL"],
                          ["FOOD.GROCERY.GENERAL"], ["SALES_TAX"], ["GENERAL.TANGIBLE.GOODS._RESALE"]])
_LINE = st.fixed_dictionaries({
    "state": _STATES, "codes": _CODES, "qty": st.sampled_from(["1", "2", "0.5", "3.25", "0"]),
    "price": st.integers(0, 500_000), "discount": st.integers(0, 600_000), "zip": st.sampled_from([None, "75001"]),
})


@settings(max_examples=25, deadline=None, suppress_health_check=list(HealthCheck))
@given(lines=st.lists(_LINE, min_size=1, max_size=6), discount=st.integers(0, 1_000_000),
       unregistered=st.booleans())
def test_property_totals_add_up(lines: list[dict[str, Any]], discount: int, unregistered: bool,
                                rest: httpx.Client, stub: pbg.CalculationServiceStub, reg_all: Tenant) -> None:
    items = []
    for i, spec in enumerate(lines):
        li = line(str(i), spec["state"] if spec["codes"] != ["SALES_TAX"] else None, spec["codes"], spec["qty"],
                  spec["price"], zip=spec["zip"] if spec["state"] == "TX" else None)
        if spec["codes"] != ["SALES_TAX"]:
            li["discount_amount"] = str(spec["discount"])
        items.append(li)
    req = body(*items, discount_amount=str(discount))
    results = [Caller(t, rest, stub)(reg_all.key, req, unregistered=unregistered) for t in ("rest", "grpc")]
    for resp in results:
        assert_consistent(resp)
    assert results[0] == results[1]


# ------------------------------------------------------------------ rates import (levy rates import, read by path)


def _levy(database_url: str, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "levy", *args, "--database-url", database_url], env=levy_env(),
                          cwd=str(ROOT), capture_output=True, text=True, timeout=300)


def _wait_for(fn: Any, timeout: float = 30) -> Any:
    deadline = time.monotonic() + timeout
    while True:
        value = fn()
        if value or time.monotonic() > deadline:
            return value
        time.sleep(0.2)


def _file_row(state: str, zip5: str) -> list[str]:
    with open(ZIP5_DIR / f"TAXRATES_ZIP5_{state}202603.csv", encoding="utf-8") as f:
        for rec in f:
            parts = rec.strip().split(",")
            if parts[1] == zip5:
                return parts
    raise AssertionError(f"{zip5} not in the {state} file")


@pytest.fixture(scope="module")
def imported(calc_server: LevyServer, reg_all: Tenant, rest: httpx.Client) -> None:
    if not ZIP5_DIR.is_dir():
        pytest.skip(f"rate files not present at {ZIP5_DIR}")
    done = _levy(calc_server.database_url, "rates", "import", str(ZIP5_DIR))
    assert done.returncode == 0, done.stderr
    assert "52 file(s) imported" in done.stdout or "already imported" in done.stdout, done.stdout
    assert "100%" in done.stderr or "already imported" in done.stdout  # the progress bar

    def loaded() -> bool:
        r = rest.post("/calculations", headers={"X-API-Key": reg_all.key},
                      json=body(line("1", "CA", ["GENERAL.TANGIBLE.GOODS"], zip="90001")))
        return len(r.json()["line_items"][0]["taxes"]) > 2

    assert _wait_for(loaded), "the server did not pick the import up"


def test_imported_zip_rates(calc: Caller, reg_all: Tenant, imported: None) -> None:
    # CA 90001 row: combined 0.105 = state 0.06 + county 0.0025 + city 0.0075 + special 0.035.
    # The built-in statewide 1.25% comes out of county (0.0025) then special (0.01): county 0, special 0.025.
    # 100.00: state 600 + statewide local 125 + city 75 + special 250 = 1050 (= 10.5%).
    assert _file_row("CA", "90001")[3:8] == ["0.105000", "0.060000", "0.002500", "0.007500", "0.035000"]
    resp = calc(reg_all.key, body(line("1", "CA", ["GENERAL.TANGIBLE.GOODS"], zip="90001")))
    assert_consistent(resp)
    rows = {(t["jurisdiction_type"], t["tax_rate"]): t["tax_amount"] for t in resp["line_items"][0]["taxes"]}
    assert rows[("state", "0.06")] == "600" and rows[("city", "0.0075")] == "75" and rows[("special", "0.025")] == "250"
    assert resp["tax_amount"] == "1050"
    # TX 75001 row: state 0.0625, city 0.01, special 0.01: 100.00 -> 625 + 100 + 100 = 825; SaaS 80% -> 80.00: 500+80+80.
    assert _file_row("TX", "75001")[3:8] == ["0.082500", "0.062500", "0.000000", "0.010000", "0.010000"]
    resp = calc(reg_all.key, body(line("g", "TX", ["GENERAL.TANGIBLE.GOODS"], zip="75001-1234"),
                                  line("s", "TX", ["SOFTWARE.SAAS.GENERAL"], zip="75001")))
    assert_consistent(resp)
    assert [li["tax_amount"] for li in resp["line_items"]] == ["825", "660"]
    types = [t["jurisdiction_type"] for t in resp["line_items"][0]["taxes"]]
    assert types == ["state", "city", "special"]
    # Local jurisdictions follow the state's registration: all registered here.
    assert all(t["is_registered"] for t in resp["line_items"][0]["taxes"])


def test_imported_local_rows_follow_state_registration(calc: Caller, calc_server: LevyServer, sql: _Sql,
                                                       imported: None) -> None:
    t = create_tenant(calc_server.database_url)
    sql.register(t.organization_id, "CA")
    # Registered in CA only: a TX 75001 sale is zero on every row unless the header asks; then 825 (see above).
    resp = calc(t.key, body(line("1", "TX", ["GENERAL.TANGIBLE.GOODS"], zip="75001")))
    assert resp["tax_amount"] == "0" and not any(r["is_registered"] for r in resp["line_items"][0]["taxes"])
    resp = calc(t.key, body(line("1", "TX", ["GENERAL.TANGIBLE.GOODS"], zip="75001")), unregistered=True)
    assert resp["tax_amount"] == "825"


def _zip5_file(folder: Path, name: str, rows: list[str]) -> Path:
    path = folder / name
    path.write_text(",".join(
        ["State", "ZipCode", "TaxRegionName", "EstimatedCombinedRate", "StateRate", "EstimatedCountyRate",
         "EstimatedCityRate", "EstimatedSpecialRate", "RiskLevel"]) + "\n" + "\n".join(rows) + "\n")
    return path


def test_import_atomic_idempotent_and_swapped_in(calc_server: LevyServer, reg_all: Tenant, rest: httpx.Client,
                                                 calc: Caller, sql: _Sql, tmp_path: Path) -> None:
    tag = uuid.uuid4().hex[:8].upper()
    good = _zip5_file(tmp_path, "TAXRATES_ZIP5_TX209901.csv",
                      [f"TX,75001,TEST {tag},0.082500,0.062500,0.005000,0.010000,0.005000,0"])
    bad_dir = tmp_path / "bad"
    bad_dir.mkdir()
    _zip5_file(bad_dir, "TAXRATES_ZIP5_NV209901.csv", ["NV,89101,LAS VEGAS,0.5,0.1,0.1,0.1,one,0"])  # not a rate
    before = sql.scalar("SELECT count(*) FROM rate_imports")
    done = _levy(calc_server.database_url, "rates", "import", str(good), str(bad_dir))
    assert done.returncode == 2 and "nothing imported" in done.stderr and "TAXRATES_ZIP5_NV209901.csv:2" in done.stderr
    assert sql.scalar("SELECT count(*) FROM rate_imports") == before  # the good file was not kept either

    done = _levy(calc_server.database_url, "rates", "import", str(good))
    assert done.returncode == 0 and "imported 1 rows" in done.stdout, done.stdout + done.stderr
    assert sql.scalar("SELECT count(*) FROM rate_imports") == before + 1
    again = _levy(calc_server.database_url, "rates", "import", str(good))
    assert again.returncode == 0 and "already imported" in again.stdout
    assert sql.scalar("SELECT count(*) FROM rate_imports") == before + 1
    listed = _levy(calc_server.database_url, "rates", "list")
    assert str(good) in listed.stdout and "2099-01-01" in listed.stdout

    # The running server swaps the new table in: on 2099-02-01, 75001 has county 0.5%, city 1%, special 0.5%.
    # 100.00 x 6.25% = 625 (built-in TX rate; the file's StateRate column is not used) + 50 + 100 + 50 = 825.
    req = body(line("1", "TX", ["GENERAL.TANGIBLE.GOODS"], zip="75001"), date="2099-02-01T00:00:00Z")

    def swapped() -> bool:
        r = rest.post("/calculations", headers={"X-API-Key": reg_all.key}, json=req).json()
        return any(t["jurisdiction_type"] == "county" for t in r["line_items"][0]["taxes"])

    assert _wait_for(swapped)
    resp = calc(reg_all.key, req)
    assert resp["tax_amount"] == "825"
    assert [(t["jurisdiction_type"], t["tax_amount"]) for t in resp["line_items"][0]["taxes"]] == [
        ("state", "625"), ("county", "50"), ("city", "100"), ("special", "50")]


def test_import_sst_files(calc_server: LevyServer, reg_all: Tenant, rest: httpx.Client) -> None:
    rate_file, boundaries = SST_DIR / "MNR2026Q2FEB18.csv", SST_DIR / "MNB2026Q2FEB18-sample.csv"
    if not rate_file.is_file() or not boundaries.is_file():
        pytest.skip(f"SST sample files not present in {SST_DIR}")
    done = _levy(calc_server.database_url, "rates", "import", str(rate_file), "--boundaries", str(boundaries),
                 "--effective-from", "2019-01-15")
    assert done.returncode == 0, done.stderr
    # MNR lines 27,00,053,0.0015 (Hennepin county), 27,01,43000,0.0050 (Minneapolis), 27,63,80004,0.0050 (district).
    # 55401 on 2019-02-01, 100.00: state 6.875% = 687.5 -> 688, county 15, city 50, special 50 = 803.
    req = body(line("1", "MN", ["GENERAL.TANGIBLE.GOODS"], zip="55401"), date="2019-02-01T00:00:00Z")

    def total() -> str | None:
        r = rest.post("/calculations", headers={"X-API-Key": reg_all.key}, json=req).json()
        return r["tax_amount"] if len(r["line_items"][0]["taxes"]) > 1 else None

    assert _wait_for(total) == "803"


def test_rates_import_help() -> None:
    out = subprocess.run([sys.executable, "-m", "levy", "rates", "import", "--help"], env=levy_env(),
                         cwd=str(ROOT), capture_output=True, text=True)
    for option in ("--boundaries", "--effective-from", "--no-progress", "--database-url"):
        assert option in out.stdout


def test_import_rejects_unknown_format(calc_server: LevyServer, tmp_path: Path) -> None:
    f = tmp_path / "x.csv"
    f.write_text("hello,world\n")
    done = _levy(calc_server.database_url, "rates", "import", str(f))
    assert done.returncode == 2 and "unrecognised rate file format" in done.stderr


def test_no_key_is_401(rest: httpx.Client) -> None:
    r = rest.post("/calculations", json=body(line()))
    assert r.status_code == 401


