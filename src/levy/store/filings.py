"""Filings in SQL (SQLAlchemy Core). Every query is scoped by ``organization_id``.

Filing a return runs in the caller's one database transaction: the wiring
(:mod:`levy.app.filings`) locks the organization's row first, so filings of one
organization are serialised (``SELECT ... FOR UPDATE`` on PostgreSQL; SQLite
write transactions are serialised by ``BEGIN IMMEDIATE``), then reads the
candidate transactions ``FOR UPDATE``. ``filing_transactions`` is unique on
``(transaction_id, state)``: a transaction is on one filed return per state.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import UTC, date, datetime, time, timedelta
from typing import Any

from sqlalchemy import insert, select, update
from sqlalchemy.ext.asyncio import AsyncConnection

from levy.domain.filing_rules import FiledPeriod
from levy.domain.transactions.records import TransactionRecord
from levy.store.tables.filings import filing_credits, filing_transactions, filings
from levy.store.tables.transactions import transactions as txn_t
from levy.store.transactions import _load as load_transaction_records


@dataclass(frozen=True, slots=True)
class FilingRecord:
    id: str
    organization_id: str
    jurisdiction: str
    period_start: date
    period_end: date
    status: str
    figures: dict[str, Any]
    transaction_count: int
    filing_tax_amount: int
    credits_carried_forward: int
    created_at: datetime
    filed_at: datetime | None


def _record(row: Any) -> FilingRecord:
    return FilingRecord(
        row.id, row.organization_id, row.jurisdiction, row.period_start, row.period_end, row.status,
        json.loads(row.figures), row.transaction_count, row.filing_tax_amount, row.credits_carried_forward,
        row.created_at, row.filed_at,
    )


def _values(rec: FilingRecord) -> dict[str, Any]:
    return {
        "id": rec.id, "organization_id": rec.organization_id, "jurisdiction": rec.jurisdiction,
        "period_start": rec.period_start, "period_end": rec.period_end, "status": rec.status,
        "figures": json.dumps(rec.figures, separators=(",", ":")), "transaction_count": rec.transaction_count,
        "filing_tax_amount": rec.filing_tax_amount, "credits_carried_forward": rec.credits_carried_forward,
        "created_at": rec.created_at, "filed_at": rec.filed_at,
    }


async def insert_filing(conn: AsyncConnection, rec: FilingRecord) -> None:
    await conn.execute(insert(filings).values(**_values(rec)))


async def update_filing(conn: AsyncConnection, rec: FilingRecord) -> None:
    values = _values(rec)
    for k in ("id", "organization_id", "created_at"):
        values.pop(k)
    await conn.execute(
        update(filings).where(filings.c.organization_id == rec.organization_id, filings.c.id == rec.id).values(**values)
    )


async def get_filing(
    conn: AsyncConnection, organization_id: str, filing_id: str, *, for_update: bool = False
) -> FilingRecord | None:
    q = select(filings).where(filings.c.organization_id == organization_id, filings.c.id == filing_id)
    if for_update:
        q = q.with_for_update()
    row = (await conn.execute(q)).first()
    return _record(row) if row else None


async def list_filings(
    conn: AsyncConnection, organization_id: str, limit: int, starting_after: str | None
) -> tuple[list[FilingRecord], bool]:
    q = select(filings).where(filings.c.organization_id == organization_id)
    if starting_after:
        q = q.where(filings.c.id < starting_after)
    rows = (await conn.execute(q.order_by(filings.c.id.desc()).limit(limit + 1))).all()
    return [_record(r) for r in rows[:limit]], len(rows) > limit


async def filed_periods(conn: AsyncConnection, organization_id: str, jurisdiction: str) -> list[FiledPeriod]:
    rows = await conn.execute(
        select(filings.c.id, filings.c.period_start, filings.c.period_end).where(
            filings.c.organization_id == organization_id,
            filings.c.jurisdiction == jurisdiction,
            filings.c.status == "filed",
        )
    )
    return [FiledPeriod(r.id, jurisdiction, r.period_start, r.period_end) for r in rows]


async def carried_credits(
    conn: AsyncConnection, organization_id: str, jurisdiction: str, before: date
) -> dict[str, int]:
    """Credits carried forward by the latest filed return of ``jurisdiction`` ending before ``before``."""
    latest = (await conn.execute(
        select(filings.c.id).where(
            filings.c.organization_id == organization_id,
            filings.c.jurisdiction == jurisdiction,
            filings.c.status == "filed",
            filings.c.period_end < before,
        ).order_by(filings.c.period_end.desc(), filings.c.id.desc()).limit(1)
    )).scalar()
    if latest is None:
        return {}
    rows = await conn.execute(
        select(filing_credits.c.jurisdiction_code, filing_credits.c.amount).where(
            filing_credits.c.organization_id == organization_id, filing_credits.c.filing_id == latest
        )
    )
    return {r.jurisdiction_code: int(r.amount) for r in rows}


async def filed_states(conn: AsyncConnection, organization_id: str, transaction_ids: Iterable[str]) -> dict[str, set[str]]:
    """Per transaction id, the states whose filed return includes it."""
    ids = list(transaction_ids)
    out: dict[str, set[str]] = {}
    for i in range(0, len(ids), 500):
        rows = await conn.execute(
            select(filing_transactions.c.transaction_id, filing_transactions.c.state).where(
                filing_transactions.c.organization_id == organization_id,
                filing_transactions.c.transaction_id.in_(ids[i:i + 500]),
            )
        )
        for r in rows:
            out.setdefault(r.transaction_id, set()).add(r.state)
    return out


def _midnight(d: date) -> datetime:
    return datetime.combine(d, time(0), tzinfo=UTC)


async def liable_transactions(
    conn: AsyncConnection, organization_id: str, date_from: date, date_to: date, *, for_update: bool = False
) -> list[TransactionRecord]:
    """Finalized and filed transactions dated (UTC) in ``[date_from, date_to]``, oldest first."""
    q = select(txn_t).where(
        txn_t.c.organization_id == organization_id,
        txn_t.c.status.in_(("finalized", "filed")),
        txn_t.c.transaction_date >= _midnight(date_from),
        txn_t.c.transaction_date < _midnight(date_to + timedelta(days=1)),
    ).order_by(txn_t.c.transaction_date, txn_t.c.id)
    if for_update:
        q = q.with_for_update()
    rows = (await conn.execute(q)).all()
    out: list[TransactionRecord] = []
    for i in range(0, len(rows), 500):
        out.extend(await load_transaction_records(conn, organization_id, rows[i:i + 500]))
    return out


async def record_filed(
    conn: AsyncConnection,
    organization_id: str,
    filing_id: str,
    state: str,
    transaction_ids: Iterable[str],
    credits_forward: Mapping[str, int],
) -> None:
    """The filed return's transactions (unique per state) and the credits it carries forward."""
    rows = [{"filing_id": filing_id, "transaction_id": t, "state": state, "organization_id": organization_id}
            for t in transaction_ids]
    if rows:
        await conn.execute(insert(filing_transactions), rows)
    credits = [{"filing_id": filing_id, "organization_id": organization_id, "jurisdiction_code": c, "amount": a}
               for c, a in credits_forward.items() if a]
    if credits:
        await conn.execute(insert(filing_credits), credits)
