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
500. A PostgreSQL connection that sat in the pool for more than
``PING_AFTER_IDLE_S`` is pinged when it is checked out and replaced when dead; a
connection found dead by a request fails it (503) and is replaced, so service
recovers by itself when the database returns.
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import errno
import socket
import sqlite3
import time
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

from sqlalchemy import event
from sqlalchemy import exc as sa_exc
from sqlalchemy.engine import make_url
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine, create_async_engine
from sqlalchemy.util import await_only

DEFAULT_DATABASE_URL = "sqlite+aiosqlite:///./levy.db"


class EngineState:
    """What Levy keeps per engine, held by the engine object itself (:func:`engine_state`):
    the statement hooks, and on SQLite the writer queue and the group commit."""

    def __init__(self) -> None:
        #: Called once per statement sent around SQLAlchemy's execute (which its events do not
        #: see): the statement counter of levy.app.metrics.
        self.statement_hooks: list[Callable[[], Any]] = []
        self.writer_queue: WriterQueue | None = None
        self.group_commit: GroupCommit | None = None


_STATE_ATTRIBUTE = "levy_state"


def engine_state(engine: Any) -> EngineState:
    """The :class:`EngineState` of ``engine`` (an AsyncEngine, an Engine or a Connection's engine),
    made on first use."""
    sync = getattr(engine, "sync_engine", engine)
    state = getattr(sync, _STATE_ATTRIBUTE, None)
    if state is None:
        state = EngineState()
        setattr(sync, _STATE_ATTRIBUTE, state)
    return state


def add_statement_hook(engine: Any, hook: Callable[[], Any]) -> None:
    """Call ``hook`` once per statement Levy sends on ``engine`` around SQLAlchemy's execute."""
    engine_state(engine).statement_hooks.append(hook)


def count_statements(engine: Any, n: int = 1) -> None:
    """Tell ``engine``'s statement hooks that ``n`` statements were sent around SQLAlchemy's execute."""
    hooks = engine_state(engine).statement_hooks
    for _ in range(n):
        for hook in hooks:
            hook()
SQLITE_BUSY_TIMEOUT_MS = 10_000
DEFAULT_CONNECT_TIMEOUT_S = 5.0
#: Seconds a PostgreSQL connection may sit in the pool before its next checkout pings it. SQLAlchemy's
#: ``pool_pre_ping`` pings at every checkout, and its asyncpg ping is BEGIN, a query and ROLLBACK: three
#: round trips and about 0.4 ms of server CPU per request. A connection in steady use is
#: not pinged; one the database dropped while it was in use fails its request (503) and is replaced
#: (docs/reliability.md).
PING_AFTER_IDLE_S = 1.0


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
        engine = create_async_engine(url, pool_size=pool_size, max_overflow=pool_size, **kwargs)
        _configure_postgres(engine)
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
        if name == "InternalClientError" and "another operation" in str(e):
            # a connection whose server end was killed mid-operation, met by the next statement (a raw
            # executemany, levy.store.rows.insert_rows): the connection is unusable, not a bug of the request
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


def _configure_postgres(engine: AsyncEngine) -> None:
    sync_engine = engine.sync_engine

    @event.listens_for(sync_engine, "checkin")
    def _on_checkin(_dbapi_conn: Any, record: Any) -> None:
        record.info["levy_idle_since"] = time.monotonic()

    @event.listens_for(sync_engine, "checkout")
    def _on_checkout(dbapi_conn: Any, record: Any, _proxy: Any) -> None:
        since = record.info.pop("levy_idle_since", None)
        if since is None or time.monotonic() - since < PING_AFTER_IDLE_S:
            return  # just connected, or just used
        try:
            dbapi_conn.ping()
        except Exception as e:  # noqa: BLE001 - the pool replaces the connection and tries again
            raise sa_exc.DisconnectionError(f"the pooled connection is dead: {e}") from e


def _configure_sqlite(engine: AsyncEngine, busy_timeout_ms: int) -> None:
    sync_engine = engine.sync_engine
    engine_state(engine).writer_queue = WriterQueue(busy_timeout_ms / 1000)

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
            count_statements(conn.engine)
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
    in no particular order (p99 1.2-1.7 s at 16 in flight). Reads never wait here
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


def writer_queue(engine: AsyncEngine) -> WriterQueue | None:
    """The process's queue of SQLite write transactions on ``engine`` (None: not SQLite)."""
    return engine_state(engine).writer_queue


class _Failed:
    """A write of a group that raised: its savepoint was rolled back, the others went on."""

    def __init__(self, error: BaseException) -> None:
        self.error = error


def _run_group(db: sqlite3.Connection, works: list[Callable[[sqlite3.Connection], Any]]) -> list[Any]:
    """On aiosqlite's thread: ``works`` in one transaction, each in a savepoint of its own when
    there are several (one that raises is rolled back alone), then one COMMIT. When anything
    else fails (BEGIN, COMMIT), everything is rolled back and the error raised: no result of
    a group is handed out before its COMMIT returned."""
    db.execute("BEGIN IMMEDIATE")
    try:
        results: list[Any] = []
        for work in works:
            if len(works) == 1:
                results.append(work(db))
                continue
            db.execute("SAVEPOINT levy_write")
            try:
                results.append(work(db))
            except Exception as e:  # noqa: BLE001 - handed to its own caller
                db.execute("ROLLBACK TO levy_write")
                results.append(_Failed(e))
            db.execute("RELEASE levy_write")
        db.execute("COMMIT")
        return results
    except BaseException:
        if db.in_transaction:
            db.execute("ROLLBACK")
        raise


class GroupCommit:
    """Group commit of SQLite writes that need nothing but the connection: a function run on
    aiosqlite's thread (``POST /transactions`` of a sale: :func:`levy.store.rows.insert_committed`).

    A write joins the group waiting for the process's write turn (:class:`WriterQueue`); the
    first to arrive leads: when the turn comes it takes every write queued by then and runs
    them in one trip, one transaction, each in a savepoint (one that fails is rolled back
    alone and its caller gets its error), then one COMMIT. Every caller gets its result only
    after that COMMIT returned; when the COMMIT (or BEGIN) fails, every caller of the group
    gets the error and nothing of it is stored. Writes arriving meanwhile form the next group.

    What it saves at 16 in flight: one BEGIN, COMMIT and trip to aiosqlite's thread per group
    instead of per write, and the WAL frames of the pages the writes share (docs/performance.md).
    With ``synchronous=NORMAL`` in WAL mode a COMMIT is not an fsync, so the saving
    is CPU and the writer's turn, not disk flushes."""

    def __init__(self, queue: WriterQueue) -> None:
        self._queue = queue
        self._pending: dict[asyncio.AbstractEventLoop, list[tuple[Callable[..., Any], asyncio.Future[Any]]]] = {}
        self._leaders: set[asyncio.Task[None]] = set()
        self.group_sizes: collections.deque[int] = collections.deque(maxlen=1000)  # the last groups' sizes

    async def run(self, engine: AsyncEngine, work: Callable[[sqlite3.Connection], Any]) -> Any:
        """``work(connection)`` committed on ``engine``, in a group; its result, or the error it raised."""
        loop = asyncio.get_running_loop()
        future: asyncio.Future[Any] = loop.create_future()
        pending = self._pending.get(loop)
        if pending is None:
            self._pending[loop] = [(work, future)]
            leader = loop.create_task(self._lead(loop, engine))
            self._leaders.add(leader)
            leader.add_done_callback(self._leaders.discard)
        else:
            pending.append((work, future))
        return await future

    async def _lead(self, loop: asyncio.AbstractEventLoop, engine: AsyncEngine) -> None:
        try:
            while self._pending[loop]:
                await self._lead_one(loop, engine)
        finally:
            del self._pending[loop]

    async def _lead_one(self, loop: asyncio.AbstractEventLoop, engine: AsyncEngine) -> None:
        group: list[tuple[Callable[..., Any], asyncio.Future[Any]]] = []
        try:
            async with self._queue.turn():
                group, self._pending[loop] = self._pending[loop], []
                self.group_sizes.append(len(group))
                results = await self._run(engine, group)
        except BaseException as e:
            if not group:  # no write turn within the busy timeout: the writes waiting for it fail
                group, self._pending[loop] = self._pending[loop], []
            for _, future in group:
                if future.done():
                    continue
                if isinstance(e, Exception):
                    future.set_exception(e)
                else:
                    future.cancel()
            if not isinstance(e, Exception):
                raise
            return
        for (_, future), result in zip(group, results, strict=True):
            if future.done():
                continue  # its caller gave up (cancelled); the write is committed all the same
            if isinstance(result, _Failed):
                future.set_exception(result.error)
            else:
                future.set_result(result)

    @staticmethod
    async def _run(engine: AsyncEngine, group: list[tuple[Callable[..., Any], asyncio.Future[Any]]]) -> list[Any]:
        raw = await engine.raw_connection()
        try:
            driver = raw.driver_connection
            results = await driver._execute(_run_group, driver._conn, [work for work, _ in group])
        finally:
            raw.close()
        count_statements(engine, 2 + (2 * len(group) if len(group) > 1 else 0))  # BEGIN, COMMIT; SAVEPOINT, RELEASE
        return results  # type: ignore[no-any-return]


def group_commit(engine: AsyncEngine) -> GroupCommit | None:
    """The process's group commit of SQLite writes on ``engine`` (None: not SQLite through aiosqlite)."""
    state = engine_state(engine)
    if state.group_commit is None and engine.driver == "aiosqlite" and state.writer_queue is not None:
        state.group_commit = GroupCommit(state.writer_queue)
    return state.group_commit


@contextlib.asynccontextmanager
async def transaction(engine: AsyncEngine, *, write: bool) -> AsyncIterator[AsyncConnection]:
    """One database transaction: committed on success, rolled back on error. A write
    transaction on SQLite first waits for its turn in the process's :class:`WriterQueue`."""
    queue = engine_state(engine).writer_queue if write else None
    async with queue.turn() if queue is not None else contextlib.nullcontext(), engine.connect() as conn:
        if write:
            conn = await conn.execution_options(levy_write=True)
        async with conn.begin():
            yield conn
