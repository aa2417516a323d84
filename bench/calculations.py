"""Benchmark of POST /calculations over gRPC (``python -m bench.calculations``).

Starts ``levy serve`` on a fresh SQLite database with the 52 per-ZIP files of
``/work/shared/data/rates/zip5-2026-03`` imported (timed), and a bare
``grpc.aio`` server with one empty unary method. The same client (2 processes,
fixed request count, a fixed number of calls in flight per process) measures
both in the same run: a 3-line calculation with product and customer presets
and ZIP addresses, next to the empty method. Then a 100-line calculation's
latency at concurrency 1. Prints a Markdown table.

Options: ``--requests N`` per client process (default 2000), ``--in-flight K``
per process (default 8), ``--rates DIR``.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import multiprocessing as mp
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import UTC, date, datetime
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
EMPTY_METHOD = "/bench.Empty/Call"


def _port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("LEVY_")}
    env["PYTHONPATH"] = str(ROOT / "src")
    return env


def _levy(db: str, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "levy", *args, "--database-url", db], env=_env(), cwd=ROOT,
                          capture_output=True, text=True, check=True)


# ------------------------------------------------------------------ the empty grpc.aio server


def _empty_server(port: int, ready: Any) -> None:
    import grpc

    async def main() -> None:
        server = grpc.aio.server()

        async def call(request: bytes, context: Any) -> bytes:
            return b""

        handler = grpc.method_handlers_generic_handler(
            "bench.Empty", {"Call": grpc.unary_unary_rpc_method_handler(call)}
        )
        server.add_generic_rpc_handlers((handler,))
        server.add_insecure_port(f"127.0.0.1:{port}")
        await server.start()
        ready.set()
        await server.wait_for_termination()

    asyncio.run(main())


# ------------------------------------------------------------------ data


def _seed(db: str) -> tuple[str, str, str]:
    """An organization registered in TX, CA, NY with a product and a customer: (key, product id, customer source id)."""
    key = _levy(db, "keys", "create", "--name", "bench").stdout.strip().splitlines()[-1]

    async def go() -> tuple[str, str]:
        from sqlalchemy import insert, select

        from levy.domain.ids import new_id
        from levy.store.db import create_engine
        from levy.store.tables.areas import customers, products, registrations
        from levy.store.tables.foundation import organizations

        engine = create_engine(db, pool_size=1)
        now = datetime.now(UTC)
        async with engine.begin() as conn:
            org = (await conn.execute(select(organizations.c.id))).scalar_one()
            for st in ("TX", "CA", "NY"):
                await conn.execute(insert(registrations).values(
                    id=new_id("reg"), organization_id=org, jurisdiction=f"US-ST-{st}",
                    effective_from=date(2000, 1, 1), created_at=now))
            pid = new_id("prd")
            await conn.execute(insert(products).values(
                id=pid, organization_id=org, source="native", source_account_id="__default__", source_id=pid,
                name="SaaS seat", tax_codes=json.dumps(["SOFTWARE.SAAS.GENERAL"]), marked_sales_tax=False,
                created_at=now, updated_at=now))
            await conn.execute(insert(customers).values(
                id=new_id("cust"), organization_id=org, source="native", source_account_id="__default__",
                source_id="bench-buyer", created_at=now, updated_at=now, override_exempt=False,
                override_resale=False, override_manufacturing=False))
        await engine.dispose()
        return pid, "bench-buyer"

    pid, cust = asyncio.run(go())
    return key, pid, cust


def _request(product_id: str, customer: str, n: int) -> Any:
    from levy.v1 import calculations_pb2 as pb

    places = [("TX", "75001"), ("CA", "90001"), ("NY", "10001")]
    req = pb.CreateCalculationRequest(currency="USD", discount_amount="100")
    req.transaction_date.FromDatetime(datetime(2026, 3, 15, tzinfo=UTC))
    for i in range(n):
        st, z = places[i % 3]
        li = req.line_items.add(id=f"l{i}", quantity="2", unit_price=str(1999 + i))
        li.product.preset.id = product_id
        li.customer.address.state = st
        li.customer.address.postal_code = z
        li.customer.preset.id = customer
    return req


# ------------------------------------------------------------------ the client


def _client(target: str, kind: str, payload: bytes, key: str, requests: int, in_flight: int, out: Any) -> None:
    import grpc

    async def main() -> list[float]:
        async with grpc.aio.insecure_channel(target) as ch:
            if kind == "empty":
                method = ch.unary_unary(EMPTY_METHOD)
                meta: tuple[tuple[str, str], ...] = ()
            else:  # ``kind`` is "calc" or the full path of the method to call
                method = ch.unary_unary(kind if kind.startswith("/") else "/levy.v1.CalculationService/CreateCalculation")
                meta = (("x-api-key", key),)
            for _ in range(20):  # warm-up
                await method(payload, metadata=meta)
            lat: list[float] = []
            left = requests

            async def worker() -> None:
                nonlocal left
                while left > 0:
                    left -= 1
                    t0 = time.perf_counter()
                    await method(payload, metadata=meta)
                    lat.append(time.perf_counter() - t0)

            await asyncio.gather(*(worker() for _ in range(in_flight)))
            return lat

    t0 = time.perf_counter()
    lat = asyncio.run(main())
    out.put((time.perf_counter() - t0, lat))


def _measure(target: str, kind: str, payload: bytes, key: str, requests: int, in_flight: int,
             processes: int = 2) -> dict[str, float]:
    q: Any = mp.Queue()
    procs = [mp.Process(target=_client, args=(target, kind, payload, key, requests, in_flight, q))
             for _ in range(processes)]
    t0 = time.perf_counter()
    for p in procs:
        p.start()
    results = [q.get() for _ in procs]
    wall = time.perf_counter() - t0
    for p in procs:
        p.join()
    lat = sorted(x for _, xs in results for x in xs)
    return {
        "rps": len(lat) / max(r[0] for r in results) if results else 0.0,
        "wall": wall,
        "p50": statistics.median(lat) * 1000,
        "p99": lat[int(len(lat) * 0.99) - 1] * 1000,
    }


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--requests", type=int, default=2000, help="requests per client process (2 processes)")
    ap.add_argument("--in-flight", type=int, default=8, help="calls in flight per client process")
    ap.add_argument("--rates", default=str(Path(__file__).resolve().parents[1].parent / "shared/data/rates/zip5-2026-03"), help="directory of per-ZIP files")
    args = ap.parse_args(argv)
    sys.path.insert(0, str(ROOT / "src"))
    if not Path(args.rates).is_dir():
        print(f"rate files not found at {args.rates}", file=sys.stderr)
        return 2

    tmp = tempfile.mkdtemp(prefix="levy-bench-")
    db = f"sqlite+aiosqlite:///{tmp}/bench.db"
    _levy(db, "migrate")
    t0 = time.perf_counter()
    _levy(db, "rates", "import", args.rates, "--no-progress")
    import_seconds = time.perf_counter() - t0
    key, pid, cust = _seed(db)

    grpc_port, http_port, empty_port = _port(), _port(), _port()
    server = subprocess.Popen(
        [sys.executable, "-m", "levy", "--log-level", "warning", "serve", "--database-url", db,
         "--grpc-address", f"127.0.0.1:{grpc_port}", "--http-address", f"127.0.0.1:{http_port}"],
        env=_env(), cwd=ROOT, stdout=open(f"{tmp}/server.log", "w"), stderr=subprocess.STDOUT,
    )
    ready = mp.Event()
    empty = mp.Process(target=_empty_server, args=(empty_port, ready), daemon=True)
    empty.start()
    try:
        deadline = time.monotonic() + 60
        while "serving gRPC" not in Path(f"{tmp}/server.log").read_text():
            if server.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError("levy serve did not start:\n" + Path(f"{tmp}/server.log").read_text())
            time.sleep(0.1)
        ready.wait(30)
        target = f"127.0.0.1:{grpc_port}"
        three = _request(pid, cust, 3).SerializeToString()
        hundred = _request(pid, cust, 100).SerializeToString()
        empty_r = _measure(f"127.0.0.1:{empty_port}", "empty", b"", key, args.requests, args.in_flight)
        calc_r = _measure(target, "calc", three, key, args.requests, args.in_flight)
        big = _measure(target, "calc", hundred, key, 100, 1, processes=1)
    finally:
        server.terminate()
        server.wait(30)
        empty.terminate()

    ratio = calc_r["rps"] / empty_r["rps"] if empty_r["rps"] else 0.0
    print(f"2 client processes x {args.requests} requests, {args.in_flight} in flight each; "
          f"{os.cpu_count()} CPUs (shared)\n")
    print("| Measure | Requests/s | p50 ms | p99 ms |")
    print("|---|---:|---:|---:|")
    print(f"| empty grpc.aio unary method | {empty_r['rps']:.0f} | {empty_r['p50']:.2f} | {empty_r['p99']:.2f} |")
    print(f"| 3-line calculation (presets, ZIP rates) | {calc_r['rps']:.0f} | {calc_r['p50']:.2f} | {calc_r['p99']:.2f} |")
    print(f"| 100-line calculation, concurrency 1 | {big['rps']:.1f} | {big['p50']:.2f} | {big['p99']:.2f} |")
    print(f"\nCalculation / empty method throughput: **{ratio:.2f}** (target >= 0.7)")
    print(f"Import of the 52 ZIP files ({args.rates}): **{import_seconds:.2f} s** (SQLite, includes process start)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
