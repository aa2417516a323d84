"""Business locations in SQL.

Every query is scoped by ``organization_id``: another organization's location
reads as missing. Writes that make a location the default clear the previous
default in the same transaction; the application locks the organization's row
first (``levy.store.organization.lock_organization``) so that two concurrent
writes cannot both leave a default.
"""

from __future__ import annotations

from datetime import date, datetime

from sqlalchemy import and_, insert, or_, select, update
from sqlalchemy.ext.asyncio import AsyncConnection

from levy.domain import ids
from levy.domain.locations import BusinessLocation, LocationDraft
from levy.domain.tax.model import Address
from levy.store.tables.locations import business_locations as t


def _location(row) -> BusinessLocation:  # type: ignore[no-untyped-def]
    return BusinessLocation(
        id=row.id,
        name=row.name,
        address=Address(line1=row.line1, city=row.city, state=row.state, country=row.country,
                        postal_code=row.postal_code),
        line2=row.line2,
        is_default=row.is_default,
        effective_from=row.effective_from,
        effective_to=row.effective_to,
        archived_at=row.archived_at,
        created_at=row.created_at,
        updated_at=row.updated_at,
    )


def _values(draft: LocationDraft) -> dict[str, object]:
    a = draft.address
    return {
        "name": draft.name,
        "line1": a.line1,
        "line2": draft.line2,
        "city": a.city,
        "state": a.state,
        "postal_code": a.postal_code,
        "country": a.country or "US",
        "is_default": draft.is_default,
        "effective_from": draft.effective_from,
        "effective_to": draft.effective_to,
    }


async def get_location(
    conn: AsyncConnection, organization_id: str, location_id: str, *, lock: bool = False
) -> BusinessLocation | None:
    """One of the organization's locations (archived ones included); None when
    missing or owned by another organization (callers answer 404)."""
    q = select(t).where(t.c.id == location_id, t.c.organization_id == organization_id)
    if lock:
        q = q.with_for_update()
    row = (await conn.execute(q)).first()
    return _location(row) if row else None


async def default_location(conn: AsyncConnection, organization_id: str, on: date) -> BusinessLocation | None:
    """The organization's non-archived default location whose effective dates
    cover ``on``; None when it has none (or its default is not in effect on ``on``)."""
    q = (
        select(t)
        .where(
            t.c.organization_id == organization_id,
            t.c.is_default.is_(True),
            t.c.archived_at.is_(None),
            t.c.effective_from <= on,
            or_(t.c.effective_to.is_(None), t.c.effective_to >= on),
        )
        .order_by(t.c.id.desc())
        .limit(1)
    )
    row = (await conn.execute(q)).first()
    return _location(row) if row else None


async def all_locations(conn: AsyncConnection, organization_id: str) -> tuple[BusinessLocation, ...]:
    """Every location of the organization, archived ones included (what a calculation
    needs to find a line's ``ship_from.location_id`` and the default location)."""
    q = select(t).where(t.c.organization_id == organization_id).order_by(t.c.id.desc())
    return tuple(_location(r) for r in (await conn.execute(q)).all())


async def list_locations(
    conn: AsyncConnection,
    organization_id: str,
    limit: int,
    starting_after: str | None,
    *,
    include_archived: bool = False,
) -> tuple[list[BusinessLocation], bool]:
    """A page of the organization's locations, newest first, and whether more follow."""
    q = select(t).where(t.c.organization_id == organization_id).order_by(t.c.id.desc()).limit(limit + 1)
    if not include_archived:
        q = q.where(t.c.archived_at.is_(None))
    if starting_after:
        q = q.where(t.c.id < starting_after)
    rows = [_location(r) for r in (await conn.execute(q)).all()]
    return rows[:limit], len(rows) > limit


async def clear_default(conn: AsyncConnection, organization_id: str, now: datetime, *, keep: str | None = None) -> None:
    """No location of the organization (but ``keep``) is the default any more."""
    cond = and_(t.c.organization_id == organization_id, t.c.is_default.is_(True))
    if keep is not None:
        cond = and_(cond, t.c.id != keep)
    await conn.execute(update(t).where(cond).values(is_default=False, updated_at=now))


async def insert_location(
    conn: AsyncConnection, organization_id: str, draft: LocationDraft, now: datetime
) -> BusinessLocation:
    """Store a new location (clearing the previous default when it is the default)."""
    location_id = ids.new_id(ids.PREFIXES["business_location"])
    if draft.is_default:
        await clear_default(conn, organization_id, now)
    await conn.execute(
        insert(t).values(id=location_id, organization_id=organization_id, created_at=now, updated_at=now,
                         archived_at=None, **_values(draft))
    )
    loc = await get_location(conn, organization_id, location_id)
    assert loc is not None
    return loc


async def save_location(
    conn: AsyncConnection, organization_id: str, location_id: str, draft: LocationDraft, now: datetime
) -> BusinessLocation | None:
    """Replace a location's values (clearing another default when it becomes the default)."""
    if draft.is_default:
        await clear_default(conn, organization_id, now, keep=location_id)
    result = await conn.execute(
        update(t)
        .where(t.c.id == location_id, t.c.organization_id == organization_id)
        .values(updated_at=now, **_values(draft))
    )
    if not result.rowcount:
        return None
    return await get_location(conn, organization_id, location_id)


async def set_archived(
    conn: AsyncConnection, organization_id: str, location_id: str, archived_at: datetime | None, now: datetime
) -> BusinessLocation | None:
    """Archive (``archived_at`` set; the location stops being the default) or
    unarchive (``None``) a location; None when the organization has no such location."""
    values: dict[str, object] = {"archived_at": archived_at, "updated_at": now}
    if archived_at is not None:
        values["is_default"] = False
    result = await conn.execute(
        update(t).where(t.c.id == location_id, t.c.organization_id == organization_id).values(**values)
    )
    if not result.rowcount:
        return None
    return await get_location(conn, organization_id, location_id)
