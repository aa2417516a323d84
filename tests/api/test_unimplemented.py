"""An RPC without a handler answers 501 `not_implemented` over REST and
UNIMPLEMENTED over gRPC (every RPC has a handler today, so the test removes
one in an in-process server)."""

from __future__ import annotations

import asyncio

import grpc
import httpx

from fresh_db import fresh_database_url  # noqa: F401 (fixture)
from levy.app import bootstrap
from levy.app.pipeline import Pipeline
from levy.app.ratelimit import create_limiter
from levy.app.services import AppServices
from levy.config import Config
from levy.store import migrate
from levy.transport.gateway import Gateway
from levy.transport.grpc_server import GrpcServer
from levy.v1 import filings_pb2, filings_pb2_grpc
from levyserver import _create_tenant, free_port

RPC = "levy.v1.FilingService.ListFilings"


def test_rpc_without_handler_is_501_and_unimplemented(fresh_database_url: str) -> None:
    async def main() -> None:
        config = Config(database_url=fresh_database_url, grpc_address=f"127.0.0.1:{free_port()}")
        services = AppServices.create(config)
        await migrate.upgrade(services.engine)
        tenant = await _create_tenant(fresh_database_url)
        handlers = bootstrap.handlers()
        del handlers[RPC]
        pipeline = Pipeline(services, handlers, limiter=create_limiter(""))
        grpc_server = GrpcServer(pipeline, config)
        await grpc_server.start(config.grpc_address)
        try:
            async with httpx.AsyncClient(transport=httpx.ASGITransport(app=Gateway(pipeline, config)),
                                         base_url="http://levy", headers={"X-API-Key": tenant.admin_key}) as http:
                r = await http.get("/filings")
                assert r.status_code == 501
                (err,) = r.json()["errors"]
                assert err["code"] == "not_implemented" and "ListFilings" in err["detail"]
                # Auth still comes first: a plain key is refused before "not implemented".
                assert (await http.get("/filings", headers={"X-API-Key": tenant.key})).status_code == 403
            async with grpc.aio.insecure_channel(config.grpc_address) as ch:
                try:
                    await filings_pb2_grpc.FilingServiceStub(ch).ListFilings(
                        filings_pb2.ListFilingsRequest(), metadata=[("x-api-key", tenant.admin_key)])
                    raise AssertionError("expected UNIMPLEMENTED")
                except grpc.aio.AioRpcError as e:
                    assert e.code() == grpc.StatusCode.UNIMPLEMENTED
        finally:
            await grpc_server.stop(0)
            await pipeline.close()
            await services.close()

    asyncio.run(main())
