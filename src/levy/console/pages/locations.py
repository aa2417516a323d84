"""Business locations, for admins (as the API's methods are): list (archived ones on request),
create, edit, archive (behind a confirmation page) and unarchive, each the API's own RPC."""

from __future__ import annotations

from typing import TYPE_CHECKING

from levy.console.helpers import Signed, plain, text
from levy.console.http import Request, Response
from levy.console.routing import Route, confirmed, editable, route
from levy.v1 import locations_pb2

if TYPE_CHECKING:
    from levy.console.app import Console

#: The location form's address fields (``levy.v1.LocationAddress``).
ADDRESS_FIELDS = ("line1", "line2", "city", "state", "postal_code", "country")
LIST_LIMIT = 100


def routes(c: Console) -> list[Route]:
    return [
        *editable("/locations", "location_id", c.locations, c.location_create, c.location, c.location_update),
        *confirmed("/locations/{location_id}/archive", c.location_archive, c.confirm),
        route("POST", "/locations/{location_id}/unarchive", c.location_unarchive, writes=True),
    ]


def location_from_form(req: Request) -> locations_pb2.BusinessLocation:
    """A ``BusinessLocation`` from the form (an empty "To" is open-ended)."""
    loc = locations_pb2.BusinessLocation(is_default=req.form.get("is_default") == "on")
    for name in ("name", "effective_from", "effective_to"):
        if text(req, name):
            setattr(loc, name, text(req, name))
    for name in ADDRESS_FIELDS:
        if text(req, name):
            setattr(loc.address, name, text(req, name))
    return loc


class LocationPages:
    async def locations(self: Console, req: Request, signed: Signed, *, errors: dict[str, str] | None = None,
                        status: int = 200) -> Response:
        archived = req.query.get("archived") == "1"
        request = locations_pb2.ListLocationsRequest(limit=LIST_LIMIT, include_archived=archived)
        if req.query.get("after"):
            request.starting_after = req.query["after"][:255]
        listing = await self.call(signed, "levy.v1.LocationService.ListLocations", request)
        return self._page(status, "locations.html", signed, locations=[plain(x) for x in listing.data],
                          more=listing.has_more, archived=archived, errors=errors or {}, form=req.form)

    async def location_create(self: Console, req: Request, signed: Signed) -> Response:
        loc = location_from_form(req)

        async def write() -> None:
            await self.audited(signed, "levy.v1.LocationService.CreateLocation",
                               locations_pb2.CreateLocationRequest(location=loc), "location.created", "",
                               f"{loc.name}: {loc.address.city} {loc.address.state}")

        return await self.form_or_error(req, signed, write, self.locations, self.url_for("locations"))

    async def location(self: Console, req: Request, signed: Signed, *, errors: dict[str, str] | None = None,
                       status: int = 200) -> Response:
        found = await self.call(signed, "levy.v1.LocationService.GetLocation",
                                locations_pb2.GetLocationRequest(location_id=req.params["location_id"]))
        return self._page(status, "location.html", signed, loc=plain(found), errors=errors or {}, form=req.form,
                          address_fields=ADDRESS_FIELDS)

    async def location_update(self: Console, req: Request, signed: Signed) -> Response:
        lid = req.params["location_id"]
        loc = location_from_form(req)
        request = locations_pb2.UpdateLocationRequest(location_id=lid, location=loc)
        # The whole form: an empty "To" clears it (open-ended), the address is replaced whole.
        request.update_mask.paths.extend(["name", "address", "is_default", "effective_from", "effective_to"])

        async def write() -> None:
            await self.audited(signed, "levy.v1.LocationService.UpdateLocation", request, "location.updated", lid,
                               f"{loc.name}: {loc.address.city} {loc.address.state}")

        return await self.form_or_error(req, signed, write, self.location,
                                        self.url_for("location", location_id=lid))

    async def location_archive(self: Console, req: Request, signed: Signed) -> Response:
        return await self._location_state(req, signed, "ArchiveLocation", "archived")

    async def location_unarchive(self: Console, req: Request, signed: Signed) -> Response:
        return await self._location_state(req, signed, "UnarchiveLocation", "unarchived")

    async def _location_state(self: Console, req: Request, signed: Signed, rpc: str, done: str) -> Response:
        lid = req.params["location_id"]
        request_type = getattr(locations_pb2, f"{rpc}Request")

        async def write() -> None:
            await self.audited(signed, f"levy.v1.LocationService.{rpc}", request_type(location_id=lid),
                               f"location.{done}", lid)

        return await self.form_or_error(req, signed, write, self.location,
                                        self.url_for("location", location_id=lid))
