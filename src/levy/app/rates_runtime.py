"""Rates in memory: one immutable RateTable per process, swapped atomically.

At start-up every imported record is loaded into a
:class:`~levy.domain.tax.rates.RateTable` (built-in state data + imported local
records + the ZIP directory) kept in ``services.extras``. A background task looks
at ``rate_imports`` every ``LEVY_RATES_REFRESH_SECONDS`` (default 10; 0 turns
the refresh off) and, when an import was added, builds a new table off the
event loop and replaces the reference in one assignment. A calculation reads
the reference once and never reads a rate from the database.
"""

from __future__ import annotations

import asyncio
import gc
import logging
import os
from dataclasses import dataclass

from levy.app.services import AppServices
from levy.app.startup import on_startup
from levy.domain.tax.rates import RateTable
from levy.rates.builtin import builtin_rate_table, load_taxability
from levy.store import rates as store

log = logging.getLogger(__name__)

EXTRA_KEY = "levy.rates"
TASK_KEY = "levy.rates.refresh_task"
DEFAULT_REFRESH_SECONDS = 10.0


@dataclass(frozen=True)
class LoadedRates:
    table: RateTable
    marker: tuple[int, str | None]  # (import count, newest import id) it was built from


def current_rates(services: AppServices) -> RateTable:
    loaded: LoadedRates | None = services.extras.get(EXTRA_KEY)
    if loaded is None:  # not started through the server (e.g. a script): built-in data only
        loaded = LoadedRates(builtin_rate_table(), (0, None))
        services.extras[EXTRA_KEY] = loaded
    return loaded.table


def refresh_seconds() -> float:
    raw = os.environ.get("LEVY_RATES_REFRESH_SECONDS", "")
    try:
        return float(raw) if raw.strip() else DEFAULT_REFRESH_SECONDS
    except ValueError:
        log.warning("LEVY_RATES_REFRESH_SECONDS=%r is not a number; using %s", raw, DEFAULT_REFRESH_SECONDS)
        return DEFAULT_REFRESH_SECONDS


async def reload(services: AppServices, *, force: bool = False) -> bool:
    """Rebuild the table if the imports changed (or ``force``); True when swapped."""
    async with services.uow() as conn:
        marker = await store.imports_marker(conn)
        loaded: LoadedRates | None = services.extras.get(EXTRA_KEY)
        if not force and loaded is not None and loaded.marker == marker:
            return False
        rows = await store.all_records(conn)
    table = await asyncio.to_thread(builtin_rate_table, rows)
    services.extras[EXTRA_KEY] = LoadedRates(table, marker)
    # The table is hundreds of thousands of long-lived, acyclic objects: keep them
    # (and everything loaded so far) out of the cycle collector's full passes,
    # which otherwise walk them all and stall requests (reference counting still
    # frees a replaced table). Collected first so that no garbage is frozen.
    gc.collect()
    gc.freeze()
    log.info("rate table loaded: %d imports, %d records", marker[0], len(rows))
    return True


async def _refresh_loop(services: AppServices, every: float) -> None:
    while True:
        await asyncio.sleep(every)
        try:
            await reload(services)
        except asyncio.CancelledError:
            raise
        except Exception:  # keep serving with the current table
            log.exception("rate table refresh failed; keeping the current table")


@on_startup
async def _load_rates(services: AppServices) -> None:
    await asyncio.to_thread(load_taxability)
    await reload(services, force=True)
    every = refresh_seconds()
    if every > 0:
        services.extras[TASK_KEY] = asyncio.create_task(_refresh_loop(services, every), name="levy-rates-refresh")
