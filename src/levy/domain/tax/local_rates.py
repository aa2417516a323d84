"""Imported local rates: the records every importer produces and the rate table
resolves addresses from. Plain frozen values, no I/O.

An importer (``levy.ratefiles.*``) turns an official or third-party file into
:class:`LocalRecord` rows; the store keeps them per import; ``RateTable``
indexes them and resolves an address in this order, first match wins:

1. ``address``: a street-range record (SST ``a``) whose :class:`StreetRange`
   matches the address ``line1`` (house number on the right side, street name,
   directionals and suffix);
2. ``zip4``: a ZIP+4 range record (SST ``4``) containing the 9-digit ZIP;
3. ``city``: a record for the address ``city`` (and county where the data
   carries one) among the ZIP's candidates, names normalised
   (:func:`levy.domain.tax.place_names.normalise_place`); else a place-wide
   record of that city (in the ZIP's county from the ZIP directory, when both
   are known); else, only when the ZIP has no record in force and the city is
   no incorporated place of the data, the ``unincorporated`` record of the
   ZIP's county (a city name the data does not know is not proof of an
   unincorporated address: postal names are often neighbourhoods of a city);
4. ``zip5``: the ZIP's default candidate (``primary``, else the one covering
   most addresses);
5. ``state``: state-level tax alone, when there is no usable postal code.

Only records in force on the date count. Among those matching at one level,
``official_address`` beats ``official_zip`` beats ``estimated``
(:data:`SOURCE_PRECEDENCE`); for the ZIP default a ``primary`` record next;
then the later ``effective_from`` (a newer edition), then the newer import.

A *partial* ZIP-level record (``scope`` names the component types it states,
e.g. only ``county``) is never a candidate while the ZIP has a full one: once
the full candidate is chosen at any level, each component type of a partial
record in force on the date whose source kind ranks HIGHER than the chosen
candidate's replaces the candidate's components of that type (the best-ranked
partial record per type). A ZIP with only partial records resolves with them
alone, at ``zip5``, and says which types the data lacks.
A city matching nothing falls back to the ZIP default, never an error. Older imports' dated records are kept, so a past date
resolves with the rates in force on that date.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date
from decimal import Decimal
from typing import Literal

from levy.domain.periods import Dated
from levy.domain.tax.model import JurisdictionType

SourceKind = Literal["official_address", "official_zip", "estimated"]
SOURCE_PRECEDENCE: dict[str, int] = {"official_address": 3, "official_zip": 2, "estimated": 1}

ResolutionLevel = Literal["address", "zip4", "city", "zip5", "state", "country", "province"]  # the last two: outside the US
RESOLUTION_LEVELS: tuple[str, ...] = ("address", "zip4", "city", "zip5", "state", "country", "province")


@dataclass(frozen=True, slots=True)
class Component:
    """One local jurisdiction of a record with its general (intrastate) rate.

    Never the state itself nor the state's statewide mandatory local portion
    (CA 1.25%, ...): both come from the built-in state data, and an importer
    whose source folds them into its figures takes them out."""

    type: JurisdictionType  # "county" | "city" | "special"
    name: str  # display name, e.g. "Los Angeles County"
    rate: Decimal
    code: str  # Levy jurisdiction code, e.g. "US-CO-CA-LOS_ANGELES_COUNTY" (see rates.py)
    authority: str = ""  # the source's own identifier, e.g. SST "27-01-58000"
    # What the name rests on when the source gives only a region name (per-ZIP tables), said on every
    # row of a line resolved by the record ("region LEEDS (per-ZIP table): ...").
    note: str = ""


def _on_side(number: int, parity: str) -> bool:
    return parity == "both" or (number % 2 == 1) == (parity == "odd")


@dataclass(frozen=True, slots=True)
class UnitRange:
    """The secondary addresses (suites, apartments, units) of an address range that a
    boundary record places apart from the rest of the building (SST boundary file,
    columns 10-13: abbreviation, low, high, odd/even): ``"STE"``, ``"200"``, ``"299"``.

    Numbers compare as numbers (on the ``parity`` side); other designations
    (``"A"``..``"F"``) compare as text of the same length. ``abbr`` "" matches any
    designator, as does an address that gives none (``"# 250"``)."""

    abbr: str
    low: str
    high: str
    parity: Literal["odd", "even", "both"] = "both"

    def covers(self, abbr: str, unit: str) -> bool:
        if self.abbr and abbr and self.abbr != abbr:
            return False
        if self.low.isdigit() and self.high.isdigit():
            return unit.isdigit() and int(self.low) <= int(unit) <= int(self.high) and _on_side(int(unit), self.parity)
        return len(unit) == len(self.low) == len(self.high) and self.low <= unit <= self.high

    def text(self) -> str:
        side = "" if self.parity == "both" else f" ({self.parity})"
        span = self.low if self.low == self.high else f"{self.low}-{self.high}"
        return f"{self.abbr} {span}{side}".strip()


@dataclass(frozen=True, slots=True)
class StreetRange:
    """An address range (SST ``a`` record); text fields normalised to upper
    case without punctuation (``"N"``, ``"MAIN"``, ``"ST"``). ``unit``: the
    secondary addresses of the range the record is about, when it is about some only."""

    low: int
    high: int
    parity: Literal["odd", "even", "both"]
    street: str
    predir: str = ""
    suffix: str = ""
    postdir: str = ""
    unit: UnitRange | None = None

    def covers(self, number: int) -> bool:
        return self.low <= number <= self.high and _on_side(number, self.parity)


@dataclass(frozen=True, slots=True)
class LocalRecord(Dated):
    """One candidate set of local jurisdictions for part of a state, from one source.

    * ``zip5`` set, no ``plus4_*`` nor ``street``: a ZIP-level candidate;
      several per ZIP are allowed (told apart by ``city``/``county``, one may be
      ``primary``).
    * ``plus4_low``/``plus4_high`` (4 digits each, inclusive, within ``zip5``):
      a ZIP+4 range record.
    * ``street``: an address-range record within ``zip5``.
    * ``zip5`` None: a place-wide record (a city, or a county's unincorporated
      area, as in California's CDTFA table) matched by the address city and
      the ZIP's county; ``unincorporated`` marks the latter.
    """

    state: str  # "CA"
    zip5: str | None
    components: tuple[Component, ...]
    effective_from: date
    effective_to: date | None  # inclusive; None: open-ended
    source: str  # file name the record came from
    source_kind: SourceKind
    city: str | None = None  # the place covered, as the source writes it
    county: str | None = None  # county name as the source writes it
    plus4_low: str | None = None
    plus4_high: str | None = None
    street: StreetRange | None = None
    primary: bool = False
    unincorporated: bool = False
    line: int = 0
    # The component types the record states (a partial record, e.g. ("county",)
    # from an SST rate file placed by county); empty: every local component (a
    # full record). Only ZIP-level records may be partial.
    scope: tuple[JurisdictionType, ...] = ()

    def __post_init__(self) -> None:
        if self.scope and (self.zip5 is None or self.plus4_low is not None or self.street is not None):
            raise ValueError("only a ZIP-level record may state some component types (scope)")

    @property
    def partial(self) -> bool:
        return bool(self.scope)

    @property
    def local_rate(self) -> Decimal:
        return sum((c.rate for c in self.components), Decimal(0))
