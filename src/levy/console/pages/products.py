"""Products: list, create, edit and archive (the API's ``DeleteProduct``, behind a confirmation
page). Every action is the API's own RPC run as the signed-in user, whose handler calls
``levy.app.products``: the validation and the error messages are the API's."""

from __future__ import annotations

from typing import TYPE_CHECKING

from levy.console.helpers import Signed, codes, plain, text
from levy.console.http import Request, Response, redirect
from levy.console.routing import Route, confirmed, editable
from levy.v1 import products_pb2

if TYPE_CHECKING:
    from levy.console.app import Console

#: The product form's text fields (``levy.v1.Product``), and its tax codes (comma-separated).
PRODUCT_TEXT = ("name", "description", "source_category")
LIST_LIMIT = 100


def routes(c: Console) -> list[Route]:
    return [
        *editable("/products", "product_id", c.products, c.product_create, c.product, c.product_update),
        *confirmed("/products/{product_id}/archive", c.product_archive, c.confirm),
    ]


def product_from_form(req: Request, *, with_source_id: bool) -> products_pb2.Product:
    """A ``Product`` from the form: the text fields given, the tax codes (comma-separated)."""
    product = products_pb2.Product(tax_codes=codes(req.form.get("tax_codes", "")))
    for name in (("source_id",) if with_source_id else ()) + PRODUCT_TEXT:
        if text(req, name):
            setattr(product, name, text(req, name))
    return product


class ProductPages:
    async def products(self: Console, req: Request, signed: Signed, *, errors: dict[str, str] | None = None,
                       status: int = 200) -> Response:
        request = products_pb2.ListProductsRequest(limit=LIST_LIMIT)
        if req.query.get("after"):
            request.starting_after = req.query["after"][:255]
        listing = await self.call(signed, "levy.v1.ProductService.ListProducts", request)
        items = [plain(p) for p in listing.data]
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

        resp = await self.form_or_error(req, signed, write, self.products, self.url_for("products"))
        return redirect(self.url_for("product", product_id=created[0])) if created else resp

    async def product(self: Console, req: Request, signed: Signed, *, errors: dict[str, str] | None = None,
                      status: int = 200) -> Response:
        found = await self.call(signed, "levy.v1.ProductService.GetProduct",
                                products_pb2.GetProductRequest(product_id=req.params["product_id"]))
        return self._page(status, "product.html", signed, p=plain(found), errors=errors or {}, form=req.form)

    async def product_update(self: Console, req: Request, signed: Signed) -> Response:
        pid = req.params["product_id"]
        product = product_from_form(req, with_source_id=False)
        request = products_pb2.UpdateProductRequest(product_id=pid, product=product)
        request.update_mask.paths.extend([*PRODUCT_TEXT, "tax_codes"])

        async def write() -> None:
            await self.audited(signed, "levy.v1.ProductService.UpdateProduct", request, "product.updated", pid,
                               f"name={product.name}; tax_codes={','.join(product.tax_codes)}")

        return await self.form_or_error(req, signed, write, self.product, self.url_for("product", product_id=pid))

    async def product_archive(self: Console, req: Request, signed: Signed) -> Response:
        """The API's ``DeleteProduct``, which archives (docs/products.md)."""
        pid = req.params["product_id"]
        await self.audited(signed, "levy.v1.ProductService.DeleteProduct",
                           products_pb2.DeleteProductRequest(product_id=pid), "product.archived", pid)
        return redirect(self.url_for("product", product_id=pid))
