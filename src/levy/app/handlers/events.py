"""Events: ``GET /events``, ``GET /events/{event_id}`` and the gRPC stream
``WatchEvents``, thin adapters over
:mod:`levy.app.events`. See docs/events.md."""

from __future__ import annotations

from collections.abc import AsyncIterator

from levy.app import events as service
from levy.app.context import CallContext
from levy.app.handlers.messages import optional, page_of, set_time
from levy.app.registry import handles
from levy.domain.events import parse_filters, parse_types
from levy.store.events import EventRecord
from levy.v1 import events_pb2 as pb


def event_message(rec: EventRecord) -> pb.Event:
    """The event with its object, parsed from the snapshot stored with it."""
    msg = pb.Event(id=rec.id, type=rec.type, object_type=rec.object_type, object_id=rec.object_id)
    set_time(msg.created_at, rec.created_at)
    getattr(msg.data, rec.object_type).MergeFromString(rec.data)
    return msg


@handles("levy.v1.EventService.ListEvents")
async def list_events(req: pb.ListEventsRequest, ctx: CallContext) -> pb.ListEventsResponse:
    filters = parse_filters(optional(req, "type"), optional(req, "created_from"), optional(req, "created_to"))
    page = page_of(req)
    async with ctx.uow() as conn:
        records, has_more = await service.list_events(conn, ctx.organization_id, filters, page)
    return pb.ListEventsResponse(data=[event_message(r) for r in records], has_more=has_more)


@handles("levy.v1.EventService.GetEvent")
async def get_event(req: pb.GetEventRequest, ctx: CallContext) -> pb.Event:
    async with ctx.uow() as conn:
        rec = await service.get_event(conn, ctx.organization_id, req.event_id)
    return event_message(rec)


@handles("levy.v1.EventService.WatchEvents")
async def watch_events(req: pb.WatchEventsRequest, ctx: CallContext) -> AsyncIterator[pb.Event | None]:  # type: ignore[misc]
    """Server-streaming (gRPC only): the events after the cursor, then new ones, until cancelled
    (None first, when the cursor is fixed: the transport sends its initial metadata then)."""
    types = parse_types(list(req.types))
    async for rec in service.watch(ctx.services.engine, ctx.organization_id, optional(req, "starting_after"), types):
        yield None if rec is None else event_message(rec)
