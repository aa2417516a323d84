"""The tax engine: pure, line by line, jurisdiction by jurisdiction.

See docs/tax-engine.md for the method (amounts, discounts, rounding, rules).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import replace
from datetime import UTC, date, datetime
from decimal import Decimal
from fractions import Fraction
from functools import partial

from levy.domain.errors import LevyError, ValidationFailed
from levy.domain.money import MAX_AMOUNT, allocate, currency_exponent, mul_round, range_errors, round_half_up
from levy.domain.tax.calc_errors import combine_errors, sales_tax_error
from levy.domain.tax.holidays import HolidayMatch, Holidays
from levy.domain.tax.international import ReverseCharge, reverse_charge
from levy.domain.tax.item_rules import NO_ITEM_RULES, Band, ItemRules, banded, delivery_counted, delivery_rows
from levy.domain.tax.model import (
    CalculationInput,
    CalculationResult,
    CustomerExemption,
    DiscountResult,
    ExemptionSettings,
    ExemptReason,
    LineInput,
    LineResult,
    Registration,
    TaxRow,
)
from levy.domain.tax.rates import JurisdictionRate, RateTable, Resolution
from levy.domain.tax.sourcing import Sourced, SourcingTable, source
from levy.domain.tax.taxability import Rule, Taxability

TRANSACTION_DISCOUNT_ID = "discount_amount"

# Certificate exemption type -> the attribute a line must carry in
# "certificate_and_product_tax_code" mode.
CERTIFICATE_ATTRIBUTES = {
    "resale": "_RESALE",
    "manufacturing": "_MANUFACTURING",
    "government": "_GOVERNMENT",
    "nonprofit": "_NONPROFIT",
}

_ZERO = Decimal(0)


def _on(value: datetime | date | None) -> date:
    if value is None:
        return datetime.now(UTC).date()
    if isinstance(value, datetime):
        if value.tzinfo is not None:
            value = value.astimezone(UTC)
        return value.date()
    return value


# The last answer of _registered_codes: one organization's registrations (the
# same list object while the preset cache keeps it) asked about one day, again and again.
_last_registered: tuple[object, date, frozenset[str]] | None = None


def _registered_codes(registrations: Iterable[Registration], on: date) -> frozenset[str]:
    global _last_registered
    last = _last_registered
    if last is not None and last[0] is registrations and last[1] == on and isinstance(registrations, tuple):
        return last[2]
    codes = frozenset(r.jurisdiction for r in registrations if r.covers(on))
    _last_registered = (registrations, on, codes)
    return codes


# How one row taxes a line (:func:`_terms`): (rate, the share of the amount taxed or None for all
# of it, the part of the amount exempt (``exempt_up_to``) or None, the exempt reason or None).
Terms = tuple[Decimal, Decimal | None, int | None, str | None]
_EXEMPT: Terms = (_ZERO, None, None, "non_taxable_product")


def _terms(rule: Rule, j: JurisdictionRate, amount: int, quantity: Decimal, counted: int = 0) -> Terms:
    """How ``rule`` taxes one jurisdiction row of a line; ``amount`` (the line's price before tax)
    decides the per-item price thresholds. :func:`_apply` turns the terms into figures.
    ``counted``: the line's share of delivery charges, added to the per-item price a
    threshold compares when the rule's ``threshold_counts`` says so."""
    treatment = rule.treatment
    rate = j.rate
    if j.type == "state":
        if treatment == "exempt":
            return _EXEMPT
        if treatment == "reduced" and rule.rate is not None:
            rate = rule.rate
    else:
        if j.statewide and rule.local_rate is not None:
            return rule.local_rate, None, None, None
        local = rule.local
        if not j.statewide:
            for ex in rule.local_exceptions:
                if ex.matches(j.type, j.code):
                    local = ex.local
                    if ex.rate is not None:
                        rate = ex.rate
                    break
        if local == "exempt" or (local == "follow" and treatment == "exempt"):
            return _EXEMPT
        if local == "taxable":
            return rate, None, None, None
    if treatment == "percentage" and rule.percent is not None:
        return rate, rule.percent, None, None
    if treatment == "threshold" and rule.threshold is not None:
        mode = rule.threshold_mode
        if mode == "exempt_up_to":
            return rate, None, round_half_up(rule.threshold * quantity), None
        compared = amount + counted if rule.threshold_counts == "price_and_delivery" else amount
        per_item = compared / quantity if quantity else Decimal(compared)
        if mode == "rate_above":
            if j.type == "state" and rule.rate is not None and per_item > rule.threshold:
                rate = rule.rate
        elif per_item < rule.threshold or (mode == "exempt_at_or_below" and per_item == rule.threshold):
            return _EXEMPT
    return rate, None, None, None


def _apply(terms: Terms, amount: int) -> tuple[int, Decimal, int, str | None]:
    """A row's (taxable base, rate, tax, exempt reason or None) for a (non-negative) amount before tax."""
    rate, percent, deduction, reason = terms
    if reason is not None:
        return 0, _ZERO, 0, reason
    base = amount if percent is None else mul_round(amount, percent)
    if deduction is not None:
        base = max(0, base - deduction)
        if not base:
            return 0, rate, 0, "non_taxable_product"
    return base, rate, mul_round(base, rate) if base and rate else 0, None


def _taxed(
    rule: Rule, j: JurisdictionRate, amount: int, quantity: Decimal, counted: int = 0
) -> tuple[int, Decimal, int, str | None]:
    """Apply a taxability rule to one jurisdiction row for a (non-negative) amount:
    (taxable base, rate, tax, exempt reason or None). The rule's name is the row's.
    ``counted``: the line's share of delivery charges (see :func:`_terms`)."""
    return _apply(_terms(rule, j, amount, quantity, counted), amount)


def _pre_tax(terms: Sequence[Terms], amount: int) -> int:
    """The price before tax P of a tax-inclusive ``amount``: P + the rows' exact taxes = ``amount``,
    ROUND_HALF_UP to the minor unit. Each taxed row's exact tax is rate x (share x P - deduction);
    a row whose deduction covers its base (``exempt_up_to``) taxes nothing and is left out of the sum
    (leaving one out only lowers P, so the rows left out stay out)."""
    active = [(Fraction(r), Fraction(k) if k is not None else 1, d or 0)
              for r, k, d, reason in terms if reason is None and r]
    while True:
        num = amount + sum((r * d for r, _, d in active), Fraction(0))
        den = 1 + sum((r * k for r, k, _ in active), Fraction(0))
        p = num / den
        kept = [t for t in active if not t[2] or t[1] * p > t[2]]
        if len(kept) == len(active):
            return (2 * p.numerator + p.denominator) // (2 * p.denominator)
        active = kept


def _inclusive(rule: Rule, js: Sequence[JurisdictionRate], amount: int,
               quantity: Decimal) -> tuple[int, list[tuple[int, Decimal, int, str | None]]]:
    """A tax-inclusive ``amount`` (not negative) split into its price before tax and the rows'
    (base, rate, tax, reason): price + the rows' taxes = ``amount`` exactly (docs/tax-engine.md,
    "Tax-inclusive prices").

    1. The rows' terms are decided on the amount as sent; the price P is :func:`_pre_tax`. When
       P decides a per-item threshold otherwise (an item dropping under an exemption limit once
       its tax is taken out) and those terms give a P that decides them the same way, they are kept;
       else the first (the amount as sent decides: taxed).
    2. The line's tax is ``amount - P``; each row's base is its base at P and its tax
       ROUND_HALF_UP(rate x base), as for a price before tax.
    3. The cents by which the rows' taxes miss the line's tax (at most about one per row) go one
       per row to the rows whose rate x base lost most in the rounding (taken back, when the
       rows are over, from the rows that gained most), ties to the earlier row.
    """
    terms = [_terms(rule, j, amount, quantity) for j in js]
    price = _pre_tax(terms, amount)
    if price != amount:
        again = [_terms(rule, j, price, quantity) for j in js]
        if again != terms:
            price2 = _pre_tax(again, amount)
            if [_terms(rule, j, price2, quantity) for j in js] == again:
                terms, price = again, price2
    rows = [_apply(t, price) for t in terms]
    missing = amount - price - sum(r[2] for r in rows)
    if missing:
        step = 1 if missing > 0 else -1
        lost = sorted((-step * (Fraction(rate) * base - tax), i) for i, (base, rate, tax, _) in enumerate(rows)
                      if base and rate and (step > 0 or tax > 0))
        for n in range(abs(missing)):
            i = lost[n % len(lost)][1]
            base, rate, tax, reason = rows[i]
            rows[i] = (base, rate, tax + step, reason)
    return price, rows


def _certificate_exemption(
    exemption: CustomerExemption | None,
    settings: ExemptionSettings,
    attributes: frozenset[str],
    state_code: str,
    on: date,
) -> str | None:
    """The exemption (a rule name) that applies in ``state_code``, or None."""
    if exemption is None or not settings.exemption_management:
        return None
    if exemption.exempt:
        return "Exempt: customer exemption override"
    by_product = settings.certificate_treatment == "certificate_and_product_tax_code"
    if exemption.resale and (not by_product or "_RESALE" in attributes):
        return "Exempt: customer resale override"
    if exemption.manufacturing and (not by_product or "_MANUFACTURING" in attributes):
        return "Exempt: customer manufacturing override"
    jcode = f"US-ST-{state_code}"
    for c in exemption.certificates:
        if c.jurisdiction != jcode or not c.covers(on):
            continue
        if not by_product:
            return f"Exempt: {c.exemption_type} exemption certificate"
        attr = CERTIFICATE_ATTRIBUTES.get(c.exemption_type)
        if attr is not None and attr in attributes:
            return f"Exempt: {c.exemption_type} exemption certificate for {attr} product"
    return None


def _validate(
    inp: CalculationInput, rates: RateTable, on: date, sourcing: SourcingTable | None
) -> tuple[list[LevyError], list[Resolution | None], list[Sourced | None]]:
    """Errors, each line's delivery resolution and, for lines with a ship-from, its sourcing."""
    errors: list[LevyError] = []
    sourced: list[Sourced | None] = [None] * len(inp.lines)
    ids: dict[str, int] = {}
    for line in inp.lines:
        ids[line.id] = ids.get(line.id, 0) + 1
    resolutions: list[Resolution | None] = []
    for line in inp.lines:
        if line.is_sales_tax:
            resolutions.append(None)
            why = None
            if line.sales_tax_violation:
                why = "only_code"
            elif ids[line.id] > 1:
                why = "duplicate_id"
            elif not line.from_marked_product:
                if any(d.amount for d in line.discounts) or line.discount_amount or line.vendor_discount_amount:
                    why = "discount"
                elif line.unit_price < 0:
                    why = "negative_amount"
            if why is not None:
                errors.append(sales_tax_error(line.pointer, why))
            continue
        if line.address is None:
            errors.append(
                ValidationFailed("A customer address is required.", pointer=f"{line.pointer}/customer/address")
            )
            resolutions.append(None)
            continue
        try:
            resolutions.append(rates.resolve(line.address, on, line.pointer))
        except LevyError as e:
            errors.append(e)
            resolutions.append(None)
        if line.ship_from is not None:
            try:
                origin = rates.resolve(line.ship_from, on, line.pointer, line.ship_from_pointer)
            except LevyError as e:
                errors.append(e)
                continue
            dest = resolutions[-1]
            if dest is not None and sourcing is not None and dest.place is None:  # outside the US: destination
                sourced[len(resolutions) - 1] = source(dest, origin, sourcing, on, line.ship_from_label)
    return errors, resolutions, sourced


def calculate(
    inp: CalculationInput,
    rates: RateTable,
    rules: Taxability,
    registrations: Iterable[Registration] = (),
    settings: ExemptionSettings | None = None,
    *,
    prior_errors: Iterable[LevyError] = (),
    sourcing: SourcingTable | None = None,
    holidays: Holidays | None = None,
    item_rules: ItemRules | None = None,
) -> CalculationResult:
    """Tax due for ``inp``, by line and jurisdiction.

    ``prior_errors`` are validation errors the adapter already found while
    parsing; they are combined with the engine's own (section 4.7 rule 5).
    ``sourcing``: the per-state sourcing rules (:mod:`levy.domain.tax.sourcing`)
    for lines with a ``ship_from``; without it (or a ship-from) a line is taxed
    at its delivery address. ``holidays``: the sales tax holidays
    (:mod:`levy.domain.tax.holidays`); without them no line is exempted by one.
    ``item_rules``: delivery that follows the goods and single-article bands
    (:mod:`levy.domain.tax.item_rules`); without them neither applies.
    Raises ValidationFailed (422) for input problems.
    """
    settings = settings or ExemptionSettings()
    errors: list[LevyError] = list(prior_errors)
    try:
        currency_exponent(inp.currency)
    except LevyError as e:
        errors.append(e)
    on = _on(inp.transaction_date)
    more, resolutions, sourced = _validate(inp, rates, on, sourcing)
    errors.extend(more)
    amounts = [mul_round(line.unit_price, line.quantity) for line in inp.lines]
    errors.extend(line_amount_errors(inp.lines, amounts))
    if errors:
        raise combine_errors(errors)
    registered = _registered_codes(registrations, on)

    # Own discounts, and the transaction discount's allocation.
    own = [sum(d.amount for d in line.discounts) + line.discount_amount for line in inp.lines]
    weights = [0 if line.is_sales_tax else max(0, a - o) for line, a, o in zip(inp.lines, amounts, own)]
    if inp.discount_amount and sum(weights):
        shares = allocate(min(inp.discount_amount, sum(weights)), weights)
    else:
        shares = [0] * len(inp.lines)

    # Item rules (issue 31): delivery lines are looked at only when the calculation has one.
    items = item_rules or NO_ITEM_RULES
    band_states = items.band_states
    states: list[str | None] = []
    counted: list[int] = []  # each line's share of delivery, worked out for the first threshold that counts it
    has_charges = items.has_charge(inp.lines)
    if has_charges:
        states = [None if r is None or not r.supported else r.state
                  for r in (how.resolution if how is not None else res for res, how in zip(resolutions, sourced))]
    results: list[LineResult] = []
    total = 0
    for idx, line in enumerate(inp.lines):
        amount = amounts[idx]
        if line.is_sales_tax:
            net = amount - own[idx]
            detail = (
                "collected-tax line from a marked product with a negative amount after its discounts: left out"
                if line.from_marked_product and net < 0
                else "collected-tax (SALES_TAX) line: not taxed, left out of the taxable base and the total"
            )
            results.append(
                LineResult(
                    line.id, 0, 0, (), tuple(DiscountResult(d.id, d.amount, 0) for d in line.discounts),
                    amount, 0, True, detail,
                )
            )
            continue
        share = shares[idx]
        gross = max(0, amount)
        net = max(0, amount - own[idx] - share)
        res = resolutions[idx]
        assert res is not None
        how = sourced[idx]
        if how is not None:
            res = how.resolution
        if res.place is not None:  # outside the US (issue 34)
            plan = _international_plan(line, res, registered, settings, inp.include_unregistered, on)
        else:
            holiday = holidays.find(res.state, line.category, net, line.quantity, on) if holidays is not None else None
            plan = _line_plan(line, res, rules, registered, settings, inp.include_unregistered, on,
                              how.detail if how is not None else "", holiday)
        if line.inclusive:
            # Amounts before tax: the price (net) and the amount before discounts less the tax it includes.
            # Single-article bands and delivery counted toward a threshold apply to tax-exclusive lines only.
            rows, tax, before, net = _inclusive_line_rows(plan, line.quantity, gross, net)
            amount -= before
        else:
            bands = items.bands_for(res.state, line.category, on) if res.state in band_states else ()
            extra = 0
            if has_charges and plan[0] is not None and plan[0].threshold_counts == "price_and_delivery":
                counted = counted or delivery_counted(
                    inp.lines, states, [max(0, a - o - s) for a, o, s in zip(amounts, own, shares)], items)
                extra = counted[idx]
            rows, tax, before = _line_rows(plan, line.quantity, gross, net, bands, extra)
        discounts = _discount_results(line, share, max(0, before - tax))
        results.append(LineResult(line.id, tax, before, rows, discounts, amount, net, resolution=res.level,
                                  sourcing=how.kind if how is not None else "", inclusive=line.inclusive))
        total += tax
    if has_charges:
        for idx, rows in delivery_rows(inp.lines, states, results, items, on):
            if inp.lines[idx].inclusive:  # delivery rules reshape tax-exclusive charges only
                continue
            tax = sum(r.tax_amount for r in rows)
            before = sum(r.tax_amount_before_discounts for r in rows)
            total += tax - results[idx].tax_amount
            results[idx] = replace(results[idx], taxes=rows, tax_amount=tax, tax_amount_before_discounts=before,
                                   discounts=_discount_results(inp.lines[idx], shares[idx], max(0, before - tax)))
    return CalculationResult(total, inp.currency, tuple(results))


def line_amount_errors(lines: Sequence[LineInput], amounts: Sequence[int]) -> list[ValidationFailed]:
    """Each line's amount (quantity x unit_price) and all of them together, by size, within
    :data:`~levy.domain.money.MAX_AMOUNT` (422 at the line, or at ``/line_items`` for the sum)."""
    if sum(map(abs, amounts)) <= MAX_AMOUNT:
        return []
    parts = [(a, f"The amount of line '{ln.id}' (quantity x unit_price)", ln.pointer or "/line_items")
             for ln, a in zip(lines, amounts, strict=True)]
    return range_errors(parts, "The line items' amounts together (quantity x unit_price, by size)", "/line_items")


def _discount_results(line: LineInput, share: int, reduction: int) -> tuple[DiscountResult, ...]:
    entries = [(d.id, d.amount) for d in line.discounts]
    if line.discount_amount:
        entries.append((f"line_{TRANSACTION_DISCOUNT_ID}", line.discount_amount))
    if share:
        entries.append((TRANSACTION_DISCOUNT_ID, share))
    if not entries:
        return ()
    weights = [max(0, a) for _, a in entries]
    parts = allocate(reduction, weights) if reduction and sum(weights) else [0] * len(entries)
    return tuple(DiscountResult(i, a, p) for (i, a), p in zip(entries, parts))


def _line_plan(
    line: LineInput,
    res: Resolution,
    rules: Taxability,
    registered: frozenset[str],
    settings: ExemptionSettings,
    include_unregistered: bool,
    on: date,
    sourcing_detail: str = "",
    holiday: HolidayMatch | None = None,
) -> tuple[Rule | None, tuple[object, ...]]:
    """(rule, entries): each entry a finished TaxRow (nothing taxed) or the
    (jurisdiction, is_registered, detail) of a row to tax.

    Worked out for every line: a memo of plans keyed by the identity of the
    resolution and the rules saved 4.6 us of a 3-line calculation (22.8 -> 18.2 us
    in-process; about 0.7% of the 660 us of server CPU of a gRPC calculation) and
    was removed (issue 23; ``python -m bench.fast_paths``)."""
    extra = [line.customer_detail] if line.customer_detail else []
    if not res.supported:
        detail = "; ".join([*res.details, *extra])
        plan: tuple[Rule | None, tuple[object, ...]] = (None, (
            TaxRow(res.country, res.country, "state", _ZERO, 0, 0, False, "Country not supported yet", detail,
                   exempt_reason="no_tax"),
        ))
        return plan
    state = res.state or ""
    attrs = frozenset(line.attributes)
    rule = rules.lookup(state, line.category, attrs, on)
    state_registered = f"US-ST-{state}" in registered
    exemption_name: str | None = None
    if "_RESALE" in attrs:
        exemption_name = "Exempt: sale for resale (_RESALE)"
    else:
        exemption_name = _certificate_exemption(line.exemption, settings, attrs, state, on)
    # How the address was resolved goes on every row; the resolution's notes on the state row.
    # The sourcing rule applied (a line with a ship-from) goes on every row too; the taxability
    # rule's detail (a cautious default, a condition) on the rows the rule decides.
    rule_words = [sourcing_detail] if sourcing_detail else []
    state_detail = "; ".join([res.how, *rule_words, *res.details, *extra])
    local_detail = "; ".join([res.how, *rule_words, *extra])
    ruled = f"; {rule.detail}" if rule.detail else ""
    entries: list[object] = []
    for j in res.rows:
        is_reg = state_registered if j.statewide else (j.code in registered or state_registered)
        detail = state_detail if j.type == "state" else local_detail
        if exemption_name is not None:
            entries.append(TaxRow(j.code, j.name, j.type, _ZERO, 0, 0, is_reg, exemption_name, detail,
                                  exempt_reason="exemption_certificate", sourcing=j.sourcing))
        elif j.type == "state" and j.rate == 0 and not rule.rate and not rule.local_rate:
            entries.append(TaxRow(j.code, j.name, j.type, _ZERO, 0, 0, is_reg, _no_tax_name(j), detail,
                                  exempt_reason="no_tax", sourcing=j.sourcing))
        elif not is_reg and not include_unregistered:
            entries.append(TaxRow(j.code, j.name, j.type, _ZERO, 0, 0, False,
                                  f"Seller not registered in {_state_name(j)}: no tax collected", detail,
                                  exempt_reason="unregistered", sourcing=j.sourcing))
        elif holiday is not None and holiday.holiday.exempts(j.type, j.code):
            entries.append(TaxRow(j.code, j.name, j.type, _ZERO, 0, 0, is_reg, holiday.rule_name,
                                  f"{detail}; {holiday.detail}", exempt_reason="non_taxable_product",
                                  sourcing=j.sourcing))
        elif holiday is not None:
            entries.append((j, is_reg, f"{detail}{ruled}; {holiday.taxed_detail(j.code)}"))
        else:
            entries.append((j, is_reg, detail + ruled))
    return rule, tuple(entries)


def _line_rows(
    plan: tuple[Rule | None, tuple[object, ...]], quantity: Decimal, gross: int, net: int,
    bands: tuple[Band, ...] = (), counted: int = 0,
) -> tuple[tuple[TaxRow, ...], int, int]:
    """A line's rows, its plan (:func:`_line_plan`) applied to its amounts, with their
    tax and tax before discounts summed (the plan's finished rows carry none), the
    single-article ``bands`` applied to the rows they concern and ``counted`` (the line's
    share of delivery charges) added to the price a threshold that counts delivery compares."""
    rule, entries = plan
    counts = counted > 0 and rule is not None and rule.threshold_counts == "price_and_delivery"
    rows: list[TaxRow] = []
    total = total_before = 0
    for entry in entries:
        if type(entry) is TaxRow:
            rows.append(entry)
            continue
        j, is_reg, detail, *named = entry  # type: ignore[misc]
        assert rule is not None
        name, tax_type = named if named else (rule.name, "sales_tax")
        base, rate, tax, reason = _taxed(rule, j, net, quantity, counted)
        if counts:
            detail = f"{detail}; the threshold compares the price plus the item's share of delivery ({counted} of delivery)"
        gross_base = base
        if gross != net:
            gross_base, _, before, _ = _taxed(rule, j, gross, quantity, counted)
        else:
            before = tax
        row = TaxRow(j.code, j.name, j.type, rate, base, tax, is_reg, name, detail, tax_type, reason,
                     before, j.sourcing)
        if bands:  # single-article bands (item rules): the row capped, rows added
            for banded_row in banded(bands, row, gross_base, quantity):
                rows.append(banded_row)
                total += banded_row.tax_amount
                total_before += banded_row.tax_amount_before_discounts
            continue
        rows.append(row)
        total += tax
        total_before += before
    return tuple(rows), total, total_before


def _inclusive_line_rows(
    plan: tuple[Rule | None, tuple[object, ...]], quantity: Decimal, gross: int, net: int
) -> tuple[tuple[TaxRow, ...], int, int, int]:
    """:func:`_line_rows` of a tax-inclusive line (:func:`_inclusive`): its rows, tax, tax before
    discounts, and its price before tax (the line's ``taxable_amount``; + its tax = ``net``)."""
    rule, entries = plan
    taxed = [e for e in entries if type(e) is not TaxRow]
    if not taxed:
        return tuple(entries), 0, 0, net  # type: ignore[arg-type]
    assert rule is not None
    js = [e[0] for e in taxed]  # type: ignore[index]
    price, figures = _inclusive(rule, js, net, quantity)
    before = _inclusive(rule, js, gross, quantity)[1] if gross != net else figures
    rows: list[TaxRow] = []
    k = 0
    for entry in entries:
        if type(entry) is TaxRow:
            rows.append(entry)
            continue
        j, is_reg, detail, *named = entry  # type: ignore[misc]
        name, tax_type = named if named else (rule.name, "sales_tax")
        base, rate, tax, reason = figures[k]
        rows.append(TaxRow(j.code, j.name, j.type, rate, base, tax, is_reg, name, detail, tax_type, reason,
                           before[k][2], j.sourcing))
        k += 1
    tax = sum(f[2] for f in figures)
    return tuple(rows), tax, sum(f[2] for f in before), price


def _no_tax_name(j: JurisdictionRate) -> str:
    return f"{j.name} has no state sales tax"


def _state_name(j: JurisdictionRate) -> str:
    return j.name if j.type == "state" else f"{j.state} ({j.name})"


# Outside the US each row carries its own rate (the level's category rate) and is taxed whole.
_INTERNATIONAL_RULE = Rule("", "", frozenset(), "taxable", "", "", date.min, local="taxable")
_NO_REVERSE_CHARGE = ReverseCharge(False)


def _international_plan(
    line: LineInput,
    res: Resolution,
    registered: frozenset[str],
    settings: ExemptionSettings,
    include_unregistered: bool,
    on: date,
) -> tuple[Rule | None, tuple[object, ...]]:
    """:func:`_line_plan` of a line outside the US (issue 34, :mod:`levy.domain.tax.international`):
    per tax level, in this order, a reverse charge (a valid business tax id of the destination),
    not registered (no registration covers the level: its own code, or ``EU-OSS`` in the EU),
    a customer's exemption override, an exempt category, else taxed at the category's rate (the
    standard rate when no category rule covers the line). Taxed entries carry their rule name and
    tax type (``vat``, ``gst``, ``hst``, ``pst``, ``qst``)."""
    place = res.place
    assert place is not None
    charge = reverse_charge(place.country, line.tax_ids) if line.tax_ids else _NO_REVERSE_CHARGE
    words = [res.how, *res.details, *([charge.detail] if charge.detail else []),
             *([line.customer_detail] if line.customer_detail else [])]
    detail = "; ".join(words)
    exempt = line.exemption is not None and settings.exemption_management and line.exemption.exempt
    entries: list[object] = []
    for j, level in zip(res.rows, place.levels, strict=True):
        is_reg = not registered.isdisjoint(level.covered_by)
        category = level.category_on(line.category, on)
        row = partial(_untaxed_row, j, level.tax_type, is_reg, detail)

        if charge.applies:
            entries.append(row(charge.rule_name, "reverse_charge"))
        elif not is_reg and not include_unregistered:
            covers = " or ".join(sorted(level.covered_by))
            entries.append(row(f"Seller not registered for {j.name} {level.tax_name} ({covers}): no tax collected",
                               "unregistered"))
        elif exempt:
            entries.append(row("Exempt: customer exemption override", "exemption_certificate"))
        elif category is not None and category.rate is None:
            entries.append(row(f"{level.tax_name} exempt: {category.name}", "non_taxable_product",
                               f"; {category.source}"))
        elif category is not None:
            entries.append((replace(j, rate=category.rate), is_reg, f"{detail}; {category.source}",
                            f"{level.tax_name} {category.name}", level.tax_type))
        else:
            entries.append((j, is_reg, f"{detail}; {j.source}", f"{level.tax_name} standard rate", level.tax_type))
    return _INTERNATIONAL_RULE, tuple(entries)


def _untaxed_row(j: JurisdictionRate, tax_type: str, is_reg: bool, detail: str, name: str, reason: ExemptReason,
                 more: str = "") -> TaxRow:
    """A row of a line outside the US that taxes nothing (:func:`_international_plan`)."""
    return TaxRow(j.code, j.name, j.type, _ZERO, 0, 0, is_reg, name, detail + more, tax_type, exempt_reason=reason)
