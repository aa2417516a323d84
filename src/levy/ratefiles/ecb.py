"""Parser of the European Central Bank's euro foreign exchange reference rates.

The ECB publishes, on each TARGET business day, how many units of each currency one euro buys,
as CSV files in one layout (``eurofxref.csv``, the day's rates; ``eurofxref-hist.csv``, every day
since 1999)::

    Date,USD,JPY,BGN,CZK,...,
    2026-01-05,1.1000,165.00,N/A,24.40,...,

A header ``Date`` then ISO 4217 codes; one row per day. The date is ``YYYY-MM-DD`` (the history
file) or ``5 January 2026`` (the day's file); cells may carry spaces; ``N/A`` or an empty cell
is no rate that day; a trailing comma (an empty last column) is ignored. Rates are kept as the
exact decimal strings published: units of the currency per one euro (base ``EUR``).

Pure: text in, rows out; bad rows reported together (file and line).
"""

from __future__ import annotations

import csv
import io
import re
from dataclasses import dataclass
from datetime import date, datetime
from decimal import Decimal, InvalidOperation

from levy.domain.errors import ValidationFailed

BASE = "EUR"
_CODE = re.compile(r"[A-Z]{3}\Z")
_MISSING = frozenset({"", "N/A", "NA", "-"})


@dataclass(frozen=True, slots=True)
class ReferenceRate:
    """Units of ``quote`` per one unit of ``base`` on ``on``, as published."""

    on: date
    base: str
    quote: str
    rate: str


def looks_like_ecb(first_line: str) -> bool:
    """Whether a file's first line is the ECB layout's header (``Date`` then currency codes)."""
    cells = [c.strip() for c in first_line.lstrip("\ufeff").split(",")]
    codes = [c for c in cells[1:] if c]
    return bool(cells) and cells[0] == "Date" and bool(codes) and all(_CODE.match(c) for c in codes)


def _day(text: str) -> date:
    try:
        return date.fromisoformat(text)
    except ValueError:
        return datetime.strptime(text, "%d %B %Y").date()


def parse_ecb(text: str, name: str = "ecb.csv") -> list[ReferenceRate]:
    """Every published rate of the file; a bad date or rate is 422 naming the file and line."""
    rows = list(csv.reader(io.StringIO(text.lstrip("\ufeff"))))
    if not rows or not looks_like_ecb(",".join(rows[0])):
        raise ValidationFailed(f"{name}: not the ECB reference-rate layout (a 'Date' column, then currency codes)")
    codes = [c.strip() for c in rows[0][1:]]
    out: list[ReferenceRate] = []
    errors: list[ValidationFailed] = []
    for number, cells in enumerate(rows[1:], start=2):
        if not any(c.strip() for c in cells):
            continue
        try:
            on = _day(cells[0].strip())
        except ValueError:
            errors.append(ValidationFailed(f"{name}:{number}: '{cells[0].strip()}' is not a date"))
            continue
        for code, cell in zip(codes, cells[1:], strict=False):
            value = cell.strip()
            if not code or value in _MISSING:
                continue
            try:
                ok = Decimal(value) > 0
            except InvalidOperation:
                ok = False
            if not ok:
                errors.append(ValidationFailed(f"{name}:{number}: {code} rate '{value}' is not a positive number"))
                continue
            out.append(ReferenceRate(on, BASE, code, value))
    if errors:
        raise ValidationFailed.many(errors)  # type: ignore[arg-type]
    return out
