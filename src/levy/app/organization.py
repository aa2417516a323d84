"""Application functions of organization administration, shared by the
handlers (gRPC and REST) and the ``levy settings|registrations`` commands.

Each takes the unit of work's connection and the organization id, applies the
domain rules and the store, and raises Levy errors.
"""

from __future__ import annotations

from sqlalchemy.ext.asyncio import AsyncConnection

from levy.domain.errors import Conflict, FailedPrecondition, NotFound
from levy.domain.organization import (
    SettingsChange,
    apply_settings_change,
    overlaps,
    validate_key_name,
    validate_registration,
)
from levy.domain.pagination import page_request
from levy.store import organization as store
from levy.store.keys import ApiKeyRecord, SqlApiKeys, utcnow
from levy.store.organization import OrganizationView, RegistrationRecord
from levy.store.reference_data import ReferenceData


async def show_settings(conn: AsyncConnection, organization_id: str) -> OrganizationView:
    view = await store.read_organization(conn, organization_id)
    if view is None:
        raise NotFound(f"No organization '{organization_id}'.")
    return view


async def change_settings(conn: AsyncConnection, organization_id: str, change: SettingsChange, *,
                          ref: ReferenceData) -> OrganizationView:
    """Apply a partial change (locks the organization so concurrent changes do not lose each other);
    ``ref``: the reference data the change is checked against (catalogue, filing currencies)."""
    current = await store.read_organization(conn, organization_id, lock=True)
    if current is None:
        raise NotFound(f"No organization '{organization_id}'.")
    name, settings = apply_settings_change(current.name, current.settings, change, catalogue=ref.catalogue,
                                           filing_currencies=ref.filing_currencies)
    if name == current.name and settings == current.settings:
        return current
    now = utcnow()
    await store.save_organization(conn, organization_id, name, settings, now)
    return OrganizationView(organization_id, name, settings, now)


async def list_registrations(
    conn: AsyncConnection, organization_id: str, limit: int | None, starting_after: str | None
) -> tuple[list[RegistrationRecord], bool]:
    page = page_request(limit, starting_after)
    return await store.list_registrations(conn, organization_id, page.limit, page.starting_after)


async def add_registration(
    conn: AsyncConnection,
    organization_id: str,
    jurisdiction: str | None,
    registration_number: str | None,
    effective_from: str | None,
    effective_to: str | None,
) -> RegistrationRecord:
    """Record a registration; 409 when it overlaps one in the same jurisdiction."""
    draft = validate_registration(jurisdiction, registration_number, effective_from, effective_to)
    if await store.lock_organization(conn, organization_id) is None:
        raise NotFound(f"No organization '{organization_id}'.")
    new = draft.as_registration()
    for existing in await store.registrations_in(conn, organization_id, draft.jurisdiction):
        if overlaps(existing.as_registration(), new):
            until = existing.effective_to.isoformat() if existing.effective_to else "open-ended"
            raise Conflict(
                f"The organization is already registered in {draft.jurisdiction} from "
                f"{existing.effective_from.isoformat()} to {until} ({existing.id}), which overlaps these dates; "
                "delete that registration first, or choose dates that do not overlap.",
                pointer="/effective_from",
                meta={"existing_registration_id": existing.id},
            )
    return await store.insert_registration(
        conn, organization_id, draft.jurisdiction, draft.registration_number, draft.effective_from, draft.effective_to
    )


async def remove_registration(conn: AsyncConnection, organization_id: str, registration_id: str) -> None:
    if not await store.delete_registration(conn, organization_id, registration_id):
        raise NotFound(f"No registration '{registration_id}'.")


async def list_api_keys(
    conn: AsyncConnection, organization_id: str, limit: int | None, starting_after: str | None
) -> tuple[list[ApiKeyRecord], bool]:
    page = page_request(limit, starting_after)
    return await SqlApiKeys(conn).list(organization_id, page.limit, page.starting_after)


async def create_api_key(
    conn: AsyncConnection, organization_id: str, name: str | None, admin: bool
) -> tuple[ApiKeyRecord, str]:
    return await SqlApiKeys(conn).create(organization_id, validate_key_name(name), admin)


async def revoke_api_key(conn: AsyncConnection, organization_id: str, key_id: str) -> ApiKeyRecord:
    """Revoke a key (again: no change). The organization's last active admin key stays (422).

    The caller drops the key from the authentication cache once the transaction has committed.
    """
    if await store.lock_organization(conn, organization_id) is None:
        raise NotFound(f"No organization '{organization_id}'.")
    keys = SqlApiKeys(conn)
    key = await keys.get(organization_id, key_id)
    if key is None:
        raise NotFound(f"No API key '{key_id}'.")
    if key.revoked_at is not None:
        return key
    if key.admin and await keys.count_active_admins(organization_id) <= 1:
        raise FailedPrecondition(
            f"'{key_id}' is the organization's last active admin key and cannot be revoked through the API: "
            "create another admin key first (or use 'levy keys revoke' on the server).",
        )
    revoked = await keys.revoke(organization_id, key_id)
    assert revoked is not None
    return revoked
