"""The request timeout and the concurrency cap, through both transports of a
real in-process server (gateway + grpc.aio on a port; SQLite and PostgreSQL) with a slow
handler standing in for ListProductTaxCodes."""

from __future__ import annotations

import asyncio
from typing import Any

import grpc
import httpx

from levyserver import _create_tenant, free_port
from fresh_db import fresh_database_url  # noqa: F401 (fixture)
from levy.app import bootstrap
from levy.app.pipeline import Pipeline
from levy.app.ratelimit import create_limiter
from levy.app.services import AppServices
from levy.config import Config
from levy.store import migrate
from levy.transport.gateway import Gateway
from levy.transport.grpc_server import GrpcServer
from levy.v1 import reference_pb2, reference_pb2_grpc

RPC = "levy.v1.ReferenceService.ListProductTaxCodes"


async def _with_server(url: str, config_kw: dict[str, Any], body: Any) -> None:
    config = Config(database_url=url, grpc_address=f"127.0.0.1:{free_port()}", **config_kw)
    services = AppServices.create(config)
    await migrate.upgrade(services.engine)
    tenant = await _create_tenant(url)
    release = asyncio.Event()
    cancelled: list[str] = []

    async def slow(req: Any, ctx: Any) -> Any:
        try:
            await asyncio.wait_for(release.wait(), 10)
        except asyncio.CancelledError:
            cancelled.append(ctx.request_id)
            raise
        return reference_pb2.ListProductTaxCodesResponse()

    handlers = bootstrap.handlers()
    handlers[RPC] = slow
    pipeline = Pipeline(services, handlers, limiter=create_limiter(""))
    grpc_server = GrpcServer(pipeline, config)
    await grpc_server.start(config.grpc_address)
    gateway = Gateway(pipeline, config)
    try:
        async with httpx.AsyncClient(transport=httpx.ASGITransport(app=gateway), base_url="http://levy",
                                     headers={"X-API-Key": tenant.key}) as http, \
                grpc.aio.insecure_channel(config.grpc_address) as ch:
            await body(http, reference_pb2_grpc.ReferenceServiceStub(ch), tenant.key, release, cancelled)
    finally:
        release.set()
        await grpc_server.stop(0)
        await pipeline.close()
        await services.close()


def test_request_timeout_cancels_the_handler(fresh_database_url: str) -> None:
    async def body(http, stub, key, release, cancelled):  # type: ignore[no-untyped-def]
        r = await http.get("/product-tax-codes")
        assert r.status_code == 503
        assert r.json()["errors"][0]["code"] == "deadline_exceeded"
        try:
            await stub.ListProductTaxCodes(reference_pb2.ListProductTaxCodesRequest(), metadata=[("x-api-key", key)])
            raise AssertionError("expected DEADLINE_EXCEEDED")
        except grpc.aio.AioRpcError as e:
            assert e.code() == grpc.StatusCode.DEADLINE_EXCEEDED
        assert len(cancelled) == 2  # both handlers were cancelled, not left running

    asyncio.run(_with_server(fresh_database_url, {"request_timeout_seconds": 0.3}, body))


def test_grpc_client_deadline_is_honoured(fresh_database_url: str) -> None:
    async def body(http, stub, key, release, cancelled):  # type: ignore[no-untyped-def]
        try:
            await stub.ListProductTaxCodes(reference_pb2.ListProductTaxCodesRequest(), timeout=0.3,
                                           metadata=[("x-api-key", key)])
            raise AssertionError("expected DEADLINE_EXCEEDED")
        except grpc.aio.AioRpcError as e:
            assert e.code() == grpc.StatusCode.DEADLINE_EXCEEDED
        for _ in range(50):
            if cancelled:
                break
            await asyncio.sleep(0.05)
        assert len(cancelled) == 1  # the server stopped working on it (its own timeout is 30 s)

    asyncio.run(_with_server(fresh_database_url, {"request_timeout_seconds": 30.0}, body))


def test_concurrency_cap_refuses_at_once(fresh_database_url: str) -> None:
    async def body(http, stub, key, release, cancelled):  # type: ignore[no-untyped-def]
        held = [asyncio.create_task(http.get("/product-tax-codes")) for _ in range(2)]
        await asyncio.sleep(0.3)
        r = await http.get("/product-tax-codes")
        assert r.status_code == 503 and r.headers["retry-after"] == "1"
        assert r.json()["errors"][0]["code"] == "service_overloaded"
        try:
            await stub.ListProductTaxCodes(reference_pb2.ListProductTaxCodesRequest(), metadata=[("x-api-key", key)])
            raise AssertionError("expected RESOURCE_EXHAUSTED")
        except grpc.aio.AioRpcError as e:
            assert e.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
            assert dict(e.trailing_metadata())["retry-after"] == "1"
        release.set()
        assert [t.status_code for t in await asyncio.gather(*held)] == [200, 200]
        assert (await http.get("/product-tax-codes")).status_code == 200  # places are given back

    # One key fills the process's places here: no per-key share (tests/security/test_resource_limits.py has it).
    asyncio.run(_with_server(fresh_database_url, {"max_concurrent_requests": 2, "key_concurrency_share": 1.0}, body))
