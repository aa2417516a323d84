"""Organizations and API keys in SQL."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timezone

from sqlalchemy import func, insert, select, update
from sqlalchemy.ext.asyncio import AsyncConnection

from levy.domain import ids
from levy.domain.keys import display_prefix, hash_secret, new_secret
from levy.store.tables.foundation import api_keys, organizations


def utcnow() -> datetime:
    return datetime.now(timezone.utc)


@dataclass(frozen=True, slots=True)
class ApiKeyRecord:
    id: str
    organization_id: str
    name: str
    prefix: str
    secret_hash: str
    admin: bool
    created_at: datetime
    last_used_at: datetime | None
    revoked_at: datetime | None


@dataclass(frozen=True, slots=True)
class OrganizationRecord:
    id: str
    name: str
    created_at: datetime
    updated_at: datetime


def _key(row) -> ApiKeyRecord:  # type: ignore[no-untyped-def]
    return ApiKeyRecord(**dict(row._mapping))


class SqlOrganizations:
    def __init__(self, conn: AsyncConnection) -> None:
        self.conn = conn

    async def create(self, name: str) -> OrganizationRecord:
        now = utcnow()
        rec = OrganizationRecord(ids.new_id("org"), name, now, now)
        await self.conn.execute(insert(organizations).values(**_asdict(rec)))
        return rec

    async def get(self, org_id: str) -> OrganizationRecord | None:
        row = (await self.conn.execute(select(organizations).where(organizations.c.id == org_id))).first()
        return OrganizationRecord(**dict(row._mapping)) if row else None

    async def first(self) -> OrganizationRecord | None:
        row = (await self.conn.execute(select(organizations).order_by(organizations.c.id).limit(1))).first()
        return OrganizationRecord(**dict(row._mapping)) if row else None

    async def count(self) -> int:
        return int((await self.conn.execute(select(func.count()).select_from(organizations))).scalar_one())


def _asdict(rec: object) -> dict[str, object]:
    return {f: getattr(rec, f) for f in rec.__slots__}  # type: ignore[attr-defined]


class SqlApiKeys:
    def __init__(self, conn: AsyncConnection) -> None:
        self.conn = conn

    async def create(self, organization_id: str, name: str, admin: bool) -> tuple[ApiKeyRecord, str]:
        """Store a new key; returns the record and the secret (shown once)."""
        secret = new_secret()
        rec = ApiKeyRecord(
            id=ids.new_id("key"),
            organization_id=organization_id,
            name=name,
            prefix=display_prefix(secret),
            secret_hash=hash_secret(secret),
            admin=admin,
            created_at=utcnow(),
            last_used_at=None,
            revoked_at=None,
        )
        await self.conn.execute(insert(api_keys).values(**_asdict(rec)))
        return rec, secret

    async def by_hash(self, secret_hash: str) -> ApiKeyRecord | None:
        row = (await self.conn.execute(select(api_keys).where(api_keys.c.secret_hash == secret_hash))).first()
        return _key(row) if row else None

    async def get(self, organization_id: str, key_id: str) -> ApiKeyRecord | None:
        row = (
            await self.conn.execute(
                select(api_keys).where(api_keys.c.id == key_id, api_keys.c.organization_id == organization_id)
            )
        ).first()
        return _key(row) if row else None

    async def list(
        self, organization_id: str | None, limit: int, starting_after: str | None
    ) -> tuple[list[ApiKeyRecord], bool]:
        q = select(api_keys).order_by(api_keys.c.id.desc()).limit(limit + 1)
        if organization_id is not None:
            q = q.where(api_keys.c.organization_id == organization_id)
        if starting_after:
            q = q.where(api_keys.c.id < starting_after)
        rows = [_key(r) for r in (await self.conn.execute(q)).all()]
        return rows[:limit], len(rows) > limit

    async def revoke(self, organization_id: str | None, key_id: str) -> ApiKeyRecord | None:
        q = update(api_keys).where(api_keys.c.id == key_id, api_keys.c.revoked_at.is_(None))
        if organization_id is not None:
            q = q.where(api_keys.c.organization_id == organization_id)
        await self.conn.execute(q.values(revoked_at=utcnow()))
        row = (await self.conn.execute(select(api_keys).where(api_keys.c.id == key_id))).first()
        if row is None or (organization_id is not None and row.organization_id != organization_id):
            return None
        return _key(row)

    async def count_active_admins(self, organization_id: str) -> int:
        q = select(func.count()).where(
            api_keys.c.organization_id == organization_id, api_keys.c.admin.is_(True), api_keys.c.revoked_at.is_(None)
        )
        return int((await self.conn.execute(q)).scalar_one())

    async def touch(self, key_id: str, when: datetime) -> None:
        await self.conn.execute(update(api_keys).where(api_keys.c.id == key_id).values(last_used_at=when))
