"""Resource exhaustion by a hostile HTTP client (issue 16): unbounded headers, a
head or body sent one byte at a time, and one API key taking every concurrency
place. A server of this module's own runs with small limits so that each test
waits a second or two, not the defaults' tens of seconds."""

from __future__ import annotations

import asyncio
import contextlib
import socket
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import grpc
import httpx
import orjson
import pytest
from sqlalchemy import text

from levyserver import LevyServer, Tenant, create_tenant, own_server, raw_connect, read_until_closed
from levytest import md
from levy.store.db import create_engine, transaction
from levy.v1 import customers_pb2, customers_pb2_grpc

MAX_HEADER_BYTES = 4096
MAX_HEADER_COUNT = 20
HEADER_TIMEOUT = 1.0
BODY_TIMEOUT = 1.0
MAX_CONCURRENT = 4
# LEVY_KEY_CONCURRENCY_SHARE 0.5 of 4 places: 2 per key.
PER_KEY = 2

LIMITS = {
    "LEVY_MAX_HEADER_BYTES": str(MAX_HEADER_BYTES),
    "LEVY_MAX_HEADER_COUNT": str(MAX_HEADER_COUNT),
    "LEVY_HEADER_READ_TIMEOUT_SECONDS": str(HEADER_TIMEOUT),
    "LEVY_BODY_READ_TIMEOUT_SECONDS": str(BODY_TIMEOUT),
    "LEVY_MAX_CONCURRENT_REQUESTS": str(MAX_CONCURRENT),
    "LEVY_KEY_CONCURRENCY_SHARE": "0.5",
    "LEVY_DB_BUSY_TIMEOUT_SECONDS": "20",
    # Keys authenticated once are not read (or touched) again while a test holds the write lock.
    "LEVY_AUTH_CACHE_SECONDS": "60",
}


@pytest.fixture(scope="module", params=["sqlite", "postgres"])
def limited(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[LevyServer]:
    with own_server(request.param, tmp_path_factory.mktemp("limits"), LIMITS) as srv:
        yield srv


@pytest.fixture
def tenants(limited: LevyServer) -> tuple[Tenant, Tenant]:
    return create_tenant(limited.database_url), create_tenant(limited.database_url)


# ------------------------------------------------------------------ raw HTTP


def _send(sock: socket.socket, data: bytes) -> None:
    with contextlib.suppress(ConnectionResetError, BrokenPipeError):
        sock.sendall(data)


def _response(raw: bytes) -> tuple[int, dict[str, str], Any]:
    head, _, body = raw.partition(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    headers = dict(line.lower().split(": ", 1) for line in lines[1:])
    return int(lines[0].split()[1]), headers, orjson.loads(body)


def _assert_error(raw: bytes, status: int, code: str) -> None:
    got, headers, body = _response(raw)
    assert got == status, raw[:300]
    assert headers["connection"] == "close"
    [error] = body["errors"]  # the spec's error object (7.1)
    assert error["status"] == str(status) and error["code"] == code and error["title"] and error["detail"]


def _request(path: str, headers: list[tuple[str, str]], body: bytes = b"", method: str = "GET") -> bytes:
    lines = [f"{method} {path} HTTP/1.1", "Host: levy", *(f"{k}: {v}" for k, v in headers)]
    return ("\r\n".join(lines) + "\r\n\r\n").encode() + body


def test_headers_over_the_size_limit_are_431_and_closed(limited: LevyServer, tenants: tuple[Tenant, Tenant]) -> None:
    key = tenants[0].key
    # 1 MB in one header, before any key is looked at.
    with raw_connect(limited) as sock:
        _send(sock, _request("/customers", [("X-Big", "a" * 1_000_000)]))
        _assert_error(read_until_closed(sock), 431, "request_header_fields_too_large")
    # Just over: a request line of 20 bytes, "Host: levy" (14) and a 4100-byte header.
    with raw_connect(limited) as sock:
        _send(sock, _request("/customers", [("X-API-Key", key), ("X-Pad", "a" * 4100)]))
        _assert_error(read_until_closed(sock), 431, "request_header_fields_too_large")
    # Under it the same request is served: 3000 + the rest stays below 4096 bytes.
    with httpx.Client(base_url=limited.http_url, timeout=10) as c:
        assert c.get("/customers", headers={"X-API-Key": key, "X-Pad": "a" * 3000}).status_code == 200


def test_too_many_headers_are_431(limited: LevyServer, tenants: tuple[Tenant, Tenant]) -> None:
    key = tenants[0].key
    with raw_connect(limited) as sock:
        _send(sock, _request("/customers", [(f"X-H{i}", "v") for i in range(5000)]))
        _assert_error(read_until_closed(sock), 431, "request_header_fields_too_large")
    # Host, the key, Connection and 17 more: 20 fields, the limit itself, are served; 21 are not.
    fields = [("X-API-Key", key), ("Connection", "close"), *((f"X-H{i}", "v") for i in range(MAX_HEADER_COUNT - 3))]
    with raw_connect(limited) as sock:
        sock.sendall(_request("/customers", fields))
        assert _response(read_until_closed(sock))[0] == 200
    with raw_connect(limited) as sock:
        _send(sock, _request("/customers", [*fields, ("X-One-More", "v")]))
        _assert_error(read_until_closed(sock), 431, "request_header_fields_too_large")


def test_an_endless_header_is_cut_off_at_the_limit(limited: LevyServer) -> None:
    """A header that never ends is refused once the limit is passed, not buffered to its end."""
    with raw_connect(limited) as sock:
        sock.sendall(b"GET /customers HTTP/1.1\r\nHost: levy\r\nX-Endless: ")
        sent = 0
        with contextlib.suppress(ConnectionResetError, BrokenPipeError):
            while sent < 1_000_000:
                sock.sendall(b"a" * 1024)
                sent += 1024
                if sent % 8192 == 0:
                    time.sleep(0.05)  # let the server read what was sent
        raw = read_until_closed(sock)
    _assert_error(raw, 431, "request_header_fields_too_large")
    assert sent < 1_000_000  # the server closed the connection long before the client was done


def test_a_partial_head_is_408_and_closed_after_the_header_timeout(limited: LevyServer) -> None:
    for partial in (b"GET /customers HTTP/1.1\r\nHost: levy\r\nX-Slow: abc", b""):
        with raw_connect(limited) as sock:
            started = time.monotonic()
            _send(sock, partial)
            raw = read_until_closed(sock)
            waited = time.monotonic() - started
        _assert_error(raw, 408, "request_timeout")
        assert HEADER_TIMEOUT - 0.1 < waited < HEADER_TIMEOUT + 2


def test_a_head_trickled_a_byte_at_a_time_is_closed_at_the_header_timeout(limited: LevyServer) -> None:
    """The timeout runs from the head's first byte: sending a byte now and then does not extend it."""
    head = _request("/customers", [("X-Slow", "a" * 100)])
    with raw_connect(limited) as sock:
        started = time.monotonic()
        with contextlib.suppress(ConnectionResetError, BrokenPipeError):
            for byte in head[:-1]:
                sock.sendall(bytes([byte]))
                time.sleep(0.1)
                if time.monotonic() - started > HEADER_TIMEOUT + 2:
                    break
        raw = read_until_closed(sock)
        waited = time.monotonic() - started
    _assert_error(raw, 408, "request_timeout")
    assert waited < HEADER_TIMEOUT + 2


def test_grpc_metadata_over_the_header_limit_is_resource_exhausted(
    limited: LevyServer, tenants: tuple[Tenant, Tenant]
) -> None:
    with grpc.insecure_channel(limited.grpc_target) as ch:
        stub = customers_pb2_grpc.CustomerServiceStub(ch)
        request = customers_pb2.ListCustomersRequest()
        stub.ListCustomers(request, metadata=md(tenants[0].key, x_pad="a" * 3000))
        with pytest.raises(grpc.RpcError) as e:
            stub.ListCustomers(request, metadata=md(tenants[0].key, x_pad="a" * 5000))
        assert e.value.code() == grpc.StatusCode.RESOURCE_EXHAUSTED


# ------------------------------------------------------------------ bodies and concurrency places


def test_slow_bodies_hold_no_place_and_are_408_at_the_body_deadline(
    limited: LevyServer, tenants: tuple[Tenant, Tenant]
) -> None:
    """More trickling uploads than the server has places (the issue's 21 against 20,
    here 5 against 4): another organization is still served at once, and each upload
    is answered 408 and closed at the body deadline."""
    slow, other = tenants
    socks = []
    try:
        for _ in range(MAX_CONCURRENT + 1):
            sock = raw_connect(limited)
            sock.sendall(_request("/customers", [("X-API-Key", slow.key), ("Content-Type", "application/json"),
                                                 ("Content-Length", "100000")], b"{", method="POST"))
            socks.append(sock)
            time.sleep(0.1)  # admitted (which holds a place for a moment) before the next arrives
        started = time.monotonic()
        time.sleep(0.2)  # every upload is now waiting for the rest of its body
        with httpx.Client(base_url=limited.http_url, timeout=10) as c:
            r = c.get("/customers", headers={"X-API-Key": other.key})
        assert r.status_code == 200, r.text
        for sock in socks:
            _assert_error(read_until_closed(sock), 408, "request_timeout")
        assert time.monotonic() - started < BODY_TIMEOUT + 1
    finally:
        for sock in socks:
            sock.close()


@contextlib.asynccontextmanager
async def _writes_blocked(url: str) -> Any:
    """Customer writes wait (a held SQLite write lock; PostgreSQL: the table locked against writers)."""
    engine = create_engine(url, pool_size=1)
    try:
        async with transaction(engine, write=True) as conn:  # BEGIN IMMEDIATE on SQLite
            if not url.startswith("sqlite"):
                await conn.execute(text("LOCK TABLE customers IN EXCLUSIVE MODE"))
            yield
    finally:
        await engine.dispose()


def test_one_key_cannot_take_every_place(limited: LevyServer, tenants: tuple[Tenant, Tenant]) -> None:
    busy, other = tenants

    async def scenario() -> None:
        async with httpx.AsyncClient(base_url=limited.http_url, timeout=30) as c:
            def create(n: int) -> Any:
                return c.post("/customers", headers={"X-API-Key": busy.key}, json={"source_id": f"share-{n}"})

            for key in (busy.key, other.key):
                assert (await c.get("/customers", headers={"X-API-Key": key})).status_code == 200
            async with _writes_blocked(limited.database_url):
                held = [asyncio.create_task(create(n)) for n in range(PER_KEY)]
                await asyncio.sleep(0.5)  # both are running, waiting on the lock
                assert not any(t.done() for t in held)
                # The key's third request, a read as well, is over its share: 503 at once.
                for r in (await create(99), await c.get("/customers", headers={"X-API-Key": busy.key})):
                    assert r.status_code == 503, r.text
                    assert r.headers["retry-after"] == "1"
                    assert r.json()["errors"][0]["code"] == "service_overloaded"
                async with grpc.aio.insecure_channel(limited.grpc_target) as ch:
                    stub = customers_pb2_grpc.CustomerServiceStub(ch)
                    with pytest.raises(grpc.aio.AioRpcError) as e:
                        await stub.ListCustomers(customers_pb2.ListCustomersRequest(), metadata=md(busy.key))
                    assert e.value.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
                    # Another key is served by both transports (2 of the 4 places are free).
                    await stub.ListCustomers(customers_pb2.ListCustomersRequest(), metadata=md(other.key))
                assert (await c.get("/customers", headers={"X-API-Key": other.key})).status_code == 200
            assert [(await t).status_code for t in held] == [201] * PER_KEY
            # Its places released, the key is served again.
            assert (await c.get("/customers", headers={"X-API-Key": busy.key})).status_code == 200

    asyncio.run(scenario())
