"""Planning the batches of ``levy transactions import``, here or in planner processes.

A batch is planned (:func:`plan_bodies`: its JSON bodies read into messages, checked, its
reference ids looked up, every sale calculated; nothing written) and then written by
:func:`levy.app.transactions_batch.write`, one write transaction per batch, in file order.

Planning is Python work that holds the interpreter; writing is mostly SQLite's or PostgreSQL's.
In one process the two take turns: aiosqlite's thread waits for the interpreter lock between
rows while the next batch is calculated, and the import runs at the sum of both (about 0.4 x
the rate of a raw insert of the same rows on SQLite). So the command plans in planner processes
(:func:`start_planners`, :func:`plan_in_planner`), each with its own connections and its own copy
of the rate table, which hand each batch back as the rows to insert
(:func:`levy.app.transactions_batch.handed_over`), while the command's process writes.

A batch is planned in a read transaction, so it may be planned before the one ahead of it is
committed: a reference id stored in between makes the write raise ``StalePlan``, and the writer
plans that batch again itself, inside its write transaction (the rule is the batch endpoint's: a
reference stored before is ``existing``). Credits are created by the writer, so a credit sees
the sales of earlier batches. The planners ignore Ctrl-C: the command stops them.

A command killed outright (SIGKILL, the out-of-memory killer) cannot stop them: each planner watches
its parent (:func:`_exit_with_parent`) and exits within half a second of it, closing its database
connections; multiprocessing's resource tracker, which the pool starts, then reads the end of its
pipe (its last holder gone) and exits too. Nothing of a batch is written by a planner, so what was
committed stays whole and a rerun resumes.
"""

from __future__ import annotations

import asyncio
import multiprocessing
import os
import signal
import threading
import time
from concurrent.futures import ProcessPoolExecutor
from multiprocessing import util
from typing import Any

from google.protobuf import json_format
from sqlalchemy.ext.asyncio import AsyncConnection

from levy.app import constraints
from levy.app.context import CallContext
from levy.app.handlers.transactions import batch_inputs
from levy.app.services import AppServices
from levy.app.transactions_batch import ItemResult, Planned, handed_over, plan
from levy.config import Config
from levy.domain.errors import ErrorItem, LevyError
from levy.domain.ids import new_id
from levy.store.keys import ApiKeyRecord
from levy.v1 import transactions_pb2 as pb


def import_context(services: AppServices, organization_id: str) -> CallContext:
    """The call context of the import: an admin key of ``organization_id``."""
    key = ApiKeyRecord(id="cli", organization_id=organization_id, name="levy transactions import", prefix="",
                       secret_hash="", admin=True, created_at=None, last_used_at=None,  # type: ignore[arg-type]
                       revoked_at=None)
    return CallContext(services=services, request_id="req_" + new_id("cli"), transport="cli", key=key)


def fill(msg: pb.Transaction, body: dict[str, Any]) -> None:
    """``json_format.ParseDict(body, msg)`` for the plain shape (snake_case names, strings, nested
    objects) at a fraction of its cost: the message constructor takes nested dicts; the timestamp
    is the one field JSON spells differently. Anything else raises, and the caller parses it again
    with ``ParseDict``."""
    fields = dict(body)
    date = fields.pop("transaction_date", None)
    msg.MergeFrom(type(msg)(**fields))
    if date is not None:
        msg.transaction_date.FromJsonString(date)


async def plan_bodies(ctx: CallContext, conn: AsyncConnection, bodies: list[dict[str, Any]], *,
                      yield_every: int = 0) -> Planned:
    """Step 1 of a batch (:func:`levy.app.transactions_batch.plan`) from the JSON bodies read. A body
    that is not a transaction fails alone; a batch refused as a whole (the request's limits) comes
    back with every item failed with the same errors, and nothing to write."""
    req = pb.BatchCreateTransactionsRequest()
    item_errors: dict[int, list[ErrorItem]] = {}
    for i, b in enumerate(bodies):
        msg = req.transactions.add()
        try:
            fill(msg, b)
        except (ValueError, TypeError, AttributeError):
            msg.Clear()
            try:
                json_format.ParseDict(b, msg)  # the exact error (or camelCase names, which it takes)
            except json_format.ParseError as e:
                msg.Clear()
                item_errors[i] = [ErrorItem(422, "validation_error", "Validation Error", str(e),
                                            pointer=f"/transactions/{i}")]
    try:
        constraints.check(req, item_errors)
    except LevyError as e:  # not about one item: every item fails with it
        failed = {i: list(e.items) for i in range(len(req.transactions))}
        results = [ItemResult(i, "failed", None, errs) for i, errs in failed.items()]
        return Planned(batch_inputs(req.transactions, failed), results, [], [], {}, {})
    return await plan(ctx, conn, batch_inputs(req.transactions, item_errors), item_errors, yield_every=yield_every)


# -- planner processes -----------------------------------------------------------------------

# In a planner process: its event loop, services and call context (set by _init).
_PLANNER: tuple[asyncio.AbstractEventLoop, AppServices, CallContext] | None = None


def start_planners(config: Config, organization_id: str, processes: int) -> ProcessPoolExecutor:
    """``processes`` planner processes for ``organization_id`` on ``config``'s database, started now
    (spawned, not forked: the caller has threads and an event loop)."""
    pool = ProcessPoolExecutor(max_workers=processes, mp_context=multiprocessing.get_context("spawn"),
                               initializer=_init, initargs=(config, organization_id))
    for _ in range(processes):
        pool.submit(_ready)
    return pool


def _init(config: Config, organization_id: str) -> None:
    global _PLANNER
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    parent = os.getppid()
    threading.Thread(target=_exit_with_parent, args=(parent,), name="levy-planner-parent", daemon=True).start()
    loop = asyncio.new_event_loop()
    asyncio.set_event_loop(loop)
    services = AppServices.create(config)
    loop.run_until_complete(services.rates.load())
    _PLANNER = (loop, services, import_context(services, organization_id))
    util.Finalize(None, _close, exitpriority=10)


def _exit_with_parent(parent: int, every: float = 0.5) -> None:
    """In a planner process: exit as soon as the process that started it (``parent``) is gone
    (the planner is then a child of init or of a subreaper). A thread polling ``getppid`` rather than
    Linux's ``PR_SET_PDEATHSIG``, which fires when the *thread* that started the process ends and is
    Linux only."""
    while os.getppid() == parent:
        time.sleep(every)
    os._exit(1)


def _close() -> None:
    if _PLANNER is not None:
        loop, services, _ = _PLANNER
        loop.run_until_complete(services.close())


def _ready() -> None:
    """Nothing: submitted once per process so that the processes start at once."""


def plan_in_planner(bodies: list[dict[str, Any]]) -> Planned:
    """In a planner process: the batch of ``bodies`` planned and handed over."""
    assert _PLANNER is not None, "not a planner process"
    loop, services, ctx = _PLANNER

    async def planned() -> Planned:
        async with services.uow() as conn:
            return handed_over(await plan_bodies(ctx, conn, bodies))

    return loop.run_until_complete(planned())
