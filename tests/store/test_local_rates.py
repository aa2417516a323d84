"""Imported local records in SQL (issue 17): every kind of record reads back as
stored, with the import's report; imports made before 0005 (per-ZIP rows in
``zip_rates``) keep resolving after the upgrade, as estimated records.
On SQLite and PostgreSQL."""

from __future__ import annotations

import asyncio
from datetime import UTC, date, datetime
from decimal import Decimal
from pathlib import Path

from alembic import command
from fresh_db import fresh_database_url  # noqa: F401  (fixture)
from sqlalchemy import insert, select

from bench import sst_synthetic
from levy.domain.tax.local_rates import Component, LocalRecord, StreetRange
from levy.domain.tax.model import Address
from levy.ratefiles.builtin import builtin_rate_table
from levy.store import migrate
from levy.store import rate_imports as store
from levy.store.db import create_engine
from levy.store.tables.areas import local_rates, rate_imports, zip_rates

D = date(2026, 4, 1)


def _records() -> list[LocalRecord]:
    county = Component("county", "Hennepin County", Decimal("0.0015"), "US-CO-MN-HENNEPIN_COUNTY", "27-00-053")
    city = Component("city", "Minneapolis", Decimal("0.005"), "US-CI-MN-MINNEAPOLIS", "27-01-43000")
    common = dict(state="MN", effective_from=D, effective_to=date(2026, 6, 30), source="MNB.csv")
    return [
        LocalRecord(zip5="55401", components=(county, city), source_kind="official_zip", primary=True, line=1,
                    **common),  # type: ignore[arg-type]
        LocalRecord(zip5="55401", components=(county,), source_kind="official_address", plus4_low="0001",
                    plus4_high="0099", line=2, **common),  # type: ignore[arg-type]
        LocalRecord(zip5="55401", components=(city,), source_kind="official_address", line=3,
                    street=StreetRange(100, 198, "even", "MAIN", "N", "ST", ""), **common),  # type: ignore[arg-type]
        LocalRecord(zip5=None, components=(city,), source_kind="official_zip", city="Minneapolis",
                    county="Hennepin", line=4, **common),  # type: ignore[arg-type]
        LocalRecord(zip5=None, components=(county,), source_kind="official_zip", county="Hennepin",
                    unincorporated=True, line=5, **common),  # type: ignore[arg-type]
        # A partial record (only its county stated), and one stating two types.
        LocalRecord(zip5="55402", components=(county,), source_kind="official_zip", county="Hennepin", line=6,
                    scope=("county",), **common),  # type: ignore[arg-type]
        LocalRecord(zip5="55402", components=(city,), source_kind="official_zip", line=7,
                    scope=("city", "special"), **common),  # type: ignore[arg-type]
    ]


def test_records_and_report_round_trip(fresh_database_url: str) -> None:  # noqa: F811
    async def run() -> None:
        engine = create_engine(fresh_database_url, pool_size=1)
        try:
            await migrate.upgrade(engine)
            seen: list[int] = []
            async with engine.begin() as conn:
                import_id = await store.add_import(
                    conn, format="sst", source_file="MNB.csv", sha256="a" * 64, effective_from=D,
                    effective_to=None, records=_records(), report={"rows_read": 5, "anomalies": []},
                    progress=seen.append,
                )
            async with engine.connect() as conn:
                back = await store.all_records(conn)
                listed = await store.list_imports(conn)
        finally:
            await engine.dispose()
        assert back == _records()  # every field, the components' exact rates and the street range
        assert [r.scope for r in back] == [(), (), (), (), (), ("county",), ("city", "special")]
        assert seen == [7]
        assert [(i.id, i.row_count, i.report) for i in listed] == [(import_id, 7, {"rows_read": 5, "anomalies": []})]

    asyncio.run(run())


def test_zip_rows_imported_before_0005_still_resolve(fresh_database_url: str) -> None:  # noqa: F811
    async def run() -> list[object]:
        engine = create_engine(fresh_database_url, pool_size=1)
        cfg = migrate.alembic_config()
        try:
            async with engine.begin() as conn:
                def to_0004(sync_conn) -> None:  # type: ignore[no-untyped-def]
                    cfg.attributes["connection"] = sync_conn
                    command.upgrade(cfg, "0004_filings")

                await conn.run_sync(to_0004)
                await conn.execute(insert(rate_imports).values(
                    id="imp_OLD", format="zip5", source_file="TAXRATES_ZIP5_TX202603.csv", sha256="b" * 64,
                    effective_from=date(2026, 3, 1), effective_to=None, row_count=1, imported_at=datetime.now(UTC)))
                await conn.execute(insert(zip_rates).values(
                    import_id="imp_OLD", state="TX", zip5="75201", region_name="DALLAS", state_rate=Decimal("0.0625"),
                    county_rate=Decimal("0"), city_rate=Decimal("0.01"), special_rate=Decimal("0.01"),
                    effective_from=date(2026, 3, 1), effective_to=None, source="TAXRATES_ZIP5_TX202603.csv", line=2))
            await migrate.upgrade(engine)
            async with engine.connect() as conn:
                return await store.all_records(conn)
        finally:
            await engine.dispose()

    records = asyncio.run(run())
    res = builtin_rate_table(records).resolve(Address(state="TX", postal_code="75201"), date(2026, 3, 15))
    # The old row: city 1% (Dallas) + special 1%, read as the estimated primary record of 75201.
    assert [(r.type, r.rate) for r in res.rows] == [
        ("state", Decimal("0.0625")), ("city", Decimal("0.01")), ("special", Decimal("0.01"))]
    assert res.level == "zip5" and "estimated: TAXRATES_ZIP5_TX202603.csv line 2" in res.how


def test_bulk_insert_stores_what_sqlalchemy_stores(fresh_database_url: str, tmp_path: Path) -> None:  # noqa: F811
    """The driver's bulk path (COPY on PostgreSQL, executemany of tuples on SQLite) against
    SQLAlchemy's executemany: the same rows, column for column, of a synthetic SST file (ZIP+4,
    street and secondary-range records, and the ZIP candidates derived from them) and of the
    hand-made records above (partial records, place-wide records, NULL columns)."""
    from levy.app.rate_import import build

    rates_file, _ = sst_synthetic.write(tmp_path / "sst", 120, 80, units=5)
    records = [*build([rates_file])[0].records, *_records()]
    assert len(records) > 200  # 120 + 80 + 5 boundary records and the ZIP candidates

    async def run() -> tuple[list[tuple[object, ...]], list[tuple[object, ...]]]:
        engine = create_engine(fresh_database_url, pool_size=1)
        try:
            await migrate.upgrade(engine)
            async with engine.begin() as conn:
                for import_id, insert_with in (("imp_BULK", store.insert_records), ("imp_PLAIN", store.insert_records_plainly)):
                    await conn.execute(insert(rate_imports).values(
                        id=import_id, format="sst", source_file="MNR.csv", sha256=import_id.ljust(64, "x"),
                        effective_from=D, effective_to=None, row_count=len(records), imported_at=datetime.now(UTC)))
                    encoded: dict[object, str] = {}
                    await insert_with(conn, [store._record_values(import_id, r, encoded) for r in records])
            async with engine.connect() as conn:
                stored = {}
                for import_id in ("imp_BULK", "imp_PLAIN"):
                    rows = await conn.execute(
                        select(local_rates).where(local_rates.c.import_id == import_id).order_by(local_rates.c.id))
                    stored[import_id] = [tuple(r)[2:] for r in rows]  # not the id nor the import id
            return stored["imp_BULK"], stored["imp_PLAIN"]
        finally:
            await engine.dispose()

    bulk, plain = asyncio.run(run())
    assert len(bulk) == len(records)
    assert bulk == plain
