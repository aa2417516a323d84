"""Customers and their exemption certificates in SQL (SQLAlchemy Core, async).

Every query is scoped by ``organization_id``. Uniqueness of the triple
(organization, source, source_account_id, source_id) is the database's job
(unique index); inserts use ``INSERT ... ON CONFLICT DO NOTHING`` on both
PostgreSQL and SQLite, and PostgreSQL locks the rows a write reads
(``SELECT ... FOR UPDATE``). A deleted customer stays as a tombstone
(``deleted_at`` set) that keeps its triple.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from dataclasses import fields
from datetime import datetime
from typing import Any, TypeVar

from sqlalchemy import Select, and_, bindparam, delete, false, insert, null, or_, select, type_coerce, update
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.ext.asyncio import AsyncConnection
from sqlalchemy.types import NullType

from levy.domain.customers import CustomerRecord, Triple
from levy.domain.exemptions import Certificate
from levy.store.rows import contains_text
from levy.store.tables.areas import customers as T
from levy.store.tables.areas import exemption_certificates as C
from levy.store.tables.base import UtcDateTime
from levy.store.tables.console import certificate_documents as D

R = TypeVar("R")

UNIQUE = [T.c.organization_id, T.c.source, T.c.source_account_id, T.c.source_id]
# Columns written from input (the rest are bookkeeping).
VALUE_COLUMNS = ("source", "source_account_id", "source_id", "name", "email", "source_updated_at")


def _from_row(cls: type[R], row: Any) -> R:
    """A record dataclass from a row whose columns include every field."""
    m = row._mapping
    return cls(**{name: m[name] for name in _field_names(cls)})  # type: ignore[call-arg]


@functools.cache
def _field_names(cls: type) -> tuple[str, ...]:
    return tuple(f.name for f in fields(cls))


def to_record(row: Any) -> CustomerRecord:
    return _from_row(CustomerRecord, row)


def to_certificate(row: Any) -> Certificate:
    return _from_row(Certificate, row)


class SqlCustomers:
    def __init__(self, conn: AsyncConnection) -> None:
        self.conn = conn
        self.pg = conn.dialect.name == "postgresql"

    def _lock(self, stmt: Select[Any], lock: bool) -> Select[Any]:
        return stmt.with_for_update() if lock and self.pg else stmt

    def _insert(self) -> Any:
        """INSERT of new customers (rows of ``_new_row``), skipping taken triples. The columns
        every new customer starts with are SQL literals rather than parameters of each row:
        SQLAlchemy's per-parameter processing was most of the CPU of a 1000-row insert."""
        return (
            (postgresql.insert(T) if self.pg else sqlite.insert(T))
            .values(
                merged_into_customer_id=null(), deleted_at=null(), exemption_updated_at=null(),
                override_exempt=false(), override_resale=false(), override_manufacturing=false(),
            )
            .on_conflict_do_nothing(index_elements=UNIQUE)
        )

    # ------------------------------------------------------------ single rows

    async def get(self, org: str, customer_id: str, *, lock: bool = False) -> CustomerRecord | None:
        """The customer, deleted or not (callers decide what a tombstone means)."""
        stmt = select(T).where(T.c.organization_id == org, T.c.id == customer_id)
        row = (await self.conn.execute(self._lock(stmt, lock))).first()
        return to_record(row) if row else None

    async def by_ids(self, org: str, ids: Sequence[str]) -> dict[str, CustomerRecord]:
        """The customers of ``ids`` (deleted too) by id: one query."""
        if not ids:
            return {}
        rows = (await self.conn.execute(select(T).where(T.c.organization_id == org, T.c.id.in_(list(ids))))).all()
        return {r.id: to_record(r) for r in rows}

    async def find(self, org: str, triple: Triple) -> CustomerRecord | None:
        stmt = select(T).where(
            T.c.organization_id == org,
            T.c.source == triple[0],
            T.c.source_account_id == triple[1],
            T.c.source_id == triple[2],
        )
        row = (await self.conn.execute(stmt)).first()
        return to_record(row) if row else None

    async def insert(self, org: str, customer_id: str, values: dict[str, Any], now: datetime) -> bool:
        """Insert one customer; False when the triple is already taken."""
        result = await self.conn.execute(
            self._insert().returning(T.c.id), [_new_row(org, customer_id, values, now)]
        )
        return result.first() is not None

    async def update(self, org: str, customer_id: str, changes: dict[str, Any]) -> None:
        await self.conn.execute(
            update(T).where(T.c.organization_id == org, T.c.id == customer_id).values(**changes)
        )

    async def page(self, org: str, limit: int, starting_after: str | None) -> tuple[list[CustomerRecord], bool]:
        """Active customers, newest first (ids are time-sortable), keyset paginated."""
        stmt = select(T).where(T.c.organization_id == org, T.c.deleted_at.is_(None))
        if starting_after:
            stmt = stmt.where(T.c.id < starting_after)
        rows = (await self.conn.execute(stmt.order_by(T.c.id.desc()).limit(limit + 1))).all()
        return [to_record(r) for r in rows[:limit]], len(rows) > limit

    async def search(self, org: str, text: str, *, deleted: bool, limit: int,
                     starting_after: str | None) -> tuple[list[CustomerRecord], bool]:
        """Customers whose source id, name or email contains ``text`` (any case), newest
        first: the active ones, or the deleted tombstones (the console's lists)."""
        stmt = select(T).where(T.c.organization_id == org,
                               T.c.deleted_at.is_not(None) if deleted else T.c.deleted_at.is_(None))
        if text:
            stmt = stmt.where(contains_text((T.c.source_id, T.c.name, T.c.email), text))
        if starting_after:
            stmt = stmt.where(T.c.id < starting_after)
        rows = (await self.conn.execute(stmt.order_by(T.c.id.desc()).limit(limit + 1))).all()
        return [to_record(r) for r in rows[:limit]], len(rows) > limit

    # ------------------------------------------------------------ bulk (batch upsert)

    async def select_triples(self, org: str, triples: Sequence[Triple], *, lock: bool) -> dict[Triple, CustomerRecord]:
        """Every stored customer (deleted too) holding one of ``triples``: one query,
        rows locked in triple order on PostgreSQL when ``lock`` (every batch locks in
        the same order, so two batches never wait on each other in a cycle)."""
        if not triples:
            return {}
        # Grouped by (source, account), usually one group: ``source_id IN (...)`` binds a
        # third of the parameters of a tuple IN and uses the unique index as well.
        groups: dict[tuple[str, str], list[str]] = {}
        for source, account, source_id in triples:
            groups.setdefault((source, account), []).append(source_id)
        stmt = (
            select(*_RECORD_COLUMNS)
            .where(T.c.organization_id == org)
            .where(or_(*(
                and_(T.c.source == source, T.c.source_account_id == account, T.c.source_id.in_(ids))
                for (source, account), ids in groups.items()
            )))
            .order_by(*UNIQUE[1:])
        )
        rows = (await self.conn.execute(self._lock(stmt, lock))).all()
        records = _bulk_records(rows, self.conn.dialect)
        return {r.triple: r for r in records}

    async def insert_many(self, org: str, rows: list[tuple[str, dict[str, Any]]], now: datetime) -> set[str]:
        """Insert ``(id, values)`` rows in one statement, in the order given, skipping
        taken triples; returns the ids actually inserted."""
        if not rows:
            return set()
        params = [_new_row(org, cid, values, now) for cid, values in rows]
        result = await self.conn.execute(self._insert().returning(T.c.id), params)
        return {r.id for r in result}

    async def update_many(self, org: str, changes: list[tuple[str, dict[str, Any]]], now: datetime) -> None:
        """Set every value column of each ``(id, values)`` (one executemany)."""
        if not changes:
            return
        stmt = (
            update(T)
            .where(T.c.organization_id == bindparam("b_org"), T.c.id == bindparam("b_id"))
            .values({c: bindparam(f"b_{c}") for c in (*VALUE_COLUMNS, "updated_at")})
        )
        params = [
            {"b_org": org, "b_id": cid, "b_updated_at": now, **{f"b_{c}": values.get(c) for c in VALUE_COLUMNS}}
            for cid, values in changes
        ]
        await self.conn.execute(stmt, params)

    # ------------------------------------------------------------ certificates

    async def certificates(self, org: str, customer_id: str) -> list[Certificate]:
        stmt = select(C).where(C.c.organization_id == org, C.c.customer_id == customer_id).order_by(C.c.id)
        return [to_certificate(r) for r in (await self.conn.execute(stmt)).all()]

    async def certificate_page(
        self, org: str, customer_id: str, limit: int, starting_after: str | None
    ) -> tuple[list[Certificate], bool]:
        stmt = select(C).where(C.c.organization_id == org, C.c.customer_id == customer_id)
        if starting_after:
            stmt = stmt.where(C.c.id < starting_after)
        rows = (await self.conn.execute(stmt.order_by(C.c.id.desc()).limit(limit + 1))).all()
        return [to_certificate(r) for r in rows[:limit]], len(rows) > limit

    async def certificate(self, org: str, customer_id: str, certificate_id: str) -> Certificate | None:
        stmt = select(C).where(
            C.c.organization_id == org, C.c.customer_id == customer_id, C.c.id == certificate_id
        )
        row = (await self.conn.execute(stmt)).first()
        return to_certificate(row) if row else None

    async def insert_certificate(self, org: str, cert: Certificate) -> None:
        await self.conn.execute(
            insert(C).values(
                id=cert.id, organization_id=org, customer_id=cert.customer_id, jurisdiction=cert.jurisdiction,
                exemption_type=cert.exemption_type, status=cert.status, starts_at=cert.starts_at,
                expires_at=cert.expires_at, created_at=cert.created_at, updated_at=cert.updated_at,
            )
        )

    async def update_certificate(self, org: str, certificate_id: str, changes: dict[str, Any]) -> None:
        await self.conn.execute(
            update(C).where(C.c.organization_id == org, C.c.id == certificate_id).values(**changes)
        )

    async def delete_certificates(self, org: str, customer_id: str, certificate_id: str | None = None) -> int:
        stmt = delete(C).where(C.c.organization_id == org, C.c.customer_id == customer_id)
        ids = select(C.c.id).where(C.c.organization_id == org, C.c.customer_id == customer_id)
        if certificate_id is not None:
            stmt = stmt.where(C.c.id == certificate_id)
            ids = ids.where(C.c.id == certificate_id)
        # The certificates' documents (uploaded in the console) go with them.
        await self.conn.execute(delete(D).where(D.c.organization_id == org, D.c.certificate_id.in_(ids)))
        return (await self.conn.execute(stmt)).rowcount or 0


# A bulk read of customers (the batch's 1000 rows) selects the record's fields in
# CustomerRecord's order and its datetime columns as the driver returns them; ``_bulk_records``
# converts column by column, each distinct SQLite text once with the column type's own result
# processor (a batch's rows share a few instants; the per-value conversion and building the
# records by name were half of the select's CPU on SQLite).
_RECORD_FIELDS = _field_names(CustomerRecord)
_DATETIME_FIELDS = tuple(i for i, n in enumerate(_RECORD_FIELDS) if isinstance(T.c[n].type, UtcDateTime))
_RECORD_COLUMNS = [
    type_coerce(T.c[n], NullType()).label(n) if i in _DATETIME_FIELDS else T.c[n] for i, n in enumerate(_RECORD_FIELDS)
]


def _bulk_records(rows: Sequence[Any], dialect: Any) -> list[CustomerRecord]:
    """Records from rows of ``_RECORD_COLUMNS``."""
    if not rows:
        return []
    columns: list[Any] = list(zip(*rows))
    for i in _DATETIME_FIELDS:
        column_type = T.c[_RECORD_FIELDS[i]].type
        process = column_type.dialect_impl(dialect).result_processor(dialect, None) or (lambda v: v)
        distinct = set(columns[i])
        if all(type(v) is str or v is None for v in distinct):  # SQLite's text
            converted = {v: process(v) for v in distinct}
            columns[i] = map(converted.__getitem__, columns[i])
        else:  # a driver's datetimes (equal instants may differ in tzinfo): each converted
            columns[i] = map(process, columns[i])
    return list(map(CustomerRecord, *columns))


def _new_row(org: str, customer_id: str, values: dict[str, Any], now: datetime) -> dict[str, Any]:
    """The parameters of one new customer for ``SqlCustomers._insert`` (which sets the rest)."""
    return {
        "id": customer_id,
        "organization_id": org,
        **{c: values.get(c) for c in VALUE_COLUMNS},
        "created_at": now,
        "updated_at": now,
    }


async def certificates_expiring_between(conn: AsyncConnection, start: Any, end: Any,
                                        statuses: Sequence[str]) -> list[tuple[str, Certificate]]:
    """(organization, certificate) of every certificate of an active customer with one of
    ``statuses`` whose ``expires_at`` is from ``start`` to ``end`` (inclusive), every organization
    (the events job, levy.app.event_jobs)."""
    stmt = (
        select(C).join(T, and_(T.c.id == C.c.customer_id, T.c.organization_id == C.c.organization_id))
        .where(C.c.expires_at >= start, C.c.expires_at <= end, C.c.status.in_(list(statuses)),
               T.c.deleted_at.is_(None))
        .order_by(C.c.organization_id, C.c.id)
    )
    return [(r.organization_id, to_certificate(r)) for r in (await conn.execute(stmt)).all()]
