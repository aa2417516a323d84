"""Events: the outbox rows written with each change, and their reads.

A use case that changes an object builds its event rows here and writes them in
its own database transaction (:func:`record`, or as one more child of the
transaction's single insert): no change without its event, no event without its
change. An event keeps the object as the API returned it, as its protobuf
message serialized (``data``); ``GET /events`` and the webhook deliveries render
it like the object's own endpoints. The message builders live with the handlers
(:mod:`levy.app.handlers`), imported when first needed here since those modules
import the use cases that call this one.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Iterable
from datetime import UTC, datetime
from typing import Any

from google.protobuf import message
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine

from levy.domain import ids
from levy.domain.customers import CustomerRecord
from levy.domain.errors import NotFound
from levy.domain.events import TYPES, EventFilters, WatchCursor
from levy.domain.exemptions import Certificate
from levy.domain.nexus_report import NexusStateReport
from levy.domain.pagination import PageRequest
from levy.domain.transactions.records import TransactionRecord
from levy.store import events as store
from levy.store.db import transaction
from levy.store.events import EventRecord
from levy.store.tables.events import events as events_table

#: The outbox table, for a change written as one insert with children (a new transaction).
TABLE = events_table


def row(event_type: str, organization_id: str, object_id: str, snapshot: message.Message,
        now: datetime | None = None) -> dict[str, Any]:
    """The outbox row of one event about ``object_id``, ``snapshot`` its message as the API returns it."""
    return {
        "id": ids.new_id(ids.PREFIXES["event"]), "organization_id": organization_id, "type": event_type,
        "object_type": TYPES[event_type], "object_id": object_id, "created_at": now or datetime.now(UTC),
        "data": snapshot.SerializeToString(deterministic=True), "dispatched": False,
    }


def transaction_rows(types: Iterable[str], rec: TransactionRecord) -> list[dict[str, Any]]:
    """The rows of ``types`` about the transaction ``rec`` (one snapshot for all)."""
    types = list(types)
    if not types:
        return []
    from levy.app.handlers.transactions import to_message

    snapshot = to_message(rec)
    return [row(t, rec.organization_id, rec.id, snapshot) for t in types]


def customer_row(event_type: str, organization_id: str, rec: CustomerRecord) -> dict[str, Any]:
    from levy.app.handlers.customers import customer_pb

    return row(event_type, organization_id, rec.id, customer_pb(rec))


def certificate_row(event_type: str, organization_id: str, cert: Certificate,
                    now: datetime | None = None) -> dict[str, Any]:
    from levy.app.handlers.customers import certificate_pb

    return row(event_type, organization_id, cert.id, certificate_pb(cert), now)


def nexus_row(event_type: str, organization_id: str, state: NexusStateReport,
              now: datetime | None = None) -> dict[str, Any]:
    """An event about one state's line of the nexus report (its object id the state's jurisdiction)."""
    from levy.app.handlers.filings import nexus_state_message

    return row(event_type, organization_id, state.jurisdiction_code, nexus_state_message(state), now)


def filing_row(event_type: str, rec: Any, currency: str) -> dict[str, Any]:
    """``rec``: a :class:`levy.store.filings.FilingRecord`; ``currency``: the return's."""
    from levy.app.handlers.filings import filing_message

    return row(event_type, rec.organization_id, rec.id, filing_message(rec, currency))


def endpoint_row(event_type: str, rec: Any) -> dict[str, Any]:
    """``rec``: a :class:`levy.store.webhooks.EndpointRecord` (its secret left out)."""
    from levy.app.handlers.webhooks import endpoint_message

    return row(event_type, rec.organization_id, rec.id, endpoint_message(rec))


async def record(conn: AsyncConnection, rows: list[dict[str, Any]]) -> None:
    """Write ``rows`` in the caller's transaction (the change's)."""
    if rows:
        await store.insert(conn, rows)


async def get_event(conn: AsyncConnection, organization_id: str, event_id: str) -> EventRecord:
    rec = await store.get_event(conn, organization_id, event_id)
    if rec is None:
        raise NotFound(f"No event with id '{event_id}'.", pointer=None)
    return rec


async def list_events(conn: AsyncConnection, organization_id: str, filters: EventFilters,
                      page: PageRequest) -> tuple[list[EventRecord], bool]:
    return await store.list_events(conn, organization_id, filters, page.limit, page.starting_after)


#: Seconds between WatchEvents' looks for new events when it found none.
WATCH_POLL_SECONDS = 0.25
#: Sequences a WatchEvents pass reads at most.
WATCH_BATCH = 500


async def watch(engine: AsyncEngine, organization_id: str, starting_after: str | None,
                types: frozenset[str]) -> AsyncIterator[EventRecord | None]:
    """The organization's events after ``starting_after`` (None: after the last committed now),
    oldest first, then each new one as a poll of the database finds it committed (any replica's),
    forever: the caller stops iterating when its client cancels. ``types``: only those (empty: all).
    The first item is None, once the cursor is fixed."""
    async with transaction(engine, write=False) as conn:
        if starting_after:
            start = await store.sequence_of(conn, organization_id, starting_after)
            if start is None:
                raise NotFound(f"No event with id '{starting_after}'.", pointer="/starting_after")
        else:
            start = await store.last_sequence(conn)
    cursor = WatchCursor(start)
    yield None
    while True:
        async with transaction(engine, write=False) as conn:
            rows = await store.sequences_after(conn, cursor.after, list(cursor.gaps), WATCH_BATCH)
            mine = [s for s, org, t in rows if org == organization_id and (not types or t in types)]
            records = await store.by_sequences(conn, organization_id, mine) if mine else []
        cursor.advance([s for s, _, _ in rows], time.monotonic())
        for rec in records:
            yield rec
        if len(rows) < WATCH_BATCH:
            await asyncio.sleep(WATCH_POLL_SECONDS)
