"""Authentication of API keys (spec section 5), with a short in-process cache.

A key is looked up by the SHA-256 of the presented secret and compared in
constant time. Results are cached for ``auth_cache_seconds`` (default 2 s) so
that the hot path does not read the database on every call; a key revoked
through this process stops working at once (the cache entry is dropped), and
on other replicas within the cache time.
"""

from __future__ import annotations

import time
from collections.abc import Iterable
from datetime import datetime, timezone

from sqlalchemy.ext.asyncio import AsyncEngine

from levy.domain.errors import PermissionDenied, Unauthenticated
from levy.domain.keys import hash_secret, hashes_match, is_well_formed
from levy.store.db import transaction
from levy.store.keys import ApiKeyRecord, SqlApiKeys

from levy.app.context import CallContext

_TOUCH_EVERY_S = 60.0
_MAX_TOUCHED = 10_000
_OWS = " \t"  # optional whitespace around an HTTP field value (RFC 9110 section 5.6.3)


def read_request_fields(ctx: CallContext, fields: Iterable[tuple[str, str]]) -> str | None:
    """Read a call's REST headers or gRPC metadata (lower-case names and their values,
    in order) into ``ctx``: the one mapping of both transports. A field sent more than
    once keeps its last value, except the key (see :func:`presented_key`).

    Returns the ``X-Forwarded-For`` value, which the transport turns into the peer
    address (only when the server trusts it)."""
    fields = list(fields)
    ctx.api_key = presented_key(fields)
    forwarded = None
    for name, value in fields:
        if name == "service-version":
            ctx.service_version_header = value
        elif name == "x-include-unregistered":
            ctx.include_unregistered = value.strip().lower() == "true"
        elif name == "idempotency-key":
            ctx.idempotency_key = value
        elif name == "x-forwarded-for":
            forwarded = value
    return forwarded


def presented_key(fields: Iterable[tuple[str, str]]) -> str | None:
    """The API key a request presents: one rule for REST headers and gRPC metadata
    (``fields``: lower-case names and their values, in order).

    1. ``X-API-Key`` when it is sent; otherwise ``Authorization: Bearer <key>``
       (the scheme in any case; another scheme presents no key).
    2. Spaces and tabs around a value are not part of it (an HTTP field value
       excludes them).
    3. A field sent more than once is one value, its lines joined by ``", "``
       (RFC 9110 section 5.3), which is never a well-formed key: 401.
    """
    api_keys: list[str] = []
    authorizations: list[str] = []
    for name, value in fields:
        if name == "x-api-key":
            api_keys.append(value.strip(_OWS))
        elif name == "authorization":
            authorizations.append(value.strip(_OWS))
    if api_keys:
        return ", ".join(api_keys)
    auth = ", ".join(authorizations)
    if auth[:7].lower() == "bearer ":
        return auth[7:].strip(_OWS)
    return None


class Authenticator:
    """API keys by their secret, cached for ``ttl`` seconds (LEVY_AUTH_CACHE_SECONDS);
    a revoked key is forgotten at once in this process (:meth:`forget`)."""

    def __init__(self, engine: AsyncEngine, ttl: float) -> None:
        self._engine = engine
        self.ttl = ttl
        self._cache: dict[str, tuple[float, ApiKeyRecord | None]] = {}
        self._touched: dict[str, float] = {}

    def forget(self, key_id: str) -> None:
        for h, (_, rec) in list(self._cache.items()):
            if rec is not None and rec.id == key_id:
                del self._cache[h]

    async def authenticate(self, secret: str | None) -> ApiKeyRecord:
        if not secret:
            raise Unauthenticated(
                "No API key: send it in the X-API-Key header (gRPC metadata x-api-key) "
                "or as 'Authorization: Bearer <key>'."
            )
        if not is_well_formed(secret):
            raise Unauthenticated("The API key is malformed.")
        h = hash_secret(secret)
        now = time.monotonic()
        hit = self._cache.get(h)
        if hit is not None and hit[0] > now:
            rec = hit[1]
        else:
            async with transaction(self._engine, write=False) as conn:
                rec = await SqlApiKeys(conn).by_hash(h)
            if len(self._cache) > 10_000:
                self._cache.clear()
            self._cache[h] = (now + self.ttl, rec)
        if rec is None or not hashes_match(rec.secret_hash, secret, presented_hash=h):
            raise Unauthenticated("The API key is unknown.")
        if rec.revoked_at is not None:
            raise Unauthenticated("The API key has been revoked.")
        if self._touched.get(rec.id, 0.0) < now:
            if len(self._touched) >= _MAX_TOUCHED:
                # Bounded: a past touch time means the same as none; when most are
                # still live, start over (those keys are touched once more).
                live = {k: v for k, v in self._touched.items() if v > now}
                self._touched = live if len(live) < _MAX_TOUCHED // 2 else {}
            self._touched[rec.id] = now + _TOUCH_EVERY_S
            async with transaction(self._engine, write=True) as conn:
                await SqlApiKeys(conn).touch(rec.id, datetime.now(timezone.utc))
        return rec


def require_admin(key: ApiKeyRecord) -> None:
    if not key.admin:
        raise PermissionDenied("This operation needs an admin-scoped API key.")
