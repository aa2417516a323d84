"""Filing, returns, liability reports and nexus: the application
functions behind both transports and the CLI (``levy filings``, ``levy reports``,
``levy nexus``). Each takes a connection of one database transaction and the
organization; the business rules are in :mod:`levy.domain.filing`,
:mod:`levy.domain.filing_rules` and :mod:`levy.domain.nexus_report`.

Inputs are the stored transactions as they are (never recalculated):
:func:`levy.domain.transactions.records.to_filing`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, replace
from datetime import UTC, date, datetime
from typing import Any

from sqlalchemy.ext.asyncio import AsyncConnection

from levy.app import events
from levy.domain import filing_rules as rules
from levy.domain.currency import RETURNS_COUNTRY, rate_string
from levy.domain.errors import NotFound, RequiredField, ValidationFailed
from levy.domain.filing import (
    HELD_OFF_REASON_DETAILS,
    ConvertedEntry,
    ExemptSales,
    HeldOff,
    JurisdictionTotals,
    LiabilityReport,
    MarketplaceEntry,
    Return,
    TaxOnlyEntry,
    liability_report,
    prepare_return,
    return_to_csv,
)
from levy.domain.filing_international import (
    InternationalReturn,
    check_period,
    prepare_international_return,
)
from levy.domain.filing_transactions import (
    EXPORT_FILES,
    ReturnEntry,
    amounts_on_return,
    entries_to_csv,
)
from levy.domain.ids import new_id
from levy.domain.nexus import NexusThresholds, measurement_windows, thresholds_in_force
from levy.domain.nexus_international import (
    InternationalNexus,
    earliest_start,
    in_force,
    international_nexus,
)
from levy.domain.nexus_report import (
    NexusStateReport,
    converted_by_state,
    counts_marketplace,
    dated_sales_by_state,
    nexus_report,
)
from levy.domain.periods import check_report_date
from levy.domain.transactions.records import TransactionRecord, to_filing
from levy.domain.transactions.rules import check_transition
from levy.store import exchange_rates
from levy.store import filings as store
from levy.store import transactions as transactions_store
from levy.store.organization import lock_organization, registrations_for
from levy.store.reference_data import ReferenceData
from levy.store.settings import get_settings
from levy.store.transactions import update_transaction


async def approaching_share(conn: AsyncConnection, organization_id: str) -> Decimal:
    """The share of a nexus threshold from which the organization's states are "approaching"."""
    settings, _ = await get_settings(conn, organization_id)
    return settings.nexus_approaching_share


async def returns_currency(conn: AsyncConnection, organization_id: str, *, ref: ReferenceData) -> str:
    """The currency of the organization's returns: its ``filing_currencies`` setting for
    :data:`levy.domain.currency.RETURNS_COUNTRY` (USD for the US, whatever the organization)."""
    settings, _ = await get_settings(conn, organization_id)
    currency = settings.filing_currency(ref.filing_currencies, RETURNS_COUNTRY)
    assert currency is not None  # the data gives the US a fixed default
    return currency


async def filing_currency(conn: AsyncConnection, organization_id: str, jurisdiction: str, *, ref: ReferenceData) -> str:
    """The currency of the return of ``jurisdiction``: :func:`returns_currency` for a US state, the
    data's (or the organization's choice for the country) for a return outside the US."""
    kind = ref.international_returns.get(jurisdiction)
    if kind is None:
        return await returns_currency(conn, organization_id, ref=ref)
    settings, _ = await get_settings(conn, organization_id)
    return kind.currency_for(settings.filing_currency_map(ref.filing_currencies))


def utcnow() -> datetime:
    return datetime.now(UTC)


def today() -> date:
    return utcnow().date()


# -- figures <-> JSON (stored with the filing) ---------------------------------------------------


def _totals_json(t: JurisdictionTotals) -> dict[str, Any]:
    """``t`` as stored; the rate and tax type only when set (returns outside the US)."""
    out = asdict(t)
    for name in ("tax_rate", "tax_type"):
        if out[name] is None:
            del out[name]
    return out


def return_to_json(ret: Return) -> dict[str, Any]:
    return {
        "jurisdictions": [_totals_json(t) for t in ret.jurisdictions],
        "totals": _totals_json(ret.totals),
        "tax_only_allocations": [asdict(e) for e in ret.tax_only_allocations],
        "held_off": [asdict(h) for h in ret.held_off],
        "transaction_ids": list(ret.transaction_ids),
        "credits_carried_forward": dict(ret.credits_carried_forward),
        "marketplace": [asdict(m) for m in ret.marketplace],
        "converted": [{**asdict(c), "exchange_rate_date": c.exchange_rate_date.isoformat()
                       if c.exchange_rate_date else None} for c in ret.converted],
    }


def _totals(d: dict[str, Any]) -> JurisdictionTotals:
    return JurisdictionTotals(**{**d, "exempt_sales": ExemptSales(**d["exempt_sales"])})


def return_from_json(rec: store.FilingRecord) -> Return:
    f = rec.figures
    return Return(
        state_code=rec.jurisdiction,
        period_start=rec.period_start,
        period_end=rec.period_end,
        jurisdictions=tuple(_totals(t) for t in f["jurisdictions"]),
        totals=_totals(f["totals"]),
        tax_only_allocations=tuple(TaxOnlyEntry(**e) for e in f["tax_only_allocations"]),
        held_off=tuple(HeldOff(**h) for h in f["held_off"]),
        transaction_ids=tuple(f["transaction_ids"]),
        credits_carried_forward=dict(f["credits_carried_forward"]),
        marketplace=tuple(MarketplaceEntry(**m) for m in f.get("marketplace", ())),
        converted=tuple(ConvertedEntry(**{**c, "exchange_rate_date": date.fromisoformat(c["exchange_rate_date"])
                                          if c["exchange_rate_date"] else None}) for c in f.get("converted", ())),
    )


# -- preparing -----------------------------------------------------------------------------------


def not_found(filing_id: str) -> NotFound:
    return NotFound(f"No filing with id '{filing_id}'.", meta={"filing_id": filing_id})


async def in_return_currency(conn: AsyncConnection, records: Sequence[TransactionRecord], currency: str,
                             rate_day: str, period_end: date) -> list[TransactionRecord]:
    """``records`` with the exchange rate of a return in ``currency`` outside the US: a
    transaction in that currency as it is; one in another currency at the imported reference rate
    (:func:`levy.store.exchange_rates.reference_rate`, the lookup of a transaction's own rate) of
    the return's ``rate_day``: the period's last day, or the transaction's day (a credit: its
    sale's day). Without a published rate it keeps none and is held off the return."""
    parents_missing = {r.parent_transaction_id for r in records if r.parent_transaction_id} - {r.id for r in records}
    days = {r.id: r.transaction_date.astimezone(UTC).date() for r in records}
    if parents_missing and records:
        found = await transactions_store.by_ids(conn, records[0].organization_id, sorted(parents_missing))
        days.update({t.id: t.transaction_date.astimezone(UTC).date() for t in found.values()})
    looked_up: dict[tuple[str, date], tuple[str | None, date | None]] = {}  # one read per currency and day
    out = []
    for r in records:
        if r.currency == currency:
            out.append(r)
            continue
        day = period_end if rate_day == "period_end" else days.get(r.parent_transaction_id or r.id, days[r.id])
        if (r.currency, day) not in looked_up:
            published = await exchange_rates.reference_rate(conn, r.currency, currency, day)
            looked_up[r.currency, day] = (rate_string(published[0]), published[1]) if published else (None, None)
        rate, on = looked_up[r.currency, day]
        out.append(replace(r, exchange_rate=rate, exchange_rate_date=on))
    return out


async def _international_return(
    conn: AsyncConnection, organization_id: str, kind: InternationalReturn, start: date, end: date,
    records: Sequence[TransactionRecord], filed: dict[str, set[str]], *, ref: ReferenceData,
) -> Return:
    """The return ``kind`` of the period from the stored ``records`` (``filed``: their filed returns)."""
    currency = await filing_currency(conn, organization_id, kind.jurisdiction, ref=ref)
    relevant = [r for r in records if any(kind.reports(t.jurisdiction_code, frozenset(r.registrations))
                                          for ln in r.lines for t in ln.result.taxes)]
    converted = await in_return_currency(conn, relevant, currency, kind.rate_day, end)
    txns = [(to_filing(r, frozenset(filed.get(r.id, ())), currency=currency), frozenset(r.registrations))
            for r in converted]
    return prepare_international_return(kind, start, end, txns)


async def _prepare(
    conn: AsyncConnection, organization_id: str, jurisdiction: str, start: date, end: date, *, for_update: bool,
    ref: ReferenceData,
) -> Return:
    records = await store.liable_transactions(conn, organization_id, start, end, for_update=for_update)
    filed = await store.filed_states(conn, organization_id, [r.id for r in records])
    kind = ref.international_returns.get(jurisdiction)
    if kind is not None:
        return await _international_return(conn, organization_id, kind, start, end, records, filed, ref=ref)
    currency = await returns_currency(conn, organization_id, ref=ref)
    txns = [to_filing(r, frozenset(filed.get(r.id, ())), currency=currency) for r in records]
    carried = await store.carried_credits(conn, organization_id, jurisdiction, start)
    return prepare_return(jurisdiction, start, end, txns, carried)


def _new_record(organization_id: str, jurisdiction: str, start: date, end: date, ret: Return) -> store.FilingRecord:
    return store.FilingRecord(
        id=new_id("fil"), organization_id=organization_id, jurisdiction=jurisdiction, period_start=start,
        period_end=end, status="prepared", figures=return_to_json(ret), transaction_count=len(ret.transaction_ids),
        filing_tax_amount=ret.filing_tax_amount, credits_carried_forward=sum(ret.credits_carried_forward.values()),
        created_at=utcnow(), filed_at=None,
    )


def validate_create(
    jurisdiction: str | None, period_start: str | None, period_end: str | None, status: str | None, *, on: date,
    ref: ReferenceData,
) -> tuple[str, date, date, str]:
    """(``US-ST-XX`` or a return outside the US such as ``EU-OSS``, start, end, status) of a create
    request; every problem reported together (422)."""
    errors: list[ValidationFailed] = []
    for value, name in ((jurisdiction, "jurisdiction"), (period_start, "period_start"), (period_end, "period_end")):
        if value is None:
            errors.append(RequiredField(name, pointer=f"/{name}"))
    kind = ref.international_returns.get(jurisdiction) if jurisdiction is not None else None
    if jurisdiction is not None and kind is None:
        try:
            rules.validate_state_code(jurisdiction, on=on, thresholds=ref.nexus_thresholds)
        except ValidationFailed as exc:
            errors.append(exc if jurisdiction.startswith("US-") else ValidationFailed(
                f"'{jurisdiction}' is neither a US state jurisdiction ('US-ST-CA') nor a return outside the US "
                f"({', '.join(sorted(ref.international_returns))}).", pointer="/jurisdiction", input=jurisdiction))
    try:
        wanted = rules.validate_create_status(status)
    except ValidationFailed as exc:
        errors.append(exc)
    if period_start is not None and period_end is not None:
        try:
            start, end = rules.parse_period(period_start, period_end)
            if kind is not None:
                check_period(kind, start, end)
        except ValidationFailed as exc:
            errors.append(exc)
    if errors:
        raise ValidationFailed.many(errors)  # type: ignore[arg-type]
    assert jurisdiction is not None
    return jurisdiction, start, end, wanted


async def create_filing(
    conn: AsyncConnection,
    organization_id: str,
    jurisdiction: str | None,
    period_start: str | None,
    period_end: str | None,
    status: str | None = None,
    *,
    ref: ReferenceData,
) -> store.FilingRecord:
    """Prepare a return (``status`` absent or ``prepared``), or prepare and file it at once (``filed``)."""
    code, start, end, wanted = validate_create(jurisdiction, period_start, period_end, status, on=today(), ref=ref)
    if wanted == "filed":
        return await _file(conn, organization_id, None, code, start, end, ref=ref)
    ret = await _prepare(conn, organization_id, code, start, end, for_update=False, ref=ref)
    rec = _new_record(organization_id, code, start, end, ret)
    await store.insert_filing(conn, rec)
    currency = await filing_currency(conn, organization_id, code, ref=ref)
    await events.record(conn, [events.filing_row("filing.prepared", rec, currency)])
    return rec


async def update_filing(
    conn: AsyncConnection, organization_id: str, filing_id: str, status: str | None, other_fields: Sequence[str] = (),
    *, ref: ReferenceData,
) -> store.FilingRecord:
    """``status: filed`` files a prepared return; nothing else of a filing changes.

    An unknown id (or another organization's) is 404 whatever the body says.
    """
    await lock_organization(conn, organization_id)
    rec = await store.get_filing(conn, organization_id, filing_id, for_update=True)
    if rec is None:
        raise not_found(filing_id)
    errors: list[ValidationFailed] = [
        ValidationFailed(f"'{name}' cannot change: a filing's jurisdiction and period are fixed; prepare a new "
                         "filing instead.", pointer=f"/{name}")
        for name in other_fields
    ]
    if status is None:
        errors.append(RequiredField("status", pointer="/status", detail="Send 'status': 'filed' to file the return."))
    if errors:
        raise ValidationFailed.many(errors)  # type: ignore[arg-type]
    if not rules.check_filing_transition(rec.status, status):
        return rec
    return await _file(conn, organization_id, rec, rec.jurisdiction, rec.period_start, rec.period_end, ref=ref)


async def _file(
    conn: AsyncConnection,
    organization_id: str,
    prepared: store.FilingRecord | None,
    jurisdiction: str,
    start: date,
    end: date,
    *,
    ref: ReferenceData,
) -> store.FilingRecord:
    """File the return of ``jurisdiction`` over the period in the caller's one database transaction."""
    await lock_organization(conn, organization_id)  # serialises this organization's filings
    rules.check_period_ended(end, today())
    rules.check_no_overlap(
        jurisdiction, start, end, await store.filed_periods(conn, organization_id, jurisdiction),
        exclude_id=prepared.id if prepared else None,
    )
    ret = await _prepare(conn, organization_id, jurisdiction, start, end, for_update=True, ref=ref)
    records = await store.liable_transactions(conn, organization_id, start, end)  # locked just above
    filed = await store.filed_states(conn, organization_id, [r.id for r in records])
    currency = await filing_currency(conn, organization_id, jurisdiction, ref=ref)
    if prepared is not None:
        rules.check_unchanged(prepared.figures, return_to_json(ret), prepared.id)
    kind = ref.international_returns.get(jurisdiction)
    state = kind.filed_key if kind is not None else jurisdiction.removeprefix("US-ST-")
    on_return = set(ret.transaction_ids)
    rules.check_not_already_filed(jurisdiction, [(t, filed.get(t, set())) for t in ret.transaction_ids], key=state)
    now = utcnow()
    rec = prepared or _new_record(organization_id, jurisdiction, start, end, ret)
    rec = replace(rec, status="filed", filed_at=now, figures=return_to_json(ret))
    if prepared is None:
        await store.insert_filing(conn, rec)
    else:
        await store.update_filing(conn, rec)
    await store.record_filed(conn, organization_id, rec.id, state, ret.transaction_ids, ret.credits_carried_forward)
    outbox = [events.filing_row("filing.filed", rec, currency)]
    for txn in records:
        if txn.id in on_return:
            outbox.extend(await _move_to_filed(conn, txn, now))
    await events.record(conn, outbox)
    return rec


async def _move_to_filed(conn: AsyncConnection, txn: TransactionRecord, now: datetime) -> list[dict[str, Any]]:
    """Mark ``txn`` filed (when its status may move); the rows of its ``transaction.filed`` event."""
    if not check_transition(txn.status, "filed", by_filing=True):
        return []
    moved = replace(txn, status="filed", updated_at=now)
    await update_transaction(conn, moved, lines_changed=False, reference_changed=False)
    return events.transaction_rows(("transaction.filed",), moved)


# -- reads ---------------------------------------------------------------------------------------


async def get_filing(conn: AsyncConnection, organization_id: str, filing_id: str) -> store.FilingRecord:
    rec = await store.get_filing(conn, organization_id, filing_id)
    if rec is None:
        raise not_found(filing_id)
    return rec


async def _entries(conn: AsyncConnection, rec: store.FilingRecord, transaction_ids: Sequence[str], *,
                   ref: ReferenceData) -> list[ReturnEntry]:
    """The transactions ``transaction_ids`` of the return ``rec``, in that order, with their amounts on it."""
    found = await transactions_store.by_ids(conn, rec.organization_id, transaction_ids)
    kind = ref.international_returns.get(rec.jurisdiction)
    if kind is not None:
        return await _international_entries(conn, rec, kind, [t for t in map(found.get, transaction_ids) if t],
                                                ref=ref)
    currency = await returns_currency(conn, rec.organization_id, ref=ref)
    return [
        ReturnEntry(t.id, t.type, t.status, t.transaction_date.date(), t.currency, t.reference_id,
                    amounts_on_return(rec.jurisdiction, to_filing(t, currency=currency)))
        for t in (found.get(tid) for tid in transaction_ids) if t is not None
    ]


async def _international_entries(conn: AsyncConnection, rec: store.FilingRecord, kind: InternationalReturn,
                                 records: Sequence[TransactionRecord], *, ref: ReferenceData) -> list[ReturnEntry]:
    """:func:`_entries` of a return outside the US: each transaction's totals on it, converted as on the return."""
    currency = await filing_currency(conn, rec.organization_id, kind.jurisdiction, ref=ref)
    converted = await in_return_currency(conn, records, currency, kind.rate_day, rec.period_end)
    out = []
    for t in converted:
        alone = prepare_international_return(kind, rec.period_start, rec.period_end,
                                             [(to_filing(t, currency=currency), frozenset(t.registrations))])
        out.append(ReturnEntry(t.id, t.type, t.status, t.transaction_date.date(), t.currency, t.reference_id,
                               replace(alone.totals, jurisdiction_code=kind.jurisdiction)))
    return out


async def filing_transactions(
    conn: AsyncConnection, organization_id: str, filing_id: str, limit: int, starting_after: str | None, *,
    ref: ReferenceData,
) -> tuple[list[ReturnEntry], bool]:
    """A page of the transactions on a return, in return order (``starting_after``: the last
    ``transaction_id`` of the previous page; one not on the return is 422)."""
    rec = await get_filing(conn, organization_id, filing_id)
    ids = list(rec.figures["transaction_ids"])
    start = 0
    if starting_after:
        if starting_after not in ids:
            raise ValidationFailed(
                f"starting_after '{starting_after}' is not a transaction on the return {filing_id}: send the "
                "transaction_id of the last item of the previous page", parameter="starting_after",
                input=starting_after,
            )
        start = ids.index(starting_after) + 1
    return await _entries(conn, rec, ids[start:start + limit], ref=ref), start + limit < len(ids)


async def export_csv(conn: AsyncConnection, organization_id: str, filing_id: str, file: str | None = None, *,
                     ref: ReferenceData) -> str:
    """The return's CSV (``file`` absent or ``return``), or its transactions' (``transactions``)."""
    if file not in (None, "", *EXPORT_FILES):
        raise ValidationFailed(f"file must be one of {', '.join(EXPORT_FILES)}; got {file!r}", parameter="file",
                               input=file)
    rec = await get_filing(conn, organization_id, filing_id)
    currency = await filing_currency(conn, organization_id, rec.jurisdiction, ref=ref)
    if file != "transactions":
        return return_to_csv(return_from_json(rec), currency)
    ids = list(rec.figures["transaction_ids"])
    entries: list[ReturnEntry] = []
    for i in range(0, len(ids), 500):
        entries.extend(await _entries(conn, rec, ids[i:i + 500], ref=ref))
    return entries_to_csv(entries, currency)


def parse_date(value: str | None, parameter: str, *, default: date | None = None) -> date:
    if value is None or value == "":
        if default is not None:
            return default
        raise ValidationFailed(f"The query parameter '{parameter}' is required (YYYY-MM-DD).", parameter=parameter)
    try:
        if len(value) == 10:
            return check_report_date(date.fromisoformat(value), parameter=parameter)
    except ValueError:
        pass
    raise ValidationFailed(f"'{parameter}' must be a date in the form YYYY-MM-DD.", parameter=parameter, input=value)


def parse_range(date_from: str | None, date_to: str | None) -> tuple[date, date]:
    errors: list[ValidationFailed] = []
    out: list[date] = []
    for value, name in ((date_from, "from"), (date_to, "to")):
        try:
            out.append(parse_date(value, name))
        except ValidationFailed as exc:
            errors.append(exc)
    if errors:
        raise ValidationFailed.many(errors)  # type: ignore[arg-type]
    start, end = out
    if start > end:
        raise ValidationFailed(f"'from' ({start}) is after 'to' ({end}).", parameter="to", input=end.isoformat())
    return start, end


async def liability(conn: AsyncConnection, organization_id: str, start: date, end: date, *,
                    ref: ReferenceData) -> LiabilityReport:
    records = await store.liable_transactions(conn, organization_id, start, end)
    currency = await returns_currency(conn, organization_id, ref=ref)
    return replace(liability_report(start, end, [to_filing(r, currency=currency) for r in records]), currency=currency)


async def liability_international(conn: AsyncConnection, organization_id: str, start: date,
                                  end: date, *, ref: ReferenceData) -> list[tuple[str, Return]]:
    """(currency, figures) of each return outside the US that a transaction dated in the range
    reaches: as :func:`_international_return` prepares it, filed transactions included."""
    records = await store.liable_transactions(conn, organization_id, start, end)
    out = []
    for kind in ref.international_returns.values():
        ret = await _international_return(conn, organization_id, kind, start, end, records, {}, ref=ref)
        if ret.transaction_ids or ret.held_off:
            out.append((await filing_currency(conn, organization_id, kind.jurisdiction, ref=ref), ret))
    return out


def nexus_window_start(thresholds: NexusThresholds, as_of: date) -> date:
    """The earliest day any measurement period of ``thresholds`` in force on ``as_of`` reaches."""
    starts = [as_of]
    for t in thresholds_in_force(thresholds, as_of).values():
        if t.has_threshold and t.measurement_period is not None:
            starts += [start for start, _ in measurement_windows(t.measurement_period, as_of)]
    return min(starts)


async def nexus(conn: AsyncConnection, organization_id: str, as_of: date, *,
                ref: ReferenceData) -> tuple[NexusStateReport, ...]:
    records = await store.liable_transactions(conn, organization_id, nexus_window_start(ref.nexus_thresholds, as_of),
                                              as_of)
    currency = await returns_currency(conn, organization_id, ref=ref)
    txns = [to_filing(r, currency=currency) for r in records]
    counts = counts_marketplace(ref.nexus_thresholds, as_of)
    registered = {
        r.jurisdiction for r in await registrations_for(conn, organization_id)
        if r.jurisdiction.startswith("US-ST-") and len(r.jurisdiction) == 8 and r.covers(as_of)
    }
    return nexus_report(as_of, dated_sales_by_state(txns, counts), registered,
                        thresholds_in_force(ref.nexus_thresholds, as_of), converted=converted_by_state(txns, counts))


async def nexus_international(conn: AsyncConnection, organization_id: str,
                              as_of: date, *,
                              ref: ReferenceData) -> tuple[tuple[InternationalNexus, ...], dict[str, list[HeldOff]]]:
    """The thresholds outside the US on ``as_of``, each measured in its own currency at
    the reference rate of each sale's day (:func:`in_return_currency`); per currency, the
    transactions that could not be converted (no published rate)."""
    thresholds = in_force(ref.international_thresholds, as_of)
    records = await store.liable_transactions(conn, organization_id, earliest_start(thresholds, as_of), as_of)
    by_currency: dict[str, list[Any]] = {}
    held: dict[str, list[HeldOff]] = {}
    for currency in sorted({t.currency for t in thresholds}):
        codes = frozenset().union(*(t.rows for t in thresholds if t.currency == currency))
        relevant = [r for r in records if any(x.jurisdiction_code in codes for ln in r.lines for x in ln.result.taxes)]
        txns = [to_filing(r, currency=currency) for r in await in_return_currency(conn, relevant, currency,
                                                                                  "transaction_date", as_of)]
        by_currency[currency] = txns
        held[currency] = [HeldOff(t.id, t.held_off_reason, HELD_OFF_REASON_DETAILS.get(t.held_off_reason, ""))
                          for t in txns if t.held_off_reason]
    registered = {r.jurisdiction for r in await registrations_for(conn, organization_id) if r.covers(as_of)}
    return international_nexus(thresholds, as_of, by_currency, registered), held
