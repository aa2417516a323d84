"""The transaction write path of issue 20, at the store.

- SQLite's one writer per process (``levy.store.db.WriterQueue``): concurrent write
  transactions on a real SQLite file take their turns one at a time, in the order they
  asked, without holding a pool connection while they wait, and every one commits; reads
  do not wait for a writer; a writer that gets no turn within the busy timeout fails as
  "database is locked" (503).
- The batched inserts (``levy.store.rows``, ``insert_transaction``): a transaction stored
  with one statement per table reads back equal to what was written, on SQLite and
  PostgreSQL, also when the driver's own ``executemany`` is not usable (the fallback); a
  taken ``reference_id`` yields the holder's id with no savepoint and leaves the
  transaction usable (PostgreSQL aborts a transaction on an error: ON CONFLICT raises none).
"""

from __future__ import annotations

import asyncio
import sqlite3
from dataclasses import replace
from datetime import UTC, datetime
from decimal import Decimal
from pathlib import Path

import pytest
from google.protobuf import json_format
from fresh_db import fresh_database_url  # noqa: F401 (fixture)
from levyserver import _create_tenant
from sqlalchemy import func, select, text

from levy.domain.ids import new_id
from levy.domain.tax.model import DiscountResult, LineResult, TaxRow
from levy.domain.transactions.records import StoredLine, TransactionRecord
from levy.domain.transactions.rules import TaxState
from levy.store import db, migrate, rows
from levy.store import transactions as store
from levy.store.db import (
    WriterQueue,
    create_engine,
    is_unavailable,
    transaction,
    writer_queue,
)
from levy.store.tables.transactions import (
    transaction_line_taxes,
    transaction_lines,
    transactions,
)
from levy.v1.transactions_pb2 import TransactionLineItem


def test_sqlite_writers_take_turns_first_come_first_served(tmp_path: Path) -> None:
    url = f"sqlite+aiosqlite:///{tmp_path}/w.db"
    writers = 16

    async def go() -> None:
        engine = create_engine(url, pool_size=writers + 2)
        try:
            async with transaction(engine, write=True) as conn:
                await conn.execute(text("CREATE TABLE turns (n INTEGER NOT NULL, seq INTEGER NOT NULL)"))
            inside = 0
            most_inside = 0
            order: list[int] = []
            first_in = asyncio.Event()
            let_go = asyncio.Event()

            async def writer(n: int) -> None:
                nonlocal inside, most_inside
                async with transaction(engine, write=True) as conn:
                    inside += 1
                    most_inside = max(most_inside, inside)
                    order.append(n)
                    if n == 0:
                        first_in.set()
                        await let_go.wait()
                    await conn.execute(text("INSERT INTO turns (n, seq) VALUES (:n, :seq)"),
                                       {"n": n, "seq": len(order)})
                    await asyncio.sleep(0.002)  # a chance for another writer to overlap (none may)
                    inside -= 1

            tasks = [asyncio.create_task(writer(0))]
            await first_in.wait()
            for n in range(1, writers):  # each one asks for its turn after the one before
                tasks.append(asyncio.create_task(writer(n)))
                await asyncio.sleep(0.005)
            # The 15 others wait in the process's queue, not in SQLite's busy handler: they hold
            # no connection, and a read goes ahead of them (WAL).
            assert engine.sync_engine.pool.checkedout() == 1
            async with transaction(engine, write=False) as conn:
                assert (await conn.execute(text("SELECT count(*) FROM turns"))).scalar() == 0
            let_go.set()
            await asyncio.gather(*tasks)
            assert order == list(range(writers))
            assert most_inside == 1
            async with transaction(engine, write=False) as conn:
                stored = (await conn.execute(text("SELECT n, seq FROM turns ORDER BY seq"))).all()
            assert [tuple(r) for r in stored] == [(n, n + 1) for n in range(writers)]  # all committed, in turn
        finally:
            await engine.dispose()

    asyncio.run(go())


def test_a_writer_without_a_turn_within_the_busy_timeout_is_told_the_database_is_locked(tmp_path: Path) -> None:
    url = f"sqlite+aiosqlite:///{tmp_path}/t.db"

    async def go() -> None:
        engine = create_engine(url, pool_size=2, busy_timeout=0.05)
        try:
            queue = writer_queue(engine)
            assert isinstance(queue, WriterQueue) and queue.timeout == 0.05
            async with transaction(engine, write=True):
                with pytest.raises(sqlite3.OperationalError, match="database is locked") as err:
                    async with transaction(engine, write=True):
                        pass  # pragma: no cover - never gets its turn
                assert is_unavailable(err.value)  # answered 503 / UNAVAILABLE
            async with transaction(engine, write=True):  # the turn was given back
                pass
        finally:
            await engine.dispose()
        # A busy timeout of 0: no waiting at all, as SQLite's own.
        engine = create_engine(url, pool_size=2, busy_timeout=0)
        try:
            async with transaction(engine, write=True):
                with pytest.raises(sqlite3.OperationalError, match="database is locked"):
                    async with transaction(engine, write=True):
                        pass  # pragma: no cover - never gets its turn
            async with transaction(engine, write=True):
                pass
        finally:
            await engine.dispose()

    asyncio.run(go())


def _line_input(data: dict) -> bytes:
    return json_format.ParseDict(data, TransactionLineItem()).SerializeToString(deterministic=True)


def _record(org: str, *, reference_id: str | None = None) -> TransactionRecord:
    now = datetime(2026, 3, 15, 10, 30, 0, 250000, tzinfo=UTC)

    def row(code: str, kind: str, rate: str, base: int, tax: int, **kw: object) -> TaxRow:
        return TaxRow(code, f"{code} name", kind, Decimal(rate), base, tax, True, f"rule {code}",  # type: ignore[arg-type]
                      **kw)  # type: ignore[arg-type]

    lines = tuple(
        StoredLine(
            _line_input({"id": f"l{i}", "quantity": "2", "unit_price": str(1000 + i),
                         "customer": {"address": {"state": "CA", "postal_code": "90001"}}}),
            LineResult(
                f"l{i}", 200 + i, 210 + i,
                (row("US-ST-CA", "state", "0.0725", 2000 + 2 * i, 145 + i, tax_amount_before_discounts=150),
                 row("US-CA-CO-037", "county", "0.0025", 2000 + 2 * i, 5, detail="note", exempt_reason=None),
                 row("US-CA-DI-X", "district", "0.01", 0, 0, tax_type="use_tax", exempt_reason="exempt_product")),
                (DiscountResult("discount_amount", 10, 1),) if i % 2 else (),
                2000 + 2 * i, 1990 + 2 * i, detail="" if i else "a line note", resolution="zip5" if i else "address",
            ),
            customer_id=None if i % 3 else "cust_1", product_id="prd_1" if i % 2 else None,
        )
        for i in range(10)
    )
    return TransactionRecord(
        id=new_id("txn"), organization_id=org, type="sale", status="finalized", source="api", currency="USD",
        transaction_date=now, tax=TaxState(sum(ln.result.tax_amount for ln in lines), provided=None, collected=12),
        reference_id=reference_id, discount_amount=100, vendor_discount_amount=0, lines=lines,
        tax_only=False, held_off_reason=None, allocations=(("US-ST-CA", 7), ("US-CA-CO-037", 5)),
        registrations=("US-ST-CA",), created_at=now, updated_at=now,
    )


def test_a_transaction_stored_in_one_statement_per_table_reads_back_equal(fresh_database_url: str) -> None:
    async def go() -> None:
        engine = create_engine(fresh_database_url, pool_size=2)
        await migrate.upgrade(engine)
        org = (await _create_tenant(fresh_database_url)).organization_id
        counted: list[int] = []
        db.add_statement_hook(engine, lambda: counted.append(1))
        try:
            plain = _record(org)
            referenced = _record(org, reference_id="inv-1")
            async with transaction(engine, write=True) as conn:
                assert await store.insert_transaction(conn, plain) is None
                assert await store.insert_transaction(conn, referenced) is None
            # Counted here: BEGIN (SQLite), and per transaction its row (SQLite), then lines, their
            # rows and the attribution, one executemany each (SQLAlchemy's events count the rest).
            sqlite = fresh_database_url.startswith("sqlite")
            assert len(counted) == (1 + 2 + 6 if sqlite else 6)
            async with transaction(engine, write=False) as conn:
                for rec in (plain, referenced):
                    back = await store.get_transaction(conn, org, rec.id)
                    assert back == rec
                    assert repr(back) == repr(rec)  # the same values, types and time zones
                assert (await conn.execute(
                    select(func.count()).select_from(transaction_line_taxes)
                    .where(transaction_line_taxes.c.transaction_id == plain.id))).scalar() == 30

            # A taken reference id: the holder's id, nothing written, and the transaction goes on.
            again = replace(_record(org, reference_id="inv-1"), id=new_id("txn"))
            async with transaction(engine, write=True) as conn:
                assert await store.insert_transaction(conn, again) == referenced.id
                assert await store.get_transaction(conn, org, again.id) is None
                third = _record(org, reference_id="inv-2")
                assert await store.insert_transaction(conn, third) is None
            async with transaction(engine, write=False) as conn:
                assert await store.get_transaction(conn, org, third.id) == third
                assert (await conn.execute(
                    select(func.count()).select_from(transaction_lines)
                    .where(transaction_lines.c.transaction_id == again.id))).scalar() == 0
        finally:
            await engine.dispose()

    asyncio.run(go())


def test_insert_rows_as_the_first_statement_of_a_transaction(fresh_database_url: str) -> None:
    """On PostgreSQL the driver's transaction begins with SQLAlchemy's first statement: rows
    inserted before any take SQLAlchemy's path, inside the transaction (a rollback undoes
    them), with the same result."""

    async def go() -> None:
        engine = create_engine(fresh_database_url, pool_size=2)
        await migrate.upgrade(engine)
        org = (await _create_tenant(fresh_database_url)).organization_id
        rec = _record(org, reference_id="first")
        lines, taxes, _ = store._line_rows(rec)
        try:
            async with transaction(engine, write=True) as conn:
                await conn.execute(transactions.insert(), store._txn_row(rec))
            for commit in (False, True):
                async with transaction(engine, write=True) as conn:
                    await rows.insert_rows(conn, transaction_lines, lines)
                    await rows.insert_rows(conn, transaction_line_taxes, taxes)
                    if not commit:
                        await conn.rollback()
                async with transaction(engine, write=False) as conn:
                    back = await store.get_transaction(conn, org, rec.id)
                assert back is not None
                assert back == (replace(rec, allocations=()) if commit else replace(rec, lines=(), allocations=()))
        finally:
            await engine.dispose()

    asyncio.run(go())


def test_a_transaction_committed_in_one_trip_reads_back_equal(fresh_database_url: str) -> None:
    """``insert_transaction_committed`` (``POST /transactions`` of a sale): BEGIN, the inserts and
    COMMIT in one trip to SQLite's thread, one statement on PostgreSQL; what it stores reads
    back equal to the record, as through a unit of work. A taken reference id writes nothing
    and names the holder; a failure half-way (a line row that breaks a constraint) leaves
    nothing behind."""

    async def go() -> None:
        engine = create_engine(fresh_database_url, pool_size=2)
        await migrate.upgrade(engine)
        org = (await _create_tenant(fresh_database_url)).organization_id
        counted: list[int] = []
        db.add_statement_hook(engine, lambda: counted.append(1))
        sqlite = fresh_database_url.startswith("sqlite")
        try:
            plain = _record(org)
            referenced = _record(org, reference_id="inv-1")
            assert await store.insert_transaction_committed(engine, plain) is None
            # SQLite: BEGIN, the row, lines, their rows, the attribution, COMMIT; PostgreSQL: one statement.
            assert len(counted) == (6 if sqlite else 1)
            assert await store.insert_transaction_committed(engine, referenced) is None
            async with transaction(engine, write=False) as conn:
                for rec in (plain, referenced):
                    back = await store.get_transaction(conn, org, rec.id)
                    assert back == rec
                    assert repr(back) == repr(rec)
                assert (await conn.execute(
                    select(func.count()).select_from(transaction_line_taxes)
                    .where(transaction_line_taxes.c.transaction_id == plain.id))).scalar() == 30

            again = replace(_record(org, reference_id="inv-1"), id=new_id("txn"))
            assert await store.insert_transaction_committed(engine, again) == referenced.id
            # Every line at position 0: the second line row breaks the primary key after the
            # transaction's row and the first line went in.
            broken = _record(org, reference_id="inv-3")
            real_line_rows = store._line_rows

            def same_position(rec: TransactionRecord):  # type: ignore[no-untyped-def]
                ls, ts, al = real_line_rows(rec)
                return [{**ln, "position": 0} for ln in ls], ts, al

            store._line_rows = same_position  # type: ignore[assignment]
            try:
                with pytest.raises(Exception) as failed:
                    await store.insert_transaction_committed(engine, broken)
            finally:
                store._line_rows = real_line_rows  # type: ignore[assignment]
            assert not is_unavailable(failed.value)  # an integrity error, not a lost database
            async with transaction(engine, write=False) as conn:
                assert await store.get_transaction(conn, org, again.id) is None
                assert await store.get_transaction(conn, org, broken.id) is None
                for table in (transactions, transaction_lines):
                    column = table.c.id if table is transactions else table.c.transaction_id
                    assert (await conn.execute(
                        select(func.count()).select_from(table).where(column.in_([again.id, broken.id]))
                    )).scalar() == 0
            # The connection went back to the pool usable, outside any transaction.
            assert await store.insert_transaction_committed(engine, _record(org, reference_id="inv-4")) is None
        finally:
            await engine.dispose()

    asyncio.run(go())


def test_a_line_stored_as_json_before_0011_reads_back_as_its_message(fresh_database_url: str) -> None:
    """Rows written before migration 0011 hold the line input as JSON (``input``) and no
    ``input_message``: they read back as the same serialized message a new row holds."""

    async def go() -> None:
        engine = create_engine(fresh_database_url, pool_size=2)
        await migrate.upgrade(engine)
        org = (await _create_tenant(fresh_database_url)).organization_id
        rec = _record(org, reference_id="old-1")
        try:
            assert await store.insert_transaction_committed(engine, rec) is None
            async with transaction(engine, write=True) as conn:
                await conn.execute(
                    transaction_lines.update().where(transaction_lines.c.transaction_id == rec.id).values(
                        input='{"id":"l0","quantity":"2","unit_price":"1000",'
                              '"customer":{"address":{"state":"CA","postal_code":"90001"}}}',
                        input_message=None))
            async with transaction(engine, write=False) as conn:
                back = await store.get_transaction(conn, org, rec.id)
            assert back is not None
            first = TransactionLineItem.FromString(back.lines[0].input)
            assert (first.id, first.quantity, first.unit_price) == ("l0", "2", "1000")
            assert first.customer.address.postal_code == "90001" and not first.HasField("product")
            assert back.lines[0].input == rec.lines[0].input  # l0's JSON above is _record's l0
        finally:
            await engine.dispose()

    asyncio.run(go())
