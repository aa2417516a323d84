"""Jurisdictions and rates: an immutable in-memory table, O(1) lookups.

State level comes from the built-in data (``levy/data/tax/state_rates.json``),
local levels (county, city, special district) from imported per-ZIP rows.
Jurisdiction codes:

* state ``US-ST-CA``; a statewide mandatory local portion ``US-ST-CA-LOCAL``
  (typed ``county`` or ``special`` as the data says; it follows the state for
  registration);
* county ``US-CO-<ST>-<SLUG>``, city ``US-CI-<ST>-<SLUG>``, special district
  ``US-SP-<ST>-<SLUG>``, where SLUG is the uppercase name with runs of
  non-alphanumerics replaced by ``_`` (e.g. ``US-CO-NY-NEW_YORK_COUNTY``).

This module does no I/O: the adapter (:mod:`levy.rates.builtin`) reads the
files and hands plain rows in.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from datetime import date
from decimal import Decimal
from typing import TypeVar

from levy.domain.errors import ValidationFailed
from levy.domain.memo import BoundedMemo
from levy.domain.tax.model import Address, JurisdictionType
from levy.domain.periods import within

_ZERO = Decimal(0)
_T = TypeVar("_T")
_SLUG_RE = re.compile(r"[^A-Z0-9]+")
_ZIP_RE = re.compile(r"([0-9]{5})(?:-?[0-9]{4})?\Z")
# Bound on the resolutions a table keeps (a few hundred bytes each).
RESOLUTION_CACHE_SIZE = 20_000


def slug(name: str) -> str:
    return _SLUG_RE.sub("_", name.upper()).strip("_")


@dataclass(frozen=True, slots=True)
class DatedRate:
    rate: Decimal
    effective_from: date
    effective_to: date | None
    source: str

    def covers(self, on: date) -> bool:
        return within(on, self.effective_from, self.effective_to)


@dataclass(frozen=True, slots=True)
class StatewideLocal:
    name: str
    type: JurisdictionType
    rate: Decimal
    effective_from: date
    effective_to: date | None
    source: str

    def covers(self, on: date) -> bool:
        return within(on, self.effective_from, self.effective_to)


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
    """One row of a per-ZIP rate table (see :mod:`levy.rates.zip5`)."""

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


@dataclass(frozen=True, slots=True)
class _ZipPeriod:
    effective_from: date
    effective_to: date | None
    rows: tuple[JurisdictionRate, ...]

    def covers(self, on: date) -> bool:
        return within(on, self.effective_from, self.effective_to)


@dataclass(frozen=True, slots=True)
class Resolution:
    """Jurisdictions reached by an address on a date.

    ``supported`` is False for addresses outside the US (zero tax); ``details``
    explain anything a caller must know (no postal code, local rates missing).
    """

    state: str | None
    rows: tuple[JurisdictionRate, ...]
    details: tuple[str, ...] = ()
    supported: bool = True
    country: str = "US"
    local_missing: bool = False


@dataclass(frozen=True)
class RateTable:
    states: Mapping[str, StateInfo]
    zip_periods: Mapping[tuple[str, str], tuple[_ZipPeriod, ...]] = field(default_factory=dict)
    zip_directory: Mapping[str, ZipPlace] = field(default_factory=dict)
    imported_states: frozenset[str] = frozenset()
    # Resolutions already worked out, by (country, state, postal code, date): the
    # table is immutable, so a resolution never changes; bounded (see resolve).
    _resolved: BoundedMemo[tuple[str | None, str | None, str | None, date], Resolution] = field(
        default_factory=lambda: BoundedMemo(RESOLUTION_CACHE_SIZE), init=False, repr=False, compare=False, hash=False
    )

    # ----------------------------------------------------------------- build
    @classmethod
    def build(
        cls,
        states: Iterable[StateInfo],
        zip_rows: Iterable[ZipRateRow] = (),
        zip_directory: Mapping[str, ZipPlace] | None = None,
    ) -> RateTable:
        """Index state data and imported ZIP rows.

        The statewide mandatory local portion of the built-in data (CA 1.25%,
        NV 2.25%, UT 1.25%, VA 1%) is taken out of the imported county
        component first, then special, then city, so it is never counted twice;
        the imported StateRate column is ignored (the built-in state rate is
        authoritative: e.g. UT files print 0.048499 for 4.85%).
        """
        smap = {s.code: s for s in states}
        directory = dict(zip_directory or {})
        periods: dict[tuple[str, str], list[_ZipPeriod]] = {}
        imported: set[str] = set()
        # Equal jurisdiction rows, row tuples and periods are shared by the many ZIPs
        # that have them (tens of thousands of ZIPs, a few thousand distinct places).
        shared: dict[object, object] = {}
        for row in zip_rows:
            st = smap.get(row.state)
            if st is None:
                continue
            imported.add(row.state)
            rows = _share(shared, tuple(_share(shared, r) for r in _local_rows(st, row, directory.get(row.zip5))))
            periods.setdefault((row.state, row.zip5), []).append(
                _share(shared, _ZipPeriod(row.effective_from, row.effective_to, rows))
            )
        frozen = {k: tuple(sorted(v, key=lambda p: p.effective_from, reverse=True)) for k, v in periods.items()}
        return cls(states=smap, zip_periods=frozen, zip_directory=directory, imported_states=frozenset(imported))

    def with_zip_rows(self, zip_rows: Iterable[ZipRateRow]) -> RateTable:
        """A new table with more imported rows (later imports win on the same dates)."""
        new = RateTable.build(self.states.values(), zip_rows, self.zip_directory)
        merged: dict[tuple[str, str], tuple[_ZipPeriod, ...]] = dict(self.zip_periods)
        for k, v in new.zip_periods.items():
            old = tuple(p for p in merged.get(k, ()) if all(p.effective_from != n.effective_from for n in v))
            merged[k] = tuple(sorted(v + old, key=lambda p: p.effective_from, reverse=True))
        return RateTable(self.states, merged, self.zip_directory, self.imported_states | new.imported_states)

    # --------------------------------------------------------------- resolve
    def resolve(self, address: Address, on: date, pointer: str = "") -> Resolution:
        """Jurisdictions and rates for ``address`` on ``on`` (see module doc).

        Only the country, state and postal code matter; their resolution is kept
        (up to ``RESOLUTION_CACHE_SIZE`` entries, then the cache starts over).
        Invalid addresses raise every time and are not kept."""
        key = (address.country, address.state, address.postal_code, on)
        hit = self._resolved.get(key)
        if hit is not None:
            return hit
        return self._resolved.put(key, self._resolve(address, on, pointer))

    def _resolve(self, address: Address, on: date, pointer: str) -> Resolution:
        apointer = f"{pointer}/customer/address"
        country = (address.country or "US").strip().upper()
        if country not in ("US", "USA"):
            return Resolution(
                state=None,
                rows=(),
                details=(f"country '{country}' not supported yet: only US sales tax is calculated (international VAT comes later)",),
                supported=False,
                country=country,
            )
        zip5: str | None = None
        if address.postal_code:
            m = _ZIP_RE.match(address.postal_code.strip())
            if not m:
                raise ValidationFailed(
                    "The postal code must be a US ZIP code (12345 or 12345-6789).",
                    pointer=f"{apointer}/postal_code",
                    input=address.postal_code,
                )
            zip5 = m.group(1)
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
        periods = self.zip_periods.get((state, zip5)) if zip5 else None
        if zip5 and periods is None and place is not None and place.state != state:
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
        if not zip5:
            details.append("no postal code: state-level tax only; local taxes not calculated")
            local_missing = info.has_local_taxes
        elif info.has_local_taxes:
            period = None
            for p in periods or ():
                if p.covers(on):
                    period = p
                    break
            if period is None:
                local_missing = True
                details.append(
                    f"local rates for ZIP {zip5} are not loaded for {on.isoformat()}: local taxes missing, only state-level tax calculated"
                )
            else:
                rows.extend(period.rows)
        return Resolution(state, tuple(rows), tuple(details), True, "US", local_missing)


def _share(shared: dict[object, object], value: _T) -> _T:
    """The one instance equal to ``value`` (frozen, hashable) seen so far in ``shared``."""
    return shared.setdefault(value, value)  # type: ignore[return-value]


def _local_rows(st: StateInfo, row: ZipRateRow, place: ZipPlace | None) -> tuple[JurisdictionRate, ...]:
    county, special, city = row.county_rate, row.special_rate, row.city_rate
    swl = st.statewide_local_on(row.effective_from)
    if swl is not None:
        left = swl.rate
        take = min(county, left)
        county -= take
        left -= take
        take = min(special, left)
        special -= take
        left -= take
        take = min(city, left)
        city -= take
    region = row.region_name.strip() or row.zip5
    same_state = place is not None and place.state == row.state
    county_name = place.county if same_state and place.county else f"{region.title()} County"
    city_name = place.city if same_state and place.city else region.title()
    out: list[JurisdictionRate] = []
    s = row.state
    if county > 0:
        out.append(JurisdictionRate(f"US-CO-{s}-{slug(county_name)}", county_name, "county", county, s, False, row.source))
    if city > 0:
        out.append(JurisdictionRate(f"US-CI-{s}-{slug(city_name)}", city_name, "city", city, s, False, row.source))
    if special > 0:
        name = f"{region.title()} special district"
        out.append(JurisdictionRate(f"US-SP-{s}-{slug(region)}", name, "special", special, s, False, row.source))
    return tuple(out)
