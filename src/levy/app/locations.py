"""Application functions of business locations, shared by the
handlers (gRPC and REST) and the ``levy locations`` commands.

Each takes the unit of work's connection, the organization id and a ZIP check
(``zip_checker``), applies the domain rules and the store, and raises Levy
errors. Writes that may change the default lock the organization's row first,
so two concurrent writes cannot both leave a default.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace

from sqlalchemy.ext.asyncio import AsyncConnection

from levy.domain.errors import FailedPrecondition, NotFound
from levy.domain.locations import BusinessLocation, LocationInput, ZipInState, validate_location
from levy.domain.pagination import page_request
from levy.domain.tax.rate_table import RateTable, ZipPlace
from levy.store import locations as store
from levy.store.keys import utcnow
from levy.store.organization import lock_organization


def zip_checker(directory: Mapping[str, ZipPlace], table: RateTable | None = None) -> ZipInState:
    """``zip_in_state`` from the ZIP directory, and the imported rate records of
    ``table`` (a ZIP that crosses a state line lies in every state a record places it in)."""

    def check(zip5: str, state: str) -> bool | None:
        if table is not None and table.has_zip(state, zip5):
            return True
        place = directory.get(zip5)
        return None if place is None else place.state == state

    return check


def table_checker(table: RateTable) -> ZipInState:
    return zip_checker(table.zip_directory, table)


def _not_found(location_id: str) -> NotFound:
    return NotFound(f"No business location '{location_id}'.")


async def _lock(conn: AsyncConnection, organization_id: str) -> None:
    if await lock_organization(conn, organization_id) is None:
        raise NotFound(f"No organization '{organization_id}'.")


async def list_locations(
    conn: AsyncConnection,
    organization_id: str,
    limit: int | None,
    starting_after: str | None,
    include_archived: bool = False,
) -> tuple[list[BusinessLocation], bool]:
    page = page_request(limit, starting_after)
    return await store.list_locations(
        conn, organization_id, page.limit, page.starting_after, include_archived=include_archived
    )


async def show_location(conn: AsyncConnection, organization_id: str, location_id: str) -> BusinessLocation:
    loc = await store.get_location(conn, organization_id, location_id)
    if loc is None:
        raise _not_found(location_id)
    return loc


async def create_location(
    conn: AsyncConnection, organization_id: str, given: LocationInput, zip_in_state: ZipInState
) -> BusinessLocation:
    """Record a location (a default replaces the previous default)."""
    draft = validate_location(given, zip_in_state)
    await _lock(conn, organization_id)
    return await store.insert_location(conn, organization_id, draft, utcnow())


async def _locked(conn: AsyncConnection, organization_id: str, location_id: str) -> BusinessLocation:
    """The location, read after the organization's locations are locked for a change (404 when it has none)."""
    await _lock(conn, organization_id)
    current = await store.get_location(conn, organization_id, location_id, lock=True)
    if current is None:
        raise _not_found(location_id)
    return current


async def update_location(
    conn: AsyncConnection,
    organization_id: str,
    location_id: str,
    changes: Mapping[str, object],
    zip_in_state: ZipInState,
) -> BusinessLocation:
    """Apply the fields of ``changes`` (names of ``LocationInput``; ``None`` = sent as null)
    over the stored location and validate the result as a whole. An archived location
    cannot be changed (unarchive it first)."""
    current = await _locked(conn, organization_id, location_id)
    if current.archived:
        raise FailedPrecondition(
            f"The business location '{location_id}' is archived; unarchive it before changing it."
        )
    draft = validate_location(replace(current.as_input(), **changes), zip_in_state)  # type: ignore[arg-type]
    if (draft.name, draft.address, draft.line2, draft.is_default, draft.effective_from, draft.effective_to) == (
        current.name, current.address, current.line2, current.is_default, current.effective_from,
        current.effective_to,
    ):
        return current
    saved = await store.save_location(conn, organization_id, location_id, draft, utcnow())
    assert saved is not None
    return saved


async def archive_location(conn: AsyncConnection, organization_id: str, location_id: str) -> BusinessLocation:
    """Archive a location (again: no change); it stops being the default."""
    current = await _locked(conn, organization_id, location_id)
    if current.archived:
        return current
    now = utcnow()
    out = await store.set_archived(conn, organization_id, location_id, now, now)
    assert out is not None
    return out


async def unarchive_location(conn: AsyncConnection, organization_id: str, location_id: str) -> BusinessLocation:
    """Undo an archiving (not archived: no change); the location does not become the default."""
    current = await _locked(conn, organization_id, location_id)
    if not current.archived:
        return current
    out = await store.set_archived(conn, organization_id, location_id, None, utcnow())
    assert out is not None
    return out
