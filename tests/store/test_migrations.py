"""Migrations run unchanged on SQLite and PostgreSQL and produce exactly the
tables the code declares."""

from __future__ import annotations

import asyncio

from alembic.autogenerate import compare_metadata
from alembic.runtime.migration import MigrationContext

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
