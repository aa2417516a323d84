"""The loop shared by the parsers of CSV files with a header row (CDTFA,
generic): find the header, turn each later row into a record, collect every
bad row (file and line) and raise them together, so an import takes all rows
or none."""

from __future__ import annotations

import csv
from collections.abc import Callable, Iterable
from typing import TypeVar

from levy.domain.errors import ValidationFailed
from levy.ratefiles.sst import _err, _raise

MAX_ERRORS = 50
_R = TypeVar("_R")
Columns = dict[str, int]


def parse_headed_csv(
    lines: Iterable[str],
    source: str,
    *,
    header: Callable[[list[str]], Columns | None],
    row: Callable[[list[str], Columns, int], _R | None],
    no_header: str,
) -> list[_R]:
    """``header(cells)``: the column map of a header line, None for a line
    before it (title lines); raises ValueError for a header it cannot use.
    ``row(cells, columns, line_no)``: the record of a data line, None to skip
    it; raises ValueError for a bad row. Cells are stripped (and a BOM)."""
    out: list[_R] = []
    errors: list[ValidationFailed] = []
    columns: Columns | None = None
    for line_no, rec in enumerate(csv.reader(lines), start=1):
        cells = [c.strip().lstrip("\ufeff") for c in rec]
        if not any(cells):
            continue
        try:
            if columns is None:
                columns = header(cells)
                continue
            record = row(cells, columns, line_no)
            if record is not None:
                out.append(record)
        except ValueError as e:
            errors.append(_err(source, line_no, str(e)))
            if columns is None or len(errors) >= MAX_ERRORS:
                break
    if columns is None and not errors:
        errors.append(_err(source, 0, no_header))
    _raise(errors, source)
    return out
