"""levy.store.db.is_unavailable on real driver exceptions: "the database is not
usable right now" (503) versus bugs and bad data (500 / domain errors)."""

from __future__ import annotations

import asyncio
import socket
import sqlite3
from pathlib import Path

import pytest
from sqlalchemy import exc as sa_exc

from levy.store.db import is_unavailable


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def test_refused_postgres_connection_is_unavailable() -> None:
    import asyncpg

    async def connect() -> None:
        await asyncpg.connect(host="127.0.0.1", port=_closed_port(), user="x", timeout=2)

    with pytest.raises(OSError) as e:
        asyncio.run(connect())
    assert is_unavailable(e.value)


def test_sqlite_lock_and_readonly_are_unavailable(tmp_path: Path) -> None:
    path = tmp_path / "x.db"
    a = sqlite3.connect(path, isolation_level=None)
    a.execute("CREATE TABLE t (x INTEGER)")
    a.execute("BEGIN IMMEDIATE")
    b = sqlite3.connect(path, isolation_level=None, timeout=0.05)
    with pytest.raises(sqlite3.OperationalError) as locked:
        b.execute("BEGIN IMMEDIATE")
    assert is_unavailable(locked.value)
    # Wrapped the way SQLAlchemy raises it.
    assert is_unavailable(sa_exc.OperationalError("BEGIN IMMEDIATE", {}, locked.value))
    a.rollback()
    ro = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    with pytest.raises(sqlite3.OperationalError) as readonly:
        ro.execute("INSERT INTO t VALUES (1)")
    assert is_unavailable(readonly.value)


def test_invalidated_connection_and_pool_timeout_are_unavailable() -> None:
    err = sa_exc.DBAPIError("SELECT 1", {}, Exception("gone"), connection_invalidated=True)
    assert is_unavailable(err)
    assert is_unavailable(sa_exc.TimeoutError("QueuePool limit reached"))
    assert is_unavailable(ConnectionResetError())
    wrapped = RuntimeError("while handling")
    wrapped.__cause__ = ConnectionRefusedError()
    assert is_unavailable(wrapped)


def test_bugs_and_bad_data_are_not_unavailable(tmp_path: Path) -> None:
    c = sqlite3.connect(tmp_path / "y.db")
    c.execute("CREATE TABLE t (x INTEGER UNIQUE)")
    c.execute("INSERT INTO t VALUES (1)")
    with pytest.raises(sqlite3.IntegrityError) as dup:
        c.execute("INSERT INTO t VALUES (1)")
    with pytest.raises(sqlite3.OperationalError) as schema:
        c.execute("SELECT missing FROM t")
    for e in (dup.value, schema.value, sa_exc.IntegrityError("INSERT", {}, dup.value),
              sa_exc.OperationalError("SELECT", {}, schema.value), ValueError("x"), FileNotFoundError("f"),
              sa_exc.DBAPIError("SELECT 1", {}, Exception("x"), connection_invalidated=False)):
        assert not is_unavailable(e), e
