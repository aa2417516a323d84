"""The application's long-lived collaborators, built once per process."""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import logging
import random
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any, TypeVar

from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine

from levy.app.preset_cache import PresetCache
from levy.config import Config
from levy.store.db import create_engine, is_write_conflict, transaction

T = TypeVar("T")
log = logging.getLogger("levy.services")


@dataclass
class AppServices:
    config: Config
    engine: AsyncEngine
    # Area-specific singletons (catalogue, rate tables, rate limiter, ...) are
    # attached here by their modules at start-up.
    extras: dict[str, Any] = field(default_factory=dict)
    # The calculation's preset reads, per organization (see levy.app.preset_cache).
    presets: PresetCache = field(default_factory=lambda: PresetCache(0))

    @classmethod
    def create(cls, config: Config) -> AppServices:
        engine = create_engine(
            config.database_url, pool_size=config.db_pool_size, connect_timeout=config.db_connect_timeout_seconds,
            busy_timeout=config.db_busy_timeout_seconds,
        )
        return cls(config=config, engine=engine, presets=PresetCache(config.preset_cache_seconds))

    def uow(
        self, *, write: bool = False, presets: bool = True
    ) -> contextlib.AbstractAsyncContextManager[AsyncConnection]:
        """One database transaction (the unit of work of one request).

        When the pipeline already holds the request's write transaction (an
        idempotent call: the stored response must commit with the handler's
        writes), every unit of work of that request joins it instead of opening
        another, so that reads see the request's own writes.

        A write unit of work drops the current organization's cached presets
        when it ends (``presets=False``: writes that change no preset, e.g. a
        key's last-used time).
        """
        current = _request_tx.get()
        if current is not None:
            return _joined(current)
        if write and presets:
            return self._invalidating(transaction(self.engine, write=True))
        return transaction(self.engine, write=write)

    @contextlib.asynccontextmanager
    async def _invalidating(
        self, inner: contextlib.AbstractAsyncContextManager[AsyncConnection]
    ) -> AsyncIterator[AsyncConnection]:
        try:
            async with inner as conn:
                yield conn
        finally:
            self.presets.invalidate_current()

    @contextlib.asynccontextmanager
    async def request_transaction(self) -> AsyncIterator[AsyncConnection]:
        """Open the request's write transaction; write units of work inside join it."""
        try:
            async with transaction(self.engine, write=True) as conn:
                token = _request_tx.set(conn)
                try:
                    yield conn
                finally:
                    _request_tx.reset(token)
        finally:
            self.presets.invalidate_current()

    async def close(self) -> None:
        await self.engine.dispose()


_request_tx: contextvars.ContextVar[AsyncConnection | None] = contextvars.ContextVar("levy_request_tx", default=None)


# Runs of a unit of work the database aborted as a deadlock victim or serialization
# failure, before the request gives up with 503 and Retry-After (transport/errors.py).
WRITE_CONFLICT_ATTEMPTS = 5


async def retry_write_conflicts(fn: Callable[[], Awaitable[T]], attempts: int = WRITE_CONFLICT_ATTEMPTS) -> T:
    """Run ``fn`` (whole units of work) again, after a short pause, when the database
    rolled its transaction back as a deadlock victim or serialization failure.

    Inside a request's transaction (an idempotent call) that transaction is aborted
    as a whole, so the error goes up at once to the caller that opened it."""
    for attempt in range(1, attempts + 1):
        try:
            return await fn()
        except Exception as e:
            if _request_tx.get() is not None or attempt == attempts or not is_write_conflict(e):
                raise
            log.info("write conflict (%s), running the transaction again (%d of %d)", type(e).__name__,
                     attempt + 1, attempts)
            await asyncio.sleep(random.uniform(0.005, 0.02) * attempt)
    raise AssertionError("unreachable")  # pragma: no cover


@contextlib.asynccontextmanager
async def _joined(conn: AsyncConnection) -> AsyncIterator[AsyncConnection]:
    yield conn


@contextlib.asynccontextmanager
async def open_services(config: Config) -> AsyncIterator[AppServices]:
    services = AppServices.create(config)
    try:
        yield services
    finally:
        await services.close()
