"""Many rows of a few tables inserted with the driver's own ``executemany``.

SQLAlchemy's ``conn.execute(insert(table), rows)`` works out every row's
parameters in Python (about 5 µs a row) and, on SQLite, makes three or four
trips to aiosqlite's thread per statement; the write path of a 10-line
transaction spent more on that than on its calculation (docs/performance.md,
issue 20). Here the statement text and the columns' bind processors are
worked out once per table and dialect, the rows go to the driver as tuples,
and each table is one ``executemany``: one trip to aiosqlite's thread, or one
pipelined asyncpg call.

On PostgreSQL only inside a transaction the caller's connection has already
begun with a statement of its own (the driver's transaction is open); anything
else goes through SQLAlchemy as before. :func:`insert_together` sends a row and
its children in one trip on SQLite (a transaction with its lines and rows).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from sqlalchemy import Table, insert
from sqlalchemy.engine import Dialect
from sqlalchemy.ext.asyncio import AsyncConnection

from levy.store.db import on_statement

_Plan = tuple[str, tuple[str, ...], tuple[Callable[[Any], Any] | None, ...]]
_PLANS: dict[tuple[str, str, tuple[str, ...]], _Plan] = {}


def _plan(table: Table, dialect: Dialect, unless: tuple[str, ...] = ()) -> _Plan:
    key = (table.name, dialect.name, unless)
    plan = _PLANS.get(key)
    if plan is None:
        cols = tuple(c.name for c in table.columns)
        marks = ", ".join(f"${i}" for i in range(1, len(cols) + 1)) if dialect.name == "postgresql" else ", ".join(
            "?" * len(cols))
        quote = dialect.identifier_preparer.quote
        sql = f"INSERT INTO {quote(table.name)} ({', '.join(quote(c) for c in cols)}) VALUES ({marks})"
        if unless:
            sql += f" ON CONFLICT ({', '.join(quote(c) for c in unless)}) DO NOTHING"
        procs = tuple(c.type.dialect_impl(dialect).bind_processor(dialect) for c in table.columns)
        plan = _PLANS[key] = (sql, cols, procs)
    return plan


def _tuples(rows: Sequence[Mapping[str, Any]], cols: tuple[str, ...],
            procs: tuple[Callable[[Any], Any] | None, ...]) -> list[tuple[Any, ...]]:
    if not any(procs):
        return [tuple(row[c] for c in cols) for row in rows]
    return [tuple(row[c] if p is None else p(row[c]) for c, p in zip(cols, procs, strict=True)) for row in rows]


async def insert_rows(conn: AsyncConnection, table: Table, rows: Sequence[Mapping[str, Any]]) -> None:
    """INSERT ``rows`` (every column of ``table`` in each) in one ``executemany``."""
    if not rows:
        return
    dialect = conn.dialect
    raw = await conn.get_raw_connection()
    adapted, driver = raw.dbapi_connection, raw.driver_connection
    if dialect.name == "sqlite" and hasattr(driver, "executemany"):
        sql, cols, procs = _plan(table, dialect)
        await driver.executemany(sql, _tuples(rows, cols, procs))
    elif dialect.name == "postgresql" and getattr(adapted, "_transaction", None) is not None:
        sql, cols, procs = _plan(table, dialect)
        try:
            await driver.executemany(sql, _tuples(rows, cols, procs))
        except Exception as e:  # noqa: BLE001 - raised again, translated
            adapted._handle_exception(e)  # the driver's error as SQLAlchemy's (IntegrityError, ...)
    else:
        await conn.execute(insert(table), list(rows))
        return
    for hook in on_statement:
        hook()


async def insert_row(conn: AsyncConnection, table: Table, row: Mapping[str, Any], *,
                     unless: tuple[str, ...] = ()) -> bool:
    """INSERT one row (every column of ``table``); with ``unless`` (the columns of a unique
    index) nothing is inserted when a row holds the same values there. Whether it was inserted.
    On SQLite one trip to aiosqlite's thread (SQLAlchemy's execute makes three)."""
    raw = await conn.get_raw_connection()
    driver = raw.driver_connection
    if conn.dialect.name == "sqlite" and hasattr(driver, "execute"):
        sql, cols, procs = _plan(table, conn.dialect, unless)
        cursor = await driver.execute(sql, _tuples((row,), cols, procs)[0])
        for hook in on_statement:
            hook()
        return bool(cursor.rowcount)
    stmt: Any = insert(table)
    if unless:
        from sqlalchemy.dialects import postgresql, sqlite

        dialect_insert = postgresql.insert if conn.dialect.name == "postgresql" else sqlite.insert
        stmt = dialect_insert(table).on_conflict_do_nothing(index_elements=[table.c[c] for c in unless])
    return bool((await conn.execute(stmt, dict(row))).rowcount)


async def insert_together(conn: AsyncConnection, table: Table, row: Mapping[str, Any], *, unless: tuple[str, ...],
                          then: Sequence[tuple[Table, Sequence[Mapping[str, Any]]]]) -> bool:
    """:func:`insert_row`, then, when the row was inserted, :func:`insert_rows` of each of ``then``.
    Whether the row was inserted.

    On SQLite all of it in one trip to aiosqlite's thread (a function run there by its
    ``_execute``, private but present in every aiosqlite release Levy supports): a SQLite write
    transaction holds the process's one writer, and every trip lets the event loop run other
    requests' work before it goes on. Elsewhere, statement by statement."""
    raw = await conn.get_raw_connection()
    driver = raw.driver_connection
    run = getattr(driver, "_execute", None)
    if conn.dialect.name != "sqlite" or run is None or not hasattr(driver, "_conn"):
        if not await insert_row(conn, table, row, unless=unless):
            return False
        for child, rows in then:
            await insert_rows(conn, child, rows)
        return True
    sql, cols, procs = _plan(table, conn.dialect, unless)
    head = (sql, _tuples((row,), cols, procs)[0])
    rest = []
    for child, rows in then:
        if rows:
            child_sql, child_cols, child_procs = _plan(child, conn.dialect)
            rest.append((child_sql, _tuples(rows, child_cols, child_procs)))

    def work() -> bool:
        db = driver._conn
        if db.execute(*head).rowcount == 0:
            return False
        for statement, params in rest:
            db.executemany(statement, params)
        return True

    inserted = bool(await run(work))
    for _ in range(1 + (len(rest) if inserted else 0)):
        for hook in on_statement:
            hook()
    return inserted
