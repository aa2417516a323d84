"""Business locations in SQL (issue 19): a location reads back as stored, only
for its own organization; the default location is the one non-archived default
whose dates cover the day asked; making a location the default clears the
previous default. On SQLite and PostgreSQL."""

from __future__ import annotations

import asyncio
from datetime import UTC, date, datetime

from fresh_db import fresh_database_url  # noqa: F401  (fixture)

from levy.domain.locations import LocationDraft
from levy.domain.tax.model import Address
from levy.store import locations as store
from levy.store import migrate
from levy.store.db import create_engine
from levy.store.keys import SqlOrganizations

NOW = datetime(2026, 11, 24, 12, 0, tzinfo=UTC)
AUSTIN = Address(line1="100 Congress Ave", city="Austin", state="TX", country="US", postal_code="78701")
HOUSTON = Address(line1="901 Bagby St", city="Houston", state="TX", country="US", postal_code="77002")


def _draft(address: Address, *, default: bool, start: date = date(2026, 1, 1), end: date | None = None,
           name: str = "Warehouse") -> LocationDraft:
    return LocationDraft(name=name, address=address, line2="Suite 5", is_default=default, effective_from=start,
                         effective_to=end)


def test_locations_round_trip_default_and_scoping(fresh_database_url: str) -> None:  # noqa: F811
    async def run() -> None:
        engine = create_engine(fresh_database_url, pool_size=1)
        try:
            await migrate.upgrade(engine)
            async with engine.begin() as conn:
                org = (await SqlOrganizations(conn).create("Seller")).id
                other = (await SqlOrganizations(conn).create("Other")).id
                austin = await store.insert_location(conn, org, _draft(AUSTIN, default=True, end=date(2026, 12, 31)), NOW)
                theirs = await store.insert_location(conn, other, _draft(HOUSTON, default=True), NOW)
            async with engine.connect() as conn:
                back = await store.get_location(conn, org, austin.id)
                assert back == austin
                assert back.id.startswith("loc_") and back.address == AUSTIN and back.line2 == "Suite 5"
                assert back.is_default and back.effective_to == date(2026, 12, 31) and back.archived_at is None
                assert back.created_at == NOW and back.updated_at == NOW
                # Another organization's location reads as missing, as does an unknown id.
                assert await store.get_location(conn, org, theirs.id) is None
                assert await store.get_location(conn, org, "loc_unknown") is None
                # The default covers 2026-01-01..2026-12-31 inclusive.
                assert (await store.default_location(conn, org, date(2026, 1, 1))) == austin
                assert (await store.default_location(conn, org, date(2026, 12, 31))) == austin
                assert await store.default_location(conn, org, date(2025, 12, 31)) is None
                assert await store.default_location(conn, org, date(2027, 1, 1)) is None
                assert (await store.default_location(conn, other, date(2030, 1, 1))) == theirs

            later = datetime(2026, 11, 25, tzinfo=UTC)
            async with engine.begin() as conn:
                houston = await store.insert_location(conn, org, _draft(HOUSTON, default=True, name="Houston"), later)
            async with engine.connect() as conn:
                # The new default replaced the old one; the old one is still there, not default.
                assert (await store.default_location(conn, org, date(2026, 6, 1))) == houston
                old = await store.get_location(conn, org, austin.id)
                assert old is not None and not old.is_default and old.updated_at == later
                page, more = await store.list_locations(conn, org, 1, None)
                assert [loc.id for loc in page] == [houston.id] and more
                page, more = await store.list_locations(conn, org, 1, houston.id)
                assert [loc.id for loc in page] == [austin.id] and not more
                # The other organization's default is untouched.
                assert (await store.get_location(conn, other, theirs.id)).is_default  # type: ignore[union-attr]

            async with engine.begin() as conn:
                archived = await store.set_archived(conn, org, houston.id, later, later)
                assert archived is not None and archived.archived_at == later and not archived.is_default
                assert await store.set_archived(conn, other, houston.id, later, later) is None
            async with engine.connect() as conn:
                assert await store.default_location(conn, org, date(2026, 6, 1)) is None
                page, _ = await store.list_locations(conn, org, 10, None)
                assert [loc.id for loc in page] == [austin.id]
                page, _ = await store.list_locations(conn, org, 10, None, include_archived=True)
                assert [loc.id for loc in page] == [houston.id, austin.id]

            async with engine.begin() as conn:
                saved = await store.save_location(conn, org, austin.id, _draft(AUSTIN, default=True, name="HQ"), later)
                assert saved is not None and saved.name == "HQ" and saved.is_default and saved.effective_to is None
                assert await store.save_location(conn, other, austin.id, _draft(AUSTIN, default=True), later) is None
            async with engine.connect() as conn:
                assert (await store.default_location(conn, org, date(2031, 1, 1))) == saved
        finally:
            await engine.dispose()

    asyncio.run(run())
