"""Parsers of Streamlined Sales Tax (SST) rate and boundary files.

Rate file (no header): state FIPS, jurisdiction type (45 state, 00 county,
01 city, 63 special), jurisdiction FIPS, general rate intrastate, general rate
interstate, food/drug intrastate, food/drug interstate, begin YYYYMMDD,
end YYYYMMDD.

Boundary file (no header, 89 columns; SST "Boundary Database" layout): 0 record
type (``z`` 5-digit ZIP range, ``4`` ZIP+4 range, ``a`` address range), 1 begin,
2 end, 3 low address, 4 high address, 5 odd/even indicator (O, E, B), 6 street
pre-directional, 7 street name, 8 street suffix, 9 post-directional, 10-13
secondary address abbreviation, low, high and odd/even (suites or units of the
range placed apart), 14 city name, 15 ZIP code and 16 plus-4 (address
records), 17 ZIP low, 18 plus-4 low, 19 ZIP high, 20 plus-4 high, 21 composite
SER code, 22 state FIPS, 23 FIPS state indicator, 24 county FIPS, 25 place
FIPS, 26 place class, 27 longitude, 28 latitude, then 20 special-district
triples (code source, code, type of taxing authority) from column 29.

Pure: iterables of text lines in, row objects out; bad rows reported together
with file and line number.
"""

from __future__ import annotations

import csv
from sys import intern
from bisect import bisect_left, bisect_right
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from datetime import date, timedelta
from decimal import Decimal, InvalidOperation
from functools import lru_cache
from typing import NamedTuple, TypeVar

from levy.domain.errors import ValidationFailed
from levy.domain.periods import within
from levy.domain.tax.local_rates import Component, LocalRecord, StreetRange, UnitRange
from levy.domain.tax.place_names import normalise_unit_abbr
from levy.domain.tax.rate_table import StateInfo, ZipPlace, slug, without_statewide_local

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


class SstBoundary(NamedTuple):
    """One record of a boundary file as parsed. A named tuple rather than a frozen dataclass: a
    national file is millions of them, and a frozen dataclass's ``__init__`` (one ``object.__setattr__``
    per field) took 1.8 us a record against 0.3 us (2026-11-29; 1.5 s of a million-record import)."""

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
    street: StreetRange | None = None  # "a" records: the address range (fields as the file writes them)
    city: str | None = None  # "a" records: the city name column


@lru_cache(maxsize=4096)
def _date(text: str) -> date | None:
    text = text.strip()
    if len(text) != 8 or not text.isdigit():
        raise ValueError(f"bad date {text!r}")
    if text[:4] in ("2999", "9999"):
        return None
    return date(int(text[:4]), int(text[4:6]), int(text[6:]))



def _period(begin_text: str, end_text: str) -> tuple[date, date | None]:
    """A record's begin and end dates (YYYYMMDD; an end of 2999... or 9999... is open)."""
    begin = _date(begin_text)
    if begin is None:
        raise ValueError("begin date cannot be open-ended")
    end = _date(end_text)
    if end is not None and end < begin:
        raise ValueError("end date before begin date")
    return begin, end


def _raise(errors: list[ValidationFailed], source: str) -> None:
    if errors:
        raise ValidationFailed.many(errors, f"{source}: {len(errors)} bad row(s); nothing imported")


def _err(source: str, line_no: int, msg: str) -> ValidationFailed:
    return ValidationFailed(f"{source}:{line_no}: {msg}", meta={"file": source, "line": line_no})


_Row = TypeVar("_Row")


def _each_row(records: Iterable[list[str]], source: str, parse: Callable[[list[str], int, str], _Row]) -> list[_Row]:
    """``parse(record, line number, source)`` of every record that is not blank; a record it refuses
    (``ValueError``) is an error of its line, and every error (up to :data:`MAX_ERRORS`) is raised
    together once the file is read: nothing is returned then."""
    rows: list[_Row] = []
    errors: list[ValidationFailed] = []
    for line_no, rec in enumerate(records, start=1):
        if not rec or (not rec[0].strip() and all(not c.strip() for c in rec)):
            continue
        try:
            rows.append(parse(rec, line_no, source))
        except ValueError as e:
            errors.append(_err(source, line_no, str(e)))
            if len(errors) >= MAX_ERRORS:
                break
    _raise(errors, source)
    return rows


def parse_sst_rates(lines: Iterable[str], source: str) -> list[SstRate]:
    return _each_row(csv.reader(lines), source, _rate_row)


def _rate_row(rec: list[str], line_no: int, source: str) -> SstRate:
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
    begin, end = _period(rec[7], rec[8])
    return SstRate(st, JURISDICTION_TYPES[jt], jf, *rates, begin, end, source, line_no)


_PARITY = {"O": "odd", "E": "even", "B": "both", "": "both"}


# Parsed strings are interned: a boundary file repeats the same ZIPs, extensions,
# street names and suffixes over hundreds of thousands of records kept in memory.
def _zip(text: str, what: str) -> str:
    text = text.strip()
    if len(text) != 5 or not text.isdigit():
        raise ValueError(f"bad {what} {text!r}")
    return intern(text)


def _plus4(text: str) -> str | None:
    text = text.strip()
    if not text:
        return None
    if len(text) != 4 or not text.isdigit():
        raise ValueError(f"bad ZIP+4 extension {text!r}")
    return intern(text)


def _street(rec: list[str]) -> StreetRange:
    low, high, parity = rec[3].strip(), rec[4].strip(), rec[5].strip().upper()
    if not (low.isdigit() and high.isdigit() and int(low) <= int(high)):
        raise ValueError(f"bad address range {low!r}-{high!r}")
    if parity not in _PARITY:
        raise ValueError(f"bad odd/even indicator {rec[5]!r}")
    name = rec[7].strip()
    if not name:
        raise ValueError("address record without a street name")
    return StreetRange(int(low), int(high), _PARITY[parity], intern(name), intern(rec[6].strip()),  # type: ignore[arg-type]
                       intern(rec[8].strip()), intern(rec[9].strip()), _unit(rec))


def _unit(rec: list[str]) -> UnitRange | None:
    """The secondary range of an address record (columns 10-13), None when it has none."""
    if not (rec[10] or rec[11] or rec[12] or rec[13]):
        return None  # the common case, without the stripping below
    abbr, low, high, parity = (rec[i].strip().upper() for i in (10, 11, 12, 13))
    if not (low or high):
        if abbr or parity:
            raise ValueError(f"secondary address {abbr!r} without its low and high")
        return None
    low, high = low or high, high or low
    if parity not in _PARITY:
        raise ValueError(f"bad secondary odd/even indicator {rec[13]!r}")
    if low.isdigit() != high.isdigit() or (low.isdigit() and int(low) > int(high)) or (
            not low.isdigit() and (len(low) != len(high) or low > high)):
        raise ValueError(f"bad secondary address range {low!r}-{high!r}")
    return UnitRange(intern(normalise_unit_abbr(abbr)), intern(low), intern(high), _PARITY[parity])  # type: ignore[arg-type]


def parse_sst_boundaries(lines: Iterable[str], source: str) -> list[SstBoundary]:
    """Every record: ``z`` (5-digit ZIP range), ``4`` (ZIP+4 range) and ``a``
    (address range: columns 3-9 low, high, odd/even, pre-directional, street
    name, suffix, post-directional; 14 city; 15 ZIP, else 17)."""
    return _each_row(_boundary_fields(lines), source, _boundary_row)


def _boundary_row(rec: list[str], line_no: int, source: str) -> SstBoundary:
    kind = rec[0].strip().lower()
    if kind not in ("z", "4", "a"):
        raise ValueError(f"unknown record type {rec[0]!r}")
    if len(rec) < 29:
        raise ValueError(f"expected at least 29 columns, found {len(rec)}")
    begin, end = _period(rec[1], rec[2])
    street = city = None
    if kind == "a":
        street = _street(rec)
        zl = zh = _zip(rec[15] if rec[15].strip() else rec[17], "ZIP code")
        pl = ph = None
        city = intern(rec[14].strip()) or None
    else:
        zl, zh = _zip(rec[17], "ZIP low"), _zip(rec[19], "ZIP high")
        if zl > zh:
            raise ValueError(f"bad ZIP range {zl!r}-{zh!r}")
        pl, ph = _plus4(rec[18]), _plus4(rec[20])
        if kind == "4" and (pl is None or ph is None or (zl == zh and pl > ph)):
            raise ValueError(f"bad ZIP+4 range {zl}-{rec[18]!r}..{zh}-{rec[20]!r}")
    st = rec[22].strip()
    if len(st) != 2 or not st.isdigit():
        raise ValueError(f"bad state FIPS {st!r}")
    specials = []
    if any(rec[29:]):
        for i in range(29, len(rec) - 2, 3):
            code, typ = rec[i + 1].strip(), rec[i + 2].strip()
            if code:
                specials.append((code, typ))
    return SstBoundary(
        kind, begin, end, zl, zh, pl, ph,
        st, rec[24].strip() or None, rec[25].strip() or None, tuple(specials), source, line_no,
        street, city,
    )


_HEAD = 29  # the columns before the special districts


def _boundary_fields(lines: Iterable[str]) -> Iterable[list[str]]:
    """The fields of each line as ``csv.reader`` gives them, cut short where the rest is empty.

    A file without a quote character is plain comma-separated text: each line is split at its
    first 29 commas, and when what follows holds nothing but commas (no special district, the
    common case) one empty field stands for the remaining 60 (the parser reads no further than
    ``any(rec[29:])``). Any quote in the file: ``csv.reader`` for all of it.

    Measured on 200,000 boundary records of bench/sst_synthetic.py (2026-11-28): 0.4 s of CPU
    against 0.95 s for ``csv.reader``; tests/unit/tax/test_sst_fast_parse.py compares the records
    parsed both ways."""
    lines = lines if isinstance(lines, list) else list(lines)
    if any('"' in line for line in lines):
        return csv.reader(lines)
    return (_cut(line) for line in lines)


def _cut(line: str) -> list[str]:
    fields = line.split(",", _HEAD)
    if len(fields) > _HEAD:
        if fields[_HEAD].strip(","):
            return line.split(",")
        fields[_HEAD] = ""
    return fields


STATE_FIPS = {
    "01": "AL", "02": "AK", "04": "AZ", "05": "AR", "06": "CA", "08": "CO", "09": "CT", "10": "DE", "11": "DC",
    "12": "FL", "13": "GA", "15": "HI", "16": "ID", "17": "IL", "18": "IN", "19": "IA", "20": "KS", "21": "KY",
    "22": "LA", "23": "ME", "24": "MD", "25": "MA", "26": "MI", "27": "MN", "28": "MS", "29": "MO", "30": "MT",
    "31": "NE", "32": "NV", "33": "NH", "34": "NJ", "35": "NM", "36": "NY", "37": "NC", "38": "ND", "39": "OH",
    "40": "OK", "41": "OR", "42": "PA", "44": "RI", "45": "SC", "46": "SD", "47": "TN", "48": "TX", "49": "UT",
    "50": "VT", "51": "VA", "53": "WA", "54": "WV", "55": "WI", "56": "WY", "72": "PR",
}


_ONE_DAY = timedelta(days=1)


def sst_records(
    rates: Iterable[SstRate],
    boundaries: Sequence[SstBoundary],
    source: str,
    states: Mapping[str, StateInfo],
    directory: Mapping[str, ZipPlace],
) -> list[LocalRecord]:
    """LocalRecords of SST boundary records joined to the SST rate file.

    ``z`` records become ZIP-level ``official_zip`` records (primary: the whole
    ZIP), ``4`` and ``a`` records ZIP+4 and street-range ``official_address``
    records; each keeps its own effective window, cut where a rate of its
    county, place or districts changes (the general intrastate rate in force
    over each piece). A range of ZIPs is expanded to the ZIPs of the ZIP
    directory in it (and its two ends). The state rate comes from the built-in
    data (the SST state row is not used), and the statewide mandatory local
    portion is taken out of the county component as for every source.
    County and place names come from the ZIP directory (the boundary file has
    FIPS codes only): the county (city) most of the FIPS code's ZIPs are in.
    Components carry the SST authority ``<state FIPS>-<type>-<FIPS>`` (type
    ``00`` county, ``01`` city, ``63`` special).
    """
    by_key: dict[tuple[str, str, str], list[SstRate]] = {}
    for r in rates:
        if r.type != "state":
            by_key.setdefault((r.state_fips, r.type, r.jurisdiction_fips), []).append(r)
    names = _fips_names(boundaries, directory)
    zips_by_state: dict[str, list[str]] = {}
    for z, place in directory.items():
        zips_by_state.setdefault(place.state, []).append(z)
    for v in zips_by_state.values():
        v.sort()
    components: dict[tuple[str, str, str, Decimal], Component] = {}
    # The dated component sets of one authority set over one window: most records share theirs.
    windows: dict[tuple[object, ...], list[tuple[date, date | None, tuple[Component, ...]]]] = {}
    out: list[LocalRecord] = []
    for b in boundaries:
        state = STATE_FIPS.get(b.state_fips)
        st = states.get(state) if state else None
        if st is None:
            continue
        key = (b.state_fips, b.county_fips, b.place_fips, b.specials, b.effective_from, b.effective_to)
        pieces = windows.get(key)
        if pieces is None:
            keys = []
            if b.county_fips:
                keys.append((b.state_fips, "county", b.county_fips))
            if b.place_fips:
                keys.append((b.state_fips, "city", b.place_fips))
            keys.extend((b.state_fips, "special", code) for code, _ in b.specials)
            relevant = [r for k in keys for r in by_key.get(k, ())]
            pieces = windows[key] = []
            for start, end in _pieces(b.effective_from, b.effective_to, relevant):
                comps = []
                for k in keys:
                    rate = _rate_on(by_key.get(k, ()), start)
                    if rate:
                        comp = components.get((*k, rate))
                        if comp is None:
                            comp = components[(*k, rate)] = _component(state, k, rate, names)  # type: ignore[arg-type]
                        comps.append(comp)
                pieces.append((start, end, without_statewide_local(st, tuple(comps), start)))
        for start, end, local in pieces:
            out.extend(_expand(b, state, local, start, end, source, zips_by_state.get(state, [])))  # type: ignore[arg-type]
    return out + county_candidates(out, source)


def county_candidates(records: Sequence[LocalRecord], source: str) -> list[LocalRecord]:
    """ZIP-level candidates of the ZIPs that have ZIP+4 or street records but no ``z`` record:
    one per county the ZIP's records place it in (a ZIP across a county line gets one for each),
    with the jurisdictions most of that county's records in the ZIP have, in each effective
    window; the county with the most records is the primary one (the first seen on a tie).
    They let an address given by its 5-digit ZIP alone resolve from the official data
    (``zip5``, "among N candidates" when the ZIP is in several counties)."""
    whole = {(r.state, r.zip5) for r in records if r.plus4_low is None and r.street is None}
    groups: dict[tuple[str, str, date, date | None], dict[str, Counter[tuple[Component, ...]]]] = {}
    county_of: dict[tuple[Component, ...], str] = {}  # a set's county authority ("" for none), found once per set
    for r in records:
        if (r.state, r.zip5) in whole or r.zip5 is None:
            continue
        county = county_of.get(r.components)
        if county is None:
            county = county_of[r.components] = next((c.authority for c in r.components if c.type == "county"), "")
        # No setdefault(key, Counter()): it would make a Counter for every record (1.6 s a million).
        window = groups.get(key := (r.state, r.zip5, r.effective_from, r.effective_to))
        if window is None:
            window = groups[key] = {}
        sets = window.get(county)
        if sets is None:
            sets = window[county] = Counter()
        sets[r.components] += 1
    out = []
    for (state, zip5, start, end), counties in groups.items():
        ranked = sorted(counties.values(), key=lambda c: -sum(c.values()))  # stable: the first seen on a tie
        for i, sets in enumerate(ranked):
            comps = sets.most_common(1)[0][0]
            name = next((c.name for c in comps if c.type == "county"), None)
            out.append(LocalRecord(state=state, zip5=zip5, components=comps, effective_from=start, effective_to=end,
                                   source=source, source_kind="official_zip", county=name, primary=i == 0))
    return out


def _rate_on(rows: Iterable[SstRate], on: date) -> Decimal:
    best: SstRate | None = None
    for r in rows:
        if within(on, r.effective_from, r.effective_to) and (best is None or r.effective_from > best.effective_from):
            best = r
    return best.general_intrastate if best is not None else Decimal(0)


def _pieces(start: date, end: date | None, rates: Sequence[SstRate]) -> list[tuple[date, date | None]]:
    """[start, end] cut where one of ``rates`` starts or ends inside it."""
    cuts = {start}
    for r in rates:
        for day in (r.effective_from, r.effective_to + _ONE_DAY if r.effective_to else None):
            if day is not None and start < day and (end is None or day <= end):
                cuts.add(day)
    ordered = sorted(cuts)
    return [(d, ordered[i + 1] - _ONE_DAY if i + 1 < len(ordered) else end) for i, d in enumerate(ordered)]


def _fips_names(boundaries: Iterable[SstBoundary], directory: Mapping[str, ZipPlace]) -> dict[tuple[str, str, str], str]:
    """A name for each county and place FIPS code of the file, from the ZIP directory.

    The directory names one county and one (postal) city per ZIP, so only the
    county (place) code most of a ZIP's records carry votes for that ZIP's
    names (a ZIP whose ZIP+4 records are mostly in Ramsey County and a few in
    Dakota County names Ramsey's code, not Dakota's); each code takes the name
    most of its ZIPs give it (an address record's own city name is a vote too).
    """
    per_zip: dict[tuple[str, str], tuple[Counter[str], Counter[str]]] = {}
    votes: dict[tuple[str, str, str], Counter[str]] = {}
    for b in boundaries:
        # Not setdefault(key, (Counter(), Counter())): that makes two Counters for every record.
        found = per_zip.get(key := (b.state_fips, b.zip_low))
        if found is None:
            found = per_zip[key] = (Counter(), Counter())
        counties, places = found
        if b.county_fips:
            counties[b.county_fips] += 1
        if b.place_fips:
            places[b.place_fips] += 1
            if b.city:
                city_votes = votes.get(vote := (b.state_fips, "city", b.place_fips))
                if city_votes is None:
                    city_votes = votes[vote] = Counter()
                city_votes[b.city.title()] += 1
    for (fips, zip5), (counties, places) in per_zip.items():
        place = directory.get(zip5)
        if place is None or STATE_FIPS.get(fips) != place.state:
            continue
        if counties and place.county:
            votes.setdefault((fips, "county", counties.most_common(1)[0][0]), Counter())[place.county] += 1
        if places and place.city:
            votes.setdefault((fips, "city", places.most_common(1)[0][0]), Counter())[place.city] += 1
    return {k: v.most_common(1)[0][0] for k, v in votes.items() if v}


_TYPE_CODES = {"county": "00", "city": "01", "special": "63"}
_CODE_PREFIX = {"county": "CO", "city": "CI", "special": "SP"}


def _component(state: str, key: tuple[str, str, str], rate: Decimal, names: Mapping[tuple[str, str, str], str]) -> Component:
    fips, kind, code = key
    name = names.get(key) or {"county": f"County {code}", "city": f"Place {code}", "special": f"Special district {code}"}[kind]
    slug_name = code if kind == "special" else slug(name)
    return Component(kind, name, rate, f"US-{_CODE_PREFIX[kind]}-{state}-{slug_name}", f"{fips}-{_TYPE_CODES[kind]}-{code}")  # type: ignore[arg-type]


def _expand(
    b: SstBoundary, state: str, comps: tuple[Component, ...], start: date, end: date | None, source: str,
    state_zips: Sequence[str],
) -> Iterator[LocalRecord]:
    # One LocalRecord(...) call per kind, its keywords written out (a helper taking **kw cost 0.4 us a
    # record more: 0.4 s of a million-record import).
    if b.record_type == "a":
        yield LocalRecord(state=state, zip5=b.zip_low, components=comps, effective_from=start, effective_to=end,
                          source=source, source_kind="official_address", street=b.street, city=b.city, line=b.line)
        return
    if b.zip_low == b.zip_high:
        zips = [b.zip_low]
    else:
        lo, hi = bisect_left(state_zips, b.zip_low), bisect_right(state_zips, b.zip_high)
        zips = sorted({b.zip_low, b.zip_high, *state_zips[lo:hi]})
    for z in zips:
        if b.record_type == "z":
            yield LocalRecord(state=state, zip5=z, components=comps, effective_from=start, effective_to=end,
                              source=source, source_kind="official_zip", primary=True, line=b.line)
        else:
            yield LocalRecord(state=state, zip5=z, components=comps, effective_from=start, effective_to=end,
                              source=source, source_kind="official_address",
                              plus4_low=b.plus4_low if z == b.zip_low else "0000",
                              plus4_high=b.plus4_high if z == b.zip_high else "9999", line=b.line)
