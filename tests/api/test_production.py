"""Production posture: rate limits (per API key, per address for failed
authentication, shared through Redis), --workers, /metrics and JSON logs.
Each test starts its own server with the limits it needs."""

from __future__ import annotations

import json
import os
import signal
import time
from collections.abc import Iterator

import grpc
import httpx
import pytest

from levyserver import REDIS_ENV, LevyServer, create_tenant, start_server
from levytest import call_error, md
from levy.v1 import reference_pb2, reference_pb2_grpc

TAX_CODES = "/product-tax-codes"


@pytest.fixture
def limited(tmp_path, database_url) -> Iterator[LevyServer]:  # type: ignore[no-untyped-def]
    srv = start_server(database_url, tmp_path, extra_env={
        "LEVY_RATE_LIMIT_PER_SECOND": "0.2", "LEVY_RATE_LIMIT_BURST": "3",
        "LEVY_AUTH_FAILURE_LIMIT_PER_MINUTE": "3"})
    try:
        yield srv
    finally:
        assert srv.stop() == 0, srv.log()


def test_rest_rate_limit_headers_and_429(limited: LevyServer) -> None:
    tenant = create_tenant(limited.database_url)
    with httpx.Client(base_url=limited.http_url, headers={"X-API-Key": tenant.key}) as c:
        remaining = []
        for _ in range(3):
            r = c.get(TAX_CODES, params={"limit": 1})
            assert r.status_code == 200
            assert r.headers["x-ratelimit-limit"] == "3"
            remaining.append(int(r.headers["x-ratelimit-remaining"]))
        assert remaining == [2, 1, 0]
        r = c.get(TAX_CODES, params={"limit": 1})
        assert r.status_code == 429
        assert r.headers["x-ratelimit-limit"] == "3" and r.headers["x-ratelimit-remaining"] == "0"
        assert 1 <= int(r.headers["retry-after"]) <= 5
        err = r.json()["errors"][0]
        assert (err["status"], err["code"], err["title"]) == ("429", "rate_limit_error", "Too Many Requests")
        # The calculation endpoint's own 429 shape: {"detail": "<string>"}.
        r = c.post("/calculations", json={})
        assert r.status_code == 429 and isinstance(r.json()["detail"], str) and "retry-after" in r.headers
    # Another key has its own bucket.
    other = create_tenant(limited.database_url)
    r = httpx.get(limited.http_url + TAX_CODES, headers={"X-API-Key": other.key})
    assert r.status_code == 200 and r.headers["x-ratelimit-remaining"] == "2"


def test_grpc_rate_limit_trailers_and_resource_exhausted(limited: LevyServer) -> None:
    tenant = create_tenant(limited.database_url)
    with grpc.insecure_channel(limited.grpc_target) as ch:
        stub = reference_pb2_grpc.ReferenceServiceStub(ch)
        req = reference_pb2.ListProductTaxCodesRequest(limit=1)
        for expected in ("2", "1", "0"):
            _, call = stub.ListProductTaxCodes.with_call(req, metadata=md(tenant.key))
            trailers = dict(call.trailing_metadata())
            assert trailers["x-ratelimit-limit"] == "3" and trailers["x-ratelimit-remaining"] == expected
        err = call_error(stub.ListProductTaxCodes, req, md(tenant.key))
        assert err.code == grpc.StatusCode.RESOURCE_EXHAUSTED and err.reason == "rate_limit_error"
        assert err.retry_after is not None and err.retry_after >= 1
        assert err.trailers["retry-after"] == str(err.retry_after)
        assert err.trailers["x-ratelimit-remaining"] == "0" and err.trailers["x-ratelimit-limit"] == "3"


def test_failed_authentication_is_rate_limited_per_address(limited: LevyServer) -> None:
    tenant = create_tenant(limited.database_url)
    with httpx.Client(base_url=limited.http_url) as c:
        codes = [c.get(TAX_CODES, headers={"X-API-Key": f"lvy_test_wrong{i}"}).status_code for i in range(3)]
        assert codes == [401, 401, 401]
        r = c.get(TAX_CODES, headers={"X-API-Key": "lvy_test_wrong"})
        assert r.status_code == 429 and r.json()["errors"][0]["code"] == "rate_limit_error"
        assert int(r.headers["retry-after"]) >= 1
        # While blocked, the address is refused before any key is checked: even a valid one.
        r = c.get(TAX_CODES, headers={"X-API-Key": tenant.key})
        assert r.status_code == 429
    with grpc.insecure_channel(limited.grpc_target) as ch:
        stub = reference_pb2_grpc.ReferenceServiceStub(ch)
        err = call_error(stub.ListProductTaxCodes, reference_pb2.ListProductTaxCodesRequest(limit=1), md(tenant.key))
        assert err.code == grpc.StatusCode.RESOURCE_EXHAUSTED and err.retry_after and err.retry_after >= 1


def test_rate_limit_holds_across_two_replicas_on_one_redis(tmp_path, database_url) -> None:  # type: ignore[no-untyped-def]
    redis_url = os.environ.get(REDIS_ENV)
    if not redis_url:
        if os.environ.get("LEVY_TEST_REQUIRE_SERVICES"):
            pytest.fail(f"{REDIS_ENV} is not set but LEVY_TEST_REQUIRE_SERVICES is")
        pytest.skip(f"the shared rate limit needs Redis: set {REDIS_ENV} (for example redis://127.0.0.1:6379/0)")
    env = {"LEVY_REDIS_URL": redis_url, "LEVY_RATE_LIMIT_PER_SECOND": "0.05", "LEVY_RATE_LIMIT_BURST": "5"}
    a = start_server(database_url, tmp_path, extra_env=env)
    b = start_server(database_url, tmp_path, extra_env=env)
    try:
        tenant = create_tenant(database_url)
        statuses = []
        for i in range(12):
            srv = a if i % 2 == 0 else b
            r = httpx.get(srv.http_url + TAX_CODES, params={"limit": 1}, headers={"X-API-Key": tenant.key})
            statuses.append((r.status_code, r.headers["x-ratelimit-remaining"]))
        assert [s for s, _ in statuses].count(200) == 5, statuses  # the burst, not twice it
        assert [rem for s, rem in statuses if s == 200] == ["4", "3", "2", "1", "0"]
        assert all(s == 429 for s, _ in statuses[5:])
        # gRPC on either replica sees the same exhausted bucket.
        with grpc.insecure_channel(b.grpc_target) as ch:
            err = call_error(reference_pb2_grpc.ReferenceServiceStub(ch).ListProductTaxCodes,
                             reference_pb2.ListProductTaxCodesRequest(limit=1), md(tenant.key))
            assert err.code == grpc.StatusCode.RESOURCE_EXHAUSTED
    finally:
        assert a.stop() == 0, a.log()
        assert b.stop() == 0, b.log()


def _metric(text: str, name: str, **labels: str) -> float:
    total = 0.0
    for line in text.splitlines():
        if not line.startswith(name + "{") and not line.startswith(name + " "):
            continue
        if all(f'{k}="{v}"' in line for k, v in labels.items()):
            total += float(line.rsplit(" ", 1)[1])
    return total


def test_metrics_count_rest_and_grpc_requests(limited: LevyServer) -> None:
    tenant = create_tenant(limited.database_url)
    rpc = "levy.v1.ReferenceService.ListProductTaxCodes"
    assert httpx.get(limited.http_url + TAX_CODES, headers={"X-API-Key": tenant.key}).status_code == 200
    with grpc.insecure_channel(limited.grpc_target) as ch:
        stub = reference_pb2_grpc.ReferenceServiceStub(ch)
        stub.ListProductTaxCodes(reference_pb2.ListProductTaxCodesRequest(limit=1), metadata=md(tenant.key))
        for _ in range(3):  # the 4th of the burst of 3 is a 429
            try:
                stub.ListProductTaxCodes(reference_pb2.ListProductTaxCodesRequest(limit=1), metadata=md(tenant.key))
            except grpc.RpcError:
                pass
    r = httpx.get(limited.http_url + "/metrics")
    assert r.status_code == 200 and r.headers["content-type"].startswith("text/plain")
    text = r.text
    assert _metric(text, "levy_requests_total", transport="rest", method=rpc, status="200") == 1
    assert _metric(text, "levy_requests_total", transport="grpc", method=rpc, status="OK") == 2
    assert _metric(text, "levy_requests_total", transport="grpc", method=rpc, status="RESOURCE_EXHAUSTED") == 2
    assert _metric(text, "levy_rate_limited_total", kind="api_key") == 2
    assert _metric(text, "levy_request_duration_seconds_count", transport="rest", method=rpc) == 1
    assert "levy_requests_in_flight" in text and "levy_db_pool_checked_out" in text


def test_logs_are_json_with_the_request_id_of_a_failing_request(limited: LevyServer) -> None:
    r = httpx.get(limited.http_url + TAX_CODES, headers={"X-API-Key": "lvy_test_nope"})
    assert r.status_code == 401
    request_id = r.headers["x-request-id"]
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline and request_id not in limited.log():
        time.sleep(0.05)
    records = [json.loads(line) for line in limited.log().splitlines() if line.startswith("{")]
    assert records and all({"time", "level", "logger", "message"} <= set(rec) for rec in records)
    mine = [rec for rec in records if rec.get("request_id") == request_id]
    assert len(mine) == 1
    assert mine[0]["logger"] == "levy.access" and mine[0]["level"] == "INFO"
    assert mine[0]["status"] == 401 and mine[0]["method"] == "levy.v1.ReferenceService.ListProductTaxCodes"
    assert isinstance(mine[0]["duration_ms"], float)


def test_two_workers_share_the_ports_and_sigterm_drains_all(tmp_path, database_url) -> None:  # type: ignore[no-untyped-def]
    srv = start_server(database_url, tmp_path, args=["--workers", "2"])
    try:
        tenant = create_tenant(database_url)
        pids = set()
        deadline = time.monotonic() + 20
        while len(pids) < 2 and time.monotonic() < deadline:
            with httpx.Client() as c:  # a new connection each time: the kernel picks a worker
                pids.add(c.get(srv.http_url + "/healthz").headers["x-levy-worker"])
        assert len(pids) == 2 and str(srv.proc.pid) not in pids
        for _ in range(4):
            assert httpx.get(srv.http_url + TAX_CODES, headers={"X-API-Key": tenant.key}).status_code == 200
            with grpc.insecure_channel(srv.grpc_target) as ch:
                reference_pb2_grpc.ReferenceServiceStub(ch).ListProductTaxCodes(
                    reference_pb2.ListProductTaxCodesRequest(limit=1), metadata=md(tenant.key))
        # /metrics aggregates the workers (multiprocess mode): all 4 REST requests are counted.
        text = httpx.get(srv.http_url + "/metrics").text
        assert _metric(text, "levy_requests_total", transport="rest", status="200") == 4
        assert _metric(text, "levy_requests_total", transport="grpc", status="OK") == 4
    finally:
        code = srv.stop(signal.SIGTERM)
    assert code == 0, srv.log()
    for pid in pids:
        assert not os.path.exists(f"/proc/{pid}"), f"worker {pid} still running"
    assert "all workers stopped (exit 0)" in srv.log()
