"""Daily reference exchange rates: imported by ``levy rates import`` (the ECB's euro
reference-rate CSV, :mod:`levy.ratefiles.ecb`), read when a transaction in another currency is
finalized without a rate of its own. Server-wide reference data, like the rate tables."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import date
from decimal import Decimal

from sqlalchemy import delete, insert, select
from sqlalchemy.ext.asyncio import AsyncConnection

from levy.domain.currency import cross_rate, lookup_window
from levy.ratefiles.ecb import BASE, ReferenceRate
from levy.store.tables.transactions import exchange_rates as t


async def import_rates(conn: AsyncConnection, rates: Sequence[ReferenceRate], source: str) -> int:
    """Store ``rates`` in the caller's transaction; a (date, base, quote) already stored is replaced."""
    days = sorted({r.on for r in rates})
    for i in range(0, len(days), 500):
        await conn.execute(delete(t).where(t.c.base_currency == BASE, t.c.rate_date.in_(days[i:i + 500])
                                           ).where(t.c.quote_currency.in_({r.quote for r in rates})))
    rows = [{"rate_date": r.on, "base_currency": r.base, "quote_currency": r.quote, "rate": r.rate,
             "source": source[:255]} for r in rates]
    for i in range(0, len(rows), 1000):
        await conn.execute(insert(t), rows[i:i + 1000])
    return len(rows)


async def reference_rate(conn: AsyncConnection, from_currency: str, to_currency: str,
                         on: date) -> tuple[Decimal, date] | None:
    """Units of ``to_currency`` per ``from_currency`` for a transaction dated ``on``: the latest
    publication in :func:`levy.domain.currency.lookup_window` quoting both (the base needs none)."""
    first, last = lookup_window(on)
    wanted = {from_currency, to_currency} - {BASE}
    rows = (await conn.execute(
        select(t.c.rate_date, t.c.quote_currency, t.c.rate).where(
            t.c.base_currency == BASE, t.c.rate_date >= first, t.c.rate_date <= last,
            t.c.quote_currency.in_(wanted),
        ).order_by(t.c.rate_date.desc())
    )).all()
    by_day: dict[date, dict[str, Decimal]] = {}
    for r in rows:
        by_day.setdefault(r.rate_date, {})[r.quote_currency] = Decimal(r.rate)
    for day in sorted(by_day, reverse=True):
        if wanted <= set(by_day[day]):
            rate = cross_rate(by_day[day], BASE, from_currency, to_currency)
            if rate is not None:
                return rate, day
    return None
