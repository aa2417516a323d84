"""Webhook delivery throughput and lag (issue 35).

``python -m bench.webhooks [--events N] [--postgres URL] [--poll SECONDS]``

Starts ``levy serve`` (one worker, SQLite or ``--postgres``) and a receiver on loopback that
answers 200 at once, creates an endpoint for ``customer.created``, then creates ``N`` customers
from 8 threads and records, for each event, the time from the create's answer to its arrival at
the receiver (the lag: commit, the worker's poll, dispatch, claim, signing, the POST). Prints
the lag's p50/p99/max and the throughput (events received per second from the first create to
the last arrival). Measures; asserts only that every event arrived once.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import sys
import tempfile
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import httpx

from bench.harness import levy_server


def _receiver(arrivals: dict[str, float], lock: threading.Lock) -> ThreadingHTTPServer:
    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:  # noqa: N802
            body = self.rfile.read(int(self.headers.get("content-length", "0")))
            now = time.monotonic()
            event = json.loads(body)
            with lock:
                arrivals.setdefault(event["object_id"], now)
                arrivals[f"count:{event['object_id']}"] = arrivals.get(f"count:{event['object_id']}", 0) + 1
            self.send_response(200)
            self.end_headers()

        def log_message(self, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler, bind_and_activate=False)
    server.request_queue_size = 128
    server.server_bind()
    server.server_activate()
    return server


async def _tenant(db: str) -> tuple[str, str]:
    from levy.store import migrate
    from levy.store.db import create_engine, transaction
    from levy.store.keys import SqlApiKeys, SqlOrganizations

    engine = create_engine(db, pool_size=1)
    try:
        await migrate.upgrade(engine)
        async with transaction(engine, write=True) as conn:
            org = await SqlOrganizations(conn).create("bench webhooks")
            _, secret = await SqlApiKeys(conn).create(org.id, "admin", True)
    finally:
        await engine.dispose()
    return org.id, secret


def run(events: int, db: str, workdir: Path, poll: float) -> dict[str, float]:
    _, key = asyncio.run(_tenant(db))
    arrivals: dict[str, float] = {}
    lock = threading.Lock()
    rx = _receiver(arrivals, lock)
    threading.Thread(target=rx.serve_forever, daemon=True).start()
    env = {"LEVY_WEBHOOK_ALLOW_HTTP": "true", "LEVY_WEBHOOK_ALLOW_PRIVATE": "true",
           "LEVY_WEBHOOK_POLL_SECONDS": str(poll)}
    with levy_server(db, workdir, env=env, name="webhooks") as srv, \
            httpx.Client(base_url=f"http://{srv.http}", headers={"X-API-Key": key}, timeout=60) as http:
        r = http.post("/webhook-endpoints", json={"url": f"http://127.0.0.1:{rx.server_address[1]}/",
                                                  "enabled_events": ["customer.created"]})
        r.raise_for_status()
        answered: dict[str, float] = {}

        def create(i: int) -> None:
            resp = http.post("/customers", json={"source_id": f"bench-{i}"})
            resp.raise_for_status()
            answered[resp.json()["id"]] = time.monotonic()

        start = time.monotonic()
        with ThreadPoolExecutor(8) as pool:
            list(pool.map(create, range(events)))
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            with lock:
                if all(cid in arrivals for cid in answered):
                    break
            time.sleep(0.01)
        time.sleep(0.5)
    rx.shutdown()
    missing = [cid for cid in answered if cid not in arrivals]
    twice = [cid for cid in answered if arrivals.get(f"count:{cid}", 0) > 1]
    if missing:
        raise SystemExit(f"{len(missing)} of {events} events did not arrive")
    lags = sorted((arrivals[cid] - t) * 1000 for cid, t in answered.items())
    last = max(arrivals[cid] for cid in answered)
    return {"events": events, "lag_p50_ms": statistics.median(lags), "lag_p99_ms": lags[int(0.99 * (len(lags) - 1))],
            "lag_max_ms": lags[-1], "events_per_second": events / (last - start), "delivered_twice": len(twice)}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m bench.webhooks", description=__doc__.split("\n\n")[0])
    ap.add_argument("--events", type=int, default=500)
    ap.add_argument("--postgres", metavar="URL", help="a PostgreSQL database (default: a new SQLite file)")
    ap.add_argument("--poll", type=float, default=1.0, help="LEVY_WEBHOOK_POLL_SECONDS (default 1, the default)")
    args = ap.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        db = args.postgres or f"sqlite+aiosqlite:///{tmp}/levy.db"
        out = run(args.events, db, Path(tmp), args.poll)
    print(" | ".join(f"{k} {v:.1f}" if isinstance(v, float) else f"{k} {v}" for k, v in out.items()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
