"""Transactions in SQL (SQLAlchemy Core). Every query is scoped by ``organization_id``.

A transaction is written in the caller's one database transaction: its row,
its goods lines, their per-jurisdiction rows and, for tax-only transactions,
the attribution. ``reference_id`` uniqueness is the unique index
``(organization_id, reference_id)``: a violation comes back as the id of the
transaction holding it. Lifecycle moves and credits lock rows with
``SELECT ... FOR UPDATE`` (PostgreSQL; SQLite write transactions are
serialised by ``BEGIN IMMEDIATE``).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from datetime import UTC, date, datetime
from decimal import Decimal
from typing import Any

from google.protobuf import json_format
from sqlalchemy import String, and_, bindparam, delete, exists, func, or_, select, update
from sqlalchemy.dialects import postgresql
from sqlalchemy.exc import IntegrityError
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine

from levy.domain.tax.model import DiscountResult, LineResult, TaxRow, VatCheck
from levy.domain.transactions.records import StoredLine, TransactionRecord
from levy.domain.transactions.rules import ListFilters, TaxState, TransactionSearch
from levy.v1.transactions_pb2 import TransactionLineItem
from levy.store.db import transaction
from levy.store.rows import contains_text, insert_committed, insert_rows, insert_together
from levy.store.tables.areas import customers as customers_t
from levy.store.tables.events import events as events_t
from levy.store.tables.transactions import (
    transaction_line_taxes as taxes_t,
)
from levy.store.tables.transactions import (
    transaction_lines as lines_t,
)
from levy.store.tables.transactions import (
    transaction_tax_only as alloc_t,
)
from levy.store.tables.transactions import (
    transactions as txn_t,
)


def utcnow() -> datetime:
    return datetime.now(UTC)


# -- rows <-> records -----------------------------------------------------------------


def _txn_row(rec: TransactionRecord) -> dict[str, Any]:
    t = rec.tax
    return {
        "id": rec.id,
        "organization_id": rec.organization_id,
        "type": rec.type,
        "status": rec.status,
        "source": rec.source,
        "currency": rec.currency,
        "transaction_date": rec.transaction_date,
        "reference_id": rec.reference_id,
        "parent_transaction_id": rec.parent_transaction_id,
        "parent_reference_id": rec.parent_reference_id,
        "parent_found": rec.parent_found,
        "discount_amount": rec.discount_amount,
        "vendor_discount_amount": rec.vendor_discount_amount,
        "gross_amount": rec.gross_amount,
        "net_amount": rec.net_amount,
        "tax_calculated": t.calculated,
        "tax_provided": t.provided,
        "tax_collected": t.collected,
        "tax_reduction": t.reduction,
        "filing_tax_amount": t.filing_tax_amount,
        "filing_tax_amount_source": t.filing_tax_amount_source,
        "tax_only": rec.tax_only,
        "held_off_reason": rec.held_off_reason,
        "registrations": json.dumps(list(rec.registrations)),
        "exchange_rate": rec.exchange_rate,
        "exchange_rate_date": rec.exchange_rate_date,
        "marketplace_facilitator": rec.marketplace_facilitator,
        "created_at": rec.created_at,
        "updated_at": rec.updated_at,
    }


def _line_rows(rec: TransactionRecord) -> tuple[list[dict[str, Any]], list[dict[str, Any]], list[dict[str, Any]]]:
    lines, taxes, allocs = [], [], []
    for pos, ln in enumerate(rec.lines):
        r = ln.result
        lines.append({
            "transaction_id": rec.id, "position": pos, "organization_id": rec.organization_id,
            "line_id": r.id, "customer_id": ln.customer_id, "product_id": ln.product_id,
            "input": None, "input_message": ln.input,
            "amount": r.amount, "taxable_amount": r.taxable_amount, "tax_amount": r.tax_amount,
            "tax_amount_before_discounts": r.tax_amount_before_discounts,
            "discounts": json.dumps([[d.id, d.amount, d.tax_amount_reduction] for d in r.discounts]),
            "detail": r.detail, "resolution": r.resolution or None, "sourcing": r.sourcing or None,
            "ship_from": json.dumps(ln.ship_from, separators=(",", ":")) if ln.ship_from is not None else None,
            "vat_checks": _checks_json(r.vat_checks),
        })
        for tpos, t in enumerate(r.taxes):
            taxes.append({
                "transaction_id": rec.id, "line_position": pos, "position": tpos,
                "organization_id": rec.organization_id,
                "jurisdiction_code": t.jurisdiction_code, "jurisdiction_name": t.jurisdiction_name,
                "jurisdiction_type": t.jurisdiction_type, "tax_type": t.tax_type, "tax_rate": str(t.tax_rate),
                "taxable_base": t.taxable_base, "tax_amount": t.tax_amount,
                "tax_amount_before_discounts": t.tax_amount_before_discounts, "is_registered": t.is_registered,
                "rule_name": t.rule_name, "exempt_reason": t.exempt_reason, "detail": t.detail,
                "sourcing": t.sourcing or None,
            })
    for apos, (code, amount) in enumerate(rec.allocations):
        allocs.append({"transaction_id": rec.id, "position": apos, "organization_id": rec.organization_id,
                       "jurisdiction_code": code, "tax_amount": amount})
    return lines, taxes, allocs


async def _insert_children(conn: AsyncConnection, rec: TransactionRecord) -> None:
    """The lines, their rows and the attribution: one ``executemany`` each (after the transaction's
    own row, so that the driver's transaction is open: :mod:`levy.store.rows`)."""
    lines, taxes, allocs = _line_rows(rec)
    for table, rows in ((lines_t, lines), (taxes_t, taxes), (alloc_t, allocs)):
        await insert_rows(conn, table, rows)


async def _delete_children(conn: AsyncConnection, organization_id: str, transaction_id: str) -> None:
    for table in (taxes_t, lines_t, alloc_t):
        await conn.execute(
            delete(table).where(table.c.organization_id == organization_id, table.c.transaction_id == transaction_id)
        )


def _checks_json(checks: Sequence[VatCheck]) -> str | None:
    if not checks:
        return None
    return json.dumps([[c.vat_number, c.result, c.checked_on.isoformat(), c.request_identifier, c.detail]
                       for c in checks], separators=(",", ":"))


def _checks(text: str | None) -> tuple[VatCheck, ...]:
    if not text:
        return ()
    return tuple(VatCheck(n, r, date.fromisoformat(d), i, why) for n, r, d, i, why in json.loads(text))


def _from_json(text: str) -> bytes:
    """A line input stored as JSON (before migration 0011) as the serialized message."""
    return json_format.ParseDict(json.loads(text), TransactionLineItem()).SerializeToString(deterministic=True)


def _among(conn: AsyncConnection, column: Any, values: Sequence[str]) -> Any:
    """``column IN values``; on PostgreSQL ``column IN (SELECT unnest($n))``, the values as one
    array. With an ``IN`` list of hundreds of parameters (or ``= ANY($n)``), the plan PostgreSQL
    keeps for the prepared statement, on a table filled faster than autovacuum analyses it, scans
    the organization's rows and compares each with every value one by one: the batch import spent
    137-637 ms per batch of 1,000 reading its reference ids at 30,000 stored, growing with the
    table. As a semi-join on the array's elements it probes the index or hashes them."""
    if conn.dialect.name == "postgresql":
        array = bindparam(None, list(values), type_=postgresql.ARRAY(String()))
        return column.in_(select(func.unnest(array)).scalar_subquery())
    return column.in_(values)


async def _load(conn: AsyncConnection, organization_id: str, rows: Sequence[Any]) -> list[TransactionRecord]:
    """Records of ``rows`` with their lines, rows and attributions (three queries for any number)."""
    if not rows:
        return []
    ids = [r.id for r in rows]
    taxes: dict[tuple[str, int], list[TaxRow]] = {}
    for t in await conn.execute(
        select(taxes_t).where(taxes_t.c.organization_id == organization_id, _among(conn, taxes_t.c.transaction_id, ids))
        .order_by(taxes_t.c.transaction_id, taxes_t.c.line_position, taxes_t.c.position)
    ):
        taxes.setdefault((t.transaction_id, t.line_position), []).append(TaxRow(
            t.jurisdiction_code, t.jurisdiction_name, t.jurisdiction_type, Decimal(t.tax_rate), t.taxable_base,
            t.tax_amount, t.is_registered, t.rule_name, t.detail, t.tax_type, t.exempt_reason,
            t.tax_amount_before_discounts, t.sourcing or "",
        ))
    lines: dict[str, list[StoredLine]] = {}
    for ln in await conn.execute(
        select(lines_t).where(lines_t.c.organization_id == organization_id, _among(conn, lines_t.c.transaction_id, ids))
        .order_by(lines_t.c.transaction_id, lines_t.c.position)
    ):
        result = LineResult(
            ln.line_id, ln.tax_amount, ln.tax_amount_before_discounts,
            tuple(taxes.get((ln.transaction_id, ln.position), ())),
            tuple(DiscountResult(*d) for d in json.loads(ln.discounts)),
            ln.amount, ln.taxable_amount, False, ln.detail, ln.resolution or "", ln.sourcing or "",
            vat_checks=_checks(ln.vat_checks),
        )
        lines.setdefault(ln.transaction_id, []).append(
            StoredLine(ln.input_message if ln.input_message is not None else _from_json(ln.input), result,
                       ln.customer_id, ln.product_id,
                       json.loads(ln.ship_from) if ln.ship_from else None)
        )
    allocs: dict[str, list[tuple[str, int]]] = {}
    for a in await conn.execute(
        select(alloc_t).where(alloc_t.c.organization_id == organization_id, _among(conn, alloc_t.c.transaction_id, ids))
        .order_by(alloc_t.c.transaction_id, alloc_t.c.position)
    ):
        allocs.setdefault(a.transaction_id, []).append((a.jurisdiction_code, a.tax_amount))
    return [
        TransactionRecord(
            id=r.id, organization_id=r.organization_id, type=r.type, status=r.status, source=r.source,
            currency=r.currency, transaction_date=r.transaction_date,
            tax=TaxState(r.tax_calculated, r.tax_provided, r.tax_collected, r.tax_reduction),
            reference_id=r.reference_id, parent_transaction_id=r.parent_transaction_id,
            parent_reference_id=r.parent_reference_id, parent_found=r.parent_found,
            discount_amount=r.discount_amount, vendor_discount_amount=r.vendor_discount_amount,
            lines=tuple(lines.get(r.id, ())), tax_only=r.tax_only, held_off_reason=r.held_off_reason,
            allocations=tuple(allocs.get(r.id, ())), registrations=tuple(json.loads(r.registrations)),
            created_at=r.created_at, updated_at=r.updated_at, exchange_rate=r.exchange_rate,
            exchange_rate_date=r.exchange_rate_date, marketplace_facilitator=r.marketplace_facilitator,
        )
        for r in rows
    ]


# -- reads ---------------------------------------------------------------------------------


async def _one(conn: AsyncConnection, organization_id: str, condition: Any, for_update: bool) -> TransactionRecord | None:
    q = select(txn_t).where(txn_t.c.organization_id == organization_id, condition)
    if for_update:
        q = q.with_for_update()
    row = (await conn.execute(q)).first()
    return (await _load(conn, organization_id, [row]))[0] if row else None


async def get_transaction(
    conn: AsyncConnection, organization_id: str, transaction_id: str, *, for_update: bool = False
) -> TransactionRecord | None:
    return await _one(conn, organization_id, txn_t.c.id == transaction_id, for_update)


async def find_by_reference(
    conn: AsyncConnection, organization_id: str, reference_id: str, *, for_update: bool = False
) -> TransactionRecord | None:
    return await _one(conn, organization_id, txn_t.c.reference_id == reference_id, for_update)


async def id_of_reference(conn: AsyncConnection, organization_id: str, reference_id: str) -> str | None:
    return (await conn.execute(
        select(txn_t.c.id).where(txn_t.c.organization_id == organization_id, txn_t.c.reference_id == reference_id)
    )).scalar()


async def credits_of(
    conn: AsyncConnection, organization_id: str, parent_id: str, *, exclude_id: str | None = None
) -> list[TransactionRecord]:
    """The parent's credits that are not void (``exclude_id`` left out), with their lines, oldest first.

    The caller holds the parent's row lock (``FOR UPDATE``): a credit is created or
    changed only with it held, so the set read here cannot grow before the caller commits.
    """
    q = select(txn_t).where(
        txn_t.c.organization_id == organization_id,
        txn_t.c.parent_transaction_id == parent_id,
        txn_t.c.parent_found.is_(True),
        txn_t.c.type == "credit",
        txn_t.c.status != "void",
    )
    if exclude_id is not None:
        q = q.where(txn_t.c.id != exclude_id)
    rows = (await conn.execute(q.order_by(txn_t.c.id))).all()
    return await _load(conn, organization_id, rows)


def _filter_conditions(f: ListFilters) -> list[Any]:
    """The status, type, source and date conditions of ``f`` (the list's and the search's)."""
    out = []
    if f.status:
        out.append(txn_t.c.status == f.status)
    if f.type:
        out.append(txn_t.c.type == f.type)
    if f.source:
        out.append(txn_t.c.source == f.source)
    if f.transaction_date_from is not None:
        out.append(txn_t.c.transaction_date >= f.transaction_date_from)
    if f.transaction_date_to is not None:
        out.append(txn_t.c.transaction_date < f.transaction_date_to)
    return out


async def list_transactions(
    conn: AsyncConnection, organization_id: str, filters: ListFilters, limit: int, starting_after: str | None
) -> tuple[list[TransactionRecord], bool]:
    """Newest first by id (keyset), with the filters of ``GET /transactions`` combined with AND."""
    q = select(txn_t).where(txn_t.c.organization_id == organization_id)
    if starting_after:
        q = q.where(txn_t.c.id < starting_after)
    q = q.where(*_filter_conditions(filters))
    if filters.reference_id:
        q = q.where(txn_t.c.reference_id == filters.reference_id)
    if filters.customer_id:
        q = q.where(exists().where(
            lines_t.c.organization_id == organization_id,
            lines_t.c.customer_id == filters.customer_id,
            lines_t.c.transaction_id == txn_t.c.id,
        ))
    rows = (await conn.execute(q.order_by(txn_t.c.id.desc()).limit(limit + 1))).all()
    records = await _load(conn, organization_id, rows[:limit])
    return records, len(rows) > limit


async def search_transactions(
    conn: AsyncConnection, organization_id: str, search: TransactionSearch, limit: int, starting_after: str | None
) -> tuple[list[TransactionRecord], bool]:
    """The console's search (:class:`levy.domain.transactions.rules.TransactionSearch`): newest first by
    transaction date, then id (keyset: ``starting_after`` is the last id of the previous page)."""
    q = _search_query(organization_id, search)
    if starting_after:
        last = select(txn_t.c.transaction_date).where(
            txn_t.c.organization_id == organization_id, txn_t.c.id == starting_after).scalar_subquery()
        q = q.where(or_(txn_t.c.transaction_date < last,
                        and_(txn_t.c.transaction_date == last, txn_t.c.id < starting_after)))
    order = (txn_t.c.transaction_date.desc(), txn_t.c.id.desc())
    rows = (await conn.execute(q.order_by(*order).limit(limit + 1))).all()
    return await _load(conn, organization_id, rows[:limit]), len(rows) > limit


async def count_transactions(conn: AsyncConnection, organization_id: str, search: TransactionSearch) -> int:
    """How many transactions the console's search finds (every page)."""
    q = _search_query(organization_id, search).with_only_columns(txn_t.c.id)
    return int((await conn.execute(select(func.count()).select_from(q.subquery()))).scalar_one())


def _search_query(organization_id: str, search: TransactionSearch) -> Any:
    q = select(txn_t).where(txn_t.c.organization_id == organization_id)
    q = q.where(*_filter_conditions(search.filters))
    if search.reference_text:
        q = q.where(contains_text((txn_t.c.reference_id,), search.reference_text))
    if search.customer_text:
        line = exists().where(lines_t.c.organization_id == organization_id, lines_t.c.transaction_id == txn_t.c.id)
        if search.customer_id:
            q = q.where(line.where(lines_t.c.customer_id == search.customer_id))
        else:
            matching = select(customers_t.c.id).where(
                customers_t.c.organization_id == organization_id,
                contains_text((customers_t.c.source_id, customers_t.c.name, customers_t.c.email), search.customer_text))
            q = q.where(line.where(lines_t.c.customer_id.in_(matching)))
    if search.state:
        q = q.where(exists().where(
            taxes_t.c.organization_id == organization_id,
            taxes_t.c.transaction_id == txn_t.c.id,
            or_(taxes_t.c.jurisdiction_code.like(f"US-__-{search.state}"),
                taxes_t.c.jurisdiction_code.like(f"US-__-{search.state}-%")),
        ))
    return q


async def marked_products(conn: AsyncConnection, organization_id: str, product_ids: Iterable[str]) -> set[str]:
    """Of ``product_ids``, those marked ``SALES_TAX`` now."""
    from levy.store.calc_reads import products_by_id

    rows = await products_by_id(conn, organization_id, product_ids)
    return {pid for pid, r in rows.items() if r.marked_sales_tax or r.tax_codes == ("SALES_TAX",)}


# -- writes --------------------------------------------------------------------------------


#: Rows of other tables written with a new transaction, only when it is inserted (its events).
Extra = tuple[tuple[Any, Sequence[dict[str, Any]]], ...]


def _insert_parts(rec: TransactionRecord, extra: Extra = ()) -> tuple[tuple[str, ...], dict[str, Any],
                                                                       tuple[tuple[Any, Any], ...]]:
    # When the reference id may be taken, the unique index ``(organization_id, reference_id)``
    # decides in the one statement (nothing inserted when it is), with no savepoint around it.
    unless = ("organization_id", "reference_id") if rec.reference_id is not None else ()
    lines, taxes, allocs = _line_rows(rec)
    return unless, _txn_row(rec), ((lines_t, lines), (taxes_t, taxes), (alloc_t, allocs), *extra)


async def _holder(conn: AsyncConnection, rec: TransactionRecord) -> str:
    existing = await id_of_reference(conn, rec.organization_id, rec.reference_id or "")
    if existing is None:  # pragma: no cover - the conflict was not on the reference id
        raise RuntimeError(f"transaction {rec.id} was not inserted")
    return existing


async def insert_transaction(conn: AsyncConnection, rec: TransactionRecord, extra: Extra = ()) -> str | None:
    """Insert ``rec`` with its lines: one statement for the transaction, one for its lines,
    one for their rows (and one for a tax-only attribution, one for each table of ``extra``).
    Returns None, or the id of the transaction that already holds ``rec.reference_id`` (the
    unique index decides, so two concurrent creates of one reference yield one transaction)."""
    unless, row, children = _insert_parts(rec, extra)
    if not await insert_together(conn, txn_t, row, unless=unless, then=children):
        return await _holder(conn, rec)
    return None


async def insert_transaction_committed(engine: AsyncEngine, rec: TransactionRecord, extra: Extra = ()) -> str | None:
    """:func:`insert_transaction` in a write transaction of its own, committed when this returns
    None (``POST /transactions`` of a sale: one trip to SQLite's thread, one PostgreSQL statement,
    :func:`levy.store.rows.insert_committed`). When the reference id is held, nothing is written
    and the holder's id is returned (read after, in a read transaction). ``extra``: as
    :func:`insert_transaction`'s, in the same statement."""
    unless, row, children = _insert_parts(rec, extra)
    if await insert_committed(engine, txn_t, row, unless=unless, then=children):
        return None
    async with transaction(engine, write=False) as conn:
        return await _holder(conn, rec)


async def update_transaction(conn: AsyncConnection, rec: TransactionRecord, *, lines_changed: bool,
                             reference_changed: bool = True) -> str | None:
    """Write ``rec`` over its row (and its lines when ``lines_changed``).

    Returns None, or the id of the transaction already holding a changed ``reference_id``
    (``reference_changed=False``: the caller knows it did not change; no savepoint around the
    UPDATE then, since the unique index cannot refuse it).
    """
    values = _txn_row(rec)
    for k in ("id", "organization_id", "created_at"):
        values.pop(k)
    statement = update(txn_t).where(txn_t.c.organization_id == rec.organization_id, txn_t.c.id == rec.id)
    if not reference_changed:
        await conn.execute(statement.values(**values))
        if lines_changed:
            await _delete_children(conn, rec.organization_id, rec.id)
            await _insert_children(conn, rec)
        return None
    try:
        async with conn.begin_nested():
            await conn.execute(statement.values(**values))
    except IntegrityError:
        if rec.reference_id is None:
            raise
        existing = await id_of_reference(conn, rec.organization_id, rec.reference_id)
        if existing is None or existing == rec.id:
            raise
        return existing
    if lines_changed:
        await _delete_children(conn, rec.organization_id, rec.id)
        await _insert_children(conn, rec)
    return None


async def _rows_among(conn: AsyncConnection, organization_id: str, column: Any, values: Iterable[str]) -> list[Any]:
    """The organization's transaction rows whose ``column`` is among ``values`` (one query per 500
    values on SQLite, one on PostgreSQL: :func:`_among`)."""
    wanted = list(dict.fromkeys(values))
    rows: list[Any] = []
    step = (len(wanted) or 1) if conn.dialect.name == "postgresql" else 500
    for start in range(0, len(wanted), step):
        rows.extend((await conn.execute(select(txn_t).where(
            txn_t.c.organization_id == organization_id, _among(conn, column, wanted[start:start + step])
        ))).all())
    return rows


async def by_references(conn: AsyncConnection, organization_id: str, references: Iterable[str]) -> dict[str, TransactionRecord]:
    """The stored transactions holding any of ``references``, by reference id (:func:`_rows_among`,
    plus the three queries of their lines)."""
    rows = await _rows_among(conn, organization_id, txn_t.c.reference_id, references)
    return {r.reference_id: r for r in await _load(conn, organization_id, rows)}


async def by_ids(conn: AsyncConnection, organization_id: str, transaction_ids: Iterable[str]) -> dict[str, TransactionRecord]:
    """The stored transactions of ``transaction_ids`` (those that exist), by id, with their lines."""
    rows = await _rows_among(conn, organization_id, txn_t.c.id, transaction_ids)
    return {r.id: r for r in await _load(conn, organization_id, rows)}


def reference_order(rec: TransactionRecord) -> tuple[bool, str]:
    """The sort key of the order in which every multi-row insert takes the unique index
    ``(organization_id, reference_id)``: by reference id, those without one last. Two overlapping
    batches that took the index's entries in their own orders deadlocked on PostgreSQL (each waiting
    for an entry the other held, until the retries gave up with 503); in one order, the later one
    waits for the earlier one's commit, then finds the reference stored."""
    return rec.reference_id is None, rec.reference_id or ""


def new_rows(recs: Sequence[TransactionRecord]) -> dict[str, list[dict[str, Any]]]:
    """The rows of the new transactions ``recs`` by table, in the order :func:`insert_new_rows`
    inserts them (the transactions in :func:`reference_order`): plain values, so that they pickle
    fast (the import command's planner process hands them to the process that writes them)."""
    recs = sorted(recs, key=reference_order)
    out: dict[str, list[dict[str, Any]]] = {txn_t.name: [_txn_row(r) for r in recs]}
    children: tuple[list[dict[str, Any]], ...] = ([], [], [])
    for r in recs:
        for into, rows in zip(children, _line_rows(r), strict=True):
            into.extend(rows)
    for table, rows in zip((lines_t, taxes_t, alloc_t), children, strict=True):
        out[table.name] = rows
    return out


#: The tables of :func:`new_rows`, and the events the import command's planners add to them
#: (:func:`levy.app.transactions_batch.handed_over`), inserted after the transactions.
_NEW_ROW_TABLES = {t.name: t for t in (txn_t, lines_t, taxes_t, alloc_t, events_t)}


async def insert_new_rows(conn: AsyncConnection, rows: dict[str, list[dict[str, Any]]]) -> None:
    """Insert :func:`new_rows`: one statement per table. A reference id already held raises
    ``IntegrityError``."""
    for name, table_rows in rows.items():
        await insert_rows(conn, _NEW_ROW_TABLES[name], table_rows)


async def insert_many(conn: AsyncConnection, recs: Sequence[TransactionRecord]) -> None:
    """Insert new transactions with their lines, rows and attributions: one statement per table
    whatever their number (the batch import). A reference id already held raises ``IntegrityError``.

    Each table through the driver's own ``executemany`` (:func:`levy.store.rows.insert_rows`, as
    ``POST /transactions``), whose errors come back as SQLAlchemy's."""
    if recs:
        await insert_new_rows(conn, new_rows(recs))
