"""Webhook endpoints, deliveries and attempts in SQL. Every query the API makes is
scoped by ``organization_id``; the delivery worker's work across organizations:

- :func:`dispatch`: events not yet handed out become one delivery per subscribed, enabled
  endpoint of their organization, and are marked ``dispatched`` (in one transaction);
- :func:`claim`: due deliveries leased to this worker, the oldest first, each only when no
  earlier event about the same object is pending for the same endpoint (in order per object);
- :func:`finish`: an attempt's result logged, the delivery settled or rescheduled.

On PostgreSQL the first two lock what they take with ``FOR UPDATE SKIP LOCKED``, so that
several replicas each take different rows; on SQLite write transactions are serialized.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy import delete, exists, insert, or_, select, update
from sqlalchemy.ext.asyncio import AsyncConnection

from levy.domain import ids
from levy.domain.webhooks import wants
from levy.store.events import EventRecord, event_record
from levy.store.tables.events import events as events_t
from levy.store.tables.events import webhook_attempts as attempts_t
from levy.store.tables.events import webhook_deliveries as deliveries_t
from levy.store.tables.events import webhook_endpoints as endpoints_t


@dataclass(frozen=True)
class EndpointRecord:
    id: str
    organization_id: str
    url: str
    enabled_events: tuple[str, ...]
    description: str | None
    enabled: bool
    secret: str
    disabled_reason: str | None
    failing_since: datetime | None
    created_at: datetime
    updated_at: datetime


@dataclass(frozen=True)
class AttemptRecord:
    number: int
    at: datetime
    status_code: int | None
    succeeded: bool
    latency_ms: int
    response_excerpt: str


@dataclass(frozen=True)
class DeliveryRecord:
    id: str
    organization_id: str
    endpoint_id: str
    event_id: str
    event_sequence: int
    event_type: str
    object_id: str
    status: str
    attempts: int
    next_attempt_at: datetime | None
    created_at: datetime
    log: tuple[AttemptRecord, ...] = ()


def _endpoint(row: Any) -> EndpointRecord:
    return EndpointRecord(row.id, row.organization_id, row.url, tuple(json.loads(row.enabled_events)),
                          row.description, row.enabled, row.secret, row.disabled_reason, row.failing_since,
                          row.created_at, row.updated_at)


def endpoint_row(rec: EndpointRecord) -> dict[str, Any]:
    return {"id": rec.id, "organization_id": rec.organization_id, "url": rec.url,
            "enabled_events": json.dumps(list(rec.enabled_events)), "description": rec.description,
            "enabled": rec.enabled, "secret": rec.secret, "disabled_reason": rec.disabled_reason,
            "failing_since": rec.failing_since, "created_at": rec.created_at, "updated_at": rec.updated_at}


def _delivery(row: Any, log: Sequence[AttemptRecord] = ()) -> DeliveryRecord:
    return DeliveryRecord(row.id, row.organization_id, row.endpoint_id, row.event_id, row.event_sequence,
                          row.event_type, row.object_id, row.status, row.attempts, row.next_attempt_at,
                          row.created_at, tuple(log))


# -- endpoints ----------------------------------------------------------------------------------


async def insert_endpoint(conn: AsyncConnection, rec: EndpointRecord) -> None:
    await conn.execute(insert(endpoints_t).values(**endpoint_row(rec)))


async def get_endpoint(conn: AsyncConnection, organization_id: str, endpoint_id: str, *,
                       for_update: bool = False) -> EndpointRecord | None:
    q = select(endpoints_t).where(endpoints_t.c.organization_id == organization_id, endpoints_t.c.id == endpoint_id)
    row = (await conn.execute(q.with_for_update() if for_update else q)).first()
    return _endpoint(row) if row else None


async def list_endpoints(conn: AsyncConnection, organization_id: str, limit: int,
                         starting_after: str | None) -> tuple[list[EndpointRecord], bool]:
    q = select(endpoints_t).where(endpoints_t.c.organization_id == organization_id)
    if starting_after:
        q = q.where(endpoints_t.c.id < starting_after)
    rows = (await conn.execute(q.order_by(endpoints_t.c.id.desc()).limit(limit + 1))).all()
    return [_endpoint(r) for r in rows[:limit]], len(rows) > limit


async def save_endpoint(conn: AsyncConnection, rec: EndpointRecord) -> None:
    values = endpoint_row(rec)
    for k in ("id", "organization_id", "created_at"):
        values.pop(k)
    await conn.execute(update(endpoints_t).where(endpoints_t.c.organization_id == rec.organization_id,
                                                 endpoints_t.c.id == rec.id).values(**values))


async def delete_endpoint(conn: AsyncConnection, organization_id: str, endpoint_id: str) -> None:
    """The endpoint with its deliveries and their attempts."""
    mine = select(deliveries_t.c.id).where(deliveries_t.c.organization_id == organization_id,
                                           deliveries_t.c.endpoint_id == endpoint_id)
    await conn.execute(delete(attempts_t).where(attempts_t.c.delivery_id.in_(mine)))
    await conn.execute(delete(deliveries_t).where(deliveries_t.c.organization_id == organization_id,
                                                  deliveries_t.c.endpoint_id == endpoint_id))
    await conn.execute(delete(endpoints_t).where(endpoints_t.c.organization_id == organization_id,
                                                 endpoints_t.c.id == endpoint_id))


# -- deliveries (the API's) ---------------------------------------------------------------------


async def _attempts(conn: AsyncConnection, delivery_ids: Sequence[str]) -> dict[str, list[AttemptRecord]]:
    out: dict[str, list[AttemptRecord]] = {}
    if not delivery_ids:
        return out
    for a in await conn.execute(select(attempts_t).where(attempts_t.c.delivery_id.in_(list(delivery_ids)))
                                .order_by(attempts_t.c.delivery_id, attempts_t.c.number)):
        out.setdefault(a.delivery_id, []).append(
            AttemptRecord(a.number, a.at, a.status_code, a.succeeded, a.latency_ms, a.response_excerpt))
    return out


async def list_deliveries(conn: AsyncConnection, organization_id: str, endpoint_id: str, limit: int,
                          starting_after: str | None) -> tuple[list[DeliveryRecord], bool]:
    q = select(deliveries_t).where(deliveries_t.c.organization_id == organization_id,
                                   deliveries_t.c.endpoint_id == endpoint_id)
    if starting_after:
        q = q.where(deliveries_t.c.id < starting_after)
    rows = (await conn.execute(q.order_by(deliveries_t.c.id.desc()).limit(limit + 1))).all()
    logs = await _attempts(conn, [r.id for r in rows[:limit]])
    return [_delivery(r, logs.get(r.id, ())) for r in rows[:limit]], len(rows) > limit


async def get_delivery(conn: AsyncConnection, organization_id: str, endpoint_id: str, delivery_id: str, *,
                       for_update: bool = False) -> DeliveryRecord | None:
    q = select(deliveries_t).where(deliveries_t.c.organization_id == organization_id,
                                   deliveries_t.c.endpoint_id == endpoint_id, deliveries_t.c.id == delivery_id)
    row = (await conn.execute(q.with_for_update() if for_update else q)).first()
    if row is None:
        return None
    return _delivery(row, (await _attempts(conn, [row.id])).get(row.id, ()))


async def replay(conn: AsyncConnection, delivery: DeliveryRecord, now: datetime) -> None:
    """Due now: pending again, with the retries of the schedule ahead of it (its attempts stay logged)."""
    await conn.execute(update(deliveries_t).where(deliveries_t.c.id == delivery.id).values(
        status="pending", next_attempt_at=now, lease_until=None, delivered_at=None))


# -- the worker ---------------------------------------------------------------------------------


def _skip_locked(conn: AsyncConnection, q: Any, *of: Any) -> Any:
    """``q ... FOR UPDATE SKIP LOCKED`` on PostgreSQL (SQLite serializes write transactions)."""
    if conn.dialect.name == "postgresql":
        return q.with_for_update(skip_locked=True, of=list(of) or None)
    return q


async def dispatch(conn: AsyncConnection, now: datetime, limit: int = 200) -> int:
    """Hand out up to ``limit`` undispatched events, oldest first: a delivery for each enabled
    endpoint of their organization that wants their type. How many events were handed out."""
    q = select(events_t).where(events_t.c.dispatched.is_(False)).order_by(events_t.c.sequence).limit(limit)
    rows = (await conn.execute(_skip_locked(conn, q))).all()
    if not rows:
        return 0
    orgs = sorted({r.organization_id for r in rows})
    endpoints: dict[str, list[EndpointRecord]] = {}
    for e in await conn.execute(select(endpoints_t).where(endpoints_t.c.organization_id.in_(orgs),
                                                          endpoints_t.c.enabled.is_(True))):
        endpoints.setdefault(e.organization_id, []).append(_endpoint(e))
    new = [
        {"id": ids.new_id(ids.PREFIXES["webhook_delivery"]), "organization_id": r.organization_id,
         "endpoint_id": ep.id, "event_id": r.id, "event_sequence": r.sequence, "event_type": r.type,
         "object_id": r.object_id, "status": "pending", "attempts": 0, "next_attempt_at": now,
         "lease_until": None, "created_at": now, "delivered_at": None}
        for r in rows for ep in endpoints.get(r.organization_id, ()) if wants(ep.enabled_events, r.type)
    ]
    if new:
        await conn.execute(insert(deliveries_t), new)
    await conn.execute(update(events_t).where(events_t.c.sequence.in_([r.sequence for r in rows]))
                       .values(dispatched=True))
    return len(rows)


@dataclass(frozen=True)
class Claimed:
    delivery: DeliveryRecord
    endpoint: EndpointRecord
    event: EventRecord


async def claim(conn: AsyncConnection, now: datetime, lease: timedelta, limit: int = 100) -> list[Claimed]:
    """Lease up to ``limit`` due deliveries to the caller until ``now + lease``, oldest event first;
    a delivery waits while an earlier event about its object is pending for its endpoint."""
    d, earlier = deliveries_t, deliveries_t.alias("earlier")
    q = select(d).where(
        d.c.status == "pending", d.c.next_attempt_at <= now,
        or_(d.c.lease_until.is_(None), d.c.lease_until < now),
        ~exists().where(earlier.c.endpoint_id == d.c.endpoint_id, earlier.c.object_id == d.c.object_id,
                        earlier.c.status == "pending", earlier.c.event_sequence < d.c.event_sequence),
    ).order_by(d.c.event_sequence).limit(limit)
    rows = (await conn.execute(_skip_locked(conn, q, d))).all()
    if not rows:
        return []
    await conn.execute(update(d).where(d.c.id.in_([r.id for r in rows])).values(lease_until=now + lease))
    events = {r.id: event_record(r) for r in await conn.execute(
        select(events_t).where(events_t.c.id.in_({r.event_id for r in rows})))}
    endpoints = {r.id: _endpoint(r) for r in await conn.execute(
        select(endpoints_t).where(endpoints_t.c.id.in_({r.endpoint_id for r in rows})))}
    return [Claimed(_delivery(r), endpoints[r.endpoint_id], events[r.event_id]) for r in rows
            if r.endpoint_id in endpoints and r.event_id in events]


async def finish(conn: AsyncConnection, delivery: DeliveryRecord, attempt: AttemptRecord,
                 next_at: datetime | None) -> bool:
    """Log ``attempt`` and settle the delivery: succeeded, pending until ``next_at``, or failed (no
    ``next_at``). False when the delivery is gone (its endpoint deleted meanwhile)."""
    row = (await conn.execute(select(deliveries_t.c.attempts).where(deliveries_t.c.id == delivery.id))).first()
    if row is None:
        return False
    number = row.attempts + 1
    await conn.execute(insert(attempts_t).values(
        delivery_id=delivery.id, number=number, organization_id=delivery.organization_id, at=attempt.at,
        status_code=attempt.status_code, succeeded=attempt.succeeded, latency_ms=attempt.latency_ms,
        response_excerpt=attempt.response_excerpt))
    if attempt.succeeded:
        values: dict[str, Any] = {"status": "succeeded", "delivered_at": attempt.at, "next_attempt_at": None}
    elif next_at is not None:
        values = {"status": "pending", "next_attempt_at": next_at}
    else:
        values = {"status": "failed", "next_attempt_at": None}
    await conn.execute(update(deliveries_t).where(deliveries_t.c.id == delivery.id).values(
        attempts=number, lease_until=None, **values))
    return True


async def failed_attempts_since(conn: AsyncConnection, delivery_id: str) -> int:
    """The attempts of the delivery that failed after its last success (retries count from there)."""
    rows = (await conn.execute(select(attempts_t.c.succeeded).where(attempts_t.c.delivery_id == delivery_id)
                               .order_by(attempts_t.c.number.desc()))).all()
    n = 0
    for r in rows:
        if r.succeeded:
            break
        n += 1
    return n


async def set_failing(conn: AsyncConnection, endpoint_id: str, failing_since: datetime | None) -> None:
    await conn.execute(update(endpoints_t).where(endpoints_t.c.id == endpoint_id).values(failing_since=failing_since))


async def disable(conn: AsyncConnection, endpoint_id: str, reason: str, now: datetime) -> EndpointRecord | None:
    """Disable the endpoint (when still enabled; its pending deliveries fail). The endpoint, or None."""
    row = (await conn.execute(select(endpoints_t).where(endpoints_t.c.id == endpoint_id,
                                                        endpoints_t.c.enabled.is_(True)).with_for_update())).first()
    if row is None:
        return None
    await conn.execute(update(endpoints_t).where(endpoints_t.c.id == endpoint_id).values(
        enabled=False, disabled_reason=reason, updated_at=now))
    await conn.execute(update(deliveries_t).where(deliveries_t.c.endpoint_id == endpoint_id,
                                                  deliveries_t.c.status == "pending")
                       .values(status="failed", next_attempt_at=None, lease_until=None))
    return _endpoint((await conn.execute(select(endpoints_t).where(endpoints_t.c.id == endpoint_id))).one())


async def failing_since(conn: AsyncConnection, endpoint_id: str) -> datetime | None:
    return (await conn.execute(select(endpoints_t.c.failing_since).where(endpoints_t.c.id == endpoint_id))).scalar()


async def has_work(conn: AsyncConnection, now: datetime) -> bool:
    """Whether an event waits to be handed out or a delivery is due (two index probes)."""
    undispatched = select(events_t.c.sequence).where(events_t.c.dispatched.is_(False)).limit(1)
    if (await conn.execute(undispatched)).first() is not None:
        return True
    due = select(deliveries_t.c.id).where(deliveries_t.c.status == "pending",
                                          deliveries_t.c.next_attempt_at <= now).limit(1)
    return (await conn.execute(due)).first() is not None
