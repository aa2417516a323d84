"""Parser of Levy's generic local-rate CSV, for any state's official table
written out by hand or by a script (documented in docs/tax-engine.md).

One row per candidate: a state, a ZIP5, optionally a ZIP+4 range or a city
(and county), the row's local components and its dates::

    state,zip5,plus4_low,plus4_high,city,county,primary,effective_from,effective_to,components
    GA,31201,,,Macon,Bibb County,yes,2026-04-01,,county:Bibb County:4%
    GA,30303,,,Atlanta,Fulton County,yes,2026-01-01,2026-12-31,county:Fulton County:0.03;city:Atlanta:0.019

Columns are found by their header name (any order, case-insensitive).
Required: ``state``, ``zip5``, ``effective_from``, ``components``. Optional:
``plus4_low`` and ``plus4_high`` (both or neither), ``city``, ``county``,
``primary`` (``yes``/``no``, ``true``/``false``, ``1``/``0``),
``effective_to`` (inclusive; empty: open-ended), ``source_kind``
(``official_address``, ``official_zip`` or ``estimated``; default: the one the
import is given), ``scope`` (the component types the row states, separated by
``;``, e.g. ``city;special``: a partial record, laid over the ZIP's other
records for those types only; empty: the row states every type; only on rows
without a ZIP+4 range).

``components``: ``type:name:rate`` items separated by ``;``, ``type`` one of
``county``, ``city``, ``special``; the rate a fraction (``0.0125``) or a
percentage (``1.25%``). Empty: no local tax beyond the state's. Components
never include the state rate nor the state's statewide local portion (CA
1.25%, ...), which come from the built-in data. Each component's code is
``US-CO-``/``US-CI-``/``US-SP-<ST>-<SLUG of the name>``.

Pure: text lines in, records out; bad rows reported together (file and line).
"""

from __future__ import annotations

from collections.abc import Collection, Iterable
from datetime import date
from decimal import Decimal, InvalidOperation
from typing import cast

from levy.domain.tax.local_rates import SOURCE_PRECEDENCE, Component, LocalRecord, SourceKind
from levy.domain.tax.model import JurisdictionType
from levy.domain.tax.rate_table import slug
from levy.ratefiles.headed import Columns, parse_headed_csv

REQUIRED = ("state", "zip5", "effective_from", "components")
OPTIONAL = ("plus4_low", "plus4_high", "city", "county", "primary", "effective_to", "source_kind", "scope")
CODE_PREFIX: dict[str, str] = {"county": "CO", "city": "CI", "special": "SP"}
_TRUE = {"yes", "true", "1", "y"}
_FALSE = {"no", "false", "0", "n", ""}


def looks_like_generic(first_line: str) -> bool:
    cells = [c.strip().lower() for c in first_line.lstrip("\ufeff").split(",")]
    return bool(cells) and cells[0] == "state" and "components" in cells


def parse_generic(
    lines: Iterable[str],
    source: str,
    *,
    source_kind: SourceKind = "official_zip",
    states: Collection[str] | None = None,
) -> list[LocalRecord]:
    """Parse one file; ``states``: the state codes a row may name (None: any two letters)."""

    def header(cells: list[str]) -> Columns:
        names = [c.lower() for c in cells]
        missing = [c for c in REQUIRED if c not in names]
        unknown = [n for n in names if n and n not in REQUIRED + OPTIONAL]
        if missing or unknown:
            msg = f"header lacks {', '.join(missing)}" if missing else f"unknown column(s) {', '.join(unknown)}"
            raise ValueError(f"{msg}; expected {','.join(REQUIRED)} and optionally {','.join(OPTIONAL)}")
        return {n: i for i, n in enumerate(names)}

    def row(cells: list[str], columns: Columns, line_no: int) -> LocalRecord:
        record = _record(cells, columns, source, line_no, source_kind)
        if states is not None and record.state not in states:
            raise ValueError(f"unknown state {record.state!r}")
        return record

    return parse_headed_csv(lines, source, header=header, row=row, no_header="empty file")


def _record(rec: list[str], columns: Columns, source: str, line_no: int, default_kind: SourceKind) -> LocalRecord:
    def cell(name: str) -> str:
        i = columns.get(name)
        return rec[i] if i is not None and i < len(rec) else ""

    if len(rec) > len(columns):
        raise ValueError(f"expected {len(columns)} columns, found {len(rec)} (quote a value holding a comma)")
    state = cell("state").upper()
    if len(state) != 2 or not state.isalpha():
        raise ValueError(f"bad state {cell('state')!r} (two letters, e.g. GA)")
    zip5 = cell("zip5")
    if len(zip5) != 5 or not zip5.isdigit():
        raise ValueError(f"bad zip5 {zip5!r} (five digits)")
    low, high = cell("plus4_low") or None, cell("plus4_high") or None
    if (low is None) != (high is None):
        raise ValueError("plus4_low and plus4_high go together")
    if low is not None and high is not None:
        if not (len(low) == 4 and low.isdigit() and len(high) == 4 and high.isdigit() and low <= high):
            raise ValueError(f"bad ZIP+4 range {low!r}-{high!r} (four digits each, low <= high)")
    start = _date(cell("effective_from"), "effective_from")
    if start is None:
        raise ValueError("effective_from is required")
    end = _date(cell("effective_to"), "effective_to")
    if end is not None and end < start:
        raise ValueError("effective_to is before effective_from")
    primary = cell("primary").lower()
    if primary not in _TRUE | _FALSE:
        raise ValueError(f"primary must be yes or no, not {cell('primary')!r}")
    kind = cell("source_kind") or default_kind
    if kind not in SOURCE_PRECEDENCE:
        raise ValueError(f"source_kind must be one of {', '.join(SOURCE_PRECEDENCE)}, not {kind!r}")
    components = _components(cell("components"), state)
    scope = _scope(cell("scope"), components)
    if scope and low is not None:
        raise ValueError("scope is for ZIP-level rows only (no plus4_low/plus4_high)")
    return LocalRecord(
        state=state,
        zip5=zip5,
        components=components,
        effective_from=start,
        effective_to=end,
        source=source,
        source_kind=cast(SourceKind, kind),
        city=cell("city") or None,
        county=cell("county") or None,
        plus4_low=low,
        plus4_high=high,
        primary=primary in _TRUE,
        line=line_no,
        scope=scope,
    )


def _scope(text: str, components: tuple[Component, ...]) -> tuple[JurisdictionType, ...]:
    """The types of a ``scope`` cell (``city;special``), in county, city, special order."""
    named = {t.strip().lower() for t in text.split(";") if t.strip()}
    unknown = sorted(named - CODE_PREFIX.keys())
    if unknown:
        raise ValueError(f"scope type(s) {', '.join(unknown)} must be county, city or special")
    outside = sorted({c.type for c in components} - named) if named else []
    if outside:
        raise ValueError(f"component type(s) {', '.join(outside)} outside the row's scope {text!r}")
    return tuple(cast(JurisdictionType, t) for t in CODE_PREFIX if t in named)


def _components(text: str, state: str) -> tuple[Component, ...]:
    out: list[Component] = []
    seen: set[tuple[str, str]] = set()
    for item in (i.strip() for i in text.split(";")):
        if not item:
            continue
        parts = [p.strip() for p in item.split(":")]
        if len(parts) != 3 or not parts[1]:
            raise ValueError(f"component {item!r} must be type:name:rate (e.g. county:Bibb County:0.04)")
        typ, name, rate_text = parts
        typ = typ.lower()
        if typ not in CODE_PREFIX:
            raise ValueError(f"component type {parts[0]!r} must be county, city or special")
        if (typ, slug(name)) in seen:
            raise ValueError(f"component {typ}:{name} appears twice")
        seen.add((typ, slug(name)))
        out.append(Component(cast(JurisdictionType, typ), name, _rate(rate_text), f"US-{CODE_PREFIX[typ]}-{state}-{slug(name)}"))
    return tuple(out)


def _rate(text: str) -> Decimal:
    percent = text.endswith("%")
    try:
        value = Decimal(text.rstrip("%").strip())
    except InvalidOperation:
        raise ValueError(f"rate {text!r} is not a number") from None
    if percent:
        value = value / 100
    if not value.is_finite() or value < 0 or value >= 1:
        raise ValueError(f"rate {text!r} must be in [0, 1) (or [0%, 100%))")
    return value


def _date(text: str, column: str) -> date | None:
    if not text:
        return None
    try:
        return date.fromisoformat(text)
    except ValueError:
        raise ValueError(f"{column} {text!r} is not a date (YYYY-MM-DD)") from None
