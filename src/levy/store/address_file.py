"""The address-level records (ZIP+4 ranges and street ranges, SST ``4`` and
``a`` records) in a file of their own, read through the page cache.

Why: held as Python objects, each record costs about 600 bytes in EVERY worker
and is rebuilt at every start (+200 s and +600 MB per million records,
measured; docs/performance.md). Here they are rows of an indexed SQLite file
that every worker opens read-only (``immutable=1``: no locks, pages shared
through the kernel's page cache): start-up opens the file and reads only its
small tables (component sets, sources, the ZIPs it covers), and a look-up is
one indexed query (tens of microseconds).

The file is derived data: built from ``address_blocks`` of the database (the
truth: :class:`levy.store.rate_imports.AddressBlock`), or by an import as it inserts its blocks (:class:`Build`), named by the
imports it holds (a digest of their ids), written to a temporary file,
fsync'ed and renamed into place, so a reader sees a whole file or none. Every host builds its own on first need (``ensure``), under a file
lock so that the workers of one host build it once; hosts share no disk. A new
import gives a new name: a running server opens the new file and drops the old
one when its refresh swaps the rate table (open files stay readable after the
old one is removed).

Directory: ``Config.address_dir`` (``LEVY_ADDRESS_DIR``), else ``<database file>.addresses/`` beside a
SQLite database, else ``$XDG_CACHE_HOME/levy/addresses/<database digest>/``
(``~/.cache`` by default) for PostgreSQL.

Order: the rows of one ZIP are ranked as the in-memory table ranks them
(:func:`levy.domain.tax.rate_table._best_first`): source kind, primary, later
``effective_from``, then the later import (``seq``, the order rows are read).
"""

from __future__ import annotations

import asyncio
import collections
import fcntl
import hashlib
import json
import logging
import multiprocessing
import os
import sqlite3
import threading
from collections.abc import Sequence
from concurrent.futures import ProcessPoolExecutor
from datetime import date
from decimal import Decimal
from pathlib import Path
from typing import Any

from sqlalchemy import select
from sqlalchemy.engine import make_url
from sqlalchemy.ext.asyncio import AsyncConnection

from levy.domain.tax.local_rates import (
    SOURCE_PRECEDENCE,
    Component,
    LocalRecord,
    StreetRange,
    UnitRange,
)
from levy.domain.tax.place_names import DIRECTIONALS, SUFFIXES, normalise_street_part
from levy.store.rate_imports import BLOCK_COLUMNS, AddressBlock, address_blocks_of, has_address_level
from levy.store.tables.areas import rate_imports

log = logging.getLogger(__name__)

FORMAT = 3  # bumped when the layout changes: an older file is rebuilt
_OPEN_END = date.max.toordinal()
_KINDS = tuple(SOURCE_PRECEDENCE)

_SCHEMA = """
CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT) WITHOUT ROWID;
CREATE TABLE comps (id INTEGER PRIMARY KEY, json TEXT NOT NULL);
CREATE TABLE sources (id INTEGER PRIMARY KEY, text TEXT NOT NULL);
CREATE TABLE plus4 (zip INTEGER NOT NULL, lo INTEGER NOT NULL, hi INTEGER NOT NULL, ef INTEGER NOT NULL,
  et INTEGER NOT NULL, rank INTEGER NOT NULL, comp INTEGER NOT NULL, src INTEGER NOT NULL, line INTEGER NOT NULL,
  kind INTEGER NOT NULL, prim INTEGER NOT NULL);
CREATE TABLE streets (zip INTEGER NOT NULL, name TEXT NOT NULL, lo INTEGER NOT NULL, hi INTEGER NOT NULL,
  parity TEXT NOT NULL, predir TEXT NOT NULL, suffix TEXT NOT NULL, postdir TEXT NOT NULL, ef INTEGER NOT NULL,
  et INTEGER NOT NULL, rank INTEGER NOT NULL, comp INTEGER NOT NULL, src INTEGER NOT NULL, line INTEGER NOT NULL,
  kind INTEGER NOT NULL, prim INTEGER NOT NULL, rname TEXT NOT NULL, rpredir TEXT NOT NULL,
  rsuffix TEXT NOT NULL, rpostdir TEXT NOT NULL, uabbr TEXT, ulow TEXT, uhigh TEXT, uparity TEXT);
"""
# Indexes after the rows are in (one sorted build, not one insert at a time).
_INDEXES = """
CREATE INDEX plus4_at ON plus4 (zip, lo);
CREATE INDEX streets_at ON streets (zip, name, rank);
CREATE TABLE zips AS SELECT zip, max(p4) AS p4, max(st) AS st FROM (SELECT DISTINCT zip, 1 AS p4, 0 AS st FROM plus4
  UNION ALL SELECT DISTINCT zip, 0, 1 FROM streets) GROUP BY zip;
"""


def _zip_key(state: str, zip5: str) -> int:
    """(state, ZIP) as one integer: the state's two letters, then the five digits."""
    return (ord(state[0]) * 256 + ord(state[1])) * 100_000 + int(zip5)


def _key_zip(key: int) -> tuple[str, str]:
    st, z = divmod(key, 100_000)
    return chr(st // 256) + chr(st % 256), f"{z:05d}"


# ------------------------------------------------------------------ where
def directory_for(database_url: str, configured: str = "") -> Path:
    """Where the address files of ``database_url`` live: ``configured`` (``Config.address_dir``)
    when set, else as the module doc says."""
    configured = configured.strip()
    if configured:
        return Path(configured)
    url = make_url(database_url)
    if url.get_backend_name() == "sqlite" and url.database and url.database != ":memory:":
        return Path(url.database + ".addresses")
    ident = f"{url.get_backend_name()}://{url.host}:{url.port}/{url.database}"
    cache = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    return cache / "levy" / "addresses" / hashlib.sha256(ident.encode()).hexdigest()[:16]


async def imports_digest(conn: AsyncConnection) -> str:
    """A name for the set of imports the database holds (their ids)."""
    ids = sorted(r[0] for r in await conn.execute(select(rate_imports.c.id)))
    return hashlib.sha256(f"v{FORMAT}:".encode() + "\n".join(ids).encode()).hexdigest()[:24]


# Where each value is in a block's rows (:data:`levy.store.rate_imports.BLOCK_COLUMNS`).
(_STATE, _ZIP5, _P4LO, _P4HI, _STLO, _STHI, _PARITY, _PREDIR, _NAME, _SUFFIX, _POSTDIR, _UABBR, _ULOW, _UHIGH,
 _UPARITY, _PRIMARY, _COMPS, _FROM, _TO, _SOURCE, _KIND, _LINE) = (BLOCK_COLUMNS.index(name) for name in (
    "state", "zip5", "plus4_low", "plus4_high", "street_low", "street_high", "street_parity", "street_predir",
    "street_name", "street_suffix", "street_postdir", "unit_abbr", "unit_low", "unit_high", "unit_parity",
    "is_primary", "components", "effective_from", "effective_to", "source", "source_kind", "line"))


# ------------------------------------------------------------------ build
class _Writer:
    """Rows of the address file being built (in a temporary file)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.db = sqlite3.connect(path, check_same_thread=False)
        self.db.executescript("PRAGMA journal_mode=OFF; PRAGMA synchronous=OFF; PRAGMA page_size=4096;" + _SCHEMA)
        self.comps: dict[str, int] = {}
        self.sources: dict[str, int] = {}
        self.days: dict[date | str, int] = {}
        self.zips: dict[tuple[str, str], int] = {}
        self.streets: dict[tuple[str, str, str, str], tuple[str, str, str, str]] = {}
        self.parts: dict[tuple[str, bool, bool], str] = {}
        # source kind -> (its index in _KINDS, its precedence)
        self._kinds = {k: (i, SOURCE_PRECEDENCE.get(k, 0)) for i, k in enumerate(_KINDS)}
        self.seq = 0
        self.count = 0

    def _id(self, table: dict[str, int], value: str, name: str) -> int:
        found = table.get(value)
        if found is None:
            found = table[value] = len(table)
            col = "json" if name == "comps" else "text"
            self.db.execute(f"INSERT INTO {name} (id, {col}) VALUES (?, ?)", (found, value))
        return found

    def add(self, block: AddressBlock) -> None:
        """The rows of one address block (read back, or an import's as it inserts them), in import order.

        The loop runs once per record (millions): its look-ups are local names and its caches are read
        inline. Measured on the blocks of 1 million records of bench/sst_synthetic.py (2026-11-29): 3.9 s
        of CPU with a method call per date, ZIP and rank, 3.4-3.5 s so; the file's tables the same (an MD5
        of every row; tests/store/test_address_file.py compares the file's answers with the in-memory
        resolver)."""
        p4, st = [], []
        days, zips, kinds, street = self.days, self.zips, self._kinds, self._street
        comps = [self._id(self.comps, text, "comps") for text in block.components]
        sources = [self._id(self.sources, text, "sources") for text in block.sources]
        seq = self.seq
        for r in block.rows:
            seq += 1
            ef = days.get(r[_FROM]) or self._day(r[_FROM])
            et = _OPEN_END if r[_TO] is None else (days.get(r[_TO]) or self._day(r[_TO]))
            kind, precedence = kinds[r[_KIND]]
            prim = int(r[_PRIMARY])
            # One integer ordering rows as _best_first does (larger is better): the source kind's precedence,
            # primary (0 or 1), the start (an ordinal), then the later row read.
            rank = ((precedence * 2 + prim) * 4_000_000 + ef) * 1_000_000_000 + seq
            key = zips.get((r[_STATE], r[_ZIP5])) or self._zip(r[_STATE], r[_ZIP5])
            comp, src, line = comps[r[_COMPS]], sources[r[_SOURCE]], r[_LINE] or 0
            if r[_NAME] is None:
                p4.append((key, int(r[_P4LO]), int(r[_P4HI]), ef, et, rank, comp, src, line, kind, prim))
            else:
                raw = (r[_NAME], r[_PREDIR] or "", r[_SUFFIX] or "", r[_POSTDIR] or "")
                st.append((key, *street(raw), r[_STLO], r[_STHI], r[_PARITY], ef, et, rank, comp, src, line, kind, prim,
                           *raw, r[_UABBR], r[_ULOW], r[_UHIGH], r[_UPARITY]))
        self.seq = seq
        self.count += len(block.rows)
        self.db.executemany("INSERT INTO plus4 VALUES (?,?,?,?,?,?,?,?,?,?,?)", p4)
        self.db.executemany("INSERT INTO streets (zip, name, predir, suffix, postdir, lo, hi, parity, ef, et, rank, "
                            "comp, src, line, kind, prim, rname, rpredir, rsuffix, rpostdir, uabbr, ulow, uhigh, "
                            "uparity) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)", st)

    def _day(self, value: date | str) -> int:
        """The ordinal of a date (``YYYY-MM-DD`` text on SQLite), remembered: a file has few distinct dates."""
        found = self.days.get(value)
        if found is None:
            found = self.days[value] = (value if isinstance(value, date) else date.fromisoformat(value)).toordinal()
        return found

    def _zip(self, state: str, zip5: str) -> int:
        found = self.zips.get((state, zip5))
        if found is None:
            found = self.zips[(state, zip5)] = _zip_key(state, zip5)
        return found

    def _street(self, raw: tuple[str, str, str, str]) -> tuple[str, str, str, str]:
        """(name, pre-directional, suffix, post-directional) as :func:`~levy.domain.tax.rate_table.normal_range`
        gives them, each part normalised once per writer (a street has many ranges, a suffix thousands)."""
        found = self.streets.get(raw)
        if found is None:
            if len(self.streets) > 200_000:
                self.streets.clear()
            name, predir, suffix, postdir = raw
            found = self.streets[raw] = (self._part(name, None), self._part(predir, DIRECTIONALS),
                                         self._part(suffix, SUFFIXES), self._part(postdir, DIRECTIONALS))
        return found

    def _part(self, text: str, table: dict[str, str] | None) -> str:
        key = (text, table is None, table is DIRECTIONALS)
        found = self.parts.get(key)
        if found is None:
            if len(self.parts) > 200_000:
                self.parts.clear()
            found = self.parts[key] = normalise_street_part(text, table)
        return found

    def finish(self, digest: str) -> None:
        self.db.executescript(_INDEXES)
        self.db.executemany("INSERT INTO meta VALUES (?, ?)",
                            [("format", str(FORMAT)), ("imports", digest), ("records", str(self.count))])
        self.db.commit()
        self.db.execute("ANALYZE")
        self.db.commit()
        self.db.close()


async def ensure(conn: AsyncConnection, directory: Path) -> Path | None:
    """The address file of the imports ``conn`` sees, built if this host has none
    (None when no record is address-level). Older files of the directory are removed."""
    digest = await imports_digest(conn)
    path = directory / f"addresses-{digest}.sqlite"
    if path.exists():
        return path
    if not await has_address_level(conn):
        return None
    lock = await asyncio.to_thread(_acquire, directory)
    try:
        if path.exists():  # another worker of this host built it meanwhile
            return path
        # Under the lock no other builder of this host is running: any temporary file is a
        # crashed build's (killed, out of disk) and would otherwise stay for good.
        for stale in directory.glob(".addresses-*.tmp"):
            stale.unlink(missing_ok=True)
        for stale in directory.glob(".import-*.tmp"):  # an import's (Build): stale once its process is gone
            if not _alive(stale.name.split("-")[1].split(".")[0]):
                stale.unlink(missing_ok=True)
        writer = await asyncio.to_thread(_Writer, directory / f".addresses-{digest}.{os.getpid()}.tmp")
        try:
            await _read_back(conn, writer)
            await asyncio.to_thread(writer.finish, digest)
            await asyncio.to_thread(_publish, writer.path, path)
        except BaseException:
            writer.path.unlink(missing_ok=True)
            raise
        log.info("address file built: %s (%d records)", path, writer.count)
        remove_others(path)
        return path
    finally:
        await asyncio.to_thread(_release, lock)


async def _read_back(conn: AsyncConnection, writer: _Writer) -> None:
    """The address blocks that ``conn`` sees into ``writer``, in import order."""
    async for _, block in address_blocks_of(conn):
        await asyncio.to_thread(writer.add, block)


def _alive(pid: str) -> bool:
    try:
        os.kill(int(pid), 0)
    except (ValueError, ProcessLookupError):
        return False
    except PermissionError:  # another user's process
        return True
    return True


def remove_others(path: Path) -> None:
    """Remove the address files of the directory but ``path`` (the current one)."""
    for old in path.parent.glob("addresses-*.sqlite"):
        if old != path:
            old.unlink(missing_ok=True)  # workers still reading it keep their open file


class Build:
    """The address file built by an import as it inserts its records, so that the import need not read
    them back from the database (:func:`ensure`'s way) and the writing overlaps the inserts.

    The file is written by a process of its own (a :class:`_Writer` in a spawned worker), so that its
    Python work runs on another CPU than the import's: :meth:`start` sends it the address blocks of the
    imports already stored; :meth:`add` each block the import stores (at most :data:`_IN_FLIGHT` blocks
    waiting for it); :meth:`finish`, in the import's transaction once its records are in, waits for the
    writer, names the file by the imports that transaction sees and publishes it under the directory's
    lock. The file is the one :func:`ensure` would build from the committed database, in the same order
    (earlier imports, then the new ones by id), so that it can stand for it: when a new import's id does
    not sort after every earlier one (another host's clock), :meth:`finish` drops the file and the next
    :func:`ensure` builds it from the database.

    Measured (2026-11-29, 1 million records of bench/sst_synthetic.py, SQLite, the cycle collector off):
    the import's store step 6.5 s with the writer in a thread of the import's process (it held the
    interpreter lock beside the import's own work), 5.3-5.5 s with it in its own process (the whole
    import 21.1-21.6 s -> 19.7-20.1 s).
    tests/store/test_address_file.py compares the file with the one :func:`ensure` builds."""

    def __init__(self, path: Path, pool: ProcessPoolExecutor) -> None:
        self.path = path
        self.earlier: list[str] = []
        self.count = 0
        self._pool = pool
        self._pending: collections.deque[asyncio.Future[None]] = collections.deque()

    @classmethod
    async def start(cls, conn: AsyncConnection, directory: Path) -> Build:
        directory.mkdir(parents=True, exist_ok=True)
        path = directory / f".import-{os.getpid()}.tmp"
        pool = ProcessPoolExecutor(max_workers=1, mp_context=multiprocessing.get_context("spawn"),
                                   initializer=_open_writer, initargs=(str(path),))
        build = cls(path, pool)
        try:
            build.earlier = sorted(r[0] for r in await conn.execute(select(rate_imports.c.id)))
            async for _, block in address_blocks_of(conn):  # before the import inserts: the earlier imports'
                await build.add(block)
        except BaseException:
            build.discard()
            raise
        return build

    async def add(self, block: AddressBlock) -> None:
        """Hand ``block`` to the writer; waits only while :data:`_IN_FLIGHT` blocks are before it."""
        while len(self._pending) >= _IN_FLIGHT:
            await self._pending.popleft()
        self._pending.append(asyncio.wrap_future(
            self._pool.submit(_write_block, block.components, block.sources, block.rows)))
        self.count += len(block.rows)

    async def finish(self, conn: AsyncConnection, new: Sequence[str]) -> Path | None:
        """Publish the file of the imports ``conn`` sees (the earlier ones and ``new``, inserted
        in that order); None when the file is dropped (no address-level row, or out of order)."""
        try:
            while self._pending:
                await self._pending.popleft()
            ordered = list(new) == sorted(new) and (not self.earlier or not new or new[0] > self.earlier[-1])
            if not ordered or self.count == 0:
                self.discard()
                return None
            digest = await imports_digest(conn)
            path = self.path.parent / f"addresses-{digest}.sqlite"
            await asyncio.wrap_future(self._pool.submit(_finish_writer, digest))
            await asyncio.to_thread(self._pool.shutdown)
            lock = await asyncio.to_thread(_acquire, path.parent)
            try:
                await asyncio.to_thread(_publish, self.path, path)
            finally:
                await asyncio.to_thread(_release, lock)
            log.info("address file built: %s (%d records)", path, self.count)
            return path
        except BaseException:
            self.discard()
            raise

    def discard(self) -> None:
        self._pool.shutdown(wait=True, cancel_futures=True)
        self.path.unlink(missing_ok=True)


# Blocks handed to an import's writer and not yet written, at most: the writer keeps pace with the
# import, and the blocks waiting (pickled, about 2.7 MB each) do not pile up in memory.
_IN_FLIGHT = 2
_WRITER: _Writer | None = None  # the writer of a Build's worker process


def _open_writer(path: str) -> None:
    global _WRITER
    _WRITER = _Writer(Path(path))


def _write_block(components: list[str], sources: list[str], rows: list[list[Any]]) -> None:
    assert _WRITER is not None
    _WRITER.add(AddressBlock(components, sources, rows))


def _finish_writer(digest: str) -> None:
    assert _WRITER is not None
    _WRITER.finish(digest)


def _acquire(directory: Path) -> Any:
    directory.mkdir(parents=True, exist_ok=True)
    f = open(directory / ".lock", "a+b")  # noqa: SIM115 (released by _release)
    fcntl.flock(f, fcntl.LOCK_EX)
    return f


def _release(f: Any) -> None:
    fcntl.flock(f, fcntl.LOCK_UN)
    f.close()


def _publish(tmp: Path, path: Path) -> None:
    with open(tmp, "rb") as f:
        os.fsync(f.fileno())
    os.replace(tmp, path)
    fd = os.open(path.parent, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


# ------------------------------------------------------------------- read
class AddressFile:
    """An open address file: the look-ups :class:`~levy.domain.tax.rate_table.RateTable` asks for
    (:class:`~levy.domain.tax.rate_table.AddressRecords`)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._db = sqlite3.connect(f"file:{path}?mode=ro&immutable=1", uri=True, check_same_thread=False)
        self._lock = threading.Lock()  # one statement at a time on the connection
        self._comps = {i: _components(j) for i, j in self._db.execute("SELECT id, json FROM comps")}
        self._sources = dict(self._db.execute("SELECT id, text FROM sources"))
        zips: dict[tuple[str, str], tuple[bool, bool]] = {}
        for key, p4, st in self._db.execute("SELECT zip, p4, st FROM zips"):  # one row per ZIP, made at build
            zips[_key_zip(key)] = (bool(p4), bool(st))
        self.zips = zips
        self.states = frozenset(s for s, _ in zips)
        self.records = int(self._db.execute("SELECT value FROM meta WHERE key = 'records'").fetchone()[0])

    def close(self) -> None:
        self._db.close()

    def _record(self, state: str, zip5: str, ef: int, et: int, comp: int, src: int, line: int, kind: int,
                prim: int, **kw: Any) -> LocalRecord:
        return LocalRecord(
            state=state, zip5=zip5, components=self._comps[comp], effective_from=date.fromordinal(ef),
            effective_to=None if et == _OPEN_END else date.fromordinal(et), source=self._sources[src],
            source_kind=_KINDS[kind], primary=bool(prim), line=line, **kw,  # type: ignore[arg-type]
        )

    def plus4(self, state: str, zip5: str, plus4: str, on: date) -> LocalRecord | None:
        """The best-ranked ZIP+4 range containing ``plus4`` in force on ``on``."""
        day, p4 = on.toordinal(), int(plus4)
        with self._lock:
            row = self._db.execute(
                "SELECT lo, hi, ef, et, comp, src, line, kind, prim FROM plus4 WHERE zip = ? AND lo <= ? AND hi >= ? "
                "AND ef <= ? AND et >= ? ORDER BY rank DESC LIMIT 1", (_zip_key(state, zip5), p4, p4, day, day),
            ).fetchone()
        if row is None:
            return None
        lo, hi, *rest = row
        return self._record(state, zip5, *rest, plus4_low=f"{lo:04d}", plus4_high=f"{hi:04d}")

    def streets(self, state: str, zip5: str, street: str) -> tuple[tuple[LocalRecord, StreetRange], ...]:
        """The ranges of ``street`` (normalised as ``parse_line1`` gives it) in the ZIP, best-ranked first."""
        with self._lock:
            rows = self._db.execute(
                "SELECT lo, hi, parity, predir, suffix, postdir, ef, et, comp, src, line, kind, prim, rname, rpredir, "
                "rsuffix, rpostdir, uabbr, ulow, uhigh, uparity FROM streets WHERE zip = ? AND name = ? "
                "ORDER BY rank DESC",
                (_zip_key(state, zip5), street),
            ).fetchall()
        out = []
        for lo, hi, parity, predir, suffix, postdir, ef, et, comp, src, line, kind, prim, *raw in rows:
            abbr, ulow, uhigh, uparity = raw[4:]
            unit = None if ulow is None else UnitRange(abbr or "", ulow, uhigh, uparity)
            written = StreetRange(lo, hi, parity, raw[0], raw[1], raw[2], raw[3], unit)
            rec = self._record(state, zip5, ef, et, comp, src, line, kind, prim, street=written)
            out.append((rec, StreetRange(lo, hi, parity, street, predir, suffix, postdir, unit)))
        return tuple(out)


def _components(text: str) -> tuple[Component, ...]:
    return tuple(
        Component(c["type"], c["name"], Decimal(c["rate"]), c["code"], c.get("authority", "")) for c in json.loads(text)
    )

