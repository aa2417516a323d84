"""Streamlined Sales Tax rate files WITHOUT a boundary file (e.g. Georgia's
``GAR2026Q2FEB19.csv``, Wisconsin's ``WIR2026Q2FEB18.csv``), placed on ZIPs by
county.

An SST rate file names each jurisdiction by FIPS code only. Without the
boundary file the only jurisdictions we can place are counties: the county
FIPS code gives the county's name (the Census county list shipped in
``levy/data/tax/county_fips.csv``), and the ZIP directory gives each ZIP's
county (or counties). So:

* every county row (type ``00``) becomes, for each ZIP of that county, one
  ``official_zip`` :class:`LocalRecord` with one ``county`` component and
  ``scope=("county",)``: a partial record, stating the county rate only, so
  the rate table lays it over the ZIP's other candidates (their city and
  special-district components stay), for the row's own dates (a county whose rate changes on 2026-04-01 gets two records
  per ZIP, one ending 2026-03-31 and one from 2026-04-01);
* a ZIP the directory puts in several counties gets one candidate per county,
  the first (the directory's own county) ``primary``;
* the state row (``45``) is not used: the state rate comes from the built-in
  data;
* city (``01``) and special-district (``63``) rows cannot be placed without
  the boundary file: they are returned apart, so the import report can list
  those still in force as warnings (their rates are NOT in the records; the
  ZIPs keep those of other imports).

County names are compared as the rate table compares them
(:func:`~levy.domain.tax.place_names.normalise_county`: ``DeKalb`` and
``Dekalb``, ``St. Croix`` and ``Saint Croix County`` are the same county).

Pure: parsed rate rows and plain mappings in, records out.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import date

from levy.domain.errors import ValidationFailed
from levy.domain.tax.local_rates import Component, LocalRecord
from levy.domain.tax.place_names import normalise_county
from levy.domain.tax.rate_table import slug
from levy.ratefiles.report import pct
from levy.ratefiles.sst import STATE_FIPS, SstRate

@dataclass(frozen=True)
class CountyPlacement:
    records: list[LocalRecord]
    unplaced: list[SstRate]  # city and special-district rows (no boundary file to place them)
    unmatched_counties: list[SstRate]  # county rows whose FIPS code names no county of the ZIP directory

    def unplaced_notes(self, on: date) -> list[str]:
        """One ``unplaced_local_taxes`` warning per city or special-district row with a
        rate in force on or after ``on`` (the file's quarter): not applied, and nothing
        lost (the partial records leave each ZIP's other city and district rates)."""
        return [
            f"unplaced_local_taxes: line {r.line}: {STATE_FIPS.get(r.state_fips, r.state_fips)} {r.type} "
            f"{r.jurisdiction_fips}: {pct(r.general_intrastate)} in force from {r.effective_from.isoformat()} cannot "
            "be placed on ZIPs without the boundary file: not applied (the records state county rates only; "
            "each ZIP keeps the city and special-district rates of its other imports)"
            for r in self.unplaced
            if r.general_intrastate > 0 and (r.effective_to is None or r.effective_to >= on)
        ]

    def warnings(self) -> list[str]:
        if not self.unmatched_counties:
            return []
        codes = ", ".join(sorted({r.jurisdiction_fips for r in self.unmatched_counties}))
        return [f"county row(s) for FIPS {codes} match no county of the ZIP directory: not placed"]


def sst_county_records(
    rates: Iterable[SstRate],
    *,
    county_names: Mapping[tuple[str, str], str],
    zip_counties: Mapping[str, Sequence[str]],
    source: str,
) -> CountyPlacement:
    """Records for the county rows of ``rates``.

    ``county_names``: (state FIPS, county FIPS) -> county name (Census list).
    ``zip_counties``: ZIP -> the names of the counties it lies in, the primary
    one first, for the ZIPs of the file's state(s)."""
    by_county: dict[str, list[tuple[str, bool]]] = {}
    for zip5, counties in zip_counties.items():
        for i, name in enumerate(counties):
            by_county.setdefault(normalise_county(name), []).append((zip5, i == 0))
    records: list[LocalRecord] = []
    unplaced: list[SstRate] = []
    unmatched: list[SstRate] = []
    for r in rates:
        if r.type in ("city", "special"):
            unplaced.append(r)
            continue
        if r.type != "county":
            continue
        state = STATE_FIPS.get(r.state_fips)
        if state is None:
            raise ValidationFailed(
                f"{source}:{r.line}: unknown state FIPS {r.state_fips!r}", meta={"file": source, "line": r.line}
            )
        name = county_names.get((r.state_fips, r.jurisdiction_fips.zfill(3)))
        zips = by_county.get(normalise_county(name)) if name else None
        if not zips:
            unmatched.append(r)
            continue
        assert name is not None
        components: tuple[Component, ...] = ()
        if r.general_intrastate > 0:
            code = f"US-CO-{state}-{slug(name)}"
            components = (Component("county", name, r.general_intrastate, code, r.code),)
        for zip5, primary in zips:
            records.append(
                LocalRecord(
                    state=state,
                    zip5=zip5,
                    components=components,
                    effective_from=r.effective_from,
                    effective_to=r.effective_to,
                    source=source,
                    source_kind="official_zip",
                    county=name,
                    primary=primary,
                    line=r.line,
                    scope=("county",),
                )
            )
    return CountyPlacement(records, unplaced, unmatched)
