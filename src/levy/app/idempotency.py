"""``Idempotency-Key`` (gRPC metadata ``idempotency-key``) on methods whose
policy says ``idempotent``.

The first response (status and body) is stored per organization and key for
24 hours and replayed for a retry with the same request. The same key with a
different request is 422; a retry while the first is still running is 409.

Crash safety: a key is first *claimed* (a row with no response, committed on
its own so that concurrent retries see it; one INSERT ... ON CONFLICT DO
NOTHING, and a read of the record only when it is there already). The handler then runs inside one
write transaction that the pipeline holds, and the response is stored in that
same transaction: either the writes and the stored response commit together,
or neither does. A claim left behind by a crashed process is taken over after
``idempotency_lock_seconds``. Successful responses and client errors (4xx)
are stored; server errors (5xx) release the claim so that a retry runs again.
"""

from __future__ import annotations

import asyncio
import hashlib
import logging
from collections.abc import Awaitable, Callable
from datetime import datetime, timedelta, timezone
from typing import Any

import orjson
from google.protobuf import message
from sqlalchemy import delete, select, update

from levy.app.context import CallContext
from levy.app.registry import MethodInfo, before_transaction
from levy.app.services import retry_write_conflicts
from levy.domain import errors
from levy.domain.errors import Conflict, ErrorItem, LevyError, ValidationFailed
from levy.store.db import writer_queue
from levy.store.rows import insert_row
from levy.store.tables.areas import idempotency_keys

log = logging.getLogger("levy.idempotency")
# A claim inserts nothing when the key has a record (no error, no savepoint).
_KEY = ("organization_id", "key")
RETENTION = timedelta(hours=24)
MAX_KEY_LENGTH = 255


def request_hash(method: MethodInfo, request: message.Message, ctx: CallContext) -> str:
    msg = request
    if "update_mask" in request.DESCRIPTOR.fields_by_name:
        msg = type(request)()
        msg.CopyFrom(request)
        paths = sorted(msg.update_mask.paths)  # type: ignore[attr-defined]
        del msg.update_mask.paths[:]  # type: ignore[attr-defined]
        msg.update_mask.paths.extend(paths)  # type: ignore[attr-defined]
    h = hashlib.sha256(method.full_name.encode())
    h.update(msg.SerializeToString(deterministic=True))
    if ctx.item_errors:
        h.update(repr(sorted((i, [e.pointer for e in errs]) for i, errs in ctx.item_errors.items())).encode())
    return h.hexdigest()


class _Replayed(LevyError):
    """A stored client error, raised again with its original status and items."""

    def __init__(self, status: int, grpc_code: str, items: list[ErrorItem]) -> None:
        super().__init__(items[0].detail if items else "", items=items)
        self.status = status  # type: ignore[misc]
        self.grpc_code = grpc_code  # type: ignore[misc]


def _dump_error(err: LevyError) -> bytes:
    return orjson.dumps(
        {
            "class": type(err).__name__,
            "grpc_code": err.grpc_code,
            "items": [
                {
                    "status": it.status, "code": it.code, "title": it.title, "detail": it.detail,
                    "pointer": it.pointer, "meta": it.meta, "type": it.type, "parameter": it.parameter,
                }
                for it in err.items
            ],
        },
        default=str,
    )


def _load_error(status: int, raw: bytes) -> LevyError:
    data = orjson.loads(raw)
    items = [ErrorItem(**it) for it in data["items"]]
    cls = getattr(errors, data.get("class", ""), None)
    if isinstance(cls, type) and issubclass(cls, LevyError) and cls.status == status:
        return cls(items[0].detail if items else "", items=items)
    return _Replayed(status, data["grpc_code"], items)


async def run(
    method: MethodInfo,
    request: message.Message,
    ctx: CallContext,
    handler: Callable[[Any, CallContext], Awaitable[message.Message]],
) -> message.Message:
    key = ctx.idempotency_key
    if not key or not method.policy.idempotent:
        return await handler(request, ctx)
    if len(key) > MAX_KEY_LENGTH or not key.strip():
        raise ValidationFailed(
            f"Idempotency-Key must be 1 to {MAX_KEY_LENGTH} characters.", parameter="Idempotency-Key"
        )
    services = ctx.services
    org = ctx.organization_id
    digest = request_hash(method, request, ctx)
    lock = timedelta(seconds=services.config.idempotency_lock_seconds)
    try:
        return await _run(method, request, ctx, handler, services, org, key, digest, lock)
    except _Replay as r:
        return r.response


async def _run(method: MethodInfo, request: message.Message, ctx: CallContext,
               handler: Callable[[Any, CallContext], Awaitable[message.Message]], services: Any, org: str, key: str,
               digest: str, lock: timedelta) -> message.Message:

    # 1. Claim the key (one statement: the primary key decides), or, when a record is there
    # already, replay / refuse / take over an abandoned claim, all in one write transaction.
    where = (idempotency_keys.c.organization_id == org) & (idempotency_keys.c.key == key)
    if writer_queue(services.engine) is not None:
        # SQLite: the request running with this key holds the process's write turn until it
        # commits; a retry decides on a read (no turn needed) and waits only to claim.
        async with services.uow() as conn:
            row = (await conn.execute(select(idempotency_keys).where(where))).first()
        _decide(row, method, digest, lock, ctx)
    async with services.uow(write=True) as conn:
        values = {"organization_id": org, "key": key, "method": method.full_name, "request_hash": digest,
                  "status_code": None, "response": None, "created_at": datetime.now(timezone.utc),
                  "completed_at": None}
        if not await insert_row(conn, idempotency_keys, values, unless=_KEY):
            row = (await conn.execute(select(idempotency_keys).where(where))).first()
            if row is not None and _decide(row, method, digest, lock, ctx) == "take_over":
                await conn.execute(delete(idempotency_keys).where(where))
            # Gone since (purged, released) or taken over: claim it now; another request's claim
            # between the two statements means that one runs.
            if not await insert_row(conn, idempotency_keys, values, unless=_KEY):
                raise _in_progress()

    # 2. Run the handler in the request's transaction and store its response in it
    # (the whole transaction again if the database aborts it as a deadlock victim).
    async def attempt() -> message.Message:
        async with ctx.request_transaction() as conn:
            response = await handler(request, ctx)
            await conn.execute(
                update(idempotency_keys).where(where).values(
                    status_code=method.success_status, response=response.SerializeToString(),
                    completed_at=datetime.now(timezone.utc),
                )
            )
        return response

    try:
        before = before_transaction(handler)
        if before is not None:  # e.g. VIES asked now, not while the request's transaction is open
            await before(request, ctx)
        return await retry_write_conflicts(attempt)
    except LevyError as err:
        async with services.uow(write=True) as conn:
            if err.status < 500:
                await conn.execute(
                    update(idempotency_keys).where(where).values(
                        status_code=err.status, response=_dump_error(err), completed_at=datetime.now(timezone.utc)
                    )
                )
            else:
                await conn.execute(delete(idempotency_keys).where(where))
        raise
    except BaseException:
        async with services.uow(write=True) as conn:
            await conn.execute(delete(idempotency_keys).where(where))
        raise


class _Replay(Exception):
    def __init__(self, response: message.Message) -> None:
        self.response = response


def _in_progress() -> Conflict:
    return Conflict(
        "A request with this Idempotency-Key is still being processed; retry later.",
        code="idempotency_in_progress",
    )


def _decide(row: Any, method: MethodInfo, digest: str, lock: timedelta, ctx: CallContext) -> str:
    """What an existing record means: raise (replay, reuse, in progress) or
    return "claim" (no usable record) / "take_over" (expired or abandoned)."""
    if row is None:
        return "claim"
    now = datetime.now(timezone.utc)
    if row.created_at < now - RETENTION:
        return "take_over"
    if row.method != method.full_name or row.request_hash != digest:
        raise ValidationFailed(
            "This Idempotency-Key was already used with a different request; use a new key for a new request.",
            parameter="Idempotency-Key",
            code="idempotency_key_reused",
        )
    if row.status_code is not None:
        if row.status_code >= 400:
            raise _load_error(row.status_code, row.response)
        replay = method.response_cls()
        replay.ParseFromString(row.response)
        ctx.response_headers["idempotent-replayed"] = "true"
        raise _Replay(replay)
    if row.created_at >= now - lock:
        raise _in_progress()
    return "take_over"


async def purge_expired(services: Any) -> int:
    """Delete records past the retention period; returns how many."""
    async with services.uow(write=True) as conn:
        res = await conn.execute(
            delete(idempotency_keys).where(idempotency_keys.c.created_at < datetime.now(timezone.utc) - RETENTION)
        )
        return int(res.rowcount or 0)


async def purge_every_hour(services: Any) -> None:
    """Purge expired records every hour (a background task of the server)."""
    while True:
        await asyncio.sleep(3600)
        try:
            await purge_expired(services)
        except Exception:  # pragma: no cover - logged, retried next hour
            log.exception("purging idempotency records failed")
