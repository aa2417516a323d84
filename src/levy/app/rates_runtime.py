"""Rates in memory: one immutable RateTable per process, swapped atomically.

:class:`RatesRuntime` holds a :class:`~levy.domain.tax.rate_table.RateTable`
(built-in state data + imported local records + the ZIP directory). The
composition root (:mod:`levy.app.bootstrap`) loads it before the server takes
traffic and runs :meth:`RatesRuntime.refresh_forever`, which looks at
``rate_imports`` every ``Config.rates_refresh_seconds`` (``LEVY_RATES_REFRESH_SECONDS``,
default 10; 0 turns the refresh off) and, when an import was added, builds a new table off the event
loop and replaces the reference in one assignment. A calculation reads the
reference once and never reads a rate from the database.

The address-level records (ZIP+4 and street ranges, the bulk of the SST
boundary files) are not held as objects: they stay in an address file
(:mod:`levy.store.address_file`) that the table queries, built on this host
from the database the first time an import set is loaded.
"""

from __future__ import annotations

import asyncio
import gc
import logging
from dataclasses import dataclass

from sqlalchemy.ext.asyncio import AsyncEngine

from levy.domain.tax.rate_table import RateTable
from levy.ratefiles.builtin import builtin_rate_table
from levy.store import address_file
from levy.store import rate_imports as store
from levy.store.db import transaction

log = logging.getLogger(__name__)

@dataclass(frozen=True)
class LoadedRates:
    table: RateTable
    marker: tuple[int, str | None]  # (import count, newest import id) it was built from


class RatesRuntime:
    """The process's rate table, read by every calculation."""

    def __init__(self, engine: AsyncEngine, address_dir: str = "") -> None:
        self._engine = engine
        self._address_dir = address_dir  # Config.address_dir
        self._loaded: LoadedRates | None = None

    @property
    def table(self) -> RateTable:
        if self._loaded is None:  # not loaded through the server (e.g. a script): built-in data only
            self._loaded = LoadedRates(builtin_rate_table(), (0, None))
        return self._loaded.table

    async def load(self) -> None:
        """Load every imported record (start-up)."""
        await self.reload(force=True)

    async def reload(self, *, force: bool = False) -> bool:
        """Rebuild the table if the imports changed (or ``force``); True when swapped."""
        async with transaction(self._engine, write=False) as conn:
            marker = await store.imports_marker(conn)
            if not force and self._loaded is not None and self._loaded.marker == marker:
                return False
            path = await address_file.ensure(conn, address_file.directory_for(self._engine.url, self._address_dir))
            rows = await store.all_records(conn, address_level=path is None)
        addresses = await asyncio.to_thread(address_file.AddressFile, path) if path is not None else None
        table = await asyncio.to_thread(builtin_rate_table, rows, addresses)
        self._loaded = LoadedRates(table, marker)
        # The table is hundreds of thousands of long-lived, acyclic objects: keep them
        # (and everything loaded so far) out of the cycle collector's full passes,
        # which otherwise walk them all and stall requests (reference counting still
        # frees a replaced table). Collected first so that no garbage is frozen.
        gc.collect()
        gc.freeze()
        log.info("rate table loaded: %d imports, %d records in memory, %d in %s", marker[0], len(rows),
                 addresses.records if addresses else 0, path or "no address file")
        return True

    async def refresh_forever(self, every: float) -> None:
        """Reload every ``every`` seconds when the imports changed (a background task)."""
        while True:
            await asyncio.sleep(every)
            try:
                await self.reload()
            except asyncio.CancelledError:
                raise
            except Exception:  # keep serving with the current table
                log.exception("rate table refresh failed; keeping the current table")
