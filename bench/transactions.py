"""Benchmark: creation rate of finalized 10-line transactions over gRPC
(``python -m bench.transactions --database-url URL``).

Migrates the database (default: a fresh SQLite file; for PostgreSQL pass an
EMPTY database, e.g. ``createdb levy_bench`` then
``--database-url postgresql+asyncpg://postgres@127.0.0.1:5432/levy_bench``),
seeds one organization registered in TX, CA and NY with a product and a
customer, starts ``levy serve`` and sends ``CreateTransaction`` from 2 client
processes (fixed count, a fixed number of calls in flight per process). Every
request creates a new finalized sale of 10 lines (product and customer
presets, built-in rates), written with its lines and per-jurisdiction rows in
one database transaction. Prints a Markdown table.

Options: ``--requests N`` per client process (default 500), ``--in-flight K``
per process (default 4).
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from bench.calculations import ROOT, _env, _levy, _measure, _port, _seed

METHOD = "/levy.v1.TransactionService/CreateTransaction"


def _request(product_id: str, customer: str, n: int = 10) -> Any:
    from levy.v1 import transactions_pb2 as pb

    txn = pb.Transaction(type="sale", status="finalized", currency="USD", discount_amount="100")
    txn.transaction_date.FromDatetime(datetime(2026, 3, 15, tzinfo=UTC))
    for i in range(n):
        li = txn.line_items.add(id=f"l{i}", quantity="2", unit_price=str(1999 + i))
        li.product.preset.id = product_id
        li.customer.address.state = ("TX", "CA", "NY")[i % 3]
        li.customer.preset.id = customer
    return pb.CreateTransactionRequest(transaction=txn)


def _wait_ready(target: str, key: str) -> None:
    """Wait until the server answers an RPC (its worker processes bind after the first log line)."""
    import grpc

    from levy.v1 import transactions_pb2 as pb
    from levy.v1 import transactions_pb2_grpc as pbg

    deadline = time.monotonic() + 60
    with grpc.insecure_channel(target) as ch:
        stub = pbg.TransactionServiceStub(ch)
        while True:
            try:
                stub.ListTransactions(pb.ListTransactionsRequest(limit=1), metadata=(("x-api-key", key),), timeout=5)
                return
            except grpc.RpcError:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.2)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--database-url", default=None,
                    help="empty database to use (default: a fresh SQLite file in a temporary directory)")
    ap.add_argument("--requests", type=int, default=500, help="requests per client process (2 processes)")
    ap.add_argument("--in-flight", type=int, default=4, help="calls in flight per client process")
    args = ap.parse_args(argv)
    sys.path.insert(0, str(ROOT / "src"))
    tmp = tempfile.mkdtemp(prefix="levy-bench-txn-")
    db = args.database_url or f"sqlite+aiosqlite:///{tmp}/bench.db"
    _levy(db, "migrate")
    key, pid, cust = _seed(db)

    grpc_port, http_port = _port(), _port()
    log = Path(f"{tmp}/server.log")
    server = subprocess.Popen(
        [sys.executable, "-m", "levy", "--log-level", "warning", "serve", "--database-url", db,
         "--grpc-address", f"127.0.0.1:{grpc_port}", "--http-address", f"127.0.0.1:{http_port}"],
        # No per-key rate limit: the benchmark measures the service, not the limiter.
        env={**_env(), "LEVY_RATE_LIMIT_PER_SECOND": "0"}, cwd=ROOT, stdout=log.open("w"), stderr=subprocess.STDOUT,
    )
    try:
        deadline = time.monotonic() + 60
        while "serving gRPC" not in log.read_text():
            if server.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError("levy serve did not start:\n" + log.read_text())
            time.sleep(0.1)
        _wait_ready(f"127.0.0.1:{grpc_port}", key)
        payload = _request(pid, cust).SerializeToString()
        r = _measure(f"127.0.0.1:{grpc_port}", METHOD, payload, key, args.requests, args.in_flight)
    finally:
        server.terminate()
        server.wait(30)

    backend = "PostgreSQL" if db.startswith("postgresql") else "SQLite"
    print(f"{backend}; 2 client processes x {args.requests} requests, {args.in_flight} in flight each; "
          f"{os.cpu_count()} CPUs (shared)\n")
    print("| Measure | Requests/s | p50 ms | p99 ms |")
    print("|---|---:|---:|---:|")
    print(f"| create finalized 10-line transaction ({backend}) | {r['rps']:.0f} | {r['p50']:.2f} | {r['p99']:.2f} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
