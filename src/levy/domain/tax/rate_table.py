"""Jurisdictions and rates: an immutable in-memory table, O(1) lookups.

State level comes from the built-in data (``levy/data/tax/state_rates.json``),
local levels (county, city, special district) from imported records
(:mod:`levy.domain.tax.local_rates`: by street range, ZIP+4 range, ZIP or
place, resolved in the order that module documents). Jurisdiction codes:

* state ``US-ST-CA``; a statewide mandatory local portion ``US-ST-CA-LOCAL``
  (typed ``county`` or ``special`` as the data says; it follows the state for
  registration);
* county ``US-CO-<ST>-<SLUG>``, city ``US-CI-<ST>-<SLUG>``, special district
  ``US-SP-<ST>-<SLUG>``, where SLUG is the uppercase name with runs of
  non-alphanumerics replaced by ``_`` (e.g. ``US-CO-NY-NEW_YORK_COUNTY``).

This module does no I/O: the adapter (:mod:`levy.ratefiles.builtin`) reads the
files and hands plain rows in.
"""

from __future__ import annotations

import re
from bisect import bisect_right
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field, replace
from datetime import date
from decimal import Decimal
from functools import lru_cache
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, Protocol, TypeVar

from levy.domain.errors import ValidationFailed
from levy.domain.memo import BoundedMemo
from levy.domain.periods import Dated
from levy.domain.tax.level_overlay import LevelInclusion, widen_official_levels
from levy.domain.tax.local_rates import SOURCE_PRECEDENCE, Component, LocalRecord, ResolutionLevel, StreetRange
from levy.domain.tax.model import Address, JurisdictionType
from levy.domain.tax.place_names import (
    DIRECTIONALS,
    SUFFIXES,
    StreetAddress,
    normalise_county,
    normalise_place,
    normalise_street_part,
    parse_line1,
)

_ZERO = Decimal(0)
_T = TypeVar("_T")
_SLUG_RE = re.compile(r"[^A-Z0-9]+")
_ZIP_RE = re.compile(r"([0-9]{5})(?:-?([0-9]{4}))?\Z")
# Bound on the resolutions a table keeps (a few hundred bytes each).
RESOLUTION_CACHE_SIZE = 20_000


@lru_cache(maxsize=65_536)
def slug(name: str) -> str:
    return _SLUG_RE.sub("_", name.upper()).strip("_")


@dataclass(frozen=True, slots=True)
class DatedRate(Dated):
    rate: Decimal
    effective_from: date
    effective_to: date | None
    source: str


@dataclass(frozen=True, slots=True)
class StatewideLocal(Dated):
    name: str
    type: JurisdictionType
    rate: Decimal
    effective_from: date
    effective_to: date | None
    source: str


@dataclass(frozen=True, slots=True)
class StateInfo:
    code: str  # "CA"
    name: str
    has_sales_tax: bool
    has_local_taxes: bool
    rates: tuple[DatedRate, ...]
    statewide_local: tuple[StatewideLocal, ...] = ()
    no_tax_rule: str | None = None

    def rate_on(self, on: date) -> DatedRate | None:
        for r in self.rates:
            if r.covers(on):
                return r
        return None

    def statewide_local_on(self, on: date) -> StatewideLocal | None:
        for r in self.statewide_local:
            if r.covers(on):
                return r
        return None


@dataclass(frozen=True, slots=True)
class ZipPlace:
    """What a ZIP-to-place directory (the ``zipcodes`` package) knows of a ZIP."""

    state: str
    county: str | None
    city: str | None


@dataclass(frozen=True, slots=True)
class ZipRateRow:
    """One row of a per-ZIP rate table (see :mod:`levy.ratefiles.zip5`)."""

    state: str
    zip5: str
    region_name: str
    state_rate: Decimal
    county_rate: Decimal
    city_rate: Decimal
    special_rate: Decimal
    effective_from: date
    effective_to: date | None
    source: str
    line: int = 0
    stated_combined: Decimal | None = None  # the file's combined rate column (None: not kept)

    @property
    def combined_rate(self) -> Decimal:
        return self.state_rate + self.county_rate + self.city_rate + self.special_rate


@dataclass(frozen=True, slots=True)
class JurisdictionRate:
    code: str
    name: str
    type: JurisdictionType
    rate: Decimal
    state: str
    statewide: bool = False  # the state itself or its statewide mandatory local portion
    source: str = ""
    # Which address put the row on the line (levy.domain.tax.sourcing): "origin", "destination", or "" (no ship-from).
    sourcing: str = ""


@dataclass(frozen=True, slots=True)
class Resolution:
    """Jurisdictions reached by an address on a date.

    ``supported`` is False for addresses outside the US (zero tax); ``details``
    explain anything a caller must know (no postal code, local rates missing).
    ``level`` is how precisely the local rows were found (one of
    :data:`~levy.domain.tax.local_rates.RESOLUTION_LEVELS`) and ``how`` says it
    in words (the record's range or city, and its source).
    """

    state: str | None
    rows: tuple[JurisdictionRate, ...]
    details: tuple[str, ...] = ()
    supported: bool = True
    country: str = "US"
    local_missing: bool = False
    level: ResolutionLevel = "state"
    how: str = ""
    # Outside the US: the country's (and province's) tax levels, a
    # levy.domain.tax.international.Place; None for a US address.
    place: Place | None = None


@dataclass(frozen=True, slots=True)
class _Candidate:
    """An indexed record and its jurisdiction rows (the index lists candidates best first, see :func:`_best_first`)."""

    record: LocalRecord
    rows: tuple[JurisdictionRate, ...]


@dataclass(frozen=True, slots=True)
class _Plus4Ranges:
    """A ZIP's ZIP+4 range records ordered by their low end, for bisection:
    ``reach[i]`` is the highest high end among the first ``i + 1`` ranges (a scan
    back from a ZIP+4 stops where no earlier range reaches it) and ``best[i]``
    the place of range ``i`` in the ZIP's best-first order (lower is better)."""

    lows: tuple[str, ...]
    reach: tuple[str, ...]
    best: tuple[int, ...]
    cands: tuple[_Candidate, ...]

    @classmethod
    def of(cls, best_first: tuple[_Candidate, ...]) -> _Plus4Ranges | None:
        if not best_first:
            return None
        ordered = sorted(range(len(best_first)), key=lambda i: best_first[i].record.plus4_low)  # type: ignore[arg-type, return-value]
        cands = tuple(best_first[i] for i in ordered)
        reach: list[str] = []
        for c in cands:
            high = c.record.plus4_high or ""
            reach.append(max(reach[-1], high) if reach else high)
        return cls(tuple(c.record.plus4_low or "" for c in cands), tuple(reach), tuple(ordered), cands)

    def find(self, plus4: str, on: date) -> _Candidate | None:
        """The best range containing ``plus4`` in force on ``on``."""
        found: tuple[int, _Candidate] | None = None
        i = bisect_right(self.lows, plus4) - 1
        while i >= 0 and self.reach[i] >= plus4:
            c = self.cands[i]
            if plus4 <= (c.record.plus4_high or "") and c.record.covers(on) and (found is None or self.best[i] < found[0]):
                found = (self.best[i], c)
            i -= 1
        return found[1] if found is not None else None


_NO_STREETS: Mapping[str, tuple[tuple[_Candidate, StreetRange], ...]] = MappingProxyType({})


@dataclass(frozen=True, slots=True)
class _ZipEntry:
    """Everything recorded for one ZIP, each tuple best-ranked first."""

    zip_level: tuple[_Candidate, ...] = ()
    plus4: _Plus4Ranges | None = None
    # By street name (as parse_line1 gives it): the ranges, normalised the same way.
    streets: Mapping[str, tuple[tuple[_Candidate, StreetRange], ...]] = field(default_factory=lambda: _NO_STREETS)
    # Partial ZIP-level records (LocalRecord.scope): laid over the chosen candidate, never one themselves.
    partial: tuple[_Candidate, ...] = ()


_EMPTY_ZIP = _ZipEntry()


class AddressRecords(Protocol):
    """Address-level records (ZIP+4 ranges and street ranges) held outside the
    table (:mod:`levy.store.address_file` keeps them in a file every
    worker maps through the page cache). Records come back ranked as
    :func:`_best_first` ranks them, street ranges normalised as
    :func:`normal_range` makes them."""

    zips: Mapping[tuple[str, str], tuple[bool, bool]]  # (state, ZIP) -> (has ZIP+4 ranges, has street ranges)
    states: frozenset[str]

    def plus4(self, state: str, zip5: str, plus4: str, on: date) -> LocalRecord | None: ...

    def streets(self, state: str, zip5: str, street: str) -> tuple[tuple[LocalRecord, StreetRange], ...]: ...


@dataclass(frozen=True)
class RateTable:
    states: Mapping[str, StateInfo]
    zips: Mapping[tuple[str, str], _ZipEntry] = field(default_factory=dict)
    zip_directory: Mapping[str, ZipPlace] = field(default_factory=dict)
    # Place-wide records (zip5 None): by (state, normalised city), and the
    # unincorporated ones by (state, normalised county); best-ranked first.
    places: Mapping[tuple[str, str], tuple[_Candidate, ...]] = field(default_factory=dict)
    unincorporated: Mapping[tuple[str, str], tuple[_Candidate, ...]] = field(default_factory=dict)
    imported_states: frozenset[str] = frozenset()
    place_states: frozenset[str] = frozenset()  # states with place-wide records
    records: tuple[LocalRecord, ...] = ()
    # What an official level includes (levy.domain.tax.level_overlay): applied per ZIP when the table is built.
    inclusions: tuple[LevelInclusion, ...] = ()
    # VAT and GST outside the US (levy.domain.tax.international), None: US only.
    international: International | None = None
    # The address-level records when they are held outside the table (they are then not in ``zips``).
    addresses: AddressRecords | None = None
    # Resolutions already worked out, by what decides them (see resolve): the
    # table is immutable, so a resolution never changes; bounded. Kept (measured with
    # ``python -m bench.fast_paths``): 20.7 us against 35.6 us for a 3-line
    # calculation at three ZIP codes on the built-in tables (2% of a gRPC
    # calculation's server CPU; more with imported street-level records).
    _resolved: BoundedMemo[tuple[object, ...], Resolution] = field(
        default_factory=lambda: BoundedMemo(RESOLUTION_CACHE_SIZE), init=False, repr=False, compare=False, hash=False
    )
    _address_rows: BoundedMemo[tuple[object, ...], tuple[JurisdictionRate, ...]] = field(
        default_factory=lambda: BoundedMemo(RESOLUTION_CACHE_SIZE), init=False, repr=False, compare=False, hash=False
    )

    # ----------------------------------------------------------------- build
    @classmethod
    def build(
        cls,
        states: Iterable[StateInfo],
        records: Iterable[LocalRecord | ZipRateRow] = (),
        zip_directory: Mapping[str, ZipPlace] | None = None,
        inclusions: Iterable[LevelInclusion] = (),
        international: International | None = None,
        addresses: AddressRecords | None = None,
    ) -> RateTable:
        """Index imported records, given oldest import first (a later one wins a tie).

        ``inclusions``: what an official level includes; a ZIP's partial official
        records are widened over its full records as
        :func:`~levy.domain.tax.level_overlay.widen_official_levels` confirms, in
        whatever order the records were imported.

        A :class:`ZipRateRow` (a per-ZIP table row kept from before local
        records existed) is read as the estimated record :func:`zip_row_record`
        makes of it.

        ``addresses``: the address-level records held outside the table (then
        ``records`` has none of them)."""
        smap = {s.code: s for s in states}
        directory = dict(zip_directory or {})
        kept: list[LocalRecord] = []
        for item in records:
            if isinstance(item, ZipRateRow):
                st = smap.get(item.state)
                if st is None:
                    continue
                item = zip_row_record(st, item, directory.get(item.zip5))
            if item.state in smap:
                kept.append(item)
        return cls._index(smap, kept, directory, tuple(inclusions), international, addresses)

    @classmethod
    def _index(
        cls, smap: dict[str, StateInfo], records: list[LocalRecord], directory: dict[str, ZipPlace],
        inclusions: tuple[LevelInclusion, ...] = (),
        international: International | None = None,
        addresses: AddressRecords | None = None,
    ) -> RateTable:
        zip_level: dict[tuple[str, str], list[_Candidate]] = {}
        partial: dict[tuple[str, str], list[_Candidate]] = {}
        plus4: dict[tuple[str, str], list[_Candidate]] = {}
        streets: dict[tuple[str, str], dict[str, list[tuple[_Candidate, StreetRange]]]] = {}
        places: dict[tuple[str, str], list[_Candidate]] = {}
        unincorporated: dict[tuple[str, str], list[_Candidate]] = {}
        # Equal jurisdiction rows and row tuples are shared by the many records
        # that have them (tens of thousands of ZIPs, a few thousand distinct places).
        shared: dict[object, object] = {}
        rows_of: dict[tuple[object, ...], tuple[JurisdictionRate, ...]] = {}
        ranges: dict[StreetRange, StreetRange] = {}
        for r in records:
            key = (r.components, r.state, r.source)
            rows = rows_of.get(key)
            if rows is None:
                rows = rows_of[key] = _share(shared, tuple(_share(shared, _component_row(r, c)) for c in r.components))
            cand = _Candidate(r, rows)
            if r.zip5 is None:
                if r.unincorporated and r.county:
                    unincorporated.setdefault((r.state, normalise_county(r.county)), []).append(cand)
                elif r.city:
                    places.setdefault((r.state, normalise_place(r.city)), []).append(cand)
            elif r.street is not None:
                rng = ranges.get(r.street)
                if rng is None:
                    rng = ranges[r.street] = normal_range(r.street)
                streets.setdefault((r.state, r.zip5), {}).setdefault(rng.street, []).append((cand, rng))
            elif r.plus4_low is not None:
                plus4.setdefault((r.state, r.zip5), []).append(cand)
            elif r.scope:
                partial.setdefault((r.state, r.zip5), []).append(cand)
            else:
                zip_level.setdefault((r.state, r.zip5), []).append(cand)
        if inclusions:
            for key in partial.keys() & zip_level.keys():
                cands = partial[key]
                widened, _ = widen_official_levels([c.record for c in cands], [c.record for c in zip_level[key]],
                                                   inclusions)
                partial[key] = [c if c.record is r else _Candidate(r, c.rows) for c, r in zip(cands, widened)]
        zips: dict[tuple[str, str], _ZipEntry] = {}
        for key in zip_level.keys() | plus4.keys() | streets.keys() | partial.keys():
            zips[key] = _ZipEntry(
                _best_first(zip_level.get(key, [])),
                _Plus4Ranges.of(_best_first(plus4.get(key, []))),
                {name: _best_first(ranges, _range_rank) for name, ranges in streets[key].items()}
                if key in streets else _NO_STREETS,
                _best_first(partial[key]) if key in partial else (),
            )
        return cls(
            states=smap,
            zips=zips,
            zip_directory=directory,
            places={k: _best_first(v) for k, v in places.items()},
            unincorporated={k: _best_first(v) for k, v in unincorporated.items()},
            imported_states=frozenset(r.state for r in records) | (addresses.states if addresses else frozenset()),
            place_states=frozenset(s for s, _ in places.keys() | unincorporated.keys()),
            records=tuple(records),
            inclusions=inclusions,
            international=international,
            addresses=addresses,
        )

    def with_records(self, records: Iterable[LocalRecord | ZipRateRow]) -> RateTable:
        """A new table with the records of a newer import added (they win ties)."""
        return RateTable.build(self.states.values(), [*self.records, *records], self.zip_directory, self.inclusions,
                               international=self.international, addresses=self.addresses)

    def has_zip(self, state: str, zip5: str) -> bool:
        """Whether an imported record places ``zip5`` in ``state``."""
        return (state, zip5) in self.zips or (self.addresses is not None and (state, zip5) in self.addresses.zips)

    # --------------------------------------------------------------- resolve
    def resolve(self, address: Address, on: date, pointer: str = "", address_pointer: str | None = None) -> Resolution:
        """Jurisdictions and rates for ``address`` on ``on`` (see the module doc of
        :mod:`levy.domain.tax.local_rates` for the order).

        The country, state, postal code, city and line1 decide it; the resolution is
        kept (up to ``RESOLUTION_CACHE_SIZE`` entries, then the cache starts over).
        Invalid addresses raise every time and are not kept; their errors point
        at ``address_pointer`` (default ``{pointer}/customer/address``)."""
        key = (address.country, address.state, address.postal_code, address.city, address.line1, on)
        hit = self._resolved.get(key)
        if hit is not None:
            return hit
        apointer = f"{pointer}/customer/address" if address_pointer is None else address_pointer
        return self._resolved.put(key, self._resolve(address, on, apointer))

    def _resolve(self, address: Address, on: date, apointer: str) -> Resolution:
        country = (address.country or "US").strip().upper()
        if country not in ("US", "USA") and self.international is not None and self.international.covers(country):
            return _international(self.international.place(country, address.state, address.postal_code, apointer), on)
        if country not in ("US", "USA"):
            return Resolution(
                state=None,
                rows=(),
                details=(f"country '{country}' not supported yet: Levy calculates US sales tax, and VAT or GST in the EU, GB, CA and AU",),
                supported=False,
                country=country,
            )
        zip5: str | None = None
        plus4: str | None = None
        if address.postal_code:
            m = _ZIP_RE.match(address.postal_code.strip())
            if not m:
                raise ValidationFailed(
                    "The postal code must be a US ZIP code (12345 or 12345-6789).",
                    pointer=f"{apointer}/postal_code",
                    input=address.postal_code,
                )
            zip5, plus4 = m.group(1), m.group(2)
        state = (address.state or "").strip().upper()
        place = self.zip_directory.get(zip5) if zip5 else None
        if not state:
            if place is None:
                raise ValidationFailed("The state is required.", pointer=f"{apointer}/state", input=address.state)
            state = place.state
        info = self.states.get(state)
        if info is None:
            raise ValidationFailed(
                f"'{state}' is not a US state code.", pointer=f"{apointer}/state", input=address.state
            )
        entry = self.zips.get((state, zip5)) if zip5 else None
        if zip5 and entry is None and place is not None and place.state != state and not self.has_zip(state, zip5):
            raise ValidationFailed(
                f"The postal code {zip5} does not belong to the state {state}.",
                pointer=f"{apointer}/postal_code",
                input=address.postal_code,
            )
        rows: list[JurisdictionRate] = []
        details: list[str] = []
        sr = info.rate_on(on)
        rate = sr.rate if sr is not None else _ZERO
        rows.append(
            JurisdictionRate(
                f"US-ST-{state}", info.name, "state", rate, state, True, sr.source if sr else ""
            )
        )
        if sr is None and info.has_sales_tax:
            details.append(f"no {info.name} state rate is on record for {on.isoformat()}")
        swl = info.statewide_local_on(on)
        if swl is not None:
            rows.append(JurisdictionRate(f"US-ST-{state}-LOCAL", swl.name, swl.type, swl.rate, state, True, swl.source))
        local_missing = False
        level: ResolutionLevel = "state"
        how = "resolved by state only"
        if not zip5:
            details.append("no postal code: state-level tax only; local taxes not calculated")
            local_missing = info.has_local_taxes
        elif info.has_local_taxes:
            county = place.county if place is not None and place.state == state else None
            entry = entry or _EMPTY_ZIP
            found = _with_partial(self._local(state, zip5, plus4, address, county, entry, on), entry.partial, zip5, on)
            if found is None:
                local_missing = True
                how = f"ZIP {zip5}: no local record"
                details.append(
                    f"local rates for ZIP {zip5} are not loaded for {on.isoformat()}: local taxes missing, only state-level tax calculated"
                )
            else:
                level, how, local_rows = found
                rows.extend(local_rows)
        else:
            level, how = "zip5", f"resolved by ZIP {zip5}: {info.name} has no local sales taxes"
        return Resolution(state, tuple(rows), tuple(details), True, "US", local_missing, level, how)

    def _local(
        self, state: str, zip5: str, plus4: str | None, address: Address, county: str | None, entry: _ZipEntry, on: date
    ) -> tuple[ResolutionLevel, str, _Candidate] | None:
        """The local record an address reaches, first match in the documented order."""
        outside = self.addresses.zips.get((state, zip5), (False, False)) if self.addresses is not None else (False, False)
        if (entry.streets or outside[1]) and address.line1:
            street = parse_line1(address.line1)
            if street is not None:
                ranges = entry.streets.get(street.street, ()) or self._outside_streets(state, zip5, street.street, outside)
                hit = _street_match(ranges, street, on)
                if hit is not None:
                    cand, rng = hit
                    return "address", f"resolved by street range {_range_text(rng)} in ZIP {zip5} ({_source(cand)})", cand
        if plus4 is not None and (entry.plus4 is not None or outside[0]):
            cand = entry.plus4.find(plus4, on) if entry.plus4 is not None else self._outside_plus4(state, zip5, plus4, on)
            if cand is not None:
                r = cand.record
                return "zip4", f"resolved by ZIP+4 range {zip5}-{r.plus4_low}..{zip5}-{r.plus4_high} ({_source(cand)})", cand
        in_force = [c for c in entry.zip_level if c.record.covers(on)]
        city = (address.city or "").strip()
        if city:
            found = self._by_city(state, zip5, city, county, in_force, on)
            if found is not None:
                return "city", found[0], found[1]
        if not in_force:
            return None
        best = in_force[0]
        if city and (any(c.record.city for c in in_force) or state in self.place_states):
            how = f"city '{city}' matches no candidate for ZIP {zip5}: ZIP {zip5} default ({_source(best)})"
        elif len(in_force) > 1 or entry.plus4 or entry.streets or any(outside) or state in self.place_states:
            among = f" among {len(in_force)} candidates" if len(in_force) > 1 else ""
            how = f"ZIP {zip5} default{among} ({_source(best)}); send the city or ZIP+4 for a more precise rate"
        else:
            how = f"resolved by ZIP {zip5} ({_source(best)})"
        return "zip5", how, best

    def _outside_plus4(self, state: str, zip5: str, plus4: str, on: date) -> _Candidate | None:
        record = self.addresses.plus4(state, zip5, plus4, on) if self.addresses is not None else None
        return None if record is None else _Candidate(record, self._rows(record))

    def _outside_streets(
        self, state: str, zip5: str, street: str, outside: tuple[bool, bool]
    ) -> tuple[tuple[_Candidate, StreetRange], ...]:
        if not outside[1] or self.addresses is None:
            return ()
        return tuple((_Candidate(r, self._rows(r)), rng) for r, rng in self.addresses.streets(state, zip5, street))

    def _rows(self, r: LocalRecord) -> tuple[JurisdictionRate, ...]:
        """The jurisdiction rows of a record read from ``addresses`` (shared by the records that have them)."""
        key = (r.components, r.state, r.source)
        rows = self._address_rows.get(key)
        if rows is None:
            rows = self._address_rows.put(key, tuple(_component_row(r, c) for c in r.components))
        return rows

    def _by_city(
        self, state: str, zip5: str, city: str, county: str | None, in_force: list[_Candidate], on: date
    ) -> tuple[str, _Candidate] | None:
        """A candidate for the address city: the ZIP's own records with that city,
        else a place-wide record of the city (in the ZIP's county when both are
        known), else, when the ZIP has no record on the date and the city is not
        an incorporated place of the data, the unincorporated area of the ZIP's county."""
        name = normalise_place(city)
        for cand in in_force:
            if cand.record.city and normalise_place(cand.record.city) == name:
                return f"resolved by city '{city}' among {len(in_force)} candidates for ZIP {zip5} ({_source(cand)})", cand
        wide = self.places.get((state, name), ())
        county_name = normalise_county(county) if county else None
        for cand in wide:
            rc = cand.record.county
            if cand.record.covers(on) and (rc is None or county_name is None or normalise_county(rc) == county_name):
                where = f" in {county}" if county else ""
                return f"resolved by city '{city}'{where} ({_source(cand)})", cand
        if in_force or wide or county_name is None:
            return None
        for cand in self.unincorporated.get((state, county_name), ()):
            if cand.record.covers(on):
                return (f"resolved by county: '{city}' is not an incorporated city of the data, so the unincorporated "
                        f"area of {county} ({_source(cand)})", cand)
        return None


_TYPE_ORDER = {"county": 0, "city": 1, "special": 2}
_TYPE_WORDS = {"county": "county", "city": "city", "special": "special-district"}


def _with_partial(
    found: tuple[ResolutionLevel, str, _Candidate] | None, partial: tuple[_Candidate, ...], zip5: str, on: date
) -> tuple[ResolutionLevel, str, tuple[JurisdictionRate, ...]] | None:
    """The local rows of ``found`` (the full candidate chosen, if any) with the ZIP's
    partial records in force on ``on`` laid over them: for each component type, the
    best-ranked partial record stating it replaces the candidate's components of
    that type when its source kind ranks higher. Without a full candidate the
    partial records alone, at ``zip5``, saying which types the data lacks."""
    if not partial:
        return None if found is None else (found[0], found[1], found[2].rows)
    by_type: dict[str, _Candidate] = {}
    for cand in partial:  # best first
        if cand.record.covers(on):
            for kind in cand.record.scope:
                by_type.setdefault(kind, cand)
    if found is None:
        if not by_type:
            return None
        missing = [_TYPE_WORDS[k] for k in _TYPE_ORDER if k not in by_type]
        how = f"resolved by ZIP {zip5}: {_over(by_type)}"
        if missing:
            how += f"; the {' and '.join(missing)} rates are not in the imported data"
        return "zip5", how, _rows_of(by_type)
    level, how, chosen = found
    floor = SOURCE_PRECEDENCE.get(chosen.record.source_kind, 0)
    over = {k: c for k, c in by_type.items() if SOURCE_PRECEDENCE.get(c.record.source_kind, 0) > floor}
    if not over:
        return level, how, chosen.rows
    kept = [row for row in chosen.rows if row.type not in over]
    rows = sorted([*kept, *_rows_of(over)], key=lambda row: _TYPE_ORDER.get(row.type, 3))
    return level, f"{how}; {_over(over)} over the {chosen.record.source_kind} record's", tuple(rows)


def _rows_of(by_type: Mapping[str, _Candidate]) -> tuple[JurisdictionRate, ...]:
    """Each type's rows from the partial record chosen for it, county first."""
    return tuple(row for kind in sorted(by_type, key=_TYPE_ORDER.__getitem__) for row in by_type[kind].rows
                 if row.type == kind)


def _over(by_type: Mapping[str, _Candidate]) -> str:
    """"county rate from official_zip: GAR2026Q2FEB19.csv line 165", one clause per partial record."""
    clauses: dict[int, tuple[_Candidate, list[str]]] = {}
    for kind in sorted(by_type, key=_TYPE_ORDER.__getitem__):
        cand = by_type[kind]
        clauses.setdefault(id(cand), (cand, []))[1].append(_TYPE_WORDS[kind])
    return ", ".join(f"{' and '.join(words)} rate from {_source(cand)}" for cand, words in clauses.values())


def _rank(cand: _Candidate) -> tuple[int, bool, date]:
    r = cand.record
    return SOURCE_PRECEDENCE.get(r.source_kind, 0), r.primary, r.effective_from


def _range_rank(item: tuple[_Candidate, StreetRange]) -> tuple[int, bool, date]:
    return _rank(item[0])


def _best_first(items: list[_T], key: Callable[[_T], Any] = _rank) -> tuple[_T, ...]:  # type: ignore[assignment]
    """``items`` (in import order) best first: the stronger source kind, a primary
    record, the later start, then the later import (a stable sort of the reversed list)."""
    return tuple(sorted(reversed(items), key=key, reverse=True))


def _source(cand: _Candidate) -> str:
    r = cand.record
    notes = "".join(f"; {n}" for n in dict.fromkeys(c.note for c in r.components if c.note))
    return f"{r.source_kind}: {r.source}" + (f" line {r.line}" if r.line else "") + notes


def normal_range(r: StreetRange) -> StreetRange:
    """``r`` with its parts as :func:`parse_line1` gives them (``r`` itself when they already are)."""
    normal = StreetRange(
        r.low, r.high, r.parity, normalise_street_part(r.street),
        normalise_street_part(r.predir, DIRECTIONALS), normalise_street_part(r.suffix, SUFFIXES),
        normalise_street_part(r.postdir, DIRECTIONALS), r.unit,
    )
    return r if normal == r else normal


def _range_text(r: StreetRange) -> str:
    words = [f"{r.low}-{r.high} ({r.parity})", r.predir, r.street, r.suffix, r.postdir, r.unit.text() if r.unit else ""]
    return " ".join(w for w in words if w)


def _street_match(
    ranges: tuple[tuple[_Candidate, StreetRange], ...], street: StreetAddress, on: date
) -> tuple[_Candidate, StreetRange] | None:
    """The range for ``street`` among its street's ranges: the house number on a
    covered side; a directional or suffix given on both sides must agree (one
    left out matches any); a range of some units only (a secondary range) applies
    to an address whose unit it covers, and then wins over the building's range;
    otherwise the range agreeing on more of them wins, then rank."""
    best: tuple[int, tuple[_Candidate, StreetRange]] | None = None
    for cand, rng in ranges:
        if not rng.covers(street.number) or not cand.record.covers(on):
            continue
        if rng.unit is not None and not (street.unit and rng.unit.covers(street.unit_abbr, street.unit)):
            continue
        score = 0 if rng.unit is None else 10  # more specific than any agreement of directionals and suffix
        for mine, theirs in ((street.predir, rng.predir), (street.suffix, rng.suffix), (street.postdir, rng.postdir)):
            if mine and theirs:
                if mine != theirs:
                    break
                score += 1
        else:
            if best is None or score > best[0]:
                best = (score, (cand, rng))
    return best[1] if best is not None else None


def _share(shared: dict[object, object], value: _T) -> _T:
    """The one instance equal to ``value`` (frozen, hashable) seen so far in ``shared``."""
    return shared.setdefault(value, value)  # type: ignore[return-value]


def _component_row(r: LocalRecord, c: Component) -> JurisdictionRate:
    return JurisdictionRate(c.code, c.name, c.type, c.rate, r.state, False, r.source)


def without_statewide_local(st: StateInfo, components: tuple[Component, ...], on: date) -> tuple[Component, ...]:
    """``components`` less the state's statewide mandatory local portion in force on
    ``on`` (CA 1.25%, NV 2.25%, UT 1.25%, VA 1% in the built-in data), taken
    from the county components first, then special, then city, so that it is
    never counted twice (it comes from the built-in data); a component left at
    zero is dropped."""
    swl = st.statewide_local_on(on)
    if swl is None:
        return components
    left = swl.rate
    rates = [c.rate for c in components]
    for kind in ("county", "special", "city"):
        for i, c in enumerate(components):
            if c.type == kind and left > 0:
                take = min(rates[i], left)
                rates[i] -= take
                left -= take
    return tuple(c if r == c.rate else replace(c, rate=r) for c, r in zip(components, rates) if r > 0)


def zip_row_record(
    st: StateInfo, row: ZipRateRow, place: ZipPlace | None, counties: Mapping[str, str] | None = None,
    places: frozenset[str] | None = None,
) -> LocalRecord:
    """A per-ZIP table row as an ``estimated``, primary ZIP-level record.

    The statewide mandatory local portion is taken out
    (:func:`without_statewide_local`); the row's StateRate is ignored (the
    built-in state rate is authoritative: e.g. UT files print 0.048499 for
    4.85%). The rows are named after the jurisdiction whose rate they apply,
    from the row's own region: when the region names a county of the state
    (``counties``: normalised county name -> county name) other than the ZIP
    directory's county, and not the directory's city, the county rate is that county's (28607 Boone, region
    WILKES: "Wilkes County", not the directory's Watauga County). When the region
    is another place of the state (``places``: the normalised city names the ZIP
    directory knows in the state) than the directory's city, a city rate is that
    place's (35004, the directory's Moody, region LEEDS: "Leeds"). A region that
    is neither (a district: "PEABODY HOTEL TOURISM DEVELOPMENT ZONE" in Memphis)
    leaves the county and city named from the directory, and the note says which
    names rest on the directory alone (:func:`_unmapped_region`). Otherwise county and city names come
    from the ZIP directory when it knows the ZIP, else from the region name;
    special districts are "<region> special district". Where a name rests on the
    region, or the region is all the table says of a rate's place, the components'
    ``note`` says so ("region LEEDS (per-ZIP table): ..."), and so does every row
    of a line the record resolves.
    """
    region = row.region_name.strip() or row.zip5
    same_state = place is not None and place.state == row.state
    county_name = place.county if same_state and place.county else f"{region.title()} County"  # type: ignore[union-attr]
    city_name = place.city if same_state and place.city else region.title()  # type: ignore[union-attr]
    region_county = (counties or {}).get(normalise_county(region))
    notes: list[str] = []
    other_place = normalise_place(region) != normalise_place(city_name)
    if region_county is not None and normalise_county(region_county) != normalise_county(county_name) and other_place:
        # region HOUSTON in Houston: the city, not Houston County
        if row.county_rate > 0:
            notes.append(f"county rate of the region's {region_county}, not of the ZIP directory's {county_name}")
        county_name = region_county
    elif region_county is None and same_state and other_place and places is not None:
        if normalise_place(region) not in places:
            notes += _unmapped_region(row, county_name, city_name)
        elif row.city_rate > 0:
            notes.append(f"city rate of the region's city, not of the ZIP directory's city {city_name}")
            city_name = region.title()
    if not same_state:
        notes.append("ZIP not in the ZIP directory: county and city named after the region")
    note = f"region {region} (per-ZIP table): {'; '.join(notes)}" if notes else ""
    s = row.state
    parts = (
        Component("county", county_name, row.county_rate, f"US-CO-{s}-{slug(county_name)}", note=note),
        Component("special", f"{region.title()} special district", row.special_rate, f"US-SP-{s}-{slug(region)}",
                  note=note),
        Component("city", city_name, row.city_rate, f"US-CI-{s}-{slug(city_name)}", note=note),
    )
    local = without_statewide_local(st, tuple(c for c in parts if c.rate > 0), row.effective_from)
    order = {"county": 0, "city": 1, "special": 2}
    return LocalRecord(
        state=s,
        zip5=row.zip5,
        components=tuple(sorted(local, key=lambda c: order[c.type])),
        effective_from=row.effective_from,
        effective_to=row.effective_to,
        source=row.source,
        source_kind="estimated",
        primary=True,
        line=row.line,
    )


def _unmapped_region(row: ZipRateRow, county_name: str, city_name: str) -> list[str]:
    """What a per-ZIP row's names rest on when its region is neither a county of the state nor a
    place the ZIP directory knows there (a district, a reservation, a township): the county and city
    rates keep the ZIP directory's names, which the table does not confirm; a special district is
    named after the region. Nothing when the row has no local rate to name."""
    if row.county_rate <= 0 and row.city_rate <= 0 and row.special_rate <= 0:
        return []
    named = [f"the county rate is named after the ZIP directory's {county_name}"] if row.county_rate > 0 else []
    if row.city_rate > 0:
        named.append(f"the city rate is named after the ZIP directory's city {city_name}")
    if row.special_rate > 0:
        named.append("the special district rate is named after the region")
    return ["no city the ZIP directory knows in the state and no county of the state: " + ", ".join(named)]


if TYPE_CHECKING:
    from levy.domain.tax.international import International, Place


def _international(place: Place, on: date) -> Resolution:
    """The resolution of an address outside the US: one row per tax level at its standard
    rate on ``on`` (the engine applies the line's category rate, :mod:`levy.domain.tax.international`)."""
    rows = []
    details = []
    for level in place.levels:
        dated = level.rate_on(on)
        if dated is None:
            details.append(f"no {level.name} {level.tax_name} rate is on record for {on.isoformat()}")
        rows.append(JurisdictionRate(level.code, level.name, level.type, dated.rate if dated else _ZERO,  # type: ignore[arg-type]
                                     "", True, dated.source if dated else ""))
    level_name: ResolutionLevel = "province" if place.subdivision else "country"
    return Resolution(None, tuple(rows), tuple(details), True, place.country.code, False, level_name, place.how, place)
