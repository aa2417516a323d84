"""Transactions (spec sections 2.8, 3.1, 4.6, 4.7): thin adapters over
:mod:`levy.app.transactions` (create, update) and :mod:`levy.store.transactions`
(get, list): a request message becomes a :class:`levy.app.transactions.TransactionInput`
(:func:`transaction_input`), a record becomes a message (:func:`to_message`).
``Idempotency-Key`` on create and update is handled by the shared pipeline. See
docs/transactions.md."""

from __future__ import annotations

import contextlib
from collections.abc import Mapping, Sequence

from google.protobuf import json_format

from levy.app import transactions as service
from levy.app import transactions_batch as batch
from levy.app.calculate import check_vat_ids_first
from levy.app.context import CallContext
from levy.app.error_objects import error_object
from levy.app.handlers.calculations import (
    add_vat_checks,
    calculation_request,
    rate_string,
)
from levy.app.handlers.messages import optional, page_of, present_fields, set_time
from levy.app.registry import handles, input_names, output_only_names
from levy.app.services import retry_write_conflicts
from levy.domain.errors import LevyError
from levy.domain.transactions.records import TransactionRecord
from levy.domain.transactions.rules import CREATE_ONLY, parse_list_filters
from levy.store import transactions as store
from levy.v1 import transactions_pb2 as pb

_LINE_OUTPUTS = output_only_names(pb.TransactionLineItem.DESCRIPTOR)


def line_input(li: pb.TransactionLineItem, tax_behavior: str | None = None) -> tuple[bytes, pb.TransactionLineItem]:
    """The request line as received (its input fields), stored and echoed back: serialized
    and as the message (the request's own when it sets no output field, as it usually does not).
    ``tax_behavior``: the transaction's, stored on a line that sends none (each line keeps the
    behaviour it was taxed with)."""
    inherit = tax_behavior is not None and not li.HasField("tax_behavior")
    if not inherit and not any(f.name in _LINE_OUTPUTS for f, _ in li.ListFields()):
        return li.SerializeToString(deterministic=True), li
    clean = pb.TransactionLineItem()
    clean.CopyFrom(li)
    for name in _LINE_OUTPUTS:
        clean.ClearField(name)
    if inherit and tax_behavior is not None:
        clean.tax_behavior = tax_behavior
    return clean.SerializeToString(deterministic=True), clean


#: Fields of ``Transaction`` a request may send (the rest are ``OUTPUT_ONLY`` in the proto).
WRITABLE = input_names(pb.Transaction.DESCRIPTOR)
#: What the refusal of an unknown update_mask path lists as writable.
_UPDATABLE = [f for f in WRITABLE if f not in CREATE_ONLY]
#: The optional string fields of ``Transaction`` that :class:`TransactionInput` carries as they are.
_SCALARS = ("type", "status", "source", "reference_id", "parent_transaction_id", "parent_reference_id",
            "tax_amount", "flat_amount", "marketplace_facilitator", "exchange_rate", "exchange_rate_date")


def transaction_input(msg: pb.Transaction, present: Sequence[str] = ()) -> service.TransactionInput:
    """The values of a create or update request (``present``: the fields an update sends).
    Reads only; the service checks them."""
    calculation = calculation_request(msg)
    return service.TransactionInput(
        **{name: optional(msg, name) for name in _SCALARS},
        line_items_sent=bool(msg.line_items), calculation=calculation,
        stored_lines=tuple(line_input(li, calculation.tax_behavior) for li in msg.line_items),
        present=tuple(present),
    )


def batch_inputs(msgs: Sequence[pb.Transaction], item_errors: Mapping[int, object]) -> list[service.TransactionInput]:
    """The values of a batch's items; an item refused already (``item_errors``: unparsed, or
    outside the field limits) is not read, and stands as an empty input."""
    return [service.TransactionInput() if i in item_errors else transaction_input(m) for i, m in enumerate(msgs)]


def to_message(rec: TransactionRecord) -> pb.Transaction:
    t = rec.tax
    msg = pb.Transaction(
        id=rec.id,
        type=rec.type,
        status=rec.status,
        source=rec.source,
        currency=rec.currency,
        discount_amount=str(rec.discount_amount),
        vendor_discount_amount=str(rec.vendor_discount_amount),
        tax_amount=str(t.tax_amount),
        filing_tax_amount=str(t.filing_tax_amount),
        filing_tax_amount_source=t.filing_tax_amount_source,
        calculated_tax_amount=str(t.calculated),
    )
    for name in ("parent_transaction_id", "parent_reference_id", "reference_id", "held_off_reason"):
        value = getattr(rec, name)
        if value is not None:
            setattr(msg, "held_off_returns_reason" if name == "held_off_reason" else name, value)
    if rec.exchange_rate is not None:
        msg.exchange_rate = rec.exchange_rate
    if rec.exchange_rate_date is not None:
        msg.exchange_rate_date = rec.exchange_rate_date.isoformat()
    if rec.marketplace_facilitator is not None:
        msg.marketplace_facilitator = rec.marketplace_facilitator
    if t.collected is not None:
        msg.collected_tax_amount = str(t.collected)
    if t.provided is not None:
        msg.provided_tax_amount = str(t.provided)
    set_time(msg.transaction_date, rec.transaction_date)
    set_time(msg.created_at, rec.created_at)
    set_time(msg.updated_at, rec.updated_at)
    for code, amount in rec.allocations:
        msg.tax_only_attributions.add(jurisdiction_code=code, tax_amount=str(amount))
    for ln in rec.lines:
        li = msg.line_items.add()
        if ln.message is not None:
            li.CopyFrom(ln.message)
        else:
            li.MergeFromString(ln.input)
        r = ln.result
        li.tax_amount = str(r.tax_amount)
        li.tax_amount_before_discounts = str(r.tax_amount_before_discounts)
        li.resolution = r.resolution
        li.sourcing = r.sourcing
        if ln.ship_from is not None:
            json_format.ParseDict(ln.ship_from, li.ship_from_used)
        for row in r.taxes:
            li.taxes.add(
                detail=row.detail, jurisdiction_name=row.jurisdiction_name, jurisdiction_type=row.jurisdiction_type,
                tax_amount=str(row.tax_amount), tax_type=row.tax_type, is_registered=row.is_registered,
                rule_name=row.rule_name, taxable_base=str(row.taxable_base), tax_rate=rate_string(row.tax_rate),
                sourcing=row.sourcing,
            )
        for d in r.discounts:
            li.discount_reductions.add(id=d.id, tax_amount_reduction=str(d.tax_amount_reduction))
        del li.vat_checks[:]
        add_vat_checks(li.vat_checks, r.vat_checks)
    return msg


async def _vat_ids_of_one(req: pb.CreateTransactionRequest | pb.UpdateTransactionRequest, ctx: CallContext) -> None:
    """VIES asked about the transaction's lines before the request's write transaction opens (a
    call with an Idempotency-Key runs its handler inside that transaction). A request that cannot
    be read is left to the handler, which refuses it with its pointers."""
    with contextlib.suppress(LevyError):
        await check_vat_ids_first(ctx, (calculation_request(req.transaction),))


async def _vat_ids_of_batch(req: pb.BatchCreateTransactionsRequest, ctx: CallContext) -> None:
    """:func:`_vat_ids_of_one` for every item of a batch not refused already."""
    with contextlib.suppress(LevyError):
        await check_vat_ids_first(ctx, [calculation_request(m) for i, m in enumerate(req.transactions)
                                        if i not in ctx.item_errors])


@handles("levy.v1.TransactionService.CreateTransaction", before_transaction=_vat_ids_of_one)
async def create_transaction(req: pb.CreateTransactionRequest, ctx: CallContext) -> pb.Transaction:
    return to_message(await service.create(ctx, transaction_input(req.transaction)))


@handles("levy.v1.TransactionService.UpdateTransaction", before_transaction=_vat_ids_of_one)
async def update_transaction(req: pb.UpdateTransactionRequest, ctx: CallContext) -> pb.Transaction:
    present = present_fields(req.transaction, req.update_mask.paths, WRITABLE, "transaction", listed=_UPDATABLE)
    return to_message(await service.update(ctx, req.id, transaction_input(req.transaction, present)))


@handles("levy.v1.TransactionService.GetTransaction")
async def get_transaction(req: pb.GetTransactionRequest, ctx: CallContext) -> pb.Transaction:
    async with ctx.uow() as conn:
        rec = await service.get_transaction(conn, ctx.organization_id, req.id)
    return to_message(rec)


@handles("levy.v1.TransactionService.ListTransactions")
async def list_transactions(req: pb.ListTransactionsRequest, ctx: CallContext) -> pb.ListTransactionsResponse:
    filters = parse_list_filters(
        status=optional(req, "status"), type=optional(req, "type"), reference_id=optional(req, "reference_id"),
        customer_id=optional(req, "customer_id"), source=optional(req, "source"),
        transaction_date_from=optional(req, "transaction_date_from"),
        transaction_date_to=optional(req, "transaction_date_to"), sources=ctx.services.reference.customer_sources,
    )
    page = page_of(req)
    async with ctx.uow() as conn:
        records, has_more = await store.list_transactions(
            conn, ctx.organization_id, filters, page.limit, page.starting_after
        )
    return pb.ListTransactionsResponse(data=[to_message(r) for r in records], has_more=has_more)


@handles("levy.v1.TransactionService.BatchCreateTransactions", before_transaction=_vat_ids_of_batch)
async def batch_create(req: pb.BatchCreateTransactionsRequest, ctx: CallContext) -> pb.BatchCreateTransactionsResponse:
    def answer(results: list[batch.ItemResult]) -> pb.BatchCreateTransactionsResponse:
        resp = pb.BatchCreateTransactionsResponse(object="batch")
        for r in results:
            out = resp.data.add(index=r.index, status=r.status)
            if r.record is not None:
                out.transaction.CopyFrom(to_message(r.record))
            else:
                out.errors.extend(error_object(e) for e in r.errors)
        resp.summary.CopyFrom(pb.BatchCreateSummary(**batch.summary(results)))
        if ctx.max_response_bytes:
            batch.check_answer_size(ctx, resp.ByteSize())
        return resp

    return await retry_write_conflicts(
        lambda: batch.create_batch(ctx, batch_inputs(req.transactions, ctx.item_errors), ctx.item_errors, answer),
        in_request_transaction=ctx.request_tx is not None)
