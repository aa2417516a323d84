"""The web console's users, sessions and audit log in SQL."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import delete, insert, select, update
from sqlalchemy.ext.asyncio import AsyncConnection

from levy.store.tables.console import certificate_documents, console_audit, console_sessions, console_users


@dataclass(frozen=True, slots=True)
class UserRecord:
    id: str
    organization_id: str
    email: str
    password_hash: str
    role: str
    must_change_password: bool
    created_at: datetime
    updated_at: datetime


@dataclass(frozen=True, slots=True)
class SessionRecord:
    id: str
    user_id: str
    csrf_token: str
    created_at: datetime
    expires_at: datetime


@dataclass(frozen=True, slots=True)
class AuditRecord:
    id: str
    organization_id: str
    user_id: str | None
    actor_email: str
    action: str
    target: str
    detail: str
    created_at: datetime


def _values(rec: Any) -> dict[str, Any]:
    return {f: getattr(rec, f) for f in rec.__slots__}


def audit_values(rec: AuditRecord) -> dict[str, Any]:
    """An audit entry's row."""
    return _values(rec)


class SqlConsole:
    def __init__(self, conn: AsyncConnection) -> None:
        self.conn = conn

    # users
    async def insert_user(self, rec: UserRecord) -> None:
        await self.conn.execute(insert(console_users).values(**_values(rec)))

    async def user_by_email(self, org: str, email: str) -> UserRecord | None:
        q = select(console_users).where(console_users.c.organization_id == org, console_users.c.email == email)
        row = (await self.conn.execute(q)).first()
        return UserRecord(**row._mapping) if row else None

    async def users_by_email(self, email: str) -> list[UserRecord]:
        """The accounts of ``email`` in every organization (oldest first)."""
        q = select(console_users).where(console_users.c.email == email).order_by(console_users.c.created_at)
        return [UserRecord(**r._mapping) for r in (await self.conn.execute(q)).all()]

    async def user(self, org: str, user_id: str) -> UserRecord | None:
        q = select(console_users).where(console_users.c.id == user_id, console_users.c.organization_id == org)
        row = (await self.conn.execute(q)).first()
        return UserRecord(**row._mapping) if row else None

    async def users(self, org: str) -> list[UserRecord]:
        q = select(console_users).where(console_users.c.organization_id == org).order_by(console_users.c.email)
        return [UserRecord(**r._mapping) for r in (await self.conn.execute(q)).all()]

    async def update_user(self, user_id: str, **changes: Any) -> None:
        await self.conn.execute(update(console_users).where(console_users.c.id == user_id).values(**changes))

    async def delete_user(self, user_id: str) -> None:
        await self.conn.execute(delete(console_sessions).where(console_sessions.c.user_id == user_id))
        await self.conn.execute(delete(console_users).where(console_users.c.id == user_id))

    async def count_admins(self, org: str) -> int:
        q = select(console_users.c.id).where(console_users.c.organization_id == org, console_users.c.role == "admin")
        return len((await self.conn.execute(q)).all())

    # sessions
    async def insert_session(self, rec: SessionRecord) -> None:
        await self.conn.execute(insert(console_sessions).values(**_values(rec)))

    async def session(self, session_id: str) -> tuple[SessionRecord, UserRecord] | None:
        cols = [*console_sessions.c, *[c.label("u_" + c.name) for c in console_users.c]]
        q = select(*cols).join(console_users, console_users.c.id == console_sessions.c.user_id).where(
            console_sessions.c.id == session_id)
        row = (await self.conn.execute(q)).first()
        if row is None:
            return None
        m = row._mapping
        sess = SessionRecord(**{c.name: m[c.name] for c in console_sessions.c})
        user = UserRecord(**{c.name: m["u_" + c.name] for c in console_users.c})
        return sess, user

    async def delete_session(self, session_id: str) -> None:
        await self.conn.execute(delete(console_sessions).where(console_sessions.c.id == session_id))

    async def delete_sessions_of(self, user_id: str, *, keep: str | None = None) -> None:
        q = delete(console_sessions).where(console_sessions.c.user_id == user_id)
        if keep is not None:
            q = q.where(console_sessions.c.id != keep)
        await self.conn.execute(q)

    async def delete_expired_sessions(self, now: datetime) -> None:
        await self.conn.execute(delete(console_sessions).where(console_sessions.c.expires_at <= now))

    # audit
    async def insert_audit(self, rec: AuditRecord) -> None:
        await self.conn.execute(insert(console_audit).values(**_values(rec)))

    async def audit_page(self, org: str, limit: int, before: str | None) -> tuple[list[AuditRecord], bool]:
        q = select(console_audit).where(console_audit.c.organization_id == org).order_by(
            console_audit.c.id.desc()).limit(limit + 1)
        if before:
            q = q.where(console_audit.c.id < before)
        rows = [AuditRecord(**r._mapping) for r in (await self.conn.execute(q)).all()]
        return rows[:limit], len(rows) > limit

    # certificate documents
    async def insert_document(self, values: dict[str, Any]) -> None:
        D = certificate_documents
        await self.conn.execute(delete(D).where(D.c.organization_id == values["organization_id"],
                                                D.c.certificate_id == values["certificate_id"]))
        await self.conn.execute(insert(D).values(**values))

    async def document(self, org: str, certificate_id: str) -> dict[str, Any] | None:
        D = certificate_documents
        q = select(D).where(D.c.organization_id == org, D.c.certificate_id == certificate_id)
        row = (await self.conn.execute(q)).first()
        return dict(row._mapping) if row else None

    async def documents_of(self, org: str, certificate_ids: list[str]) -> dict[str, dict[str, Any]]:
        """Name, type and size (not the bytes) of the documents of these certificates."""
        D = certificate_documents
        if not certificate_ids:
            return {}
        q = select(D.c.certificate_id, D.c.filename, D.c.content_type, D.c.size).where(
            D.c.organization_id == org, D.c.certificate_id.in_(certificate_ids))
        return {r.certificate_id: dict(r._mapping) for r in (await self.conn.execute(q)).all()}
