"""The console's CSV exports, streamed: the application core pages through the store
(a short read transaction a page, so an export of any size holds no connection while the client
reads) and formats each row with :mod:`levy.domain.exports`.

An export of many pages is not one snapshot: a transaction written while it runs may or may not
be in it (as when paging the list by hand).
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Sequence
from contextlib import AbstractAsyncContextManager
from typing import Any

from sqlalchemy.ext.asyncio import AsyncConnection

from levy.domain.exports import (
    CUSTOMER_COLUMNS,
    LIABILITY_COLUMNS,
    TRANSACTION_COLUMNS,
    csv_line,
    customer_row,
    liability_rows,
    summarize,
    transaction_row,
)
from levy.domain.transactions.records import TransactionRecord
from levy.domain.transactions.rules import TransactionSearch
from levy.store import transactions as store
from levy.store.customers import SqlCustomers

Uow = Callable[[], AbstractAsyncContextManager[AsyncConnection]]

#: Rows read per page (one read transaction each).
PAGE = 500


async def transaction_summaries(conn: AsyncConnection, org: str,
                                records: Sequence[TransactionRecord]) -> list[dict[str, Any]]:
    """:func:`levy.domain.exports.summarize` of each record, their customers read in one query."""
    ids = sorted({ln.customer_id for r in records for ln in r.lines if ln.customer_id})
    customers = await SqlCustomers(conn).by_ids(org, ids)
    return [summarize(r, customers) for r in records]


async def count_transactions(conn: AsyncConnection, org: str, search: TransactionSearch) -> int:
    """How many transactions the console's search finds."""
    return await store.count_transactions(conn, org, search)


async def transactions_csv(uow: Uow, org: str, search: TransactionSearch) -> AsyncIterator[bytes]:
    """Every transaction the search finds, newest first by date, as CSV lines."""
    yield csv_line(TRANSACTION_COLUMNS)
    after: str | None = None
    while True:
        async with uow() as conn:
            records, more = await store.search_transactions(conn, org, search, PAGE, after)
            rows = await transaction_summaries(conn, org, records)
        for row in rows:
            yield csv_line(transaction_row(row))
        if not more or not records:
            return
        after = records[-1].id


async def customers_csv(uow: Uow, org: str, text: str, *, deleted: bool) -> AsyncIterator[bytes]:
    """The customers the console's customer search finds (active or deleted), newest first."""
    yield csv_line(CUSTOMER_COLUMNS)
    after: str | None = None
    while True:
        async with uow() as conn:
            items, more = await SqlCustomers(conn).search(org, text.strip(), deleted=deleted, limit=PAGE,
                                                          starting_after=after)
        for c in items:
            yield csv_line(customer_row(c))
        if not more or not items:
            return
        after = items[-1].id


async def liability_csv(report: dict[str, Any]) -> AsyncIterator[bytes]:
    """The liability report (the API's, as a dict) as CSV lines."""
    yield csv_line(LIABILITY_COLUMNS)
    for row in liability_rows(report):
        yield csv_line(row)
