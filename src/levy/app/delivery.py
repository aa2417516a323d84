"""The webhook delivery worker of ``levy serve``, started by :mod:`levy.app.bootstrap`.

Each pass, when a cheap read finds work:

1. **dispatch**: events not yet handed out become one delivery per enabled endpoint of their
   organization that wants their type (:func:`levy.store.webhooks.dispatch`);
2. **claim**: due deliveries are leased to this worker for ``timeout + 5`` seconds (PostgreSQL:
   ``FOR UPDATE SKIP LOCKED``, so replicas take different ones), never two of one object and
   endpoint at once, the oldest event first (in order per object);
3. **send**: each is POSTed, signed per Standard Webhooks with the ``standardwebhooks`` package
   (headers ``webhook-id`` = the event id, ``webhook-timestamp``, ``webhook-signature``), after
   the URL's host is resolved and every address checked (:func:`levy.domain.webhooks.address_refused`);
4. **finish**: in one write transaction for the pass, each attempt is logged (status, latency, the start of the answer); a 2xx settles
   the delivery, anything else schedules the next retry (``LEVY_WEBHOOK_RETRY_SCHEDULE``) or,
   past the last, fails it. An endpoint whose deliveries have all failed for
   ``LEVY_WEBHOOK_DISABLE_AFTER_HOURS`` is disabled, with a ``webhook_endpoint.disabled`` event.

At least once: a worker killed after sending and before finishing leaves a lease that runs out;
the delivery is sent again. Receivers deduplicate on ``webhook-id``.
"""

from __future__ import annotations

import asyncio
import logging
import socket
import time
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from urllib.parse import urlsplit

import httpx
from sqlalchemy.ext.asyncio import AsyncConnection
from standardwebhooks import Webhook

from levy.app import events
from levy.app.services import AppServices
from levy.domain.webhooks import UrlPolicy, address_refused, next_attempt, parse_schedule, should_disable
from levy.store import webhooks as store
from levy.store.db import is_unavailable, transaction
from levy.store.events import EventRecord
from levy.store.webhooks import AttemptRecord, Claimed

log = logging.getLogger("levy.webhooks")

#: Characters of a receiver's answer kept in the delivery log.
EXCERPT = 500
#: Deliveries a worker sends at once.
CONCURRENCY = 16


def utcnow() -> datetime:
    return datetime.now(UTC)


class DeliveryWorker:
    def __init__(self, services: AppServices, render: Callable[[EventRecord], bytes]) -> None:
        config = services.config
        self.services = services
        self.render = render
        self.poll = max(0.01, config.webhook_poll_seconds)
        self.timeout = config.webhook_timeout_seconds
        self.lease = timedelta(seconds=self.timeout + 5)
        self.schedule = parse_schedule(config.webhook_retry_schedule)
        self.disable_after = timedelta(hours=config.webhook_disable_after_hours)
        self.policy = UrlPolicy(config.webhook_allow_http, config.webhook_allow_private)
        # Requests in flight at once (each pass sends up to 100 deliveries).
        self.sending = asyncio.Semaphore(CONCURRENCY)
        self.client = httpx.AsyncClient(timeout=self.timeout, follow_redirects=False,
                                        headers={"user-agent": "Levy-Webhooks/1"})

    async def run_forever(self) -> None:
        try:
            while True:
                try:
                    busy = await self.run_once()
                except asyncio.CancelledError:
                    raise
                except Exception as e:  # noqa: BLE001 - logged, tried again next pass
                    if is_unavailable(e):  # the database is down or locked: no traceback, as for requests
                        log.warning("webhook delivery pass skipped: the database is unavailable (%s)", e)
                    else:
                        log.exception("webhook delivery pass failed")
                    busy = False
                if not busy:
                    await asyncio.sleep(self.poll)
        finally:
            await self.client.aclose()

    async def run_once(self) -> bool:
        """One pass; whether it found anything to do."""
        engine = self.services.engine
        now = utcnow()
        async with transaction(engine, write=False) as conn:
            if not await store.has_work(conn, now):
                return False
        async with transaction(engine, write=True) as conn:
            dispatched = await store.dispatch(conn, now)
        async with transaction(engine, write=True) as conn:
            claimed = await store.claim(conn, utcnow(), self.lease)
        attempts = await asyncio.gather(*(self.deliver_limited(c) for c in claimed))
        if claimed:
            async with transaction(engine, write=True) as conn:
                for c, attempt in zip(claimed, attempts, strict=True):
                    await self.finish(conn, c, attempt)
        return bool(dispatched or claimed)

    async def deliver_limited(self, c: Claimed) -> AttemptRecord:
        async with self.sending:
            return await self.deliver(c)

    async def deliver(self, c: Claimed) -> AttemptRecord:
        """Send one delivery; the attempt (not yet logged)."""
        body = self.render(c.event)
        at = utcnow()
        started = time.monotonic()
        status: int | None = None
        try:
            await self.check_host(c.endpoint.url)
            signature = Webhook(c.endpoint.secret).sign(c.event.id, at, body.decode())
            r = await self.client.post(c.endpoint.url, content=body, headers={
                "content-type": "application/json", "webhook-id": c.event.id,
                "webhook-timestamp": str(int(at.timestamp())), "webhook-signature": signature})
            status, excerpt = r.status_code, r.text[:EXCERPT]
        except httpx.TimeoutException:
            excerpt = f"no answer within {self.timeout:g} seconds"
        except (httpx.HTTPError, OSError, Refused) as e:
            excerpt = f"{type(e).__name__}: {e}"[:EXCERPT]
        ok = status is not None and 200 <= status < 300
        return AttemptRecord(0, at, status, ok, int((time.monotonic() - started) * 1000), excerpt)

    async def check_host(self, url: str) -> None:
        """Refuse (:class:`Refused`) a host that resolves to an address the policy forbids."""
        parts = urlsplit(url)
        host = parts.hostname or ""
        port = parts.port or (443 if parts.scheme == "https" else 80)
        infos = await asyncio.get_running_loop().getaddrinfo(host, port, type=socket.SOCK_STREAM)
        for info in infos:
            why = address_refused(str(info[4][0]), self.policy)
            if why is not None:
                raise Refused(f"{host} resolves to {why} (SSRF protection; LEVY_WEBHOOK_ALLOW_PRIVATE allows it)")

    async def finish(self, conn: AsyncConnection, c: Claimed, attempt: AttemptRecord) -> None:
        """Log ``attempt`` (in the pass's one write transaction ``conn``), settle or reschedule the
        delivery, and keep the endpoint's failing streak (disabling it when too long)."""
        failed = 0 if attempt.succeeded else await store.failed_attempts_since(conn, c.delivery.id) + 1
        next_at = None if attempt.succeeded else next_attempt(self.schedule, failed, attempt.at)
        if not await store.finish(conn, c.delivery, attempt, next_at):
            return
        ep = c.endpoint
        since = await store.failing_since(conn, ep.id)
        if attempt.succeeded:
            if since is not None:
                await store.set_failing(conn, ep.id, None)
            return
        if since is None:
            await store.set_failing(conn, ep.id, attempt.at)
        elif should_disable(since, attempt.at, self.disable_after):
            reason = (f"every delivery failed since {since.isoformat()} "
                      f"({self.disable_after.total_seconds() / 3600:g} hours)")
            disabled = await store.disable(conn, ep.id, reason, attempt.at)
            if disabled is not None:
                log.warning("webhook endpoint %s disabled: %s", ep.id, reason)
                await events.record(conn, [events.endpoint_row("webhook_endpoint.disabled", disabled)])


class Refused(Exception):
    """A delivery the URL policy forbids (the host resolves inside the network)."""
