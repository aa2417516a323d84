"""Webhook endpoints: thin adapters over :mod:`levy.app.webhooks`. See docs/events.md."""

from __future__ import annotations

from google.protobuf import empty_pb2

from levy.app import webhooks as service
from levy.app.context import CallContext
from levy.app.handlers.messages import optional, page_of, present_fields, set_time
from levy.app.registry import handles, input_names
from levy.store.webhooks import DeliveryRecord, EndpointRecord
from levy.v1 import events_pb2 as pb

WRITABLE = input_names(pb.WebhookEndpoint.DESCRIPTOR)


def endpoint_message(rec: EndpointRecord, *, secret: bool = False) -> pb.WebhookEndpoint:
    """The endpoint; its ``secret`` only when ``secret`` (the answer of a create or a rotation)."""
    msg = pb.WebhookEndpoint(id=rec.id, url=rec.url, enabled_events=list(rec.enabled_events), enabled=rec.enabled)
    if rec.description is not None:
        msg.description = rec.description
    if rec.disabled_reason is not None:
        msg.disabled_reason = rec.disabled_reason
    if secret:
        msg.secret = rec.secret
    set_time(msg.created_at, rec.created_at)
    set_time(msg.updated_at, rec.updated_at)
    return msg


def delivery_message(rec: DeliveryRecord) -> pb.WebhookDelivery:
    msg = pb.WebhookDelivery(id=rec.id, endpoint_id=rec.endpoint_id, event_id=rec.event_id, event_type=rec.event_type,
                             status=rec.status)
    set_time(msg.next_attempt_at, rec.next_attempt_at)
    set_time(msg.created_at, rec.created_at)
    for a in rec.log:
        out = msg.attempts.add(number=a.number, succeeded=a.succeeded, latency_ms=a.latency_ms,
                               response_excerpt=a.response_excerpt)
        set_time(out.at, a.at)
        if a.status_code is not None:
            out.status_code = a.status_code
    return msg


def _input(msg: pb.WebhookEndpoint, present: list[str]) -> service.EndpointInput:
    def sent(name: str):  # type: ignore[no-untyped-def]
        return optional(msg, name) if name in present else None

    events = tuple(msg.enabled_events) if "enabled_events" in present else None
    return service.EndpointInput(url=sent("url"), enabled_events=events, description=sent("description"),
                                 enabled=sent("enabled"))


@handles("levy.v1.WebhookService.CreateWebhookEndpoint")
async def create_endpoint(req: pb.CreateWebhookEndpointRequest, ctx: CallContext) -> pb.WebhookEndpoint:
    present = present_fields(req.webhook_endpoint, (), WRITABLE, "webhook endpoint")
    async with ctx.uow(write=True) as conn:
        rec = await service.create(conn, ctx.organization_id, _input(req.webhook_endpoint, present),
                                   service.url_policy(ctx.services.config))
        ctx.created(rec.id)
    return endpoint_message(rec, secret=True)


@handles("levy.v1.WebhookService.ListWebhookEndpoints")
async def list_endpoints(req: pb.ListWebhookEndpointsRequest, ctx: CallContext) -> pb.ListWebhookEndpointsResponse:
    async with ctx.uow() as conn:
        recs, has_more = await service.list_endpoints(conn, ctx.organization_id, page_of(req))
    return pb.ListWebhookEndpointsResponse(data=[endpoint_message(r) for r in recs], has_more=has_more)


@handles("levy.v1.WebhookService.GetWebhookEndpoint")
async def get_endpoint(req: pb.GetWebhookEndpointRequest, ctx: CallContext) -> pb.WebhookEndpoint:
    async with ctx.uow() as conn:
        return endpoint_message(await service.endpoint(conn, ctx.organization_id, req.endpoint_id))


@handles("levy.v1.WebhookService.UpdateWebhookEndpoint")
async def update_endpoint(req: pb.UpdateWebhookEndpointRequest, ctx: CallContext) -> pb.WebhookEndpoint:
    present = present_fields(req.webhook_endpoint, req.update_mask.paths, WRITABLE, "webhook endpoint")
    async with ctx.uow(write=True) as conn:
        rec = await service.update(conn, ctx.organization_id, req.endpoint_id, _input(req.webhook_endpoint, present),
                                   service.url_policy(ctx.services.config))
    return endpoint_message(rec)


@handles("levy.v1.WebhookService.DeleteWebhookEndpoint")
async def delete_endpoint(req: pb.DeleteWebhookEndpointRequest, ctx: CallContext) -> empty_pb2.Empty:
    async with ctx.uow(write=True) as conn:
        await service.delete(conn, ctx.organization_id, req.endpoint_id)
    return empty_pb2.Empty()


@handles("levy.v1.WebhookService.RotateWebhookEndpointSecret")
async def rotate_secret(req: pb.RotateWebhookEndpointSecretRequest, ctx: CallContext) -> pb.WebhookEndpoint:
    async with ctx.uow(write=True) as conn:
        return endpoint_message(await service.rotate(conn, ctx.organization_id, req.endpoint_id), secret=True)


@handles("levy.v1.WebhookService.ListWebhookDeliveries")
async def list_deliveries(req: pb.ListWebhookDeliveriesRequest,
                          ctx: CallContext) -> pb.ListWebhookDeliveriesResponse:
    async with ctx.uow() as conn:
        recs, has_more = await service.list_deliveries(conn, ctx.organization_id, req.endpoint_id, page_of(req))
    return pb.ListWebhookDeliveriesResponse(data=[delivery_message(r) for r in recs], has_more=has_more)


@handles("levy.v1.WebhookService.ReplayWebhookDelivery")
async def replay_delivery(req: pb.ReplayWebhookDeliveryRequest, ctx: CallContext) -> pb.WebhookDelivery:
    async with ctx.uow(write=True) as conn:
        return delivery_message(await service.replay(conn, ctx.organization_id, req.endpoint_id, req.delivery_id))
