"""Economic nexus thresholds and their evaluation.

Thresholds are data (``levy/data/nexus/thresholds.json``, parsed by
:func:`parse_thresholds` and passed in as ``thresholds``). The
evaluation is pure: given a state's threshold, the seller's dated sales into
that state and an "as of" date, it measures sales and transaction counts over
the state's measurement period and says whether (and when) the threshold was
met.

Semantics:

* Amounts are integer cents; credits are negative amounts (with a count of 0
  or a negative count, as the caller decides). ``SALES_TAX`` lines must not be
  passed in (spec 4.7 rule 2).
* Sales are summed per day; the running totals are checked at the end of each
  day, so the order of same-day entries does not matter.
* A threshold is *met* when the total is greater than or equal to it.
* ``exceeded`` is about the totals over the whole period up to ``as_of``;
  ``crossed_on`` is the first day the running totals met the rule. A credit
  after that day can bring the totals back under the threshold: then
  ``crossed_on`` is set and ``exceeded`` is False. Whether nexus, once
  established, survives that is the caller's policy.
* ``share`` is the fraction of the threshold reached (1 = 100 %), rounded
  ROUND_HALF_UP to 4 places: for ``sales_or_transactions`` the larger of the
  two fractions, for ``sales_and_transactions`` the smaller.
* Periods are inclusive date ranges ending no later than ``as_of``.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import date, timedelta
from decimal import ROUND_HALF_UP, Decimal
from enum import StrEnum
from typing import Any

SHARE_QUANTUM = Decimal("0.0001")


class Rule(StrEnum):
    SALES_ONLY = "sales_only"
    SALES_OR_TRANSACTIONS = "sales_or_transactions"
    SALES_AND_TRANSACTIONS = "sales_and_transactions"


class MeasurementPeriod(StrEnum):
    # Either full previous calendar year or current calendar year to date.
    PREVIOUS_OR_CURRENT_CALENDAR_YEAR = "previous_or_current_calendar_year"
    PREVIOUS_CALENDAR_YEAR = "previous_calendar_year"
    # The 12 months ending on as_of (inclusive).
    TRAILING_12_MONTHS = "trailing_12_months"
    # The 12 months ending on the last day of the calendar quarter before the one holding as_of (MN, IL, MO).
    TRAILING_12_MONTHS_ENDING_LAST_QUARTER = "trailing_12_months_ending_last_quarter"
    # The 12 months ending on the latest September 30 on or before as_of (CT).
    TWELVE_MONTHS_ENDING_SEPTEMBER_30 = "twelve_months_ending_september_30"
    # NY: the four sales tax quarters (Mar-May, Jun-Aug, Sep-Nov, Dec-Feb) before the one holding as_of.
    PRECEDING_FOUR_SALES_TAX_QUARTERS = "preceding_four_sales_tax_quarters"


#: How each measurement period reads in the console.
PERIOD_LABELS: dict[str, str] = {
    MeasurementPeriod.PREVIOUS_OR_CURRENT_CALENDAR_YEAR: "the previous or the current calendar year",
    MeasurementPeriod.PREVIOUS_CALENDAR_YEAR: "the previous calendar year",
    MeasurementPeriod.TRAILING_12_MONTHS: "the 12 months up to the date",
    MeasurementPeriod.TRAILING_12_MONTHS_ENDING_LAST_QUARTER: "the 12 months ending with the last full quarter",
    MeasurementPeriod.TWELVE_MONTHS_ENDING_SEPTEMBER_30: "the 12 months ending September 30",
    MeasurementPeriod.PRECEDING_FOUR_SALES_TAX_QUARTERS: "the four preceding sales tax quarters",
}

def standing(share: Decimal, *, exceeded: bool, needs_registration: bool, approaching: Decimal) -> str:
    """``register`` (crossed, not registered), ``crossed``, ``approaching`` (at least the
    ``approaching`` share of the threshold: the organization's ``nexus_approaching_share``) or
    ``below``: the console's nexus page and the ``nexus.threshold_*`` events
    (:mod:`levy.domain.event_jobs`) both read it."""
    if needs_registration:
        return "register"
    if exceeded:
        return "crossed"
    return "approaching" if share >= approaching else "below"


@dataclass(frozen=True, slots=True)
class NexusThreshold:
    state: str
    sales_threshold: int | None  # cents
    transaction_threshold: int | None
    rule: Rule | None
    measurement_period: MeasurementPeriod | None
    effective_from: date
    source: str
    name: str = ""
    notes: str = ""
    #: Whether sales made through a marketplace facilitator count toward the threshold
    #: (True / False as the cited source says; None: not confirmed, counted, see docs/filing.md).
    counts_marketplace_sales: bool | None = None
    marketplace_source: str = ""

    @property
    def has_threshold(self) -> bool:
        return self.sales_threshold is not None and self.rule is not None and self.measurement_period is not None


@dataclass(frozen=True, slots=True)
class DatedSale:
    """Sales into the state on one date: ``amount`` in cents (credits negative), ``count`` transactions."""

    on: date
    amount: int
    count: int = 1


@dataclass(frozen=True, slots=True)
class PeriodResult:
    start: date
    end: date
    sales: int
    transactions: int
    share: Decimal
    exceeded: bool
    crossed_on: date | None


@dataclass(frozen=True, slots=True)
class NexusEvaluation:
    """Result for one state. The headline fields come from the deciding period (see ``evaluate_nexus``)."""

    state: str
    as_of: date
    period_start: date
    period_end: date
    sales: int
    transactions: int
    share: Decimal
    exceeded: bool
    crossed_on: date | None
    periods: tuple[PeriodResult, ...]


# -- dates ---------------------------------------------------------------------

def _add_months(d: date, months: int) -> date:
    """``d`` moved by ``months``, the day clamped to the month's length."""
    index = d.year * 12 + (d.month - 1) + months
    year, month = divmod(index, 12)
    month += 1
    next_first = date(year + (month == 12), month % 12 + 1, 1)
    last_day = (next_first - timedelta(days=1)).day
    return date(year, month, min(d.day, last_day))


def _twelve_months_ending(end: date) -> tuple[date, date]:
    return _add_months(end, -12) + timedelta(days=1), end


def measurement_windows(period: MeasurementPeriod, as_of: date) -> list[tuple[date, date]]:
    """The inclusive date ranges a state looks at on ``as_of``."""
    y = as_of.year
    if period is MeasurementPeriod.PREVIOUS_OR_CURRENT_CALENDAR_YEAR:
        return [(date(y - 1, 1, 1), date(y - 1, 12, 31)), (date(y, 1, 1), as_of)]
    if period is MeasurementPeriod.PREVIOUS_CALENDAR_YEAR:
        return [(date(y - 1, 1, 1), date(y - 1, 12, 31))]
    if period is MeasurementPeriod.TRAILING_12_MONTHS:
        return [_twelve_months_ending(as_of)]
    if period is MeasurementPeriod.TRAILING_12_MONTHS_ENDING_LAST_QUARTER:
        quarter_start = date(y, 3 * ((as_of.month - 1) // 3) + 1, 1)
        return [_twelve_months_ending(quarter_start - timedelta(days=1))]
    if period is MeasurementPeriod.TWELVE_MONTHS_ENDING_SEPTEMBER_30:
        end = date(y, 9, 30) if as_of >= date(y, 9, 30) else date(y - 1, 9, 30)
        return [_twelve_months_ending(end)]
    if period is MeasurementPeriod.PRECEDING_FOUR_SALES_TAX_QUARTERS:
        # NY quarters start on Mar 1, Jun 1, Sep 1, Dec 1.
        if as_of.month >= 3:
            start_month = 3 * ((as_of.month - 3) // 3) + 3
            quarter_start = date(y, start_month, 1)
        else:
            quarter_start = date(y - 1, 12, 1)
        return [_twelve_months_ending(quarter_start - timedelta(days=1))]
    raise ValueError(f"unknown measurement period {period!r}")


# -- evaluation ----------------------------------------------------------------

def _met(rule: Rule, sales: int, count: int, t: NexusThreshold) -> bool:
    by_sales = sales >= t.sales_threshold
    if rule is Rule.SALES_ONLY:
        return by_sales
    by_count = count >= t.transaction_threshold
    if rule is Rule.SALES_OR_TRANSACTIONS:
        return by_sales or by_count
    return by_sales and by_count


def _share(rule: Rule, sales: int, count: int, t: NexusThreshold) -> Decimal:
    s = Decimal(sales) / Decimal(t.sales_threshold)
    if rule is Rule.SALES_ONLY:
        share = s
    else:
        c = Decimal(count) / Decimal(t.transaction_threshold)
        share = max(s, c) if rule is Rule.SALES_OR_TRANSACTIONS else min(s, c)
    return share.quantize(SHARE_QUANTUM, rounding=ROUND_HALF_UP)


def _evaluate_window(
    t: NexusThreshold, daily: dict[date, tuple[int, int]], start: date, end: date
) -> PeriodResult:
    rule = t.rule
    sales = count = 0
    crossed: date | None = None
    for day in sorted(d for d in daily if start <= d <= end):
        amount, n = daily[day]
        sales += amount
        count += n
        if crossed is None and _met(rule, sales, count, t):
            crossed = day
    return PeriodResult(
        start=start,
        end=end,
        sales=sales,
        transactions=count,
        share=_share(rule, sales, count, t),
        exceeded=_met(rule, sales, count, t),
        crossed_on=crossed,
    )


def evaluate_nexus(threshold: NexusThreshold, sales: Iterable[DatedSale], as_of: date) -> NexusEvaluation:
    """Measure ``sales`` against ``threshold`` on ``as_of``.

    For states with several candidate periods (previous or current calendar
    year) every period is in ``periods``; the headline fields come from the
    exceeded period with the earliest ``crossed_on`` or, if none is exceeded,
    the period with the largest share (the later period on a tie).
    Raises ``ValueError`` for a state without a threshold (no sales tax).
    """
    if not threshold.has_threshold:
        raise ValueError(f"{threshold.state} has no economic nexus threshold (no sales tax)")
    if threshold.rule is not Rule.SALES_ONLY and threshold.transaction_threshold is None:
        raise ValueError(f"{threshold.state}: rule {threshold.rule} needs a transaction threshold")
    daily: dict[date, list[int]] = defaultdict(lambda: [0, 0])
    for s in sales:
        if s.on <= as_of:
            daily[s.on][0] += s.amount
            daily[s.on][1] += s.count
    totals = {d: (v[0], v[1]) for d, v in daily.items()}
    results = tuple(
        _evaluate_window(threshold, totals, start, end)
        for start, end in measurement_windows(threshold.measurement_period, as_of)
    )
    exceeded = [r for r in results if r.exceeded]
    if exceeded:
        best = min(exceeded, key=lambda r: r.crossed_on or r.end)
    else:
        best = max(reversed(results), key=lambda r: r.share)
    return NexusEvaluation(
        state=threshold.state,
        as_of=as_of,
        period_start=best.start,
        period_end=best.end,
        sales=best.sales,
        transactions=best.transactions,
        share=best.share,
        exceeded=best.exceeded,
        crossed_on=best.crossed_on,
        periods=results,
    )


# -- data ----------------------------------------------------------------------

#: Every threshold entry by state, oldest first.
NexusThresholds = Mapping[str, tuple[NexusThreshold, ...]]


def parse_thresholds(doc: Mapping[str, Any]) -> dict[str, tuple[NexusThreshold, ...]]:
    """Every threshold entry of ``thresholds.json`` (its parsed document) by state, oldest first."""
    by_state: dict[str, list[NexusThreshold]] = defaultdict(list)
    for e in doc["thresholds"]:
        by_state[e["state"]].append(
            NexusThreshold(
                state=e["state"],
                sales_threshold=e["sales_threshold"],
                transaction_threshold=e["transaction_threshold"],
                rule=Rule(e["rule"]) if e["rule"] else None,
                measurement_period=MeasurementPeriod(e["measurement_period"]) if e["measurement_period"] else None,
                effective_from=date.fromisoformat(e["effective_from"]),
                source=e["source"],
                name=e.get("name", ""),
                notes=e.get("notes", ""),
                counts_marketplace_sales=e.get("counts_marketplace_sales"),
                marketplace_source=e.get("marketplace_source", ""),
            )
        )
    return {k: tuple(sorted(v, key=lambda t: t.effective_from)) for k, v in by_state.items()}


def thresholds_in_force(thresholds: NexusThresholds, as_of: date) -> dict[str, NexusThreshold]:
    """The entry of each state of ``thresholds`` in force on ``as_of`` (states with none left out)."""
    out = {}
    for state in thresholds:
        t = threshold_for(thresholds, state, as_of)
        if t is not None:
            out[state] = t
    return out


def threshold_for(thresholds: NexusThresholds, state: str, as_of: date) -> NexusThreshold | None:
    """The entry of ``thresholds`` in force for ``state`` on ``as_of`` (None if unknown state or before any entry)."""
    current = None
    for t in thresholds.get(state, ()):
        if t.effective_from <= as_of:
            current = t
    return current
