"""Apply Alembic migrations programmatically (``levy migrate``, ``levy serve``)."""

from __future__ import annotations

from pathlib import Path

from alembic import command
from alembic.config import Config
from alembic.runtime.migration import MigrationContext
from alembic.script import ScriptDirectory
from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncEngine

from levy.store.db import is_sqlite

MIGRATIONS = Path(__file__).parent / "migrations"
# Any constant: serialises concurrent migrators (several replicas starting) on PostgreSQL.
_PG_LOCK_KEY = 7_417_290_117


def alembic_config() -> Config:
    cfg = Config()
    cfg.set_main_option("script_location", str(MIGRATIONS))
    return cfg


def head_revision() -> str | None:
    return ScriptDirectory.from_config(alembic_config()).get_current_head()


async def upgrade(engine: AsyncEngine) -> None:
    """Upgrade the database to the newest revision (idempotent)."""
    cfg = alembic_config()

    def run(sync_conn) -> None:  # type: ignore[no-untyped-def]
        cfg.attributes["connection"] = sync_conn
        command.upgrade(cfg, "head")

    async with engine.connect() as conn:
        if not is_sqlite(str(engine.url)):
            await conn.execute(text("SELECT pg_advisory_lock(:k)"), {"k": _PG_LOCK_KEY})
            await conn.commit()
        else:
            conn = await conn.execution_options(levy_write=True)
        try:
            async with conn.begin():
                await conn.run_sync(run)
        finally:
            if not is_sqlite(str(engine.url)):
                await conn.execute(text("SELECT pg_advisory_unlock(:k)"), {"k": _PG_LOCK_KEY})
                await conn.commit()


async def current_revision(engine: AsyncEngine) -> str | None:
    async with engine.connect() as conn:
        return await conn.run_sync(lambda c: MigrationContext.configure(c).get_current_revision())
