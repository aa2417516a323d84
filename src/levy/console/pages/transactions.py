"""Transactions: the search (and its CSV export, every page) and a transaction's page."""

from __future__ import annotations

from typing import TYPE_CHECKING
from urllib.parse import urlencode

from levy.app.handlers.transactions import to_message as transaction_message
from levy.console.helpers import Signed, csv_download, plain
from levy.console.http import Request, Response
from levy.console.routing import Route, route
from levy.domain.errors import ValidationFailed
from levy.domain.pagination import page_request
from levy.domain.transactions.rules import STATUSES, TYPES, parse_search

if TYPE_CHECKING:
    from levy.console.app import Console

#: The search form's fields (``levy.domain.transactions.parse_search``'s arguments).
TRANSACTION_FILTERS = ("status", "type", "reference", "customer", "state", "date_from", "date_to")


def routes(c: Console) -> list[Route]:
    return [
        route("GET", "/transactions", c.transactions),
        route("GET", "/transactions/export.csv", c.transactions_export),
        route("GET", "/transactions/{transaction_id}", c.transaction),
    ]


def search_filters(req: Request) -> dict[str, str]:
    return {name: req.query.get(name, "").strip()[:255] for name in TRANSACTION_FILTERS}


class TransactionPages:
    async def transactions(self: Console, req: Request, signed: Signed) -> Response:
        filters = search_filters(req)
        after = req.query.get("after", "")[:64] or None
        count = 0
        try:
            search = parse_search(**filters)
            items, more, count = await self.service.search_transactions(signed.user.organization_id, search,
                                                                        page_request(50, after))
            error = ""
        except ValidationFailed as e:
            items, more, error = [], False, "; ".join(item.detail for item in e.items)
        kept = {k: v for k, v in filters.items() if v}
        next_query = urlencode({**kept, "after": items[-1]["id"]}) if more else ""
        return self._page(422 if error else 200, "transactions.html", signed, transactions=items, more=more,
                          count=count, first_page=after is None, filters=filters, error=error,
                          next_query=next_query, export_query=urlencode(kept), statuses=STATUSES, types=TYPES)

    async def transactions_export(self: Console, req: Request, signed: Signed) -> Response:
        """The transactions the list's filters find, every page, as a streamed CSV file."""
        try:
            search = parse_search(**search_filters(req))
        except ValidationFailed as e:
            return self._page(422, "error.html", signed, title="Cannot export",
                              detail="; ".join(item.detail for item in e.items))
        return csv_download("transactions.csv", self.service.transactions_csv(signed.user.organization_id, search))

    async def transaction(self: Console, req: Request, signed: Signed) -> Response:
        rec = await self.service.get_transaction(signed.user.organization_id, req.params["transaction_id"])
        # The stored customer each line matched (by line id; the API shows only its preset).
        customers = {line.id: line.customer_id for line in rec.lines if line.customer_id}
        return self._page(200, "transaction.html", signed, t=plain(transaction_message(rec)), customers=customers)
