"""Adapter: loads the built-in data files (state rates, taxability) and the ZIP directory.

Loaded once and cached; the domain modules receive plain rows.
"""

from __future__ import annotations

import json
import sys
from datetime import date
from decimal import Decimal
from functools import lru_cache
from importlib import resources
from typing import Any

from levy.domain.tax.rate_table import DatedRate, RateTable, StateInfo, StatewideLocal, ZipPlace


def _d(text: str | None) -> date | None:
    return date.fromisoformat(text) if text else None


def _read_json(*parts: str) -> Any:
    ref = resources.files("levy.data.tax").joinpath(*parts)
    return json.loads(ref.read_text(encoding="utf-8"))


@lru_cache(maxsize=1)
def load_states() -> tuple[StateInfo, ...]:
    raw = _read_json("state_rates.json")
    out = []
    for code, e in raw["states"].items():
        rates = tuple(
            DatedRate(Decimal(r["rate"]), _d(r["effective_from"]), _d(r.get("effective_to")), r["source"])  # type: ignore[arg-type]
            for r in e["rates"]
        )
        swl = tuple(
            StatewideLocal(
                r["name"], r["type"], Decimal(r["rate"]), _d(r["effective_from"]), _d(r.get("effective_to")), r["source"]  # type: ignore[arg-type]
            )
            for r in e.get("statewide_local", ())
        )
        out.append(StateInfo(code, e["name"], e["has_sales_tax"], e["has_local_taxes"], rates, swl, e.get("rule_name")))
    return tuple(out)


@lru_cache(maxsize=1)
def zip_directory() -> dict[str, ZipPlace]:
    """ZIP -> (state, county, city) from the ``zipcodes`` package (which ships its data).

    Read a hundred ZIP prefixes at a time rather than with ``zipcodes.list_all()``,
    which keeps all 42,000 records (every field) cached in the module for the life
    of the process (about 145 MB); places are shared between ZIPs and their
    strings interned."""
    import zipcodes

    out: dict[str, ZipPlace] = {}
    places: dict[tuple[str, str | None, str | None], ZipPlace] = {}
    for prefix in range(100):
        for z in zipcodes.similar_to(f"{prefix:02d}"):
            key = (sys.intern(z["state"]), _intern(z.get("county")), _intern(z.get("city")))
            place = places.get(key)
            if place is None:
                place = places[key] = ZipPlace(*key)
            out.setdefault(sys.intern(z["zip_code"]), place)
    return out


def _intern(value: str | None) -> str | None:
    return sys.intern(value) if value else None


def builtin_rate_table(records=(), addresses=None) -> RateTable:  # type: ignore[no-untyped-def]
    """A RateTable of the built-in state data, the ZIP directory and imported ``records``
    (LocalRecord, or ZipRateRow read as estimated records), oldest import first; an
    official level replaces what it includes (``level_inclusions.json``). ``addresses``:
    the address-level records held outside (``levy.store.address_file``)."""
    return RateTable.build(load_states(), records, zip_directory(), load_level_inclusions(),
                           international=load_international(), addresses=addresses)


@lru_cache(maxsize=1)
def states_by_code() -> dict[str, StateInfo]:
    return {s.code: s for s in load_states()}


def zip5_records(rows):  # type: ignore[no-untyped-def]
    """Per-ZIP table rows as estimated LocalRecords, named from the ZIP directory."""
    from levy.domain.tax.rate_table import zip_row_record

    states = states_by_code()
    directory = zip_directory()
    counties = state_counties()
    places = state_places()
    return [zip_row_record(states[r.state], r, directory.get(r.zip5), counties.get(r.state), places.get(r.state))
            for r in rows if r.state in states]


@lru_cache(maxsize=1)
def state_counties() -> dict[str, dict[str, str]]:
    """State code -> normalised county name -> the Census county name (``county_fips.csv``)."""
    from levy.domain.tax.place_names import normalise_county
    from levy.ratefiles.sst import STATE_FIPS

    out: dict[str, dict[str, str]] = {}
    for (fips, _), name in county_names().items():
        if fips in STATE_FIPS:
            out.setdefault(STATE_FIPS[fips], {})[normalise_county(name)] = name
    return out


@lru_cache(maxsize=1)
def state_places() -> dict[str, frozenset[str]]:
    """State code -> the normalised city names of its ZIPs in the ZIP directory (the places it knows)."""
    from levy.domain.tax.place_names import normalise_place

    out: dict[str, set[str]] = {}
    for place in zip_directory().values():
        if place.city:
            out.setdefault(place.state, set()).add(normalise_place(place.city))
    return {state: frozenset(names) for state, names in out.items()}


RULE_KEYS = frozenset({
    "code", "attributes", "treatment", "name", "source", "source_url", "unsourced", "effective_from", "effective_to",
    "rate", "percent", "threshold", "threshold_mode", "threshold_counts", "local", "local_rate", "local_exceptions",
    "detail", "depends_on", "note",
})
LOCAL_EXCEPTION_KEYS = frozenset({"types", "codes", "local", "rate"})


def _dec(v: Any) -> Decimal | None:
    return Decimal(str(v)) if v is not None else None


def _rule(state: str, r: dict[str, Any]):  # type: ignore[no-untyped-def]
    """One rule of ``<ST>.json`` (keys: docs/tax-engine.md, "Taxability rules"); a bad rule is a ValueError."""
    from levy.domain.tax.taxability import (
        LOCAL_MODES,
        LOCAL_TYPES,
        THRESHOLD_COUNTS,
        THRESHOLD_MODES,
        TREATMENTS,
        LocalException,
        Rule,
    )

    where = f"{state} {r.get('code')!r} {r.get('attributes', [])} from {r.get('effective_from')}"
    unknown = set(r) - RULE_KEYS
    if unknown:
        raise ValueError(f"{where}: unknown keys {sorted(unknown)}")
    treatment = r["treatment"]
    if treatment not in TREATMENTS:
        raise ValueError(f"{where}: unknown treatment {treatment!r}")
    unsourced = bool(r.get("unsourced", False))
    if not unsourced and not str(r.get("source") or "").strip():
        raise ValueError(f"{where}: a rule needs a source or \"unsourced\": true")
    if treatment == "reduced" and r.get("rate") is None:
        raise ValueError(f"{where}: a reduced rule needs a rate")
    if treatment == "percentage" and r.get("percent") is None:
        raise ValueError(f"{where}: a percentage rule needs a percent")
    if treatment == "threshold":
        if r.get("threshold") is None or r.get("threshold_mode") not in THRESHOLD_MODES:
            raise ValueError(f"{where}: a threshold rule needs a threshold and a threshold_mode of {THRESHOLD_MODES}")
        if r["threshold_mode"] == "rate_above" and r.get("rate") is None:
            raise ValueError(f"{where}: threshold_mode rate_above needs a rate")
    counts = r.get("threshold_counts", "price")
    if counts not in THRESHOLD_COUNTS or (counts != "price" and r.get("threshold_mode") == "exempt_up_to"):
        raise ValueError(f"{where}: threshold_counts must be one of {THRESHOLD_COUNTS} (price only for exempt_up_to)")
    local = r.get("local", "follow")
    if local not in LOCAL_MODES:
        raise ValueError(f"{where}: unknown local mode {local!r}")
    exceptions = []
    for e in r.get("local_exceptions", ()):
        if set(e) - LOCAL_EXCEPTION_KEYS or e.get("local") not in LOCAL_MODES or set(e.get("types", ())) - set(LOCAL_TYPES):
            raise ValueError(f"{where}: bad local exception {e!r} (keys {sorted(LOCAL_EXCEPTION_KEYS)})")
        exceptions.append(LocalException(e["local"], frozenset(e.get("types", ())), tuple(e.get("codes", ())),
                                         _dec(e.get("rate"))))
    return Rule(
        state=state,
        code=r["code"],
        attributes=frozenset(r.get("attributes", ())),
        treatment=treatment,
        name=r["name"],
        source=r.get("source") or "",
        effective_from=_d(r["effective_from"]),  # type: ignore[arg-type]
        effective_to=_d(r.get("effective_to")),
        rate=_dec(r.get("rate")),
        percent=_dec(r.get("percent")),
        threshold=r.get("threshold"),
        threshold_mode=r.get("threshold_mode"),
        threshold_counts=counts,
        local=local,
        local_rate=_dec(r.get("local_rate")),
        local_exceptions=tuple(exceptions),
        detail=r.get("detail", ""),
        depends_on=tuple(r.get("depends_on", ())),
        note=r.get("note", ""),
        unsourced=unsourced,
        source_url=r.get("source_url", ""),
    )


@lru_cache(maxsize=1)
def load_taxability():  # type: ignore[no-untyped-def]
    """The built-in taxability rules (one JSON file per state) as a Taxability index."""
    from levy.domain.tax.taxability import Taxability

    rules = []
    folder = resources.files("levy.data.tax").joinpath("taxability")
    for entry in sorted(folder.iterdir(), key=lambda e: e.name):
        if not entry.name.endswith(".json"):
            continue
        raw = json.loads(entry.read_text(encoding="utf-8"))
        rules.extend(_rule(raw["state"], r) for r in raw["rules"])
    return Taxability(rules)


@lru_cache(maxsize=1)
def load_sourcing():  # type: ignore[no-untyped-def]
    """The per-state sourcing rules (``sourcing.json``) as a SourcingTable."""
    from levy.domain.tax.sourcing import parse_rules

    return parse_rules(_read_json("sourcing.json"))


@lru_cache(maxsize=1)
def load_holidays():  # type: ignore[no-untyped-def]
    """The sales tax holidays (``holidays.json``) as a Holidays index, their codes checked
    against the catalogue."""
    from levy.domain.tax.holidays import parse_holidays

    catalogue = json.loads(resources.files("levy").joinpath("data/catalogue/product_tax_codes.json")
                           .read_text(encoding="utf-8"))
    return parse_holidays(_read_json("holidays.json"), (e["code"] for e in catalogue["tax_codes"]))


def holidays_not_included() -> list[dict[str, str]]:
    """The holidays the data leaves out, with why (``holidays.json`` ``not_included``)."""
    return list(_read_json("holidays.json").get("not_included", ()))


@lru_cache(maxsize=1)
def load_item_rules():  # type: ignore[no-untyped-def]
    """The item rules (``item_rules.json``): delivery that follows the goods, single-article bands."""
    from levy.domain.tax.item_rules import parse_rules

    return parse_rules(_read_json("item_rules.json"))


@lru_cache(maxsize=1)
def load_local_limits():  # type: ignore[no-untyped-def]
    """State -> documented maximum local and combined rates (``local_rate_limits.json``)."""
    from levy.ratefiles.report import LocalLimit

    raw = _read_json("local_rate_limits.json")
    return {
        code: LocalLimit(
            Decimal(e["max_local_rate"]) if e.get("max_local_rate") is not None else None,
            Decimal(e["max_combined_rate"]) if e.get("max_combined_rate") is not None else None,
            e["source"],
        )
        for code, e in raw["states"].items()
    }


@lru_cache(maxsize=1)
def load_level_inclusions():  # type: ignore[no-untyped-def]
    """What an official rate of a level includes (``level_inclusions.json``), see
    :mod:`levy.domain.tax.level_overlay`."""
    from levy.domain.tax.level_overlay import LevelInclusion

    return tuple(
        LevelInclusion(e["state"], e["level"], tuple(e["includes"]), date.fromisoformat(e["effective_from"]),
                       date.fromisoformat(e["effective_to"]) if e.get("effective_to") else None, e["source"])
        for e in _read_json("level_inclusions.json")["inclusions"]
    )


@lru_cache(maxsize=1)
def county_names() -> dict[tuple[str, str], str]:
    """(state FIPS, county FIPS) -> county name: the U.S. Census Bureau's 2020
    county list (public domain), shipped as ``county_fips.csv``."""
    import csv

    text = resources.files("levy.data.tax").joinpath("county_fips.csv").read_text(encoding="utf-8")
    return {(r["state_fips"], r["county_fips"]): r["name"] for r in csv.DictReader(text.splitlines())}


def zip_counties(state: str) -> dict[str, tuple[str, ...]]:
    """ZIP -> its counties (primary first) for the ZIPs of ``state`` in the ZIP
    directory. The directory knows one county per ZIP, so one county each."""
    return {z: (p.county,) for z, p in zip_directory().items() if p.state == state and p.county}


@lru_cache(maxsize=1)
def load_international():  # type: ignore[no-untyped-def]
    """VAT and GST outside the US: ``international/eu.json`` and ``international/other.json``."""
    import re

    from levy.domain.tax.international import (
        EU_OSS,
        CategoryRate,
        Country,
        International,
        Subdivision,
        TaxLevel,
    )

    def rates(rows: list[dict[str, Any]]) -> tuple[DatedRate, ...]:
        return tuple(DatedRate(Decimal(r["rate"]), _d(r["effective_from"]), _d(r.get("effective_to")), r["source"])  # type: ignore[arg-type]
                     for r in rows)

    def categories(rows: list[dict[str, Any]]) -> tuple[CategoryRate, ...]:
        return tuple(CategoryRate(tuple(c["codes"]), c["name"], DatedRate(
            Decimal(c["rate"] or 0), _d(c["effective_from"]), _d(c.get("effective_to")), c["source"]),  # type: ignore[arg-type]
            c["rate"] is None) for c in rows)

    def level(e: dict[str, Any], covered_by: frozenset[str]) -> TaxLevel:
        return TaxLevel(e["code"], e["name"], e["type"], e["tax_type"], e["tax_name"], rates(e["rates"]),
                        categories([*e.get("categories", []), *common]), covered_by | {e["code"]})

    countries = []
    files = [_read_json("international", name) for name in ("eu.json", "other.json")]
    common = [c for f in files for c in f.get("common_categories", ())]  # on every level
    for f in files:
        for code, e in f["countries"].items():
            union = e.get("union")
            covered = frozenset({EU_OSS}) if union == "EU" else frozenset()
            own = level({**e, "code": code, "type": "country"}, covered)
            subs = {s: Subdivision(v["name"], tuple(level(x, covered) for x in v["levels"]), v.get("replaces_country", False))
                    for s, v in e.get("subdivisions", {}).items()}
            postal = re.compile(e["postal_code"]) if e.get("postal_code") else None
            countries.append(Country(code, e["name"], union, (own,), postal, tuple(e.get("tax_id_types", ())), subs,
                                     e.get("subdivision_required", False)))
    return International(countries)
