"""The application's long-lived collaborators, built once per process."""

from __future__ import annotations

import contextlib
import contextvars
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import Any

from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine

from levy.config import Config
from levy.store.db import create_engine, transaction


@dataclass
class AppServices:
    config: Config
    engine: AsyncEngine
    # Area-specific singletons (catalogue, rate tables, rate limiter, ...) are
    # attached here by their modules at start-up.
    extras: dict[str, Any] = field(default_factory=dict)

    @classmethod
    def create(cls, config: Config) -> AppServices:
        engine = create_engine(
            config.database_url, pool_size=config.db_pool_size, connect_timeout=config.db_connect_timeout_seconds,
            busy_timeout=config.db_busy_timeout_seconds,
        )
        return cls(config=config, engine=engine)

    def uow(self, *, write: bool = False) -> contextlib.AbstractAsyncContextManager[AsyncConnection]:
        """One database transaction (the unit of work of one request).

        When the pipeline already holds the request's write transaction (an
        idempotent call: the stored response must commit with the handler's
        writes), every unit of work of that request joins it instead of opening
        another, so that reads see the request's own writes.
        """
        current = _request_tx.get()
        if current is not None:
            return _joined(current)
        return transaction(self.engine, write=write)

    @contextlib.asynccontextmanager
    async def request_transaction(self) -> AsyncIterator[AsyncConnection]:
        """Open the request's write transaction; write units of work inside join it."""
        async with transaction(self.engine, write=True) as conn:
            token = _request_tx.set(conn)
            try:
                yield conn
            finally:
                _request_tx.reset(token)

    async def close(self) -> None:
        await self.engine.dispose()


_request_tx: contextvars.ContextVar[AsyncConnection | None] = contextvars.ContextVar("levy_request_tx", default=None)


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
