"""Where a finalized transaction's server CPU goes beyond its calculation (issue 20).

``python -m bench.write_floor [--postgres URL] [--requests N] [--rounds R]``

The ``write_path`` scenario of ``python -m bench`` reports server CPU per request of a finalized
10-line transaction against the same 10-line calculation (target: at most 1.5 x). This tool takes
the transaction apart in one process, without HTTP and without a load generator: the REST gateway
(``levy.transport.gateway.Gateway``) is called in a loop with the bench's two request bodies, on a
database prepared as the bench prepares it (``levy migrate``, the ZIP rate files imported, the
bench's catalogue), and each variant below runs ``--requests`` times per round, alternating, for
``--rounds`` rounds (the median is printed). CPU is ``time.process_time`` (every thread: aiosqlite's
included) and ``time.thread_time`` of the event loop's thread.

The variants replace only the store's write of the new sale
(``levy.store.transactions.insert_transaction_committed``, as ``levy.app.transactions.create``
calls it); everything else the request does runs as in ``levy serve``:

- ``calculation``: ``POST /calculations``.
- ``not stored``: the write returns at once (the transaction's checks, record, message and echo).
- ``rows built``: the rows built and turned into the driver's parameters as the store does, not sent.
- ``rows, idle 1 ms``: the rows built, then ``asyncio.sleep(0.0001)`` (the loop waits about 1 ms
  with nothing to run): what going idle once in the middle of a request costs the process.
- ``rows, pool checkout``: the rows built, a connection taken from the pool and given back, unused.
- ``rows, bare trip``: the rows built, then one trip to the database that does nothing (SQLite:
  ``SELECT 1`` on aiosqlite's thread; PostgreSQL: ``SELECT 1``), the connection from the pool.
- ``stored``: the real write (the bench's figure, without HTTP).

It measures; it asserts nothing (docs/performance.md, "Where the CPU ratio's floor is").
"""

from __future__ import annotations

import argparse
import asyncio
import shutil
import statistics
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]


def _parser() -> argparse.ArgumentParser:
    from bench.__main__ import DEFAULT_RATES

    ap = argparse.ArgumentParser(prog="python -m bench.write_floor", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--postgres", metavar="URL",
                    help="Run on a fresh database created on this PostgreSQL server (dropped afterwards) "
                         "instead of a SQLite file.")
    ap.add_argument("--requests", type=int, default=1000, help="Requests per variant and round (default 1000).")
    ap.add_argument("--rounds", type=int, default=3, help="Rounds (default 3); the median is printed.")
    ap.add_argument("--rates", metavar="DIR", default=str(DEFAULT_RATES), help="The per-ZIP rate files.")
    return ap


Write = Callable[..., Awaitable[str | None]]  # (engine, record, extra rows: its events)


def _variants(engine: Any, real: Write) -> dict[str, Write]:
    """The store's write of a new sale, whole or in part (see the module's docstring)."""
    from levy.store import rows as store_rows
    from levy.store import transactions as store

    dialect = engine.dialect

    def build_rows(rec: Any, extra: Any) -> None:
        unless, row, children = store._insert_parts(rec, extra)
        # The parameters as levy.store.rows.insert_committed builds them for the driver.
        if dialect.name == "postgresql":
            store_rows._pg_tree_args(dialect, store.txn_t, row, unless, children)
        else:
            store_rows._sqlite_plans(dialect, store.txn_t, row, unless, children)

    async def not_stored(_engine: Any, rec: Any, extra: Any = ()) -> None:
        return None

    async def rows_built(_engine: Any, rec: Any, extra: Any = ()) -> None:
        build_rows(rec, extra)

    async def rows_idle(_engine: Any, rec: Any, extra: Any = ()) -> None:
        build_rows(rec, extra)
        await asyncio.sleep(0.0001)

    async def rows_checkout(_engine: Any, rec: Any, extra: Any = ()) -> None:
        build_rows(rec, extra)
        raw = await engine.raw_connection()
        raw.close()

    async def rows_trip(_engine: Any, rec: Any, extra: Any = ()) -> None:
        build_rows(rec, extra)
        raw = await engine.raw_connection()
        try:
            driver = raw.driver_connection
            if dialect.name == "postgresql":
                await driver.fetchval("SELECT 1")
            else:
                await driver.execute("SELECT 1")
        finally:
            raw.close()

    return {"not stored": not_stored, "rows built": rows_built, "rows, idle 1 ms": rows_idle,
            "rows, pool checkout": rows_checkout, "rows, bare trip": rows_trip, "stored": real}


async def _measure(db: str, key: str, calc: bytes, txn: bytes, requests: int, rounds: int) -> dict[str, list[tuple[float, float]]]:
    from sqlalchemy import text

    from levy.app import transactions as app_transactions
    from levy.app.bootstrap import build
    from levy.config import Config
    from levy.transport.gateway import Gateway

    config = Config.from_env(database_url=db, rate_limit_per_second=0)
    app = await build(config, migrate_db=False, background=False)
    gateway = Gateway(app.pipeline, config)
    real = app_transactions.store.insert_transaction_committed

    async def call(path: str, body: bytes) -> None:
        scope = {"type": "http", "method": "POST", "path": path, "query_string": b"", "client": ("127.0.0.1", 1),
                 "headers": [(b"x-api-key", key.encode()), (b"content-type", b"application/json"),
                             (b"content-length", str(len(body)).encode())]}
        sent: list[dict[str, Any]] = []

        async def receive() -> dict[str, Any]:
            return {"type": "http.request", "body": body, "more_body": False}

        async def send(message: dict[str, Any]) -> None:
            sent.append(message)

        await gateway(scope, receive, send)
        if sent[0]["status"] not in (200, 201):
            raise RuntimeError(f"POST {path} answered {sent[0]['status']}: {sent[1]['body'][:300]!r}")

    engine = app.services.engine
    variants = _variants(engine, real)

    async def stored() -> int:
        async with engine.connect() as conn:
            return int((await conn.execute(text("SELECT count(*) FROM transactions"))).scalar_one())

    out: dict[str, list[tuple[float, float]]] = {}
    try:
        for path, body in (("/calculations", calc), ("/transactions", txn)):
            for _ in range(100):  # warm-up: caches, prepared statements, the renderers
                await call(path, body)
        for _ in range(rounds):
            for name, write in (("calculation", None), *variants.items()):
                if write is not None:
                    app_transactions.store.insert_transaction_committed = write
                path, body = ("/calculations", calc) if write is None else ("/transactions", txn)
                before = await stored()
                cpu0, loop0 = time.process_time(), time.thread_time()
                for _ in range(requests):
                    await call(path, body)
                out.setdefault(name, []).append(((time.process_time() - cpu0) / requests * 1000,
                                                 (time.thread_time() - loop0) / requests * 1000))
                # Only the real write stores anything: the variants replaced what they say, nothing else.
                added = await stored() - before
                if added != (requests if name == "stored" else 0):
                    raise RuntimeError(f"{name}: {added} transactions stored by {requests} requests")
    finally:
        app_transactions.store.insert_transaction_committed = real
        await app.close()
    return out


def main(argv: list[str] | None = None) -> int:
    sys.path.insert(0, str(ROOT / "src"))
    import orjson

    from bench import seed
    from bench.__main__ import _pg, scratch_database
    from bench.harness import EVENT_LOOP, levy
    from levy import eventloop

    args = _parser().parse_args(argv)
    workdir = Path(tempfile.mkdtemp(prefix="levy-write-floor-"))
    db, dropdb = scratch_database(args.postgres, f"sqlite+aiosqlite:///{workdir}/floor.db")
    try:
        levy(db, "migrate")
        levy(db, "rates", "import", args.rates, "--no-progress")
        tenant = seed.new_tenant(db)
        product_id = seed.seed_catalogue(db, tenant)
        calc = seed.calc_json(product_id, 10)
        txn = dict(calc, type="sale", status="finalized")  # no reference id: every request stores a new sale
        figures = eventloop.run(_measure(db, tenant.key, orjson.dumps(calc), orjson.dumps(txn),
                                         args.requests, args.rounds), EVENT_LOOP)
    finally:
        if dropdb is not None:
            asyncio.run(_pg(*dropdb))
        shutil.rmtree(workdir, ignore_errors=True)
    dialect = "PostgreSQL" if args.postgres else "SQLite"
    print(f"{dialect}, {eventloop.name(EVENT_LOOP)}: ms of CPU per request, median of {args.rounds} rounds of "
          f"{args.requests} (in process, no HTTP)\n")
    print("| variant | process | event loop's thread | other threads | process / calculation |")
    print("|---|---:|---:|---:|---:|")
    calc_ms = statistics.median(p for p, _ in figures["calculation"])
    for name, runs in figures.items():
        p = statistics.median(r[0] for r in runs)
        t = statistics.median(r[1] for r in runs)
        print(f"| {name} | {p:.3f} | {t:.3f} | {max(p - t, 0.0):.3f} | {p / calc_ms:.2f} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
