"""``levy rates import|list``: local rate tables into the store."""

from __future__ import annotations

import argparse
import contextlib
import gc
import sys
from collections.abc import Callable, Iterator
from datetime import date
from typing import Any

from levy.cli.common import add_db, config_from, with_store


def register(sub: Any) -> None:
    rates = sub.add_parser("rates", help="Import and list local rate tables.", description="Import and list local rate tables. "
                           "Sales tax holidays are built-in dated data: list them with 'levy holidays'.")
    rsub = rates.add_subparsers(dest="rates_command", required=True, metavar="COMMAND")
    p = rsub.add_parser(
        "import",
        help="Import rate files (per-ZIP tables, SST files, California's CDTFA table, Levy's generic CSV) and the "
        "ECB's daily euro exchange reference rates.",
        description="Import rate files into the database: all files of one command in one transaction "
        "(a bad file changes nothing), each file once (same SHA-256 again: 'already imported'). "
        "Per-ZIP tables (State,ZipCode,TaxRegionName,... header) are effective from the month in their name "
        "(..._CA202603.csv -> 2026-03-01). SST rate files are joined to their boundary file (--boundaries, or "
        "the XXB... file of the same state and quarter given with or beside XXR...; zip archives as the SST site "
        "publishes them are read as the files in them): every boundary record (z ZIP, 4 ZIP+4, a street range) "
        "keeps its own effective window, a ZIP with no z record gets a candidate per county of its records, and "
        "each state's changes since its previous SST import are printed; without a boundary file, their county rows are placed on each county's ZIPs, every row with "
        "its own dates, as records stating the county rate only (the ZIPs keep the city and district rates of "
        "other imports; the city and district rows, which cannot be placed, are listed as warnings). California's CDTFA table (Location,Rate,... header) is effective from the date in its "
        "name (SalesTaxRates1-1-26.csv -> 2026-01-01). Levy's generic CSV (state,zip5,...,components header) is "
        "dated row by row. The European Central Bank's euro foreign exchange reference rates (eurofxref.csv or "
        "eurofxref-hist.csv: a Date column, then currency codes; units per euro) fill the daily exchange rates that "
        "finalized transactions in another currency than USD take when they send no exchange_rate; a day already "
        "imported is replaced. Every file's report is printed: rows read, ZIPs covered, ZIPs with several candidates, "
        "anomalies that need attention (per-ZIP rows with no state rate or whose parts do not add up: not applied; "
        "rates above the state's documented maxima or special districts above the state rate in an official "
        "source), expected notes (the same rate checks on an estimated table, which folds tribal lands and "
        "villages into whole ZIPs: counted, never refused), warnings, and the lower-ranked components an official "
        "level replaced (a Georgia county rate includes the special districts a per-ZIP table lists apart; "
        "levy/data/tax/level_inclusions.json), each list a count line and then every entry, one a line; several files "
        "end with a summary. --strict refuses an import with "
        "anomalies (exit 1, nothing stored); a file that cannot be read (not UTF-8, a NUL byte, a line over "
        "131,072 characters, a bad row, an SST boundary file without its rate file) exits 2 with its file and line. "
        "Older imports are kept: a past date uses the rates in force then. "
        "Running servers pick the new rates up within LEVY_RATES_REFRESH_SECONDS.",
    )
    p.add_argument("paths", nargs="+", metavar="PATH", help="Rate files, zip archives of rate files (as the SST site "
                   "publishes them), or directories whose files (and archives) are all imported.")
    p.add_argument("--boundaries", metavar="FILE", help="SST boundary file for the SST rate files given.")
    p.add_argument(
        "--effective-from",
        metavar="YYYY-MM-DD",
        type=date.fromisoformat,
        help="First day the rates of a per-ZIP table or a CDTFA table apply, and the date an SST import is "
        "labelled with (default: the month, quarter or date in each file name; the generic CSV's rows and an SST "
        "rate file without boundaries carry their own dates).",
    )
    p.add_argument(
        "--source-kind",
        choices=("official_address", "official_zip", "estimated"),
        default="official_zip",
        help="Source kind of generic CSV rows without a source_kind column (default official_zip).",
    )
    p.add_argument(
        "--strict",
        action="store_true",
        help="Refuse the import (store nothing, exit 1) when any file's report has anomalies.",
    )
    p.add_argument(
        "--dry-run",
        action="store_true",
        help="Read, check and report as an import does (reports, changes since each state's previous SST "
        "import, --strict refusals), then store nothing: check a new quarter before it takes effect.",
    )
    p.add_argument("--no-progress", action="store_true", help="Do not draw the progress bar on stderr.")
    add_db(p)
    p.set_defaults(func=_rates_import)

    p = rsub.add_parser("list", help="List rate imports.", description="List rate imports, newest first: id, format, "
                        "source kind, effective window, coverage (states, ZIPs, records), anomaly count, import time, "
                        "source file; then every anomaly, expected note, replacement and warning of each import, one a line.")
    add_db(p)
    p.set_defaults(func=_rates_list)


async def _rates_import(args: argparse.Namespace) -> int:
    import tempfile

    with tempfile.TemporaryDirectory(prefix="levy-rates-") as unpacked, _no_cycle_collection():
        return await _import_unpacked(args, unpacked)


@contextlib.contextmanager
def _no_cycle_collection() -> Iterator[None]:
    """Python's cycle collector off while an import runs. The import makes millions of long-lived
    records (a million boundary records of bench/sst_synthetic.py: 1,020,000 ``LocalRecord`` and as
    many parsed rows), none of them in a reference cycle, and every full collection walks them all:
    measured (2026-11-29, the 1 million record file, SQLite) 26.2 s with it, 21.5 s without. Reference
    counting still frees them; the collector is turned back on (and run) afterwards."""
    was = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was:
            gc.enable()
            gc.collect()


async def _import_unpacked(args: argparse.Namespace, unpacked: str) -> int:
    from dataclasses import replace
    from pathlib import Path

    from levy.app.exchange_rates import (
        import_reference_files,
        is_reference_rate_file,
        parse_reference_files,
    )
    from levy.app.rate_import import ProgressBar, build, expand, import_files
    from levy.store import address_file
    from levy.domain.errors import LevyError, ValidationFailed

    try:
        origins: dict[Path, Path] = {}
        files = expand(args.paths, Path(unpacked), origins)
        if not files:
            raise ValidationFailed(f"{', '.join(args.paths)}: no rate file in it")
        reference = parse_reference_files([f for f in files if is_reference_rate_file(f)])
        files = [f for f in files if f not in {p for p, _ in reference}]
        parsed = [] if not files else build(
            files,
            boundaries=Path(args.boundaries) if args.boundaries else None,
            effective_from=args.effective_from,
            source_kind=args.source_kind,
        )
        parsed = [replace(p, path=origins.get(p.path, p.path)) for p in parsed]  # archive.zip/member
    except LevyError as e:
        _print_error(e)
        return 2
    bars: list[ProgressBar] = []

    def progress(total: int) -> Callable[[int], None]:
        bar = ProgressBar(total)
        bars.append(bar)
        return bar.advance if not args.no_progress else (lambda n: None)

    async def run(conn: Any) -> int:
        for line in await import_reference_files(conn, reference):
            print(line)
        if not files:
            return 0
        report = await import_files(conn, parsed, progress, strict=args.strict, dry_run=args.dry_run,
                                    addresses=address_file.directory_for(conn.engine.url, address_dir))
        if bars and not args.no_progress:
            bars[0].finish()
        for path in report.skipped:
            print(f"{path}: already imported")
        brief = len(report.imported) > 1  # several files: the report of a file with nothing to say is its line below
        for p in report.imported:
            if p.rate_report is not None and (not brief or p.rate_report.needs_attention):
                for line in p.rate_report.lines():
                    print(line)
        if report.changes:
            print("changes since each state's previous SST import:")
            for change in report.changes:
                for line in change.lines():
                    print(line)
        if report.refused:
            names = ", ".join(p.path.name for p in report.refused)
            print(f"error: --strict: anomalies in {names}", file=sys.stderr)
            print("nothing imported", file=sys.stderr)
            return 1
        done = "would import" if args.dry_run else "imported"
        for p in report.imported:
            print(f"{p.path}: {done} {len(p.records)} rows ({p.format}, {_window(p)})")
        for line in _summary(report, args.dry_run):
            print(line)
        if args.dry_run:
            print("--dry-run: nothing stored")
            raise DryRun
        return 0

    address_dir = config_from(args).address_dir
    try:
        code = await with_store(args, run)
    except DryRun:
        return 0
    if code == 0 and files:
        code = await with_store(args, lambda conn: _address_file(conn, address_dir), write=False)
    return code


async def _address_file(conn: Any, address_dir: str) -> int:
    """This host's address file of the imports (built by the import as it stored the records, else
    now rather than by the next server start); the files of earlier imports removed."""
    from levy.store import address_file

    path = await address_file.ensure(conn, address_file.directory_for(conn.engine.url, address_dir))
    if path is not None:
        address_file.remove_others(path)
        print(f"address-level records: {path}")
    return 0


class DryRun(Exception):
    """Raised out of the import's transaction so that it rolls back (--dry-run)."""


def _window(p: Any) -> str:
    """How the import is dated: an SST import with boundaries is labelled with its quarter, and says
    when its records are in force when that is not the quarter (the MN sample's records ended in 2019)."""
    text = f"effective from {p.effective_from.isoformat()}"
    rep = p.rate_report
    if p.format == "sst" and rep is not None and rep.effective_from is not None:
        to = rep.effective_to
        if rep.effective_from > p.effective_from or (to is not None and to < p.effective_from):
            text = (f"labelled {p.effective_from.isoformat()} by its quarter; its records are in force "
                    f"{rep.effective_from.isoformat()}..{to.isoformat() if to else ''}, none on that day")
    return text


def _summary(report: Any, dry_run: bool = False) -> list[str]:
    """The closing lines: files, records, anomalies needing attention, and expected notes by kind."""
    reps = [p.rate_report for p in report.imported if p.rate_report is not None]
    anomalies = sum(len(r.anomalies) for r in reps)
    expected: dict[str, int] = {}
    for r in reps:
        for kind, n in r.expected_counts().items():
            expected[kind] = expected.get(kind, 0) + n
    out = [f"{len(report.imported)} file(s) {'would be imported' if dry_run else 'imported'} ({sum(len(p.records) for p in report.imported)} records), "
           f"{len(report.skipped)} already imported; {anomalies} anomalies need attention"
           + (" (listed above)" if anomalies else "")]
    if expected:
        counts = ", ".join(f"{k} {n}" for k, n in sorted(expected.items()))
        out.append(f"expected of the estimated tables, not anomalies (levy rates list shows them): {counts}")
    return out


def _print_error(e: Any) -> None:
    print(f"error: {e.detail}", file=sys.stderr)
    if len(e.items) > 1:
        for item in e.items:
            print(f"  {item.detail}", file=sys.stderr)
    print("nothing imported", file=sys.stderr)


async def _rates_list(args: argparse.Namespace) -> int:
    from levy.store.rate_imports import list_imports

    async def run(conn: Any) -> int:
        rows = await list_imports(conn)
        if not rows:
            print("no rate imports")
        for r in rows:
            rep = r.report or {}
            period = f"{r.effective_from.isoformat()}..{r.effective_to.isoformat() if r.effective_to else ''}"
            kinds = ",".join(rep.get("source_kinds", ())) or "estimated"
            states = ",".join(rep.get("states", ())) or "-"
            zips = rep.get("zips_covered", "-")
            anomalies = rep.get("anomalies", ())
            expected = rep.get("expected", ())
            print(
                f"{r.id}\t{r.format}\t{kinds}\t{period}\tstates {states}\t{zips} ZIPs\t{r.row_count} records"
                f"\t{len(anomalies)} anomalies\t{r.imported_at.isoformat()}\t{r.source_file}"
            )
            for label, items in (("anomaly", anomalies), ("expected", expected)):
                for a in items:
                    print(f"  {label} {a['kind']}: line {a['line']}: {a['state']} {a['where']}: {a['detail']}")
            for text in rep.get("replaced", ()):
                print(f"  replaced: {text}")
            for w in rep.get("warnings", ()):
                print(f"  warning: {w}")
        return 0

    return await with_store(args, run, write=False)
