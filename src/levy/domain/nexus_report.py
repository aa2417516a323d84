"""The organization's economic nexus report (``GET /nexus``): plain Python, no I/O.

:func:`dated_sales_by_state` turns filing inputs into the dated sales that
:func:`levy.domain.nexus.evaluate_nexus` measures: finalized and filed
transactions only; per state, a sale adds the net amount (after discounts) of
its goods lines in that state and a count of 1; a credit subtracts its lines'
net amount and counts 0. Collected-tax (``SALES_TAX``) lines are not goods lines
and never count (spec 4.7 rule 2); a tax-only transaction therefore adds
nothing, neither amount nor count. Exempt and unregistered lines count (gross
sales into the state).

:func:`converted_by_state` lists, per state, the counted transactions in another
currency than the filing currency (converted at their stored rate); :func:`nexus_report` keeps
those dated in each state's deciding measurement period.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterable, Mapping
from dataclasses import dataclass
from datetime import date
from decimal import Decimal

from levy.domain.filing import (
    LIABLE_STATUSES,
    ConvertedEntry,
    FilingTransaction,
    converted_entry,
    state_of,
)
from levy.domain.nexus import (
    DatedSale,
    MeasurementPeriod,
    NexusThreshold,
    Rule,
    NexusThresholds,
    evaluate_nexus,
    threshold_for,
)


def counts_marketplace(thresholds: NexusThresholds, as_of: date) -> Callable[[str], bool]:
    """Whether a state's rule of ``thresholds`` in force on ``as_of`` counts marketplace sales toward its threshold
    (``counts_marketplace_sales`` of the nexus data; not confirmed (None): counted, so that a
    threshold is never missed for want of a source)."""

    def counts(state: str) -> bool:
        t = threshold_for(thresholds, state, as_of)
        return t is None or t.counts_marketplace_sales is not False

    return counts


def _counted(
    txn: FilingTransaction, marketplace_counts: Callable[[str], bool],
) -> dict[str, int]:
    """Per two-letter state, the net amount of ``txn``'s goods lines that counts toward nexus there
    (empty when it never counts: not liable, or in another currency without a rate)."""
    per_state: dict[str, int] = {}
    if txn.status not in LIABLE_STATUSES or (txn.currency is not None and txn.exchange_rate is None):
        return per_state
    for ln in txn.lines:
        states = {state_of(r.jurisdiction_code) for r in ln.rows} - {None}
        if txn.marketplace_facilitator is not None:
            states = {s for s in states if marketplace_counts(s)}
        for s in states:
            per_state[s] = per_state.get(s, 0) + ln.net_amount
    return per_state


def dated_sales_by_state(
    transactions: Iterable[FilingTransaction], marketplace_counts: Callable[[str], bool] = lambda state: True,
) -> dict[str, list[DatedSale]]:
    """Per two-letter state, the dated sales of finalized and filed transactions (see the module doc).

    A marketplace sale counts only in the states where ``marketplace_counts(state)``
    (:func:`counts_marketplace`). A transaction in another currency without an exchange rate
    (amounts not in the filing currency) never counts."""
    out: dict[str, list[DatedSale]] = {}
    for txn in transactions:
        for s, amount in _counted(txn, marketplace_counts).items():
            if txn.type == "credit":
                out.setdefault(s, []).append(DatedSale(txn.transaction_date, -amount, 0))
            else:
                out.setdefault(s, []).append(DatedSale(txn.transaction_date, amount, 1))
    return out


def converted_by_state(
    transactions: Iterable[FilingTransaction], marketplace_counts: Callable[[str], bool] = lambda state: True,
) -> dict[str, list[tuple[date, ConvertedEntry]]]:
    """Per two-letter state, the dated transactions in another currency that count toward nexus
    there (the same ones :func:`dated_sales_by_state` counts), each with its gross in the state in
    its own currency and converted (:func:`levy.domain.filing.converted_entry`)."""
    out: dict[str, list[tuple[date, ConvertedEntry]]] = {}
    for txn in transactions:
        if txn.currency is None:
            continue
        for s in _counted(txn, marketplace_counts):
            out.setdefault(s, []).append((txn.transaction_date, converted_entry(txn, s)))
    return out


@dataclass(frozen=True, slots=True)
class NexusStateReport:
    state: str  # two letters
    jurisdiction_code: str  # US-ST-XX
    as_of: date
    period_start: date
    period_end: date
    sales: int
    transactions: int
    sales_threshold: int
    transaction_threshold: int | None
    rule: Rule
    measurement_period: MeasurementPeriod
    share: Decimal  # 1 = 100 %
    exceeded: bool
    registered: bool
    crossed_on: date | None
    threshold_source: str
    #: The counted transactions in another currency dated in the period (by date, then id).
    converted: tuple[ConvertedEntry, ...] = ()

    @property
    def needs_registration(self) -> bool:
        return self.exceeded and not self.registered


def nexus_report(
    as_of: date,
    dated_sales_by_state: Mapping[str, Iterable[DatedSale]],
    registered_states: Collection[str] | Callable[[str], bool],
    thresholds: Mapping[str, NexusThreshold],
    converted: Mapping[str, Iterable[tuple[date, ConvertedEntry]]] | None = None,
) -> tuple[NexusStateReport, ...]:
    """Every state with a threshold in force on ``as_of`` measured over its period.

    ``registered_states``: two-letter states (or ``US-ST-XX`` codes, or a predicate on the
    two-letter state) where the seller is registered on ``as_of``. ``thresholds``: each state's
    threshold in force on ``as_of`` (:func:`levy.domain.nexus.thresholds_in_force`); states without
    a sales tax (no threshold) are left out.
    ``converted`` (:func:`converted_by_state`): each state's report lists those dated in its
    deciding measurement period.
    Order: exceeded and not registered first (earliest crossing first), then exceeded and
    registered, then the rest by share reached (largest first); ties by state code.
    """
    if callable(registered_states):
        is_reg = registered_states
    else:
        regs = {s.removeprefix("US-ST-") for s in registered_states}
        is_reg = regs.__contains__
    rows = []
    for state, t in thresholds.items():
        if not t.has_threshold:
            continue
        ev = evaluate_nexus(t, dated_sales_by_state.get(state, ()), as_of)
        in_period = sorted(((on, c) for on, c in (converted or {}).get(state, ())
                            if ev.period_start <= on <= ev.period_end), key=lambda x: (x[0], x[1].transaction_id))
        rows.append(
            NexusStateReport(
                state=state,
                jurisdiction_code=f"US-ST-{state}",
                as_of=as_of,
                period_start=ev.period_start,
                period_end=ev.period_end,
                sales=ev.sales,
                transactions=ev.transactions,
                sales_threshold=t.sales_threshold,  # type: ignore[arg-type]
                transaction_threshold=t.transaction_threshold,
                rule=t.rule,  # type: ignore[arg-type]
                measurement_period=t.measurement_period,  # type: ignore[arg-type]
                share=ev.share,
                exceeded=ev.exceeded,
                registered=bool(is_reg(state)),
                crossed_on=ev.crossed_on,
                threshold_source=t.source,
                converted=tuple(c for _, c in in_period),
            )
        )

    def key(r: NexusStateReport) -> tuple:
        group = 0 if r.needs_registration else (1 if r.exceeded else 2)
        crossed = r.crossed_on.toordinal() if (r.exceeded and r.crossed_on) else 0
        return (group, crossed, -r.share, r.state)

    return tuple(sorted(rows, key=key))
