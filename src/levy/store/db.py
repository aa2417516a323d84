"""Database engine and the unit of work (one database transaction per request).

SQLite runs in WAL mode with a busy timeout and foreign keys on. Write units of
work on SQLite wait for their turn in the process's :class:`WriterQueue` (one
writer per process, first come first served), then start with ``BEGIN
IMMEDIATE`` so that a writer of another process is met on the busy timeout
instead of failing on a read-to-write lock upgrade; read units use a plain
deferred ``BEGIN`` and never block writers (WAL).

Database loss: connection attempts and pool checkouts wait at most
``connect_timeout`` seconds, and :func:`is_unavailable` recognises the
driver's "the database is not reachable right now" failures (refused or killed
connections, server shutting down, SQLite locked past its busy timeout or not
writable) so that the transports answer them with 503 / UNAVAILABLE instead of
500. The pool pre-pings and replaces dead connections, so service recovers by
itself when the database returns.
"""

from __future__ import annotations

import asyncio
import contextlib
import errno
import socket
import sqlite3
import weakref
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

from sqlalchemy import event
from sqlalchemy import exc as sa_exc
from sqlalchemy.engine import make_url
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine, create_async_engine
from sqlalchemy.util import await_only

DEFAULT_DATABASE_URL = "sqlite+aiosqlite:///./levy.db"
#: Called once per statement sent around SQLAlchemy's execute (which its events do not see):
#: the statement counter of levy.app.metrics.
on_statement: list[Callable[[], Any]] = []
SQLITE_BUSY_TIMEOUT_MS = 10_000
DEFAULT_CONNECT_TIMEOUT_S = 5.0


def is_sqlite(url: str) -> bool:
    return make_url(url).get_backend_name() == "sqlite"


def missing_sqlite_file(url: str) -> Path | None:
    """The absolute path of the SQLite file ``url`` names when that file does not exist
    (connecting would create an empty database there); None otherwise (it exists, an
    in-memory or ``file:`` URI database, or not SQLite: PostgreSQL never creates one)."""
    u = make_url(url)
    name = u.database
    if u.get_backend_name() != "sqlite" or not name or name == ":memory:" or name.startswith("file:"):
        return None
    path = Path(name).resolve()
    return None if path.exists() else path


def create_engine(
    url: str, *, pool_size: int = 10, echo: bool = False, connect_timeout: float = DEFAULT_CONNECT_TIMEOUT_S,
    busy_timeout: float = SQLITE_BUSY_TIMEOUT_MS / 1000,
) -> AsyncEngine:
    """An async engine for ``url`` with Levy's connection settings.

    ``connect_timeout``: seconds a new PostgreSQL connection and a pool checkout
    may take before the request fails (503). ``busy_timeout``: seconds a SQLite
    writer waits for the database lock before it fails (503)."""
    kwargs: dict[str, Any] = {"echo": echo, "pool_timeout": connect_timeout}
    if is_sqlite(url):
        kwargs["connect_args"] = {"timeout": busy_timeout}
        engine = create_async_engine(url, pool_size=pool_size, max_overflow=pool_size, pool_reset_on_return=None,
                                     **kwargs)
        _configure_sqlite(engine, int(busy_timeout * 1000))
    else:
        kwargs["connect_args"] = {"timeout": connect_timeout}
        engine = create_async_engine(
            url, pool_size=pool_size, max_overflow=pool_size, pool_pre_ping=True, **kwargs
        )
    return engine


# PostgreSQL SQLSTATEs meaning "this connection or server is not usable now":
# class 08 (connection exception), 57P01-57P03 (admin/crash shutdown, cannot
# connect now, e.g. pg_terminate_backend or a restart) and 53300 (too many connections).
_UNAVAILABLE_SQLSTATES = ("08", "57P01", "57P02", "57P03", "53300")
# SQLite OperationalError messages meaning the file cannot be used now.
_SQLITE_UNAVAILABLE = (
    "database is locked", "database table is locked", "readonly database", "unable to open database file",
    "disk i/o error", "database or disk is full",
)
_NETWORK_ERRNOS = {
    errno.ECONNREFUSED, errno.ECONNRESET, errno.ECONNABORTED, errno.EHOSTUNREACH, errno.ENETUNREACH,
    errno.ETIMEDOUT, errno.EPIPE, errno.ENETDOWN, errno.EHOSTDOWN,
}


def is_unavailable(exc: BaseException) -> bool:
    """Whether ``exc`` (or an exception it wraps) means the database is
    unreachable or unusable right now, rather than a bug or bad data."""
    return _in_chain(exc, _unavailable_one)


def _in_chain(exc: BaseException, test: Callable[[BaseException], bool]) -> bool:
    """Whether ``test`` holds for ``exc`` or an exception it wraps (driver error, cause, context)."""
    seen: set[int] = set()
    todo: list[BaseException | None] = [exc]
    while todo:
        e = todo.pop()
        if e is None or id(e) in seen or len(seen) > 20:
            continue
        seen.add(id(e))
        if test(e):
            return True
        todo.extend((getattr(e, "orig", None), e.__cause__, e.__context__))
    return False


def _unavailable_one(e: BaseException) -> bool:
    if isinstance(e, sa_exc.DBAPIError) and e.connection_invalidated:
        return True
    if isinstance(e, (sa_exc.DisconnectionError, sa_exc.TimeoutError)):
        return True  # pool checkout timed out
    if isinstance(e, sa_exc.InterfaceError) or (type(e).__name__ == "InterfaceError" and "asyncpg" in type(e).__module__):
        msg = str(e).lower()
        return "closed" in msg or "connection" in msg  # not misuse such as an unsupported parameter type
    if isinstance(e, (ConnectionError, TimeoutError, socket.gaierror)):
        return True  # refused/reset connection; connect timeout (asyncio.TimeoutError is TimeoutError)
    if isinstance(e, sqlite3.OperationalError):
        msg = str(e).lower()
        return any(m in msg for m in _SQLITE_UNAVAILABLE)
    if isinstance(e, OSError) and type(e) is OSError:
        # asyncpg raises a bare OSError ("Multiple exceptions: ...") when every address refused.
        return e.errno is None or e.errno in _NETWORK_ERRNOS
    if type(e).__module__.startswith("asyncpg"):
        name = type(e).__name__
        if name in ("ConnectionDoesNotExistError", "ConnectionFailureError"):
            return True
        state = str(getattr(e, "sqlstate", "") or "")
        return bool(state) and state.startswith(_UNAVAILABLE_SQLSTATES)
    return False


# PostgreSQL SQLSTATEs meaning "this transaction lost to a concurrent one and was rolled
# back": deadlock detected and serialization failure. Running it again is the remedy.
_CONFLICT_SQLSTATES = ("40P01", "40001")


def is_write_conflict(exc: BaseException) -> bool:
    """Whether ``exc`` (or an exception it wraps) is the database aborting the
    transaction as a deadlock victim or a serialization failure."""
    return _in_chain(exc, lambda e: str(getattr(e, "sqlstate", "") or "") in _CONFLICT_SQLSTATES)


def _configure_sqlite(engine: AsyncEngine, busy_timeout_ms: int) -> None:
    sync_engine = engine.sync_engine
    _WRITER_QUEUES[sync_engine] = WriterQueue(busy_timeout_ms / 1000)

    @event.listens_for(sync_engine, "connect")
    def _on_connect(dbapi_conn: Any, _record: Any) -> None:
        # Let SQLAlchemy (not the driver) emit BEGIN, so we choose its kind.
        dbapi_conn.isolation_level = None
        cur = dbapi_conn.cursor()
        cur.execute("PRAGMA journal_mode=WAL")
        cur.execute(f"PRAGMA busy_timeout={busy_timeout_ms}")
        cur.execute("PRAGMA foreign_keys=ON")
        cur.execute("PRAGMA synchronous=NORMAL")
        cur.close()

    @event.listens_for(sync_engine, "begin")
    def _on_begin(conn: Any) -> None:
        sql = "BEGIN IMMEDIATE" if conn.get_execution_options().get("levy_write") else "BEGIN"
        driver = conn.connection.driver_connection
        if hasattr(driver, "execute"):
            # aiosqlite: one trip to its thread (a statement through SQLAlchemy makes three).
            await_only(driver.execute(sql))
            for hook in on_statement:
                hook()
        else:  # pragma: no cover - another SQLite driver
            conn.exec_driver_sql(sql)

    @event.listens_for(sync_engine, "reset")
    def _on_reset(dbapi_conn: Any, _record: Any, state: Any) -> None:
        # The pool's own reset (a ROLLBACK on every return, another trip to aiosqlite's thread) is
        # off: a connection comes back in a transaction only when its unit of work could not end it.
        driver = getattr(dbapi_conn, "driver_connection", None) or getattr(dbapi_conn, "_connection", None)
        if not state.terminate_only and getattr(driver, "in_transaction", True):
            dbapi_conn.rollback()


class WriterQueue:
    """One SQLite writer per process: write transactions wait here, first come first served,
    for the one before them to commit (or roll back), instead of each taking a connection and
    waiting in SQLite's busy handler, which sleeps in growing steps and wakes writers late and
    in no particular order (p99 1.2-1.7 s at 16 in flight, issue 20). Reads never wait here
    (WAL). Other processes on the same file (``levy serve --workers N``, CLI commands) still
    meet this process's writer in SQLite's busy handler: docs/operations.md "SQLite writes".

    A writer waits at most ``timeout`` seconds (the busy timeout), then fails as SQLite's
    "database is locked" does: 503, retry shortly."""

    def __init__(self, timeout: float) -> None:
        self.timeout = timeout
        self._locks: dict[asyncio.AbstractEventLoop, asyncio.Lock] = {}

    def lock(self) -> asyncio.Lock:
        loop = asyncio.get_running_loop()
        lock = self._locks.get(loop)
        if lock is None:
            for old in [lp for lp in self._locks if lp.is_closed()]:
                del self._locks[old]
            lock = self._locks[loop] = asyncio.Lock()  # FIFO: a new caller never overtakes a waiting one
        return lock

    @contextlib.asynccontextmanager
    async def turn(self) -> AsyncIterator[None]:
        lock = self.lock()
        try:
            if self.timeout <= 0 and lock.locked():
                raise TimeoutError  # a busy timeout of 0: no waiting, as SQLite's
            async with asyncio.timeout(self.timeout if self.timeout > 0 else None):
                await lock.acquire()
        except TimeoutError:
            raise sqlite3.OperationalError(
                f"database is locked: no write turn in this process within {self.timeout:g} s") from None
        try:
            yield
        finally:
            lock.release()


_WRITER_QUEUES: weakref.WeakKeyDictionary[Any, WriterQueue] = weakref.WeakKeyDictionary()


def writer_queue(engine: AsyncEngine) -> WriterQueue | None:
    """The process's queue of SQLite write transactions on ``engine`` (None: not SQLite)."""
    return _WRITER_QUEUES.get(engine.sync_engine)


@contextlib.asynccontextmanager
async def transaction(engine: AsyncEngine, *, write: bool) -> AsyncIterator[AsyncConnection]:
    """One database transaction: committed on success, rolled back on error. A write
    transaction on SQLite first waits for its turn in the process's :class:`WriterQueue`."""
    queue = _WRITER_QUEUES.get(engine.sync_engine) if write else None
    async with queue.turn() if queue is not None else contextlib.nullcontext(), engine.connect() as conn:
        if write:
            conn = await conn.execution_options(levy_write=True)
        async with conn.begin():
            yield conn
