"""Database loss (issue 11, Faults): with the database down or its connections
killed, requests fail fast with 503 ``service_unavailable`` (gRPC UNAVAILABLE),
never 500, and the same server process recovers by itself when the database
returns. Each test runs its own server on its own database."""

from __future__ import annotations

import os
import sqlite3
import threading
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import grpc
import httpx
import pytest
from sqlalchemy.engine import make_url

from levyserver import PG_ENV, LevyServer, Tenant, create_tenant, drop_postgres_database, make_postgres_database, start_server
from fault_tools import LEAKS, TcpProxy, terminate_backends
from levy.v1 import customers_pb2 as pb
from levy.v1 import customers_pb2_grpc
from levytest import call_error, md

FAST = 6.0  # seconds: a request against a missing database must fail within this (connect timeout 2 s)


def sid() -> str:
    return "loss-" + uuid.uuid4().hex[:12]


def assert_unavailable(r: httpx.Response) -> None:
    assert r.status_code == 503, (r.status_code, r.text)
    (err,) = r.json()["errors"]
    assert err["code"] == "service_unavailable" and err["status"] == "503"
    assert err["detail"].startswith("The database is unavailable")
    assert r.headers["retry-after"] == "1"
    for leak in LEAKS:
        assert leak not in r.text, (leak, r.text)


def assert_grpc_unavailable(stub: customers_pb2_grpc.CustomerServiceStub, key: str) -> None:
    started = time.monotonic()
    err = call_error(stub.CreateCustomer, pb.CreateCustomerRequest(customer=pb.Customer(source_id=sid())), md(key))
    assert time.monotonic() - started < FAST
    assert err.code == grpc.StatusCode.UNAVAILABLE and err.reason == "service_unavailable", err
    for leak in LEAKS:
        assert leak not in err.message, (leak, err.message)


def wait_until_served(client: httpx.Client, timeout: float = 20) -> float:
    """Seconds until POST /customers succeeds again (the server recovers by itself)."""
    started = time.monotonic()
    while True:
        r = client.post("/customers", json={"source_id": sid()})
        if r.status_code == 201:
            return time.monotonic() - started
        assert r.status_code == 503, (r.status_code, r.text)
        assert time.monotonic() - started < timeout, "the server did not recover"
        time.sleep(0.2)


# ------------------------------------------------------------------ PostgreSQL


@pytest.fixture
def pg_database() -> Iterator[tuple[str, str]]:
    url, name = make_postgres_database()
    try:
        yield url, name
    finally:
        drop_postgres_database(name)


@pytest.fixture
def proxied(pg_database: tuple[str, str], tmp_path: Path) -> Iterator[tuple[LevyServer, TcpProxy, Tenant]]:
    """A server that reaches its PostgreSQL database through a proxy the test controls."""
    url, _ = pg_database
    u = make_url(url)
    proxy = TcpProxy(u.host or "127.0.0.1", u.port or 5432)
    proxy.start()
    via = u.set(host="127.0.0.1", port=proxy.port).render_as_string(hide_password=False)
    srv = start_server(via, tmp_path, extra_env={"LEVY_DB_CONNECT_TIMEOUT_SECONDS": "2",
                                                 "LEVY_AUTH_CACHE_SECONDS": "0"})
    try:
        yield srv, proxy, create_tenant(url)
    finally:
        proxy.start() if proxy._server is None else None  # let the server shut down cleanly
        srv.stop()
        proxy.close()


def test_postgres_down_fails_fast_with_503_then_recovers(proxied: tuple[LevyServer, TcpProxy, Tenant]) -> None:
    srv, proxy, tenant = proxied
    pid = srv.proc.pid
    with httpx.Client(base_url=srv.http_url, headers={"X-API-Key": tenant.key}, timeout=30) as http, \
            grpc.insecure_channel(srv.grpc_target) as channel:
        stub = customers_pb2_grpc.CustomerServiceStub(channel)
        before = http.post("/customers", json={"source_id": sid(), "name": "before"})
        assert before.status_code == 201, before.text

        proxy.stop()  # the database goes away: open connections reset, new ones refused
        for _ in range(3):
            for send in (lambda: http.post("/customers", json={"source_id": sid()}),
                         lambda: http.get("/customers"),
                         lambda: http.get(f"/customers/{before.json()['id']}"),
                         lambda: http.post("/customers/batch", json={"data": [{"source_id": sid()}]})):
                started = time.monotonic()
                r = send()
                assert time.monotonic() - started < FAST, "a down database must not hang requests"
                assert_unavailable(r)
            assert_grpc_unavailable(stub, tenant.key)
        assert http.get("/healthz").status_code == 200  # the process itself still serves

        proxy.start()  # the database returns
        assert wait_until_served(http) < 15
        assert http.get(f"/customers/{before.json()['id']}").json()["name"] == "before"
        c = stub.CreateCustomer(pb.CreateCustomerRequest(customer=pb.Customer(source_id=sid())), metadata=md(tenant.key))
        assert c.id.startswith("cust_")
    assert srv.proc.pid == pid and srv.proc.poll() is None  # recovered without a restart
    assert "Traceback" not in srv.log()


def test_postgres_connections_killed_while_idle_are_replaced_before_use(
        pg_database: tuple[str, str], tmp_path: Path) -> None:
    """A pooled connection idle for more than ``PING_AFTER_IDLE_S`` is pinged at checkout: the
    database dropping every connection while the server is idle costs no request a 503
    (a customer create, a list and a transaction, which writes through the driver directly)."""
    url, name = pg_database
    srv = start_server(url, tmp_path, extra_env={"LEVY_AUTH_CACHE_SECONDS": "0"})
    try:
        tenant = create_tenant(url)
        with httpx.Client(base_url=srv.http_url, headers={"X-API-Key": tenant.key}, timeout=30) as http:
            sale = {"type": "sale", "status": "finalized", "transaction_date": "2026-03-15T12:00:00Z",
                    "line_items": [{"id": "a", "quantity": "1", "unit_price": "1000",
                                    "customer": {"address": {"state": "TX"}}}]}
            for _ in range(3):  # several pooled connections in use
                assert http.post("/customers", json={"source_id": sid()}).status_code == 201
                assert http.post("/transactions", json=sale).status_code == 200
            for _ in range(2):
                assert terminate_backends(os.environ[PG_ENV], name) >= 1
                time.sleep(1.5)  # idle longer than PING_AFTER_IDLE_S
                assert http.post("/customers", json={"source_id": sid()}).status_code == 201
                assert http.get("/customers").status_code == 200
                r = http.post("/transactions", json=sale)
                assert r.status_code == 200, r.text
        assert "Traceback" not in srv.log(), srv.log()[-3000:]
    finally:
        srv.stop()


def test_postgres_connections_killed_mid_traffic_are_503_never_500(
        pg_database: tuple[str, str], tmp_path: Path) -> None:
    url, name = pg_database
    srv = start_server(url, tmp_path, extra_env={"LEVY_AUTH_CACHE_SECONDS": "0"})
    try:
        tenant = create_tenant(url)
        statuses: list[int] = []
        grpc_codes: list[grpc.StatusCode] = []
        stop = threading.Event()

        def rest_traffic() -> None:
            with httpx.Client(base_url=srv.http_url, headers={"X-API-Key": tenant.key}, timeout=30) as http:
                n = 0
                while not stop.is_set():
                    n += 1
                    if n % 3 == 0:
                        r = http.post("/customers/batch", json={"data": [{"source_id": sid()} for _ in range(20)]})
                    elif n % 3 == 1:
                        r = http.post("/customers", json={"source_id": sid()})
                    else:
                        r = http.get("/customers", params={"limit": 50})
                    if r.status_code >= 500:
                        assert_unavailable(r)
                    statuses.append(r.status_code)

        def grpc_traffic() -> None:
            with grpc.insecure_channel(srv.grpc_target) as channel:
                stub = customers_pb2_grpc.CustomerServiceStub(channel)
                while not stop.is_set():
                    try:
                        stub.CreateCustomer(pb.CreateCustomerRequest(customer=pb.Customer(source_id=sid())),
                                            metadata=md(tenant.key), timeout=30)
                        grpc_codes.append(grpc.StatusCode.OK)
                    except grpc.RpcError as e:
                        grpc_codes.append(e.code())

        threads = [threading.Thread(target=rest_traffic) for _ in range(3)] + [threading.Thread(target=grpc_traffic)]
        errors: list[BaseException] = []
        for t in threads:
            t.run = (lambda f: lambda: _capture(f, errors))(t.run)  # type: ignore[method-assign]
            t.start()
        killed = 0
        try:
            for _ in range(6):
                time.sleep(0.4)
                killed += terminate_backends(os.environ[PG_ENV], name)
        finally:
            stop.set()
            for t in threads:
                t.join(timeout=60)
        assert not errors, errors
        assert killed >= 6, "the server held no connections to kill"
        assert set(statuses) <= {200, 201, 503}, sorted(set(statuses))
        assert set(grpc_codes) <= {grpc.StatusCode.OK, grpc.StatusCode.UNAVAILABLE}, set(grpc_codes)
        assert statuses.count(200) + statuses.count(201) > 10
        with httpx.Client(base_url=srv.http_url, headers={"X-API-Key": tenant.key}, timeout=30) as http:
            assert wait_until_served(http) < 10  # pool pre-ping replaced the dead connections
            assert http.get("/customers").status_code == 200
        assert "Traceback" not in srv.log(), srv.log()[-3000:]
    finally:
        srv.stop()


def _capture(fn, errors: list[BaseException]) -> None:  # type: ignore[no-untyped-def]
    try:
        fn()
    except BaseException as e:  # noqa: BLE001 - reported by the test
        errors.append(e)


# ------------------------------------------------------------------ SQLite


def test_sqlite_locked_database_is_503_then_recovers(tmp_path: Path) -> None:
    path = tmp_path / "locked.db"
    srv = start_server(f"sqlite+aiosqlite:///{path}", tmp_path, extra_env={"LEVY_DB_BUSY_TIMEOUT_SECONDS": "0.5"})
    try:
        tenant = create_tenant(srv.database_url)
        with httpx.Client(base_url=srv.http_url, headers={"X-API-Key": tenant.key}, timeout=30) as http, \
                grpc.insecure_channel(srv.grpc_target) as channel:
            stub = customers_pb2_grpc.CustomerServiceStub(channel)
            first = http.post("/customers", json={"source_id": sid()})
            assert first.status_code == 201
            holder = sqlite3.connect(path, isolation_level=None, timeout=5)
            holder.execute("BEGIN IMMEDIATE")  # another process holds the write lock past the busy timeout
            try:
                for send in (lambda: http.post("/customers", json={"source_id": sid()}),
                             lambda: http.post("/customers/batch", json={"data": [{"source_id": sid()}]}),
                             lambda: http.patch(f"/customers/{first.json()['id']}", json={"name": "x"})):
                    started = time.monotonic()
                    r = send()
                    assert time.monotonic() - started < FAST
                    assert_unavailable(r)
                assert_grpc_unavailable(stub, tenant.key)
                assert http.get(f"/customers/{first.json()['id']}").status_code == 200  # WAL: reads go on
            finally:
                holder.rollback()
                holder.close()
            assert wait_until_served(http) < 5
            assert http.get(f"/customers/{first.json()['id']}").json()["name"] is None  # the refused PATCH wrote nothing
    finally:
        assert srv.stop() == 0
    assert "Traceback" not in srv.log()
