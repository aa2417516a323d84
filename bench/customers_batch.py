"""Benchmark of ``POST /customers/batch``: one batch of 1000 new customers, and
the same batch resent (every item matched, nothing changed), against a
``levy serve`` this script starts; plus the same 1000 rows written with one
raw SQLAlchemy Core bulk insert as the floor.

    python -m bench.customers_batch --database-url sqlite+aiosqlite:///./bench.db
    python -m bench.customers_batch --database-url postgresql+asyncpg://postgres@127.0.0.1:5432/bench

Reports the median of ``--runs`` runs (default 5) with min and max, in ms.
Each run uses a fresh organization, so runs do not see each other's rows.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from datetime import datetime, timezone
from pathlib import Path

import httpx
import orjson

ROOT = Path(__file__).resolve().parents[1]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _start_server(url: str, log: Path) -> tuple[subprocess.Popen[bytes], str]:
    http_port, grpc_port = _free_port(), _free_port()
    env = {k: v for k, v in os.environ.items() if not k.startswith("LEVY_")}
    env["PYTHONPATH"] = str(ROOT / "src") + os.pathsep + env.get("PYTHONPATH", "")
    proc = subprocess.Popen(
        [sys.executable, "-m", "levy", "serve", "--database-url", url, "--grpc-address", f"127.0.0.1:{grpc_port}",
         "--http-address", f"127.0.0.1:{http_port}"],
        env=env, stdout=log.open("wb"), stderr=subprocess.STDOUT, cwd=str(ROOT),
    )
    base = f"http://127.0.0.1:{http_port}"
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise SystemExit(f"levy serve exited:\n{log.read_text()}")
        try:
            if httpx.get(base + "/healthz", timeout=1).status_code == 200:
                return proc, base
        except httpx.HTTPError:
            pass
        time.sleep(0.1)
    proc.kill()
    raise SystemExit("levy serve did not start")


async def _new_tenant(url: str) -> tuple[str, str]:
    from levy.store.db import create_engine, transaction
    from levy.store.keys import SqlApiKeys, SqlOrganizations

    engine = create_engine(url, pool_size=1)
    try:
        async with transaction(engine, write=True) as conn:
            org = await SqlOrganizations(conn).create(f"bench {uuid.uuid4().hex[:6]}")
            _, secret = await SqlApiKeys(conn).create(org.id, "bench", False)
    finally:
        await engine.dispose()
    return org.id, secret


def _items(n: int) -> list[dict[str, object]]:
    tag = uuid.uuid4().hex[:8]
    return [
        {"source_id": f"bench-{tag}-{i}", "name": f"Customer {i}", "email": f"c{i}@example.com",
         "source_updated_at": "2026-01-01T00:00:00Z"}
        for i in range(n)
    ]


async def _raw_insert(url: str, org: str, items: list[dict[str, object]]) -> float:
    """The floor: the same rows in one Core ``INSERT`` executemany, one transaction."""
    from sqlalchemy import insert

    from levy.domain.ids import new_id
    from levy.store.db import create_engine, transaction
    from levy.store.tables.areas import customers

    engine = create_engine(url, pool_size=1)
    try:
        async with transaction(engine, write=True) as conn:  # warm the connection
            pass
        now = datetime.now(timezone.utc)
        start = time.perf_counter()
        rows = [
            {"id": new_id("cust"), "organization_id": org, "source": "native", "source_account_id": "__default__",
             "source_id": it["source_id"], "name": it["name"], "email": it["email"],
             "source_updated_at": datetime(2026, 1, 1, tzinfo=timezone.utc), "merged_into_customer_id": None,
             "created_at": now, "updated_at": now, "deleted_at": None, "override_exempt": False,
             "override_resale": False, "override_manufacturing": False, "exemption_updated_at": None}
            for it in items
        ]
        async with transaction(engine, write=True) as conn:
            await conn.execute(insert(customers), rows)
        return (time.perf_counter() - start) * 1000
    finally:
        await engine.dispose()


def _fmt(name: str, values: list[float]) -> str:
    return (f"{name:<34} median {statistics.median(values):8.1f} ms   min {min(values):8.1f}   "
            f"max {max(values):8.1f}   (n={len(values)})")


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m bench.customers_batch", description=__doc__.split("\n\n")[0])
    p.add_argument("--database-url", required=True, metavar="URL", help="SQLAlchemy async URL of the database.")
    p.add_argument("--runs", type=int, default=5, help="Runs per measurement (default 5).")
    p.add_argument("--size", type=int, default=1000, help="Customers per batch (default 1000).")
    args = p.parse_args(argv)
    sys.path.insert(0, str(ROOT / "src"))

    with tempfile.TemporaryDirectory() as tmp:
        proc, base = _start_server(args.database_url, Path(tmp) / "levy.log")
        try:
            new_ms: list[float] = []
            resend_ms: list[float] = []
            raw_ms: list[float] = []
            for run in range(args.runs + 1):  # the first run warms up and is not counted
                org, key = asyncio.run(_new_tenant(args.database_url))
                body = orjson.dumps({"data": _items(args.size)})
                with httpx.Client(base_url=base, headers={"X-API-Key": key, "content-type": "application/json"},
                                  timeout=120) as c:
                    times = []
                    for expect in ("created", "updated"):
                        start = time.perf_counter()
                        r = c.post("/customers/batch", content=body)
                        times.append((time.perf_counter() - start) * 1000)
                        assert r.status_code == 200, r.text
                        assert r.json()["summary"][expect] == args.size, r.json()["summary"]
                raw_org, _ = asyncio.run(_new_tenant(args.database_url))
                raw = asyncio.run(_raw_insert(args.database_url, raw_org, _items(args.size)))
                if run:
                    new_ms.append(times[0])
                    resend_ms.append(times[1])
                    raw_ms.append(raw)
        finally:
            proc.terminate()
            proc.wait(30)
    backend = args.database_url.split(":", 1)[0]
    print(f"customers batch upsert, {args.size} items, {backend}")
    print(_fmt("new customers (HTTP round trip)", new_ms))
    print(_fmt("same batch resent", resend_ms))
    print(_fmt("raw Core bulk insert (floor)", raw_ms))
    return 0


if __name__ == "__main__":
    sys.exit(main())
