"""Imported rate tables in SQL: ``rate_imports`` (one row per imported file,
with its report), ``local_rates`` (its ZIP-level and place-wide records, one row per
:class:`~levy.domain.tax.local_rates.LocalRecord`) and ``address_blocks`` (its
address-level records, ZIP+4 and street ranges, compressed in blocks:
:class:`AddressBlock`). ``zip_rates`` keeps the per-ZIP rows of imports made before
``local_rates`` existed; they are read back as estimated records. Reference data
shared by every organization.
"""

from __future__ import annotations

import asyncio
import json
import zlib
from collections import namedtuple
from collections.abc import AsyncIterator, Awaitable, Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, date, datetime
from decimal import Decimal
from typing import Any, cast

from sqlalchemy import exists, func, insert, select
from sqlalchemy.ext.asyncio import AsyncConnection

from levy.domain.ids import new_id
from levy.domain.tax.local_rates import Component, LocalRecord, StreetRange, UnitRange
from levy.domain.tax.rate_table import ZipRateRow
from levy.store.rows import _as_sqlalchemy_error
from levy.store.tables.areas import address_blocks, local_rates, rate_imports, zip_rates

# Rows per executemany batch through SQLAlchemy, and per bulk batch of the driver (also the progress bar's step).
CHUNK = 5000
BULK = 50_000


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
    also: Callable[[AddressBlock], Awaitable[None]] | None = None,
) -> str:
    """Record one imported file, its report (a JSON object) and its records, inside
    the caller's transaction; the import id. ZIP-level and place-wide records are rows of
    ``local_rates`` (:func:`insert_records`), address-level ones go to ``address_blocks``
    (:class:`AddressBlock`, one per batch of ``BULK`` records). ``also(block)``: each
    block is handed to it while the database takes the batch (an address file's
    :class:`~levy.store.address_file.Build`)."""
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
    encoded: dict[tuple[Component, ...], str] = {}
    seq = 0
    for start in range(0, len(records), BULK):  # one batch at a time in memory, beside the records
        batch = records[start : start + BULK]
        rows = [_record_values(import_id, r, encoded) for r in batch if not is_address_level(r)]
        block = AddressBlock.of([r for r in batch if is_address_level(r)], encoded)
        if not block.rows:
            await insert_records(conn, rows)
        else:  # the block compressed and handed over while the database takes the rows; one statement at a time
            data, *_ = await asyncio.gather(
                asyncio.to_thread(block.encode), insert_records(conn, rows), *([also(block)] if also else []))
            seq += 1
            await conn.execute(
                insert(address_blocks).values(import_id=import_id, seq=seq, records=len(block.rows), data=data))
        if progress is not None:
            progress(len(batch))
    return import_id


def is_address_level(r: LocalRecord) -> bool:
    """A ZIP+4 range or a street range (stored in ``address_blocks``, not ``local_rates``)."""
    return r.plus4_low is not None or r.street is not None


# The fields of an address block's rows: the columns of ``local_rates`` but its id and import id.
BLOCK_COLUMNS = tuple(c.name for c in local_rates.columns if c.name not in ("id", "import_id"))
_B_COMPONENTS, _B_FROM, _B_TO, _B_SOURCE, _B_PRIMARY, _B_UNINCORPORATED = (BLOCK_COLUMNS.index(c) for c in (
    "components", "effective_from", "effective_to", "source", "is_primary", "unincorporated"))
BLOCK_FORMAT = 1


@dataclass(frozen=True, slots=True)
class AddressBlock:
    """Address-level records of one import, as stored in a row of ``address_blocks``: each row a
    list of :data:`BLOCK_COLUMNS`' values, its components and source as indexes into
    ``components`` (JSON texts, as ``local_rates`` stores them) and ``sources``, its dates as
    ``YYYY-MM-DD`` text, its booleans as 0 or 1. Stored as zlib-compressed JSON (level 1).

    Why not a ``local_rates`` row each: SQLite's own insert of the rows of a million boundary
    records took 15.6 s of CPU and 345 MB (docs/performance.md), more than the whole import may take
    at 50,000 records a second; the blocks of a million take about 8 MB. They are read whole, to
    build an address file or compare two quarters, never searched."""

    components: list[str]
    sources: list[str]
    rows: list[list[Any]]

    @classmethod
    def of(cls, records: Iterable[LocalRecord], encoded: dict[tuple[Component, ...], str]) -> AddressBlock:
        components: dict[str, int] = {}
        sources: dict[str, int] = {}
        days: dict[date, str] = {}
        rows = []
        for r in records:
            text = encoded.get(r.components)
            if text is None:
                text = encoded[r.components] = _components_json(r.components)
            comp = components.get(text)
            if comp is None:
                comp = components[text] = len(components)
            src = sources.get(r.source)
            if src is None:
                src = sources[r.source] = len(sources)
            ef = days.get(r.effective_from)
            if ef is None:
                ef = days[r.effective_from] = r.effective_from.isoformat()
            et = None
            if r.effective_to is not None:
                et = days.get(r.effective_to)
                if et is None:
                    et = days[r.effective_to] = r.effective_to.isoformat()
            s, u = r.street, r.street.unit if r.street else None
            rows.append([
                r.state, r.zip5, r.plus4_low, r.plus4_high,
                s.low if s else None, s.high if s else None, s.parity if s else None, s.predir if s else None,
                s.street[:200] if s else None, s.suffix if s else None, s.postdir if s else None,
                u.abbr if u else None, u.low if u else None, u.high if u else None, u.parity if u else None,
                r.city[:200] if r.city else None, r.county[:200] if r.county else None, int(r.primary),
                int(r.unincorporated), comp, ef, et, src, r.source_kind, r.line, ",".join(r.scope) or None,
            ])
        return cls(list(components), [text[:500] for text in sources], rows)

    def encode(self) -> bytes:
        text = json.dumps({"format": BLOCK_FORMAT, "components": self.components, "sources": self.sources,
                           "rows": self.rows}, separators=(",", ":"))
        return zlib.compress(text.encode(), 1)

    @classmethod
    def decode(cls, data: bytes) -> AddressBlock:
        value = json.loads(zlib.decompress(data))
        if value.get("format") != BLOCK_FORMAT:
            raise ValueError(f"address block of format {value.get('format')!r}; this Levy reads {BLOCK_FORMAT}")
        return cls(value["components"], value["sources"], value["rows"])

    def columns(self, import_id: str) -> Iterable[Any]:
        """The rows as ``local_rates`` rows would be read (attributes named by its columns; dates as
        ``date``, booleans as ``bool``): what :func:`_decoder` takes."""
        days: dict[str, date] = {}
        for row in self.rows:
            values = list(row)
            values[_B_COMPONENTS] = self.components[row[_B_COMPONENTS]]
            values[_B_SOURCE] = self.sources[row[_B_SOURCE]]
            for i in (_B_FROM, _B_TO):
                if row[i] is not None:
                    day = days.get(row[i])
                    if day is None:
                        day = days[row[i]] = date.fromisoformat(row[i])
                    values[i] = day
            values[_B_PRIMARY], values[_B_UNINCORPORATED] = bool(row[_B_PRIMARY]), bool(row[_B_UNINCORPORATED])
            yield _Row(None, import_id, *values)  # type: ignore[call-arg]


# A row of ``local_rates`` made from a block's (attribute access by column name, as :func:`_decoder` reads).
_Row = namedtuple("_Row", [c.name for c in local_rates.columns])  # type: ignore[misc]


async def address_blocks_of(conn: AsyncConnection,
                            import_id: str | None = None) -> AsyncIterator[tuple[str, AddressBlock]]:
    """(import id, block) of the address blocks ``conn`` sees (of one import, or of all in import
    order), decoded one at a time."""
    query = select(address_blocks.c.import_id, address_blocks.c.data).order_by(
        address_blocks.c.import_id, address_blocks.c.seq)
    if import_id is not None:
        query = query.where(address_blocks.c.import_id == import_id)
    result = await conn.stream(query.execution_options(yield_per=1))
    async for row in result:
        yield row.import_id, await asyncio.to_thread(AddressBlock.decode, row.data)


async def has_address_level(conn: AsyncConnection) -> bool:
    """Whether any import holds address-level records."""
    return bool((await conn.execute(select(exists().select_from(address_blocks)))).scalar())


def _components_json(components: Sequence[Component]) -> str:
    return json.dumps(
        [{"type": c.type, "name": c.name, "rate": str(c.rate), "code": c.code, "authority": c.authority,
          **({"note": c.note} if c.note else {})}
         for c in components]
    )


# The columns of ``local_rates`` an import writes (all but the generated ``id``), in order.
COLUMNS = tuple(c.name for c in local_rates.columns if c.name != "id")


async def insert_records(conn: AsyncConnection, rows: Sequence[tuple[Any, ...]],
                         progress: Callable[[int], None] | None = None) -> None:
    """INSERT ``rows`` (tuples in :data:`COLUMNS` order) into ``local_rates`` in the caller's
    transaction, with the driver's bulk path: PostgreSQL's ``COPY`` (asyncpg's
    ``copy_records_to_table``), SQLite's ``executemany`` of tuples, in chunks of ``BULK``.
    Other drivers: SQLAlchemy's executemany (:func:`insert_records_plainly`).

    Measured (200,000 boundary records of bench/sst_synthetic.py, 204,000 rows, SQLite, 2026-11-28):
    SQLAlchemy's ``execute(insert(local_rates), dicts)`` took about 4.1 s of CPU (cProfile); with this
    alone changed the whole ``levy rates import`` went from 14.2 to 11.8 s of CPU.
    tests/store/test_local_rates.py compares the rows of both paths on both databases."""
    dialect = conn.dialect
    raw = await conn.get_raw_connection()
    adapted, driver = raw.dbapi_connection, cast(Any, raw.driver_connection)
    if dialect.name == "postgresql" and hasattr(driver, "copy_records_to_table"):
        await conn.execute(select(1))  # the driver's transaction is open before COPY joins it
        for start in range(0, len(rows), BULK):
            chunk = rows[start : start + BULK]
            try:
                await driver.copy_records_to_table(local_rates.name, records=chunk, columns=COLUMNS)
            except Exception as e:  # raised again, as SQLAlchemy's (DataError, ...)
                raise _as_sqlalchemy_error(dialect, adapted, "COPY local_rates", e) from e
            if progress is not None:
                progress(len(chunk))
    elif dialect.name == "sqlite" and hasattr(driver, "executemany"):
        sql = f"INSERT INTO local_rates ({', '.join(COLUMNS)}) VALUES ({', '.join('?' * len(COLUMNS))})"
        for start in range(0, len(rows), BULK):
            chunk = rows[start : start + BULK]
            try:
                await driver.executemany(sql, [_sqlite_values(r) for r in chunk])
            except Exception as e:  # raised again, as SQLAlchemy's (IntegrityError, ...)
                raise _as_sqlalchemy_error(dialect, adapted, sql, e) from e
            if progress is not None:
                progress(len(chunk))
    else:
        await insert_records_plainly(conn, rows, progress)


async def insert_records_plainly(conn: AsyncConnection, rows: Sequence[tuple[Any, ...]],
                                 progress: Callable[[int], None] | None = None) -> None:
    """:func:`insert_records` through SQLAlchemy (``execute(insert(local_rates), dicts)``, chunks of
    ``CHUNK``): the path of other drivers, and what the bulk path is compared with."""
    stmt = insert(local_rates)
    for start in range(0, len(rows), CHUNK):
        chunk = rows[start : start + CHUNK]
        await conn.execute(stmt, [dict(zip(COLUMNS, r, strict=True)) for r in chunk])
        if progress is not None:
            progress(len(chunk))


_FROM, _TO, _PRIMARY, _UNINCORPORATED = (COLUMNS.index(c) for c in
                                         ("effective_from", "effective_to", "is_primary", "unincorporated"))


def _sqlite_values(row: tuple[Any, ...]) -> tuple[Any, ...]:
    """A row as SQLAlchemy stores it on SQLite: dates as ``YYYY-MM-DD`` text, booleans as 0 or 1."""
    values = list(row)
    values[_FROM] = values[_FROM].isoformat()
    if values[_TO] is not None:
        values[_TO] = values[_TO].isoformat()
    values[_PRIMARY], values[_UNINCORPORATED] = int(values[_PRIMARY]), int(values[_UNINCORPORATED])
    return tuple(values)


def _record_values(import_id: str, r: LocalRecord, encoded: dict[tuple[Component, ...], str]) -> tuple[Any, ...]:
    """The ``local_rates`` row of ``r``, in :data:`COLUMNS` order."""
    components = encoded.get(r.components)
    if components is None:
        components = encoded[r.components] = _components_json(r.components)
    s, u = r.street, r.street.unit if r.street else None
    return (
        import_id, r.state, r.zip5, r.plus4_low, r.plus4_high,
        s.low if s else None, s.high if s else None, s.parity if s else None, s.predir if s else None,
        s.street[:200] if s else None, s.suffix if s else None, s.postdir if s else None,
        u.abbr if u else None, u.low if u else None, u.high if u else None, u.parity if u else None,
        r.city[:200] if r.city else None, r.county[:200] if r.county else None, r.primary, r.unincorporated,
        components, r.effective_from, r.effective_to, r.source[:500], r.source_kind, r.line,
        ",".join(r.scope) or None,
    )


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
    existed (read as estimated records by ``RateTable.build``), then the records of
    ``local_rates``, then the address-level records of ``address_blocks``.
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
    result = await conn.stream(
        select(local_rates).order_by(local_rates.c.import_id, local_rates.c.id).execution_options(yield_per=CHUNK)
    )
    decode = _decoder()
    async for r in result:
        out.append(decode(r))
    if address_level:
        async for import_id, block in address_blocks_of(conn):
            out.extend(decode(r) for r in block.columns(import_id))
    return out


async def latest_import(conn: AsyncConnection, format: str, state: str) -> RateImport | None:
    """The newest import of ``format`` whose records are in ``state``."""
    for imp in await list_imports(conn):
        if imp.format == format and state in (imp.report or {}).get("states", ()):
            return imp
    return None


async def records_of(conn: AsyncConnection, import_id: str, state: str) -> list[LocalRecord]:
    """The records one import has in ``state``: its rows of ``local_rates``, then its address-level
    records, each in file order."""
    result = await conn.stream(
        select(local_rates).where(local_rates.c.import_id == import_id, local_rates.c.state == state)
        .order_by(local_rates.c.id).execution_options(yield_per=CHUNK)
    )
    decode = _decoder()
    out = [decode(r) async for r in result]
    async for _, block in address_blocks_of(conn, import_id):
        out.extend(decode(r) for r in block.columns(import_id) if r.state == state)
    return out


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
