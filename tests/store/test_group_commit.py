"""SQLite group commit (issue 20, ``levy.store.db.GroupCommit``): transactions stored while
others hold the process's write turn share one COMMIT; each caller gets its own answer
(stored, the holder of a taken reference id, or its own error) only after that COMMIT, a
write that fails is rolled back alone, and a COMMIT that fails fails every write of its
group with nothing stored. On a real SQLite file through the store's own functions."""

from __future__ import annotations

import asyncio
import sqlite3
from dataclasses import replace
from pathlib import Path

import pytest
from levyserver import _create_tenant
from sqlalchemy import func, select
from test_transactions_write import _record

from levy.domain.ids import new_id
from levy.store import migrate
from levy.store import transactions as store
from levy.store.db import create_engine, group_commit, transaction, writer_queue
from levy.store.tables.transactions import transaction_lines, transactions


async def _setup(tmp_path: Path) -> tuple[object, str]:
    url = f"sqlite+aiosqlite:///{tmp_path}/group.db"
    engine = create_engine(url, pool_size=4)
    await migrate.upgrade(engine)
    org = (await _create_tenant(url)).organization_id
    return engine, org


async def _count(engine, table, column, ids: list[str]) -> int:  # type: ignore[no-untyped-def]
    async with transaction(engine, write=False) as conn:
        return int((await conn.execute(select(func.count()).select_from(table).where(column.in_(ids)))).scalar())


async def _queued_behind_the_turn(engine, coros):  # type: ignore[no-untyped-def]
    """Run ``coros`` while the write turn is held, so that they queue, then let them go."""
    queue = writer_queue(engine)
    assert queue is not None
    async with queue.turn():
        tasks = [asyncio.ensure_future(c) for c in coros]
        await asyncio.sleep(0.05)
        assert not any(t.done() for t in tasks)  # nothing answered before its commit
    return await asyncio.gather(*tasks, return_exceptions=True)


def test_writes_queued_together_share_one_commit_and_each_gets_its_answer(tmp_path: Path) -> None:
    async def go() -> None:
        engine, org = await _setup(tmp_path)
        try:
            group = group_commit(engine)  # type: ignore[arg-type]
            assert group is not None
            held = _record(org, reference_id="held")
            assert await store.insert_transaction_committed(engine, held) is None
            recs = [_record(org, reference_id=f"g-{i}") for i in range(8)]
            taken = replace(_record(org, reference_id="held"), id=new_id("txn"))
            twice = replace(_record(org, reference_id="g-3"), id=new_id("txn"))  # g-3 again, after g-3
            results = await _queued_behind_the_turn(
                engine, [store.insert_transaction_committed(engine, r) for r in (*recs, taken, twice)])
            assert group.group_sizes[-1] == 10  # one group: one BEGIN ... COMMIT for all ten
            assert results == [None] * 8 + [held.id, recs[3].id]
            async with transaction(engine, write=False) as conn:
                for rec in recs:
                    assert await store.get_transaction(conn, org, rec.id) == rec
            assert await _count(engine, transactions, transactions.c.id, [taken.id, twice.id]) == 0
            assert await _count(engine, transaction_lines, transaction_lines.c.transaction_id,
                                [r.id for r in recs]) == 80
        finally:
            await engine.dispose()  # type: ignore[attr-defined]

    asyncio.run(go())


def test_a_write_that_fails_in_a_group_is_rolled_back_alone(tmp_path: Path) -> None:
    async def go() -> None:
        engine, org = await _setup(tmp_path)
        try:
            good = [_record(org, reference_id=f"ok-{i}") for i in range(3)]
            bad = _record(org, reference_id="bad")
            real = store._line_rows

            def rows(rec):  # type: ignore[no-untyped-def]
                lines, taxes, allocs = real(rec)
                if rec.id == bad.id:  # every line at position 0: the second breaks the primary key
                    lines = [{**ln, "position": 0} for ln in lines]
                return lines, taxes, allocs

            store._line_rows = rows  # type: ignore[assignment]
            try:
                results = await _queued_behind_the_turn(
                    engine, [store.insert_transaction_committed(engine, r) for r in (good[0], bad, *good[1:])])
            finally:
                store._line_rows = real  # type: ignore[assignment]
            assert results[0] is None and results[2:] == [None, None]
            assert isinstance(results[1], sqlite3.IntegrityError), results[1]
            assert await _count(engine, transactions, transactions.c.id, [bad.id]) == 0
            assert await _count(engine, transaction_lines, transaction_lines.c.transaction_id, [bad.id]) == 0
            assert await _count(engine, transaction_lines, transaction_lines.c.transaction_id,
                                [r.id for r in good]) == 30
        finally:
            await engine.dispose()  # type: ignore[attr-defined]

    asyncio.run(go())


def test_a_commit_that_fails_fails_every_write_of_its_group_and_stores_nothing(tmp_path: Path) -> None:
    """A foreign key checked at COMMIT (``PRAGMA defer_foreign_keys``) makes the group's COMMIT
    fail: every caller of the group gets that error, none of their rows is stored, and the
    next write goes through."""

    async def go() -> None:
        engine, org = await _setup(tmp_path)
        try:
            group = group_commit(engine)  # type: ignore[arg-type]
            assert group is not None
            recs = [_record(org, reference_id=f"lost-{i}") for i in range(3)]

            def orphan_line(db: sqlite3.Connection) -> None:
                db.execute("PRAGMA defer_foreign_keys = ON")
                db.execute("INSERT INTO transaction_lines (transaction_id, position, organization_id, line_id, "
                           "input, amount, taxable_amount, tax_amount, tax_amount_before_discounts, discounts, "
                           "detail) VALUES ('txn_missing', 0, ?, 'x', '{}', 0, 0, 0, 0, '[]', '')", (org,))

            results = await _queued_behind_the_turn(
                engine, [*(store.insert_transaction_committed(engine, r) for r in recs), group.run(engine, orphan_line)])
            assert group.group_sizes[-1] == 4
            for r in results:
                assert isinstance(r, sqlite3.IntegrityError) and "FOREIGN KEY" in str(r), r
            assert await _count(engine, transactions, transactions.c.id, [r.id for r in recs]) == 0
            assert await _count(engine, transaction_lines, transaction_lines.c.transaction_id,
                                [*(r.id for r in recs), "txn_missing"]) == 0
            after = _record(org, reference_id="after")
            assert await store.insert_transaction_committed(engine, after) is None
            assert await _count(engine, transactions, transactions.c.id, [after.id]) == 1
        finally:
            await engine.dispose()  # type: ignore[attr-defined]

    asyncio.run(go())


def test_a_caller_that_gives_up_does_not_undo_the_group(tmp_path: Path) -> None:
    """A cancelled caller (a client that went away) leaves its write to its group: the others
    are answered, and what was committed is stored."""

    async def go() -> None:
        engine, org = await _setup(tmp_path)
        try:
            recs = [_record(org, reference_id=f"c-{i}") for i in range(3)]
            queue = writer_queue(engine)
            assert queue is not None
            async with queue.turn():
                tasks = [asyncio.ensure_future(store.insert_transaction_committed(engine, r)) for r in recs]
                await asyncio.sleep(0.05)
                tasks[0].cancel()
            with pytest.raises(asyncio.CancelledError):
                await tasks[0]
            assert await asyncio.gather(*tasks[1:]) == [None, None]
            assert await _count(engine, transactions, transactions.c.id, [r.id for r in recs]) == 3
        finally:
            await engine.dispose()  # type: ignore[attr-defined]

    asyncio.run(go())
