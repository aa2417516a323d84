"""``levy rates import|list``: local rate tables into the store."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from datetime import date
from typing import Any


def register(sub: Any, add_db: Callable[[argparse.ArgumentParser], None]) -> None:
    rates = sub.add_parser("rates", help="Import and list local rate tables.", description="Import and list local rate tables.")
    rsub = rates.add_subparsers(dest="rates_command", required=True, metavar="COMMAND")
    p = rsub.add_parser(
        "import",
        help="Import rate files (per-ZIP tables, SST rate + boundary files).",
        description="Import rate files into the database: all files of one command in one transaction "
        "(a bad file changes nothing), each file once (same SHA-256 again: 'already imported'). "
        "Per-ZIP tables (State,ZipCode,TaxRegionName,... header) are effective from the month in their name "
        "(..._CA202603.csv -> 2026-03-01). SST rate files need their boundary file (--boundaries, or XXB... "
        "beside XXR...). Running servers pick the new rates up within LEVY_RATES_REFRESH_SECONDS.",
    )
    p.add_argument("paths", nargs="+", metavar="PATH", help="Rate files, or directories whose files are all imported.")
    p.add_argument("--boundaries", metavar="FILE", help="SST boundary file for the SST rate files given.")
    p.add_argument(
        "--effective-from",
        metavar="YYYY-MM-DD",
        type=date.fromisoformat,
        help="First day the rates apply (default: the month or quarter in each file name).",
    )
    p.add_argument("--no-progress", action="store_true", help="Do not draw the progress bar on stderr.")
    add_db(p)
    p.set_defaults(func=_rates_import)

    p = rsub.add_parser("list", help="List rate imports.", description="List rate imports, newest first: id, format, "
                        "effective period, row count, import time, source file.")
    add_db(p)
    p.set_defaults(func=_rates_list)


async def _rates_import(args: argparse.Namespace) -> int:
    from pathlib import Path

    from levy.app.rate_import import ProgressBar, build, expand, import_files
    from levy.cli import with_store
    from levy.domain.errors import LevyError

    try:
        files = expand(args.paths)
        parsed = build(
            files,
            boundaries=Path(args.boundaries) if args.boundaries else None,
            effective_from=args.effective_from,
        )
    except LevyError as e:
        _print_error(e)
        return 1
    bars: list[ProgressBar] = []

    def progress(total: int) -> Callable[[int], None]:
        bar = ProgressBar(total)
        bars.append(bar)
        return bar.advance if not args.no_progress else (lambda n: None)

    async def run(conn: Any) -> int:
        report = await import_files(conn, parsed, progress)
        if bars and not args.no_progress:
            bars[0].finish()
        for path in report.skipped:
            print(f"{path}: already imported")
        for p in report.imported:
            print(f"{p.path}: imported {len(p.records)} rows ({p.format}, effective from {p.effective_from.isoformat()})")
        print(f"{len(report.imported)} file(s) imported, {len(report.skipped)} already imported")
        return 0

    return await with_store(args, run)


def _print_error(e: Any) -> None:
    print(f"error: {e.detail}", file=sys.stderr)
    if len(e.items) > 1:
        for item in e.items:
            print(f"  {item.detail}", file=sys.stderr)
    print("nothing imported", file=sys.stderr)


async def _rates_list(args: argparse.Namespace) -> int:
    from levy.cli import with_store
    from levy.store.rates import list_imports

    async def run(conn: Any) -> int:
        rows = await list_imports(conn)
        if not rows:
            print("no rate imports")
        for r in rows:
            period = f"{r.effective_from.isoformat()}..{r.effective_to.isoformat() if r.effective_to else ''}"
            print(f"{r.id}\t{r.format}\t{period}\t{r.row_count}\t{r.imported_at.isoformat()}\t{r.source_file}")
        return 0

    return await with_store(args, run, write=False)
