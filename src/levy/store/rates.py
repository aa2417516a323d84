"""Imported rate tables in SQL: ``rate_imports`` (one row per imported file) and
``zip_rates`` (its per-ZIP rows). Reference data shared by every organization.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, date, datetime

from sqlalchemy import func, insert, select
from sqlalchemy.ext.asyncio import AsyncConnection

from levy.domain.ids import new_id
from levy.domain.tax.rates import ZipRateRow
from levy.store.tables.areas import rate_imports, zip_rates

# Rows per executemany batch (also the progress bar's step).
CHUNK = 5000


@dataclass(frozen=True, slots=True)
class RateImport:
    id: str
    format: str
    source_file: str
    sha256: str
    effective_from: date
    effective_to: date | None
    row_count: int
    imported_at: datetime


async def imported_hashes(conn: AsyncConnection, hashes: Sequence[str]) -> set[str]:
    if not hashes:
        return set()
    rows = await conn.execute(select(rate_imports.c.sha256).where(rate_imports.c.sha256.in_(list(hashes))))
    return {r.sha256 for r in rows}


async def add_import(
    conn: AsyncConnection,
    *,
    format: str,
    source_file: str,
    sha256: str,
    effective_from: date,
    effective_to: date | None,
    rows: Sequence[ZipRateRow],
    progress: Callable[[int], None] | None = None,
) -> str:
    """Record one imported file and insert its rows (inside the caller's transaction)."""
    import_id = new_id("imp")
    await conn.execute(
        insert(rate_imports).values(
            id=import_id,
            format=format,
            source_file=source_file,
            sha256=sha256,
            effective_from=effective_from,
            effective_to=effective_to,
            row_count=len(rows),
            imported_at=datetime.now(UTC),
        )
    )
    stmt = insert(zip_rates)
    for start in range(0, len(rows), CHUNK):
        chunk = rows[start : start + CHUNK]
        await conn.execute(
            stmt,
            [
                {
                    "import_id": import_id,
                    "state": r.state,
                    "zip5": r.zip5,
                    "region_name": r.region_name[:200],
                    "state_rate": r.state_rate,
                    "county_rate": r.county_rate,
                    "city_rate": r.city_rate,
                    "special_rate": r.special_rate,
                    "effective_from": r.effective_from,
                    "effective_to": r.effective_to,
                    "source": r.source[:500],
                    "line": r.line,
                }
                for r in chunk
            ],
        )
        if progress is not None:
            progress(len(chunk))
    return import_id


async def list_imports(conn: AsyncConnection) -> list[RateImport]:
    rows = await conn.execute(select(rate_imports).order_by(rate_imports.c.id.desc()))
    return [
        RateImport(r.id, r.format, r.source_file, r.sha256, r.effective_from, r.effective_to, r.row_count, r.imported_at)
        for r in rows
    ]


async def imports_marker(conn: AsyncConnection) -> tuple[int, str | None]:
    """(number of imports, newest import id): changes whenever an import is committed."""
    row = (await conn.execute(select(func.count(), func.max(rate_imports.c.id)).select_from(rate_imports))).one()
    return int(row[0]), row[1]


async def all_zip_rows(conn: AsyncConnection) -> list[ZipRateRow]:
    """Every imported row, newest import first: for the same ZIP and start date the newest import wins
    (RateTable keeps the first period it sees among periods starting the same day)."""
    result = await conn.execute(
        select(
            zip_rates.c.state,
            zip_rates.c.zip5,
            zip_rates.c.region_name,
            zip_rates.c.state_rate,
            zip_rates.c.county_rate,
            zip_rates.c.city_rate,
            zip_rates.c.special_rate,
            zip_rates.c.effective_from,
            zip_rates.c.effective_to,
            zip_rates.c.source,
            zip_rates.c.line,
        ).order_by(zip_rates.c.import_id.desc(), zip_rates.c.id)
    )
    return [ZipRateRow(*r) for r in result]
