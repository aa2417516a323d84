"""The transactions service: create and update, each in ONE database transaction.

Takes plain values (:class:`TransactionInput`, built by the handlers from the request) and
returns domain records (:class:`levy.domain.transactions.records.TransactionRecord`). Wires the
pure rules of :mod:`levy.domain.transactions` (lifecycle, lines, tax provided or calculated,
what an update may change, credits, tax-only attribution) to the calculation service
(:mod:`levy.app.calculate`: request translation with presets, engine), the stored line format
(:mod:`levy.store.transaction_lines`) and the store (:mod:`levy.store.transactions`). See
docs/transactions.md.
"""

from __future__ import annotations

from contextlib import nullcontext
from dataclasses import dataclass, field, replace
from datetime import UTC, date, datetime
from typing import Any

from sqlalchemy.ext.asyncio import AsyncConnection

from levy.app import audit, events
from levy.app.calculate import (
    CalculationRequest,
    Prepared,
    check_vat_ids_first,
    organization_settings,
    prepare,
    run_engine,
)
from levy.app.context import CallContext
from levy.domain import ids
from levy.domain.currency import RETURNS_COUNTRY, choose_exchange_rate
from levy.domain.errors import (
    Conflict,
    ErrorCollector,
    FailedPrecondition,
    LevyError,
    NotFound,
    ValidationFailed,
)
from levy.domain.events import status_event, transaction_events
from levy.domain.money import allocate, parse_amount
from levy.domain.pagination import PageRequest
from levy.domain.tax.model import LineInput
from levy.domain.tax.sourcing import source
from levy.domain.transactions.collected import (
    LineSplit,
    TransactionLine,
    effective_codes,
)
from levy.domain.transactions.credits import (
    check_credit,
    check_parent_usable,
    check_sale_change,
    credit_against,
    flat_credit,
)
from levy.domain.transactions.records import StoredLine, TransactionRecord
from levy.domain.transactions.rules import (
    UNSET,
    LinePlan,
    TransactionSearch,
    check_amount_changeable,
    check_full_credit_not_empty,
    check_lines_editable,
    check_parent_fields,
    check_parent_found,
    check_recorded,
    check_transaction_date,
    check_transition,
    credit_kind,
    full_credit_lines,
    plan_lines,
    tax_on_amount_update,
    tax_on_create,
    tax_on_lines_update,
    update_field_errors,
    validate_create_status,
    validate_source_field,
    validate_type,
)
from levy.domain.transactions.tax_only import attribute_tax_only
from levy.ratefiles.builtin import load_sourcing
from levy.store import exchange_rates
from levy.store import transactions as store
from levy.store.transaction_lines import flat_lines

DUPLICATE_REFERENCE = "duplicate_reference_id"


@dataclass(frozen=True, slots=True)
class TransactionInput:
    """What a create or an update request sends, as plain values (None: not sent).

    ``calculation`` is the request's calculation fields (``currency``, the discounts,
    ``transaction_date``, ``tax_behavior``, ``line_items``); ``stored_lines`` each request line
    as it is stored (:func:`levy.app.handlers.transactions.line_input`: its bytes, and the message
    answered with); ``present`` the fields an update sends (a create reads what is set);
    ``line_items_sent`` whether the request has any line item.
    """

    type: str | None = None
    status: str | None = None
    source: str | None = None
    reference_id: str | None = None
    parent_transaction_id: str | None = None
    parent_reference_id: str | None = None
    tax_amount: str | None = None
    flat_amount: str | None = None
    marketplace_facilitator: str | None = None
    exchange_rate: str | None = None
    exchange_rate_date: str | None = None
    line_items_sent: bool = False
    calculation: CalculationRequest = field(default_factory=CalculationRequest)
    stored_lines: tuple[tuple[bytes, Any], ...] = ()
    present: tuple[str, ...] = ()


def transaction_path(transaction_id: str) -> str:
    return f"/transactions/{transaction_id}"


def utcnow() -> datetime:
    return datetime.now(UTC)


def _duplicate(reference_id: str, existing_id: str) -> Conflict:
    return Conflict(
        f"A transaction with reference_id '{reference_id}' already exists: {existing_id}",
        code=DUPLICATE_REFERENCE,
        pointer="/reference_id",
        meta={"existing_transaction_id": existing_id, "existing_transaction_path": transaction_path(existing_id)},
    )


def not_found(transaction_id: str) -> NotFound:
    return NotFound(f"No transaction with id '{transaction_id}'.", pointer=None)


def _tax_amount(inp: TransactionInput) -> int | None:
    return parse_amount(inp.tax_amount, "/tax_amount") if inp.tax_amount is not None else None


def _marketplace(inp: TransactionInput) -> str | None:
    """The marketplace facilitator's name, trimmed; a blank name is 422."""
    if inp.marketplace_facilitator is None:
        return None
    name = inp.marketplace_facilitator.strip()
    if not name:
        raise ValidationFailed("marketplace_facilitator names the facilitator (for example 'Amazon'); leave it out "
                               "for the seller's own sales.", pointer="/marketplace_facilitator")
    return name


async def returns_currency(ctx: CallContext, conn: AsyncConnection | None) -> str:
    """The currency of the organization's returns (its ``filing_currencies`` setting for
    :data:`RETURNS_COUNTRY`, read through the preset cache)."""
    currency = (await organization_settings(ctx, conn)).filing_currency(ctx.services.reference.filing_currencies,
                                                                        RETURNS_COUNTRY)
    assert currency is not None  # the data gives the US a fixed default
    return currency


async def settle_currency(ctx: CallContext, conn: AsyncConnection | None, rec: TransactionRecord,
                          inp: TransactionInput, parent: TransactionRecord | None, *,
                          sent: bool = True) -> TransactionRecord:
    """``rec`` with the exchange rate it stores (:func:`levy.domain.currency.choose_exchange_rate`)
    and, for a credit of a marketplace sale, its sale's facilitator. ``sent``: whether the request
    sent ``exchange_rate`` (an update that does not keeps the stored rate). The imported reference
    rates are read (in ``conn``, or a read of its own) only when no rate is given."""
    if parent is not None and parent.marketplace_facilitator:
        rec = replace(rec, marketplace_facilitator=parent.marketplace_facilitator)
    sent_rate = inp.exchange_rate if sent else None
    sent_date = inp.exchange_rate_date if sent else None
    if sent_rate is None and sent_date is not None:  # a new date for the rate already stored
        sent_rate = rec.exchange_rate
    if sent_rate is None and rec.exchange_rate is not None:
        return rec
    day = rec.transaction_date.astimezone(UTC).date()
    parent_rate = (parent.exchange_rate, parent.exchange_rate_date) if parent is not None else None
    published = None
    filing = await returns_currency(ctx, conn)
    if (rec.currency != filing and sent_rate is None and not (parent_rate and parent_rate[0])
            and rec.status in ("finalized", "filed")):
        async with ctx.uow() if conn is None else nullcontext(conn) as c:
            published = await exchange_rates.reference_rate(c, rec.currency, filing, day)
    rate, on = choose_exchange_rate(currency=rec.currency, status=rec.status, transaction_day=day,
                                    sent_rate=sent_rate, sent_date=sent_date, parent_rate=parent_rate,
                                    published=published, filing_currency=filing)
    return replace(rec, exchange_rate=rate, exchange_rate_date=on)


# -- lines -> engine -> stored lines -----------------------------------------------------------


@dataclass
class Computed:
    """The lines of one create (or ``line_items`` update), planned and calculated."""

    plan: LinePlan
    lines: tuple[StoredLine, ...]
    calculated: int
    prepared: Prepared
    collected_lines: tuple[TransactionLine, ...]

    @property
    def on(self) -> date:
        on = self.prepared.input.transaction_date
        return on.astimezone(UTC).date() if isinstance(on, datetime) else utcnow().date()

    def registered_codes(self) -> tuple[str, ...]:
        on = self.on
        return tuple(sorted({r.jurisdiction for r in self.prepared.registrations if r.covers(on)}))


async def compute_lines(
    ctx: CallContext, conn: AsyncConnection | None, inp: TransactionInput, *, transaction_type: str, source: str,
    has_parent: bool, errors: list[LevyError],
) -> Computed:
    """Translate the request's line items (presets resolved), split collected-tax lines off (4.7),
    run the engine on the goods lines only. Raises every problem at once (422)."""
    calc = inp.calculation
    prepared = await prepare(ctx, calc, conn, require_lines=False)
    details = prepared.details
    tlines = []
    for i, line in sorted(details.lines.items()):
        own = list(calc.line_items[i].tax_attributes) or None
        codes, _ = effective_codes(own, details.product_codes.get(i))
        tlines.append(TransactionLine(line, i, codes, details.merged_into.get(i)))
    all_errors = [*errors, *prepared.errors]
    plan = None
    try:
        plan = plan_lines(tlines, transaction_type=transaction_type, source=source,  # type: ignore[arg-type]
                          has_parent=has_parent, netting=ctx.services.reference.netting_policies)
    except ValidationFailed as e:
        all_errors.append(e)
    if all_errors:
        raise ValidationFailed.many(all_errors)
    assert plan is not None
    prepared.errors = []
    result = run_engine(ctx, prepared, plan.split.engine_lines, shape=False)
    stored = []
    for tl, res in zip(plan.split.goods, result.lines, strict=True):
        data, line_msg = inp.stored_lines[tl.index]
        stored.append(StoredLine(data, res, details.customer_ids.get(tl.index), details.product_ids.get(tl.index),
                                 ship_from=ship_from_used(tl.line), message=line_msg))
    collected = tuple(tl for tl in tlines if tl.is_sales_tax)
    return Computed(plan, tuple(stored), result.tax_amount, prepared, collected)


def ship_from_used(line: LineInput) -> dict[str, Any] | None:
    """What a stored line keeps of its ship-from: the location id, if any, and the address."""
    a = line.ship_from
    if a is None:
        return None
    address = {k: v for k, v in (("line1", a.line1), ("city", a.city), ("state", a.state), ("country", a.country),
                                 ("postal_code", a.postal_code)) if v is not None}
    return {"location_id": line.ship_from_location, "address": address} if line.ship_from_location \
        else {"address": address}


def attribute(ctx: CallContext, computed: Computed, total: int) -> tuple[tuple[tuple[str, int], ...], str | None]:
    """Tax-only transactions: (allocations, held_off_reason) of ``total`` (4.7 tax-only rules 1-3)."""
    plan = computed.plan
    if not plan.tax_only:
        return (), None
    if not plan.needs_attribution:
        return (), plan.held_off_reason
    rates = ctx.services.rates.table
    on = computed.on
    registered = set(computed.registered_codes())
    state_of: dict[str, str] = {}
    covers: dict[str, frozenset[str]] = {}
    reached: list[list[str] | None] = []
    for tl in computed.collected_lines:
        if tl.line.address is None:
            reached.append(None)
            continue
        resolution = rates.resolve(tl.line.address, on, tl.pointer)
        if resolution.place is not None:  # outside the US: the registrations that cover each level
            covers.update((level.code, level.covered_by) for level in resolution.place.levels)
        elif tl.line.ship_from is not None:  # the jurisdictions the state's sourcing rule picks
            origin = rates.resolve(tl.line.ship_from, on, tl.pointer, tl.line.ship_from_pointer)
            sourced = source(resolution, origin, ctx.services.reference.sourcing, on, tl.line.ship_from_label)
            if sourced is not None:
                resolution = sourced.resolution
        codes = []
        for row in resolution.rows:
            state_of[row.code] = row.state
            codes.append(row.code)
        reached.append(codes)

    def is_registered(code: str) -> bool:
        return (code in registered or f"US-ST-{state_of.get(code, '')}" in registered
                or not registered.isdisjoint(covers.get(code, ())))

    result = attribute_tax_only(total, reached, is_registered)
    return result.allocations, result.held_off_reason


def _reallocate(rec: TransactionRecord, total: int) -> tuple[tuple[str, int], ...]:
    """A tax-only transaction's new total over the jurisdictions it was attributed to."""
    if not rec.allocations:
        return ()
    parts = allocate(total, [1] * len(rec.allocations))
    return tuple((code, part) for (code, _), part in zip(rec.allocations, parts, strict=True))


# -- parents and credits ---------------------------------------------------------------------


async def find_parent(
    conn: AsyncConnection, org: str, parent_id: str | None, parent_ref: str | None
) -> TransactionRecord | None:
    """The named parent, locked (credits against it are checked in this transaction)."""
    if parent_id:
        parent = await store.get_transaction(conn, org, parent_id, for_update=True)
        if parent is not None and parent_ref and parent.reference_id != parent_ref:
            raise ValidationFailed(
                f"parent_transaction_id '{parent_id}' and parent_reference_id '{parent_ref}' name different "
                "transactions: send one of them",
                pointer="/parent_reference_id",
            )
        return parent
    assert parent_ref
    return await store.find_by_reference(conn, org, parent_ref, for_update=True)


async def against_parent(conn: AsyncConnection, parent: TransactionRecord, credit: TransactionRecord, *,
                         lines_changed: bool, filing_currency: str, lines_pointer: str = "/line_items",
                         earlier: list[TransactionRecord] | None = None) -> TransactionRecord:
    """``credit`` checked against what ``parent`` (locked by the caller) still covers after its other
    credits (``earlier`` when the caller read them already); when its lines are new, their tax is
    first derived from the parent's lines (the remaining-tax rule of
    :mod:`levy.domain.transactions.credits`)."""
    if earlier is None:
        earlier = await store.credits_of(conn, parent.organization_id, parent.id, exclude_id=credit.id)
    if lines_changed:
        credit = credit_against(parent, earlier, credit)
    check_credit(parent, earlier, credit, filing_currency=filing_currency, lines_pointer=lines_pointer)
    return credit


def at_sent_fields(err: LevyError, parent_pointer: str, *, lines_sent: bool, tax_sent: bool) -> LevyError:
    """``err`` with its items about ``line_items`` or ``tax_amount`` the request did not send pointing at
    what it did send: a tax it did not send comes from its lines (``/line_items``), and a full credit's
    lines and their tax are copied from the parent (the field naming the parent)."""
    instead = {"/line_items": parent_pointer, "/tax_amount": "/line_items" if lines_sent else parent_pointer}
    unsent = {p for p, sent in (("/line_items", lines_sent), ("/tax_amount", tax_sent)) if not sent}
    if not any(it.pointer in unsent for it in err.items):
        return err
    items = [replace(it, pointer=instead[it.pointer]) if it.pointer in unsent else it for it in err.items]
    return type(err)(err.detail, items=items)


# -- create ----------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class _Head:
    """What a create request says of the transaction itself, checked."""

    organization_id: str
    type: str
    status: str
    source: str
    transaction_date: datetime
    reference_id: str | None
    parent_id: str | None
    parent_ref: str | None
    has_parent: bool
    parent_pointer: str
    tax_amount: int | None
    now: datetime


def _lines_record(ctx: CallContext, computed: Computed, head: _Head,
                  parent: TransactionRecord | None, marketplace: str | None = None) -> TransactionRecord:
    """The new transaction of calculated lines (not a full credit), checked against ``parent``
    (found and locked by the caller) when it names one."""
    plan = computed.plan
    check_recorded(plan, head.source)
    if head.has_parent:
        check_parent_found(parent is not None, only_collected_lines=plan.split.only_collected,
                           pointer=head.parent_pointer)
    if parent is not None:
        check_parent_usable(parent, head.parent_pointer)
    tax = tax_on_create(calculated=computed.calculated, tax_amount=head.tax_amount, split=plan.split)
    allocations, held_off = attribute(ctx, computed, tax.tax_amount)
    inp = computed.prepared.input
    return TransactionRecord(
        id=ids.new_id("txn"), organization_id=head.organization_id, type=head.type, status=head.status,
        source=head.source, currency=inp.currency, transaction_date=head.transaction_date, tax=tax,
        reference_id=head.reference_id,
        parent_transaction_id=parent.id if parent is not None else head.parent_id,
        parent_reference_id=head.parent_ref, parent_found=parent is not None,
        discount_amount=inp.discount_amount, vendor_discount_amount=inp.vendor_discount_amount,
        lines=computed.lines, tax_only=plan.tax_only, held_off_reason=held_off, allocations=allocations,
        registrations=computed.registered_codes(), created_at=head.now, updated_at=head.now,
        marketplace_facilitator=marketplace,
    )


#: Credits whose lines come from their parent's, not from a calculation.
COPIED = ("full_credit", "flat_credit")


def _copied_credit(head: _Head, parent: TransactionRecord, lines: tuple[StoredLine, ...], *,
                   discounts: bool, marketplace: str | None = None) -> TransactionRecord:
    """A credit of lines taken from ``parent`` (a full credit: the parent's lines and discounts; a
    credit by amount: its shares of them, with no discount), in the parent's currency; its
    calculated tax the sum of its lines."""
    tax = tax_on_create(calculated=sum(ln.result.tax_amount for ln in lines), tax_amount=head.tax_amount,
                        split=LineSplit((), (), None))
    return TransactionRecord(
        id=ids.new_id("txn"), organization_id=head.organization_id, type="credit", status=head.status,
        source=head.source, currency=parent.currency, transaction_date=head.transaction_date, tax=tax,
        reference_id=head.reference_id, parent_transaction_id=parent.id, parent_reference_id=head.parent_ref,
        parent_found=True, discount_amount=parent.discount_amount if discounts else 0,
        vendor_discount_amount=parent.vendor_discount_amount if discounts else 0,
        lines=lines, registrations=parent.registrations, created_at=head.now, updated_at=head.now,
        marketplace_facilitator=marketplace,
    )


async def create(ctx: CallContext, inp: TransactionInput, *, within: AsyncConnection | None = None,
                 history: bool = False, write: bool = True) -> TransactionRecord:
    """Create one transaction in its own unit of work, or in ``within`` (a batch's; ``history``:
    the batch import, where ``filed`` is a valid status too; ``write=False``: checked and
    calculated, not inserted: the batch inserts its sales together)."""
    org = ctx.organization_id
    c = ErrorCollector()
    transaction_type = c.attempt(validate_type, inp.type)
    status = c.attempt(validate_create_status, inp.status, history=history)
    source = c.attempt(validate_source_field, inp.source, sources=ctx.services.reference.customer_sources)
    tax_amount = c.attempt(_tax_amount, inp)
    flat_sent = inp.flat_amount is not None
    flat_amount = c.attempt(parse_amount, inp.flat_amount, "/flat_amount") if flat_sent else None
    marketplace = c.attempt(_marketplace, inp)
    parent_id = inp.parent_transaction_id or None
    parent_ref = inp.parent_reference_id or None
    reference_id = inp.reference_id or None
    has_parent = bool(parent_id or parent_ref)
    kind = None
    if transaction_type is not None:
        has_parent = bool(c.attempt(check_parent_fields, transaction_type, parent_id, parent_ref))
        kind = c.attempt(credit_kind, transaction_type, has_parent=has_parent, line_items_sent=inp.line_items_sent,
                         flat_amount_sent=flat_sent, tax_amount_sent=inp.tax_amount is not None)
    if transaction_type is None or status is None or source is None or kind is None:
        c.raise_any()
    pointer = "/parent_transaction_id" if parent_id else "/parent_reference_id"
    now = utcnow()
    sent_date = inp.calculation.transaction_date
    txn_date = sent_date if sent_date is not None else now
    if kind in COPIED:  # otherwise checked with the calculation's fields (levy.app.calculate.prepare)
        c.attempt(check_transaction_date, txn_date)

    head = _Head(org, transaction_type, status, source, txn_date, reference_id, parent_id, parent_ref, has_parent,
                 pointer, tax_amount, now)
    computed = None
    if within is None and not has_parent and kind not in COPIED:
        # Calculated before the write transaction (presets from the cache, or a read of their own):
        # the database's one writer (SQLite) is held only to store the transaction. A batch
        # (``within``) calculates in its own transaction.
        computed = await compute_lines(ctx, None, inp, transaction_type=transaction_type, source=source,
                                       has_parent=False, errors=c.errors)
        if ctx.request_tx is None:
            # Nothing to read or lock first: stored in a write transaction of its own, in one trip.
            rec = _lines_record(ctx, computed, head, None, marketplace)
            rec = await settle_currency(ctx, None, rec, inp, None)
            ctx.created(rec.id)
            note = ctx.audit if ctx.audit is not None and not ctx.audit.written else None
            existing = await store.insert_transaction_committed(ctx.services.engine, rec,
                                                                _with_events(rec) + _with_audit(note))
            if existing is not None:
                raise _duplicate(rec.reference_id or "", existing)
            if note is not None:
                note.written = True
            return rec
    if within is None and kind not in COPIED:
        await check_vat_ids_first(ctx, (inp.calculation,))  # a credit's own lines: before the write opens
    async with ctx.uow(write=True, presets=False) if within is None else nullcontext(within) as conn:
        parent = await find_parent(conn, org, parent_id, parent_ref) if has_parent else None
        earlier = None
        if kind in COPIED:
            c.raise_any()
            check_parent_found(parent is not None, only_collected_lines=False, pointer=pointer)
            assert parent is not None
            check_parent_usable(parent, pointer)
        if kind == "full_credit":
            assert parent is not None
            marked = await store.marked_products(conn, org, [ln.product_id for ln in parent.lines if ln.product_id])
            copied = full_credit_lines(parent.lines, lambda ln: ln.product_id in marked)
            check_full_credit_not_empty(copied, tax_amount)
            rec = _copied_credit(head, parent, tuple(copied), discounts=True, marketplace=marketplace)
        elif kind == "flat_credit":
            assert parent is not None and flat_amount is not None
            earlier = await store.credits_of(conn, org, parent.id)
            rec = _copied_credit(head, parent, flat_lines(flat_credit(parent, earlier, flat_amount)), discounts=False,
                                 marketplace=marketplace)
        else:
            if computed is None:
                computed = await compute_lines(ctx, conn, inp, transaction_type=transaction_type, source=source,
                                               has_parent=has_parent, errors=c.errors)
            rec = _lines_record(ctx, computed, head, parent, marketplace)
        rec = await settle_currency(ctx, conn, rec, inp, parent)
        if parent is not None:
            try:
                rec = await against_parent(conn, parent, rec, lines_changed=kind != "flat_credit", earlier=earlier,
                                           filing_currency=await returns_currency(ctx, conn))
            except LevyError as e:
                if kind == "flat_credit":  # its lines and tax come from flat_amount
                    raise at_sent_fields(e, "/flat_amount", lines_sent=False, tax_sent=False)
                raise at_sent_fields(e, pointer, lines_sent=kind != "full_credit", tax_sent=tax_amount is not None)
        if not write:
            return rec
        existing = await store.insert_transaction(conn, rec, _with_events(rec))
        if existing is not None:
            raise _duplicate(reference_id or "", existing)
        if within is None:
            ctx.created(rec.id)
    return rec


def _with_audit(note: audit.AuditNote | None) -> store.Extra:
    """The call's audit entry (:mod:`levy.app.audit`), inserted with the transaction it records."""
    return () if note is None else ((audit.TABLE, (audit.row(note),)),)


def _with_events(rec: TransactionRecord) -> store.Extra:
    """The events of the new transaction ``rec``, inserted with it (:mod:`levy.app.events`)."""
    return ((events.TABLE, events.transaction_rows(transaction_events(rec.type, rec.status), rec)),)


# -- update ----------------------------------------------------------------------------------


async def update(ctx: CallContext, transaction_id: str, inp: TransactionInput) -> TransactionRecord:
    """Change the fields ``inp.present`` of a transaction, in one write transaction."""
    org = ctx.organization_id
    present = inp.present
    c = ErrorCollector()
    c.errors.extend(update_field_errors(present, line_items_empty=not inp.line_items_sent,
                                        status_null=inp.status is None))
    lines_sent = "line_items" in present
    tax_sent = "tax_amount" in present
    tax_amount = c.attempt(_tax_amount, inp) if tax_sent else None
    c.raise_any()
    if lines_sent:
        await check_vat_ids_first(ctx, (inp.calculation,))  # before the write transaction opens

    async with ctx.uow(write=True, presets=False) as conn:
        cur = await store.get_transaction(conn, org, transaction_id, for_update=True)
        if cur is None:
            raise not_found(transaction_id)
        status = cur.status
        if "status" in present and inp.status is not None and check_transition(cur.status, inp.status):
            status = inp.status
        rec = replace(cur, status=status)
        if lines_sent:
            check_lines_editable(cur.status)
            computed = await compute_lines(ctx, conn, inp, transaction_type=cur.type, source=cur.source,
                                           has_parent=cur.has_parent, errors=[])
            check_recorded(computed.plan, cur.source)
            if cur.has_parent and not cur.parent_found and not computed.plan.split.only_collected:
                check_parent_found(False, only_collected_lines=False)
            tax = tax_on_lines_update(cur.tax, calculated=computed.calculated, split=computed.plan.split,
                                      tax_amount=tax_amount if tax_sent else UNSET)
            allocations, held_off = attribute(ctx, computed, tax.tax_amount)
            calc = computed.prepared.input
            rec = replace(
                rec, tax=tax, lines=computed.lines, tax_only=computed.plan.tax_only, held_off_reason=held_off,
                allocations=allocations, registrations=computed.registered_codes(), currency=calc.currency,
                discount_amount=calc.discount_amount, vendor_discount_amount=calc.vendor_discount_amount,
                transaction_date=(inp.calculation.transaction_date if inp.calculation.transaction_date is not None
                                  else cur.transaction_date),
            )
        elif tax_sent:
            check_amount_changeable(cur.status, "tax", "/tax_amount")
            tax = tax_on_amount_update(cur.tax, tax_amount)
            rec = replace(rec, tax=tax, allocations=_reallocate(cur, tax.tax_amount) if cur.tax_only else ())
        if "reference_id" in present:
            rec = replace(rec, reference_id=inp.reference_id or None)
        rate_sent = "exchange_rate" in present or "exchange_rate_date" in present
        if rate_sent:
            check_amount_changeable(cur.status, "exchange rate", "/exchange_rate")
        if rec.currency != cur.currency:
            rec = replace(rec, exchange_rate=None, exchange_rate_date=None)
        if rate_sent or rec.status != cur.status or rec.exchange_rate is None:
            parent = None
            if rec.type == "credit" and rec.parent_found:
                parent = await store.get_transaction(conn, org, rec.parent_transaction_id or "")
            rec = await settle_currency(ctx, conn, rec, inp, parent, sent=rate_sent)
            if rec.type == "sale" and cur.exchange_rate is not None and rec.exchange_rate != cur.exchange_rate \
                    and await store.credits_of(conn, org, rec.id):
                raise FailedPrecondition(
                    f"the sale has credits at its exchange rate {cur.exchange_rate}: its rate cannot change",
                    pointer="/exchange_rate", meta={"exchange_rate": cur.exchange_rate})
        amounts_changed = lines_sent or tax_sent
        if rec.type == "credit" and rec.parent_found and amounts_changed and rec.status != "void":
            parent = await store.get_transaction(conn, org, rec.parent_transaction_id or "", for_update=True)
            if parent is not None:
                rec = await against_parent(conn, parent, rec, lines_changed=lines_sent,
                                           filing_currency=await returns_currency(ctx, conn))
        if rec.type == "sale" and (rec.status != cur.status or amounts_changed):
            credits = await store.credits_of(conn, org, rec.id)
            check_sale_change(rec, credits, pointer="/line_items" if lines_sent else "/tax_amount",
                              filing_currency=await returns_currency(ctx, conn))
        if rec == cur:
            return cur
        rec = replace(rec, updated_at=utcnow())
        existing = await store.update_transaction(conn, rec, lines_changed=lines_sent,
                                                  reference_changed=rec.reference_id != cur.reference_id)
        if existing is not None:
            raise _duplicate(rec.reference_id or "", existing)
        moved = status_event(cur.status, rec.status)
        if moved is not None:
            await events.record(conn, events.transaction_rows((moved,), rec))
    return rec


async def search_transactions(conn: AsyncConnection, org: str, search: TransactionSearch,
                              page: PageRequest) -> tuple[list[TransactionRecord], bool]:
    """The console's transaction search (:func:`levy.domain.transactions.rules.parse_search`): a page,
    newest first by transaction date, and whether more follow."""
    return await store.search_transactions(conn, org, search, page.limit, page.starting_after)


async def get_transaction(conn: AsyncConnection, org: str, transaction_id: str) -> TransactionRecord:
    """The organization's transaction, or 404."""
    rec = await store.get_transaction(conn, org, transaction_id)
    if rec is None:
        raise not_found(transaction_id)
    return rec
