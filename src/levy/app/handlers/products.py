"""Products (spec sections 2.2, 4.3; retrieve, list and archive are Levy's).

Thin: the request message becomes a dict of the fields present, the domain
(``levy.domain.products``) validates it, the store (``levy.store.products``)
writes it in one transaction, and ``resolved_tax_codes`` is computed from the
organization settings read in the same transaction.
"""

from __future__ import annotations

from datetime import timezone
from typing import Any

from google.protobuf import empty_pb2
from sqlalchemy.ext.asyncio import AsyncConnection

from levy.app.context import CallContext
from levy.app.handlers.messages import page_of, present_fields, set_time
from levy.app.registry import handles
from levy.domain import products as rules
from levy.domain.errors import Conflict, NotFound
from levy.domain.settings import OrganizationSettings
from levy.store import products as store
from levy.store.settings import get_settings
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


def to_message(record: rules.ProductRecord, settings: OrganizationSettings) -> pb.Product:
    msg = pb.Product(
        id=record.id,
        source_id=record.source_id,
        source=record.source,
        source_account_id=record.source_account_id,
        name=record.name,
        tax_codes=list(record.tax_codes),
        resolved_tax_codes=rules.resolved_codes(record, settings),
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


def _duplicate(existing: rules.ProductRecord) -> Conflict:
    meta: dict[str, Any] = {
        "existing_product_id": existing.id,
        "existing_product_path": rules.product_path(existing.id),
    }
    if existing.archived:
        meta["archived"] = True
    return Conflict(
        f"A product with source '{existing.source}', source_account_id '{existing.source_account_id}' and "
        f"source_id '{existing.source_id}' already exists: {existing.id}"
        + (" (archived)" if existing.archived else ""),
        code=rules.DUPLICATE_PRODUCT,
        meta=meta,
    )


def _not_found(product_id: str) -> NotFound:
    return NotFound(f"No product with id '{product_id}'.", pointer=None)


async def _existing(conn: AsyncConnection, ctx: CallContext, product_id: str, *, for_update: bool = False
                    ) -> rules.ProductRecord:
    record = await store.get_product(conn, ctx.organization_id, product_id, for_update=for_update)
    if record is None:
        raise _not_found(product_id)
    return record


async def _respond(conn: AsyncConnection, ctx: CallContext,
                   saved: tuple[rules.ProductRecord | None, rules.ProductRecord | None]) -> pb.Product:
    """The product message of a stored (record, None), or the 409 of a (None, existing) triple clash."""
    record, existing = saved
    if existing is not None:
        raise _duplicate(existing)
    assert record is not None
    settings, _ = await get_settings(conn, ctx.organization_id)
    return to_message(record, settings)


@handles("levy.v1.ProductService.CreateProduct")
async def create_product(req: pb.CreateProductRequest, ctx: CallContext) -> pb.Product:
    ref = ctx.services.reference
    values = rules.validate_create(_present(req.product, []), catalogue=ref.catalogue, sources=ref.customer_sources)
    async with ctx.uow(write=True) as conn:
        product = await _respond(conn, ctx, await store.insert_product(conn, ctx.organization_id, values))
        ctx.created(product.id)
        return product


@handles("levy.v1.ProductService.GetProduct")
async def get_product(req: pb.GetProductRequest, ctx: CallContext) -> pb.Product:
    async with ctx.uow() as conn:
        return await _respond(conn, ctx, (await _existing(conn, ctx, req.product_id), None))


@handles("levy.v1.ProductService.ListProducts")
async def list_products(req: pb.ListProductsRequest, ctx: CallContext) -> pb.ListProductsResponse:
    page = page_of(req)
    async with ctx.uow() as conn:
        records, has_more = await store.list_products(conn, ctx.organization_id, page.limit, page.starting_after)
        settings, _ = await get_settings(conn, ctx.organization_id)
    return pb.ListProductsResponse(data=[to_message(r, settings) for r in records], has_more=has_more)


@handles("levy.v1.ProductService.UpdateProduct")
async def update_product(req: pb.UpdateProductRequest, ctx: CallContext) -> pb.Product:
    fields = _present(req.product, list(req.update_mask.paths))
    async with ctx.uow(write=True) as conn:
        current = await _existing(conn, ctx, req.product_id, for_update=True)
        changes = rules.validate_update(current, fields, catalogue=ctx.services.reference.catalogue,
                                        sources=ctx.services.reference.customer_sources)
        return await _respond(conn, ctx, await store.update_product(conn, current, changes))


@handles("levy.v1.ProductService.DeleteProduct")
async def delete_product(req: pb.DeleteProductRequest, ctx: CallContext) -> empty_pb2.Empty:
    async with ctx.uow(write=True) as conn:
        if await store.archive_product(conn, ctx.organization_id, req.product_id) is None:
            raise _not_found(req.product_id)
    return empty_pb2.Empty()
