"""The batch upsert's race path: a triple inserted by a concurrent transaction
after the batch's select is updated, not duplicated (SQLite and PostgreSQL)."""

from __future__ import annotations

import asyncio
import uuid

from levyserver import LevyServer, Tenant
from levy.app import customers as uc
from levy.domain.customers import BatchItem
from levy.store.customers import SqlCustomers
from levy.store.db import create_engine, transaction


async def _scenario(url: str, org: str) -> tuple[list[BatchItem], str, dict]:
    engine = create_engine(url, pool_size=2)
    source_id = "race-" + uuid.uuid4().hex[:8]
    values = {"source": "native", "source_account_id": "__default__", "source_id": source_id, "name": "first",
              "email": None, "source_updated_at": None}
    items = [BatchItem(0, {**values, "name": "second"}, []), BatchItem(1, {**values, "source_id": source_id + "-b"}, [])]
    try:
        async with transaction(engine, write=True) as first:
            first_id = "cust_" + uuid.uuid4().hex[:26].upper()
            assert await SqlCustomers(first).insert(org, first_id, values, uc.utcnow())

            async def second() -> dict:
                async with transaction(engine, write=True) as conn:
                    return await uc.batch_upsert(conn, org, items)

            task = asyncio.create_task(second())
            await asyncio.sleep(0.5)  # the batch is now waiting on the first transaction
            assert not task.done()
        await task
        async with transaction(engine, write=False) as conn:
            rows = await SqlCustomers(conn).page(org, 100, None)
    finally:
        await engine.dispose()
    return items, first_id, {r.source_id: r for r in rows[0]}


def test_batch_updates_a_triple_a_concurrent_transaction_inserted(server: LevyServer, tenant: Tenant) -> None:
    items, first_id, rows = asyncio.run(_scenario(server.database_url, tenant.organization_id))
    assert [it.status for it in items] == ["updated", "created"]
    assert items[0].customer_id == first_id
    source_id = items[0].values["source_id"]  # type: ignore[index]
    assert set(rows) == {source_id, source_id + "-b"}
    assert rows[source_id].id == first_id and rows[source_id].name == "second"
