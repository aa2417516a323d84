"""`levy rates import`: read rate files, parse them (``levy.rates.*``) and store
them in ONE database transaction (all files or none), idempotent by SHA-256.

Formats, told apart by content:

* per-ZIP tables (header ``State,ZipCode,TaxRegionName,...``), effective from
  the month in the file name (``..._CA202603.csv`` -> 2026-03-01);
* Streamlined Sales Tax rate files (no header, first column a state FIPS code)
  with their boundary file: ``--boundaries FILE``, or paired by name (``MNR...``
  with ``MNB...`` in the same directory). Rows are in force from the quarter in
  the name (``2026Q2`` -> 2026-04-01) or ``--effective-from``.
"""

from __future__ import annotations

import hashlib
import re
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import date
from pathlib import Path
from typing import Any, TextIO

from sqlalchemy.ext.asyncio import AsyncConnection

from levy.domain.errors import ValidationFailed
from levy.domain.tax.local_rates import LocalRecord
from levy.rates.builtin import zip5_records
from levy.rates.sst import parse_sst_boundaries, parse_sst_rates, sst_zip_rows
from levy.rates.zip5 import HEADER, effective_from_name, parse_zip5
from levy.store import rates as store

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


@dataclass
class ImportReport:
    imported: list[ParsedFile]
    skipped: list[Path]  # already imported (same SHA-256)


def expand(paths: Sequence[str]) -> list[Path]:
    """Files named, and the regular files of directories named (sorted)."""
    out: list[Path] = []
    for p in paths:
        path = Path(p)
        if path.is_dir():
            out.extend(sorted(f for f in path.iterdir() if f.is_file() and not f.name.startswith(".")))
        elif path.is_file():
            out.append(path)
        else:
            raise ValidationFailed(f"{p}: no such file or directory")
    return out


def _sniff(data: bytes) -> str:
    first = data.lstrip(b"\xef\xbb\xbf").split(b"\n", 1)[0].decode("utf-8", "replace").strip()
    if first.split(",")[:2] == HEADER[:2]:
        return "zip5"
    kind = first.split(",", 1)[0].strip().lower()
    if kind in ("z", "4", "a"):
        return "sst_boundary"
    if kind.isdigit() and len(kind) == 2:
        return "sst_rate"
    raise ValidationFailed(f"unrecognised rate file format (first line {first[:80]!r})")


def _lines(data: bytes) -> list[str]:
    return data.decode("utf-8-sig").splitlines()


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
    files: Sequence[Path], *, boundaries: Path | None = None, effective_from: date | None = None
) -> list[ParsedFile]:
    """Parse every file (all errors of a file together); raises before anything is stored."""
    raw = read_files(files)
    boundary_files = {f.name: (f, data) for f, kind, data, _ in raw if kind == "sst_boundary"}
    explicit = (boundaries, boundaries.read_bytes()) if boundaries is not None else None
    parsed: list[ParsedFile] = []
    for f, kind, data, sha in raw:
        if kind == "zip5":
            rows = parse_zip5(_lines(data), f.name, effective_from)
            start = effective_from or effective_from_name(f.name)
            parsed.append(ParsedFile(f, "zip5", sha, start, None, zip5_records(rows)))
        elif kind == "sst_rate":
            pair = explicit or _pair(f, boundary_files)
            if pair is None:
                raise ValidationFailed(
                    f"{f}: an SST rate file needs its boundary file (--boundaries FILE, or a file named "
                    f"{f.name[:2]}B... in the same directory)"
                )
            on = effective_from or _quarter_start(f.name)
            if on is None:
                raise ValidationFailed(f"{f}: cannot tell the quarter from the name (e.g. 2026Q2); use --effective-from")
            rates = parse_sst_rates(_lines(data), f.name)
            bounds = parse_sst_boundaries(_lines(pair[1]), pair[0].name)
            digest = hashlib.sha256(data + b"\0" + pair[1]).hexdigest()
            rows = zip5_records(sst_zip_rows(rates, bounds, on, f"{f.name}+{pair[0].name}"))
            if not rows:
                raise ValidationFailed(
                    f"{f}: no ZIP boundary record of {pair[0].name} is in force on {on.isoformat()}; "
                    "use --effective-from with a date the boundary file covers"
                )
            parsed.append(ParsedFile(f, "sst", digest, on, None, rows))
    return parsed


def _pair(rate_file: Path, boundary_files: dict[str, tuple[Path, bytes]]) -> tuple[Path, bytes] | None:
    m = _SST_RATE_RE.match(rate_file.name.upper())
    if m is None:
        return None
    for name, value in boundary_files.items():
        b = _SST_BOUNDARY_RE.match(name.upper())
        if b is not None and b.group(1) == m.group(1):
            return value
    sibling = sorted(rate_file.parent.glob(f"{rate_file.name[:2]}B*"))
    if sibling:
        return sibling[0], sibling[0].read_bytes()
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
) -> ImportReport:
    """Store every new file in the caller's transaction; files already imported are skipped.

    ``progress(total_rows)`` is called once with the number of rows to insert and
    returns a callback advanced as rows are written.
    """
    known = await store.imported_hashes(conn, [p.sha256 for p in parsed])
    report = ImportReport([], [])
    for p in parsed:
        if p.sha256 in known:
            report.skipped.append(p.path)
        else:
            known.add(p.sha256)
            report.imported.append(p)
    advance = progress(sum(len(p.records) for p in report.imported)) if progress and report.imported else None
    for p in report.imported:
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
        )
    return report
