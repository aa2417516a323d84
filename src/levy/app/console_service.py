"""The web console's people, sessions and audit log: the application core the console
transport and ``levy users`` call, and :class:`ConsoleService`, through which the console's
pages reach every use case that is not an RPC. Rules are in
``levy.domain.console_users``; SQL in ``levy.store.console_users``.

Passwords are argon2id hashes (argon2-cffi's defaults: 64 MiB, 3 passes). Sign-in
is throttled per account and per client address with the same GCRA limiter as the
API (Redis when configured, so that replicas share it). A session is a random token
in an HttpOnly cookie; only its SHA-256 is stored, with its CSRF token and expiry.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from typing import Any

from argon2 import PasswordHasher
from argon2.exceptions import InvalidHashError, VerificationError
from sqlalchemy.ext.asyncio import AsyncConnection

from levy.app import customers as customers_app
from levy.app import exports
from levy.app import transactions as transactions_app
from levy.app.context import CallContext
from levy.app.customers import certificate_of
from levy.domain import console_users as rules
from levy.domain import ids
from levy.domain.errors import (
    Conflict,
    ErrorCollector,
    FailedPrecondition,
    NotFound,
    PermissionDenied,
    RateLimited,
    Unauthenticated,
    ValidationFailed,
)
from levy.domain.customers import CustomerRecord
from levy.domain.pagination import PageRequest
from levy.domain.gcra import Limit
from levy.domain.transactions.records import TransactionRecord
from levy.domain.transactions.rules import TransactionSearch
from levy.store.console_users import AuditRecord, SessionRecord, SqlConsole, UserRecord
from levy.store.customers import SqlCustomers
from levy.store.organization import lock_organization

_hasher = PasswordHasher()
# Verified when the email is unknown, so that a wrong email takes as long as a wrong password.
_DUMMY_HASH = _hasher.hash("levy-console-no-such-user")
SIGN_IN_FAILED = "The email or password is wrong."
SIGN_IN_AMBIGUOUS = ("This email and password open accounts in several organizations. Ask an operator to set "
                     "another password on one of them (levy users set-password --organization ORG).")


def utcnow() -> datetime:
    return datetime.now(timezone.utc)


async def hash_password(password: str) -> str:
    return await asyncio.to_thread(_hasher.hash, password)


async def _verify(password_hash: str, password: str) -> bool:
    def check() -> bool:
        try:
            return _hasher.verify(password_hash, password)
        except (VerificationError, InvalidHashError):
            return False

    return await asyncio.to_thread(check)


def principal(user: UserRecord) -> rules.Principal:
    admin, _ = rules.ROLES[user.role]
    return rules.Principal(id=user.id, organization_id=user.organization_id, name=user.email, admin=admin)


def may_write(user: UserRecord) -> bool:
    return rules.ROLES[user.role][1]


# ------------------------------------------------------------------ users


async def create_user(conn: AsyncConnection, org: str, email: str, role: str,
                      password: str | None = None) -> tuple[UserRecord, str | None]:
    """A user of ``org``. Without ``password`` a one-time password is made (returned;
    it must be changed at first sign-in). Returns the user and that password."""
    email = rules.normalize_email(email)
    errors = ErrorCollector()
    rules.check_email(email, errors)
    rules.check_role(role, errors)
    if password is not None:
        rules.check_password(password, email, errors)
    errors.raise_any()
    store = SqlConsole(conn)
    # Only this organization's users are looked at: whether another organization uses the
    # address is never told (it gets an account of its own here).
    if await store.user_by_email(org, email) is not None:
        raise Conflict(f"A console user with the email {email} exists.", pointer="/email")
    one_time = None
    if password is None:
        one_time = password = rules.one_time_password()
    now = utcnow()
    user = UserRecord(id=ids.new_id(ids.PREFIXES["console_user"]), organization_id=org, email=email,
                      password_hash=await hash_password(password), role=role,
                      must_change_password=one_time is not None, created_at=now, updated_at=now)
    await store.insert_user(user)
    return user, one_time


async def list_users(conn: AsyncConnection, org: str) -> list[UserRecord]:
    return await SqlConsole(conn).users(org)


async def remove_user(conn: AsyncConnection, org: str, user_id: str, *, acting: UserRecord) -> UserRecord:
    """Remove a user of ``org``; their sessions end. The organization's row is locked
    first (as revoking an API key does), so that removals are serialised: the acting
    admin must still be an admin, and the organization's last admin stays (422)."""
    if await lock_organization(conn, org) is None:
        raise NotFound(f"No organization {org}.")
    store = SqlConsole(conn)
    user = await store.user(org, user_id)
    if user is None:
        raise NotFound(f"No console user {user_id}.")
    if user.id == acting.id:
        raise FailedPrecondition("You cannot remove yourself; ask another admin.")
    current = await store.user(org, acting.id)
    if current is None or not rules.ROLES[current.role][0]:
        raise PermissionDenied("Your account is no longer an admin of this organization.")
    if rules.ROLES[user.role][0] and await store.count_admins(org) <= 1:
        raise FailedPrecondition(f"{user.email} is the organization's last admin and cannot be removed.")
    await store.delete_user(user.id)
    return user


async def change_password(conn: AsyncConnection, user: UserRecord, session_id: str, current: str, new: str,
                          confirm: str) -> None:
    """Change ``user``'s password after checking the current one (the new one must
    differ from it); the user's other sessions end. The caller throttles attempts."""
    errors = ErrorCollector()
    if not await _verify(user.password_hash, current):
        errors.errors.append(ValidationFailed("The current password is wrong.", pointer="/current_password"))
    elif new == current:
        errors.errors.append(ValidationFailed("The new password is the current one; choose another.",
                                              pointer="/new_password"))
    rules.check_password(new, user.email, errors, "/new_password")
    if new != confirm:
        errors.errors.append(ValidationFailed("The two new passwords differ.", pointer="/confirm_password"))
    errors.raise_any()
    store = SqlConsole(conn)
    await store.update_user(user.id, password_hash=await hash_password(new), must_change_password=False,
                            updated_at=utcnow())
    await store.delete_sessions_of(user.id, keep=session_id)


async def set_password(conn: AsyncConnection, org: str, email: str, password: str) -> UserRecord:
    """The operator's reset (``levy users set-password``) of ``org``'s user: every session
    of the user ends."""
    email = rules.normalize_email(email)
    store = SqlConsole(conn)
    user = await store.user_by_email(org, email)
    if user is None:
        raise NotFound(f"No console user {email}.")
    errors = ErrorCollector()
    rules.check_password(password, email, errors)
    errors.raise_any()
    await store.update_user(user.id, password_hash=await hash_password(password), must_change_password=False,
                            updated_at=utcnow())
    await store.delete_sessions_of(user.id)
    return user


# ------------------------------------------------------------------ sessions


@dataclass(frozen=True, slots=True)
class SignIn:
    token: str  # the cookie's value, never stored
    session: SessionRecord
    user: UserRecord


class SignInThrottle:
    """Attempts per minute per account and per client address (GCRA)."""

    def __init__(self, limiter, per_account: int, per_address: int) -> None:  # type: ignore[no-untyped-def]
        self.limiter = limiter
        self.per_account = Limit(per_account / 60.0, per_account) if per_account > 0 else None
        self.per_address = Limit(per_address / 60.0, per_address) if per_address > 0 else None

    async def check(self, email: str, peer: str) -> None:
        await self._hit((("console-signin-addr:" + peer, self.per_address, "sign-in attempts for this address"),
                         ("console-signin-acct:" + email, self.per_account, "sign-in attempts for this account")))

    async def check_password_change(self, user_id: str) -> None:
        """Password changes (which check the current password) at the per-account rate,
        counted apart from sign-ins: a stolen session guesses no faster than sign-in."""
        await self._hit((("console-password:" + user_id, self.per_account, "password attempts for this account"),))

    async def _hit(self, subjects: tuple[tuple[str, Limit | None, str], ...]) -> None:
        for subject, limit, what in subjects:
            if limit is None:
                continue
            decision = await self.limiter.hit(subject, limit)
            if not decision.allowed:
                retry = decision.retry_after_seconds
                raise RateLimited(f"Too many {what}. Try again in {retry} second(s).",
                                  retry_after=retry, limit=decision.limit)


async def sign_in(conn: AsyncConnection, email: str, password: str, *, session_hours: float) -> SignIn:
    """A new session for the user with these credentials, or Unauthenticated (the
    same answer for an unknown email and a wrong password).

    An email may have an account in several organizations: the one whose password
    matches is signed in (the hashes are checked at once, so that the time taken
    hardly depends on how many there are). Should one password open several, the
    person is asked to make them differ."""
    email = rules.normalize_email(email)
    store = SqlConsole(conn)
    accounts = await store.users_by_email(email)
    checked = await asyncio.gather(*(_verify(u.password_hash, password) for u in accounts)) if accounts else \
        [await _verify(_DUMMY_HASH, password)]
    matching = [u for u, ok in zip(accounts, checked) if ok]
    if len(matching) > 1:
        raise Unauthenticated(SIGN_IN_AMBIGUOUS)
    if not matching:
        raise Unauthenticated(SIGN_IN_FAILED)
    user = matching[0]
    now = utcnow()
    token = rules.new_token()
    session = SessionRecord(id=rules.token_hash(token), user_id=user.id, csrf_token=rules.new_token(),
                            created_at=now, expires_at=now + timedelta(hours=session_hours))
    await store.delete_expired_sessions(now)
    await store.insert_session(session)
    return SignIn(token, session, user)


async def session_of(conn: AsyncConnection, token: str) -> tuple[SessionRecord, UserRecord] | None:
    """The live session of a cookie's token, with its user; None when unknown or expired."""
    found = await SqlConsole(conn).session(rules.token_hash(token))
    if found is None or found[0].expires_at <= utcnow():
        return None
    return found


async def sign_out(conn: AsyncConnection, session_id: str) -> None:
    await SqlConsole(conn).delete_session(session_id)


# ------------------------------------------------------------------ audit log


async def record(conn: AsyncConnection, user: UserRecord, action: str, target: str, detail: str = "") -> None:
    """One audit entry, in the transaction of the action it records."""
    await SqlConsole(conn).insert_audit(AuditRecord(
        id=ids.new_id(ids.PREFIXES["audit_entry"]), organization_id=user.organization_id, user_id=user.id,
        actor_email=user.email, action=action, target=target, detail=detail[:500], created_at=utcnow()))


async def audit_page(conn: AsyncConnection, org: str, before: str | None, limit: int = 50) -> tuple[list[AuditRecord], bool]:
    return await SqlConsole(conn).audit_page(org, limit, before)


# ------------------------------------------------------------------ certificate documents


async def _owned_certificate(conn: AsyncConnection, org: str, customer_id: str, certificate_id: str, *,
                             lock: bool = False) -> None:
    store = SqlCustomers(conn)
    if lock:
        # The customer's row lock, which every certificate write takes first (the API's
        # DeleteExemptionCertificate and DeleteCustomer too): uploads to one certificate and
        # its deletion are serialised, and the certificate is read after the lock is held.
        await certificate_of(store, org, customer_id, certificate_id)
    elif await store.certificate(org, customer_id, certificate_id) is None:
        raise NotFound(f"No certificate {certificate_id} for customer {customer_id}.")


async def attach_document(conn: AsyncConnection, org: str, customer_id: str, certificate_id: str, filename: str,
                          data: bytes, max_bytes: int) -> dict[str, object]:
    """Store the certificate's document (replacing one it had), holding the customer's
    row lock: concurrent uploads replace each other in turn, and a document is never
    stored for a certificate deleted meanwhile (404 instead)."""
    content_type = rules.document_type(data, max_bytes)
    await _owned_certificate(conn, org, customer_id, certificate_id, lock=True)
    values: dict[str, object] = {
        "id": ids.new_id(ids.PREFIXES["certificate_document"]), "organization_id": org, "certificate_id": certificate_id,
        "filename": rules.document_filename(filename, content_type), "content_type": content_type,
        "size": len(data), "data": data, "created_at": utcnow()}
    await SqlConsole(conn).insert_document(values)
    return values


async def document(conn: AsyncConnection, org: str, customer_id: str, certificate_id: str) -> dict[str, object]:
    await _owned_certificate(conn, org, customer_id, certificate_id)
    found = await SqlConsole(conn).document(org, certificate_id)
    if found is None:
        raise NotFound(f"Certificate {certificate_id} has no document.")
    return found


async def documents_of(conn: AsyncConnection, org: str, certificate_ids: list[str]) -> dict[str, dict[str, object]]:
    return await SqlConsole(conn).documents_of(org, certificate_ids)


# ------------------------------------------------------------------ the console transport's service


class ConsoleService:
    """What the console's pages read and change besides the API's RPCs, each call one unit of
    work of ``uow`` (``AppServices.uow``): the console's transport opens none itself. The
    reads and writes are the use cases above and those of ``levy.app.customers``,
    ``levy.app.transactions`` and ``levy.app.exports``; a change is recorded in the audit
    log in the transaction that makes it."""

    def __init__(self, uow: Callable[..., AbstractAsyncContextManager[AsyncConnection]], *,
                 max_upload_bytes: int) -> None:
        self.uow = uow
        self.max_upload_bytes = max_upload_bytes

    # sessions and passwords

    async def session_of(self, token: str) -> tuple[SessionRecord, UserRecord] | None:
        async with self.uow() as conn:
            return await session_of(conn, token)

    async def sign_in(self, email: str, password: str, *, session_hours: float) -> SignIn:
        async with self.uow(write=True) as conn:
            return await sign_in(conn, email, password, session_hours=session_hours)

    async def sign_out(self, session_id: str) -> None:
        async with self.uow(write=True) as conn:
            await sign_out(conn, session_id)

    async def change_password(self, user: UserRecord, session_id: str, current: str, new: str,
                              confirm: str) -> None:
        async with self.uow(write=True) as conn:
            await change_password(conn, user, session_id, current, new, confirm)
            await record(conn, user, "password.changed", user.id)

    # audited RPCs

    async def audited(self, ctx: CallContext, run: Callable[[], Awaitable[Any]], user: UserRecord, action: str,
                      target: str, detail: str = "", after: Callable[[AsyncConnection, Any], Awaitable[None]]
                      | None = None) -> Any:
        """``run()`` (an RPC of ``ctx``), ``after(conn, response)`` if given, and the audit entry
        (its target the response's id when ``target`` is empty), in the request's one transaction."""
        async with ctx.request_transaction() as conn:
            response = await run()
            if after is not None:
                await after(conn, response)
            await record(conn, user, action, target or getattr(response, "id", ""), detail)
        return response

    # customers and certificate documents

    async def search_customers(self, org: str, text: str, *, deleted: bool,
                               page: PageRequest) -> tuple[list[CustomerRecord], bool]:
        async with self.uow() as conn:
            return await customers_app.search_customers(conn, org, text, deleted=deleted, page=page)

    async def documents_of(self, org: str, certificate_ids: list[str]) -> dict[str, dict[str, object]]:
        async with self.uow() as conn:
            return await documents_of(conn, org, certificate_ids)

    async def document(self, org: str, customer_id: str, certificate_id: str) -> dict[str, object]:
        async with self.uow() as conn:
            return await document(conn, org, customer_id, certificate_id)

    async def attach_document(self, user: UserRecord, customer_id: str, certificate_id: str, filename: str,
                              data: bytes) -> None:
        async with self.uow(write=True) as conn:
            await attach_document(conn, user.organization_id, customer_id, certificate_id, filename, data,
                                  self.max_upload_bytes)
            await record(conn, user, "certificate.document_attached", certificate_id, filename[:100])

    # transactions

    async def search_transactions(self, org: str, search: TransactionSearch,
                                  page: PageRequest) -> tuple[list[dict[str, Any]], bool, int]:
        """A page of the search's transaction summaries, whether more follow, and how many it finds."""
        async with self.uow() as conn:
            records, more = await transactions_app.search_transactions(conn, org, search, page)
            items = await exports.transaction_summaries(conn, org, records)
            return items, more, await exports.count_transactions(conn, org, search)

    async def get_transaction(self, org: str, transaction_id: str) -> TransactionRecord:
        async with self.uow() as conn:
            return await transactions_app.get_transaction(conn, org, transaction_id)

    def customers_csv(self, org: str, text: str, *, deleted: bool) -> AsyncIterator[bytes]:
        return exports.customers_csv(self.uow, org, text, deleted=deleted)

    def transactions_csv(self, org: str, search: TransactionSearch) -> AsyncIterator[bytes]:
        return exports.transactions_csv(self.uow, org, search)

    # people and the audit log

    async def audit_page(self, org: str, before: str | None) -> tuple[list[AuditRecord], bool]:
        async with self.uow() as conn:
            return await audit_page(conn, org, before)

    async def users(self, org: str) -> list[UserRecord]:
        async with self.uow() as conn:
            return await list_users(conn, org)

    async def invite_user(self, acting: UserRecord, email: str, role: str) -> tuple[UserRecord, str | None]:
        async with self.uow(write=True) as conn:
            user, one_time = await create_user(conn, acting.organization_id, email, role)
            await record(conn, acting, "user.invited", user.id, f"{user.email} ({user.role})")
        return user, one_time

    async def remove_user(self, acting: UserRecord, user_id: str) -> UserRecord:
        async with self.uow(write=True) as conn:
            user = await remove_user(conn, acting.organization_id, user_id, acting=acting)
            await record(conn, acting, "user.removed", user.id, user.email)
        return user
