"""Organization administration in SQL: name, tax settings, registrations.

Every query is scoped by ``organization_id``. Writes that read first
(settings PATCH, registration overlap check, last-admin-key check) lock the
organization's row first (``SELECT ... FOR UPDATE`` on PostgreSQL; SQLite write
transactions are serialised by ``BEGIN IMMEDIATE``).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import date, datetime

from sqlalchemy import delete, insert, select, update
from sqlalchemy.dialects.postgresql import insert as pg_insert
from sqlalchemy.dialects.sqlite import insert as sqlite_insert
from sqlalchemy.ext.asyncio import AsyncConnection

from levy.domain import ids
from levy.domain.settings import OrganizationSettings
from levy.domain.tax.model import Registration
from levy.store.keys import utcnow
from levy.store.settings import filing_currencies_to_json, get_settings, share_to_column
from levy.store.tables.areas import organization_settings, registrations
from levy.store.tables.foundation import organizations


@dataclass(frozen=True, slots=True)
class OrganizationView:
    organization_id: str
    name: str
    settings: OrganizationSettings
    updated_at: datetime


@dataclass(frozen=True, slots=True)
class RegistrationRecord:
    id: str
    organization_id: str
    jurisdiction: str
    registration_number: str | None
    effective_from: date
    effective_to: date | None
    created_at: datetime

    def as_registration(self) -> Registration:
        return Registration(self.jurisdiction, self.effective_from, self.effective_to)


async def lock_organization(conn: AsyncConnection, organization_id: str) -> tuple[str, datetime] | None:
    """Lock the organization's row for this transaction; its (name, updated_at), or None if unknown."""
    row = (
        await conn.execute(
            select(organizations.c.name, organizations.c.updated_at)
            .where(organizations.c.id == organization_id)
            .with_for_update()
        )
    ).first()
    return (row.name, row.updated_at) if row else None


async def read_organization(conn: AsyncConnection, organization_id: str, *, lock: bool = False) -> OrganizationView | None:
    """The organization's name and settings; ``updated_at`` is the later of the two changes."""
    if lock:
        head = await lock_organization(conn, organization_id)
    else:
        row = (
            await conn.execute(
                select(organizations.c.name, organizations.c.updated_at).where(organizations.c.id == organization_id)
            )
        ).first()
        head = (row.name, row.updated_at) if row else None
    if head is None:
        return None
    settings, settings_at = await get_settings(conn, organization_id)
    name, org_at = head
    return OrganizationView(organization_id, name, settings, max(org_at, settings_at) if settings_at else org_at)


async def save_organization(
    conn: AsyncConnection, organization_id: str, name: str, settings: OrganizationSettings, now: datetime
) -> None:
    """Store the name and upsert the settings row."""
    await conn.execute(update(organizations).where(organizations.c.id == organization_id).values(name=name, updated_at=now))
    values = {
        "organization_id": organization_id,
        "default_tax_codes": json.dumps(list(settings.default_tax_codes)),
        "exemption_management": settings.exemption_management,
        "certificate_treatment": settings.certificate_treatment,
        "filing_currencies": filing_currencies_to_json(settings.filing_currencies),
        "nexus_approaching_share": share_to_column(settings.nexus_approaching_share),
        "updated_at": now,
    }
    ins = (pg_insert if conn.dialect.name == "postgresql" else sqlite_insert)(organization_settings).values(**values)
    await conn.execute(
        ins.on_conflict_do_update(
            index_elements=[organization_settings.c.organization_id],
            set_={k: ins.excluded[k] for k in values if k != "organization_id"},
        )
    )


def _registration(row) -> RegistrationRecord:  # type: ignore[no-untyped-def]
    return RegistrationRecord(**dict(row._mapping))


async def list_registrations(
    conn: AsyncConnection, organization_id: str, limit: int, starting_after: str | None
) -> tuple[list[RegistrationRecord], bool]:
    q = (
        select(registrations)
        .where(registrations.c.organization_id == organization_id)
        .order_by(registrations.c.id.desc())
        .limit(limit + 1)
    )
    if starting_after:
        q = q.where(registrations.c.id < starting_after)
    rows = [_registration(r) for r in (await conn.execute(q)).all()]
    return rows[:limit], len(rows) > limit


async def registrations_in(conn: AsyncConnection, organization_id: str, jurisdiction: str) -> list[RegistrationRecord]:
    q = select(registrations).where(
        registrations.c.organization_id == organization_id, registrations.c.jurisdiction == jurisdiction
    )
    return [_registration(r) for r in (await conn.execute(q)).all()]


async def insert_registration(
    conn: AsyncConnection,
    organization_id: str,
    jurisdiction: str,
    registration_number: str | None,
    effective_from: date,
    effective_to: date | None,
) -> RegistrationRecord:
    rec = RegistrationRecord(
        ids.new_id("reg"), organization_id, jurisdiction, registration_number, effective_from, effective_to, utcnow()
    )
    await conn.execute(insert(registrations).values(**{f: getattr(rec, f) for f in rec.__slots__}))
    return rec


async def delete_registration(conn: AsyncConnection, organization_id: str, registration_id: str) -> bool:
    """Delete one of the organization's registrations; False when it has none with that id."""
    result = await conn.execute(
        delete(registrations).where(
            registrations.c.id == registration_id, registrations.c.organization_id == organization_id
        )
    )
    return bool(result.rowcount)


async def registrations_for(conn: AsyncConnection, organization_id: str) -> list[Registration]:
    """Every registration of the organization, for the tax engine."""
    q = (
        select(registrations.c.jurisdiction, registrations.c.effective_from, registrations.c.effective_to)
        .where(registrations.c.organization_id == organization_id)
        .order_by(registrations.c.jurisdiction, registrations.c.effective_from)
    )
    return [Registration(r.jurisdiction, r.effective_from, r.effective_to) for r in (await conn.execute(q)).all()]
