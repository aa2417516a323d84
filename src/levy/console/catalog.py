"""The console's products and business-locations pages (issue 36): list, create, edit, and
the destructive actions (archive a product: the API's ``DeleteProduct``; archive a location) behind a confirmation page.

Every action is the API's own RPC run as the signed-in user (``Console.call`` and
``Console.audited``): the validation, the admin-only rule of locations and the error messages
are the API's. This module only maps forms to requests and answers to pages.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from levy.domain.errors import LevyError, NotFound, PermissionDenied
from levy.v1 import locations_pb2, products_pb2

from levy.console.http import Request, Response, redirect

if TYPE_CHECKING:
    from levy.console.app import Console, Signed

#: The product form's text fields (``levy.v1.Product``), and its tax codes (comma-separated).
PRODUCT_TEXT = ("name", "description", "source_category")
#: The location form's address fields (``levy.v1.LocationAddress``).
ADDRESS_FIELDS = ("line1", "line2", "city", "state", "postal_code", "country")

LIST_LIMIT = 100


def _text(req: Request, name: str) -> str:
    return req.form.get(name, "").strip()


def _codes(req: Request) -> list[str]:
    return [c.strip() for c in req.form.get("tax_codes", "").replace("\n", ",").split(",") if c.strip()]


def product_from_form(req: Request, *, with_source_id: bool) -> products_pb2.Product:
    """A ``Product`` from the form: the text fields given, the tax codes (comma-separated)."""
    product = products_pb2.Product(tax_codes=_codes(req))
    for name in (("source_id",) if with_source_id else ()) + PRODUCT_TEXT:
        if _text(req, name):
            setattr(product, name, _text(req, name))
    return product


def location_from_form(req: Request) -> locations_pb2.BusinessLocation:
    """A ``BusinessLocation`` from the form (an empty "To" is open-ended)."""
    loc = locations_pb2.BusinessLocation(is_default=req.form.get("is_default") == "on")
    for name in ("name", "effective_from", "effective_to"):
        if _text(req, name):
            setattr(loc, name, _text(req, name))
    for name in ADDRESS_FIELDS:
        if _text(req, name):
            setattr(loc.address, name, _text(req, name))
    return loc


class CatalogPages:
    """Mixed into :class:`levy.console.app.Console`."""

    def add_catalog_routes(self: Console) -> None:
        r = self._route
        r("GET", "/products", self.products)
        r("POST", "/products", self.product_create, writes=True)
        r("GET", "/products/{product_id}", self.product)
        r("POST", "/products/{product_id}", self.product_update, writes=True)
        r("POST", "/products/{product_id}/archive", self.product_archive, writes=True)
        r("GET", "/products/{product_id}/archive", self.confirm)
        r("GET", "/locations", self.locations)
        r("POST", "/locations", self.location_create, writes=True)
        r("GET", "/locations/{location_id}", self.location)
        r("POST", "/locations/{location_id}", self.location_update, writes=True)
        r("POST", "/locations/{location_id}/archive", self.location_archive, writes=True)
        r("GET", "/locations/{location_id}/archive", self.confirm)
        r("POST", "/locations/{location_id}/unarchive", self.location_unarchive, writes=True)

    async def _form_or_error(self: Console, req: Request, signed: Signed, write: Any, page: Any,
                             success: str) -> Response:
        """Run ``write()``; on a validation error show ``page`` with the field errors (422)."""
        from levy.console.app import _errors

        try:
            await write()
        except LevyError as e:
            if isinstance(e, (NotFound, PermissionDenied)):
                raise
            return await page(req, signed, errors=_errors(e), status=422)
        return redirect(f"{self.prefix}{success}")

    # ------------------------------------------------------------------ products

    async def products(self: Console, req: Request, signed: Signed, *, errors: dict[str, str] | None = None,
                       status: int = 200) -> Response:
        request = products_pb2.ListProductsRequest(limit=LIST_LIMIT)
        if req.query.get("after"):
            request.starting_after = req.query["after"][:255]
        listing = await self.call(signed, "levy.v1.ProductService.ListProducts", request)
        items = [_plain(p) for p in listing.data]
        return self._page(status, "products.html", signed, products=items, more=listing.has_more,
                          errors=errors or {}, form=req.form)

    async def product_create(self: Console, req: Request, signed: Signed) -> Response:
        product = product_from_form(req, with_source_id=True)
        created: list[str] = []

        async def write() -> None:
            made = await self.audited(signed, "levy.v1.ProductService.CreateProduct",
                                      products_pb2.CreateProductRequest(product=product), "product.created", "",
                                      f"{product.source_id}: {product.name}")
            created.append(made.id)

        resp = await self._form_or_error(req, signed, write, self.products, "/products")
        return redirect(f"{self.prefix}/products/{created[0]}") if created else resp

    async def product(self: Console, req: Request, signed: Signed, *, errors: dict[str, str] | None = None,
                      status: int = 200) -> Response:
        found = await self.call(signed, "levy.v1.ProductService.GetProduct",
                                products_pb2.GetProductRequest(product_id=req.params["product_id"]))
        return self._page(status, "product.html", signed, p=_plain(found), errors=errors or {}, form=req.form)

    async def product_update(self: Console, req: Request, signed: Signed) -> Response:
        pid = req.params["product_id"]
        product = product_from_form(req, with_source_id=False)
        request = products_pb2.UpdateProductRequest(product_id=pid, product=product)
        request.update_mask.paths.extend([*PRODUCT_TEXT, "tax_codes"])

        async def write() -> None:
            await self.audited(signed, "levy.v1.ProductService.UpdateProduct", request, "product.updated", pid,
                               f"name={product.name}; tax_codes={','.join(product.tax_codes)}")

        return await self._form_or_error(req, signed, write, self.product, f"/products/{pid}")

    async def product_archive(self: Console, req: Request, signed: Signed) -> Response:
        """The API's ``DeleteProduct``, which archives (docs/products.md)."""
        pid = req.params["product_id"]
        await self.audited(signed, "levy.v1.ProductService.DeleteProduct",
                           products_pb2.DeleteProductRequest(product_id=pid), "product.archived", pid)
        return redirect(f"{self.prefix}/products/{pid}")

    # ------------------------------------------------------------------ business locations (admins)

    async def locations(self: Console, req: Request, signed: Signed, *, errors: dict[str, str] | None = None,
                        status: int = 200) -> Response:
        archived = req.query.get("archived") == "1"
        request = locations_pb2.ListLocationsRequest(limit=LIST_LIMIT, include_archived=archived)
        if req.query.get("after"):
            request.starting_after = req.query["after"][:255]
        listing = await self.call(signed, "levy.v1.LocationService.ListLocations", request)
        return self._page(status, "locations.html", signed, locations=[_plain(x) for x in listing.data],
                          more=listing.has_more, archived=archived, errors=errors or {}, form=req.form)

    async def location_create(self: Console, req: Request, signed: Signed) -> Response:
        loc = location_from_form(req)

        async def write() -> None:
            await self.audited(signed, "levy.v1.LocationService.CreateLocation",
                               locations_pb2.CreateLocationRequest(location=loc), "location.created", "",
                               f"{loc.name}: {loc.address.city} {loc.address.state}")

        return await self._form_or_error(req, signed, write, self.locations, "/locations")

    async def location(self: Console, req: Request, signed: Signed, *, errors: dict[str, str] | None = None,
                       status: int = 200) -> Response:
        found = await self.call(signed, "levy.v1.LocationService.GetLocation",
                                locations_pb2.GetLocationRequest(location_id=req.params["location_id"]))
        return self._page(status, "location.html", signed, loc=_plain(found), errors=errors or {}, form=req.form,
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

        return await self._form_or_error(req, signed, write, self.location, f"/locations/{lid}")

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

        return await self._form_or_error(req, signed, write, self.location, f"/locations/{lid}")


def _plain(msg: Any) -> dict[str, Any]:
    from levy.console.app import _plain as plain

    return plain(msg)
