"""The composition root: what ``levy serve`` runs, built in one place.

Reading :func:`build` tells every long-lived object of a server process and
what it depends on: the database engine, the preset cache, the rate table, the
reference data of ``levy/data`` (read once, :mod:`levy.store.reference_data`) and
the API-key cache (together :class:`~levy.app.services.AppServices`), the rate
limiter, the handlers of the RPCs, the pipeline both transports call, and the
background tasks. Nothing registers itself on import; the transports
(:mod:`levy.transport`) are given the pipeline by :mod:`levy.server`.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterable
from dataclasses import dataclass, field
from types import ModuleType

import orjson

from levy.app import idempotency
from levy.app.handlers import (
    calculations,
    customers,
    events,
    filings,
    locations,
    org_admin,
    products,
    reference,
    transactions,
    webhooks,
)
from levy.app.console_service import ConsoleService
from levy.app.delivery import DeliveryWorker
from levy.app.event_jobs import EventJob
from levy.app.pipeline import Pipeline
from levy.app.ratelimit import create_limiter
from levy.app.registry import Handler, collect_handlers
from levy.app.services import AppServices
from levy.config import Config
from levy.store import migrate, reference_data
from levy.store.events import EventRecord
from levy.transport.codec import to_json

# One module per area; each marks its handlers with ``registry.handles``.
HANDLER_MODULES: tuple[ModuleType, ...] = (
    calculations, customers, events, filings, locations, org_admin, products, reference, transactions, webhooks,
)


def handlers(modules: Iterable[ModuleType] = HANDLER_MODULES) -> dict[str, Handler]:
    """The handler of each RPC, by full name (an RPC without one answers 501 / UNIMPLEMENTED)."""
    return collect_handlers(modules)


def render_event(rec: EventRecord) -> bytes:
    """The JSON body of a webhook delivery: the event as ``GET /events/{id}`` renders it."""
    return orjson.dumps(to_json(events.event_message(rec)))


@dataclass
class Application:
    services: AppServices
    pipeline: Pipeline
    #: What the web console reads and changes besides the API's RPCs (``levy.console``).
    console: ConsoleService
    background: list[asyncio.Task[None]] = field(default_factory=list)

    async def close(self) -> None:
        for task in self.background:
            task.cancel()
        await asyncio.gather(*self.background, return_exceptions=True)
        await self.pipeline.close()
        await self.services.close()


async def build(config: Config, *, migrate_db: bool = True, handler_table: dict[str, Handler] | None = None,
                background: bool = True) -> Application:
    """Build the application of one server process: load the reference data, migrate the
    database (unless a parent process did), load the rate table, wire the pipeline, start the
    background tasks (the rate table's refresh, the idempotency purge, the webhook delivery
    worker unless ``LEVY_WEBHOOK_WORKER=false``, the events job unless ``LEVY_EVENT_JOB_SECONDS=0``)."""
    reference = await asyncio.to_thread(reference_data.load)
    services = AppServices.create(config, reference)
    if migrate_db:
        await migrate.upgrade(services.engine)
    await services.rates.load()
    pipeline = Pipeline(services, handler_table if handler_table is not None else handlers(),
                        limiter=create_limiter(config.redis_url))
    app = Application(services, pipeline,
                      ConsoleService(services.uow, max_upload_bytes=config.console_max_upload_bytes))
    if background:
        app.background.append(asyncio.create_task(idempotency.purge_every_hour(services), name="levy-idempotency-purge"))
        if config.webhook_worker:
            worker = DeliveryWorker(services, render_event)
            app.background.append(asyncio.create_task(worker.run_forever(), name="levy-webhook-delivery"))
        if config.event_job_seconds > 0:
            job = EventJob(services)
            app.background.append(asyncio.create_task(job.run_forever(), name="levy-events-job"))
        if config.rates_refresh_seconds > 0:
            app.background.append(asyncio.create_task(services.rates.refresh_forever(config.rates_refresh_seconds),
                                                      name="levy-rates-refresh"))
    return app
