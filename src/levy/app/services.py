"""The application's long-lived collaborators, built once per process."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import random
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import TypeVar

from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine

from levy.app.auth import Authenticator
from levy.app.preset_cache import PresetCache
from levy.app.rates_runtime import RatesRuntime
from levy.app.vies import ViesClient
from levy.config import Config
from levy.store import reference_data
from levy.store.db import create_engine, is_write_conflict, transaction

T = TypeVar("T")
log = logging.getLogger("levy.services")


@dataclass
class AppServices:
    """What the application core reads beside the request: built once per process
    by :func:`levy.app.bootstrap.build` (or :meth:`create`, for the CLI and tests)."""

    config: Config
    engine: AsyncEngine
    # The calculation's preset reads, per organization (see levy.app.preset_cache).
    presets: PresetCache
    # The rate table in memory (levy.app.rates_runtime).
    rates: RatesRuntime
    # API keys by secret; revoking a key forgets it here (levy.app.auth).
    authenticator: Authenticator
    # The reference data of levy/data, read once (levy.store.reference_data).
    reference: reference_data.ReferenceData
    # The online check of EU VAT ids (levy.app.vies); None when ``vies_url`` is not set.
    vies: ViesClient | None = None

    @classmethod
    def create(cls, config: Config, reference: reference_data.ReferenceData | None = None) -> AppServices:
        """Every collaborator from ``config`` (the rate table holds the built-in
        data until :meth:`RatesRuntime.load` runs); ``reference``: the reference data
        already loaded, else read now."""
        engine = create_engine(
            config.database_url, pool_size=config.db_pool_size, connect_timeout=config.db_connect_timeout_seconds,
            busy_timeout=config.db_busy_timeout_seconds,
        )
        vies = ViesClient(config.vies_url, config.vies_timeout_seconds, config.vies_requester_vat) \
            if config.vies_url else None
        return cls(config=config, engine=engine, presets=PresetCache(config.preset_cache_seconds),
                   rates=RatesRuntime(engine, config.address_dir),
                   authenticator=Authenticator(engine, config.auth_cache_seconds),
                   reference=reference if reference is not None else reference_data.load(), vies=vies)

    def uow(self, *, write: bool = False) -> contextlib.AbstractAsyncContextManager[AsyncConnection]:
        """One database transaction outside any request (start-up, background
        tasks, the CLI). A request's handlers use :meth:`CallContext.uow`, which
        joins the request's transaction and keeps the preset cache right."""
        return transaction(self.engine, write=write)

    async def close(self) -> None:
        if self.vies is not None:
            await self.vies.close()
        await self.engine.dispose()


# Runs of a unit of work the database aborted as a deadlock victim or serialization
# failure, before the request gives up with 503 and Retry-After (transport/errors.py).
WRITE_CONFLICT_ATTEMPTS = 5


async def retry_write_conflicts(fn: Callable[[], Awaitable[T]], *, in_request_transaction: bool = False,
                                attempts: int = WRITE_CONFLICT_ATTEMPTS) -> T:
    """Run ``fn`` (whole units of work) again, after a short pause, when the database
    rolled its transaction back as a deadlock victim or serialization failure.

    Inside a request's transaction (an idempotent call: ``in_request_transaction``)
    that transaction is aborted as a whole, so the error goes up at once to the
    caller that opened it."""
    for attempt in range(1, attempts + 1):
        try:
            return await fn()
        except Exception as e:
            if in_request_transaction or attempt == attempts or not is_write_conflict(e):
                raise
            log.info("write conflict (%s), running the transaction again (%d of %d)", type(e).__name__,
                     attempt + 1, attempts)
            await asyncio.sleep(random.uniform(0.005, 0.02) * attempt)
    raise AssertionError("unreachable")  # pragma: no cover

