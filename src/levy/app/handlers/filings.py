"""Filing, returns, liability reports and nexus (admin keys): thin
adapters over :mod:`levy.app.filings`. See docs/filing.md."""

from __future__ import annotations

from collections.abc import Iterable
from datetime import date
from decimal import Decimal
from typing import Any

from google.api import httpbody_pb2

from levy.app import filings as service
from levy.app.context import CallContext
from levy.app.handlers.messages import optional, page_of, present_fields
from levy.app.registry import handles
from levy.domain import filing as model
from levy.domain.filing_transactions import ReturnEntry
from levy.domain.nexus_international import InternationalNexus
from levy.domain.nexus_report import NexusStateReport
from levy.domain.settings import DEFAULT_APPROACHING_SHARE
from levy.store.filings import FilingRecord
from levy.v1 import filings_pb2 as pb

_FILING_FIELDS = ("jurisdiction", "period_start", "period_end", "status")


def totals_message(t: model.JurisdictionTotals, out: pb.JurisdictionTotals | None = None) -> pb.JurisdictionTotals:
    msg = out if out is not None else pb.JurisdictionTotals()
    e = t.exempt_sales
    msg.jurisdiction = t.jurisdiction_code
    msg.jurisdiction_name = t.jurisdiction_name
    msg.jurisdiction_type = t.jurisdiction_type
    for name, value in (
        ("gross_sales", t.gross_sales), ("discounts", t.discounts),
        ("exempt_sales_certificate", e.exemption_certificate), ("exempt_sales_non_taxable", e.non_taxable_product),
        ("exempt_sales_unregistered", e.unregistered), ("taxable_sales", t.taxable_sales),
        ("tax_calculated", t.tax_calculated), ("tax_provided", t.tax_provided),
        ("filing_tax_amount", t.filing_tax_amount), ("tax_only_allocated", t.tax_only_tax),
        ("sales_filing_tax", t.sales_filing_tax), ("credits_filing_tax", t.credits_filing_tax),
        ("carried_credits_applied", t.carried_credits_applied), ("credits_carried_forward", t.credits_carried_forward),
    ):
        setattr(msg, name, str(value))
    if t.tax_rate is not None:  # returns outside the US
        msg.tax_rate = t.tax_rate
    if t.tax_type is not None:
        msg.tax_type = t.tax_type
    return msg


def _held(items: Iterable[model.HeldOff], out: Any) -> None:
    seen: set[str] = set()
    for h in items:
        if h.transaction_id not in seen:
            seen.add(h.transaction_id)
            out.add(transaction_id=h.transaction_id, reason=h.reason, detail=h.detail)


def _tax_only(items: Iterable[model.TaxOnlyEntry], out: Any) -> None:
    for e in items:
        out.add(transaction_id=e.transaction_id, jurisdiction=e.jurisdiction_code, tax_amount=str(e.amount))


def _marketplace(items: Iterable[model.MarketplaceEntry], out: Any) -> None:
    for m in items:
        out.add(transaction_id=m.transaction_id, marketplace_facilitator=m.marketplace_facilitator,
                gross_sales=str(m.gross_sales), tax_amount=str(m.tax_amount))


def _converted(items: Iterable[model.ConvertedEntry], out: Any) -> None:
    for c in items:
        out.add(transaction_id=c.transaction_id, currency=c.currency, exchange_rate=c.exchange_rate,
                exchange_rate_date=c.exchange_rate_date.isoformat() if c.exchange_rate_date else "",
                original_gross_sales=str(c.original_gross_sales), gross_sales=str(c.gross_sales))


def filing_message(rec: FilingRecord, currency: str) -> pb.Filing:
    """``rec`` as the API shows it; ``currency``: the return's (the organization's filing currency)."""
    ret = service.return_from_json(rec)
    msg = pb.Filing(
        id=rec.id, jurisdiction=rec.jurisdiction, period_start=rec.period_start.isoformat(),
        period_end=rec.period_end.isoformat(), status=rec.status, filing_tax_amount=str(rec.filing_tax_amount),
        credits_carried_forward=str(rec.credits_carried_forward), transaction_count=rec.transaction_count,
    )
    for t in ret.jurisdictions:
        totals_message(t, msg.jurisdictions.add())
    totals_message(ret.totals, msg.totals)
    _held(ret.held_off, msg.held_transactions)
    _tax_only(ret.tax_only_allocations, msg.tax_only_allocations)
    msg.currency = currency
    _marketplace(ret.marketplace, msg.marketplace_transactions)
    _converted(ret.converted, msg.converted_transactions)
    msg.created_at.FromDatetime(rec.created_at)
    if rec.filed_at is not None:
        msg.filed_at.FromDatetime(rec.filed_at)
    return msg


@handles("levy.v1.FilingService.CreateFiling")
async def create_filing(req: pb.CreateFilingRequest, ctx: CallContext) -> pb.Filing:
    f = req.filing
    async with ctx.uow(write=True) as conn:
        rec = await service.create_filing(
            conn, ctx.organization_id, optional(f, "jurisdiction"), optional(f, "period_start"), optional(f, "period_end"),
            optional(f, "status"), ref=ctx.services.reference,
        )
        ctx.created(rec.id)
        currency = await service.filing_currency(conn, ctx.organization_id, rec.jurisdiction,
                                                 ref=ctx.services.reference)
    return filing_message(rec, currency)


@handles("levy.v1.FilingService.UpdateFiling")
async def update_filing(req: pb.UpdateFilingRequest, ctx: CallContext) -> pb.Filing:
    f = req.filing
    present = present_fields(f, req.update_mask.paths, _FILING_FIELDS, "filing", listed=["status"])
    others = [n for n in present if n != "status"]
    async with ctx.uow(write=True) as conn:
        rec = await service.update_filing(conn, ctx.organization_id, req.filing_id, optional(f, "status"), others,
                                          ref=ctx.services.reference)
        currency = await service.filing_currency(conn, ctx.organization_id, rec.jurisdiction,
                                                 ref=ctx.services.reference)
    return filing_message(rec, currency)


@handles("levy.v1.FilingService.GetFiling")
async def get_filing(req: pb.GetFilingRequest, ctx: CallContext) -> pb.Filing:
    async with ctx.uow() as conn:
        rec = await service.get_filing(conn, ctx.organization_id, req.filing_id)
        currency = await service.filing_currency(conn, ctx.organization_id, rec.jurisdiction,
                                                 ref=ctx.services.reference)
        return filing_message(rec, currency)


@handles("levy.v1.FilingService.ListFilings")
async def list_filings(req: pb.ListFilingsRequest, ctx: CallContext) -> pb.ListFilingsResponse:
    page = page_of(req)
    async with ctx.uow() as conn:
        records, has_more = await service.store.list_filings(conn, ctx.organization_id, page.limit, page.starting_after)
        currencies = {j: await service.filing_currency(conn, ctx.organization_id, j, ref=ctx.services.reference)
                      for j in {r.jurisdiction for r in records}}
    return pb.ListFilingsResponse(data=[filing_message(r, currencies[r.jurisdiction]) for r in records],
                                  has_more=has_more)


def entry_message(e: ReturnEntry, out: pb.ReturnTransaction) -> pb.ReturnTransaction:
    out.transaction_id, out.type, out.status = e.transaction_id, e.type, e.status
    out.transaction_date, out.currency = e.transaction_date.isoformat(), e.currency
    if e.reference_id is not None:
        out.reference_id = e.reference_id
    totals_message(e.amounts, out.amounts)
    return out


@handles("levy.v1.FilingService.ListFilingTransactions")
async def list_filing_transactions(req: pb.ListFilingTransactionsRequest,
                                   ctx: CallContext) -> pb.ListFilingTransactionsResponse:
    page = page_of(req)
    async with ctx.uow() as conn:
        entries, has_more = await service.filing_transactions(conn, ctx.organization_id, req.filing_id, page.limit,
                                                              page.starting_after, ref=ctx.services.reference)
    msg = pb.ListFilingTransactionsResponse(has_more=has_more)
    for e in entries:
        entry_message(e, msg.data.add())
    return msg


@handles("levy.v1.FilingService.ExportFiling")
async def export_filing(req: pb.ExportFilingRequest, ctx: CallContext) -> httpbody_pb2.HttpBody:
    async with ctx.uow() as conn:
        text = await service.export_csv(conn, ctx.organization_id, req.filing_id, optional(req, "file"),
                                        ref=ctx.services.reference)
    return httpbody_pb2.HttpBody(content_type="text/csv; charset=utf-8", data=text.encode())


@handles("levy.v1.FilingService.GetLiabilityReport")
async def get_liability_report(req: pb.GetLiabilityReportRequest, ctx: CallContext) -> pb.LiabilityReport:
    start, end = service.parse_range(optional(req, "from"), optional(req, "to"))
    async with ctx.uow() as conn:
        report = await service.liability(conn, ctx.organization_id, start, end, ref=ctx.services.reference)
        international = await service.liability_international(conn, ctx.organization_id, start, end,
                                                              ref=ctx.services.reference)
    return liability_message(report, international)


def liability_message(report: model.LiabilityReport, international: Iterable[tuple[str, model.Return]] = ()) -> pb.LiabilityReport:
    """The report; ``international``: (currency, figures) of the returns outside the US."""
    msg = pb.LiabilityReport(to=report.date_to.isoformat())
    setattr(msg, "from", report.date_from.isoformat())
    held: list[model.HeldOff] = []
    for s in report.states:
        for t in s.jurisdictions:
            totals_message(t, msg.jurisdictions.add())
        out = totals_message(s.totals, msg.state_totals.add())
        out.jurisdiction = s.state_code
        held.extend(s.held_off)
        _tax_only(s.tax_only_allocations, msg.tax_only_allocations)
        _marketplace(s.marketplace, msg.marketplace_transactions)
        _converted(s.converted, msg.converted_transactions)
    _held(held, msg.held_transactions)
    msg.currency = report.currency
    for currency, ret in international:
        out = msg.international.add(jurisdiction=ret.state_code, currency=currency)
        for t in ret.jurisdictions:
            totals_message(t, out.jurisdictions.add())
        totals_message(ret.totals, out.totals)
        _held(ret.held_off, out.held_transactions)
        _converted(ret.converted, out.converted_transactions)
    return msg


@handles("levy.v1.FilingService.GetNexusReport")
async def get_nexus_report(req: pb.GetNexusReportRequest, ctx: CallContext) -> pb.NexusReport:
    as_of: date = service.parse_date(optional(req, "as_of"), "as_of", default=service.today())
    async with ctx.uow() as conn:
        rows = await service.nexus(conn, ctx.organization_id, as_of, ref=ctx.services.reference)
        international = await service.nexus_international(conn, ctx.organization_id, as_of, ref=ctx.services.reference)
        share = await service.approaching_share(conn, ctx.organization_id)
    return nexus_message(as_of, rows, international, share)


def _international_nexus(found: tuple[tuple[InternationalNexus, ...], dict[str, list[model.HeldOff]]],
                         msg: pb.NexusReport) -> None:
    """The thresholds outside the US into ``msg.international``."""
    international, held = found
    for n in international:
        t = n.threshold
        out = msg.international.add(
            jurisdiction=t.jurisdiction, name=t.name, currency=t.currency, sales_amount=str(n.sales),
            transaction_count=n.transactions, measurement_period=t.measurement_period, crossed_when=t.crossed_when,
            period_start=n.period_start.isoformat(), period_end=n.period_end.isoformat(), exceeded=n.exceeded,
            is_registered=n.registered, needs_registration=n.needs_registration, threshold_source=t.source,
        )
        if t.sales_threshold is not None:
            out.sales_threshold = str(t.sales_threshold)
        if n.share is not None:
            out.threshold_share = str(n.share)
        _held(held.get(t.currency, ()), out.held_transactions)


def nexus_message(as_of: date, rows: Iterable[NexusStateReport],
                  international: tuple[tuple[InternationalNexus, ...], dict[str, list[model.HeldOff]]] | None = None,
                  approaching_share: Decimal = DEFAULT_APPROACHING_SHARE) -> pb.NexusReport:
    msg = pb.NexusReport(as_of=as_of.isoformat(), approaching_share=str(approaching_share))
    if international is not None:
        _international_nexus(international, msg)
    for r in rows:
        msg.states.append(nexus_state_message(r))
    return msg


def nexus_state_message(r: NexusStateReport) -> pb.NexusState:
    """One state's line of ``GET /nexus`` (also the object of a ``nexus.*`` event)."""
    s = pb.NexusState(
        state=r.state, sales_amount=str(r.sales), transaction_count=r.transactions, rule=str(r.rule),
        measurement_period=str(r.measurement_period), threshold_share=str(r.share), exceeded=r.exceeded,
        is_registered=r.registered, period_start=r.period_start.isoformat(), period_end=r.period_end.isoformat(),
        threshold_source=r.threshold_source, needs_registration=r.needs_registration,
    )
    if r.sales_threshold is not None:
        s.sales_threshold = str(r.sales_threshold)
    if r.transaction_threshold is not None:
        s.transaction_threshold = r.transaction_threshold
    if r.crossed_on is not None:
        s.crossed_on = r.crossed_on.isoformat()
    s.converted_transaction_count = len(r.converted)
    _converted(r.converted, s.converted_transactions)
    return s
