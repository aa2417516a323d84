"""Many rows of a few tables inserted with the driver's own ``executemany``.

SQLAlchemy's ``conn.execute(insert(table), rows)`` works out every row's
parameters in Python (about 5 µs a row) and, on SQLite, makes three or four
trips to aiosqlite's thread per statement; the write path of a 10-line
transaction spent more on that than on its calculation (docs/performance.md).
Here the statement text and the columns' bind processors are
worked out once per table and dialect, the rows go to the driver as tuples,
and each table is one ``executemany``: one trip to aiosqlite's thread, or one
pipelined asyncpg call.

On PostgreSQL only inside a transaction the caller's connection has already
begun with a statement of its own (the driver's transaction is open); anything
else goes through SQLAlchemy as before. :func:`insert_together` sends a row and
its children in one trip on SQLite (a transaction with its lines and rows);
:func:`insert_committed` does the same in a write transaction of its own, with
its BEGIN and COMMIT in that trip (SQLite) or as one statement (PostgreSQL).
"""

from __future__ import annotations

import functools
import operator
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import orjson

from sqlalchemy import ColumnElement, Table, func, insert, or_
from sqlalchemy import exc as sa_exc
from sqlalchemy.engine import Dialect
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine

from levy.store.db import count_statements, group_commit, is_unavailable, transaction

_Plan = tuple[str, tuple[str, ...], tuple[Callable[[Any], Any] | None, ...]]
_PLANS: dict[tuple[str, str, tuple[str, ...]], _Plan] = {}


def _written(table: Table) -> list[Any]:
    """The columns an insert names: all but those the database fills (``info={"generated": True}``,
    such as the events' ``sequence``)."""
    return [c for c in table.columns if not c.info.get("generated")]


def _plan(table: Table, dialect: Dialect, unless: tuple[str, ...] = ()) -> _Plan:
    key = (table.name, dialect.name, unless)
    plan = _PLANS.get(key)
    if plan is None:
        columns = _written(table)
        cols = tuple(c.name for c in columns)
        marks = ", ".join(f"${i}" for i in range(1, len(cols) + 1)) if dialect.name == "postgresql" else ", ".join(
            "?" * len(cols))
        quote = dialect.identifier_preparer.quote
        sql = f"INSERT INTO {quote(table.name)} ({', '.join(quote(c) for c in cols)}) VALUES ({marks})"
        if unless:
            sql += f" ON CONFLICT ({', '.join(quote(c) for c in unless)}) DO NOTHING"
        procs = tuple(c.type.dialect_impl(dialect).bind_processor(dialect) for c in columns)
        plan = _PLANS[key] = (sql, cols, procs)
    return plan


def _tuples(rows: Sequence[Mapping[str, Any]], cols: tuple[str, ...],
            procs: tuple[Callable[[Any], Any] | None, ...]) -> list[tuple[Any, ...]]:
    """``rows`` as tuples in ``cols`` order, each value through its column's bind processor
    (when it has one: on SQLite a row's datetimes and booleans; most columns have none)."""
    get = operator.itemgetter(*cols) if len(cols) > 1 else (lambda row: (row[cols[0]],))
    converters = [(i, p) for i, p in enumerate(procs) if p is not None]
    if not converters:
        return [get(row) for row in rows]
    out = []
    for row in rows:
        values = list(get(row))
        for i, p in converters:
            values[i] = p(values[i])
        out.append(tuple(values))
    return out


def _as_sqlalchemy_error(dialect: Dialect, adapted: Any, sql: str, error: Exception) -> Exception:
    """A driver's error as SQLAlchemy's own (``IntegrityError``, ``OperationalError``, ...), as
    ``conn.execute`` raises it, the DB-API's error kept as ``orig`` (asyncpg's errors are first
    turned into the DB-API's by SQLAlchemy's adapter, ``adapted``)."""
    if dialect.name == "postgresql":
        try:
            adapted._handle_exception(error)
        except Exception as dbapi_error:  # noqa: BLE001 - what it raises is the translation
            error = dbapi_error
    return sa_exc.DBAPIError.instance(sql, None, error, dialect.loaded_dbapi.Error, dialect=dialect)


async def insert_rows(conn: AsyncConnection, table: Table, rows: Sequence[Mapping[str, Any]]) -> None:
    """INSERT ``rows`` (every column of ``table`` in each) in one ``executemany``."""
    if not rows:
        return
    dialect = conn.dialect
    raw = await conn.get_raw_connection()
    adapted, driver = raw.dbapi_connection, raw.driver_connection
    if (dialect.name == "sqlite" and hasattr(driver, "executemany")) or (
            dialect.name == "postgresql" and getattr(adapted, "_transaction", None) is not None):
        sql, cols, procs = _plan(table, dialect)
        try:
            await driver.executemany(sql, _tuples(rows, cols, procs))
        except Exception as e:  # noqa: BLE001 - raised again, as SQLAlchemy's (IntegrityError, ...)
            raise _as_sqlalchemy_error(dialect, adapted, sql, e) from e
    else:
        await conn.execute(insert(table), list(rows))
        return
    count_statements(conn.engine)


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
        count_statements(conn.engine)
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
    head, rest = _sqlite_plans(conn.dialect, table, row, unless, then)
    inserted = bool(await run(_sqlite_work, driver._conn, head, rest))
    count_statements(conn.engine, 1 + (len(rest) if inserted else 0))
    return inserted


def _sqlite_work(db: Any, head: tuple[str, tuple[Any, ...]],
                 rest: Sequence[tuple[str, list[tuple[Any, ...]]]]) -> bool:
    """Run on aiosqlite's thread, in the caller's transaction: the row, then (when it was
    inserted) each child ``executemany``. Whether the row was inserted."""
    if db.execute(*head).rowcount == 0:
        return False
    for statement, params in rest:
        db.executemany(statement, params)
    return True


def _sqlite_plans(dialect: Dialect, table: Table, row: Mapping[str, Any], unless: tuple[str, ...],
                  then: Sequence[tuple[Table, Sequence[Mapping[str, Any]]]]
                  ) -> tuple[tuple[str, tuple[Any, ...]], list[tuple[str, list[tuple[Any, ...]]]]]:
    sql, cols, procs = _plan(table, dialect, unless)
    head = (sql, _tuples((row,), cols, procs)[0])
    rest = []
    for child, rows in then:
        if rows:
            child_sql, child_cols, child_procs = _plan(child, dialect)
            rest.append((child_sql, _tuples(rows, child_cols, child_procs)))
    return head, rest


def _pg_tree_args(dialect: Dialect, table: Table, row: Mapping[str, Any], unless: tuple[str, ...],
                  then: Sequence[tuple[Table, Sequence[Mapping[str, Any]]]]) -> list[Any]:
    """The parameters of :func:`_pg_tree`: the row's values, then each child's rows as JSON."""
    _, cols, procs = _plan(table, dialect, unless)
    return [*_tuples((row,), cols, procs)[0], *(_json_rows(dialect, child, rows) for child, rows in then)]


_TREES: dict[tuple[str, ...], str] = {}


def _json_bytea(value: Any) -> str:
    """``bytes`` in the JSON of :func:`_pg_tree`: PostgreSQL's text form of ``bytea`` (hex)."""
    if isinstance(value, bytes):
        return "\\x" + value.hex()
    raise TypeError(f"{type(value).__name__} in a row sent as JSON")


def _json_rows(dialect: Dialect, table: Table, rows: Sequence[Mapping[str, Any]]) -> str:
    """``rows`` of ``table`` as one JSON array of objects for :func:`_pg_tree`, each value through
    its column's bind processor when it has one."""
    _, cols, procs = _plan(table, dialect)
    converters = [(c, p) for c, p in zip(cols, procs, strict=True) if p is not None]
    if converters:
        converted = []
        for row in rows:
            values = dict(row)
            for c, p in converters:
                values[c] = p(values[c])
            converted.append(values)
        rows = converted
    return orjson.dumps(rows, default=_json_bytea).decode()


def _pg_tree(dialect: Dialect, table: Table, unless: tuple[str, ...], children: tuple[Table, ...]) -> str:
    """One PostgreSQL statement inserting a row and, when it was inserted, its children's rows
    (each child's rows sent as one JSON array of objects), answering 1 or 0:

        WITH head AS (INSERT INTO t (...) VALUES ($1, ...) [ON CONFLICT (...) DO NOTHING] RETURNING 1),
             c0 AS (INSERT INTO child (...) SELECT ... FROM json_populate_recordset(NULL::child, $n::json)
                    WHERE EXISTS (SELECT FROM head)),
             ...
        SELECT count(*) FROM head

    Foreign keys from the children to the row hold: PostgreSQL checks them at the end of the
    statement. The children's values go as JSON after their columns' bind processors
    (:func:`_json_rows`; bytes as ``bytea``'s hex text). JSON rather than one array per column: asyncpg checks every element of an array
    in Python (0.5 ms for the 43 rows of a 10-line transaction), ``orjson`` writes the lot in
    about 20 us. The statement text depends only on the tables: asyncpg prepares it once per
    connection."""
    key = (table.name, *unless, "|", *(c.name for c in children))
    sql = _TREES.get(key)
    if sql is None:
        quote = dialect.identifier_preparer.quote
        head_sql, cols, _ = _plan(table, dialect, unless)
        parts = [f"head AS ({head_sql} RETURNING 1)"]
        for i, child in enumerate(children, start=len(cols) + 1):
            names = ", ".join(quote(c.name) for c in _written(child))
            parts.append(f"c{i} AS (INSERT INTO {quote(child.name)} ({names}) SELECT {names} FROM "
                         f"json_populate_recordset(NULL::{quote(child.name)}, ${i}::json) WHERE EXISTS (SELECT FROM head))")
        sql = _TREES[key] = "WITH " + ", ".join(parts) + " SELECT count(*) FROM head"
    return sql


async def insert_committed(engine: AsyncEngine, table: Table, row: Mapping[str, Any], *, unless: tuple[str, ...],
                           then: Sequence[tuple[Table, Sequence[Mapping[str, Any]]]]) -> bool:
    """:func:`insert_together` in a write transaction of its own, committed before this returns:
    whether the row was inserted (when not, nothing was written).

    This is the write of ``POST /transactions``: a unit of work through SQLAlchemy
    adds its BEGIN and COMMIT as trips of their own and about 0.3 ms of server CPU. On SQLite
    the inserts join the process's group commit (:class:`levy.store.db.GroupCommit`): with
    the writes queued with them, in one trip to aiosqlite's thread, BEGIN IMMEDIATE, each in
    a savepoint, COMMIT. On PostgreSQL it is one statement (:func:`_pg_tree`), atomic by
    itself, in one round trip.
    Other drivers: a unit of work with :func:`insert_together`."""
    dialect = engine.dialect
    group = group_commit(engine)
    if group is not None:
        head, rest = _sqlite_plans(dialect, table, row, unless, then)
        inserted = bool(await group.run(engine, functools.partial(_sqlite_work, head=head, rest=rest)))
        count_statements(engine, 1 + (len(rest) if inserted else 0))  # the row and its children (the group counts the rest)
        return inserted
    if dialect.name == "postgresql" and engine.driver == "asyncpg":
        sql = _pg_tree(dialect, table, unless, tuple(child for child, _ in then))
        args = _pg_tree_args(dialect, table, row, unless, then)
        raw = await engine.raw_connection()
        try:
            adapted, driver = raw.dbapi_connection, raw.driver_connection
            try:
                inserted = bool(await driver.fetchval(sql, *args))
            except Exception as e:  # noqa: BLE001 - raised again, as SQLAlchemy's (IntegrityError, ...)
                if is_unavailable(e):
                    raw.invalidate(e)  # as SQLAlchemy's own execute does with a dead connection
                raise _as_sqlalchemy_error(dialect, adapted, sql, e) from e
            count_statements(engine, 1)
            return inserted
        finally:
            raw.close()
    async with transaction(engine, write=True) as conn:
        inserted = await insert_together(conn, table, row, unless=unless, then=then)
        if not inserted:
            await conn.rollback()
        return inserted


def contains_text(columns: Sequence[Any], text: str) -> ColumnElement[bool]:
    """Any of ``columns`` contains ``text``, in any case (``%`` and ``_`` in it are literal): the
    console's searches, on SQLite and PostgreSQL alike."""
    pattern = "%" + text.lower().replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") + "%"
    return or_(*(func.lower(c).like(pattern, escape="\\") for c in columns))
