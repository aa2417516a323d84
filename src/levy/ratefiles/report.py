"""The report every rate import prints (and stores): what was read, what it
covers, and what looks wrong.

Figures: rows read, records made, states, ZIPs covered, ZIPs with several
ZIP-level candidates (told apart by city or county), place-wide records
(CDTFA cities and unincorporated areas), the effective window.

Anomalies (``--strict`` refuses an import that has any):

* ``local_tax_in_state_without_local_taxes``: a local component with a rate in
  a state the built-in data says has no local sales taxes;
* ``component_above_max_local``: a component above the state's documented
  maximum local rate (``levy/data/tax/local_rate_limits.json``);
* ``combined_above_max``: state + statewide local + components above the
  state's documented maximum combined rate;
* ``special_above_state``: a special-district component above the state rate
  (estimated ZIP tables fold districts such as tribal lands into whole ZIPs,
  giving combined rates near 17%).

* ``no_state_rate``: a per-ZIP table row stating no state rate (0) where the
  state has one on the table's date (NM, SD rows that fold everything into a
  local column): the row is NOT applied (no state rate added to it, no figure
  corrected); the ZIP gets the state rate alone and says its local rates are
  missing;
* ``components_not_summing``: a per-ZIP table row whose state, county, city
  and special rates do not add up to its combined rate: not applied either.

An anomaly needs attention. What is expected of an *estimated* source (the
per-ZIP tables fold tribal lands, villages and improvement districts into whole
ZIPs: NY Canastota Village 16%, CA 92082 Rincon Reservation 15.5%) is not an
anomaly: the rate checks ``special_above_state``, ``component_above_max_local``
and ``combined_above_max`` on an estimated record are ``expected`` notes,
counted in the report, listed by ``levy rates list``, never refused.

One anomaly per source line and kind, with the number of ZIPs (or places) it
touches. Warnings (never refused) say what else the import could not do, e.g.
``unplaced_local_taxes`` (made by the importer, see
:mod:`levy.ratefiles.sst_county`): city or special-district taxes in force that an
SST file without boundaries names but cannot place on ZIPs (not applied; its
partial records leave the ZIPs' other city and district rates in place).

Disagreements with what is already imported: for California's CDTFA table,
:func:`cdtfa_disagreements` lists the ZIP-level records whose local rate
differs from the CDTFA rate of the ZIP's city (or of its county's
unincorporated area); for ZIP-level official records,
:func:`zip_disagreements` lists the ZIPs whose local rate differs from the
other sources' on a date.

Pure: records and plain data in, a report out.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import date
from decimal import Decimal
from typing import Any

from levy.domain.tax.level_overlay import Replacement
from levy.domain.tax.local_rates import LocalRecord
from levy.domain.tax.rate_table import StateInfo, ZipPlace, ZipRateRow
from levy.domain.tax.place_names import normalise_county, normalise_place

_ZERO = Decimal(0)
_TOLERANCE = Decimal("0.00001")  # a per-ZIP table prints rates to 6 places
# Rate checks that an estimated source is expected to fail (districts folded into whole ZIPs): notes, not anomalies.
EXPECTED_OF_ESTIMATED = frozenset({"special_above_state", "component_above_max_local", "combined_above_max"})


@dataclass(frozen=True, slots=True)
class LocalLimit:
    max_local_rate: Decimal | None
    max_combined_rate: Decimal | None
    source: str


@dataclass(frozen=True, slots=True)
class Anomaly:
    kind: str
    state: str
    where: str  # first place it was seen: "ZIP 13421", "Oakland", "Kern County unincorporated area"
    line: int
    detail: str
    count: int = 1  # ZIPs / places the same source line gives it to

    def text(self) -> str:
        more = f" (and {self.count - 1} more ZIPs/places from this line)" if self.count > 1 else ""
        return f"line {self.line}: {self.state} {self.where}: {self.detail}{more}"


@dataclass(frozen=True, slots=True)
class Disagreement:
    zip5: str
    place: str  # the CDTFA place the ZIP's city or county matched, or the new record's county
    rate: Decimal  # local rate (beyond state and statewide local) of the file imported
    table_rate: Decimal  # local rate of the record already imported
    table_source: str
    label: str = "CDTFA"  # how the printed report names the file imported
    what: str = "local"  # the component types compared: "local" (all of them), "county", ...

    def text(self) -> str:
        return (
            f"ZIP {self.zip5} ({self.place}): {self.label} {self.what} {pct(self.rate)}, "
            f"{self.table_source} {self.what} {pct(self.table_rate)}"
        )


@dataclass(frozen=True)
class RateReport:
    source: str
    rows_read: int
    records: int
    states: tuple[str, ...]
    zips_covered: int
    zips_with_several_candidates: int
    places: int
    effective_from: date | None
    effective_to: date | None
    source_kinds: tuple[str, ...] = ()
    anomalies: tuple[Anomaly, ...] = ()
    warnings: tuple[str, ...] = ()
    disagreements: tuple[Disagreement, ...] = field(default=())
    expected: tuple[Anomaly, ...] = ()  # rate checks an estimated source is expected to fail (see the module doc)
    replaced: tuple[Replacement, ...] = ()  # lower-ranked components an official level replaced

    @property
    def needs_attention(self) -> bool:
        """Anything beyond figures: anomalies, warnings, disagreements, replacements."""
        return bool(self.anomalies or self.warnings or self.disagreements or self.replaced)

    def expected_counts(self) -> dict[str, int]:
        out: dict[str, int] = {}
        for a in self.expected:
            out[a.kind] = out.get(a.kind, 0) + 1
        return out

    def lines(self) -> list[str]:
        window = f"{_iso(self.effective_from)}..{_iso(self.effective_to)}"
        out = [
            f"{self.source}: {self.rows_read} rows read, {self.records} records, states {', '.join(self.states) or '-'}, "
            f"{self.zips_covered} ZIPs covered ({self.zips_with_several_candidates} with several candidates), "
            f"{self.places} place-wide records, effective {window}, kind {', '.join(self.source_kinds) or '-'}",
            f"  anomalies: {len(self.anomalies)}",
        ]
        out += [f"    {a.kind}: {a.text()}" for a in self.anomalies]
        if self.expected:
            counts = ", ".join(f"{k} {n}" for k, n in sorted(self.expected_counts().items()))
            out.append(f"  expected of an estimated table (not anomalies): {counts}")
        out += [f"  warning: {w}" for w in self.warnings]
        if self.replaced:
            out.append(f"  replaced (an official level includes what the lower-ranked record lists apart): "
                       f"{len(self.replaced)} ZIPs")
            out += [f"    {r.text()}" for r in self.replaced]
        if self.disagreements:
            out.append(f"  disagreements with imported ZIP tables: {len(self.disagreements)}")
            out += [f"    {d.text()}" for d in self.disagreements]
        return out

    def summary(self) -> dict[str, Any]:
        """What the store keeps of the report (JSON-friendly)."""
        return {
            "rows_read": self.rows_read,
            "records": self.records,
            "states": list(self.states),
            "zips_covered": self.zips_covered,
            "zips_with_several_candidates": self.zips_with_several_candidates,
            "places": self.places,
            "source_kinds": list(self.source_kinds),
            "anomalies": [
                {"kind": a.kind, "state": a.state, "where": a.where, "line": a.line, "detail": a.detail, "count": a.count}
                for a in self.anomalies
            ],
            "warnings": list(self.warnings),
            "disagreements": len(self.disagreements),
            "expected": [
                {"kind": a.kind, "state": a.state, "where": a.where, "line": a.line, "detail": a.detail, "count": a.count}
                for a in self.expected
            ],
            "replaced": [r.text() for r in self.replaced],
        }


def build_report(
    source: str,
    records: Sequence[LocalRecord],
    *,
    rows_read: int,
    states: Mapping[str, StateInfo],
    limits: Mapping[str, LocalLimit],
    warnings: Iterable[str] = (),
    disagreements: Iterable[Disagreement] = (),
    row_anomalies: Iterable[Anomaly] = (),
) -> RateReport:
    """The report of one file: its figures, the rate checks of :func:`find_anomalies`
    (those an estimated record is expected to fail apart), the rows the importer
    left out (``row_anomalies``, :func:`zip_row_anomalies`), its ``warnings``."""
    zip_keys: dict[str, set[tuple[str | None, str | None]]] = {}
    places = 0
    for r in records:
        if r.zip5 is None:
            places += 1
        elif r.plus4_low is None and r.street is None:
            zip_keys.setdefault(r.zip5, set()).add((r.city and normalise_place(r.city), r.county and normalise_county(r.county)))
        else:
            zip_keys.setdefault(r.zip5, set())
    starts = [r.effective_from for r in records]
    found, expected = [], []
    for a, kind in find_anomalies(records, states, limits, with_source_kind=True):
        (expected if kind == "estimated" and a.kind in EXPECTED_OF_ESTIMATED else found).append(a)
    open_ended = any(r.effective_to is None for r in records)
    ends = [r.effective_to for r in records if r.effective_to is not None]
    return RateReport(
        source=source,
        rows_read=rows_read,
        records=len(records),
        states=tuple(sorted({r.state for r in records})),
        zips_covered=len(zip_keys),
        zips_with_several_candidates=sum(1 for keys in zip_keys.values() if len(keys) > 1),
        places=places,
        effective_from=min(starts) if starts else None,
        effective_to=None if open_ended or not ends else max(ends),
        source_kinds=tuple(sorted({r.source_kind for r in records})),
        anomalies=tuple(sorted([*found, *row_anomalies], key=lambda a: (a.line, a.kind))),
        warnings=tuple(warnings),
        disagreements=tuple(disagreements),
        expected=tuple(expected),
    )


def zip_row_anomalies(rows: Iterable[ZipRateRow], states: Mapping[str, StateInfo]) -> tuple[list[ZipRateRow], list[Anomaly]]:
    """The rows of a per-ZIP table to apply, and one anomaly per row left out:
    ``components_not_summing`` (state + county + city + special differs from the
    stated combined rate) and ``no_state_rate`` (a 0 state rate where the state
    has one on the table's date). Such a row is neither corrected nor applied."""
    kept: list[ZipRateRow] = []
    out: list[Anomaly] = []
    for r in rows:
        info = states.get(r.state)
        state_rate = info.rate_on(r.effective_from) if info is not None else None
        where = f"ZIP {r.zip5}"
        if r.stated_combined is not None and abs(r.stated_combined - r.combined_rate) > _TOLERANCE:
            out.append(Anomaly("components_not_summing", r.state, where, r.line,
                               f"{r.region_name}: state {pct(r.state_rate)} + county {pct(r.county_rate)} + city "
                               f"{pct(r.city_rate)} + special {pct(r.special_rate)} = {pct(r.combined_rate)}, not the "
                               f"combined rate {pct(r.stated_combined)}: row not applied"))
        elif r.state_rate == 0 and state_rate is not None and state_rate.rate > 0:
            out.append(Anomaly("no_state_rate", r.state, where, r.line,
                               f"{r.region_name}: no state rate (combined {pct(r.combined_rate)}) where the "
                               f"{r.state} state rate is {pct(state_rate.rate)}: row not applied (the ZIP gets the "
                               "state rate alone and says its local rates are missing)"))
        else:
            kept.append(r)
    return kept, out


def find_anomalies(
    records: Iterable[LocalRecord], states: Mapping[str, StateInfo], limits: Mapping[str, LocalLimit],
    *, with_source_kind: bool = False,
) -> list[Any]:
    """The rate checks of the module doc, one per source line and kind; with
    ``with_source_kind``, (anomaly, the record's source kind) pairs."""
    # (kind, source, line, component code) -> the first anomaly, its source kind, and every ZIP or place it was seen at
    found: dict[tuple[str, str, int, str], tuple[Anomaly, str, set[str]]] = {}

    def add(kind: str, r: LocalRecord, code: str, detail: str) -> None:
        where = _where(r)
        seen = found.setdefault((kind, r.source, r.line, code),
                                (Anomaly(kind, r.state, where, r.line, detail), r.source_kind, set()))
        seen[2].add(where)

    for r in records:
        info = states.get(r.state)
        if info is None:
            continue
        limit = limits.get(r.state)
        state_rate = info.rate_on(r.effective_from)
        state = state_rate.rate if state_rate is not None else _ZERO
        swl = info.statewide_local_on(r.effective_from)
        for c in r.components:
            if c.rate <= 0:
                continue
            if not info.has_local_taxes:
                add("local_tax_in_state_without_local_taxes", r, c.code,
                    f"{c.type} {c.name} {pct(c.rate)} in a state with no local sales taxes")
            if limit is not None and limit.max_local_rate is not None and c.rate > limit.max_local_rate:
                add("component_above_max_local", r, c.code,
                    f"{c.type} {c.name} {pct(c.rate)} above the documented maximum local rate {pct(limit.max_local_rate)}")
            if c.type == "special" and state > 0 and c.rate > state:
                add("special_above_state", r, c.code,
                    f"special district {c.name} {pct(c.rate)} above the state rate {pct(state)}")
        if limit is not None and limit.max_combined_rate is not None:
            combined = state + (swl.rate if swl is not None else _ZERO) + r.local_rate
            if combined > limit.max_combined_rate:
                add("combined_above_max", r, "",
                    f"combined rate {pct(combined)} above the documented maximum {pct(limit.max_combined_rate)}")
    out = sorted(((replace(first, count=len(wheres)), kind) for first, kind, wheres in found.values()),
                 key=lambda pair: (pair[0].line, pair[0].kind))
    return out if with_source_kind else [a for a, _ in out]


def cdtfa_disagreements(
    cdtfa: Sequence[LocalRecord],
    imported: Iterable[LocalRecord],
    zip_places: Mapping[str, ZipPlace],
    on: date,
) -> list[Disagreement]:
    """ZIP-level records of other sources still in force on or after ``on`` (the
    CDTFA table's first day) whose local rate differs from the CDTFA place of
    the ZIP: the record's city (else the ZIP directory's city) when CDTFA lists
    it, else the unincorporated area of the ZIP's county. The ZIP's postal city
    is not always the municipality (a ZIP may straddle places), so this is a
    list to review, not a verdict."""
    cities = {normalise_place(r.city): r for r in cdtfa if r.city and not r.unincorporated}
    counties = {normalise_county(r.county): r for r in cdtfa if r.unincorporated and r.county}
    out: list[Disagreement] = []
    for rec in imported:
        if rec.state != "CA" or rec.zip5 is None or rec.plus4_low is not None or rec.street is not None:
            continue
        if rec.effective_to is not None and rec.effective_to < on:
            continue
        place = zip_places.get(rec.zip5)
        city = rec.city or (place.city if place else None)
        county = rec.county or (place.county if place else None)
        match = cities.get(normalise_place(city)) if city else None
        label = city or ""
        if match is None and county:
            match = counties.get(normalise_county(county))
            label = f"{county} unincorporated area"
        if match is None:
            continue
        if match.local_rate != rec.local_rate:
            out.append(Disagreement(rec.zip5, label, match.local_rate, rec.local_rate, rec.source))
    return sorted(out, key=lambda d: d.zip5)


def zip_disagreements(
    new: Sequence[LocalRecord], imported: Iterable[LocalRecord], on: date, label: str
) -> list[Disagreement]:
    """ZIPs where the new file's default ZIP-level record in force on ``on`` (its
    primary one, else its first) has another local rate than a ZIP-level record
    of another source in force that day: compared on the component types both
    records state (a partial record's ``scope``, e.g. the county rate only)."""
    mine: dict[tuple[str, str], LocalRecord] = {}
    for r in new:
        if r.zip5 is not None and r.plus4_low is None and r.street is None and r.covers(on):
            key = (r.state, r.zip5)
            if key not in mine or (r.primary and not mine[key].primary):
                mine[key] = r
    out: list[Disagreement] = []
    for rec in imported:
        if rec.zip5 is None or rec.plus4_low is not None or rec.street is not None or not rec.covers(on):
            continue
        m = mine.get((rec.state, rec.zip5))
        if m is None or m.source == rec.source:
            continue
        types = _compared_types(m, rec)
        if types == ():
            continue
        rate, theirs = _rate_of(m, types), _rate_of(rec, types)
        if rate != theirs:
            what = " and ".join(types) if types else "local"
            out.append(Disagreement(rec.zip5, m.county or m.city or "", rate, theirs, rec.source, label, what))
    return sorted(out, key=lambda d: d.zip5)


def _compared_types(a: LocalRecord, b: LocalRecord) -> tuple[str, ...] | None:
    """The component types both records state: None for every type (two full
    records), () for none in common."""
    if not a.scope or not b.scope:
        return a.scope or b.scope or None
    return tuple(t for t in a.scope if t in b.scope)


def _rate_of(r: LocalRecord, types: tuple[str, ...] | None) -> Decimal:
    if types is None:
        return r.local_rate
    return sum((c.rate for c in r.components if c.type in types), _ZERO)


def _where(r: LocalRecord) -> str:
    if r.zip5 is not None:
        return f"ZIP {r.zip5}"
    if r.unincorporated:
        return f"{r.county} unincorporated area"
    return r.city or r.county or "?"


def pct(rate: Decimal) -> str:
    text = f"{(rate * 100).normalize():f}"
    return f"{text}%"


def _iso(d: date | None) -> str:
    return d.isoformat() if d else ""
