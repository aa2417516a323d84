"""Official records that state a level replace what lower-ranked records say for
that level and for everything the level includes.

An official source may publish one rate for a level that contains taxes a
lower-ranked source lists apart: Georgia's county rate (the SST rate file, the
Department of Revenue's chart) contains the regional TSPLOST that the estimated
per-ZIP tables list as a special district. Laying the official county rate over
the table's record while keeping the table's special district would charge the
TSPLOST twice (Augusta 30901: 9.5% instead of 8.5%).

What a level includes is data (:class:`LevelInclusion`, from
``levy/data/tax/level_inclusions.json``, each with its source). A partial
official record (``scope`` names the levels it states) is widened to the
included types for a ZIP only where the arithmetic confirms it on the
lower-ranked record's own date: the official rate of the level equals the lower
record's components of that level plus those of the included types. The rate
table then replaces all of them (:func:`levy.domain.tax.rate_table._with_partial`);
elsewhere nothing is widened and the import report lists the disagreement.

Pure: records and plain data in, records and :class:`Replacement` lines out.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from datetime import date
from decimal import Decimal

from levy.domain.periods import Dated
from levy.domain.tax.local_rates import SOURCE_PRECEDENCE, Component, LocalRecord
from levy.domain.tax.model import JurisdictionType

_ZERO = Decimal(0)


@dataclass(frozen=True, slots=True)
class LevelInclusion(Dated):
    state: str
    level: JurisdictionType  # the level an official record states, e.g. "county"
    includes: tuple[JurisdictionType, ...]  # what its rate contains, e.g. ("special",)
    effective_from: date
    effective_to: date | None
    source: str


@dataclass(frozen=True, slots=True)
class Replacement:
    """One ZIP where an official record replaced a lower-ranked record's components."""

    zip5: str
    name: str  # the official component's name, e.g. "Richmond County"
    level: str
    rate: Decimal  # the official rate of the level on ``on``
    source: str
    line: int
    replaced: tuple[Component, ...]  # the lower-ranked record's components of the level and what it includes
    replaced_source: str
    replaced_line: int
    on: date  # the date compared (the lower-ranked record's first day)

    def text(self) -> str:
        parts = " + ".join(f"{c.type} {c.name} {_pct(c.rate)}" for c in self.replaced)
        return (f"ZIP {self.zip5}: {self.level} {self.name} {_pct(self.rate)} ({self.source} line {self.line}) "
                f"replaces {parts} ({self.replaced_source} line {self.replaced_line}; equal on {self.on.isoformat()})")


def widen_official_levels(
    new: Sequence[LocalRecord],
    others: Iterable[LocalRecord],
    inclusions: Iterable[LevelInclusion],
) -> tuple[list[LocalRecord], list[Replacement]]:
    """``new`` with the partial records of each confirmed ZIP widened to the
    types their level includes, and one :class:`Replacement` per ZIP and
    lower-ranked record replaced."""
    by_level: dict[tuple[str, str], list[LevelInclusion]] = {}
    for inc in inclusions:
        by_level.setdefault((inc.state, inc.level), []).append(inc)
    mine: dict[tuple[str, str], list[LocalRecord]] = {}
    for r in new:
        if r.scope and r.zip5 is not None and any((r.state, level) in by_level for level in r.scope):
            mine.setdefault((r.state, r.zip5), []).append(r)
    if not mine:
        return list(new), []
    widened: dict[tuple[str, str], set[str]] = {}
    found: list[Replacement] = []
    for o in others:
        if o.zip5 is None or o.scope or o.plus4_low is not None or o.street is not None:
            continue
        candidates = mine.get((o.state, o.zip5))
        if not candidates:
            continue
        on = o.effective_from
        official = _in_force(candidates, on)
        if official is None or SOURCE_PRECEDENCE.get(official.source_kind, 0) <= SOURCE_PRECEDENCE.get(o.source_kind, 0):
            continue
        for level in official.scope:
            inc = next((i for i in by_level.get((o.state, level), ()) if i.covers(on)), None)
            if inc is None:
                continue
            theirs = tuple(c for c in o.components if c.type == level or (c.type in inc.includes and c.rate > 0))
            included = [c for c in theirs if c.type != level]
            rate = sum((c.rate for c in official.components if c.type == level), _ZERO)
            if included and rate == sum((c.rate for c in theirs), _ZERO):
                widened.setdefault((o.state, o.zip5), set()).update(inc.includes)
                name = next((c.name for c in official.components if c.type == level), level)
                found.append(Replacement(o.zip5, name, level, rate, official.source, official.line, theirs,
                                         o.source, o.line, on))
    out = [
        replace(r, scope=(*r.scope, *sorted(t for t in widened[(r.state, r.zip5)] if t not in r.scope)))  # type: ignore[arg-type]
        if r.zip5 is not None and r.scope and (r.state, r.zip5) in widened else r
        for r in new
    ]
    return out, sorted(found, key=lambda f: f.zip5)


def _in_force(records: Sequence[LocalRecord], on: date) -> LocalRecord | None:
    """The primary record in force on ``on``, else the first."""
    live = [r for r in records if r.covers(on)]
    return next((r for r in live if r.primary), live[0] if live else None)


def _pct(rate: Decimal) -> str:
    return f"{(rate * 100).normalize():f}%"
