"""OWASP API8 (security misconfiguration): an internal error never leaks a
stack trace, SQL or schema names; gRPC reflection can be turned off; there
are no debug endpoints."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path

import grpc
import httpx
import pytest
from grpc_reflection.v1alpha import reflection_pb2, reflection_pb2_grpc

from levyserver import LevyServer, Tenant, create_tenant, start_server
from fresh_db import fresh_database_url  # noqa: F401 (fixture)
from levytest import md
from security_helpers import all_methods, grpc_error_of, rest_call

LEAKS = ("Traceback", "File \"", "sqlalchemy", "sqlite", "asyncpg", "SELECT", "api_keys", "last_used_at",
         "OperationalError", "ProgrammingError", ".py")


async def _break_schema(url: str) -> None:
    from sqlalchemy import text

    from levy.store.db import create_engine

    engine = create_engine(url, pool_size=1)
    try:
        async with engine.begin() as conn:
            await conn.execute(text("ALTER TABLE api_keys RENAME COLUMN last_used_at TO last_used_at_gone"))
    finally:
        await engine.dispose()


@pytest.fixture
def broken_server(fresh_database_url: str, tmp_path: Path) -> Iterator[tuple[LevyServer, Tenant]]:
    """A server on a throwaway database whose schema is then broken under it."""
    url = fresh_database_url
    srv = start_server(url, tmp_path)
    try:
        tenant = create_tenant(url)
        asyncio.run(_break_schema(url))
        yield srv, tenant
    finally:
        srv.stop()


def test_internal_errors_carry_only_the_request_id(broken_server: tuple[LevyServer, Tenant]) -> None:
    srv, tenant = broken_server
    with httpx.Client(base_url=srv.http_url, headers={"X-API-Key": tenant.admin_key}, timeout=30) as client:
        for m in all_methods():
            r = rest_call(client, m)
            assert r.status_code == 500, (m.name, r.status_code, r.text)
            request_id = r.headers["x-request-id"]
            for leak in LEAKS:
                assert leak not in r.text, (m.name, leak, r.text)
            if m.name == "CreateCalculation":  # the calculation shape: a plain string
                assert r.headers["content-type"].startswith("text/plain")
                assert r.text == f"An unexpected error occurred. Request id: {request_id}."
            else:
                (err,) = r.json()["errors"]
                assert err["code"] == "system_internal_error" and err["status"] == "500"
                assert err["detail"] == f"An unexpected error occurred. Request id: {request_id}."
                assert err["meta"] is None and "source" not in err
    with grpc.insecure_channel(srv.grpc_target) as channel:
        for m in all_methods():
            e = grpc_error_of(channel, m, md(tenant.admin_key))
            assert e.code == grpc.StatusCode.INTERNAL, (m.name, e)
            assert e.reason == "system_internal_error"
            assert e.message == f"An unexpected error occurred. Request id: {e.trailers['x-request-id']}."
            for leak in LEAKS:
                assert leak not in e.message and leak not in str(e.errors), (m.name, leak)
    # The log has what the body does not, under the same request id.
    assert "Traceback" in srv.log() and "last_used_at" in srv.log()


def _list_services(target: str) -> list[str]:
    with grpc.insecure_channel(target) as channel:
        stub = reflection_pb2_grpc.ServerReflectionStub(channel)
        responses = stub.ServerReflectionInfo(iter([reflection_pb2.ServerReflectionRequest(list_services="")]),
                                              timeout=10)
        return [s.name for r in responses for s in r.list_services_response.service]


def test_reflection_is_on_by_default(server: LevyServer) -> None:
    assert "levy.v1.CustomerService" in _list_services(server.grpc_target)


def test_reflection_can_be_turned_off(tmp_path: Path) -> None:
    srv = start_server(f"sqlite+aiosqlite:///{tmp_path}/levy.db", tmp_path, args=["--no-reflection"])
    try:
        with pytest.raises(grpc.RpcError) as exc:
            _list_services(srv.grpc_target)
        assert exc.value.code() == grpc.StatusCode.UNIMPLEMENTED  # type: ignore[attr-defined]
    finally:
        assert srv.stop() == 0
    srv = start_server(f"sqlite+aiosqlite:///{tmp_path}/levy.db", tmp_path, extra_env={"LEVY_GRPC_REFLECTION": "false"})
    try:
        with pytest.raises(grpc.RpcError):
            _list_services(srv.grpc_target)
    finally:
        assert srv.stop() == 0


def test_metrics_can_be_turned_off(tmp_path: Path) -> None:
    srv = start_server(f"sqlite+aiosqlite:///{tmp_path}/levy.db", tmp_path, extra_env={"LEVY_METRICS": "false"})
    try:
        r = httpx.get(srv.http_url + "/metrics", timeout=30)
        assert r.status_code == 404, r.text[:300]
        assert r.json()["errors"][0]["code"] == "not_found"
    finally:
        assert srv.stop() == 0


@pytest.mark.parametrize("path", ["/debug", "/debug/pprof", "/docs", "/admin", "/.env", "/.git/config",
                                  "/server-status", "/openapi.yaml", "/customers/../api-keys"])
def test_no_debug_endpoints(path: str, anon_http: httpx.Client) -> None:
    r = anon_http.get(path)
    assert r.status_code in (401, 404), (path, r.status_code)
    assert "Traceback" not in r.text
