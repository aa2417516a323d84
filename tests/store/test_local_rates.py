"""Imported local records in SQL (issue 17): every kind of record reads back as
stored, with the import's report; imports made before 0005 (per-ZIP rows in
``zip_rates``) keep resolving after the upgrade, as estimated records.
On SQLite and PostgreSQL."""

from __future__ import annotations

import asyncio
from datetime import UTC, date, datetime
from decimal import Decimal
from pathlib import Path

import pytest
from alembic import command
from fresh_db import fresh_database_url  # noqa: F401  (fixture)
from sqlalchemy import func, insert, select

from bench import sst_synthetic
from levy.domain.tax.local_rates import Component, LocalRecord, StreetRange
from levy.domain.tax.model import Address
from levy.ratefiles.builtin import builtin_rate_table
from levy.store import migrate
from levy.store import rate_imports as store
from levy.store.db import create_engine
from levy.store.tables.areas import address_blocks, local_rates, rate_imports, zip_rates

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
                rows = (await conn.execute(select(local_rates.c.line).order_by(local_rates.c.id))).scalars().all()
                blocks = (await conn.execute(select(address_blocks.c.seq, address_blocks.c.records))).all()
                of_import = await store.records_of(conn, import_id, "MN")
        finally:
            await engine.dispose()
        # Every field, the components' exact rates and the street range; the ZIP-level and place-wide
        # records first (rows of local_rates), then the ZIP+4 and street ranges (one address block).
        by_place = [_records()[i] for i in (0, 3, 4, 5, 6, 1, 2)]
        assert back == by_place and of_import == by_place
        assert rows == [1, 4, 5, 6, 7] and [tuple(b) for b in blocks] == [(1, 2)]
        assert [r.scope for r in back] == [(), (), (), ("county",), ("city", "special"), (), ()]
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


def test_address_level_rows_stored_before_0021_move_into_blocks_and_back(
        fresh_database_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:  # noqa: F811
    """A database at 0020 holding address-level rows in ``local_rates`` (a synthetic SST file's ZIP+4,
    street and secondary ranges, more than one block's worth, and the hand-made records): upgraded,
    they are read back from ``address_blocks`` equal, in their order, none left in ``local_rates``;
    downgraded, the same rows are back in ``local_rates``."""
    from levy.app.rate_import import build

    rates_file, _ = sst_synthetic.write(tmp_path / "sst", 40, 30, units=5)
    records = [*build([rates_file])[0].records, *_records()]
    address = [r for r in records if store.is_address_level(r)]
    others = [r for r in records if not store.is_address_level(r)]
    assert len(address) == 77

    async def run() -> tuple[list[object], list[object], int, int, list[tuple[object, ...]], list[tuple[object, ...]]]:
        engine = create_engine(fresh_database_url, pool_size=1)
        cfg = migrate.alembic_config()

        def up_to_0020(sync_conn) -> None:  # type: ignore[no-untyped-def]
            cfg.attributes["connection"] = sync_conn
            command.upgrade(cfg, "0020_vies")

        def down_to_0020(sync_conn) -> None:  # type: ignore[no-untyped-def]
            cfg.attributes["connection"] = sync_conn
            command.downgrade(cfg, "0020_vies")

        def stored(result) -> list[tuple[object, ...]]:  # type: ignore[no-untyped-def]
            return sorted((tuple(r)[1:] for r in result), key=repr)  # every column but the id

        try:
            async with engine.begin() as conn:
                await conn.run_sync(up_to_0020)
                await conn.execute(insert(rate_imports).values(
                    id="imp_OLD", format="sst", source_file="MNR.csv", sha256="c" * 64, effective_from=D,
                    effective_to=None, row_count=len(records), imported_at=datetime.now(UTC)))
                encoded: dict[object, str] = {}
                await store.insert_records_plainly(conn, [store._record_values("imp_OLD", r, encoded) for r in records])
                before = stored(await conn.execute(select(local_rates)))
            monkeypatch.setattr(store, "BULK", 50)  # two blocks of this import
            await migrate.upgrade(engine)
            async with engine.connect() as conn:
                back = await store.all_records(conn)
                zip_level = await store.all_records(conn, address_level=False)
                left = (await conn.execute(select(func.count()).select_from(local_rates).where(
                    local_rates.c.plus4_low.is_not(None) | local_rates.c.street_name.is_not(None)))).scalar_one()
                blocks = (await conn.execute(select(func.count()).select_from(address_blocks))).scalar_one()
            async with engine.begin() as conn:
                await conn.run_sync(down_to_0020)
                after = stored(await conn.execute(select(local_rates)))
            return back, zip_level, left, blocks, before, after
        finally:
            await engine.dispose()

    back, zip_level, left, blocks, before, after = asyncio.run(run())
    assert back == [*others, *address]
    assert zip_level == others
    assert (left, blocks) == (0, 2)
    assert after == before and len(after) == len(records)
