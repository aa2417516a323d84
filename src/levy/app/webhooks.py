"""Webhook endpoints: create, change, rotate the secret of, delete an endpoint; its
delivery log and a manual replay. Each function runs in the caller's unit of work. The URL
rules are :mod:`levy.domain.webhooks`'s, under the server's settings; the delivery worker is
:mod:`levy.app.delivery`. See docs/events.md."""

from __future__ import annotations

import base64
import os
from dataclasses import dataclass, replace
from datetime import UTC, datetime

from sqlalchemy.ext.asyncio import AsyncConnection

from levy.config import Config
from levy.domain import ids
from levy.domain.errors import ErrorCollector, FailedPrecondition, NotFound, RequiredField
from levy.domain.pagination import PageRequest
from levy.domain.webhooks import UrlPolicy, check_event_types, check_url
from levy.store import webhooks as store
from levy.store.webhooks import DeliveryRecord, EndpointRecord


def utcnow() -> datetime:
    return datetime.now(UTC)


def url_policy(config: Config) -> UrlPolicy:
    return UrlPolicy(allow_http=config.webhook_allow_http, allow_private=config.webhook_allow_private)


def new_secret() -> str:
    """A Standard Webhooks signing secret: ``whsec_`` and 32 random bytes in base64."""
    return "whsec_" + base64.b64encode(os.urandom(32)).decode()


@dataclass(frozen=True)
class EndpointInput:
    """What a create or an update sends (None: not sent)."""

    url: str | None = None
    enabled_events: tuple[str, ...] | None = None
    description: str | None = None
    enabled: bool | None = None


def _not_found(endpoint_id: str) -> NotFound:
    return NotFound(f"No webhook endpoint with id '{endpoint_id}'.", pointer=None)


async def endpoint(conn: AsyncConnection, org: str, endpoint_id: str, *, lock: bool = False) -> EndpointRecord:
    rec = await store.get_endpoint(conn, org, endpoint_id, for_update=lock)
    if rec is None:
        raise _not_found(endpoint_id)
    return rec


async def create(conn: AsyncConnection, org: str, sent: EndpointInput, policy: UrlPolicy) -> EndpointRecord:
    """A new endpoint (enabled unless sent otherwise); its secret is in the record returned."""
    c = ErrorCollector()
    if sent.url is None:
        c.errors.append(RequiredField("url", pointer="/url"))
    url = c.attempt(check_url, sent.url, policy) if sent.url is not None else None
    types = c.attempt(check_event_types, sent.enabled_events or ())
    c.raise_any()
    now = utcnow()
    rec = EndpointRecord(ids.new_id(ids.PREFIXES["webhook_endpoint"]), org, url or "", tuple(types or ()),
                         sent.description, True if sent.enabled is None else sent.enabled, new_secret(), None, None,
                         now, now)
    await store.insert_endpoint(conn, rec)
    return rec


async def update(conn: AsyncConnection, org: str, endpoint_id: str, sent: EndpointInput,
                 policy: UrlPolicy) -> EndpointRecord:
    """PATCH: what is sent changes; enabling an endpoint Levy disabled clears its reason."""
    cur = await endpoint(conn, org, endpoint_id, lock=True)
    c = ErrorCollector()
    rec = cur
    if sent.url is not None:
        rec = replace(rec, url=c.attempt(check_url, sent.url, policy) or cur.url)
    if sent.enabled_events is not None:
        rec = replace(rec, enabled_events=c.attempt(check_event_types, sent.enabled_events) or cur.enabled_events)
    c.raise_any()
    if sent.description is not None:
        rec = replace(rec, description=sent.description or None)
    if sent.enabled is not None:
        rec = replace(rec, enabled=sent.enabled)
        if sent.enabled:
            rec = replace(rec, disabled_reason=None, failing_since=None)
    if rec == cur:
        return cur
    rec = replace(rec, updated_at=utcnow())
    await store.save_endpoint(conn, rec)
    return rec


async def rotate(conn: AsyncConnection, org: str, endpoint_id: str) -> EndpointRecord:
    """A new secret replaces the old one at once (deliveries from now on are signed with it)."""
    rec = replace(await endpoint(conn, org, endpoint_id, lock=True), secret=new_secret(), updated_at=utcnow())
    await store.save_endpoint(conn, rec)
    return rec


async def delete(conn: AsyncConnection, org: str, endpoint_id: str) -> None:
    await endpoint(conn, org, endpoint_id, lock=True)
    await store.delete_endpoint(conn, org, endpoint_id)


async def list_endpoints(conn: AsyncConnection, org: str, page: PageRequest) -> tuple[list[EndpointRecord], bool]:
    return await store.list_endpoints(conn, org, page.limit, page.starting_after)


async def list_deliveries(conn: AsyncConnection, org: str, endpoint_id: str,
                          page: PageRequest) -> tuple[list[DeliveryRecord], bool]:
    await endpoint(conn, org, endpoint_id)
    return await store.list_deliveries(conn, org, endpoint_id, page.limit, page.starting_after)


async def replay(conn: AsyncConnection, org: str, endpoint_id: str, delivery_id: str) -> DeliveryRecord:
    """The delivery due again now (the worker sends it on its next pass)."""
    ep = await endpoint(conn, org, endpoint_id)
    found = await store.get_delivery(conn, org, endpoint_id, delivery_id, for_update=True)
    if found is None:
        raise NotFound(f"No delivery with id '{delivery_id}' for this endpoint.", pointer=None)
    if not ep.enabled:
        raise FailedPrecondition("the endpoint is disabled: enable it (enabled: true) first", code="endpoint_disabled")
    now = utcnow()
    await store.replay(conn, found, now)
    return replace(found, status="pending", next_attempt_at=now)
