"""Parser of California's CDTFA table "California City & County Sales & Use Tax
Rates" (``SalesTaxRates1-1-26.csv``).

The table gives, for each incorporated city and for each county's
unincorporated area, the COMBINED rate only (state 6%, statewide local 1.25%
and every district tax together). Both shapes are accepted:

* the raw download: two title lines, then ``Location,Rate,County,Type,Notes``,
  rates written as binary floats (``7.7499999999999999E-2``);
* a cleaned copy: ``Location,Rate,Rate_Percent,County,Type,Notes``.

Rates are rounded to five decimal places (0.001 percentage point, the finest
step CDTFA publishes); a rate farther than 1e-9 from that step is an error.

Each row becomes one place-wide :class:`LocalRecord` (``zip5=None``):

* ``Type`` ``City``: ``city`` = the location, ``county`` = ``<County> County``;
* ``Type`` ``County`` (``Alameda County`` or ``Kern County Unincorporated
  Area``): ``unincorporated=True`` for that county;
* rows whose note says "Please refer to the applicable tax rates ..." carry no
  rate (the county is split, see its "Unincorporated Area" row) and are skipped.

Components: combined − state rate − statewide local portion (from the built-in
data, handed in) = the place's district taxes, ONE ``special`` component named
``<place> district taxes`` (``<County> County unincorporated area district
taxes``) and coded ``US-SP-CA-<SLUG of that name>``: the table does not break
the districts down, so neither can we. A place at exactly the statewide rate
(7.25%) gets no component. Source kind ``official_zip``: the table is the
state's own, but it is keyed by city and county, not by address, so it is not
address-level; it ranks with official ZIP-level data.

Pure: text lines in, records out; bad rows reported together (file and line).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from datetime import date
from decimal import Decimal, InvalidOperation

from levy.domain.errors import ValidationFailed
from levy.domain.tax.local_rates import Component, LocalRecord
from levy.domain.tax.rate_table import slug
from levy.ratefiles.headed import Columns, parse_headed_csv

STATE = "CA"
_STEP = Decimal("0.00001")
_FLOAT_SLACK = Decimal("1e-9")
_NAME_DATE_RE = re.compile(r"(?<![0-9])(1[0-2]|0?[1-9])-([0-3]?[0-9])-([0-9]{2}|20[0-9]{2})(?![0-9])")
_SKIP_NOTE = "please refer to the applicable tax rates"


def effective_from_name(name: str) -> date:
    """``SalesTaxRates1-1-26.csv`` -> 2026-01-01 (month-day-year in the name)."""
    m = _NAME_DATE_RE.search(name)
    if m is None:
        raise ValidationFailed(
            f"{name}: cannot tell the effective date from the file name (expected e.g. SalesTaxRates1-1-26.csv); "
            "use --effective-from"
        )
    year = int(m.group(3))
    try:
        return date(year + 2000 if year < 100 else year, int(m.group(1)), int(m.group(2)))
    except ValueError:
        raise ValidationFailed(f"{name}: {m.group(0)} is not a date; use --effective-from") from None


def looks_like_cdtfa(first_lines: Iterable[str]) -> bool:
    """True if one of the first lines is the table's ``Location,Rate,...`` header."""
    return any(line.lstrip("\ufeff").startswith("Location,Rate,") for line in first_lines)


def district_name(place: str) -> str:
    return f"{place} district taxes"


def parse_cdtfa(
    lines: Iterable[str],
    source: str,
    *,
    base_rate: Decimal,
    effective_from: date | None = None,
    effective_to: date | None = None,
) -> list[LocalRecord]:
    """Parse the table; ``base_rate`` is the state rate plus the statewide local
    portion in force on ``effective_from`` (7.25% in 2026), taken out of each
    combined rate."""
    start = effective_from or effective_from_name(source)

    def header(cells: list[str]) -> Columns | None:
        if cells[:2] != ["Location", "Rate"]:
            return None  # a title line
        columns = {name: i for i, name in enumerate(cells)}
        missing = {"County", "Type"} - columns.keys()
        if missing:
            raise ValueError(f"header lacks {', '.join(sorted(missing))}")
        return columns

    def row(cells: list[str], columns: Columns, line_no: int) -> LocalRecord | None:
        if any(c.lower().startswith(_SKIP_NOTE) for c in cells):
            return None  # "Please refer to ...": no rate of its own
        return _record(cells, columns, source, line_no, base_rate, start, effective_to)

    return parse_headed_csv(
        lines, source, header=header, row=row, no_header="no 'Location,Rate,...' header found: not a CDTFA rate table"
    )


def _record(
    cells: list[str],
    columns: Columns,
    source: str,
    line_no: int,
    base_rate: Decimal,
    start: date,
    end: date | None,
) -> LocalRecord:
    def cell(name: str) -> str:
        i = columns[name]
        return cells[i] if i < len(cells) else ""

    location, kind, county = cell("Location"), cell("Type"), cell("County")
    if not location:
        raise ValueError("empty Location")
    if not county:
        raise ValueError(f"{location}: empty County")
    combined = _rate(cell("Rate"))
    district = combined - base_rate
    if district < 0:
        raise ValueError(f"{location}: rate {combined} is below the statewide rate {base_rate}")
    county_name = county if county.lower().endswith(" county") else f"{county} County"
    if kind == "City":
        place, city, unincorporated = location, location, False
    elif kind == "County":
        place, city, unincorporated = f"{county_name} unincorporated area", None, True
    else:
        raise ValueError(f"{location}: unknown Type {kind!r} (expected City or County)")
    components: tuple[Component, ...] = ()
    if district > 0:
        name = district_name(place)
        components = (Component("special", name, district, f"US-SP-{STATE}-{slug(name)}"),)
    return LocalRecord(
        state=STATE,
        zip5=None,
        components=components,
        effective_from=start,
        effective_to=end,
        source=source,
        source_kind="official_zip",
        city=city,
        county=county_name,
        unincorporated=unincorporated,
        line=line_no,
    )


def _rate(text: str) -> Decimal:
    try:
        value = Decimal(text)
    except InvalidOperation:
        raise ValueError(f"rate {text!r} is not a number") from None
    if not value.is_finite() or value < 0 or value >= 1:
        raise ValueError(f"rate {text!r} must be a fraction in [0, 1) (e.g. 0.0775)")
    rounded = value.quantize(_STEP)
    if abs(rounded - value) > _FLOAT_SLACK:
        raise ValueError(f"rate {text!r} is not a multiple of 0.001 percentage point")
    return rounded.normalize() if rounded else Decimal(0)

