"""The private APIs of aiosqlite and of SQLAlchemy's asyncpg adapter that ``levy.store`` uses.

``levy.store.db`` (the SQLite group commit) and ``levy.store.rows`` (one trip to aiosqlite's thread
per insert, asyncpg's errors as SQLAlchemy's) reach past the public APIs for speed; pyproject.toml
bounds both packages from above. When an upgrade inside those bounds changes one of these names,
these tests fail with the name to look at, before any API test fails in a way that hides it.
"""

from __future__ import annotations

import asyncio
import inspect
import os

import aiosqlite
import pytest
from sqlalchemy.dialects.postgresql import asyncpg as sa_asyncpg
from sqlalchemy.ext.asyncio import create_async_engine


def test_aiosqlite_runs_a_function_on_its_thread_with_its_sqlite3_connection() -> None:
    """``driver._execute(fn, driver._conn, ...)``: levy.store.db.GroupCommit._run and rows.insert_together."""

    async def run() -> int:
        async with aiosqlite.connect(":memory:") as driver:
            assert hasattr(driver, "_conn"), "aiosqlite.Connection._conn (the sqlite3 connection) is gone"
            assert inspect.iscoroutinefunction(getattr(driver, "_execute", None)), (
                "aiosqlite.Connection._execute(fn, *args) is gone or no longer a coroutine function")
            return await driver._execute(lambda conn, x: conn.execute("SELECT ? + 1", (x,)).fetchone()[0],
                                         driver._conn, 6)

    assert asyncio.run(run()) == 7


def test_sqlalchemy_asyncpg_adapter_translates_errors_and_tracks_its_transaction() -> None:
    """``adapted._handle_exception(error)`` and ``adapted._transaction``: levy.store.rows.insert_rows."""
    adapter = sa_asyncpg.AsyncAdapt_asyncpg_connection
    assert callable(getattr(adapter, "_handle_exception", None)), (
        "SQLAlchemy's AsyncAdapt_asyncpg_connection._handle_exception is gone (levy.store.rows._as_sqlalchemy_error)")
    assert "self._transaction = None" in inspect.getsource(adapter.__init__), (
        "SQLAlchemy's AsyncAdapt_asyncpg_connection no longer keeps _transaction (levy.store.rows.insert_rows)")


@pytest.mark.skipif(not os.environ.get("LEVY_TEST_POSTGRES_URL"), reason="LEVY_TEST_POSTGRES_URL is not set")
def test_sqlalchemy_asyncpg_adapter_transaction_is_set_inside_a_transaction() -> None:
    async def run() -> object:
        engine = create_async_engine(os.environ["LEVY_TEST_POSTGRES_URL"])
        try:
            async with engine.connect() as conn:
                raw = await conn.get_raw_connection()
                async with conn.begin():
                    await conn.exec_driver_sql("SELECT 1")
                    inside = raw.dbapi_connection._transaction
                return inside
        finally:
            await engine.dispose()

    inside = asyncio.run(run())
    assert inside is not None, "AsyncAdapt_asyncpg_connection._transaction is None inside a transaction"
