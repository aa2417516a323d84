"""Imported rate tables in SQL: ``rate_imports`` (one row per imported file,
with its report) and ``local_rates`` (its records, one row per
:class:`~levy.domain.tax.local_rates.LocalRecord`). ``zip_rates`` keeps the
per-ZIP rows of imports made before ``local_rates`` existed; they are read back
as estimated records. Reference data shared by every organization.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, date, datetime
from decimal import Decimal
from typing import Any

from sqlalchemy import func, insert, select
from sqlalchemy.ext.asyncio import AsyncConnection

from levy.domain.ids import new_id
from levy.domain.tax.local_rates import Component, LocalRecord, StreetRange, UnitRange
from levy.domain.tax.rates import ZipRateRow
from levy.store.tables.areas import local_rates, rate_imports, zip_rates

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
    report: dict[str, Any] | None = None


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
    records: Sequence[LocalRecord],
    report: Mapping[str, Any] | None = None,
    progress: Callable[[int], None] | None = None,
) -> str:
    """Record one imported file, its report (a JSON object) and its records, inside
    the caller's transaction (executemany in chunks of ``CHUNK``); the import id."""
    import_id = new_id("imp")
    await conn.execute(
        insert(rate_imports).values(
            id=import_id,
            format=format,
            source_file=source_file,
            sha256=sha256,
            effective_from=effective_from,
            effective_to=effective_to,
            row_count=len(records),
            imported_at=datetime.now(UTC),
            report=json.dumps(report, sort_keys=True, default=str) if report is not None else None,
        )
    )
    stmt = insert(local_rates)
    encoded: dict[tuple[Component, ...], str] = {}
    for start in range(0, len(records), CHUNK):
        chunk = records[start : start + CHUNK]
        await conn.execute(stmt, [_record_row(import_id, r, encoded) for r in chunk])
        if progress is not None:
            progress(len(chunk))
    return import_id


def _record_row(import_id: str, r: LocalRecord, encoded: dict[tuple[Component, ...], str]) -> dict[str, Any]:
    components = encoded.get(r.components)
    if components is None:
        components = encoded[r.components] = json.dumps(
            [{"type": c.type, "name": c.name, "rate": str(c.rate), "code": c.code, "authority": c.authority,
              **({"note": c.note} if c.note else {})}
             for c in r.components]
        )
    s = r.street
    return {
        "import_id": import_id,
        "state": r.state,
        "zip5": r.zip5,
        "plus4_low": r.plus4_low,
        "plus4_high": r.plus4_high,
        "street_low": s.low if s else None,
        "street_high": s.high if s else None,
        "street_parity": s.parity if s else None,
        "street_predir": s.predir if s else None,
        "street_name": s.street[:200] if s else None,
        "street_suffix": s.suffix if s else None,
        "street_postdir": s.postdir if s else None,
        "unit_abbr": s.unit.abbr if s and s.unit else None,
        "unit_low": s.unit.low if s and s.unit else None,
        "unit_high": s.unit.high if s and s.unit else None,
        "unit_parity": s.unit.parity if s and s.unit else None,
        "city": r.city[:200] if r.city else None,
        "county": r.county[:200] if r.county else None,
        "is_primary": r.primary,
        "unincorporated": r.unincorporated,
        "components": components,
        "effective_from": r.effective_from,
        "effective_to": r.effective_to,
        "source": r.source[:500],
        "source_kind": r.source_kind,
        "line": r.line,
        "scope": ",".join(r.scope) or None,
    }


async def list_imports(conn: AsyncConnection) -> list[RateImport]:
    rows = await conn.execute(select(rate_imports).order_by(rate_imports.c.id.desc()))
    return [
        RateImport(
            r.id, r.format, r.source_file, r.sha256, r.effective_from, r.effective_to, r.row_count, r.imported_at,
            json.loads(r.report) if r.report else None,
        )
        for r in rows
    ]


async def imports_marker(conn: AsyncConnection) -> tuple[int, str | None]:
    """(number of imports, newest import id): changes whenever an import is committed."""
    row = (await conn.execute(select(func.count(), func.max(rate_imports.c.id)).select_from(rate_imports))).one()
    return int(row[0]), row[1]


async def all_records(conn: AsyncConnection, *, address_level: bool = True) -> list[LocalRecord | ZipRateRow]:
    """Every imported record, oldest import first (the rate table lets a later
    import win a tie): the per-ZIP rows of imports made before ``local_rates``
    existed (read as estimated records by ``RateTable.build``), then the records.
    ``address_level=False``: without the ZIP+4 and street-range records (an
    address file holds them, :mod:`levy.store.address_file`)."""
    legacy = await conn.execute(
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
        ).order_by(zip_rates.c.import_id, zip_rates.c.id)
    )
    out: list[LocalRecord | ZipRateRow] = [ZipRateRow(*r) for r in legacy]
    # Streamed in chunks: the rows of a large import are never all in memory beside their records.
    query = select(local_rates)
    if not address_level:
        query = query.where(local_rates.c.street_name.is_(None), local_rates.c.plus4_low.is_(None))
    result = await conn.stream(
        query.order_by(local_rates.c.import_id, local_rates.c.id).execution_options(yield_per=CHUNK)
    )
    decode = _decoder()
    async for r in result:
        out.append(decode(r))
    return out


async def latest_import(conn: AsyncConnection, format: str, state: str) -> RateImport | None:
    """The newest import of ``format`` whose records are in ``state``."""
    for imp in await list_imports(conn):
        if imp.format == format and state in (imp.report or {}).get("states", ()):
            return imp
    return None


async def records_of(conn: AsyncConnection, import_id: str, state: str) -> list[LocalRecord]:
    """The records one import has in ``state``, in file order."""
    result = await conn.stream(
        select(local_rates).where(local_rates.c.import_id == import_id, local_rates.c.state == state)
        .order_by(local_rates.c.id).execution_options(yield_per=CHUNK)
    )
    decode = _decoder()
    return [decode(r) async for r in result]


def _decoder() -> Callable[[Any], LocalRecord]:
    """A function of a ``local_rates`` row to its LocalRecord, sharing equal values between rows."""
    decoded: dict[str, tuple[Component, ...]] = {}
    # One object per distinct value: the table keeps every record in memory, and
    # ZIPs, extensions, street parts, dates, sources and kinds repeat over them.
    seen: dict[object, Any] = {}

    def one(value: Any) -> Any:
        return seen.setdefault(value, value)

    def decode(r: Any) -> LocalRecord:
        components = decoded.get(r.components)
        if components is None:
            components = decoded[r.components] = tuple(
                Component(c["type"], c["name"], Decimal(c["rate"]), c["code"], c.get("authority", ""),
                          c.get("note", ""))
                for c in json.loads(r.components)
            )
        street = None
        if r.street_name is not None:
            street = StreetRange(
                r.street_low, r.street_high, one(r.street_parity), one(r.street_name),
                one(r.street_predir or ""), one(r.street_suffix or ""),
                one(r.street_postdir or ""),
                None if r.unit_low is None else one(UnitRange(r.unit_abbr or "", r.unit_low, r.unit_high, r.unit_parity)),
            )
        return LocalRecord(
            state=one(r.state),
            zip5=one(r.zip5),
            components=components,
            effective_from=one(r.effective_from),
            effective_to=one(r.effective_to),
            source=one(r.source),
            source_kind=one(r.source_kind),
            city=one(r.city),
            county=one(r.county),
            plus4_low=one(r.plus4_low),
            plus4_high=one(r.plus4_high),
            street=street,
            primary=r.is_primary,
            unincorporated=r.unincorporated,
            line=r.line,
            scope=one(tuple(r.scope.split(","))) if r.scope else (),
        )

    return decode
