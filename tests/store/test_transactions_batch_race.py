"""The batch import's two steps on a real database (SQLite and PostgreSQL): a reference id stored by
another transaction after a batch's look-up (planned, not yet written) makes that item ``existing``
and the batch's other sales are still stored (the one-by-one fallback of the grouped insert)."""

from __future__ import annotations

import asyncio
import pickle
from datetime import UTC, datetime

import pytest
from google.protobuf import json_format

from levy.app.context import CallContext
from levy.app.handlers.transactions import transaction_input
from levy.app.organization import add_registration
from levy.app.services import AppServices
from levy.app.transactions import TransactionInput
from levy.app.transactions_batch import (
    StalePlan,
    create_batch,
    handed_over,
    plan,
    write,
)
from levy.transport.transactions_import import import_context
from levy.config import Config
from levy.store import migrate
from levy.store import transactions as store
from levy.store.keys import SqlOrganizations
from levy.v1 import transactions_pb2 as pb


def sale_message(ref: str, price: int) -> pb.Transaction:
    return json_format.ParseDict({"type": "sale", "status": "finalized", "transaction_date": "2025-06-01T00:00:00Z",
                                  "reference_id": ref, "line_items": [{"id": "1", "unit_price": str(price),
                                                                       "customer": {"address": {"state": "TX"}}}]},
                                 pb.Transaction())


def sale(ref: str, price: int) -> TransactionInput:
    return transaction_input(sale_message(ref, price))


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


def credit(ref: str, parent_ref: str, price: int) -> TransactionInput:
    return transaction_input(json_format.ParseDict(
        {"type": "credit", "status": "finalized", "transaction_date": "2025-06-02T00:00:00Z", "reference_id": ref,
         "parent_reference_id": parent_ref,
         "line_items": [{"id": "1", "unit_price": str(price), "customer": {"address": {"state": "TX"}}}]},
        pb.Transaction()))


async def _org_context(services: AppServices, name: str) -> tuple[CallContext, str]:
    """A new organization registered in Texas, and the import command's call context for it."""
    async with services.uow(write=True) as conn:
        org = await SqlOrganizations(conn).create(f"{name} {datetime.now(UTC).isoformat()}")
        await add_registration(conn, org.id, "US-ST-TX", None, "2020-01-01", None)
    return import_context(services, org.id), org.id


def test_a_plan_handed_over_from_a_planner_process_is_written_as_planned(database_url: str) -> None:
    """The import command's planner process hands a batch over as rows (pickled between the processes): the
    writer stores those rows and creates the credits itself, one of them naming a sale of the same batch."""
    async def main() -> None:
        services = AppServices.create(Config(database_url=database_url))
        try:
            await migrate.upgrade(services.engine)
            ctx, org = await _org_context(services, "handover")
            items = [sale("h-1", 1000), credit("h-c", "h-1", 400), sale("h-2", 2000)]
            async with services.uow() as conn:
                planned = handed_over(await plan(ctx, conn, items))
            assert planned.rows is not None and [r.record for r in planned.results] == [None, None, None]
            planned = pickle.loads(pickle.dumps(planned))
            async with services.uow(write=True) as conn:
                results = await write(ctx, conn, planned)
            assert [r.status for r in results] == ["created", "created", "created"]
            async with services.uow() as conn:
                stored = await store.by_references(conn, org, ["h-1", "h-2", "h-c"])
            # TX 6.25%: 1000 -> 62.5 -> 63 (half up), 2000 -> 125; the credit 400 of the 1000 line -> 25.
            assert {ref: rec.tax.tax_amount for ref, rec in stored.items()} == {"h-1": 63, "h-2": 125, "h-c": 25}
            assert stored["h-c"].parent_transaction_id == stored["h-1"].id
            h1 = stored["h-1"]
            assert [(t.jurisdiction_name, t.tax_amount) for t in h1.lines[0].result.taxes] == [("Texas", 63)]
            assert pb.TransactionLineItem.FromString(h1.lines[0].input).unit_price == "1000"
        finally:
            await services.close()

    asyncio.run(main())


def test_a_plan_handed_over_with_a_reference_stored_since_is_planned_again_by_the_writer(database_url: str) -> None:
    """The grouped insert of a handed-over batch fails on the reference stored since (nothing of the batch is
    written: StalePlan); the import command plans the batch again in its write transaction: that item is
    ``existing``, the other created."""
    async def main() -> None:
        from levy.cli.transactions import Direct, _done

        services = AppServices.create(Config(database_url=database_url))
        try:
            await migrate.upgrade(services.engine)
            ctx, org = await _org_context(services, "stale")
            bodies = [json_format.MessageToDict(sale_message(ref, price), preserving_proto_field_name=True)
                      for ref, price in (("s-1", 1000), ("s-2", 2000))]
            async with services.uow() as conn:
                planned = handed_over(await plan(ctx, conn, [sale("s-1", 1000), sale("s-2", 2000)]))
            other = await create_batch(ctx, [sale("s-2", 5000)])  # stored by another request meanwhile
            with pytest.raises(StalePlan):
                async with services.uow(write=True) as conn:
                    await write(ctx, conn, planned)
            async with services.uow() as conn:
                assert set(await store.by_references(conn, org, ["s-1", "s-2"])) == {"s-2"}  # nothing of the batch
            outcomes = await Direct(services, ctx)._written(bodies, _done(planned))
            assert [o.status for o in outcomes] == ["created", "existing"]
            async with services.uow() as conn:
                stored = await store.by_references(conn, org, ["s-1", "s-2"])
            assert stored["s-1"].tax.tax_amount == 63 and stored["s-2"].id == other[0].record.id  # type: ignore[union-attr]
            assert stored["s-2"].tax.tax_amount == 313  # the other request's 5000 x 6.25% = 312.5 -> 313, unchanged
        finally:
            await services.close()

    asyncio.run(main())
