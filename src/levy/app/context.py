"""What one call carries through the pipeline, whatever its transport."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from levy.domain.errors import ErrorItem
from levy.store.db import transaction

if TYPE_CHECKING:
    from sqlalchemy.ext.asyncio import AsyncConnection

    from levy.app.audit import AuditNote
    from levy.app.services import AppServices
    from levy.domain.tax.model import VatCheck
    from levy.domain.versioning import ApiVersion
    from levy.store.keys import ApiKeyRecord


@dataclass(slots=True)
class CallContext:
    services: AppServices
    request_id: str
    transport: str  # "grpc" | "rest"
    # Request headers / metadata, lower-case names.
    api_key: str | None = None
    service_version_header: str | None = None
    include_unregistered: bool = False
    idempotency_key: str | None = None
    # Per-item parse errors of a `per_item_errors` field (REST only), by index.
    item_errors: dict[int, list[ErrorItem]] = field(default_factory=dict)
    # Set by the pipeline.
    key: ApiKeyRecord | None = None
    version: ApiVersion | None = None
    # Extra response headers / trailing metadata (lower-case names).
    response_headers: dict[str, str] = field(default_factory=dict)
    # The request's own write transaction while an idempotent call runs its handler.
    request_tx: AsyncConnection | None = None
    # The largest answer the transport can send (bytes; 0: no limit): gRPC's send limit. A write whose
    # answer would be larger is refused before it commits (the batch import).
    max_response_bytes: int = 0
    # The audit entry of an API call (set by the pipeline), written in the call's first
    # write transaction that commits (levy.app.audit).
    audit: AuditNote | None = None
    # The answers of VIES (levy.app.vies) this request got, by number: asked before its write
    # transaction opens (levy.app.calculate.check_vat_ids_first), read by the calculation inside it.
    vies_answers: dict[str, VatCheck] = field(default_factory=dict)

    @property
    def organization_id(self) -> str:
        assert self.key is not None, "unauthenticated call"
        return self.key.organization_id

    def uow(self, *, write: bool = False, presets: bool = True) -> contextlib.AbstractAsyncContextManager[AsyncConnection]:
        """One database transaction (the unit of work of one request).

        While the request's own transaction is open (:meth:`request_transaction`,
        an idempotent call: the stored response must commit with the handler's
        writes), every unit of work of the request joins it, so that reads see
        the request's own writes.

        A write unit of work drops the organization's cached presets when it
        ends (``presets=False``: writes that change no preset).
        """
        if self.request_tx is not None:
            return _joined(self.request_tx)
        inner = transaction(self.services.engine, write=write)
        if write and self.audit is not None and not self.audit.written:
            inner = self._audited(inner)
        if write and presets:
            return self._invalidating(inner)
        return inner

    def created(self, object_id: str) -> None:
        """Name the object a create made in the call's audit entry; called inside the write
        transaction that makes it, before it commits (a retried transaction names its own)."""
        if self.audit is not None and not self.audit.written:
            self.audit.created = object_id

    @contextlib.asynccontextmanager
    async def request_transaction(self) -> AsyncIterator[AsyncConnection]:
        """Open the request's write transaction; the request's units of work join it."""
        try:
            note = self.audit if self.audit is not None and not self.audit.written else None
            async with transaction(self.services.engine, write=True) as conn:
                self.request_tx = conn
                try:
                    yield conn
                    if note is not None:
                        await note.write(conn)
                finally:
                    self.request_tx = None
            if note is not None:
                note.written = True
        finally:
            self._drop_presets()

    @contextlib.asynccontextmanager
    async def _audited(
        self, inner: contextlib.AbstractAsyncContextManager[AsyncConnection]
    ) -> AsyncIterator[AsyncConnection]:
        """``inner`` with the call's audit entry written at its end, before it commits (not when
        its body fails: the transaction rolls back, and a later one of the call may carry it)."""
        note = self.audit
        assert note is not None
        async with inner as conn:
            yield conn
            if not note.written:
                await note.write(conn)
        note.written = True

    @contextlib.asynccontextmanager
    async def _invalidating(
        self, inner: contextlib.AbstractAsyncContextManager[AsyncConnection]
    ) -> AsyncIterator[AsyncConnection]:
        try:
            async with inner as conn:
                yield conn
        finally:
            self._drop_presets()

    def _drop_presets(self) -> None:
        # The organization's entry; every entry when no key is known (a write before authentication).
        self.services.presets.invalidate(self.key.organization_id if self.key is not None else None)


@contextlib.asynccontextmanager
async def _joined(conn: AsyncConnection) -> AsyncIterator[AsyncConnection]:
    yield conn
