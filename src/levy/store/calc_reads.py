"""The reads a calculation needs, in a constant number of queries per request
(never one per line): products, customers and their certificates, registrations.
Every query is scoped by ``organization_id``.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncConnection

from levy.domain.tax.model import Certificate, CustomerExemption, Registration
from levy.store.tables.areas import customers, exemption_certificates, products, registrations


@dataclass(frozen=True, slots=True)
class ProductRow:
    id: str
    source: str
    tax_codes: tuple[str, ...]
    marked_sales_tax: bool
    archived: bool


@dataclass(frozen=True, slots=True)
class CustomerRow:
    id: str
    source: str
    source_account_id: str
    source_id: str
    exemption: CustomerExemption
    merged_into_customer_id: str | None = None


def jurisdiction_code(value: str) -> str:
    """Stored jurisdictions are ``US-ST-CA`` style; a bare state code ``CA`` means its state."""
    value = value.strip().upper()
    return f"US-ST-{value}" if len(value) == 2 and value.isalpha() else value


async def products_by_id(conn: AsyncConnection, organization_id: str, ids: Iterable[str]) -> dict[str, ProductRow]:
    wanted = sorted(set(ids))
    if not wanted:
        return {}
    rows = await conn.execute(
        select(products.c.id, products.c.source, products.c.tax_codes, products.c.marked_sales_tax, products.c.archived_at)
        .where(products.c.organization_id == organization_id)
        .where(products.c.id.in_(wanted))
    )
    return {
        r.id: ProductRow(r.id, r.source, tuple(json.loads(r.tax_codes)), bool(r.marked_sales_tax), r.archived_at is not None)
        for r in rows
    }


async def customers_by_source_id(
    conn: AsyncConnection, organization_id: str, source_ids: Iterable[str]
) -> list[CustomerRow]:
    """Live (not deleted) customers whose ``source_id`` is one of ``source_ids``, with their exemptions."""
    wanted = sorted(set(source_ids))
    if not wanted:
        return []
    rows = (
        await conn.execute(
            select(
                customers.c.id,
                customers.c.source,
                customers.c.source_account_id,
                customers.c.source_id,
                customers.c.override_exempt,
                customers.c.override_resale,
                customers.c.override_manufacturing,
                customers.c.merged_into_customer_id,
            )
            .where(customers.c.organization_id == organization_id)
            .where(customers.c.source_id.in_(wanted))
            .where(customers.c.deleted_at.is_(None))
        )
    ).all()
    certs: dict[str, list[Certificate]] = {}
    if rows:
        result = await conn.execute(
            select(
                exemption_certificates.c.customer_id,
                exemption_certificates.c.jurisdiction,
                exemption_certificates.c.exemption_type,
                exemption_certificates.c.status,
                exemption_certificates.c.starts_at,
                exemption_certificates.c.expires_at,
            )
            .where(exemption_certificates.c.organization_id == organization_id)
            .where(exemption_certificates.c.customer_id.in_([r.id for r in rows]))
            .order_by(exemption_certificates.c.id)
        )
        for c in result:
            certs.setdefault(c.customer_id, []).append(
                Certificate(jurisdiction_code(c.jurisdiction), c.exemption_type, c.status, c.starts_at, c.expires_at)
            )
    return [
        CustomerRow(
            r.id,
            r.source,
            r.source_account_id,
            r.source_id,
            CustomerExemption(
                exempt=bool(r.override_exempt),
                resale=bool(r.override_resale),
                manufacturing=bool(r.override_manufacturing),
                certificates=tuple(certs.get(r.id, ())),
            ),
            r.merged_into_customer_id,
        )
        for r in rows
    ]


async def registrations_of(conn: AsyncConnection, organization_id: str) -> list[Registration]:
    rows = await conn.execute(
        select(registrations.c.jurisdiction, registrations.c.effective_from, registrations.c.effective_to).where(
            registrations.c.organization_id == organization_id
        )
    )
    return [Registration(jurisdiction_code(r.jurisdiction), r.effective_from, r.effective_to) for r in rows]

