"""The batch upsert's bulk statements (SQLite and PostgreSQL): ``insert_many`` stores
what ``insert`` stores, and ``select_triples`` reads the records ``get`` reads, with the
same values and time zones."""

from __future__ import annotations

import asyncio
from datetime import datetime, timezone

from sqlalchemy import update

from fresh_db import fresh_database_url  # noqa: F401 (fixture)
from levyserver import _create_tenant
from levy.domain.ids import new_id
from levy.store import migrate
from levy.store.customers import SqlCustomers
from levy.store.db import create_engine, transaction
from levy.store.tables.areas import customers


def test_bulk_insert_and_select_match_the_single_row_statements(fresh_database_url: str) -> None:
    async def go() -> None:
        engine = create_engine(fresh_database_url, pool_size=1)
        await migrate.upgrade(engine)
        org = (await _create_tenant(fresh_database_url)).organization_id
        now = datetime(2026, 3, 1, 12, 0, 0, 123456, tzinfo=timezone.utc)
        later = datetime(2026, 1, 1, 8, 30, tzinfo=timezone.utc)
        values = [
            {"source": "native", "source_account_id": "__default__", "source_id": f"s{i}",
             "name": None if i % 2 else f"n{i}", "email": None, "source_updated_at": None if i % 3 else later}
            for i in range(7)
        ]
        try:
            async with transaction(engine, write=True) as conn:
                store = SqlCustomers(conn)
                single = new_id("cust")
                assert await store.insert(org, single, values[0], now)
                rows = [(new_id("cust"), v) for v in values[1:]]
                assert await store.insert_many(org, rows, now) == {cid for cid, _ in rows}
                assert await store.insert_many(org, [(new_id("cust"), values[1])], now) == set()  # taken triple
                await conn.execute(update(customers).where(customers.c.id == rows[0][0]).values(
                    deleted_at=now, exemption_updated_at=later, override_resale=True))
            async with transaction(engine, write=True) as conn:
                store = SqlCustomers(conn)
                triples = [(v["source"], v["source_account_id"], v["source_id"]) for v in values]
                bulk = await store.select_triples(org, [*triples, ("native", "__default__", "none")], lock=True)
                assert set(bulk) == set(triples)
                for cid in [single, *(cid for cid, _ in rows)]:
                    one = await store.get(org, cid)
                    assert one is not None
                    assert repr(bulk[one.triple]) == repr(one)  # the same values, types and tzinfo
                fresh = bulk[triples[1]]
                assert not fresh.override_exempt and fresh.merged_into_customer_id is None and fresh.created_at == now
                assert bulk[triples[0]].source_updated_at == later
                assert bulk[triples[1]].deleted and bulk[triples[1]].override_resale
        finally:
            await engine.dispose()

    asyncio.run(go())
