"""POST /transactions/batch: a seller's history, up to 1000 transactions per request.

Each item is created with the rules of ``POST /transactions`` (:func:`levy.app.transactions.create`,
inside the batch's one database transaction), except that ``filed`` is a valid status (history
already reported). An item whose ``reference_id`` is already stored is ``existing``: the stored
transaction is returned and nothing changes, so a batch sent again is safe. An item that breaks a
rule is ``failed`` with its errors, pointed into the request (``/transactions/3/line_items/0/...``);
the other items are stored all the same. Sales are created before credits, so that a credit may
name a parent sent later in the same batch; a reference id sent twice fails the second item.
See docs/transactions.md.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from typing import Any, Literal

from sqlalchemy.exc import IntegrityError
from sqlalchemy.ext.asyncio import AsyncConnection

from levy.app import events
from levy.app import transactions as service
from levy.app.calculate import check_vat_ids_first
from levy.app.context import CallContext
from levy.domain.errors import ErrorItem, LevyError, RequestTooLarge
from levy.domain.events import transaction_events
from levy.domain.transactions.records import TransactionRecord
from levy.store import transactions as store

ItemStatus = Literal["created", "existing", "failed"]


@dataclass
class ItemResult:
    index: int
    status: ItemStatus = "failed"
    record: TransactionRecord | None = None
    errors: list[ErrorItem] = field(default_factory=list)


def _pointed(index: int, items: list[ErrorItem]) -> list[ErrorItem]:
    prefix = f"/transactions/{index}"
    return [replace(it, pointer=prefix + (it.pointer or "")) for it in items]


def _is_credit(inp: service.TransactionInput) -> bool:
    return inp.type == "credit"


@dataclass
class Planned:
    """A batch after its first step (:func:`plan`): results so far, the sales to insert, the
    credits still to create."""

    items: list[service.TransactionInput]
    results: list[ItemResult]
    fresh: list[ItemResult]
    credits: list[int]
    stored: dict[str, TransactionRecord]
    taken: dict[str, str]  # reference id -> id of the transaction this batch creates with it
    rows: dict[str, list[dict[str, Any]]] | None = None  # the fresh sales' rows, when handed over


class StalePlan(Exception):
    """The new sales of a batch :func:`handed_over` could not be inserted together: a reference
    id among them was stored since the batch was planned (nothing of them was written)."""


def handed_over(p: Planned) -> Planned:
    """``p`` as the import command's planner process hands it to the process that writes it
    (:mod:`levy.transport.transactions_import`): the new sales as their rows (:func:`levy.store.transactions.new_rows`)
    instead of their records, the request messages of the credits only, the stored transactions
    only where a credit names their reference id. For 1000 3-line sales that pickles and unpickles
    in about 35 ms, against 210 ms for the records. :func:`write` inserts the rows together, or
    raises :class:`StalePlan`."""
    credits = set(p.credits)
    credit_refs = {_reference(p.items[i]) for i in credits}
    fresh = [r.record for r in p.fresh if r.record is not None]
    rows = store.new_rows(fresh)
    # Their events too, built here (the planner's CPU), stamped when written (:func:`write`).
    rows[events.TABLE.name] = [row for rec in fresh
                               for row in events.transaction_rows(transaction_events(rec.type, rec.status), rec)]
    results = [replace(r, record=None) for r in p.results]
    return Planned(
        items=[m if i in credits else service.TransactionInput() for i, m in enumerate(p.items)],
        results=results,
        fresh=[results[r.index] for r in p.fresh],
        credits=p.credits,
        stored={ref: rec for ref, rec in p.stored.items() if ref in credit_refs},
        taken=p.taken,
        rows=rows,
    )


async def create_batch(ctx: CallContext, items: list[service.TransactionInput],
                       item_errors: dict[int, list[ErrorItem]] | None = None,
                       answer: Callable[[list[ItemResult]], Any] = lambda results: results) -> Any:
    """Create ``items`` in one unit of work and return ``answer`` of the results (one per item, in
    request order), built before the unit of work commits: when ``answer`` raises (the reply would
    be over the transport's send limit, :func:`check_answer_size`) nothing is stored.

    ``item_errors``: items the transport could not parse (their errors already point into the
    request); they fail without being looked at again."""
    await check_vat_ids_first(ctx, (it.calculation for it in items))  # before the write transaction opens
    async with ctx.uow(write=True, presets=False) as conn:
        return answer(await write(ctx, conn, await plan(ctx, conn, items, item_errors)))


def check_answer_size(ctx: CallContext, size: int) -> None:
    """Refuse (RESOURCE_EXHAUSTED / 413 ``request_too_large``) an answer of ``size`` bytes that the
    transport cannot send (``ctx.max_response_bytes``, gRPC's send limit). Called before the batch
    commits, so that a client never gets an error for work that was stored (and stores it twice when
    it retries)."""
    limit = ctx.max_response_bytes
    if limit and size > limit:
        raise RequestTooLarge(
            f"The answer to this batch would be {size} bytes, over the {limit} bytes gRPC sends in one message; "
            "nothing was stored. Send fewer transactions per request (or use POST /transactions/batch).")


async def plan(ctx: CallContext, conn: AsyncConnection, items: list[service.TransactionInput],
               item_errors: dict[int, list[ErrorItem]] | None = None, *, yield_every: int = 0) -> Planned:
    """Step 1, which only reads: the reference ids looked up in one query; the sales checked and
    calculated one by one (not inserted). ``conn`` may be a read transaction (the import command
    plans a batch while the previous one is written); ``yield_every``: let other tasks run after
    that many items."""
    item_errors = item_errors or {}
    results = [ItemResult(i) for i in range(len(items))]
    for i, errs in item_errors.items():
        results[i].errors = list(errs)
    todo = [i for i in range(len(items)) if i not in item_errors]
    refs = [ref for i in todo if (ref := _reference(items[i]))]
    stored = await store.by_references(conn, ctx.organization_id, refs) if refs else {}
    p = Planned(items, results, [], [i for i in todo if _is_credit(items[i])], stored, {})
    for n, i in enumerate(i for i in todo if not _is_credit(items[i])):
        if yield_every and n % yield_every == yield_every - 1:
            await asyncio.sleep(0)
        res = results[i]
        if _found(res, items[i], p):
            continue
        try:
            res.record = await service.create(ctx, items[i], within=conn, history=True, write=False)
        except LevyError as e:
            res.errors = _pointed(i, e.items)
            continue
        res.status = "created"
        p.fresh.append(res)
        if res.record.reference_id:
            p.taken[res.record.reference_id] = res.record.id
    return p


async def write(ctx: CallContext, conn: AsyncConnection, p: Planned) -> list[ItemResult]:
    """Step 2, in the batch's write transaction: the planned sales inserted together (one
    statement per table), then the credits one by one, each seeing its parent and the credits
    before it. A batch :func:`handed_over` whose sales cannot go in together raises
    :class:`StalePlan`."""
    if p.rows is None:
        await _insert_sales(ctx, conn, p.fresh)
        await events.record(conn, [row for res in p.fresh if res.status == "created" and res.record is not None
                                   for row in events.transaction_rows(
                                       transaction_events(res.record.type, res.record.status), res.record)])
    else:
        now = datetime.now(UTC)
        for row in p.rows.get(events.TABLE.name, ()):
            row["created_at"] = now
        try:
            async with conn.begin_nested():
                await store.insert_new_rows(conn, p.rows)
        except IntegrityError:
            raise StalePlan from None
    for i in p.credits:
        res = p.results[i]
        if _found(res, p.items[i], p):
            continue
        try:
            res.record = await service.create(ctx, p.items[i], within=conn, history=True)
        except LevyError as e:
            holder = _stored_holder(e, set(p.taken.values()))
            found = await store.get_transaction(conn, ctx.organization_id, holder) if holder else None
            if found is not None:  # stored by a concurrent request after the look-up
                res.status, res.record = "existing", found
            else:
                res.errors = _pointed(i, e.items)
            continue
        res.status = "created"
        if res.record.reference_id:
            p.taken[res.record.reference_id] = res.record.id
    return p.results


def _reference(inp: service.TransactionInput) -> str:
    return inp.reference_id if inp.reference_id is not None else ""


def _found(res: ItemResult, msg: service.TransactionInput, p: Planned) -> bool:
    """``res`` settled by its reference id: ``existing`` when stored before the batch, ``failed``
    when an earlier item of the batch holds it."""
    ref = _reference(msg)
    if not ref:
        return False
    if ref in p.stored:
        res.status, res.record = "existing", p.stored[ref]
        return True
    if ref in p.taken:
        res.errors = _pointed(res.index, service._duplicate(ref, p.taken[ref]).items)
        return True
    return False


async def _insert_sales(ctx: CallContext, conn: AsyncConnection, fresh: list[ItemResult]) -> None:
    """Insert the batch's new sales together, in :func:`levy.store.transactions.reference_order`
    (so that overlapping batches wait for each other instead of deadlocking). When a concurrent
    request stored one of their reference ids since the look-up (the insert waited for its commit,
    then failed), the reference ids are looked up again, the stored ones become ``existing``, and
    the rest are inserted together again; one by one only when the failure was not that."""
    todo = sorted(fresh, key=lambda r: store.reference_order(r.record))  # type: ignore[arg-type]
    while todo:
        try:
            async with conn.begin_nested():
                await store.insert_many(conn, [r.record for r in todo if r.record is not None])
            return
        except IntegrityError:
            pass
        refs = [r.record.reference_id for r in todo if r.record is not None and r.record.reference_id]
        stored = await store.by_references(conn, ctx.organization_id, refs) if refs else {}
        if not stored:
            break
        for res in todo:
            ref = res.record.reference_id if res.record is not None else None
            if ref in stored:
                res.status, res.record = "existing", stored[ref]
        todo = [r for r in todo if r.status == "created"]
    for res in todo:
        assert res.record is not None
        ref = res.record.reference_id
        holder = await store.insert_transaction(conn, res.record)
        if holder is not None:
            found = await store.get_transaction(conn, ctx.organization_id, holder)
            if found is not None:
                res.status, res.record = "existing", found
            else:  # pragma: no cover - the holder cannot vanish inside our transaction
                res.status, res.record = "failed", None
                res.errors = _pointed(res.index, service._duplicate(ref or "", holder).items)


def _stored_holder(e: LevyError, created_here: set[str]) -> str | None:
    """The id of the transaction already holding the item's reference id, when that is the error
    and the holder was not created by this batch (a reference id sent twice in one batch fails)."""
    for it in e.items:
        if it.code == service.DUPLICATE_REFERENCE and it.meta:
            holder = it.meta.get("existing_transaction_id")
            if holder and holder not in created_here:
                return str(holder)
    return None


def summary(results: list[ItemResult]) -> dict[str, int]:
    counts = dict.fromkeys(("created", "existing", "failed"), 0)
    for r in results:
        counts[r.status] += 1
    return counts
