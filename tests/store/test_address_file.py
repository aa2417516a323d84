"""The address file (issue 33, levy.store.address_file): the same answers as the
table that holds every record in memory (today's resolver, kept as the
reference), on random addresses of a synthetic SST boundary file, on SQLite and
PostgreSQL; built once per import set, atomically, and rebuilt for a new one."""

from __future__ import annotations

import asyncio
import random
from datetime import date, timedelta
from pathlib import Path
from typing import Any

import pytest
from levyserver import fresh_database

from bench import sst_synthetic
from levy.domain.tax.local_rates import Component, LocalRecord
from levy.domain.tax.model import Address

N4, NA = 600, 600  # ZIP+4 and address records of the synthetic file: ZIPs 55001..55012


def _later_records() -> list[LocalRecord]:
    """A second import over the same ZIPs: overlapping ZIP+4 ranges (one starting later, one
    open-ended) that must win or lose exactly as in memory (later start, then later import), and
    ZIP-level records for half the ZIPs (a miss there falls to the ZIP, elsewhere to the state)."""
    comp = (Component("city", "Testville", __import__("decimal").Decimal("0.01"), "US-CI-MN-TESTVILLE", "27-01-1"),)
    out = []
    for z in range(55001, 55013):
        out.append(LocalRecord("MN", f"{z:05d}", comp, date(2026, 5, 1), None, "later.csv", "official_address",
                               plus4_low="0100", plus4_high="0300", line=z - 55000))
        out.append(LocalRecord("MN", f"{z:05d}", comp, date(2026, 4, 1), date(2026, 6, 30), "later.csv",
                               "official_address", plus4_low="9000", plus4_high="9999", line=100 + z - 55000))
        if z % 2:
            out.append(LocalRecord("MN", f"{z:05d}", comp, date(2026, 1, 1), None, "later.csv", "official_zip",
                                   primary=True, line=200 + z - 55000))
    return out


async def _setup(url: str, folder: Path, addresses: Path | None = None) -> None:
    """Two imports (the synthetic SST file, then :func:`_later_records`); with ``addresses``, each
    builds the address file as it stores its rows (``import_files(addresses=...)``)."""
    from levy.app.rate_import import ParsedFile, build, import_files
    from levy.store import migrate
    from levy.store.db import create_engine

    engine = create_engine(url, pool_size=1)
    try:
        await migrate.upgrade(engine)
        rates, bounds = sst_synthetic.write(folder, N4, NA, units=NA // 4)  # suites on the first 150 streets
        async with engine.begin() as conn:
            await import_files(conn, build([rates, bounds]), addresses=addresses)
        async with engine.begin() as conn:
            later = _later_records()
            await import_files(conn, [ParsedFile(Path("later.csv"), "test", "later-sha", date(2026, 4, 1), None,
                                                 later, {"rows_read": len(later)})], addresses=addresses)
    finally:
        await engine.dispose()


async def _tables(url: str, directory: Path) -> tuple[Any, Any, Path]:
    """(table with every record in memory, table with an address file, the file)."""
    from levy.ratefiles.builtin import builtin_rate_table
    from levy.store import address_file
    from levy.store import rate_imports as store
    from levy.store.db import create_engine

    engine = create_engine(url, pool_size=1)
    try:
        async with engine.connect() as conn:
            everything = await store.all_records(conn)
            path = await address_file.ensure(conn, directory)
            assert path is not None
            zip_level = await store.all_records(conn, address_level=False)
    finally:
        await engine.dispose()
    assert len(zip_level) < len(everything)
    return builtin_rate_table(everything), builtin_rate_table(zip_level, address_file.AddressFile(path)), path


def _addresses(rnd: random.Random, n: int) -> list[tuple[Address, date]]:
    out = []
    for _ in range(n):
        day = date(2026, 3, 25) + timedelta(days=rnd.randrange(110))  # before, in and after the window
        pick = rnd.randrange(4)
        if pick == 0:
            z, street = sst_synthetic.street_of(rnd.randrange(NA // 2 + 5))
            number = rnd.randrange(0, 1100)
            pre = rnd.choice(["N ", "S ", "", "North "])
            suffix = rnd.choice([" ST", " AVE", "", " Street"])
            unit = rnd.choice(["", "", " STE 250", " Suite 150", " # 205", " Apt 250", " Ste 299"])
            out.append((Address(line1=f"{number} {pre}{street}{suffix}{unit}", state="MN", postal_code=z), day))
        else:
            z = f"{55001 + rnd.randrange(N4 // 50 + 1):05d}"
            plus4 = f"{rnd.randrange(10_000):04d}"
            code = z if pick == 3 else f"{z}-{plus4}"
            out.append((Address(line1="1 Nowhere Rd", state="MN", postal_code=code), day))
    return out


@pytest.mark.parametrize("kind", ["sqlite", "postgres"])
def test_same_answers_as_the_records_in_memory(kind: str, tmp_path: Path) -> None:
    with fresh_database(kind, tmp_path) as url:
        asyncio.run(_setup(url, tmp_path / "sst"))
        memory, filed, path = asyncio.run(_tables(url, tmp_path / "addresses"))
    levels: dict[str, int] = {}
    for address, day in _addresses(random.Random(33), 3000):
        want, got = memory.resolve(address, day), filed.resolve(address, day)
        assert got == want, (address, day)
        levels[want.level] = levels.get(want.level, 0) + 1
        if "STE 200-299" in want.how:
            levels["suite"] = levels.get("suite", 0) + 1
    # The sample reaches every address level, misses included (not a vacuous comparison).
    assert all(levels.get(level, 0) > 100 for level in ("address", "zip4", "zip5", "state")), levels
    assert levels.get("suite", 0) > 20, levels  # secondary ranges reached too
    assert filed.has_zip("MN", "55003") and not filed.has_zip("WI", "55003")
    assert path.name.startswith("addresses-") and path.stat().st_size > 0


def test_built_once_atomically_and_rebuilt_for_a_new_import(tmp_path: Path) -> None:
    from levy.store import address_file

    with fresh_database("sqlite", tmp_path) as url:
        asyncio.run(_setup(url, tmp_path / "sst"))
        directory = tmp_path / "addresses"
        directory.mkdir()
        crashed = directory / ".addresses-0123abcd.999999.tmp"  # a build killed half-way, another day
        crashed.write_bytes(b"half a file")
        _, _, first = asyncio.run(_tables(url, directory))
        assert not crashed.exists()  # removed by the next build
        built = first.stat().st_mtime_ns
        _, _, again = asyncio.run(_tables(url, directory))
        assert again == first and again.stat().st_mtime_ns == built  # the same import set: not rebuilt
        assert not list(directory.glob("*.tmp"))  # no temporary file left behind

        async def one_more() -> None:
            from levy.app.rate_import import ParsedFile, import_files
            from levy.store.db import create_engine

            engine = create_engine(url, pool_size=1)
            try:
                async with engine.begin() as conn:
                    rec = _later_records()[:1]
                    await import_files(conn, [ParsedFile(Path("q3.csv"), "test", "q3-sha", date(2026, 7, 1), None,
                                                         rec, {"rows_read": 1})])
            finally:
                await engine.dispose()

        asyncio.run(one_more())
        _, _, second = asyncio.run(_tables(url, directory))
        assert second != first and second.exists() and not first.exists()  # the old file removed
        assert address_file.directory_for(url) == Path(str(tmp_path / "levy.db") + ".addresses")


def _content(path: Path) -> dict[str, list[tuple[Any, ...]]]:
    import sqlite3

    db = sqlite3.connect(path)
    try:
        return {t: sorted(db.execute(f"SELECT * FROM {t}").fetchall(), key=repr)
                for t in ("meta", "comps", "sources", "plus4", "streets", "zips")}
    finally:
        db.close()


@pytest.mark.parametrize("kind", ["sqlite", "postgres"])
def test_built_by_the_import_as_the_database_would_build_it(kind: str, tmp_path: Path) -> None:
    """An import given the directory builds the file as it inserts its rows (levy.store.address_file.Build):
    the first import alone, the second with the first's rows read back before its own. The file is the
    one ensure() builds from the committed database, row for row (ranks included: the later import wins
    the overlaps of _later_records), and ensure() takes it as it is."""
    from levy.store import address_file
    from levy.store.db import create_engine

    with fresh_database(kind, tmp_path) as url:
        by_import = tmp_path / "by-import"
        asyncio.run(_setup(url, tmp_path / "sst", by_import))
        assert not list(by_import.glob(".import-*.tmp"))

        async def ensure(directory: Path) -> Path | None:
            engine = create_engine(url, pool_size=1)
            try:
                async with engine.connect() as conn:
                    return await address_file.ensure(conn, directory)
            finally:
                await engine.dispose()

        rebuilt = asyncio.run(ensure(tmp_path / "from-database"))
        assert rebuilt is not None
        built = by_import / rebuilt.name  # the second import's (the first's stays until remove_others)
        assert len(list(by_import.glob("addresses-*.sqlite"))) == 2 and built.exists()
        mtime = built.stat().st_mtime_ns
        assert asyncio.run(ensure(by_import)) == built and built.stat().st_mtime_ns == mtime  # taken, not rebuilt
        address_file.remove_others(built)
        assert list(by_import.glob("addresses-*.sqlite")) == [built]
        mine, theirs = _content(built), _content(rebuilt)
        assert len(mine["plus4"]) > N4 and len(mine["streets"]) >= NA  # not a vacuous comparison
        assert mine == theirs


def test_an_import_whose_id_sorts_before_an_earlier_one_leaves_the_file_to_ensure(tmp_path: Path) -> None:
    """A new import id that does not sort after every earlier one (another host's clock): the file the
    import was building is dropped, nothing is published, and ensure() builds it from the database."""
    from levy.store import address_file
    from levy.store.db import create_engine

    with fresh_database("sqlite", tmp_path) as url:
        asyncio.run(_setup(url, tmp_path / "sst"))
        directory = tmp_path / "addresses"

        async def out_of_order() -> Path | None:
            engine = create_engine(url, pool_size=1)
            try:
                async with engine.connect() as conn:
                    build = await address_file.Build.start(conn, directory)
                    assert build.count > 0 and build.earlier
                    return await build.finish(conn, ["imp_0"])  # sorts before every ULID
            finally:
                await engine.dispose()

        assert asyncio.run(out_of_order()) is None
        assert not list(directory.glob("addresses-*.sqlite")) and not list(directory.glob(".import-*"))
