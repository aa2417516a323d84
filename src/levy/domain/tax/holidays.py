"""Sales tax holidays as dated data: pure, no I/O (loading is in levy.ratefiles.builtin).

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

from levy.domain.memo import BoundedMemo

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
        return _holds(frozenset(self.codes), category)

    def admits(self, amount: int, quantity: Decimal) -> bool:
        """Whether a line of ``quantity`` units for ``amount`` meets the limit: the price per item (per pair:
        of two units, or of one when the line has one), ``amount / quantity [x 2]``, compared without
        dividing (``amount [x 2] < limit x quantity``)."""
        limit = self.limit
        if limit is None:
            return True
        if quantity <= 0:
            lhs, rhs = amount, limit
        else:
            lhs, rhs = (amount * min(quantity, 2) if self.per == "pair" else amount), limit * quantity
        return lhs < rhs or (self.limit_mode == "at_or_below" and lhs == rhs)

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


class HolidayMatch:
    """A line that qualifies: the holiday and the items group it qualifies under, with the words of its
    rows worked out once (when the index is built)."""

    __slots__ = ("detail", "holiday", "items", "rule_name")

    def __init__(self, holiday: Holiday, items: HolidayItems) -> None:
        self.holiday, self.items = holiday, items
        self.rule_name = f"Exempt: {holiday.name} ({holiday.period_text()})"
        self.detail = f"sales tax holiday: {items.label}, {items.limit_text()} ({holiday.source})"

    def taxed_detail(self, code: str) -> str:
        """Why a local row of a qualifying line is taxed all the same."""
        h = self.holiday
        if h.opted_out(code):
            return f"{h.name}: this local jurisdiction does not take part (opted out); the state level is exempt"
        return f"{h.name}: exempts the state level only; local tax charged"


class Holidays:
    """Immutable index of holidays by state, in date order.

    :meth:`find` runs for every line of every calculation: a state without holidays is one dict miss; a
    state with some compares the date with each period, and only a line on a holiday's day has its category
    and price looked at (each group's prefixes in a set, each category's prefixes tried from the longest)."""

    __slots__ = ("_all", "_by_state", "_found")

    def __init__(self, holidays: Iterable[Holiday]) -> None:
        by_state: dict[str, list[Holiday]] = {}
        for h in holidays:
            by_state.setdefault(h.state, []).append(h)
        ordered = {s: sorted(hs, key=lambda h: h.first_day) for s, hs in by_state.items()}
        self._all = tuple(h for s in sorted(ordered) for h in ordered[s])
        self._by_state: dict[str, tuple[tuple[date, date, tuple[tuple[frozenset[str], HolidayMatch], ...]], ...]] = {
            s: tuple((h.first_day, h.last_day, tuple((frozenset(i.codes), HolidayMatch(h, i)) for i in h.items))
                     for h in hs)
            for s, hs in ordered.items()
        }
        # (state, category, date) -> the groups in force that hold the category; bounded.
        self._found: BoundedMemo[tuple[str, str, date], tuple[HolidayMatch, ...]] = BoundedMemo(20_000)

    def __len__(self) -> int:
        return len(self._all)

    def all(self) -> tuple[Holiday, ...]:
        """Every holiday, by state then first day."""
        return self._all

    def of_state(self, state: str) -> tuple[Holiday, ...]:
        return tuple(h for h in self._all if h.state == state)

    def find(self, state: str | None, category: str | None, amount: int, quantity: Decimal,
             on: date) -> HolidayMatch | None:
        """The holiday under which a line of ``category`` (``amount`` after its discounts, ``quantity``
        units) is exempt in ``state`` on ``on``, or None."""
        periods = self._by_state.get(state) if state else None
        if periods is None or not category:
            return None
        for first, last, _ in periods:
            if first <= on <= last:
                break
        else:
            return None  # no holiday of the state that day: the common case, no memo needed
        key = (state, category, on)
        candidates = self._found.get(key)
        if candidates is None:
            candidates = self._found.put(key, tuple(
                match for first, last, groups in periods if first <= on <= last
                for codes, match in groups if _holds(codes, category)))
        for match in candidates:
            if match.items.admits(amount, quantity):
                return match
        return None


def _holds(codes: frozenset[str], category: str) -> bool:
    """Whether ``category`` or one of its prefixes (``A.B.C``, ``A.B``, ``A``) is in ``codes``."""
    while True:
        if category in codes:
            return True
        cut = category.rfind(".")
        if cut < 0:
            return False
        category = category[:cut]


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
