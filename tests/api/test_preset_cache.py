"""The calculation's preset cache (docs/calculations.md, "Preset cache"), through
REST and gRPC on SQLite and PostgreSQL.

Writes made through the server are seen by the very next calculation
(read-your-writes in a process); rows written behind the server's back (another
replica, the CLI, SQL) are seen within ``LEVY_PRESET_CACHE_SECONDS`` (default
1 s), and at once with the cache off (0). Figures: 100.00 in TX (6.25 %) = 625.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import grpc
import httpx
import pytest

from levyserver import LevyServer, Tenant, create_tenant, start_server
from levy.v1 import calculations_pb2_grpc as pbg
from test_calculations import Caller, _buyer, _Sql, body, line

TX = "625"


def _caller(server: LevyServer, transport: str) -> Iterator[Caller]:
    with httpx.Client(base_url=server.http_url, timeout=30) as rest, grpc.insecure_channel(server.grpc_target) as ch:
        yield Caller(transport, rest, pbg.CalculationServiceStub(ch))


@pytest.fixture(params=["rest", "grpc"])
def calc(request: pytest.FixtureRequest, server: LevyServer) -> Iterator[Caller]:
    yield from _caller(server, request.param)


def _tax(calc: Caller, key: str, *lines: dict) -> list[str]:  # type: ignore[type-arg]
    return [li["tax_amount"] for li in calc(key, body(*lines))["line_items"]]


def test_registrations_and_settings_seen_at_once(calc: Caller, tenant: Tenant, admin_http: httpx.Client) -> None:
    assert _tax(calc, tenant.key, line("1", "TX")) == ["0"]  # not registered: cached now
    r = admin_http.post("/organization/registrations", json={"jurisdiction": "US-ST-TX", "effective_from": "2000-01-01"})
    assert r.status_code == 201, r.text
    assert _tax(calc, tenant.key, line("1", "TX")) == [TX]
    assert admin_http.delete(f"/organization/registrations/{r.json()['id']}").status_code == 204
    assert _tax(calc, tenant.key, line("1", "TX")) == ["0"]
    # Organization default tax codes (groceries, exempt in TX): a line without codes takes them.
    admin_http.post("/organization/registrations", json={"jurisdiction": "US-ST-TX", "effective_from": "2000-01-01"})
    assert _tax(calc, tenant.key, line("1", "TX")) == [TX]
    r = admin_http.patch("/organization/settings", json={"default_tax_codes": ["FOOD.GROCERY.GENERAL"]})
    assert r.status_code == 200, r.text
    assert _tax(calc, tenant.key, line("1", "TX")) == ["0"]


def test_customer_writes_seen_at_once(calc: Caller, tenant: Tenant, admin_http: httpx.Client) -> None:
    admin_http.post("/organization/registrations", json={"jurisdiction": "US-ST-TX", "effective_from": "2000-01-01"})
    sid = "buyer-" + uuid.uuid4().hex[:8]
    buyer = _buyer("1", "TX", source_id=sid)
    assert _tax(calc, tenant.key, buyer) == [TX]  # no such customer yet: the miss is cached
    r = admin_http.post("/customers", json={"source_id": sid})
    assert r.status_code == 201, r.text
    cid = r.json()["id"]
    r = admin_http.patch(f"/customers/{cid}/exemption-overrides", json={"exempt": True})
    assert r.status_code == 200, r.text
    assert _tax(calc, tenant.key, buyer) == ["0"]
    assert admin_http.delete(f"/customers/{cid}").status_code == 204
    assert _tax(calc, tenant.key, buyer) == [TX]
    assert admin_http.post(f"/customers/{cid}/restore").status_code == 200
    assert _tax(calc, tenant.key, buyer) == ["0"]
    r = admin_http.patch(f"/customers/{cid}/exemption-overrides", json={"exempt": False})
    assert r.status_code == 200, r.text
    assert _tax(calc, tenant.key, buyer) == [TX]
    r = admin_http.post(f"/customers/{cid}/exemption-certificates",
                        json={"jurisdiction": "US-ST-TX", "exemption_type": "resale", "status": "valid"})
    assert r.status_code == 201, r.text
    assert _tax(calc, tenant.key, buyer) == ["0"]
    cert = r.json()["id"]
    r = admin_http.patch(f"/customers/{cid}/exemption-certificates/{cert}", json={"status": "rejected"})
    assert r.status_code == 200, r.text
    assert _tax(calc, tenant.key, buyer) == [TX]


def test_product_writes_seen_at_once(calc: Caller, tenant: Tenant, admin_http: httpx.Client) -> None:
    admin_http.post("/organization/registrations", json={"jurisdiction": "US-ST-TX", "effective_from": "2000-01-01"})
    r = admin_http.post("/products", json={"source_id": "sku-" + uuid.uuid4().hex[:8], "name": "Widget",
                                           "tax_codes": ["GENERAL.TANGIBLE.GOODS"]})
    assert r.status_code == 201, r.text
    pid = r.json()["id"]
    preset = line("1", "TX", product={"preset": {"id": pid}})
    assert _tax(calc, tenant.key, preset) == [TX]
    r = admin_http.patch(f"/products/{pid}", json={"tax_codes": ["FOOD.GROCERY.GENERAL"]})
    assert r.status_code == 200, r.text
    assert _tax(calc, tenant.key, preset) == ["0"]
    assert admin_http.delete(f"/products/{pid}").status_code in (200, 204)
    status, out = calc.raw(tenant.key, body(preset))
    assert status == 422, out


def _seen_after(calc: Caller, key: str, limit: float) -> float:
    """Seconds until a registration written with SQL (behind the server) is used."""
    start = time.monotonic()
    while _tax(calc, key, line("1", "TX")) != [TX]:
        assert time.monotonic() - start < limit, "the cached registrations outlived the cache time"
        time.sleep(0.05)
    return time.monotonic() - start


def test_writes_behind_the_server_seen_within_the_cache_time(calc: Caller, server: LevyServer, tenant: Tenant) -> None:
    assert _tax(calc, tenant.key, line("1", "TX")) == ["0"]
    _Sql(server.database_url).register(tenant.organization_id, "TX")
    # Default LEVY_PRESET_CACHE_SECONDS is 1: generous margin for a loaded machine.
    _seen_after(calc, tenant.key, limit=10)


@pytest.fixture(scope="module")
def uncached_server(database_url: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[LevyServer]:
    srv = start_server(database_url, Path(tmp_path_factory.mktemp("nocache-logs")),
                       extra_env={"LEVY_PRESET_CACHE_SECONDS": "0"})
    try:
        yield srv
    finally:
        assert srv.stop() == 0, srv.log()


@pytest.mark.parametrize("transport", ["rest", "grpc"])
def test_cache_off_reads_every_time(transport: str, uncached_server: LevyServer) -> None:
    t = create_tenant(uncached_server.database_url)
    for calc in _caller(uncached_server, transport):
        assert _tax(calc, t.key, line("1", "TX")) == ["0"]
        _Sql(uncached_server.database_url).register(t.organization_id, "TX")
        assert _tax(calc, t.key, line("1", "TX")) == [TX]  # no cache: the very next calculation
