"""The application's long-lived collaborators, built once per process."""

from __future__ import annotations

import contextlib
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
        return cls(config=config, engine=create_engine(config.database_url, pool_size=config.db_pool_size))

    def uow(self, *, write: bool = False) -> contextlib.AbstractAsyncContextManager[AsyncConnection]:
        """One database transaction (the unit of work of one request)."""
        return transaction(self.engine, write=write)

    async def close(self) -> None:
        await self.engine.dispose()


@contextlib.asynccontextmanager
async def open_services(config: Config) -> AsyncIterator[AppServices]:
    services = AppServices.create(config)
    try:
        yield services
    finally:
        await services.close()
