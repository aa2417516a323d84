"""Products (spec sections 2.2, 4.3; retrieve, list and archive are Levy's).

Thin: the request message becomes a dict of the fields present, the use case of
``levy.app.products`` runs in one unit of work (the rules are ``levy.domain.products``),
and its :class:`~levy.domain.products.ProductView` becomes the message.
"""

from __future__ import annotations

from datetime import timezone
from typing import Any

from google.protobuf import empty_pb2

from levy.app import products
from levy.app.context import CallContext
from levy.app.handlers.messages import page_of, present_fields, set_time
from levy.app.registry import handles
from levy.domain import products as rules
from levy.v1 import products_pb2 as pb


def _present(product: pb.Product, mask: list[str]) -> dict[str, Any]:
    """The input fields present in the request; a field present but unset (JSON null) maps to None.

    Which fields: :func:`present_fields` (an unknown mask path is refused).
    """
    names = present_fields(product, mask, rules.PRODUCT_FIELDS, "product")
    out: dict[str, Any] = {}
    for name in names:
        if name == "tax_codes":
            out[name] = list(product.tax_codes)
        elif not product.HasField(name):
            out[name] = None
        elif name == "source_updated_at":
            out[name] = product.source_updated_at.ToDatetime(tzinfo=timezone.utc)
        else:
            out[name] = getattr(product, name)
    return out


def to_message(view: rules.ProductView) -> pb.Product:
    record = view.record
    msg = pb.Product(
        id=record.id,
        source_id=record.source_id,
        source=record.source,
        source_account_id=record.source_account_id,
        name=record.name,
        tax_codes=list(record.tax_codes),
        resolved_tax_codes=list(view.resolved_tax_codes),
        marked_sales_tax=record.marked_sales_tax,
    )
    if record.description is not None:
        msg.description = record.description
    if record.source_category is not None:
        msg.source_category = record.source_category
    set_time(msg.source_updated_at, record.source_updated_at)
    set_time(msg.created_at, record.created_at)
    set_time(msg.updated_at, record.updated_at)
    set_time(msg.archived_at, record.archived_at)
    return msg


@handles("levy.v1.ProductService.CreateProduct")
async def create_product(req: pb.CreateProductRequest, ctx: CallContext) -> pb.Product:
    fields = _present(req.product, [])
    async with ctx.uow(write=True) as conn:
        product = await products.create_product(conn, ctx.organization_id, fields, ref=ctx.services.reference)
        ctx.created(product.record.id)
    return to_message(product)


@handles("levy.v1.ProductService.GetProduct")
async def get_product(req: pb.GetProductRequest, ctx: CallContext) -> pb.Product:
    async with ctx.uow() as conn:
        return to_message(await products.get_product(conn, ctx.organization_id, req.product_id))


@handles("levy.v1.ProductService.ListProducts")
async def list_products(req: pb.ListProductsRequest, ctx: CallContext) -> pb.ListProductsResponse:
    page = page_of(req)
    async with ctx.uow() as conn:
        views, has_more = await products.list_products(conn, ctx.organization_id, page)
    return pb.ListProductsResponse(data=[to_message(v) for v in views], has_more=has_more)


@handles("levy.v1.ProductService.UpdateProduct")
async def update_product(req: pb.UpdateProductRequest, ctx: CallContext) -> pb.Product:
    fields = _present(req.product, list(req.update_mask.paths))
    async with ctx.uow(write=True) as conn:
        view = await products.update_product(conn, ctx.organization_id, req.product_id, fields,
                                             ref=ctx.services.reference)
        return to_message(view)


@handles("levy.v1.ProductService.DeleteProduct")
async def delete_product(req: pb.DeleteProductRequest, ctx: CallContext) -> empty_pb2.Empty:
    async with ctx.uow(write=True) as conn:
        await products.delete_product(conn, ctx.organization_id, req.product_id)
    return empty_pb2.Empty()
