"""Credits against a sale (spec 4.6 workflows 3-5): the one place of the credit rule.

The invariant: for every sale, its credits that are not void never exceed what it
charged, **in total** (net amount of its goods lines, filing tax), **per line** (a
credit line reverses the sale's line of the same ``id``: its net amount and tax)
and **per state** (the filing tax as returns place it), all in the sale's
currency. It holds after every operation:

- a credit is created or changed only within what remains (:func:`check_credit`,
  422 ``validation_error``; another currency than its sale's is 422 at ``/currency``);
- a sale changes only in ways that keep its credits within it
  (:func:`check_sale_change`, 422 ``invalid_state`` naming the credits): while it
  has credits that are not void it cannot be voided or moved back to ``draft``,
  and its tax cannot go below what is credited;
- the tax a credit line reverses is derived from the sale's line
  (:func:`credit_line`, the remaining-tax rule), so credits add up to the sale
  to the minor unit.

Amounts are net amounts (``taxable_amount``: after the line's own discounts and
its share of the transaction discount); tax is the filing tax in total and the
line's tax per line. A goods line of a credit names the sale's line it reverses by
its ``id``; a credit line naming none (the spec lets a partial credit send any
lines) is taxed as calculated and counted in the totals and per state only, so
it can never put on a state more than the sale charged there. Pure: the wiring
(``levy.app.transactions``) reads the sale and its credits locked in the same
database transaction as the write.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace

from levy.domain.errors import FailedPrecondition, LevyError, ValidationFailed
from levy.domain.filing import distribute_filing_tax, state_of
from levy.domain.money import allocate, share_half_up
from levy.domain.tax.model import DiscountResult, LineResult, TaxRow
from levy.domain.transactions.records import StoredLine, TransactionRecord, to_filing

#: Statuses in which a sale stands behind its credits.
CREDITABLE = ("finalized", "filed")

_RowKey = tuple[str, str]  # (jurisdiction_code, tax_type)


def check_parent_usable(parent: TransactionRecord, pointer: str) -> None:
    """A credit's parent is a sale (422 at ``pointer``) that stands behind credits: finalized or
    filed (422 :class:`FailedPrecondition` with ``parent_status``)."""
    if parent.type != "sale":
        raise ValidationFailed(f"the parent transaction {parent.id} is a credit: a credit reverses a sale",
                               pointer=pointer)
    if parent.status not in CREDITABLE:
        raise FailedPrecondition(
            f"the parent transaction {parent.id} is '{parent.status}': only a finalized or filed sale can be credited",
            pointer=pointer, meta={"parent_status": parent.status},
        )


@dataclass(frozen=True, slots=True)
class Left:
    """What remains to credit (negative: credited beyond what was charged)."""

    amount: int
    tax: int


def _row_key(row: TaxRow) -> _RowKey:
    return (row.jurisdiction_code, row.tax_type)


def _lines_by_id(credits: Iterable[TransactionRecord]) -> dict[str, list[LineResult]]:
    out: dict[str, list[LineResult]] = {}
    for credit in credits:
        for ln in credit.lines:
            out.setdefault(ln.id, []).append(ln.result)
    return out


def remaining(sale: TransactionRecord, credits: Iterable[TransactionRecord]) -> tuple[Left, dict[str, Left]]:
    """What remains to credit of ``sale`` after ``credits``: in total, and per line id of the sale."""
    credits = list(credits)
    total = Left(sale.net_amount - sum(c.net_amount for c in credits),
                 sale.tax.filing_tax_amount - sum(c.tax.filing_tax_amount for c in credits))
    credited = _lines_by_id(credits)
    per_line = {}
    for ln in sale.lines:
        done = credited.get(ln.id, ())
        per_line[ln.id] = Left(ln.result.taxable_amount - sum(r.taxable_amount for r in done),
                               ln.result.tax_amount - sum(r.tax_amount for r in done))
    return total, per_line


def filing_tax_by_state(rec: TransactionRecord, currency: str) -> dict[str, int]:
    """``rec``'s filing tax per state as returns place it (:func:`levy.domain.filing.distribute_filing_tax`);
    nothing for a transaction held off returns or whose tax has no state row to go to."""
    txn = to_filing(rec, currency=currency)
    placed = distribute_filing_tax(txn) if txn.held_off_reason is None else None
    out: dict[str, int] = {}
    for code, amount in (placed or {}).items():
        state = state_of(code)
        if state is not None:
            out[state] = out.get(state, 0) + amount
    return out


def tax_left_by_state(sale: TransactionRecord, credits: Iterable[TransactionRecord], currency: str) -> dict[str, int]:
    """Per state, the sale's filing tax there less its credits' (a provided tax is placed in
    proportion to each transaction's own rows, so a credit's can land unevenly across states)."""
    left = filing_tax_by_state(sale, currency)
    for credit in credits:
        for state, amount in filing_tax_by_state(credit, currency).items():
            left[state] = left.get(state, 0) - amount
    return left


def figures_by_jurisdiction(rec: TransactionRecord, currency: str) -> dict[str, tuple[int, int, int]]:
    """``rec``'s (gross, taxable, calculated tax) per jurisdiction, as the liability report adds
    them up (:func:`levy.domain.filing.liability_report`: a line's gross counts in every
    jurisdiction of its rows)."""
    out: dict[str, tuple[int, int, int]] = {}
    for ln in to_filing(rec, currency=currency).lines:
        for r in ln.rows:
            gross, taxable, calculated = out.get(r.jurisdiction_code, (0, 0, 0))
            out[r.jurisdiction_code] = (gross + ln.amount, taxable + r.taxable_base, calculated + r.tax_amount)
    return out


def over_by_jurisdiction(sale: TransactionRecord, credits: Iterable[TransactionRecord],
                         currency: str) -> dict[str, list[str]]:
    """The jurisdictions where ``credits`` would reverse more gross, taxable or calculated tax than
    ``sale`` put there (what would make a liability figure negative), with the figures concerned."""
    left = {code: list(v) for code, v in figures_by_jurisdiction(sale, currency).items()}
    for credit in credits:
        for code, figures in figures_by_jurisdiction(credit, currency).items():
            acc = left.setdefault(code, [0, 0, 0])
            for i, value in enumerate(figures):
                acc[i] -= value
    names = ("gross", "taxable", "tax")
    return {code: [names[i] for i, v in enumerate(acc) if v < 0] for code, acc in sorted(left.items())
            if any(v < 0 for v in acc)}


# -- the remaining-tax rule -------------------------------------------------------------------


def _credited_rows(earlier: Sequence[LineResult]) -> dict[_RowKey, list[int]]:
    """Per jurisdiction row, what ``earlier`` credit lines took: [tax, taxable base, tax before discounts]."""
    credited: dict[_RowKey, list[int]] = {}
    for e in earlier:
        for r in e.taxes:
            acc = credited.setdefault(_row_key(r), [0, 0, 0])
            acc[0] += r.tax_amount
            acc[1] += r.taxable_base
            acc[2] += r.tax_amount_before_discounts
    return credited


def credit_line(sale_line: LineResult, earlier: Sequence[LineResult], line: LineResult) -> LineResult:
    """The credit line ``line`` reversing (part of) ``sale_line``, its tax taken from the sale's line.

    ``earlier``: the results of the same line on the sale's other credits (not void).
    Each of the sale line's jurisdiction rows gives the credit line a row of the same
    jurisdiction, rate and rule, whose tax, taxable base and tax before discounts are:

    - when the credit completes the line's net amount (``earlier`` + this reach it):
      exactly what remains of the row (the row's figure less the earlier credits'), so
      the credits add up to the sale's line to the minor unit;
    - otherwise the share ``figure x credit amount / line amount``, ROUND_HALF_UP, never
      more than what remains of the row.

    The credit line keeps its own amounts (``amount``, ``taxable_amount``) and discounts, whose
    tax reductions are its tax before discounts less its tax, spread over them by amount.
    A sale line of net amount 0 is completed by any credit of it.
    """
    whole = sale_line.taxable_amount
    completes = line.taxable_amount >= whole - sum(e.taxable_amount for e in earlier)
    credited = _credited_rows(earlier)

    def share(figure: int, done: int) -> int:
        left = max(0, figure - done)
        if completes:
            return left
        return min(left, share_half_up(max(0, figure), line.taxable_amount, whole))

    rows = []
    for r in sale_line.taxes:
        tax_done, base_done, before_done = credited.get(_row_key(r), (0, 0, 0))
        rows.append(replace(
            r, tax_amount=share(r.tax_amount, tax_done), taxable_base=share(r.taxable_base, base_done),
            tax_amount_before_discounts=share(r.tax_amount_before_discounts, before_done),
        ))
    tax = sum(r.tax_amount for r in rows)
    before = sum(r.tax_amount_before_discounts for r in rows)
    return replace(line, tax_amount=tax, tax_amount_before_discounts=before, taxes=tuple(rows),
                   discounts=_reductions(line.discounts, max(0, before - tax)), sourcing=sale_line.sourcing)


def _reductions(discounts: tuple[DiscountResult, ...], reduction: int) -> tuple[DiscountResult, ...]:
    """The credit line's own discounts with ``reduction`` (tax before discounts less tax) spread over
    them by amount, as the engine spreads a line's (largest remainder)."""
    weights = [max(0, d.amount) for d in discounts]
    parts = allocate(reduction, weights) if reduction and sum(weights) else [0] * len(discounts)
    return tuple(replace(d, tax_amount_reduction=p) for d, p in zip(discounts, parts, strict=True))


def credit_against(sale: TransactionRecord, earlier: Iterable[TransactionRecord],
                   credit: TransactionRecord) -> TransactionRecord:
    """``credit`` with each line naming a line of ``sale`` taxed by :func:`credit_line`
    (earlier credits and the credit's own earlier lines of that id counted), and its
    calculated tax the sum of its lines again."""
    sale_lines = {ln.id: ln.result for ln in sale.lines}
    sale_ship_from = {ln.id: ln.ship_from for ln in sale.lines}
    credited = _lines_by_id(earlier)
    lines: list[StoredLine] = []
    for ln in credit.lines:
        sale_line = sale_lines.get(ln.id)
        if sale_line is None:
            lines.append(ln)
            continue
        done = credited.setdefault(ln.id, [])
        result = credit_line(sale_line, done, ln.result)
        done.append(result)
        # The sale line's rows, and where it shipped from (its sourcing), are the credit line's.
        lines.append(replace(ln, result=result, ship_from=sale_ship_from.get(ln.id)))
    tax = replace(credit.tax, calculated=sum(ln.result.tax_amount for ln in lines))
    return replace(credit, lines=tuple(lines), tax=tax)


# -- credits by amount -----------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class FlatShare:
    """One line of a credit by amount: the sale's line it reverses, and the credit line's result
    (``amount`` = ``taxable_amount`` = the net amount refunded, its tax and rows taken from the
    sale's line)."""

    sale_line: StoredLine
    result: LineResult


def flat_credit(sale: TransactionRecord, earlier: Iterable[TransactionRecord], flat_amount: int,
                *, pointer: str = "/flat_amount") -> tuple[FlatShare, ...]:
    """Spread ``flat_amount`` (the total to refund, tax included) over what remains of ``sale``'s lines
    after its ``earlier`` credits (not void), exactly:

    1. each line's remaining total is its remaining net amount plus its remaining tax; the flat
       amount is split over the lines in proportion to those totals (largest remainder,
       :func:`levy.domain.money.allocate`; ties to the first line), so the shares sum to it;
    2. a line's share is split into tax = share x remaining tax / remaining total (ROUND_HALF_UP)
       and net amount = share - tax (so amount + tax is the share, to the minor unit);
    3. that tax is spread over the line's jurisdiction rows in proportion to what remains of each
       row's tax (largest remainder); a row's taxable base follows the remaining-tax rule of
       :func:`credit_line` (its remainder exactly when the credit completes the line).

    A line with nothing left gets no share and is not on the credit. More than what remains of the
    sale in total (net amount + filing tax, or the lines' remaining totals) is 422 at ``pointer``
    with ``meta.remaining_total``; 0 or less is 422 too.
    """
    if flat_amount <= 0:
        raise ValidationFailed(
            f"flat_amount must be a positive amount to refund (tax included); got {flat_amount}", pointer=pointer)
    earlier = list(earlier)
    total, per_line = remaining(sale, earlier)
    lines = list({ln.id: ln for ln in sale.lines}.values())
    lefts = [per_line[ln.id] for ln in lines]
    weights = [max(0, left.amount) + max(0, left.tax) for left in lefts]
    whole = min(sum(weights), max(0, total.amount) + max(0, total.tax))
    if flat_amount > whole:
        raise ValidationFailed(
            f"flat_amount {flat_amount} exceeds the {whole} that remains to refund of {sale.id} (net amount "
            f"{max(0, total.amount)} and tax {max(0, total.tax)} left, earlier credits counted)",
            pointer=pointer,
            meta={"remaining_total": whole, "remaining_amount": max(0, total.amount),
                  "remaining_tax": max(0, total.tax)},
        )
    credited = _lines_by_id(earlier)
    out = []
    for ln, left, weight, part in zip(lines, lefts, weights, allocate(flat_amount, weights), strict=True):
        if part == 0:
            continue
        tax = share_half_up(max(0, left.tax), part, weight)
        out.append(FlatShare(ln, _flat_line(ln.result, credited.get(ln.id, []), part - tax, tax)))
    return tuple(out)


def _flat_line(sale_line: LineResult, earlier: Sequence[LineResult], amount: int, tax: int) -> LineResult:
    """The credit line of net ``amount`` and ``tax`` reversing ``sale_line`` (:func:`flat_credit` step 3)."""
    base = credit_line(sale_line, earlier, replace(sale_line, amount=amount, taxable_amount=amount, discounts=()))
    done = _credited_rows(earlier)
    room = [max(0, r.tax_amount - done.get(_row_key(r), (0,))[0]) for r in sale_line.taxes]
    parts = allocate(tax, room) if sum(room) else [0] * len(room)
    rows = tuple(replace(r, tax_amount=p, tax_amount_before_discounts=max(p, r.tax_amount_before_discounts))
                 for r, p in zip(base.taxes, parts, strict=True))
    return replace(base, tax_amount=tax, tax_amount_before_discounts=sum(r.tax_amount_before_discounts for r in rows),
                   taxes=rows)


# -- refusals ---------------------------------------------------------------------------------


def check_credit(sale: TransactionRecord, earlier: Iterable[TransactionRecord], credit: TransactionRecord,
                 *, filing_currency: str, lines_pointer: str = "/line_items") -> None:
    """Refuse ``credit`` (422 ``validation_error``) unless ``sale`` still covers it after ``earlier``.

    In order: the currency must be the sale's (``/currency``); the totals (detail and
    ``meta`` state ``remaining_amount`` and ``remaining_tax``; pointer ``lines_pointer``
    for the amount, ``/tax_amount`` for the tax); each line naming a line of the sale
    (pointer ``/line_items/N``, ``meta`` with the line's id and what remains of it; a line
    naming no line of the sale counts in the totals and per state only); then the filing tax per state
    (``/tax_amount``, ``meta.remaining_tax_by_state``), in the returns' ``filing_currency``.
    """
    if credit.currency != sale.currency:
        raise ValidationFailed(
            f"the credit is in {credit.currency} but its parent {sale.id} is in {sale.currency}: a credit is in "
            f"its sale's currency (send currency '{sale.currency}')",
            pointer="/currency", meta={"parent_currency": sale.currency},
        )
    earlier = list(earlier)
    total, per_line = remaining(sale, earlier)
    this_amount, this_tax = credit.net_amount, credit.tax.filing_tax_amount
    problems = []
    if this_amount > total.amount:
        problems.append(f"amount {this_amount} exceeds the {max(0, total.amount)} left to credit")
    if this_tax > total.tax:
        problems.append(f"tax {this_tax} exceeds the {max(0, total.tax)} left to credit")
    if problems:
        raise ValidationFailed(
            f"credits may not exceed what the parent charged (earlier credits counted): {'; '.join(problems)}; "
            f"remaining amount {max(0, total.amount)}, remaining tax {max(0, total.tax)}",
            pointer=lines_pointer if this_amount > total.amount else "/tax_amount",
            meta={"remaining_amount": max(0, total.amount), "remaining_tax": max(0, total.tax)},
        )
    errors: list[LevyError] = []
    for index, ln in enumerate(credit.lines):
        left = per_line.get(ln.id)
        if left is None:  # reverses no line of the sale: bounded by the totals and per state
            continue
        r = ln.result
        if r.taxable_amount > left.amount or r.tax_amount > left.tax:
            errors.append(ValidationFailed(
                f"line '{ln.id}' (line_items[{index}]): amount {r.taxable_amount} and tax {r.tax_amount} exceed "
                f"what remains to credit of the parent's line '{ln.id}': amount {max(0, left.amount)}, "
                f"tax {max(0, left.tax)}",
                pointer=f"/line_items/{index}",
                meta={"line_id": ln.id, "remaining_amount": max(0, left.amount), "remaining_tax": max(0, left.tax)},
            ))
        per_line[ln.id] = Left(left.amount - r.taxable_amount, left.tax - r.tax_amount)
    if errors:
        raise ValidationFailed.many(errors)
    beyond = over_by_jurisdiction(sale, [*earlier, credit], filing_currency)
    if beyond:
        raise ValidationFailed(
            "the credit reverses more than the parent put in "
            + ", ".join(f"{code} ({', '.join(what)})" for code, what in beyond.items())
            + ": a credit line reverses sales of its parent, in the parent's jurisdictions",
            pointer=lines_pointer, meta={"jurisdictions": list(beyond)},
        )
    over = {st: -left for st, left in tax_left_by_state(sale, [*earlier, credit], filing_currency).items() if left < 0}
    if over:
        before = tax_left_by_state(sale, earlier, filing_currency)
        states = sorted(over)
        raise ValidationFailed(
            "the credit's tax exceeds what the parent charged in "
            + ", ".join(f"{st} (by {over[st]}; {max(0, before.get(st, 0))} left there)" for st in states)
            + ": a credit's tax is placed on returns in its own lines' jurisdictions (a provided tax_amount "
            "in proportion to them)",
            pointer="/tax_amount",
            meta={"remaining_tax_by_state": {st: max(0, before.get(st, 0)) for st in states}},
        )


def check_sale_change(sale: TransactionRecord, credits: Sequence[TransactionRecord], *, pointer: str,
                      filing_currency: str) -> None:
    """Refuse (422 ``invalid_state``) a change leaving ``sale`` (as it would be stored) below its
    ``credits`` (those not void).

    While a sale has credits it stays ``finalized`` or ``filed``: voiding it or moving it back
    to ``draft`` is refused (pointer ``/status``; void the credits first). Its tax (and, were they
    to change, its lines) may not go below what is credited, in total or per line (pointer
    ``pointer``, the field the request changed). ``meta`` names the credits and what they hold.
    """
    if not credits:
        return
    ids = [c.id for c in credits]
    meta = {
        "credit_transaction_ids": ids,
        "credited_amount": sum(c.net_amount for c in credits),
        "credited_tax": sum(c.tax.filing_tax_amount for c in credits),
    }
    named = ", ".join(ids)
    if sale.status not in CREDITABLE:
        raise FailedPrecondition(
            f"the sale {sale.id} has credits that are not void ({named}): it cannot move to '{sale.status}' "
            "while they stand against it; void the credits first",
            pointer="/status", meta=meta,
        )
    if sale.currency != credits[0].currency:
        raise FailedPrecondition(
            f"the sale {sale.id} has credits in {credits[0].currency} ({named}): its currency cannot change",
            pointer="/currency", meta=meta,
        )
    total, per_line = remaining(sale, credits)
    problems = []
    if total.amount < 0:
        problems.append(f"amount {sale.net_amount} is below the {meta['credited_amount']} credited")
    if total.tax < 0:
        problems.append(f"tax {sale.tax.filing_tax_amount} is below the {meta['credited_tax']} credited")
    problems.extend(
        f"line '{line_id}' is below what is credited of it" for line_id, left in per_line.items()
        if left.amount < 0 or left.tax < 0
    )
    problems.extend(
        f"its tax in {state} is below what is credited there by {-left}"
        for state, left in sorted(tax_left_by_state(sale, credits, filing_currency).items()) if left < 0
    )
    if problems:
        raise FailedPrecondition(
            f"the sale {sale.id} would charge less than its credits ({named}) reverse: {'; '.join(problems)}",
            pointer=pointer, meta=meta,
        )

