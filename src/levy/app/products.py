"""Product use cases, shared by the RPC handlers (gRPC and REST) and, through them, the console.

Each function runs inside the caller's unit of work (``conn``): the organization id and
plain values in (a create or update takes the dict of the fields present, a field sent as
null present with ``None``), :class:`levy.domain.products.ProductView` out. The rules
are ``levy.domain.products``; the rows are ``levy.store.products``; ``resolved_tax_codes``
comes from the organization settings read in the same unit of work.
"""

from __future__ import annotations

from typing import Any

from sqlalchemy.ext.asyncio import AsyncConnection

from levy.domain import products as rules
from levy.domain.errors import Conflict, NotFound
from levy.domain.pagination import PageRequest
from levy.domain.settings import OrganizationSettings
from levy.store import products as store
from levy.store.reference_data import ReferenceData
from levy.store.settings import get_settings


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


def _view(record: rules.ProductRecord, settings: OrganizationSettings) -> rules.ProductView:
    return rules.ProductView(record, tuple(rules.resolved_codes(record, settings)))


async def _shown(conn: AsyncConnection, org: str,
                 saved: tuple[rules.ProductRecord | None, rules.ProductRecord | None]) -> rules.ProductView:
    """The view of a stored (record, None), or the 409 of a (None, existing) triple clash."""
    record, existing = saved
    if existing is not None:
        raise _duplicate(existing)
    assert record is not None
    settings, _ = await get_settings(conn, org)
    return _view(record, settings)


async def _existing(conn: AsyncConnection, org: str, product_id: str, *, lock: bool = False) -> rules.ProductRecord:
    record = await store.get_product(conn, org, product_id, for_update=lock)
    if record is None:
        raise _not_found(product_id)
    return record


async def create_product(conn: AsyncConnection, org: str, fields: dict[str, Any], *, ref: ReferenceData
                         ) -> rules.ProductView:
    """Validate and insert a product; 409 when its (source, source_account_id, source_id) is taken."""
    values = rules.validate_create(fields, catalogue=ref.catalogue, sources=ref.customer_sources)
    return await _shown(conn, org, await store.insert_product(conn, org, values))


async def get_product(conn: AsyncConnection, org: str, product_id: str) -> rules.ProductView:
    """The product (archived ones too); 404 when it is missing or another organization's."""
    return await _shown(conn, org, (await _existing(conn, org, product_id), None))


async def list_products(conn: AsyncConnection, org: str, page: PageRequest) -> tuple[list[rules.ProductView], bool]:
    """A page of the organization's products, and whether more follow."""
    records, has_more = await store.list_products(conn, org, page.limit, page.starting_after)
    settings, _ = await get_settings(conn, org)
    return [_view(r, settings) for r in records], has_more


async def update_product(conn: AsyncConnection, org: str, product_id: str, fields: dict[str, Any], *,
                         ref: ReferenceData) -> rules.ProductView:
    """Change the fields present (locking the row first); an archived product is refused."""
    current = await _existing(conn, org, product_id, lock=True)
    changes = rules.validate_update(current, fields, catalogue=ref.catalogue, sources=ref.customer_sources)
    return await _shown(conn, org, await store.update_product(conn, current, changes))


async def delete_product(conn: AsyncConnection, org: str, product_id: str) -> None:
    """Archive the product (``DeleteProduct`` archives: docs/products.md); 404 when it is missing."""
    if await store.archive_product(conn, org, product_id) is None:
        raise _not_found(product_id)
