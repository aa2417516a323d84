"""`levy rates import`: read rate files, parse them (``levy.ratefiles.*``) and store
them in ONE database transaction (all files or none), idempotent by SHA-256.

Formats, told apart by content:

* per-ZIP tables (header ``State,ZipCode,TaxRegionName,...``), effective from
  the month in the file name (``..._CA202603.csv`` -> 2026-03-01);
* Streamlined Sales Tax rate files (no header, first column a state FIPS code)
  with their boundary file: ``--boundaries FILE``, or paired by name (``MNR...``
  with ``MNB...`` in the same directory). Every boundary record (``z``, ``4``,
  ``a``) is kept with its own effective window (:func:`levy.ratefiles.sst.sst_records`);
  the import is labelled with the quarter in the name (``2026Q2`` ->
  2026-04-01) or ``--effective-from``;
* an SST rate file with no boundary file: its county rows placed on the ZIPs of
  each county as partial records stating the county rate only
  (:mod:`levy.ratefiles.sst_county`), every row with its own dates;
* California's CDTFA table of rates by city and county (a ``Location,Rate,...``
  header, after title lines or not), effective from the date in the name
  (``SalesTaxRates1-1-26.csv`` -> 2026-01-01) or ``--effective-from``;
* Levy's generic CSV (a header starting ``state,`` with a ``components``
  column), dated row by row, of the source kind ``--source-kind`` (default
  ``official_zip``) unless a ``source_kind`` column says otherwise.

Every file gets a report (:mod:`levy.ratefiles.report`), stored with the import;
``strict`` refuses the whole import, storing nothing, when any report has
anomalies.
"""

from __future__ import annotations

import csv
import hashlib
import re
import shutil
import sys
import zipfile
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from datetime import date
from decimal import Decimal
from pathlib import Path
from typing import Any, TextIO

from sqlalchemy.ext.asyncio import AsyncConnection

from levy.domain.errors import ValidationFailed
from levy.domain.tax.local_rates import LocalRecord, SourceKind
from levy.domain.tax.rate_table import ZipRateRow
from levy.ratefiles import cdtfa
from levy.domain.tax.level_overlay import widen_official_levels
from levy.ratefiles.builtin import county_names, load_level_inclusions, load_local_limits, states_by_code, zip5_records, zip_counties, zip_directory
from levy.ratefiles.changes import StateChanges, compare, piece
from levy.ratefiles.generic import looks_like_generic, parse_generic
from levy.ratefiles.report import (
    Anomaly, RateReport, build_report, cdtfa_disagreements, zip_disagreements, zip_row_anomalies,
)
from levy.ratefiles.sst import STATE_FIPS, SstRate, parse_sst_boundaries, parse_sst_rates, sst_records
from levy.ratefiles.sst_county import sst_county_records
from levy.ratefiles.zip5 import HEADER, effective_from_name, parse_zip5
from levy.store import address_file
from levy.store import rate_imports as store

_QUARTER_RE = re.compile(r"(20[0-9]{2})Q([1-4])", re.IGNORECASE)
_SST_RATE_RE = re.compile(r"\A([A-Z]{2})R(.*)\Z")
_SST_BOUNDARY_RE = re.compile(r"\A([A-Z]{2})B(.*)\Z")


@dataclass(frozen=True)
class ParsedFile:
    path: Path
    format: str  # zip5 | sst | ...
    sha256: str
    effective_from: date
    effective_to: date | None
    records: list[LocalRecord]
    report: dict[str, Any] | None = None  # JSON object stored with the import
    rate_report: RateReport | None = None  # what the import prints (``report`` is its summary)
    quarter: date | None = None  # an SST file's quarter (or --effective-from): the date it is compared on


@dataclass
class ImportReport:
    imported: list[ParsedFile]
    skipped: list[Path]  # already imported (same SHA-256)
    refused: list[ParsedFile] = field(default_factory=list)  # strict: files with anomalies (nothing stored)
    changes: list[StateChanges] = field(default_factory=list)  # SST files: per state, since its previous import


def expand(paths: Sequence[str], unpack_into: Path | None = None, origins: dict[Path, Path] | None = None) -> list[Path]:
    """Files named, and the regular files of directories named (sorted); a zip
    archive (as the SST site distributes each rate and boundary file) stands for
    the files in it, unpacked into ``unpack_into`` (a temporary directory the
    caller removes; required when an archive is given). ``origins`` gets, for each
    unpacked file, the name it is reported and stored under (``archive.zip/member``)."""
    out: list[Path] = []
    for p in paths:
        path = Path(p)
        if path.is_dir():
            files = sorted(f for f in path.iterdir() if f.is_file() and not f.name.startswith("."))
        elif path.is_file():
            files = [path]
        else:
            raise ValidationFailed(f"{p}: no such file or directory")
        for f in files:
            if f.suffix.lower() == ".zip" and zipfile.is_zipfile(f):
                members = _unzip(f, unpack_into)
                out.extend(members)
                if origins is not None:
                    origins.update({m: f / m.name for m in members})
            else:
                out.append(f)
    return out


def _unzip(archive: Path, into: Path | None) -> list[Path]:
    """The files of ``archive`` (folders inside flattened), written under ``into/<archive name>/``."""
    if into is None:
        raise ValidationFailed(f"{archive}: a zip archive is not read here")
    folder = into / archive.name
    folder.mkdir(parents=True, exist_ok=True)
    out = []
    try:
        with zipfile.ZipFile(archive) as z:
            for info in z.infolist():
                name = Path(info.filename).name
                if info.is_dir() or not name or name.startswith((".", "__MACOSX")):
                    continue
                target = folder / name
                with z.open(info) as src, open(target, "wb") as dst:
                    shutil.copyfileobj(src, dst)
                out.append(target)
    except (zipfile.BadZipFile, OSError) as e:
        raise ValidationFailed(f"{archive}: cannot read the zip archive: {e}", meta={"file": str(archive)}) from None
    if not out:
        raise ValidationFailed(f"{archive}: the zip archive holds no file", meta={"file": str(archive)})
    return sorted(out)


def _sniff(data: bytes) -> str:
    head = data.lstrip(b"\xef\xbb\xbf")[:4096].decode("utf-8", "replace").splitlines()[:5] or [""]
    first = head[0].strip()
    if first.split(",")[:2] == HEADER[:2]:
        return "zip5"
    if looks_like_generic(first):
        return "generic"
    if cdtfa.looks_like_cdtfa(head):
        return "cdtfa"
    kind = first.split(",", 1)[0].strip().lower()
    if kind in ("z", "4", "a"):
        return "sst_boundary"
    if kind.isdigit() and len(kind) == 2:
        return "sst_rate"
    raise ValidationFailed(f"unrecognised rate file format (first line {first[:80]!r})")


CSV_FIELD_LIMIT = 131_072  # Python's csv module refuses longer fields (csv.field_size_limit())


def _lines(data: bytes, path: Path | str) -> list[str]:
    """The text lines of a rate file: UTF-8 (a BOM is dropped), no NUL byte, no
    line over the CSV field limit; otherwise a ValidationFailed naming the file
    and line (never a traceback, and never a NUL stored)."""
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as e:
        line_no = data[: e.start].count(b"\n") + 1
        raise ValidationFailed(
            f"{path}:{line_no}: not UTF-8 (byte 0x{data[e.start]:02x}); save the file as UTF-8 and import it again",
            meta={"file": str(path), "line": line_no},
        ) from None
    lines = text.splitlines()
    nul = text.find("\0")
    if nul >= 0:
        line_no = text.count("\n", 0, nul) + 1
        raise ValidationFailed(f"{path}:{line_no}: a NUL byte; a rate file is text", meta={"file": str(path), "line": line_no})
    if len(text) > CSV_FIELD_LIMIT:
        for line_no, line in enumerate(lines, start=1):
            if len(line) > CSV_FIELD_LIMIT:
                raise ValidationFailed(
                    f"{path}:{line_no}: a line of {len(line):,} characters, over the {CSV_FIELD_LIMIT:,} a CSV field "
                    "may have", meta={"file": str(path), "line": line_no},
                )
    return lines


def _quarter_start(name: str) -> date | None:
    m = _QUARTER_RE.search(name)
    if m is None:
        return None
    return date(int(m.group(1)), (int(m.group(2)) - 1) * 3 + 1, 1)


def read_files(files: Sequence[Path]) -> list[tuple[Path, str, bytes, str]]:
    """(path, kind, bytes, sha256) of each file."""
    out = []
    for f in files:
        data = f.read_bytes()
        try:
            kind = _sniff(data)
        except ValidationFailed as e:
            raise ValidationFailed(f"{f}: {e.detail}") from None
        out.append((f, kind, data, hashlib.sha256(data).hexdigest()))
    return out


def build(
    files: Sequence[Path],
    *,
    boundaries: Path | None = None,
    effective_from: date | None = None,
    source_kind: SourceKind = "official_zip",
) -> list[ParsedFile]:
    """Parse every file (all errors of a file together) and report on it; raises
    before anything is stored."""
    raw = read_files(files)
    boundary_files = {f.name: (f, data) for f, kind, data, _ in raw if kind == "sst_boundary"}
    if boundaries is not None and not boundaries.is_file():
        raise ValidationFailed(f"--boundaries {boundaries}: no such file")
    explicit = (boundaries, boundaries.read_bytes()) if boundaries is not None else None
    paired: set[Path] = set()
    parsed: list[ParsedFile] = []
    for f, kind, data, sha in raw:
        try:
            parsed.extend(_build_one(f, kind, data, sha, boundary_files, explicit, paired, effective_from, source_kind))
        except csv.Error as e:  # a quoted field running over lines past the field limit, ...
            raise ValidationFailed(f"{f}: not a readable CSV file: {e}", meta={"file": str(f)}) from None
    lonely = [f for f, kind, _, _ in raw if kind == "sst_boundary" and f not in paired]
    if lonely:
        names = ", ".join(str(f) for f in lonely)
        missing = ", ".join(_rate_name(f) for f in lonely)
        raise ValidationFailed(
            f"{names}: an SST boundary file (its first cell is a record type: z, 4 or a) is imported with its rate "
            f"file, which is missing: {missing} (the XXR... rate file of the same state and quarter; or give the "
            "rate file with --boundaries FILE)", meta={"file": names, "missing": missing},
        )
    return parsed


def _build_one(
    f: Path, kind: str, data: bytes, sha: str, boundary_files: dict[str, tuple[Path, bytes]],
    explicit: tuple[Path, bytes] | None, paired: set[Path], effective_from: date | None, source_kind: SourceKind,
) -> list[ParsedFile]:
    """The parsed file ``f`` (none for a boundary file: it is read with its rate file, added to ``paired``)."""
    if kind == "sst_boundary":
        return []
    lines = _lines(data, f)
    warnings: list[str] = []
    row_anomalies: list[Anomaly] = []
    if kind == "zip5":
        rows = parse_zip5(lines, f.name, effective_from)
        start = effective_from or effective_from_name(f.name)
        kept, row_anomalies = zip_row_anomalies(rows, states_by_code())
        fmt, records, rows_read = "zip5", zip5_records(kept), len(rows)
    elif kind == "sst_rate":
        on = effective_from or _quarter_start(f.name)
        if on is None:
            raise ValidationFailed(f"{f}: cannot tell the quarter from the name (e.g. 2026Q2); use --effective-from")
        rates = parse_sst_rates(lines, f.name)
        pair = explicit or _pair(f, boundary_files)
        if pair is None:
            fmt, start, records = "sst_county", on, _sst_by_county(f, rates, on, warnings)
            rows_read = len(rates)
        else:
            paired.add(pair[0])
            bounds = parse_sst_boundaries(_lines(pair[1], pair[0]), pair[0].name)
            digest = hashlib.sha256(data)  # of data + b"\0" + the boundary file, without copying them together
            digest.update(b"\0")
            digest.update(pair[1])
            sha = digest.hexdigest()
            records = sst_records(rates, bounds, f"{f.name}+{pair[0].name}", states_by_code(), zip_directory())
            if not records:
                raise ValidationFailed(f"{f}: {pair[0].name} has no boundary record of a known state")
            fmt, start, rows_read = "sst", on, len(rates) + len(bounds)
    elif kind == "cdtfa":
        start = effective_from or cdtfa.effective_from_name(f.name)
        records = cdtfa.parse_cdtfa(lines, f.name, base_rate=_statewide_rate(cdtfa.STATE, start), effective_from=start)
        fmt, rows_read = "cdtfa", _rows_after_header(lines, "Location,Rate,")
    elif kind == "generic":
        records = parse_generic(lines, f.name, source_kind=source_kind, states=states_by_code().keys())
        if not records:
            raise ValidationFailed(f"{f}: no rows under the header; nothing imported")
        fmt, start, rows_read = "generic", min(r.effective_from for r in records), len(records)
    else:
        raise AssertionError(f"no parser for {kind}")
    report = build_report(
        f.name, records, rows_read=rows_read, states=states_by_code(),
        limits=load_local_limits(), warnings=warnings, row_anomalies=row_anomalies,
    )
    # An SST import with boundaries is labelled with its quarter; the others with their records' window.
    window = (start, None) if fmt == "sst" else (report.effective_from or start, report.effective_to)
    quarter = start if fmt == "sst_county" else None
    return [ParsedFile(f, fmt, sha, *window, records, report.summary(), report, quarter)]


def _statewide_rate(state: str, on: date) -> Decimal:
    """State rate plus statewide mandatory local portion in force on ``on`` (built-in data)."""
    info = states_by_code()[state]
    rate, swl = info.rate_on(on), info.statewide_local_on(on)
    if rate is None:
        raise ValidationFailed(f"no {info.name} state rate is on record for {on.isoformat()}")
    return rate.rate + (swl.rate if swl is not None else Decimal(0))


def _rows_after_header(lines: Sequence[str], header: str) -> int:
    """Non-empty lines after the first line starting with ``header``."""
    for i, line in enumerate(lines):
        if line.lstrip("\ufeff").startswith(header):
            return sum(1 for rest in lines[i + 1 :] if rest.strip(" ,"))
    return 0


def _sst_by_county(f: Path, rates: list[SstRate], on: date, warnings: list[str]) -> list[LocalRecord]:
    """An SST rate file without its boundary file: county rows on the ZIPs of each
    county (partial records, the county rate only). City and special-district rows
    with a rate in force on or after ``on`` cannot be placed: an
    ``unplaced_local_taxes`` warning (not applied; the ZIPs keep those of other
    imports, so ``--strict`` does not refuse the file for them); county rows naming
    no county of the directory: a warning."""
    states = sorted({STATE_FIPS[r.state_fips] for r in rates if r.state_fips in STATE_FIPS})
    counties = {z: c for st in states for z, c in zip_counties(st).items()}
    placed = sst_county_records(rates, county_names=county_names(), zip_counties=counties, source=f.name)
    if not placed.records:
        raise ValidationFailed(f"{f}: no county row of the file matches a county of the ZIP directory; nothing imported")
    warnings.extend(placed.unplaced_notes(on))
    warnings.extend(placed.warnings())
    return placed.records


def _rate_name(boundary_file: Path) -> str:
    """The name the rate file of ``boundary_file`` has (MNB2026Q2FEB18.csv -> MNR2026Q2FEB18.csv)."""
    m = _SST_BOUNDARY_RE.match(boundary_file.name.upper())
    return f"{boundary_file.name[:2]}R{boundary_file.name[3:]}" if m else f"the rate file of {boundary_file.name}"


def _pair(rate_file: Path, boundary_files: dict[str, tuple[Path, bytes]]) -> tuple[Path, bytes] | None:
    """The boundary file of an SST rate file among the files given, else beside it: the same
    name after the R/B letter, else the same state and quarter, else the same state."""
    m = _SST_RATE_RE.match(rate_file.name.upper())
    if m is None:
        return None
    state, rest = m.group(1), m.group(2)
    quarter = _QUARTER_RE.search(rest)
    siblings = {f.name: (f, None) for f in sorted(rate_file.parent.glob(f"{rate_file.name[:2]}B*"))}
    for pool in (boundary_files, siblings):
        same_state = []
        for name, value in pool.items():
            b = _SST_BOUNDARY_RE.match(name.upper())
            if b is None or b.group(1) != state:
                continue
            other = _QUARTER_RE.search(b.group(2))
            rank = 0 if Path(b.group(2)).stem.removesuffix("-SAMPLE") == Path(rest).stem else (
                1 if quarter and other and quarter.group(0) == other.group(0) else 2)
            same_state.append((rank, name, value))
        if same_state:
            _, _, (path, data) = min(same_state, key=lambda t: (t[0], t[1]))
            return path, data if data is not None else path.read_bytes()
    return None


class ProgressBar:
    """A plain carriage-return progress bar on a stream (stderr)."""

    def __init__(self, total: int, stream: TextIO | None = None, width: int = 40) -> None:
        self.total = max(total, 1)
        self.done = 0
        self.stream = stream or sys.stderr
        self.width = width

    def advance(self, n: int) -> None:
        self.done = min(self.total, self.done + n)
        filled = self.width * self.done // self.total
        pct = 100 * self.done // self.total
        self.stream.write(f"\r[{'#' * filled}{'.' * (self.width - filled)}] {pct:3d}% {self.done}/{self.total} rows")
        self.stream.flush()

    def finish(self) -> None:
        self.stream.write("\n")
        self.stream.flush()


async def import_files(
    conn: AsyncConnection,
    parsed: Sequence[ParsedFile],
    progress: Callable[[int], Callable[[int], None]] | None = None,
    *,
    strict: bool = False,
    dry_run: bool = False,
    addresses: Path | None = None,
) -> ImportReport:
    """Store every new file in the caller's transaction; files already imported are skipped.

    A CDTFA table's report gains the ZIP-level records (stored, or earlier in
    ``parsed``) it disagrees with. ``strict``: when any new file's report has
    anomalies, nothing is stored and those files are returned as ``refused``.
    ``progress(total_rows)`` is called once with the number of rows to insert and
    returns a callback advanced as rows are written. ``dry_run``: everything
    but the storing (the report, the refusals and the changes are the same). ``addresses``: the
    directory of this host's address files, where the file of the imports is built as the
    records are inserted (:class:`levy.store.address_file.Build`) when any is address-level;
    without it (or when that file is dropped) the next :func:`levy.store.address_file.ensure`
    builds it from the database.
    """
    known = await store.imported_hashes(conn, [p.sha256 for p in parsed])
    report = ImportReport([], [])
    for p in parsed:
        if p.sha256 in known:
            report.skipped.append(p.path)
        else:
            known.add(p.sha256)
            report.imported.append(p)
    report.imported = await _with_disagreements(conn, report.imported)
    report.changes = await _changes(conn, report.imported)
    if report.changes:
        report.imported = [_with_changes(p, report.changes) for p in report.imported]
    if strict:
        report.refused = [p for p in report.imported if p.rate_report is not None and p.rate_report.anomalies]
    if report.refused or dry_run:
        return report
    advance = progress(sum(len(p.records) for p in report.imported)) if progress and report.imported else None
    has_address = any(r.plus4_low is not None or r.street is not None for p in report.imported for r in p.records)
    build = await address_file.Build.start(conn, addresses) if addresses is not None and has_address else None
    try:
        new = [
            await store.add_import(
                conn,
                format=p.format,
                source_file=str(p.path),
                sha256=p.sha256,
                effective_from=p.effective_from,
                effective_to=p.effective_to,
                records=p.records,
                report=p.report,
                progress=advance,
                also=build.add if build is not None else None,
            )
            for p in report.imported
        ]
        if build is not None:
            await build.finish(conn, new)
    except BaseException:
        if build is not None:
            build.discard()
        raise
    return report


async def _changes(conn: AsyncConnection, files: Sequence[ParsedFile]) -> list[StateChanges]:
    """Per state of each SST file with boundaries: what changed since the state's previous
    SST import (stored; none for a state's first)."""
    out = []
    for p in files:
        if p.format != "sst":
            continue
        for state in sorted({r.state for r in p.records}):
            before = await store.latest_import(conn, "sst", state)
            if before is None:
                continue
            # Boundary records only (a line of the file): not the ZIP candidates derived from them.
            old = [piece(r) for r in await store.records_of(conn, before.id, state) if r.line]
            new = [piece(r) for r in p.records if r.state == state and r.line]
            out.append(compare(state, Path(before.source_file).name, old, before.effective_from, new, p.effective_from))
    return out


def _with_changes(p: ParsedFile, changes: Sequence[StateChanges]) -> ParsedFile:
    """``p`` with its states' changes in the report it stores."""
    if p.format != "sst" or p.report is None:
        return p
    states = {r.state for r in p.records}
    mine = [c.summary() for c in changes if c.state in states]
    return replace(p, report={**p.report, "changes": mine}) if mine else p


_COMPARED = ("cdtfa", "sst_county")  # formats whose report lists disagreements with what is imported


async def _with_disagreements(conn: AsyncConnection, files: list[ParsedFile]) -> list[ParsedFile]:
    """Each CDTFA table's and county-placed SST file's report, with the ZIP-level
    records of other sources (stored, or earlier in ``files``) it disagrees with:
    on the CDTFA table's date, on the SST file's quarter."""
    states = {r.state for p in files if p.format in _COMPARED for r in p.records}
    if not states:
        return files
    stored: list[LocalRecord] = []
    for item in await store.all_records(conn, address_level=False):
        if item.state not in states:
            continue
        stored.extend(zip5_records([item]) if isinstance(item, ZipRateRow) else (item,))
    out: list[ParsedFile] = []
    for i, p in enumerate(files):
        if p.format in _COMPARED and p.rate_report is not None:
            others = [*stored, *(r for q in files[:i] for r in q.records if r.state in states)]
            records, replaced = p.records, []
            if p.format == "cdtfa":
                found = cdtfa_disagreements(p.records, others, zip_directory(), p.effective_from)
            else:
                # An official county rate that includes the table's special districts replaces them too.
                records, replaced = widen_official_levels(p.records, others, load_level_inclusions())
                found = zip_disagreements(records, others, p.quarter or p.effective_from, p.path.name)
            rate_report = replace(p.rate_report, disagreements=tuple(found), replaced=tuple(replaced))
            p = replace(p, records=records, rate_report=rate_report, report=rate_report.summary())
        out.append(p)
    return out
