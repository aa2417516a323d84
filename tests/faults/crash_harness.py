"""Crash-consistency harness: SIGKILL ``levy serve`` at random (seeded) moments
while clients write through it, restart it on the same database, let the
clients retry every unacknowledged request with its Idempotency-Key until it is
acknowledged, then check the database against what was acknowledged.

Adding an operation is one :class:`Workload`: ``make(n)`` builds its n-th
request (with a unique Idempotency-Key) and ``check(client, ops)`` verifies the
final state against the acknowledged responses.
"""

from __future__ import annotations

import queue
import random
import signal
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx

from levyserver import LevyServer, start_server

# Answers after which the client retries the same request with the same key:
# the server died (connection errors), was unavailable, or still holds the
# claim of a request that a killed process left behind (until the lock expires).
RETRY_STATUSES = {503}


@dataclass
class Op:
    """One logical write: sent (and resent) until it is acknowledged."""

    workload: str
    key: str  # Idempotency-Key
    method: str
    path: str
    body: Any
    ok_status: int
    meta: dict[str, Any] = field(default_factory=dict)
    attempts: int = 0
    acked: httpx.Response | None = None
    anomalies: list[str] = field(default_factory=list)


@dataclass
class Workload:
    name: str
    make: Callable[[int, random.Random], Op]
    check: Callable[[httpx.Client, list[Op]], None]


class Target:
    """The current server (its ports change on every restart)."""

    def __init__(self, server: LevyServer) -> None:
        self.server = server
        self.lock = threading.Lock()

    @property
    def url(self) -> str:
        with self.lock:
            return self.server.http_url


def _is_retry(r: httpx.Response) -> bool:
    if r.status_code in RETRY_STATUSES:
        return True
    if r.status_code == 409:
        try:
            return r.json()["errors"][0]["code"] == "idempotency_in_progress"
        except Exception:  # noqa: BLE001
            return False
    return False


def send_until_acked(target: Target, api_key: str, op: Op, deadline: list[float]) -> None:
    while time.monotonic() < deadline[0]:
        op.attempts += 1
        try:
            with httpx.Client(base_url=target.url, timeout=15) as c:
                r = c.request(op.method, op.path, json=op.body,
                              headers={"X-API-Key": api_key, "Idempotency-Key": op.key})
        except httpx.TransportError:
            time.sleep(0.2)  # the server is down or restarting
            continue
        if _is_retry(r):
            time.sleep(0.1)
            continue
        if r.status_code != op.ok_status:
            op.anomalies.append(f"{op.key}: {r.status_code} {r.text[:300]}")
            return
        op.acked = r
        return
    op.anomalies.append(f"{op.key}: not acknowledged before the deadline after {op.attempts} attempts")


@dataclass
class CrashReport:
    kills: list[float]  # seconds after start of each SIGKILL
    ops: list[Op]
    restarts: int


def run_crash_test(database_url: str, log_dir: Path, api_key: str, workloads: list[Workload], *, seed: int,
                   kills: int = 8, clients: int = 4, extra_env: dict[str, str] | None = None,
                   drain_seconds: float = 90) -> CrashReport:
    rng = random.Random(seed)
    env = {"LEVY_IDEMPOTENCY_LOCK_SECONDS": "2", **(extra_env or {})}
    target = Target(start_server(database_url, log_dir, extra_env=env))
    # No deadline while the kills go on (restarts are slow on a loaded machine); then
    # every started request gets ``drain_seconds`` to be acknowledged.
    deadline = [float("inf")]
    producing = threading.Event()
    producing.set()
    ops: list[Op] = []
    ops_lock = threading.Lock()
    counter = iter(range(10**9))

    def client(cid: int) -> None:
        crng = random.Random(seed * 1000 + cid)
        while producing.is_set():
            w = crng.choice(workloads)
            with ops_lock:
                op = w.make(next(counter), crng)
                ops.append(op)
            send_until_acked(target, api_key, op, deadline)

    threads = [threading.Thread(target=client, args=(i,), daemon=True) for i in range(clients)]
    started = time.monotonic()
    for t in threads:
        t.start()
    kill_times: list[float] = []
    try:
        for _ in range(kills):
            time.sleep(rng.uniform(0.05, 0.8))  # a random moment of the traffic
            target.server.proc.send_signal(signal.SIGKILL)
            target.server.proc.wait(timeout=30)
            kill_times.append(round(time.monotonic() - started, 3))
            fresh = start_server(database_url, log_dir, extra_env=env)
            with target.lock:
                target.server = fresh
        time.sleep(0.5)  # some traffic on the last server before stopping
    finally:
        producing.clear()
        deadline[0] = time.monotonic() + drain_seconds
        for t in threads:
            t.join(timeout=drain_seconds + 30)
    report = CrashReport(kill_times, ops, kills)
    try:
        _check(target, api_key, workloads, report)
    finally:
        assert target.server.stop() == 0, target.server.log()[-3000:]
    return report


def _check(target: Target, api_key: str, workloads: list[Workload], report: CrashReport) -> None:
    anomalies = [a for op in report.ops for a in op.anomalies]
    assert not anomalies, anomalies[:10]
    assert all(op.acked is not None for op in report.ops)
    with httpx.Client(base_url=target.url, headers={"X-API-Key": api_key}, timeout=30) as c:
        # A retry after the acknowledgement replays the very same response.
        for op in report.ops:
            again = c.request(op.method, op.path, json=op.body, headers={"Idempotency-Key": op.key})
            assert op.acked is not None
            assert (again.status_code, again.json()) == (op.acked.status_code, op.acked.json()), op.key
            assert again.headers.get("idempotent-replayed") == "true", op.key
        for w in workloads:
            w.check(c, [op for op in report.ops if op.workload == w.name])


def list_all(c: httpx.Client, path: str) -> list[dict[str, Any]]:
    """Every row of a list endpoint, following ``starting_after``."""
    out: list[dict[str, Any]] = []
    params: dict[str, Any] = {"limit": 1000}
    while True:
        r = c.get(path, params=params)
        assert r.status_code == 200, r.text
        body = r.json()
        out.extend(body["data"])
        if not body["has_more"]:
            return out
        params["starting_after"] = body["data"][-1]["id"]
