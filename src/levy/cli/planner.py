"""The planner processes of ``levy transactions import`` (issue 20).

Planning a batch (reading its bodies into messages, checking them, looking up their reference
ids, calculating every sale) is Python work that holds the interpreter; writing it is mostly
SQLite's or PostgreSQL's. In one process the two take turns: aiosqlite's thread waits for the
interpreter lock between rows while the next batch is planned, and the import runs at the sum
of both (about 0.4 x the rate of a raw insert of the same rows on SQLite). Here each batch is
planned in another process, with its own connections and its own copy of the rate table, and
handed back as the rows to insert (:func:`levy.app.transactions_batch.handed_over`); the command's
process writes the batches in file order, one write transaction each, while the next is planned.

A batch is planned in a read transaction, so it may be planned before the one ahead of it is
committed: a reference id stored in between makes the write raise ``StalePlan``, and the
command plans that batch again itself, inside its write transaction (the rule is the batch
endpoint's: a reference stored before is ``existing``). Credits are created by the writer, so a
credit sees the sales of earlier batches. The planners ignore Ctrl-C: the command stops them.
"""

from __future__ import annotations

import asyncio
import multiprocessing
import signal
from concurrent.futures import ProcessPoolExecutor
from multiprocessing import util
from typing import Any

# In a planner process: its event loop, services and call context (set by _init).
_STATE: tuple[asyncio.AbstractEventLoop, Any, Any] | None = None


def start(config: Any, organization_id: str, processes: int) -> ProcessPoolExecutor:
    """``processes`` planner processes for ``organization_id`` on ``config``'s database, started now
    (spawned, not forked: this process has threads and an event loop)."""
    pool = ProcessPoolExecutor(max_workers=processes, mp_context=multiprocessing.get_context("spawn"),
                               initializer=_init, initargs=(config, organization_id))
    for _ in range(processes):
        pool.submit(_ready)
    return pool


def _init(config: Any, organization_id: str) -> None:
    from levy.app.services import AppServices
    from levy.cli.transactions import cli_context

    global _STATE
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    loop = asyncio.new_event_loop()
    asyncio.set_event_loop(loop)
    services = AppServices.create(config)
    loop.run_until_complete(services.rates.load())
    _STATE = (loop, services, cli_context(services, organization_id))
    util.Finalize(None, _close, exitpriority=10)


def _close() -> None:
    if _STATE is not None:
        loop, services, _ = _STATE
        loop.run_until_complete(services.close())


def _ready() -> None:
    """Nothing: submitted once per process so that the processes start at once."""


def plan(bodies: list[dict[str, Any]]) -> Any:
    """In a planner process: the batch of ``bodies`` planned and handed over, or every item's
    failed outcome (:func:`levy.cli.transactions.plan_batch`)."""
    from levy.app.transactions_batch import handed_over
    from levy.cli.transactions import plan_batch

    assert _STATE is not None, "not a planner process"
    loop, services, ctx = _STATE

    async def planned() -> Any:
        async with services.uow() as conn:
            p = await plan_batch(ctx, conn, bodies)
        return p if isinstance(p, list) else handed_over(p)

    return loop.run_until_complete(planned())
