"""Business locations (admin-scoped keys). Thin: messages in,
``levy.app.locations`` out. The ZIP check reads the process's rate table (the
ZIP directory and the imported records)."""

from __future__ import annotations

from levy.app import locations as app
from levy.app.context import CallContext
from levy.app.handlers.messages import optional, present_fields, set_time
from levy.app.registry import handles
from levy.domain.locations import BusinessLocation, LocationInput, ZipInState
from levy.v1 import locations_pb2 as pb

_ADDRESS_FIELDS = ("line1", "line2", "city", "state", "postal_code", "country")
_TOP_FIELDS = ("name", "is_default", "effective_from", "effective_to")


def _zips(ctx: CallContext) -> ZipInState:
    return app.table_checker(ctx.services.rates.table)


def location_message(loc: BusinessLocation) -> pb.BusinessLocation:
    """The API's message of a location (also printed by `levy locations`)."""
    a = loc.address
    out = pb.BusinessLocation(
        id=loc.id,
        name=loc.name,
        is_default=loc.is_default,
        effective_from=loc.effective_from.isoformat(),
        address=pb.LocationAddress(line1=a.line1, city=a.city, country=a.country),
    )
    for name, value in (("line2", loc.line2), ("state", a.state), ("postal_code", a.postal_code)):
        if value is not None:
            setattr(out.address, name, value)
    if loc.effective_to is not None:
        out.effective_to = loc.effective_to.isoformat()
    set_time(out.archived_at, loc.archived_at)
    set_time(out.created_at, loc.created_at)
    set_time(out.updated_at, loc.updated_at)
    return out


def _address_values(msg: pb.BusinessLocation) -> dict[str, object]:
    return {name: optional(msg.address, name) for name in _ADDRESS_FIELDS}


@handles("levy.v1.LocationService.ListLocations")
async def list_locations(req: pb.ListLocationsRequest, ctx: CallContext) -> pb.ListLocationsResponse:
    limit = optional(req, "limit")
    async with ctx.uow() as conn:
        items, more = await app.list_locations(
            conn, ctx.organization_id, limit, req.starting_after, req.include_archived
        )
    return pb.ListLocationsResponse(data=[location_message(loc) for loc in items], has_more=more)


@handles("levy.v1.LocationService.CreateLocation")
async def create_location(req: pb.CreateLocationRequest, ctx: CallContext) -> pb.BusinessLocation:
    b = req.location
    given = LocationInput(**{n: optional(b, n) for n in _TOP_FIELDS}, **_address_values(b))  # type: ignore[arg-type]
    async with ctx.uow(write=True) as conn:
        loc = await app.create_location(conn, ctx.organization_id, given, _zips(ctx))
        ctx.created(loc.id)
    return location_message(loc)


@handles("levy.v1.LocationService.GetLocation")
async def get_location(req: pb.GetLocationRequest, ctx: CallContext) -> pb.BusinessLocation:
    async with ctx.uow() as conn:
        return location_message(await app.show_location(conn, ctx.organization_id, req.location_id))


@handles("levy.v1.LocationService.UpdateLocation")
async def update_location(req: pb.UpdateLocationRequest, ctx: CallContext) -> pb.BusinessLocation:
    """JSON: the keys sent (even as null) change; gRPC without a mask: the fields set.
    An ``address`` sent replaces the whole address."""
    body = req.location
    present = present_fields(body, req.update_mask.paths, (*_TOP_FIELDS, "address"), "location")
    changes: dict[str, object] = {n: optional(body, n) for n in _TOP_FIELDS if n in present}
    if "address" in present:
        changes.update(_address_values(body))
    async with ctx.uow(write=True) as conn:
        loc = await app.update_location(conn, ctx.organization_id, req.location_id, changes, _zips(ctx))
    return location_message(loc)


@handles("levy.v1.LocationService.ArchiveLocation")
async def archive_location(req: pb.ArchiveLocationRequest, ctx: CallContext) -> pb.BusinessLocation:
    async with ctx.uow(write=True) as conn:
        return location_message(await app.archive_location(conn, ctx.organization_id, req.location_id))


@handles("levy.v1.LocationService.UnarchiveLocation")
async def unarchive_location(req: pb.UnarchiveLocationRequest, ctx: CallContext) -> pb.BusinessLocation:
    async with ctx.uow(write=True) as conn:
        return location_message(await app.unarchive_location(conn, ctx.organization_id, req.location_id))
