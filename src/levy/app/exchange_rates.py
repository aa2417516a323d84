"""``levy rates import`` of daily reference exchange rates: the European Central Bank's
euro reference-rate CSV (:mod:`levy.ratefiles.ecb`), told apart from rate tables by its header and
stored in the same database transaction as the command's other files."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from sqlalchemy.ext.asyncio import AsyncConnection

from levy.ratefiles.ecb import ReferenceRate, looks_like_ecb, parse_ecb
from levy.store import exchange_rates as store


def is_reference_rate_file(path: Path) -> bool:
    with path.open("r", encoding="utf-8", errors="replace") as fh:
        return looks_like_ecb(fh.readline())


def parse_reference_files(paths: Sequence[Path]) -> list[tuple[Path, list[ReferenceRate]]]:
    """Every file parsed before anything is stored (a bad file imports nothing)."""
    return [(p, parse_ecb(p.read_text(encoding="utf-8-sig"), p.name)) for p in paths]


async def import_reference_files(conn: AsyncConnection, parsed: Sequence[tuple[Path, list[ReferenceRate]]]) -> list[str]:
    """Store the parsed files; one report line per file."""
    out = []
    for path, rates in parsed:
        count = await store.import_rates(conn, rates, f"ECB euro reference rates: {path.name}")
        days = sorted({r.on for r in rates})
        span = f"{days[0].isoformat()}..{days[-1].isoformat()}" if days else "no days"
        out.append(f"{path}: imported {count} exchange rates (ECB euro reference rates, {span}, "
                   f"{len({r.quote for r in rates})} currencies)")
    return out
