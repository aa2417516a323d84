"""The events job of ``levy serve``, started by :mod:`levy.app.bootstrap` every
``LEVY_EVENT_JOB_SECONDS``.

Each pass, for the UTC day it runs on:

1. **certificates**: every certificate of an active customer due ``certificate.expiring`` or
   ``certificate.expired`` (:func:`levy.domain.event_jobs.certificate_event`);
2. **nexus**: for each organization, its nexus report as ``GET /nexus`` computes it today, and
   ``nexus.threshold_approaching`` / ``nexus.threshold_crossed`` for the states due one
   (:func:`levy.domain.event_jobs.nexus_event`);
3. **retention**: events and settled deliveries older than ``LEVY_EVENT_RETENTION_DAYS`` pruned.

Once per organization, object and period: each event is written in one write transaction with
its mark (``event_marks``, primary key organization and key), inserted with ON CONFLICT DO NOTHING
first; when the mark exists the event is not written. Two replicas running a pass at the same time
on PostgreSQL: the second insert of a key waits for the first transaction, then finds the mark.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta
from typing import Any

from sqlalchemy.ext.asyncio import AsyncConnection

from levy.app import events
from levy.app import filings as nexus_reports
from levy.app.services import AppServices
from levy.domain.event_jobs import (
    WATCHED_STATUSES,
    certificate_event,
    certificate_key,
    certificate_window,
    nexus_event,
    nexus_key,
)
from levy.store import customers as customer_store
from levy.store import events as store
from levy.store.db import is_unavailable, transaction

log = logging.getLogger("levy.events")


@dataclass(frozen=True)
class Due:
    """An event a pass may write: its mark's key and its outbox row."""

    organization_id: str
    key: str
    row: dict[str, Any]


@dataclass(frozen=True)
class PassResult:
    produced: int  # events written by this pass (not those another pass had written)
    pruned_events: int
    pruned_deliveries: int


class EventJob:
    def __init__(self, services: AppServices) -> None:
        config = services.config
        self.services = services
        self.every = config.event_job_seconds
        self.days = config.certificate_expiring_days
        self.retention = timedelta(days=config.event_retention_days) if config.event_retention_days > 0 else None

    async def run_forever(self) -> None:
        while True:
            try:
                await self.run_once()
            except asyncio.CancelledError:
                raise
            except Exception as e:  # noqa: BLE001 - logged, tried again next pass
                if is_unavailable(e):
                    log.warning("events job pass skipped: the database is unavailable (%s)", e)
                else:
                    log.exception("events job pass failed")
            await asyncio.sleep(self.every)

    async def run_once(self, now: datetime | None = None) -> PassResult:
        now = now or datetime.now(UTC)
        today = now.date()
        engine = self.services.engine
        async with transaction(engine, write=False) as conn:
            due = await self.certificates_due(conn, today, now)
            organizations = await store.organization_ids(conn)
        produced = await self.write(due)
        for org in organizations:
            try:
                async with transaction(engine, write=False) as conn:
                    due = await self.nexus_due(conn, org, today, now)
                produced += await self.write(due)
            except Exception as e:  # noqa: BLE001 - logged; the next organization goes on
                if is_unavailable(e):
                    raise
                # One organization's report failing does not keep the others' events back.
                log.exception("events job: the nexus events of organization %s failed", org)
        pruned = (0, 0)
        if self.retention is not None:
            async with transaction(engine, write=True) as conn:
                pruned = await store.prune(conn, now - self.retention)
        return PassResult(produced, *pruned)

    async def certificates_due(self, conn: AsyncConnection, today: date, now: datetime) -> list[Due]:
        start, end = certificate_window(today, self.days)
        out = []
        for org, cert in await customer_store.certificates_expiring_between(conn, start, end, WATCHED_STATUSES):
            event_type = certificate_event(cert.status, cert.expires_at, today, self.days)
            if event_type is not None and cert.expires_at is not None:
                out.append(Due(org, certificate_key(event_type, cert.id, cert.expires_at),
                               events.certificate_row(event_type, org, cert, now)))
        return out

    async def nexus_due(self, conn: AsyncConnection, org: str, today: date, now: datetime) -> list[Due]:
        out = []
        share = await nexus_reports.approaching_share(conn, org)
        for state in await nexus_reports.nexus(conn, org, today, ref=self.services.reference):
            event_type = nexus_event(state, share)
            if event_type is not None:
                out.append(Due(org, nexus_key(event_type, state), events.nexus_row(event_type, org, state, now)))
        return out

    async def write(self, due: Iterable[Due]) -> int:
        """Write each event with its mark in one write transaction; how many were new."""
        due = list(due)
        if not due:
            return 0
        written = 0
        async with transaction(self.services.engine, write=True) as conn:
            for d in due:
                if await store.mark(conn, d.organization_id, d.key, d.row["id"], d.row["created_at"]):
                    await events.record(conn, [d.row])
                    written += 1
        return written
