"""What changed in a state's boundary records since its previous import.

The SST states publish their rate and boundary files every quarter; an import
says, per state, how the new quarter differs from the one imported before it:
boundary records added and removed (a record is its ZIP, ZIP+4 range or street
range), records that now place an address in other jurisdictions or at other
rates, and the jurisdictions whose rate changed. Pure: records in, a
:class:`StateChanges` out. Each record counts with the jurisdictions in force
on its import's date (the quarter), else those of its latest piece.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import date
from decimal import Decimal

from levy.domain.periods import within
from levy.domain.tax.local_rates import Component, LocalRecord

# (ZIP, plus-4 low, plus-4 high, street low, street high, parity, pre-directional, street, suffix, post-directional,
#  secondary range)
Key = tuple[object, ...]
# One jurisdiction of a record: (authority or code, name, rate)
Juris = tuple[str, str, Decimal]
SHOWN = 10


@dataclass(frozen=True)
class Piece:
    key: Key
    effective_from: date
    effective_to: date | None
    jurisdictions: frozenset[Juris]


@dataclass(frozen=True)
class StateChanges:
    state: str
    previous: str  # the previous import's source file
    added: int
    removed: int
    changed: int  # records kept whose jurisdictions or rates differ
    rates: tuple[tuple[str, str, Decimal, Decimal], ...] = field(default=())  # (authority, name, old, new)

    def lines(self) -> list[str]:
        out = [f"  {self.state} since {self.previous}: {self.added} records added, {self.removed} removed, "
               f"{self.changed} with other jurisdictions or rates; {len(self.rates)} rates changed"]
        out += [f"    {name} ({authority}): {_pct(old)} -> {_pct(new)}" for authority, name, old, new in self.rates[:SHOWN]]
        if len(self.rates) > SHOWN:
            out.append(f"    ... and {len(self.rates) - SHOWN} more")
        return out

    def summary(self) -> dict[str, object]:
        return {"state": self.state, "previous": self.previous, "added": self.added, "removed": self.removed,
                "changed": self.changed,
                "rates": [{"authority": a, "name": n, "old": str(o), "new": str(w)} for a, n, o, w in self.rates]}


def _pct(rate: Decimal) -> str:
    return f"{(rate * 100).normalize():f}%"


def record_key(r: LocalRecord) -> Key:
    s = r.street
    if s is None:
        return (r.zip5, r.plus4_low, r.plus4_high, None, None, None, None, None, None, None, None)
    return (r.zip5, r.plus4_low, r.plus4_high, s.low, s.high, s.parity, s.predir, s.street, s.suffix, s.postdir,
            s.unit.text() if s.unit else None)


def jurisdictions(components: Iterable[Component]) -> frozenset[Juris]:
    return frozenset((c.authority or c.code, c.name, c.rate) for c in components)


def piece(r: LocalRecord) -> Piece:
    return Piece(record_key(r), r.effective_from, r.effective_to, jurisdictions(r.components))


def _on(pieces: Iterable[Piece], on: date) -> dict[Key, frozenset[Juris]]:
    """Each key's jurisdictions in force on ``on``, else those of its latest piece."""
    chosen: dict[Key, Piece] = {}
    for p in pieces:
        best = chosen.get(p.key)
        if best is None:
            chosen[p.key] = p
            continue
        p_in, best_in = within(on, p.effective_from, p.effective_to), within(on, best.effective_from, best.effective_to)
        if (p_in and not best_in) or (p_in == best_in and p.effective_from > best.effective_from):
            chosen[p.key] = p
    return {k: p.jurisdictions for k, p in chosen.items()}


def compare(state: str, previous: str, old: Iterable[Piece], old_on: date, new: Iterable[Piece],
            new_on: date) -> StateChanges:
    before, after = _on(old, old_on), _on(new, new_on)
    changed = sum(1 for k, j in after.items() if k in before and before[k] != j)
    old_rates = {a: (n, r) for js in before.values() for a, n, r in js}
    new_rates = {a: (n, r) for js in after.values() for a, n, r in js}
    rates = tuple(sorted((a, new_rates[a][0], old_rates[a][1], new_rates[a][1]) for a in new_rates.keys() & old_rates.keys()
                         if old_rates[a][1] != new_rates[a][1]))
    return StateChanges(state, previous, len(after.keys() - before.keys()), len(before.keys() - after.keys()), changed,
                        rates)
