"""Parser of per-ZIP rate tables (State,ZipCode,TaxRegionName,EstimatedCombinedRate,...).

Pure: takes an iterable of text lines and a source name, yields
:class:`~levy.domain.tax.rate_table.ZipRateRow`. Bad rows are collected and reported
together (file and line number) as one ValidationFailed, so an import applies
all rows or none.
"""

from __future__ import annotations

import csv
import re
from collections.abc import Iterable
from datetime import date
from decimal import Decimal, InvalidOperation

from levy.domain.errors import ValidationFailed
from levy.domain.tax.rate_table import ZipRateRow

HEADER = [
    "State", "ZipCode", "TaxRegionName", "EstimatedCombinedRate", "StateRate",
    "EstimatedCountyRate", "EstimatedCityRate", "EstimatedSpecialRate", "RiskLevel",
]
_NAME_RE = re.compile(r"(?P<state>[A-Z]{2})(?P<year>20[0-9]{2})(?P<month>0[1-9]|1[0-2])")
MAX_ERRORS = 50


def effective_from_name(name: str) -> date:
    """``TAXRATES_ZIP5_CA202603.csv`` -> 2026-03-01 (the table's first month)."""
    m = None
    for m in _NAME_RE.finditer(name.upper()):
        pass
    if m is None:
        raise ValidationFailed(f"{name}: cannot tell the effective month from the file name (expected e.g. CA202603).")
    return date(int(m["year"]), int(m["month"]), 1)


def _rate(text: str) -> Decimal:
    value = Decimal(text)
    if not value.is_finite() or value < 0 or value >= 1:
        raise InvalidOperation
    return value


def parse_zip5(
    lines: Iterable[str], source: str, effective_from: date | None = None, effective_to: date | None = None
) -> list[ZipRateRow]:
    """Parse one per-ZIP file. ``effective_from`` defaults to the month in ``source``."""
    start = effective_from or effective_from_name(source)
    rows: list[ZipRateRow] = []
    errors: list[ValidationFailed] = []

    def bad(line_no: int, msg: str) -> None:
        errors.append(ValidationFailed(f"{source}:{line_no}: {msg}", meta={"file": source, "line": line_no}))

    reader = csv.reader(lines)
    header_seen = False
    for line_no, rec in enumerate(reader, start=1):
        if not rec or all(not c.strip() for c in rec):
            continue
        if not header_seen:
            header_seen = True
            if [c.strip().lstrip("\ufeff") for c in rec] != HEADER:
                bad(line_no, f"unexpected header {rec!r}; expected {','.join(HEADER)}")
                break
            continue
        if len(rec) != len(HEADER):
            bad(line_no, f"expected {len(HEADER)} columns, found {len(rec)}")
        else:
            state, zipc, region = rec[0].strip().upper(), rec[1].strip(), rec[2].strip()
            if len(state) != 2 or not state.isalpha():
                bad(line_no, f"bad state {rec[0]!r}")
            elif len(zipc) != 5 or not zipc.isdigit():
                bad(line_no, f"bad ZIP code {rec[1]!r}")
            else:
                try:
                    combined, st, co, ci, sp = (_rate(rec[i].strip()) for i in range(3, 8))
                except (InvalidOperation, ValueError):
                    bad(line_no, "rates must be decimals in [0, 1)")
                else:
                    # A combined rate that is not the sum of its parts is an anomaly of the
                    # import report (levy.ratefiles.report.zip_row_anomalies), not a parse error.
                    rows.append(ZipRateRow(state, zipc, region, st, co, ci, sp, start, effective_to, source, line_no,
                                           combined))
        if len(errors) >= MAX_ERRORS:
            break
    if not header_seen:
        bad(0, "empty file")
    if errors:
        raise ValidationFailed.many(errors, f"{source}: {len(errors)} bad row(s); nothing imported")  # type: ignore[return-value]
    return rows
