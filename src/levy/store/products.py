"""Products in SQL. Every query is scoped by ``organization_id``."""

from __future__ import annotations

import dataclasses
import json
from datetime import datetime, timezone
from typing import Any

from sqlalchemy import select, update
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.exc import IntegrityError
from sqlalchemy.ext.asyncio import AsyncConnection

from levy.domain import ids
from levy.domain.products import ProductRecord
from levy.store.tables.areas import products

_TRIPLE = ("organization_id", "source", "source_account_id", "source_id")


def utcnow() -> datetime:
    return datetime.now(timezone.utc)


def _record(row: Any) -> ProductRecord:
    data = dict(row._mapping)
    data["tax_codes"] = tuple(json.loads(data["tax_codes"]))
    return ProductRecord(**data)


def _columns(values: dict[str, Any]) -> dict[str, Any]:
    out = dict(values)
    if "tax_codes" in out:
        out["tax_codes"] = json.dumps(list(out["tax_codes"]))
    return out


async def get_product(
    conn: AsyncConnection, organization_id: str, product_id: str, *, for_update: bool = False
) -> ProductRecord | None:
    q = select(products).where(products.c.organization_id == organization_id, products.c.id == product_id)
    if for_update:
        q = q.with_for_update()
    row = (await conn.execute(q)).first()
    return _record(row) if row else None


async def get_product_for_preset(conn: AsyncConnection, organization_id: str, product_id: str) -> ProductRecord | None:
    """The product a calculation or transaction line names as ``product.preset``.

    Archived products are returned too (``record.archived``) so that the caller
    can refuse them with a precise message (``levy.domain.products.require_usable_preset``).
    """
    return await get_product(conn, organization_id, product_id)


async def find_by_triple(
    conn: AsyncConnection, organization_id: str, source: str, source_account_id: str, source_id: str
) -> ProductRecord | None:
    row = (
        await conn.execute(
            select(products).where(
                products.c.organization_id == organization_id,
                products.c.source == source,
                products.c.source_account_id == source_account_id,
                products.c.source_id == source_id,
            )
        )
    ).first()
    return _record(row) if row else None


async def insert_product(
    conn: AsyncConnection, organization_id: str, values: dict[str, Any]
) -> tuple[ProductRecord | None, ProductRecord | None]:
    """Insert a product: (created, None), or (None, existing) when its triple is taken.

    The unique index decides (``INSERT ... ON CONFLICT DO NOTHING``), so two
    concurrent creates of one triple yield one product and one 409.
    """
    now = utcnow()
    row = {
        "id": ids.new_id("prd"),
        "organization_id": organization_id,
        "created_at": now,
        "updated_at": now,
        "archived_at": None,
        **values,
    }
    dialect = postgresql if conn.dialect.name == "postgresql" else sqlite
    stmt = (
        dialect.insert(products)
        .values(**_columns(row))
        .on_conflict_do_nothing(index_elements=[products.c[c] for c in _TRIPLE])
        .returning(products.c.id)
    )
    if (await conn.execute(stmt)).first() is not None:
        return ProductRecord(**row), None
    existing = await find_by_triple(
        conn, organization_id, values["source"], values["source_account_id"], values["source_id"]
    )
    assert existing is not None, "conflict without a row"
    return None, existing


async def update_product(
    conn: AsyncConnection, current: ProductRecord, changes: dict[str, Any]
) -> tuple[ProductRecord | None, ProductRecord | None]:
    """Apply ``changes``: (updated, None), or (None, existing) when a changed triple is taken.

    No changes (an empty PATCH) writes nothing and keeps ``updated_at``.
    """
    if not changes:
        return current, None
    values = {**changes, "updated_at": utcnow()}
    triple = {c: changes.get(c, getattr(current, c)) for c in _TRIPLE[1:]}
    if any(triple[c] != getattr(current, c) for c in triple):
        other = await find_by_triple(conn, current.organization_id, **triple)
        if other is not None and other.id != current.id:
            return None, other
    stmt = (
        update(products)
        .where(products.c.organization_id == current.organization_id, products.c.id == current.id)
        .values(**_columns(values))
    )
    try:
        async with conn.begin_nested():
            await conn.execute(stmt)
    except IntegrityError:  # a concurrent create took the new triple
        other = await find_by_triple(conn, current.organization_id, **triple)
        if other is None:
            raise
        return None, other
    return dataclasses.replace(current, **values), None


async def archive_product(conn: AsyncConnection, organization_id: str, product_id: str) -> ProductRecord | None:
    """Archive a product (idempotent: an archived product keeps its first ``archived_at``)."""
    now = utcnow()
    await conn.execute(
        update(products)
        .where(
            products.c.organization_id == organization_id,
            products.c.id == product_id,
            products.c.archived_at.is_(None),
        )
        .values(archived_at=now, updated_at=now)
    )
    return await get_product(conn, organization_id, product_id)


async def list_products(
    conn: AsyncConnection, organization_id: str, limit: int, starting_after: str | None
) -> tuple[list[ProductRecord], bool]:
    """Newest first by id (keyset), archived products included."""
    q = (
        select(products)
        .where(products.c.organization_id == organization_id)
        .order_by(products.c.id.desc())
        .limit(limit + 1)
    )
    if starting_after:
        q = q.where(products.c.id < starting_after)
    rows = [_record(r) for r in (await conn.execute(q)).all()]
    return rows[:limit], len(rows) > limit
