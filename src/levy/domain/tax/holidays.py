"""Sales tax holidays as dated data (issue 31): pure, no I/O (loading is in levy.rates.builtin).

A holiday is a state's period (first and last day, inclusive, on the engine's
transaction date) during which some product categories are exempt when their
price per item is under a limit, at the state level only or at the state and
local levels except in the local jurisdictions that opt out.

Choosing a holiday for a line (state, category path, price per item, quantity, date):

1. the state's holidays whose period covers the date;
2. within them, the first group of items (``HolidayItems``) whose category
   prefixes hold the line's category (``CLOTHING.APPAREL`` holds
   ``CLOTHING.APPAREL.FOOTWEAR``) and whose limit the price meets: ``below``
   (price < limit), ``at_or_below`` (price <= limit) or no limit. The price is
   the line's amount after its discounts divided by its quantity (the
   taxability thresholds' per-item price); ``per: "pair"`` compares the price
   of two units (a line of single items of a pair: one glove, one shoe)
   instead, so that only there the quantity matters.

See docs/tax-engine.md, "Sales tax holidays", and ``levy holidays``.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import date
from decimal import Decimal
from typing import Any, Literal

LimitMode = Literal["below", "at_or_below"]
Per = Literal["item", "pair"]
Levels = Literal["state", "state_and_local"]
LIMIT_MODES = ("below", "at_or_below")
PER = ("item", "pair")
LEVELS = ("state", "state_and_local")


@dataclass(frozen=True, slots=True)
class HolidayItems:
    """One group of a holiday's items: category prefixes and their price limit (minor units, None: none)."""

    codes: tuple[str, ...]
    label: str
    limit: int | None = None
    limit_mode: LimitMode = "below"
    per: Per = "item"

    def holds(self, category: str) -> bool:
        return any(category == c or category.startswith(c + ".") for c in self.codes)

    def within(self, price: Decimal) -> bool:
        limit = self.limit
        if limit is None:
            return True
        return price < limit or (self.limit_mode == "at_or_below" and price == limit)

    def limit_text(self) -> str:
        if self.limit is None:
            return "no price limit"
        dollars = f"${self.limit / 100:,.2f}".replace(".00", "")
        words = "under" if self.limit_mode == "below" else "at or below"
        return f"{words} {dollars} per {self.per}"


@dataclass(frozen=True, slots=True)
class Holiday:
    state: str
    name: str
    first_day: date
    last_day: date
    items: tuple[HolidayItems, ...]
    levels: Levels
    source: str
    source_url: str = ""
    # Local jurisdiction codes (or code prefixes, "US-CI-MO-") that do not take part: their rows stay taxed.
    local_opt_outs: tuple[str, ...] = ()
    note: str = ""

    def covers(self, on: date) -> bool:
        return self.first_day <= on <= self.last_day

    def exempts(self, jtype: str, code: str) -> bool:
        """Whether a row of this type and jurisdiction code is exempt under the holiday."""
        if jtype == "state":
            return True
        return self.levels == "state_and_local" and not self.opted_out(code)

    def opted_out(self, code: str) -> bool:
        return bool(self.local_opt_outs) and code.startswith(self.local_opt_outs)

    def period_text(self) -> str:
        return f"{self.first_day.isoformat()} to {self.last_day.isoformat()}"


@dataclass(frozen=True, slots=True)
class HolidayMatch:
    """A line that qualifies: the holiday and the items group it qualifies under."""

    holiday: Holiday
    items: HolidayItems

    @property
    def rule_name(self) -> str:
        return f"Exempt: {self.holiday.name} ({self.holiday.period_text()})"

    @property
    def detail(self) -> str:
        h = self.holiday
        return f"sales tax holiday: {self.items.label}, {self.items.limit_text()} ({h.source})"

    def taxed_detail(self, code: str) -> str:
        """Why a local row of a qualifying line is taxed all the same."""
        h = self.holiday
        if h.opted_out(code):
            return f"{h.name}: this local jurisdiction does not take part (opted out); the state level is exempt"
        return f"{h.name}: exempts the state level only; local tax charged"


class Holidays:
    """Immutable index of holidays by state, in date order."""

    __slots__ = ("_by_state", "_all")

    def __init__(self, holidays: Iterable[Holiday]) -> None:
        by_state: dict[str, list[Holiday]] = {}
        for h in holidays:
            by_state.setdefault(h.state, []).append(h)
        self._by_state = {s: tuple(sorted(hs, key=lambda h: h.first_day)) for s, hs in by_state.items()}
        self._all = tuple(h for s in sorted(self._by_state) for h in self._by_state[s])

    def __len__(self) -> int:
        return len(self._all)

    def all(self) -> tuple[Holiday, ...]:
        """Every holiday, by state then first day."""
        return self._all

    def of_state(self, state: str) -> tuple[Holiday, ...]:
        return self._by_state.get(state, ())

    def find(self, state: str | None, category: str | None, amount: int, quantity: Decimal,
             on: date) -> HolidayMatch | None:
        """The holiday under which a line of ``category`` (``amount`` after its discounts, ``quantity``
        units) is exempt in ``state`` on ``on``, or None."""
        found = self._by_state.get(state or "")
        if not found or not category:
            return None
        for h in found:
            if not h.covers(on):
                continue
            for items in h.items:
                if items.holds(category) and items.within(_price(amount, quantity, items.per)):
                    return HolidayMatch(h, items)
        return None


def _price(amount: int, quantity: Decimal, per: Per) -> Decimal:
    """The price compared with the limit: per unit, or per pair (two units when the line has two or more)."""
    unit = Decimal(amount) / quantity if quantity else Decimal(amount)
    if per == "pair":
        return unit * min(quantity, 2) if quantity else unit
    return unit


HOLIDAY_KEYS = frozenset({"state", "name", "first_day", "last_day", "items", "levels", "local_opt_outs", "source",
                          "source_url", "note"})
ITEM_KEYS = frozenset({"codes", "label", "limit", "limit_mode", "per"})


def parse_holidays(raw: Mapping[str, Any], known_codes: Iterable[str] = ()) -> Holidays:
    """``holidays.json`` as a Holidays index; a bad entry is a ValueError naming it.

    ``known_codes``: the catalogue's tax codes; when given, every category prefix
    must be one of them or a prefix of one."""
    known = set(known_codes)
    prefixes = {".".join(c.split(".")[:n]) for c in known for n in range(1, c.count(".") + 2)}
    out = []
    for h in raw["holidays"]:
        where = f"holiday {h.get('state')} {h.get('name')!r} from {h.get('first_day')}"
        if set(h) - HOLIDAY_KEYS:
            raise ValueError(f"{where}: unknown keys {sorted(set(h) - HOLIDAY_KEYS)}")
        if not str(h.get("source") or "").strip():
            raise ValueError(f"{where}: a holiday needs its source (statute or the tax authority's page)")
        if h.get("levels") not in LEVELS:
            raise ValueError(f"{where}: levels must be one of {LEVELS}")
        first, last = date.fromisoformat(h["first_day"]), date.fromisoformat(h["last_day"])
        if last < first:
            raise ValueError(f"{where}: last_day is before first_day")
        groups = []
        for i in h["items"]:
            if set(i) - ITEM_KEYS or not i.get("codes"):
                raise ValueError(f"{where}: bad items {i!r} (keys {sorted(ITEM_KEYS)}, codes required)")
            if i.get("limit_mode", "below") not in LIMIT_MODES or i.get("per", "item") not in PER:
                raise ValueError(f"{where}: limit_mode must be one of {LIMIT_MODES}, per one of {PER}")
            unknown = [c for c in i["codes"] if prefixes and c not in prefixes]
            if unknown:
                raise ValueError(f"{where}: unknown tax codes {unknown}")
            groups.append(HolidayItems(tuple(i["codes"]), i.get("label") or ", ".join(i["codes"]), i.get("limit"),
                                       i.get("limit_mode", "below"), i.get("per", "item")))
        out.append(Holiday(h["state"], h["name"], first, last, tuple(groups), h["levels"], h["source"],
                           h.get("source_url", ""), tuple(h.get("local_opt_outs", ())), h.get("note", "")))
    return Holidays(out)
