"""Sourcing: which address decides each jurisdiction row of a line.

The rules are data (``levy/data/tax/sourcing.json``, read by
:func:`levy.ratefiles.builtin.load_sourcing`): per state, dated rules saying for
each kind of row (``statewide``: the state and its statewide mandatory local
portion; ``county``, ``city``, ``special``) whether the ship-from address
(``origin``) or the delivery address (``destination``) decides it, and
optionally a *fill*: destination rows added after the origin's, whole, while
the local total stays within a cap. Nothing here names a state.

A line with no ship-from is taxed at its delivery address, as before (no
sourcing is reported). A ship-from in another state than the delivery address
(or outside the US) is interstate: destination. Pure: no I/O.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, replace
from datetime import date
from decimal import Decimal
from typing import Literal

from levy.domain.periods import Dated
from levy.domain.tax.rate_table import JurisdictionRate, Resolution

Side = Literal["origin", "destination"]
ROW_KINDS = ("statewide", "county", "city", "special")
_ZERO = Decimal(0)


@dataclass(frozen=True, slots=True)
class Fill:
    """Destination rows of the ``order`` types added after the origin rows, whole, while the local total <= ``cap``."""

    cap: Decimal
    order: tuple[str, ...]
    # A city or county row is not added when the origin has a row of that type (special rows: per jurisdiction).
    one_per_type: bool = False


@dataclass(frozen=True, slots=True)
class SourcingRule(Dated):
    state: str
    kind: str  # destination | origin | mixed
    components: Mapping[str, Side]
    effective_from: date
    effective_to: date | None
    summary: str
    source: str
    fill: Fill | None = None

    def side(self, row: JurisdictionRate) -> Side:
        return self.components.get("statewide" if row.statewide else row.type, "destination")


@dataclass(frozen=True, slots=True)
class SourcingTable:
    rules: Mapping[str, tuple[SourcingRule, ...]]

    @classmethod
    def of(cls, rules: Iterable[SourcingRule]) -> SourcingTable:
        by_state: dict[str, list[SourcingRule]] = {}
        for r in rules:
            by_state.setdefault(r.state, []).append(r)
        return cls({s: tuple(rs) for s, rs in by_state.items()})

    def rule(self, state: str, on: date) -> SourcingRule | None:
        for r in self.rules.get(state, ()):
            if r.covers(on):
                return r
        return None


def parse_rules(raw: Mapping[str, object]) -> SourcingTable:
    """The table of a ``sourcing.json`` document (ValueError when malformed)."""
    out: list[SourcingRule] = []
    states = raw["states"]
    assert isinstance(states, Mapping)
    for state, entries in states.items():
        for e in entries:
            comps = dict(e["components"])
            if set(comps) != set(ROW_KINDS) or not set(comps.values()) <= {"origin", "destination"}:
                raise ValueError(f"sourcing.json {state}: components must map {ROW_KINDS} to origin|destination")
            fill = e.get("fill")
            out.append(SourcingRule(
                state=state,
                kind=e["kind"],
                components=comps,
                effective_from=date.fromisoformat(e["effective_from"]),
                effective_to=date.fromisoformat(e["effective_to"]) if e.get("effective_to") else None,
                summary=e["summary"],
                source=e["source"],
                fill=Fill(Decimal(fill["cap"]), tuple(fill["order"]), bool(fill.get("one_per_type"))) if fill else None,
            ))
    return SourcingTable.of(out)


@dataclass(frozen=True, slots=True)
class Sourced:
    """A line's resolution after sourcing: ``resolution`` holds the rows to tax
    (each row's ``sourcing`` set), ``kind`` the line's machine-readable sourcing
    (``destination``, ``origin``, ``mixed``) and ``detail`` the rule in words."""

    resolution: Resolution
    kind: str
    detail: str


def source(
    destination: Resolution, origin: Resolution | None, table: SourcingTable, on: date, origin_label: str = ""
) -> Sourced | None:
    """The rows to tax for a line delivered at ``destination`` and shipped from
    ``origin`` (None: no ship-from, the line is taxed as before and None is returned).

    ``origin_label`` says where the ship-from came from (e.g. "location loc_...").
    """
    if origin is None:
        return None
    rule = table.rule(destination.state, on) if destination.state else None
    return _source(destination, origin, rule, origin_label)


def _label(row: JurisdictionRate, side: Side) -> JurisdictionRate:
    return row if row.sourcing == side else replace(row, sourcing=side)


def _source(destination: Resolution, origin: Resolution, rule: SourcingRule | None, where: str) -> Sourced:
    where = f" ({where})" if where else ""
    if not destination.supported or not origin.supported or origin.state != destination.state:
        rows = tuple(_label(r, "destination") for r in destination.rows)
        detail = (f"sourced to the delivery address: the ship-from{where} is in "
                  f"{origin.state or origin.country}, the delivery in {destination.state or destination.country} "
                  "(interstate sales are destination-sourced)")
        return Sourced(replace(destination, rows=rows), "destination", detail)
    if rule is None or rule.kind == "destination":
        rows = tuple(_label(r, "destination") for r in destination.rows)
        why = rule.summary if rule is not None else "no sourcing rule on record for the date: destination"
        return Sourced(replace(destination, rows=rows), "destination",
                       f"sourced to the delivery address (ship-from{where} in the same state): {why}")
    rows: list[JurisdictionRate] = []
    for side, res in (("origin", origin), ("destination", destination)):
        for r in res.rows:
            if rule.side(r) == side:
                rows.append(_label(r, side))  # type: ignore[arg-type]
    added: list[str] = []
    left_out: list[str] = []
    if rule.fill is not None:
        have = {r.code for r in rows}
        local = sum((r.rate for r in rows if not r.statewide), _ZERO)
        origin_types = {r.type for r in rows if not r.statewide and r.type != "special"}
        for kind in rule.fill.order:
            for r in destination.rows:
                if r.statewide or r.type != kind or r.code in have:
                    continue
                if rule.fill.one_per_type and kind in origin_types:
                    left_out.append(f"{r.name} {_pct(r.rate)} (a {kind} tax was collected at the origin)")
                    continue
                if local + r.rate <= rule.fill.cap:
                    rows.append(_label(r, "destination"))
                    have.add(r.code)
                    local += r.rate
                    added.append(f"{r.name} {_pct(r.rate)}")
                else:
                    left_out.append(f"{r.name} {_pct(r.rate)} (over the {_pct(rule.fill.cap)} local cap)")
    order = {k: i for i, k in enumerate(ROW_KINDS)}
    rows.sort(key=lambda r: (0 if r.statewide else 1 + order.get(r.type, 3)))
    parts = [f"sourced by the {rule.state} rule{where}: {rule.summary}"]
    if rule.fill is not None:
        if added:
            parts.append(f"destination local taxes added up to the {_pct(rule.fill.cap)} local cap: {', '.join(added)}")
        if left_out:
            parts.append(f"not added: {', '.join(left_out)}")
    how = f"{origin.how} (origin); {destination.how} (destination)" if origin.how != destination.how else destination.how
    details = tuple(dict.fromkeys([*origin.details, *destination.details]))
    res = replace(destination, rows=tuple(rows), how=how, details=details,
                  local_missing=origin.local_missing or destination.local_missing)
    return Sourced(res, rule.kind, "; ".join(parts))


def _pct(rate: Decimal) -> str:
    text = format((rate * 100).normalize(), "f")
    return f"{text}%"
