"""Returns, filing and liability reports: plain Python, no I/O.

The wiring reads stored transactions, turns each into a :class:`FilingTransaction`
(see ``docs/filing.md``, "Wiring"), and calls :func:`prepare_return` for one
state and period, or :func:`liability_report` for any range. The filing rules
(state code, period, double filing) are in :mod:`levy.domain.filing_rules`.

Amounts are integers in minor units. A credit's amounts are positive in the
input (only ``type`` marks it) and count negatively on returns and reports.
Collected-tax (``SALES_TAX``) lines are never goods lines: they are not in
:class:`FilingLine` and never count toward gross, exempt or taxable sales.
"""

from __future__ import annotations

import csv
import io
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import date
from typing import Literal

from levy.domain.money import allocate
from levy.domain.tax.model import LineResult
from levy.domain.transactions.tax_only import HELD_OFF_DETAILS

TransactionType = Literal["sale", "credit"]
FilingTaxSource = Literal["provided", "calculated"]

#: The exempt-sales buckets of a return, and the engine's ``exempt_reason`` that falls in each.
EXEMPT_BUCKETS: tuple[str, ...] = ("exemption_certificate", "non_taxable_product", "unregistered")
_BUCKET_OF_REASON: dict[str, str] = {
    "exemption_certificate": "exemption_certificate",
    "resale": "exemption_certificate",
    "non_taxable_product": "non_taxable_product",
    "no_tax": "non_taxable_product",
    "unregistered": "unregistered",
}

#: Statuses whose transactions create a liability (spec 3.1); drafts and voids never count.
LIABLE_STATUSES = frozenset({"finalized", "filed"})

#: Extra held-off reason of this module: a provided tax that no jurisdiction row can carry.
PROVIDED_TAX_UNPLACED = "provided_tax_unplaced"
#: A transaction in another currency stored without an exchange rate (before rates existed).
NO_EXCHANGE_RATE = "no_exchange_rate"
HELD_OFF_REASON_DETAILS: dict[str, str] = {
    **HELD_OFF_DETAILS,
    PROVIDED_TAX_UNPLACED: "the provided tax cannot be placed: the transaction has no US state jurisdiction row",
    NO_EXCHANGE_RATE: "the transaction is in another currency and has no exchange rate to the filing currency: "
                      "send its exchange_rate",
}

_CODE = re.compile(r"US-(?P<level>ST|CO|CI|SP)-(?P<state>[A-Z]{2})(?P<rest>-.+)?\Z")
_LEVEL_RANK = {"ST": 0, "CO": 2, "CI": 3, "SP": 4}
_LEVEL_TYPE = {"ST": "state", "CO": "county", "CI": "city", "SP": "special"}


def state_of(jurisdiction_code: str) -> str | None:
    """The two-letter state a US jurisdiction code is in (``US-CO-CA-X`` -> ``CA``), else None."""
    m = _CODE.match(jurisdiction_code)
    return m["state"] if m else None


def state_jurisdiction(state: str) -> str:
    return f"US-ST-{state}"


def _sort_key(code: str) -> tuple[int, str]:
    m = _CODE.match(code)
    if m is None:  # pragma: no cover - only state codes reach a return
        return (9, code)
    rank = _LEVEL_RANK[m["level"]]
    if m["level"] == "ST" and m["rest"]:
        rank = 1  # statewide local portion, right after the state
    return (rank, code)


def _type_of_code(code: str) -> str:
    m = _CODE.match(code)
    if m is None:
        return "state"
    if m["level"] == "ST" and m["rest"]:
        return "special"
    return _LEVEL_TYPE[m["level"]]


# -- input model ---------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class FilingRow:
    """One jurisdiction row of one goods line, as the engine computed it (``TaxRow``)."""

    jurisdiction_code: str
    jurisdiction_name: str
    jurisdiction_type: str
    taxable_base: int
    tax_amount: int  # calculated
    is_registered: bool
    exempt_reason: str | None = None
    #: The row's rate (decimal string) and tax type (``sales_tax``, ``vat``, ``gst``...):
    #: returns outside the US have a row per rate (:mod:`levy.domain.filing_international`).
    tax_rate: str = ""
    tax_type: str = ""


@dataclass(frozen=True, slots=True)
class FilingLine:
    """One goods line: ``amount`` = quantity x unit_price (gross); ``net_amount`` after every discount."""

    id: str
    amount: int
    net_amount: int
    rows: tuple[FilingRow, ...]

    def __post_init__(self) -> None:
        codes = [r.jurisdiction_code for r in self.rows]
        if len(set(codes)) != len(codes):
            raise ValueError(f"line {self.id!r}: a jurisdiction appears twice in its rows")


@dataclass(frozen=True, slots=True)
class FilingTransaction:
    """What one stored transaction contributes to returns and reports.

    ``tax_provided`` is the provided part (``tax_amount`` sent + collected lines - reduction, floored
    at 0) or None when nothing was provided; ``filing_tax_amount`` is the transaction's tax used for
    filing (the provided tax when ``filing_tax_amount_source`` is ``provided``, else the calculated
    tax, the sum of the rows' ``tax_amount``). ``tax_only_allocations`` is the stored attribution of
    a tax-only transaction; ``held_off_reason`` keeps it off returns. ``filed_states`` are the
    states whose filed return already includes the transaction; ``states`` optionally names the
    states a held-off transaction concerns (empty: unknown, listed on every state's return).
    """

    id: str
    type: TransactionType
    status: str
    transaction_date: date
    lines: tuple[FilingLine, ...] = ()
    filing_tax_amount: int = 0
    filing_tax_amount_source: FilingTaxSource = "calculated"
    tax_provided: int | None = None
    tax_only_allocations: tuple[tuple[str, int], ...] = ()
    held_off_reason: str | None = None
    filed_states: frozenset[str] = frozenset()
    states: frozenset[str] = frozenset()
    #: The marketplace facilitator's name (the sale is the facilitator's to remit: off the
    #: seller's returns, listed apart); the transaction's own currency when it is not the filing
    #: currency, with the rate its amounts were converted at (every amount above is converted) and
    #: its goods lines' gross in its own currency.
    marketplace_facilitator: str | None = None
    currency: str | None = None
    exchange_rate: str | None = None
    exchange_rate_date: date | None = None
    original_gross: int = 0

    def __post_init__(self) -> None:
        if self.type not in ("sale", "credit"):
            raise ValueError(f"{self.id}: type must be 'sale' or 'credit'")
        if self.filing_tax_amount_source not in ("provided", "calculated"):
            raise ValueError(f"{self.id}: unknown filing_tax_amount_source {self.filing_tax_amount_source!r}")
        if self.filing_tax_amount < 0 or any(a < 0 for _, a in self.tax_only_allocations):
            raise ValueError(f"{self.id}: amounts are never negative (only type marks a credit)")
        if self.tax_only_allocations and self.lines:
            raise ValueError(f"{self.id}: a tax-only transaction has no goods lines")
        if self.tax_only_allocations and sum(a for _, a in self.tax_only_allocations) != self.filing_tax_amount:
            raise ValueError(f"{self.id}: the tax-only allocations must sum to filing_tax_amount")

    @property
    def sign(self) -> int:
        return -1 if self.type == "credit" else 1

    @property
    def calculated_tax(self) -> int:
        return sum(r.tax_amount for ln in self.lines for r in ln.rows)

    def touched_states(self) -> frozenset[str]:
        """States whose jurisdictions this transaction reaches (rows, allocations, ``states``)."""
        codes = [r.jurisdiction_code for ln in self.lines for r in ln.rows]
        codes += [c for c, _ in self.tax_only_allocations]
        found = {s for s in map(state_of, codes) if s}
        return frozenset(found) | self.states


def filing_lines_from_results(lines: Iterable[LineResult]) -> tuple[FilingLine, ...]:
    """Goods lines of a stored engine result as :class:`FilingLine` (collected-tax lines skipped)."""
    out = []
    for ln in lines:
        if ln.is_sales_tax:
            continue
        rows = tuple(
            FilingRow(
                t.jurisdiction_code, t.jurisdiction_name, t.jurisdiction_type,
                t.taxable_base, t.tax_amount, t.is_registered, t.exempt_reason, str(t.tax_rate), t.tax_type,
            )
            for t in ln.taxes
        )
        out.append(FilingLine(ln.id, ln.amount, ln.taxable_amount, rows))
    return tuple(out)


# -- provided tax distribution --------------------------------------------------------------------


def distribute_filing_tax(txn: FilingTransaction) -> dict[str, int] | None:
    """The transaction's ``filing_tax_amount`` per jurisdiction code, summing to it exactly.

    Tax-only: its allocations. Otherwise the total is split in proportion to the calculated tax
    per jurisdiction (all lines, all states; largest remainder, ties to the first-seen code). When
    the calculated tax is 0 everywhere, a non-zero total goes to the state rows (``US-ST-XX``), in
    proportion to the net amount of the lines in each state, or equally if those are 0. Returns
    None when a non-zero total has no US state row to go to (held off, ``provided_tax_unplaced``).
    For a calculated tax the result is each jurisdiction's calculated tax, unchanged.
    """
    if txn.tax_only_allocations:
        out: dict[str, int] = {}
        for code, amount in txn.tax_only_allocations:
            out[code] = out.get(code, 0) + amount
        return out
    calculated: dict[str, int] = {}
    state_net: dict[str, int] = {}
    for ln in txn.lines:
        for r in ln.rows:
            calculated[r.jurisdiction_code] = calculated.get(r.jurisdiction_code, 0) + r.tax_amount
            m = _CODE.match(r.jurisdiction_code)
            if m and m["level"] == "ST" and not m["rest"]:
                state_net[r.jurisdiction_code] = state_net.get(r.jurisdiction_code, 0) + max(0, ln.net_amount)
    total = txn.filing_tax_amount
    codes = list(calculated)
    weights = [max(0, calculated[c]) for c in codes]
    if sum(weights) > 0:
        return dict(zip(codes, allocate(total, weights)))
    result = {c: 0 for c in codes}
    if total == 0:
        return result
    if not state_net:
        return None
    states = list(state_net)
    weights = [state_net[c] for c in states]
    if sum(weights) == 0:
        weights = [1] * len(states)
    for c, p in zip(states, allocate(total, weights)):
        result[c] = p
    return result


# -- output model ----------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class ExemptSales:
    exemption_certificate: int = 0
    non_taxable_product: int = 0
    unregistered: int = 0

    @property
    def total(self) -> int:
        return self.exemption_certificate + self.non_taxable_product + self.unregistered


@dataclass(frozen=True, slots=True)
class JurisdictionTotals:
    """One jurisdiction's figures on a return or report. Credits are netted into every figure.

    ``gross_sales = discounts + exempt_sales.total + taxable_sales``. ``sales_filing_tax`` and
    ``credits_filing_tax`` are the filing tax of the sales and of the credits (a positive number)
    of the period; ``filing_tax_amount`` = sales - credits - ``carried_credits_applied``, never
    negative on a return (the rest is ``credits_carried_forward``); on a liability report it is
    the plain net and may be negative.
    """

    jurisdiction_code: str
    jurisdiction_name: str
    jurisdiction_type: str
    gross_sales: int = 0
    discounts: int = 0
    exempt_sales: ExemptSales = field(default_factory=ExemptSales)
    taxable_sales: int = 0
    tax_calculated: int = 0
    tax_provided: int = 0
    tax_only_tax: int = 0
    sales_filing_tax: int = 0
    credits_filing_tax: int = 0
    carried_credits_applied: int = 0
    filing_tax_amount: int = 0
    credits_carried_forward: int = 0
    #: Returns outside the US only (None on US returns): the row's rate and tax type.
    tax_rate: str | None = None
    tax_type: str | None = None


@dataclass(frozen=True, slots=True)
class TaxOnlyEntry:
    """One allocation of a tax-only transaction (``amount`` negative for a credit)."""

    transaction_id: str
    jurisdiction_code: str
    amount: int


@dataclass(frozen=True, slots=True)
class HeldOff:
    transaction_id: str
    reason: str
    detail: str


@dataclass(frozen=True, slots=True)
class MarketplaceEntry:
    """A marketplace sale (or its credit) left off the return: the facilitator remits its tax.

    ``gross_sales`` and ``tax_amount`` are its goods lines' gross and its tax in the state (negative
    for a credit), in the filing currency."""

    transaction_id: str
    marketplace_facilitator: str
    gross_sales: int
    tax_amount: int


@dataclass(frozen=True, slots=True)
class ConvertedEntry:
    """A transaction on the return in another currency: its gross in the state in its own currency
    (``original_gross_sales``, minor units of ``currency``) and converted (``gross_sales``)."""

    transaction_id: str
    currency: str
    exchange_rate: str
    exchange_rate_date: date | None
    original_gross_sales: int
    gross_sales: int


@dataclass(frozen=True, slots=True)
class Return:
    """A state's return for ``[period_start, period_end]`` (inclusive dates)."""

    state_code: str
    period_start: date
    period_end: date
    jurisdictions: tuple[JurisdictionTotals, ...]
    totals: JurisdictionTotals
    tax_only_allocations: tuple[TaxOnlyEntry, ...]
    held_off: tuple[HeldOff, ...]
    transaction_ids: tuple[str, ...]  # what filing this return moves to ``filed``
    credits_carried_forward: dict[str, int]  # per jurisdiction code, only non-zero entries
    marketplace: tuple[MarketplaceEntry, ...] = ()  # marketplace sales, listed apart
    converted: tuple[ConvertedEntry, ...] = ()  # transactions in another currency

    @property
    def filing_tax_amount(self) -> int:
        return self.totals.filing_tax_amount


@dataclass(frozen=True, slots=True)
class StateLiability:
    state_code: str
    jurisdictions: tuple[JurisdictionTotals, ...]
    totals: JurisdictionTotals
    tax_only_allocations: tuple[TaxOnlyEntry, ...]
    held_off: tuple[HeldOff, ...]
    transaction_ids: tuple[str, ...]
    marketplace: tuple[MarketplaceEntry, ...] = ()
    converted: tuple[ConvertedEntry, ...] = ()


@dataclass(frozen=True, slots=True)
class LiabilityReport:
    """Finalized and filed transactions dated in ``[date_from, date_to]`` (inclusive), per state."""

    date_from: date
    date_to: date
    states: tuple[StateLiability, ...]
    #: The currency of every amount (the organization's filing currency, set by the caller).
    currency: str = ""


# -- aggregation -----------------------------------------------------------------------------------


class _Acc:
    __slots__ = ("code", "name", "type", "gross", "discounts", "exempt", "taxable", "calculated", "provided",
                 "tax_only", "sales_tax", "credits_tax")

    def __init__(self, code: str) -> None:
        self.code = code
        self.name = ""
        self.type = ""
        self.gross = self.discounts = self.taxable = self.calculated = self.provided = self.tax_only = 0
        self.sales_tax = self.credits_tax = 0
        self.exempt = dict.fromkeys(EXEMPT_BUCKETS, 0)

    def totals(self, applied: int = 0, floor: bool = False) -> JurisdictionTotals:
        net = self.sales_tax - self.credits_tax - applied
        forward = 0
        if floor and net < 0:
            forward, net = -net, 0
        return JurisdictionTotals(
            self.code, self.name or self.code, self.type or _type_of_code(self.code),
            self.gross, self.discounts, ExemptSales(**self.exempt), self.taxable, self.calculated, self.provided,
            self.tax_only, self.sales_tax, self.credits_tax, applied, net, forward,
        )


@dataclass
class _Aggregate:
    accs: dict[str, _Acc] = field(default_factory=dict)
    tax_only: list[TaxOnlyEntry] = field(default_factory=list)
    held_off: list[HeldOff] = field(default_factory=list)
    ids: list[str] = field(default_factory=list)
    marketplace: list[MarketplaceEntry] = field(default_factory=list)
    converted: list[ConvertedEntry] = field(default_factory=list)
    #: The state's sales figures, each goods line counted once (its state-level row): the TOTAL row's
    #: gross, discounts, exempt and taxable sales. Tax is never taken from here.
    sales: _Acc = field(default_factory=lambda: _Acc("TOTAL"))

    def acc(self, code: str) -> _Acc:
        if code not in self.accs:
            self.accs[code] = _Acc(code)
        return self.accs[code]


def _held(txn: FilingTransaction, reason: str) -> HeldOff:
    return HeldOff(txn.id, reason, HELD_OFF_REASON_DETAILS.get(reason, reason))


def state_level_row(state: str, rows: Sequence[FilingRow]) -> FilingRow:
    """The row whose figures stand for a goods line in ``state``'s totals (a line counts once there).

    The state's own row (``US-ST-XX``) when the line has one, else the first of its rows in return
    order (statewide local portion, county, city, special). ``rows`` are the line's rows in ``state``.
    """
    return min(rows, key=lambda r: (r.jurisdiction_code != state_jurisdiction(state), _sort_key(r.jurisdiction_code)))


def _add_sales(a: _Acc, sign: int, ln: FilingLine, r: FilingRow) -> None:
    """Add one goods line's gross, discounts, exempt and taxable sales as row ``r`` classifies them."""
    a.gross += sign * ln.amount
    a.discounts += sign * (ln.amount - ln.net_amount)
    bucket = _BUCKET_OF_REASON.get(r.exempt_reason) if r.exempt_reason else None
    if bucket is not None:
        a.exempt[bucket] += sign * ln.net_amount
    else:
        a.taxable += sign * r.taxable_base
        # A partial base (percentage, tax on the excess over a threshold) leaves the rest exempt.
        a.exempt["non_taxable_product"] += sign * (ln.net_amount - r.taxable_base)


def _in_state(txn: FilingTransaction, state: str) -> list[FilingLine]:
    return [ln for ln in txn.lines if any(state_of(r.jurisdiction_code) == state for r in ln.rows)]


def _add_marketplace(agg: _Aggregate, state: str, txn: FilingTransaction) -> None:
    """List a marketplace sale reaching ``state`` apart: its tax is the facilitator's to remit."""
    lines = _in_state(txn, state)
    allocated = [a for c, a in txn.tax_only_allocations if state_of(c) == state]
    if not lines and not allocated:
        return
    tax = sum(r.tax_amount for ln in lines for r in ln.rows if state_of(r.jurisdiction_code) == state)
    assert txn.marketplace_facilitator is not None
    agg.marketplace.append(MarketplaceEntry(txn.id, txn.marketplace_facilitator,
                                            txn.sign * sum(ln.amount for ln in lines),
                                            txn.sign * (tax + sum(allocated))))


def converted_entry(txn: FilingTransaction, state: str) -> ConvertedEntry:
    """A transaction in another currency as ``state`` sees it: its gross there in both currencies
    (also used by the nexus report, :mod:`levy.domain.nexus_report`)."""
    assert txn.currency is not None and txn.exchange_rate is not None
    share = sum(ln.amount for ln in _in_state(txn, state))
    total = sum(ln.amount for ln in txn.lines)
    # The state's part of the gross in the transaction's own currency (the whole when it is one state's).
    original = txn.original_gross if share == total else allocate(txn.original_gross, [share, total - share])[0]
    return ConvertedEntry(txn.id, txn.currency, txn.exchange_rate, txn.exchange_rate_date,
                          txn.sign * original, txn.sign * share)


def _add_converted(agg: _Aggregate, state: str, txn: FilingTransaction) -> None:
    """List a transaction in another currency on ``state``'s return with its gross in both currencies."""
    agg.converted.append(converted_entry(txn, state))


def _add(agg: _Aggregate, state: str, txn: FilingTransaction) -> None:
    """Add ``txn``'s contribution to ``state`` (it is liable and dated in range)."""
    if txn.marketplace_facilitator is not None:
        _add_marketplace(agg, state, txn)
        return
    if txn.held_off_reason is not None:
        if not txn.touched_states() or state in txn.touched_states():
            agg.held_off.append(_held(txn, txn.held_off_reason))
        return
    distribution = distribute_filing_tax(txn)
    if distribution is None:
        if not txn.touched_states() or state in txn.touched_states():
            agg.held_off.append(_held(txn, PROVIDED_TAX_UNPLACED))
        return
    sign = txn.sign
    provided = txn.filing_tax_amount_source == "provided"
    touched = False
    for ln in txn.lines:
        rows = [r for r in ln.rows if state_of(r.jurisdiction_code) == state]
        if not rows:
            continue
        touched = True
        for r in rows:
            a = agg.acc(r.jurisdiction_code)
            a.name = a.name or r.jurisdiction_name
            a.type = a.type or r.jurisdiction_type
            _add_sales(a, sign, ln, r)
            a.calculated += sign * r.tax_amount
        _add_sales(agg.sales, sign, ln, state_level_row(state, rows))
    for code, amount in distribution.items():
        if state_of(code) != state:
            continue
        touched = True
        a = agg.acc(code)
        if provided:
            a.provided += sign * amount
        if txn.tax_only_allocations:
            a.tax_only += sign * amount
            agg.tax_only.append(TaxOnlyEntry(txn.id, code, sign * amount))
        if sign > 0:
            a.sales_tax += amount
        else:
            a.credits_tax += amount
    if touched:
        agg.ids.append(txn.id)
        if txn.currency is not None and txn.exchange_rate is not None:
            _add_converted(agg, state, txn)


def _ordered(accs: Iterable[JurisdictionTotals]) -> tuple[JurisdictionTotals, ...]:
    return tuple(sorted(accs, key=lambda t: _sort_key(t.jurisdiction_code)))


def _sum_totals(state: str, rows: Sequence[JurisdictionTotals], sales: _Acc) -> JurisdictionTotals:
    """The state's total row: sales figures counting each goods line once (``sales``), tax summed over ``rows``."""

    def s(attr: str) -> int:
        return sum(getattr(r, attr) for r in rows)

    return JurisdictionTotals(
        "TOTAL", f"Total {state}", "", sales.gross, sales.discounts, ExemptSales(**sales.exempt), sales.taxable,
        s("tax_calculated"), s("tax_provided"), s("tax_only_tax"), s("sales_filing_tax"), s("credits_filing_tax"),
        s("carried_credits_applied"), s("filing_tax_amount"), s("credits_carried_forward"),
    )


def _in_range(txn: FilingTransaction, start: date, end: date) -> bool:
    return start <= txn.transaction_date <= end


def prepare_return(
    state_code: str,
    period_start: date,
    period_end: date,
    transactions: Iterable[FilingTransaction],
    carried_credits: Mapping[str, int] | None = None,
) -> Return:
    """Prepare the return of ``state_code`` (``US-ST-XX``, checked by ``filing_rules.validate_state_code``).

    Includes the transactions that are finalized or filed, dated in the period, not yet on a filed
    return of this state (``filed_states``) and reaching a jurisdiction of the state. Per
    jurisdiction, credits are netted, then ``carried_credits`` (per jurisdiction code, from the
    previous return's ``credits_carried_forward``) are applied; a jurisdiction's tax due is never
    negative: the excess is carried forward.
    """
    state = state_code.removeprefix("US-ST-")
    carried = dict(carried_credits or {})
    for code, amount in carried.items():
        if state_of(code) != state or amount < 0:
            raise ValueError(f"carried credit {code!r}={amount} is not a non-negative amount of {state_code}")
    agg = _Aggregate()
    for txn in transactions:
        if txn.status not in LIABLE_STATUSES or state in txn.filed_states:
            continue
        if not _in_range(txn, period_start, period_end):
            continue
        _add(agg, state, txn)
    for code in carried:
        agg.acc(code)
    rows = []
    forward: dict[str, int] = {}
    for code, a in agg.accs.items():
        cin = carried.get(code, 0)
        applied = min(cin, max(0, a.sales_tax - a.credits_tax))
        t = a.totals(applied, floor=True)
        fwd = t.credits_carried_forward + (cin - applied)
        if fwd != t.credits_carried_forward:
            t = replace(t, credits_carried_forward=fwd)
        if fwd:
            forward[code] = fwd
        rows.append(t)
    ordered = _ordered(rows)
    return Return(
        state_code=state_code,
        period_start=period_start,
        period_end=period_end,
        jurisdictions=ordered,
        totals=_sum_totals(state_code, ordered, agg.sales),
        tax_only_allocations=tuple(agg.tax_only),
        held_off=tuple(agg.held_off),
        transaction_ids=tuple(agg.ids),
        credits_carried_forward={c: forward[c] for c in (t.jurisdiction_code for t in ordered) if c in forward},
        marketplace=tuple(agg.marketplace),
        converted=tuple(agg.converted),
    )


def liability_report(
    date_from: date, date_to: date, transactions: Iterable[FilingTransaction]
) -> LiabilityReport:
    """The return's figures for finalized and filed transactions dated in the range, per state, filing nothing.

    Credits are netted; no carried credits and no floor: a jurisdiction's net may be negative.
    """
    txns = [t for t in transactions if t.status in LIABLE_STATUSES and _in_range(t, date_from, date_to)]
    states = sorted({s for t in txns for s in t.touched_states()})
    out = []
    for state in states:
        agg = _Aggregate()
        for txn in txns:
            _add(agg, state, txn)
        ordered = _ordered(a.totals() for a in agg.accs.values())
        code = state_jurisdiction(state)
        out.append(
            StateLiability(code, ordered, _sum_totals(code, ordered, agg.sales), tuple(agg.tax_only), tuple(agg.held_off),
                           tuple(agg.ids), tuple(agg.marketplace), tuple(agg.converted))
        )
    return LiabilityReport(date_from, date_to, tuple(out))


# -- CSV -------------------------------------------------------------------------------------------

CSV_COLUMNS: tuple[str, ...] = (
    "jurisdiction_code",
    "jurisdiction_name",
    "jurisdiction_type",
    "gross_sales",
    "discounts",
    "exempt_sales_exemption_certificate",
    "exempt_sales_non_taxable_product",
    "exempt_sales_unregistered",
    "taxable_sales",
    "tax_calculated",
    "tax_provided",
    "tax_only_tax",
    "sales_filing_tax",
    "credits_filing_tax",
    "carried_credits_applied",
    "filing_tax_amount",
    "credits_carried_forward",
    "currency",
)


def _csv_row(t: JurisdictionTotals, currency: str) -> list[str | int]:
    e = t.exempt_sales
    return [
        t.jurisdiction_code, t.jurisdiction_name, t.jurisdiction_type, t.gross_sales, t.discounts,
        e.exemption_certificate, e.non_taxable_product, e.unregistered, t.taxable_sales, t.tax_calculated,
        t.tax_provided, t.tax_only_tax, t.sales_filing_tax, t.credits_filing_tax, t.carried_credits_applied,
        t.filing_tax_amount, t.credits_carried_forward, currency,
    ]


def return_to_csv(ret: Return | StateLiability, currency: str) -> str:
    """A header row (:data:`CSV_COLUMNS`), one row per jurisdiction, then the ``TOTAL`` row.

    Amounts are integers in minor units of ``currency`` (the filing currency, last column of every
    row: transactions in another currency are converted); RFC 4180 quoting and CRLF line ends.
    A return outside the US has two more columns, ``tax_type`` and ``tax_rate``.
    """
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\r\n")
    rated = any(t.tax_rate is not None for t in ret.jurisdictions)
    w.writerow(CSV_COLUMNS + (("tax_type", "tax_rate") if rated else ()))
    for t in (*ret.jurisdictions, ret.totals):
        w.writerow(_csv_row(t, currency) + ([t.tax_type or "", t.tax_rate or ""] if rated else []))
    return buf.getvalue()
