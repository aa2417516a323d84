"""Migrations run unchanged on SQLite and PostgreSQL and produce exactly the
tables the code declares."""

from __future__ import annotations

import asyncio

from alembic.autogenerate import compare_metadata
from alembic.runtime.migration import MigrationContext
from fresh_db import fresh_database_url  # noqa: F401 (fixture)

from levy.store import migrate
from levy.store.db import create_engine
from levy.store.tables import metadata


def test_migrations_match_metadata_and_are_idempotent(database_url: str) -> None:
    async def run() -> list[object]:
        engine = create_engine(database_url, pool_size=1)
        try:
            await migrate.upgrade(engine)
            await migrate.upgrade(engine)  # a second run changes nothing
            assert await migrate.current_revision(engine) == migrate.head_revision()
            async with engine.connect() as conn:
                return await conn.run_sync(
                    lambda c: compare_metadata(MigrationContext.configure(c, opts={"compare_type": True}), metadata)
                )
        finally:
            await engine.dispose()

    diff = asyncio.run(run())
    assert diff == [], diff


def test_lines_stored_before_0011_survive_the_upgrade_and_read_back(fresh_database_url: str) -> None:
    """A database at 0010 with a stored transaction (its line inputs as JSON) upgraded to the head
    (on SQLite 0011 rebuilds ``transaction_lines``): the transaction reads back equal, each line's
    input as the message it was, and new lines are stored beside it."""
    import json
    from dataclasses import replace

    from alembic import command
    from google.protobuf import json_format
    from levyserver import _create_tenant
    from test_transactions_write import _record

    from levy.domain.ids import new_id
    from levy.store import transactions as store
    from levy.store.db import transaction
    from levy.store.tables.transactions import (
        transaction_line_taxes,
        transaction_lines,
        transaction_tax_only,
        transactions,
    )
    from levy.v1.transactions_pb2 import TransactionLineItem

    async def run() -> None:
        engine = create_engine(fresh_database_url, pool_size=1)
        cfg = migrate.alembic_config()

        def to_0010(sync_conn) -> None:  # type: ignore[no-untyped-def]
            cfg.attributes["connection"] = sync_conn
            command.upgrade(cfg, "0010_console")

        try:
            async with transaction(engine, write=True) as conn:
                await conn.run_sync(to_0010)
            org = (await _create_tenant(fresh_database_url)).organization_id
            old = _record(org, reference_id="before-0011")
            lines, taxes, allocs = store._line_rows(old)
            async with transaction(engine, write=True) as conn:
                added_by_0012 = ("exchange_rate", "exchange_rate_date", "marketplace_facilitator")
                await conn.execute(transactions.insert().values(
                    **{k: v for k, v in store._txn_row(old).items() if k not in added_by_0012}))
                for line, stored in zip(lines, old.lines, strict=True):
                    values = {k: v for k, v in line.items() if k not in ("input_message", "vat_checks")}  # 0011, 0020
                    values["input"] = json.dumps(json_format.MessageToDict(
                        TransactionLineItem.FromString(stored.input), preserving_proto_field_name=True))
                    await conn.execute(transaction_lines.insert().values(**values))
                await conn.execute(transaction_line_taxes.insert(), taxes)
                await conn.execute(transaction_tax_only.insert(), allocs)
            await migrate.upgrade(engine)
            assert await migrate.current_revision(engine) == migrate.head_revision()
            new = replace(_record(org, reference_id="after-0011"), id=new_id("txn"))
            assert await store.insert_transaction_committed(engine, new) is None
            async with transaction(engine, write=False) as conn:
                assert await store.get_transaction(conn, org, old.id) == old
                assert await store.get_transaction(conn, org, new.id) == new
                stored_inputs = (await conn.execute(
                    transaction_lines.select().where(transaction_lines.c.transaction_id == old.id))).all()
            assert len(stored_inputs) == 10
            assert all(r.input_message is None and r.input.startswith("{") for r in stored_inputs)
        finally:
            await engine.dispose()

    asyncio.run(run())
