"""Graceful shutdown: SIGTERM turns health NOT_SERVING and /healthz 503,
refuses new requests, lets in-flight ones finish, and exits 0."""

from __future__ import annotations

import signal
import threading
import time

import grpc
import httpx
from grpc_health.v1 import health_pb2, health_pb2_grpc

from levyserver import create_tenant, start_server


def test_sigterm_drains_and_exits_zero(tmp_path, database_url) -> None:  # type: ignore[no-untyped-def]
    srv = start_server(database_url, tmp_path, extra_env={"LEVY_SHUTDOWN_DRAIN_SECONDS": "2",
                                                          "LEVY_SHUTDOWN_GRACE_SECONDS": "5"})
    tenant = create_tenant(database_url)
    results: list[int | str] = []
    stop = threading.Event()

    def hammer() -> None:
        with httpx.Client(base_url=srv.http_url, headers={"X-API-Key": tenant.key}, timeout=10) as c:
            while not stop.is_set():
                try:
                    r = c.get("/product-tax-codes", params={"limit": 1000})
                    results.append(r.status_code)
                    if r.status_code == 200:
                        assert len(r.json()["data"]) > 80  # a complete body
                except (httpx.ConnectError, httpx.ReadError):
                    # Connection refused, or reset before a response: the server closed a
                    # connection whose request it had not read (GETs carry no body, so a
                    # reset cannot cut a response short; a cut body is "incomplete" below).
                    results.append("refused")
                except httpx.RemoteProtocolError as e:
                    # A request sent on a connection the server had already closed was never
                    # read: a refusal. A response cut short would say "incomplete message body".
                    results.append("refused" if "without sending a response" in str(e) else f"error:{e}")
                except httpx.HTTPError as e:  # a reset mid-response would land here
                    results.append(f"error:{type(e).__name__}")

    threads = [threading.Thread(target=hammer) for _ in range(4)]
    for t in threads:
        t.start()
    time.sleep(0.5)
    channel = grpc.insecure_channel(srv.grpc_target)
    health = health_pb2_grpc.HealthStub(channel)
    assert health.Check(health_pb2.HealthCheckRequest()).status == health_pb2.HealthCheckResponse.SERVING
    srv.proc.send_signal(signal.SIGTERM)
    time.sleep(0.5)
    # During the drain window: NOT_SERVING, /healthz 503, API requests refused with 503.
    assert health.Check(health_pb2.HealthCheckRequest()).status == health_pb2.HealthCheckResponse.NOT_SERVING
    with httpx.Client(base_url=srv.http_url, headers={"X-API-Key": tenant.key}) as c:
        assert c.get("/healthz").status_code == 503
        r = c.get("/product-tax-codes")
        assert r.status_code == 503 and r.json()["errors"][0]["code"] == "service_unavailable"
    code = srv.proc.wait(timeout=20)
    stop.set()
    for t in threads:
        t.join()
    channel.close()
    assert code == 0, srv.log()
    assert results.count(200) > 0
    assert 503 in results
    assert not [r for r in results if isinstance(r, str) and r.startswith("error")], results
    assert "levy: stopped" in srv.log()
