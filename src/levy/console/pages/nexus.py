"""Nexus: each state's progress towards its economic nexus threshold."""

from __future__ import annotations

from decimal import Decimal
from typing import TYPE_CHECKING

from levy.console.helpers import Signed, plain
from levy.console.http import Request, Response
from levy.console.routing import Route, route
from levy.domain import nexus as nexus_rules
from levy.domain.errors import LevyError, NotFound, PermissionDenied
from levy.v1 import filings_pb2

if TYPE_CHECKING:
    from levy.console.app import Console


def routes(c: Console) -> list[Route]:
    return [route("GET", "/nexus", c.nexus)]


class NexusPages:
    async def nexus(self: Console, req: Request, signed: Signed) -> Response:
        request = filings_pb2.GetNexusReportRequest()
        as_of = req.query.get("as_of", "").strip()
        if as_of:
            request.as_of = as_of
        try:
            report = await self.call(signed, "levy.v1.FilingService.GetNexusReport", request)
        except LevyError as e:
            if isinstance(e, (NotFound, PermissionDenied)):
                raise
            return self._page(422, "error.html", signed, title="Cannot show nexus", detail=e.detail)
        states = [plain(s) for s in report.states]
        approaching = Decimal(report.approaching_share)
        for s in states:
            share = Decimal(s.get("threshold_share") or "0")
            s["percent"] = int(min(share * 100, Decimal(100)))
            s["percent_text"] = f"{share * 100:.0f} %"
            s["standing"] = nexus_rules.standing(share, exceeded=bool(s.get("exceeded")),
                                                 needs_registration=bool(s.get("needs_registration")),
                                                 approaching=approaching)
            s["period_label"] = nexus_rules.PERIOD_LABELS.get(s.get("measurement_period", ""), "")
            # The currencies of the counted sales that were converted to the filing currency.
            s["converted_currencies"] = sorted({c["currency"] for c in s.get("converted_transactions", ())})
        return self._page(200, "nexus.html", signed, as_of=report.as_of, states=states,
                          approaching=f"{approaching * 100:.0f} %")
