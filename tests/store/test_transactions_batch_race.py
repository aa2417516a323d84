"""The batch import's two steps on a real database (SQLite and PostgreSQL): a reference id stored by
another transaction after a batch's look-up (planned, not yet written) makes that item ``existing``
and the batch's other sales are still stored (the one-by-one fallback of the grouped insert)."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime

from google.protobuf import json_format

from levy.app.context import CallContext
from levy.app.services import AppServices
from levy.app.transactions_batch import create_batch, plan, write
from levy.config import Config
from levy.store import migrate
from levy.store import transactions as store
from levy.store.keys import SqlOrganizations
from levy.v1 import transactions_pb2 as pb


def sale(ref: str, price: int) -> pb.Transaction:
    return json_format.ParseDict({"type": "sale", "status": "finalized", "transaction_date": "2025-06-01T00:00:00Z",
                                  "reference_id": ref, "line_items": [{"id": "1", "unit_price": str(price),
                                                                       "customer": {"address": {"state": "TX"}}}]},
                                 pb.Transaction())


def test_reference_stored_between_plan_and_write(database_url: str) -> None:
    async def main() -> None:
        services = AppServices.create(Config(database_url=database_url))
        try:
            await migrate.upgrade(services.engine)
            async with services.uow(write=True) as conn:
                org = await SqlOrganizations(conn).create(f"race {datetime.now(UTC).isoformat()}")
            ctx = CallContext(services=services, request_id="req_test", transport="grpc")

            class _Key:
                organization_id = org.id

            ctx.key = _Key()  # type: ignore[assignment]
            async with services.uow() as conn:
                planned = await plan(ctx, conn, [sale("r-1", 1000), sale("r-2", 2000)])
            assert [r.status for r in planned.results] == ["created", "created"]  # planned, not stored yet
            # Another request stores r-2 first.
            other = await create_batch(ctx, [sale("r-2", 5000)])
            assert other[0].status == "created"
            async with services.uow(write=True) as conn:
                results = await write(ctx, conn, planned)
            assert [r.status for r in results] == ["created", "existing"]
            assert results[1].record is not None and results[1].record.id == other[0].record.id  # type: ignore[union-attr]
            async with services.uow() as conn:
                stored = await store.by_references(conn, org.id, ["r-1", "r-2"])
            assert set(stored) == {"r-1", "r-2"}
            assert pb.TransactionLineItem.FromString(stored["r-2"].lines[0].input).unit_price == "5000"  # the other request's, unchanged
        finally:
            await services.close()

    asyncio.run(main())
