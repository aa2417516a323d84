"""Events in SQL: the outbox rows, written in the caller's transaction, and the
reads of ``GET /events``. Every query is scoped by ``organization_id``."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import delete, func, or_, select
from sqlalchemy.ext.asyncio import AsyncConnection

from levy.domain.events import EventFilters
from levy.store.rows import insert_row, insert_rows
from levy.store.tables.events import event_marks as marks_t
from levy.store.tables.events import events as events_t
from levy.store.tables.events import webhook_attempts as attempts_t
from levy.store.tables.events import webhook_deliveries as deliveries_t
from levy.store.tables.foundation import organizations as organizations_t


@dataclass(frozen=True)
class EventRecord:
    id: str
    sequence: int
    organization_id: str
    type: str
    object_type: str
    object_id: str
    created_at: datetime
    data: bytes


def event_record(row: Any) -> EventRecord:
    return EventRecord(row.id, row.sequence, row.organization_id, row.type, row.object_type, row.object_id,
                       row.created_at, row.data)


async def insert(conn: AsyncConnection, rows: Sequence[Mapping[str, Any]]) -> None:
    """Insert event rows (:func:`levy.app.events.row`) in the caller's transaction: one statement."""
    await insert_rows(conn, events_t, rows)


async def get_event(conn: AsyncConnection, organization_id: str, event_id: str) -> EventRecord | None:
    row = (await conn.execute(select(events_t).where(
        events_t.c.organization_id == organization_id, events_t.c.id == event_id))).first()
    return event_record(row) if row else None


async def list_events(conn: AsyncConnection, organization_id: str, filters: EventFilters, limit: int,
                      starting_after: str | None) -> tuple[list[EventRecord], bool]:
    """Newest first (by ``sequence``, keyset after the event ``starting_after``), with the filters."""
    q = select(events_t).where(events_t.c.organization_id == organization_id)
    if starting_after:
        last = select(events_t.c.sequence).where(
            events_t.c.organization_id == organization_id, events_t.c.id == starting_after).scalar_subquery()
        q = q.where(events_t.c.sequence < last)
    if filters.type:
        q = q.where(events_t.c.type == filters.type)
    if filters.created_from is not None:
        q = q.where(events_t.c.created_at >= filters.created_from)
    if filters.created_to is not None:
        q = q.where(events_t.c.created_at < filters.created_to)
    rows = (await conn.execute(q.order_by(events_t.c.sequence.desc()).limit(limit + 1))).all()
    return [event_record(r) for r in rows[:limit]], len(rows) > limit


async def organization_ids(conn: AsyncConnection) -> list[str]:
    return list((await conn.execute(select(organizations_t.c.id).order_by(organizations_t.c.id))).scalars())


async def mark(conn: AsyncConnection, organization_id: str, key: str, event_id: str, at: datetime) -> bool:
    """Record that the event ``key`` names was produced (in the event's transaction); False when a
    mark holds the key already (another pass or replica produced it: the caller writes nothing).
    On PostgreSQL a concurrent transaction inserting the same key waits for this one to end."""
    return await insert_row(conn, marks_t, {"organization_id": organization_id, "key": key, "event_id": event_id,
                                            "created_at": at}, unless=("organization_id", "key"))


#: Deliveries a pass of the events job prunes at most (the rest go in the next passes).
PRUNE_BATCH = 10_000


async def prune(conn: AsyncConnection, before: datetime) -> tuple[int, int]:
    """Delete the events created before ``before`` that the worker has handed out and whose
    deliveries are all settled and as old, then the deliveries created before it that are settled
    (succeeded or failed) with their attempts. In that order, so that a delivery settled between
    the two statements (PostgreSQL reads each statement's own snapshot) never outlives its event:
    at most its event outlives it until the next pass. Up to :data:`PRUNE_BATCH` deliveries a
    pass. (events, deliveries) deleted."""
    needed = select(deliveries_t.c.event_id).where(
        or_(deliveries_t.c.status == "pending", deliveries_t.c.created_at >= before))
    gone_events = (await conn.execute(delete(events_t).where(
        events_t.c.created_at < before, events_t.c.dispatched.is_(True), events_t.c.id.not_in(needed)))).rowcount
    old = select(deliveries_t.c.id).where(deliveries_t.c.created_at < before, deliveries_t.c.status != "pending")
    if conn.dialect.name == "postgresql":  # a replay of one of them waits, then finds it gone
        old = old.with_for_update()
    ids = list((await conn.execute(old.limit(PRUNE_BATCH))).scalars())
    if ids:
        await conn.execute(delete(attempts_t).where(attempts_t.c.delivery_id.in_(ids)))
        await conn.execute(delete(deliveries_t).where(deliveries_t.c.id.in_(ids)))
    return gone_events, len(ids)


async def sequence_of(conn: AsyncConnection, organization_id: str, event_id: str) -> int | None:
    return (await conn.execute(select(events_t.c.sequence).where(
        events_t.c.organization_id == organization_id, events_t.c.id == event_id))).scalar()


async def last_sequence(conn: AsyncConnection) -> int:
    return (await conn.execute(select(func.max(events_t.c.sequence)))).scalar() or 0


async def sequences_after(conn: AsyncConnection, after: int, also: Sequence[int],
                          limit: int) -> list[tuple[int, str, str]]:
    """(sequence, organization, type) of the events after ``after`` (the first ``limit``) and of
    those among ``also``, every organization, by sequence (WatchEvents tells gaps from them)."""
    q = select(events_t.c.sequence, events_t.c.organization_id, events_t.c.type)
    rows = list((await conn.execute(q.where(events_t.c.sequence > after).order_by(events_t.c.sequence)
                                    .limit(limit))).all())
    if also:
        rows += (await conn.execute(q.where(events_t.c.sequence.in_(list(also))))).all()
    return sorted((r.sequence, r.organization_id, r.type) for r in rows)


async def by_sequences(conn: AsyncConnection, organization_id: str, sequences: Sequence[int]) -> list[EventRecord]:
    rows = (await conn.execute(select(events_t).where(
        events_t.c.organization_id == organization_id, events_t.c.sequence.in_(list(sequences)))
        .order_by(events_t.c.sequence))).all()
    return [event_record(r) for r in rows]
