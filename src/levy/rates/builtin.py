"""Adapter: loads the built-in data files (state rates, taxability) and the ZIP directory.

Loaded once and cached; the domain modules receive plain rows.
"""

from __future__ import annotations

import json
from datetime import date
from decimal import Decimal
from functools import lru_cache
from importlib import resources
from typing import Any

from levy.domain.tax.rates import DatedRate, RateTable, StateInfo, StatewideLocal, ZipPlace


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
    """ZIP -> (state, county, city) from the ``zipcodes`` package (which ships its data)."""
    import zipcodes

    out: dict[str, ZipPlace] = {}
    for z in zipcodes.list_all():
        out.setdefault(z["zip_code"], ZipPlace(z["state"], z.get("county") or None, z.get("city") or None))
    return out


def builtin_rate_table(zip_rows=()) -> RateTable:  # type: ignore[no-untyped-def]
    """A RateTable of the built-in state data, the ZIP directory and ``zip_rows``."""
    return RateTable.build(load_states(), zip_rows, zip_directory())
