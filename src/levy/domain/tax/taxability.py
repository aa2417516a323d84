"""Taxability rules keyed by state and tax code prefix (pure; loading is in levy.ratefiles.builtin).

Choosing a rule for (state, category path, attributes, date):

1. the most specific category prefix wins: ``FOOD.GROCERY.PRODUCE`` tries
   ``FOOD.GROCERY.PRODUCE``, then ``FOOD.GROCERY``, then ``FOOD``, then the
   state's root rule ``""`` (taxable as tangible personal property);
2. within a prefix, rules requiring more attributes win over fewer, and only
   rules whose required attributes are all on the line and whose effective
   period covers the date are candidates.

Rules are indexed at build time: a lookup is a handful of dict hits.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import date
from decimal import Decimal
from typing import Literal
from levy.domain.memo import BoundedMemo
from levy.domain.periods import Dated

Treatment = Literal["taxable", "exempt", "reduced", "percentage", "threshold"]
LocalMode = Literal["follow", "exempt", "taxable"]
ThresholdMode = Literal["exempt_below", "exempt_at_or_below", "exempt_up_to", "rate_above"]
TREATMENTS = ("taxable", "exempt", "reduced", "percentage", "threshold")
LOCAL_MODES = ("follow", "exempt", "taxable")
THRESHOLD_MODES = ("exempt_below", "exempt_at_or_below", "exempt_up_to", "rate_above")
ThresholdCounts = Literal["price", "price_and_delivery"]
THRESHOLD_COUNTS = ("price", "price_and_delivery")
LOCAL_TYPES = ("county", "city", "special")


@dataclass(frozen=True, slots=True)
class LocalException:
    """A local row treated otherwise than the rule's ``local`` says.

    Matches a local (non-statewide) row whose type is in ``types`` (all local
    types when empty) and whose code starts with one of ``codes`` (any code when
    empty). ``local`` is what happens there (``exempt``, ``taxable`` at the row's
    own rate, or ``follow`` the rule's treatment); ``rate`` replaces the row's
    rate when given (a county food rate below its general rate)."""

    local: LocalMode
    types: frozenset[str] = frozenset()
    codes: tuple[str, ...] = ()
    rate: Decimal | None = None

    def matches(self, jtype: str, code: str) -> bool:
        return (not self.types or jtype in self.types) and (not self.codes or code.startswith(self.codes))


@dataclass(frozen=True, slots=True)
class Rule(Dated):
    """One taxability rule.

    * ``reduced``: the state row uses ``rate`` instead of the state rate;
      locals follow with their own rates unless ``local`` says otherwise.
    * ``percentage``: the taxable base is ``percent`` of the line amount.
    * ``threshold``: ``exempt_below`` exempts items whose per-item price is
      below ``threshold`` (minor units); ``exempt_up_to`` exempts the first
      ``threshold`` of each item and taxes the excess.
      ``exempt_at_or_below`` exempts items priced at or below ``threshold``;
      ``rate_above`` taxes the state row at ``rate`` when the per-item price is
      above ``threshold`` (CT luxury goods 7.75%), else at the state rate.
      ``threshold_counts``: what the per-item price compared with the threshold
      counts: ``price`` (the item's price after discounts) or
      ``price_and_delivery`` (plus the item's share of the delivery charges of
      the calculation in the same state, by price: a state whose "sales price"
      includes delivery charges).
    * ``local``: ``follow`` (same treatment, local rates), ``exempt`` or
      ``taxable`` (full local tax even where the state exempts).
    * ``local_rate``: rate of the statewide mandatory local portion under this
      rule (e.g. VA groceries 1%, UT groceries 1.25%).
    * ``local_exceptions``: local rows treated otherwise (first match wins).
    * ``detail``: said on every tax row of a line the rule decides (a cautious
      default, the condition the request does not carry); ``depends_on``: the
      attributes that would change the answer; ``note``: for reviewers only.
    * ``unsourced``: the value could not be confirmed from a source; ``source``
      then says what was checked. ``source_url``: the primary link (docs).
    """

    state: str
    code: str
    attributes: frozenset[str]
    treatment: Treatment
    name: str
    source: str
    effective_from: date
    effective_to: date | None = None
    rate: Decimal | None = None
    percent: Decimal | None = None
    threshold: int | None = None
    threshold_mode: ThresholdMode | None = None
    threshold_counts: ThresholdCounts = "price"
    local: LocalMode = "follow"
    local_rate: Decimal | None = None
    local_exceptions: tuple[LocalException, ...] = ()
    detail: str = ""
    depends_on: tuple[str, ...] = ()
    note: str = ""
    unsourced: bool = False
    source_url: str = ""


DEFAULT_RULE_NAME = "Taxable as tangible personal property"


class Taxability:
    """Immutable index of rules: (state, prefix) -> rules, most attributes first."""

    __slots__ = ("_index", "_states", "_found")

    def __init__(self, rules: Iterable[Rule]) -> None:
        index: dict[tuple[str, str], list[Rule]] = {}
        for r in rules:
            index.setdefault((r.state, r.code), []).append(r)
        self._index = {k: tuple(sorted(v, key=lambda r: (-len(r.attributes), r.effective_from))) for k, v in index.items()}
        self._states = frozenset(s for s, _ in self._index)
        # Lookups already made (the index is immutable); bounded.
        self._found: BoundedMemo[tuple[str, str | None, frozenset[str], date], Rule] = BoundedMemo(20_000)

    @property
    def states(self) -> frozenset[str]:
        return self._states

    def all_rules(self, state: str) -> tuple[Rule, ...]:
        """Every rule of ``state``, by code then most attributes first."""
        return tuple(r for (s, _), rs in sorted(self._index.items()) if s == state for r in rs)

    def rules(self, state: str, code: str) -> tuple[Rule, ...]:
        return self._index.get((state, code), ())

    def lookup(self, state: str, category: str | None, attributes: Iterable[str], on: date) -> Rule:
        """The rule for a category path and attributes in ``state`` on ``on``."""
        attrs = attributes if isinstance(attributes, frozenset) else frozenset(attributes)
        key = (state, category, attrs, on)
        rule = self._found.get(key)
        return rule if rule is not None else self._found.put(key, self._lookup(state, category, attrs, on))

    def _lookup(self, state: str, category: str | None, attrs: frozenset[str], on: date) -> Rule:
        parts = category.split(".") if category else []
        for n in range(len(parts), -1, -1):
            prefix = ".".join(parts[:n])
            for r in self._index.get((state, prefix), ()):
                if r.covers(on) and r.attributes <= attrs:
                    return r
        return Rule(state, "", frozenset(), "taxable", DEFAULT_RULE_NAME, "default: tangible personal property", date.min,
                    unsourced=True)
