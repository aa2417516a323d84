"""Returns (prepare, show with its transactions, mark as filed, export) and the liability report
(by state and by month, and its CSV export)."""

from __future__ import annotations

from datetime import UTC, date, datetime
from typing import TYPE_CHECKING, Any
from urllib.parse import urlencode

from levy.app import exports
from levy.console.helpers import (
    Signed,
    attachment,
    bars,
    csv_download,
    errors_of,
    plain,
)
from levy.console.http import Request, Response, redirect
from levy.console.routing import Route, confirmed, route
from levy.domain.errors import LevyError, NotFound, PermissionDenied
from levy.domain.periods import calendar_months, trailing_months
from levy.v1 import filings_pb2

if TYPE_CHECKING:
    from levy.console.app import Console

#: Transactions per page of a return's page.
RETURN_TRANSACTIONS = 100
#: The most calendar months the liability page charts (one report call each).
MONTHS_CHARTED = 36


def routes(c: Console) -> list[Route]:
    return [
        route("GET", "/returns", c.returns),
        route("POST", "/returns", c.return_prepare, writes=True),
        route("GET", "/returns/liability", c.liability),
        route("GET", "/returns/liability/export.csv", c.liability_export),
        route("GET", "/returns/{filing_id}", c.return_detail),
        *confirmed("/returns/{filing_id}/file", c.return_file, c.confirm),
        route("GET", "/returns/{filing_id}/export", c.return_export),
    ]


def liability_request(req: Request) -> filings_pb2.GetLiabilityReportRequest:
    """The report's range from the query; the last 12 calendar months up to today (UTC) by default."""
    request = filings_pb2.GetLiabilityReportRequest()
    start, end = trailing_months(datetime.now(UTC).date())
    values = {"from": start.isoformat(), "to": end.isoformat()}
    for name in ("from", "to"):
        if req.query.get(name, "").strip():
            values[name] = req.query[name].strip()[:10]
        setattr(request, name, values[name])
    return request


class FilingPages:
    async def returns(self: Console, req: Request, signed: Signed, *, errors: dict[str, str] | None = None,
                      status: int = 200) -> Response:
        listing = await self.call(signed, "levy.v1.FilingService.ListFilings",
                                  filings_pb2.ListFilingsRequest(limit=100))
        return self._page(status, "returns.html", signed, filings=[plain(f) for f in listing.data],
                          errors=errors or {}, form=req.form)

    async def return_prepare(self: Console, req: Request, signed: Signed) -> Response:
        f = req.form
        filing = filings_pb2.Filing()
        for name in ("jurisdiction", "period_start", "period_end"):
            if f.get(name, "").strip():
                setattr(filing, name, f[name].strip())
        try:
            created = await self.audited(signed, "levy.v1.FilingService.CreateFiling",
                                         filings_pb2.CreateFilingRequest(filing=filing), "return.prepared", "",
                                         f"{filing.jurisdiction} {filing.period_start}..{filing.period_end}")
        except LevyError as e:
            if isinstance(e, (NotFound, PermissionDenied)):
                raise
            return await self.returns(req, signed, errors=errors_of(e), status=422)
        return redirect(self.url_for("return_detail", filing_id=created.id))

    async def return_detail(self: Console, req: Request, signed: Signed, *, error: str = "",
                            status: int = 200) -> Response:
        fid = req.params["filing_id"]
        filing = await self.call(signed, "levy.v1.FilingService.GetFiling", filings_pb2.GetFilingRequest(filing_id=fid))
        # The transactions on the return, a page of them, each linking to its own page.
        request = filings_pb2.ListFilingTransactionsRequest(filing_id=fid, limit=RETURN_TRANSACTIONS)
        if req.query.get("after"):
            request.starting_after = req.query["after"][:255]
        try:
            listing = await self.call(signed, "levy.v1.FilingService.ListFilingTransactions", request)
            entries, more = [plain(e) for e in listing.data], listing.has_more
        except LevyError as e:
            if isinstance(e, (NotFound, PermissionDenied)):
                raise
            entries, more, error, status = [], False, error or e.detail, 422
        next_query = urlencode({"after": entries[-1]["transaction_id"]}) if more else ""
        return self._page(status, "return.html", signed, f=plain(filing), error=error, entries=entries,
                          next_query=next_query)

    async def return_file(self: Console, req: Request, signed: Signed) -> Response:
        fid = req.params["filing_id"]
        try:
            await self.audited(signed, "levy.v1.FilingService.UpdateFiling",
                               filings_pb2.UpdateFilingRequest(filing_id=fid,
                                                               filing=filings_pb2.Filing(status="filed")),
                               "return.filed", fid)
        except LevyError as e:
            if isinstance(e, (NotFound, PermissionDenied)):
                raise
            return await self.return_detail(req, signed, error=e.detail, status=422)
        return redirect(self.url_for("return_detail", filing_id=fid))

    async def return_export(self: Console, req: Request, signed: Signed) -> Response:
        fid = req.params["filing_id"]
        request = filings_pb2.ExportFilingRequest(filing_id=fid)
        name = fid
        if req.query.get("file"):  # the second file: the return's transactions
            request.file = req.query["file"][:32]
            name = f"{fid}-{request.file}"
        body = await self.call(signed, "levy.v1.FilingService.ExportFiling", request)
        return attachment(body.data, body.content_type, f"{name}.csv")

    async def liability_export(self: Console, req: Request, signed: Signed) -> Response:
        """The liability report of the range as a CSV file (the API's figures, in major units)."""
        try:
            report = plain(await self.call(signed, "levy.v1.FilingService.GetLiabilityReport",
                                           liability_request(req)))
        except LevyError as e:
            if isinstance(e, (NotFound, PermissionDenied)):
                raise
            return self._page(422, "error.html", signed, title="Cannot export the report", detail=e.detail)
        return csv_download(f"liability-{report.get('from', '')}-{report.get('to', '')}.csv",
                            exports.liability_csv(report))

    async def liability(self: Console, req: Request, signed: Signed) -> Response:
        try:
            report = plain(await self.call(signed, "levy.v1.FilingService.GetLiabilityReport",
                                           liability_request(req)))
            months = await self._liability_by_month(signed, date.fromisoformat(report["from"]),
                                                    date.fromisoformat(report["to"]))
        except LevyError as e:
            if isinstance(e, (NotFound, PermissionDenied)):
                raise
            return self._page(422, "error.html", signed, title="Cannot show the report", detail=e.detail)
        states = report.get("state_totals", [])
        chart = bars([(s.get("jurisdiction_name") or s.get("jurisdiction", ""), s.get("filing_tax_amount"))
                      for s in states])
        month_chart = bars([(m["label"], m["amount"]) for m in months or []], pitch=16, bar=12)
        return self._page(200, "liability.html", signed, report=report, states=states, chart=chart,
                          months=months, month_chart=month_chart, months_charted=MONTHS_CHARTED)

    async def _liability_by_month(self: Console, signed: Signed, start: date,
                                  end: date) -> list[dict[str, Any]] | None:
        """Tax to file in each calendar month of [start, end] (the first and last clipped to
        the range): the API's liability report once per month, its state totals summed.
        None past :data:`MONTHS_CHARTED` months."""
        spans = calendar_months(start, end)
        if len(spans) > MONTHS_CHARTED:
            return None
        out = []
        for first, last in spans:
            request = filings_pb2.GetLiabilityReportRequest(to=last.isoformat())
            setattr(request, "from", first.isoformat())
            report = await self.call(signed, "levy.v1.FilingService.GetLiabilityReport", request)
            out.append({"label": first.strftime("%b %Y"), "month": first.strftime("%Y-%m"),
                        "from": first.isoformat(), "to": last.isoformat(),
                        "amount": sum(int(s.filing_tax_amount or 0) for s in report.state_totals)})
        return out
