"""Parsers of Streamlined Sales Tax (SST) rate and boundary files.

Rate file (no header): state FIPS, jurisdiction type (45 state, 00 county,
01 city, 63 special), jurisdiction FIPS, general rate intrastate, general rate
interstate, food/drug intrastate, food/drug interstate, begin YYYYMMDD,
end YYYYMMDD.

Boundary file (no header, 89 columns; SST "Boundary Database" layout): 0 record
type (``z`` 5-digit ZIP range, ``4`` ZIP+4 range, ``a`` address range), 1 begin,
2 end, 17 ZIP low, 18 plus-4 low, 19 ZIP high, 20 plus-4 high, 21 composite
SER code, 22 state FIPS, 23 FIPS state indicator, 24 county FIPS, 25 place
FIPS, 26 place class, 27 longitude, 28 latitude, then 20 special-district
triples (code source, code, type of taxing authority) from column 29.

Pure: iterables of text lines in, row objects out; bad rows reported together
with file and line number.
"""

from __future__ import annotations

import csv
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import date
from decimal import Decimal, InvalidOperation

from levy.domain.errors import ValidationFailed
from levy.domain.periods import within

JURISDICTION_TYPES = {"45": "state", "00": "county", "01": "city", "63": "special"}
MAX_ERRORS = 50


@dataclass(frozen=True, slots=True)
class SstRate:
    state_fips: str
    type: str  # state | county | city | special
    jurisdiction_fips: str
    general_intrastate: Decimal
    general_interstate: Decimal
    food_drug_intrastate: Decimal
    food_drug_interstate: Decimal
    effective_from: date
    effective_to: date | None  # None for open-ended (29991231 / 99991231)
    source: str
    line: int

    @property
    def code(self) -> str:
        """A stable jurisdiction key: ``SST-<state fips>-<type code>-<fips>``."""
        return f"SST-{self.state_fips}-{self.type}-{self.jurisdiction_fips}"


@dataclass(frozen=True, slots=True)
class SstBoundary:
    record_type: str  # "z", "4" or "a"
    effective_from: date
    effective_to: date | None
    zip_low: str
    zip_high: str
    plus4_low: str | None
    plus4_high: str | None
    state_fips: str
    county_fips: str | None
    place_fips: str | None
    specials: tuple[tuple[str, str], ...]  # (district code, type of taxing authority)
    source: str
    line: int


def _date(text: str) -> date | None:
    text = text.strip()
    if len(text) != 8 or not text.isdigit():
        raise ValueError(f"bad date {text!r}")
    if text[:4] in ("2999", "9999"):
        return None
    return date(int(text[:4]), int(text[4:6]), int(text[6:]))


def _raise(errors: list[ValidationFailed], source: str) -> None:
    if errors:
        raise ValidationFailed.many(errors, f"{source}: {len(errors)} bad row(s); nothing imported")


def _err(source: str, line_no: int, msg: str) -> ValidationFailed:
    return ValidationFailed(f"{source}:{line_no}: {msg}", meta={"file": source, "line": line_no})


def parse_sst_rates(lines: Iterable[str], source: str) -> list[SstRate]:
    rows: list[SstRate] = []
    errors: list[ValidationFailed] = []
    for line_no, rec in enumerate(csv.reader(lines), start=1):
        if not rec or all(not c.strip() for c in rec):
            continue
        try:
            if len(rec) != 9:
                raise ValueError(f"expected 9 columns, found {len(rec)}")
            st, jt, jf = (c.strip() for c in rec[:3])
            if len(st) != 2 or not st.isdigit():
                raise ValueError(f"bad state FIPS {st!r}")
            if jt not in JURISDICTION_TYPES:
                raise ValueError(f"unknown jurisdiction type {jt!r}")
            if not jf.isdigit():
                raise ValueError(f"bad jurisdiction FIPS {jf!r}")
            try:
                rates = [Decimal(c.strip()) for c in rec[3:7]]
            except InvalidOperation:
                raise ValueError("rates must be decimals") from None
            if any(not r.is_finite() or r < 0 or r >= 1 for r in rates):
                raise ValueError("rates must be in [0, 1)")
            begin = _date(rec[7])
            if begin is None:
                raise ValueError("begin date cannot be open-ended")
            end = _date(rec[8])
            if end is not None and end < begin:
                raise ValueError("end date before begin date")
            rows.append(SstRate(st, JURISDICTION_TYPES[jt], jf, *rates, begin, end, source, line_no))
        except ValueError as e:
            errors.append(_err(source, line_no, str(e)))
            if len(errors) >= MAX_ERRORS:
                break
    _raise(errors, source)
    return rows


def parse_sst_boundaries(lines: Iterable[str], source: str) -> list[SstBoundary]:
    """ZIP-level records (``z`` and ``4``); address records (``a``) are skipped."""
    rows: list[SstBoundary] = []
    errors: list[ValidationFailed] = []
    for line_no, rec in enumerate(csv.reader(lines), start=1):
        if not rec or all(not c.strip() for c in rec):
            continue
        try:
            kind = rec[0].strip().lower()
            if kind not in ("z", "4", "a"):
                raise ValueError(f"unknown record type {rec[0]!r}")
            if kind == "a":
                continue
            if len(rec) < 29:
                raise ValueError(f"expected at least 29 columns, found {len(rec)}")
            begin = _date(rec[1])
            if begin is None:
                raise ValueError("begin date cannot be open-ended")
            end = _date(rec[2])
            zl, zh = rec[17].strip(), rec[19].strip()
            if not (len(zl) == 5 and zl.isdigit() and len(zh) == 5 and zh.isdigit() and zl <= zh):
                raise ValueError(f"bad ZIP range {zl!r}-{zh!r}")
            st = rec[22].strip()
            if len(st) != 2 or not st.isdigit():
                raise ValueError(f"bad state FIPS {st!r}")
            specials = []
            for i in range(29, len(rec) - 2, 3):
                code, typ = rec[i + 1].strip(), rec[i + 2].strip()
                if code:
                    specials.append((code, typ))
            rows.append(
                SstBoundary(
                    kind, begin, end, zl, zh,
                    rec[18].strip() or None, rec[20].strip() or None,
                    st, rec[24].strip() or None, rec[25].strip() or None, tuple(specials), source, line_no,
                )
            )
        except ValueError as e:
            errors.append(_err(source, line_no, str(e)))
            if len(errors) >= MAX_ERRORS:
                break
    _raise(errors, source)
    return rows


STATE_FIPS = {
    "01": "AL", "02": "AK", "04": "AZ", "05": "AR", "06": "CA", "08": "CO", "09": "CT", "10": "DE", "11": "DC",
    "12": "FL", "13": "GA", "15": "HI", "16": "ID", "17": "IL", "18": "IN", "19": "IA", "20": "KS", "21": "KY",
    "22": "LA", "23": "ME", "24": "MD", "25": "MA", "26": "MI", "27": "MN", "28": "MS", "29": "MO", "30": "MT",
    "31": "NE", "32": "NV", "33": "NH", "34": "NJ", "35": "NM", "36": "NY", "37": "NC", "38": "ND", "39": "OH",
    "40": "OK", "41": "OR", "42": "PA", "44": "RI", "45": "SC", "46": "SD", "47": "TN", "48": "TX", "49": "UT",
    "50": "VT", "51": "VA", "53": "WA", "54": "WV", "55": "WI", "56": "WY", "72": "PR",
}


def _covers(start: date, end: date | None, on: date) -> bool:
    return within(on, start, end)


def sst_zip_rows(rates: Iterable[SstRate], boundaries: Iterable[SstBoundary], on: date, source: str):  # type: ignore[no-untyped-def]
    """Per-ZIP rows (for :class:`RateTable`) from SST rates and 5-digit ZIP boundaries in force on ``on``.

    County, city (place) and special-district general intrastate rates are summed per ZIP; the state rate comes
    from the built-in data (the SST state row is not used). A ZIP range is expanded to each ZIP in it. Rows are
    in force from ``on`` with no end (a later import supersedes them).
    """
    from levy.domain.tax.rates import ZipRateRow

    index: dict[tuple[str, str, str], Decimal] = {}
    for r in rates:
        if _covers(r.effective_from, r.effective_to, on):
            index[(r.state_fips, r.type, r.jurisdiction_fips)] = r.general_intrastate
    out = []
    zero = Decimal(0)
    for b in boundaries:
        if b.record_type != "z" or not _covers(b.effective_from, b.effective_to, on):
            continue
        state = STATE_FIPS.get(b.state_fips)
        if state is None:
            continue
        county = index.get((b.state_fips, "county", b.county_fips or ""), zero) if b.county_fips else zero
        city = index.get((b.state_fips, "city", b.place_fips or ""), zero) if b.place_fips else zero
        special = sum((index.get((b.state_fips, "special", code), zero) for code, _ in b.specials), zero)
        region = f"FIPS {b.state_fips}{b.county_fips or ''}"
        for z in range(int(b.zip_low), int(b.zip_high) + 1):
            out.append(ZipRateRow(state, f"{z:05d}", region, zero, county, city, special, on, None, source, b.line))
    return out
