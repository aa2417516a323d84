"""The reads a calculation needs, in three queries per request whatever its
number of lines: settings with registrations, products, customers with their
certificates (each a thread hop on SQLite, a round trip on PostgreSQL).
Every query is scoped by ``organization_id``.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from sqlalchemy import literal, select
from sqlalchemy.ext.asyncio import AsyncConnection

from levy.domain.jurisdictions import INTERNATIONAL
from levy.domain.settings import DEFAULTS, OrganizationSettings
from levy.domain.tax.model import Certificate, CustomerExemption, Registration
from levy.store.settings import filing_currencies_from_json
from levy.store.tables.areas import customers, exemption_certificates, organization_settings, products, registrations


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


def registration_code(value: str) -> str:
    """A stored registration's jurisdiction: a country code (``DE``, ``CA``) as stored, else
    as :func:`jurisdiction_code` reads it."""
    value = value.strip().upper()
    return value if value in INTERNATIONAL else jurisdiction_code(value)


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
    """Live (not deleted) customers whose ``source_id`` is one of ``source_ids``, with
    their exemptions: one query (customers LEFT JOIN their certificates)."""
    wanted = sorted(set(source_ids))
    if not wanted:
        return []
    cert = exemption_certificates
    rows = await conn.execute(
        select(
            customers.c.id,
            customers.c.source,
            customers.c.source_account_id,
            customers.c.source_id,
            customers.c.override_exempt,
            customers.c.override_resale,
            customers.c.override_manufacturing,
            customers.c.merged_into_customer_id,
            cert.c.id.label("cert_id"),
            cert.c.jurisdiction,
            cert.c.exemption_type,
            cert.c.status,
            cert.c.starts_at,
            cert.c.expires_at,
        )
        .select_from(
            customers.outerjoin(
                cert, (cert.c.customer_id == customers.c.id) & (cert.c.organization_id == organization_id)
            )
        )
        .where(customers.c.organization_id == organization_id)
        .where(customers.c.source_id.in_(wanted))
        .where(customers.c.deleted_at.is_(None))
        .order_by(customers.c.id, cert.c.id)
    )
    found: dict[str, tuple[Any, list[Certificate]]] = {}
    for r in rows:
        entry = found.setdefault(r.id, (r, []))
        if r.cert_id is not None:
            entry[1].append(
                Certificate(jurisdiction_code(r.jurisdiction), r.exemption_type, r.status, r.starts_at, r.expires_at)
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
                certificates=tuple(certs),
            ),
            r.merged_into_customer_id,
        )
        for r, certs in found.values()
    ]


async def settings_and_registrations(
    conn: AsyncConnection, organization_id: str
) -> tuple[OrganizationSettings, tuple[Registration, ...]]:
    """The organization's settings (defaults when never changed) and its
    registrations (a tuple: kept as is by the preset cache), in one query: a
    one-row anchor LEFT JOIN both tables."""
    anchor = select(literal(organization_id).label("org")).subquery("o")
    s, r = organization_settings, registrations
    rows = (
        await conn.execute(
            select(
                s.c.organization_id.label("settings_org"),
                s.c.default_tax_codes,
                s.c.exemption_management,
                s.c.certificate_treatment,
                s.c.filing_currencies,
                r.c.jurisdiction,
                r.c.effective_from,
                r.c.effective_to,
            )
            .select_from(
                anchor.outerjoin(s, s.c.organization_id == anchor.c.org).outerjoin(
                    r, r.c.organization_id == anchor.c.org
                )
            )
        )
    ).all()
    first = rows[0]
    settings = (
        OrganizationSettings(
            default_tax_codes=tuple(json.loads(first.default_tax_codes)),
            exemption_management=first.exemption_management,
            certificate_treatment=first.certificate_treatment,
            filing_currencies=filing_currencies_from_json(first.filing_currencies),
        )
        if first.settings_org is not None
        else DEFAULTS
    )
    regs = tuple(
        Registration(registration_code(x.jurisdiction), x.effective_from, x.effective_to)
        for x in rows
        if x.jurisdiction is not None
    )
    return settings, regs
