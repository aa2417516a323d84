"""Database engine and the unit of work (one database transaction per request).

SQLite runs in WAL mode with a busy timeout and foreign keys on. Write units of
work on SQLite start with ``BEGIN IMMEDIATE`` so that two writers queue on the
busy timeout instead of failing on a read-to-write lock upgrade; read units
use a plain deferred ``BEGIN`` and never block writers (WAL).
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator
from typing import Any

from sqlalchemy import event
from sqlalchemy.engine import make_url
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine, create_async_engine

DEFAULT_DATABASE_URL = "sqlite+aiosqlite:///./levy.db"
SQLITE_BUSY_TIMEOUT_MS = 10_000


def is_sqlite(url: str) -> bool:
    return make_url(url).get_backend_name() == "sqlite"


def create_engine(url: str, *, pool_size: int = 10, echo: bool = False) -> AsyncEngine:
    """An async engine for ``url`` with Levy's connection settings."""
    kwargs: dict[str, Any] = {"echo": echo}
    if is_sqlite(url):
        kwargs["connect_args"] = {"timeout": SQLITE_BUSY_TIMEOUT_MS / 1000}
        engine = create_async_engine(url, pool_size=pool_size, max_overflow=pool_size, **kwargs)
        _configure_sqlite(engine)
    else:
        engine = create_async_engine(
            url, pool_size=pool_size, max_overflow=pool_size, pool_pre_ping=True, **kwargs
        )
    return engine


def _configure_sqlite(engine: AsyncEngine) -> None:
    sync_engine = engine.sync_engine

    @event.listens_for(sync_engine, "connect")
    def _on_connect(dbapi_conn: Any, _record: Any) -> None:
        # Let SQLAlchemy (not the driver) emit BEGIN, so we choose its kind.
        dbapi_conn.isolation_level = None
        cur = dbapi_conn.cursor()
        cur.execute("PRAGMA journal_mode=WAL")
        cur.execute(f"PRAGMA busy_timeout={SQLITE_BUSY_TIMEOUT_MS}")
        cur.execute("PRAGMA foreign_keys=ON")
        cur.execute("PRAGMA synchronous=NORMAL")
        cur.close()

    @event.listens_for(sync_engine, "begin")
    def _on_begin(conn: Any) -> None:
        if conn.get_execution_options().get("levy_write"):
            conn.exec_driver_sql("BEGIN IMMEDIATE")
        else:
            conn.exec_driver_sql("BEGIN")


@contextlib.asynccontextmanager
async def transaction(engine: AsyncEngine, *, write: bool) -> AsyncIterator[AsyncConnection]:
    """One database transaction: committed on success, rolled back on error."""
    async with engine.connect() as conn:
        if write:
            conn = await conn.execution_options(levy_write=True)
        async with conn.begin():
            yield conn
