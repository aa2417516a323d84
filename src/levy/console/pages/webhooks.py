"""The console's Webhooks and Events pages, for admins (as the API's methods are).

Webhooks: the organization's endpoints, one created (its ``whsec_`` secret shown on the
page that answers the create, never again), edited, its secret rotated (shown once too)
and deleted behind a confirmation page; per endpoint its recent deliveries with a Replay
button. Events: newest first, filtered by type and date, each with its JSON payload as
``GET /events/{id}`` returns it and a link to the object's page.

Every action is the API's own RPC run as the signed-in user (``Console.call`` and
``Console.audited``): validation (the URL policy included), the admin-only rule and the
error messages are the API's. This module only maps forms to requests and answers to pages.
"""

from __future__ import annotations

import json
from datetime import date, timedelta
from typing import TYPE_CHECKING, Any
from urllib.parse import urlencode

from levy.console.helpers import Signed, admin_only, errors_of
from levy.console.http import Request, Response, redirect
from levy.console.routing import NoMatch, Route, confirmed, editable, route
from levy.domain.errors import LevyError, NotFound, PermissionDenied
from levy.domain.events import TYPES
from levy.transport.codec import to_json
from levy.v1 import events_pb2

if TYPE_CHECKING:
    from levy.console.app import Console

WEBHOOKS = "levy.v1.WebhookService."
#: Endpoints listed on the Webhooks page, deliveries on an endpoint's page, events a page.
ENDPOINT_LIMIT = 100
DELIVERY_LIMIT = 50
EVENT_LIMIT = 50
#: The console page of an event's object, by ``object_type``: its route and the route's parameter.
OBJECT_PAGES = {"transaction": ("transaction", "transaction_id"), "customer": ("customer", "customer_id"),
                "filing": ("return_detail", "filing_id"), "webhook_endpoint": ("webhook", "endpoint_id")}
#: The event filters of the Events page.
EVENT_FILTERS = ("type", "date_from", "date_to")


def event_types(text: str) -> list[str]:
    """The form's event types (commas, spaces or lines); ``*`` for all when none is given."""
    return [t for t in text.replace(",", " ").split() if t] or ["*"]


def endpoint_from_form(req: Request) -> events_pb2.WebhookEndpoint:
    """A ``WebhookEndpoint`` from the form: url, event types, description, enabled."""
    f = req.form
    return events_pb2.WebhookEndpoint(url=f.get("url", "").strip(),
                                      enabled_events=event_types(f.get("enabled_events", "")),
                                      description=f.get("description", "").strip(),
                                      enabled=f.get("enabled") == "on")


def delivery_row(d: dict[str, Any]) -> dict[str, Any]:
    """A delivery of the log with its last attempt's figures (None before the first attempt)."""
    attempts = d.get("attempts", [])
    return {**d, "attempt_count": len(attempts), "last": attempts[-1] if attempts else None}


def events_request(filters: dict[str, str], after: str | None) -> events_pb2.ListEventsRequest:
    """``ListEvents`` of the page's filters: "To" is inclusive, so the API's exclusive
    ``created_to`` is the next day (a value that is not a date goes as sent, for the API to refuse)."""
    request = events_pb2.ListEventsRequest(limit=EVENT_LIMIT)
    if filters["type"]:
        request.type = filters["type"]
    if filters["date_from"]:
        request.created_from = filters["date_from"]
    if filters["date_to"]:
        try:
            request.created_to = (date.fromisoformat(filters["date_to"]) + timedelta(days=1)).isoformat()
        except ValueError:
            request.created_to = filters["date_to"]
    if after:
        request.starting_after = after
    return request


def routes(c: Console) -> list[Route]:
    return [
        *editable("/webhooks", "endpoint_id", c.webhooks, c.webhook_create, c.webhook, c.webhook_update),
        *confirmed("/webhooks/{endpoint_id}/rotate", c.webhook_rotate, c.confirm),
        *confirmed("/webhooks/{endpoint_id}/delete", c.webhook_delete, c.confirm),
        route("POST", "/webhooks/{endpoint_id}/deliveries/{delivery_id}/replay", c.webhook_replay, writes=True),
        route("GET", "/events", c.events),
        route("GET", "/events/{event_id}", c.event),
    ]


class WebhookPages:
    # ------------------------------------------------------------------ webhook endpoints

    async def webhooks(self: Console, req: Request, signed: Signed, *, created: dict[str, Any] | None = None,
                       errors: dict[str, str] | None = None, status: int = 200) -> Response:
        admin_only(signed)
        listing = await self.call(signed, WEBHOOKS + "ListWebhookEndpoints",
                                  events_pb2.ListWebhookEndpointsRequest(limit=ENDPOINT_LIMIT))
        return self._page(status, "webhooks.html", signed, endpoints=[to_json(e) for e in listing.data],
                          more=listing.has_more, created=created, errors=errors or {}, form=req.form,
                          types=list(TYPES))

    async def webhook_create(self: Console, req: Request, signed: Signed) -> Response:
        admin_only(signed)
        endpoint = endpoint_from_form(req)
        endpoint.enabled = True  # a new endpoint is enabled (the form has no such box)
        if not endpoint.description:
            endpoint.ClearField("description")  # none, not an empty one (an edit sends "" to clear it)
        try:
            made = await self.audited(signed, WEBHOOKS + "CreateWebhookEndpoint",
                                      events_pb2.CreateWebhookEndpointRequest(webhook_endpoint=endpoint),
                                      "webhook_endpoint.created", "",
                                      f"{endpoint.url} ({', '.join(endpoint.enabled_events)})")
        except LevyError as e:
            if isinstance(e, (NotFound, PermissionDenied)):
                raise
            return await self.webhooks(req, signed, errors=errors_of(e), status=422)
        # The secret is in this answer only: the page shows it once, it is never shown again.
        return await self.webhooks(req, signed, created=to_json(made), status=201)

    async def webhook(self: Console, req: Request, signed: Signed, *, secret: str = "",
                      errors: dict[str, str] | None = None, status: int = 200) -> Response:
        admin_only(signed)
        eid = req.params["endpoint_id"]
        found = await self.call(signed, WEBHOOKS + "GetWebhookEndpoint",
                                events_pb2.GetWebhookEndpointRequest(endpoint_id=eid))
        log = await self.call(signed, WEBHOOKS + "ListWebhookDeliveries",
                              events_pb2.ListWebhookDeliveriesRequest(endpoint_id=eid, limit=DELIVERY_LIMIT))
        return self._page(status, "webhook.html", signed, e=to_json(found), secret=secret,
                          deliveries=[delivery_row(to_json(d)) for d in log.data], more=log.has_more,
                          errors=errors or {}, form=req.form, types=list(TYPES))

    async def webhook_update(self: Console, req: Request, signed: Signed) -> Response:
        admin_only(signed)
        eid = req.params["endpoint_id"]
        endpoint = endpoint_from_form(req)
        request = events_pb2.UpdateWebhookEndpointRequest(endpoint_id=eid, webhook_endpoint=endpoint)
        request.update_mask.paths.extend(["url", "enabled_events", "description", "enabled"])

        async def write() -> None:
            await self.audited(signed, WEBHOOKS + "UpdateWebhookEndpoint", request, "webhook_endpoint.updated", eid,
                               f"{endpoint.url} ({', '.join(endpoint.enabled_events)}); "
                               f"enabled={endpoint.enabled}")

        return await self.form_or_error(req, signed, write, self.webhook, self.url_for("webhook", endpoint_id=eid))

    async def webhook_rotate(self: Console, req: Request, signed: Signed) -> Response:
        admin_only(signed)
        eid = req.params["endpoint_id"]
        rotated = await self.audited(signed, WEBHOOKS + "RotateWebhookEndpointSecret",
                                     events_pb2.RotateWebhookEndpointSecretRequest(endpoint_id=eid),
                                     "webhook_endpoint.secret_rotated", eid)
        req.form = {}  # the confirmation's form is not the edit form's
        return await self.webhook(req, signed, secret=rotated.secret)  # shown this once

    async def webhook_delete(self: Console, req: Request, signed: Signed) -> Response:
        admin_only(signed)
        eid = req.params["endpoint_id"]
        await self.audited(signed, WEBHOOKS + "DeleteWebhookEndpoint",
                           events_pb2.DeleteWebhookEndpointRequest(endpoint_id=eid), "webhook_endpoint.deleted", eid)
        return redirect(self.url_for("webhooks"))

    async def webhook_replay(self: Console, req: Request, signed: Signed) -> Response:
        admin_only(signed)
        eid, did = req.params["endpoint_id"], req.params["delivery_id"]
        try:
            await self.audited(signed, WEBHOOKS + "ReplayWebhookDelivery",
                               events_pb2.ReplayWebhookDeliveryRequest(endpoint_id=eid, delivery_id=did),
                               "webhook_delivery.replayed", did, eid)
        except LevyError as e:
            if isinstance(e, (NotFound, PermissionDenied)):
                raise
            req.form = {}
            return await self.webhook(req, signed, errors={"": e.detail}, status=422)
        return redirect(self.url_for("webhook", endpoint_id=eid) + f"#{did}")

    # ------------------------------------------------------------------ events

    async def events(self: Console, req: Request, signed: Signed) -> Response:
        admin_only(signed)
        filters = {name: req.query.get(name, "").strip()[:64] for name in EVENT_FILTERS}
        after = req.query.get("after", "")[:64] or None
        try:
            listing = await self.call(signed, "levy.v1.EventService.ListEvents", events_request(filters, after))
            items, more, error = [to_json(e) for e in listing.data], listing.has_more, ""
        except LevyError as e:
            if isinstance(e, (NotFound, PermissionDenied)):
                raise
            items, more, error = [], False, "; ".join(item.detail for item in e.items)
        kept = {k: v for k, v in filters.items() if v}
        return self._page(422 if error else 200, "events.html", signed, events=items, more=more, error=error,
                          filters=filters, types=list(TYPES), first_page=after is None, first_query=urlencode(kept),
                          next_query=urlencode({**kept, "after": items[-1]["id"]}) if more else "")

    async def event(self: Console, req: Request, signed: Signed) -> Response:
        admin_only(signed)
        found = to_json(await self.call(signed, "levy.v1.EventService.GetEvent",
                                        events_pb2.GetEventRequest(event_id=req.params["event_id"])))
        link = ""
        if found.get("object_type") in OBJECT_PAGES and found.get("object_id"):
            name, param = OBJECT_PAGES[found["object_type"]]
            try:
                link = self.url_for(name, **{param: found["object_id"]})
            except NoMatch:  # an id that no console page takes
                link = ""
        # Rendered as text by the template (autoescaped): a payload's strings are never markup.
        return self._page(200, "event.html", signed, ev=found, link=link,
                          payload=json.dumps(found, indent=2, ensure_ascii=False))

