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
from levy.domain.money import (
    MAX_AMOUNT,
    allocate,
    currency_exponent,
    mul_round,
    range_errors,
    round_half_up,
)
from levy.domain.tax.calc_errors import combine_errors, sales_tax_error
from levy.domain.tax.holidays import HolidayMatch, Holidays
from levy.domain.tax.international import ReverseCharge, reverse_charge
from levy.domain.tax.item_rules import (
    NO_ITEM_RULES,
    Band,
    DeliveryShare,
    ItemRules,
    banded,
    delivery_counted,
    delivery_shares,
)
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
from levy.domain.tax.rate_table import JurisdictionRate, RateTable, Resolution
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


def _registered_codes(registrations: Iterable[Registration], on: date) -> frozenset[str]:
    """The jurisdiction codes of the registrations in force on ``on``."""
    return frozenset(r.jurisdiction for r in registrations if r.covers(on))


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


# One part of the exact tax of a tax-inclusive line as a function of its price before tax P
# (:func:`_pieces`): (r, k, d, w) taxes r x clamp(k x P - d, 0, w) (w None: no upper end).
Piece = tuple[Fraction, Fraction, Fraction, Fraction | None]


def _pieces(terms: Sequence[Terms], js: Sequence[JurisdictionRate], quantity: Decimal,
            bands: Sequence[Band] = (), factors: Sequence[Fraction] | None = None) -> list[Piece]:
    """The exact tax of each row as a function of P, what :func:`_apply`, :func:`banded` and a delivery
    rule (``factors``: the share of each row's base it keeps taxed) do to a price before tax, unrounded.
    A row taxes rate x (share x P - deduction); a band without a rate caps that base to the band's part
    (``band_from`` x Q up to ``band_to`` x Q, Q the quantity, at least 1: the band is per article), a band
    with a rate adds its rate on that part."""
    q = max(Fraction(quantity), Fraction(1))
    out: list[Piece] = []
    for i, ((rate, percent, deduction, reason), j) in enumerate(zip(terms, js)):
        f = factors[i] if factors is not None else 1
        if reason is not None or not f:
            continue
        k = Fraction(percent) if percent is not None else Fraction(1)
        d = Fraction(deduction or 0)
        main: Piece = (Fraction(rate) * f, k, d, None)
        for band in bands:
            if j.type not in band.types:
                continue
            lo = d + band.band_from * q
            width = (band.band_to - band.band_from) * q if band.band_to is not None else None
            if band.rate is None:
                main = (main[0], k, lo, width)
            else:
                out.append((Fraction(band.rate) * f, k, lo, width))
        out.append(main)
    return [p for p in out if p[0] and p[1]]


def _pre_tax(pieces: Sequence[Piece], amount: int) -> int:
    """The price before tax P of a tax-inclusive ``amount``: P + the pieces' exact tax = ``amount``,
    ROUND_HALF_UP to the minor unit. P + tax(P) is continuous, piecewise linear and increasing
    (each piece bends where its base starts, k x P = d, and where it stops, k x P = d + w), so P is
    found exactly on the segment between the bends where it reaches ``amount``."""
    def at(p: Fraction) -> Fraction:
        return p + sum((r * max(Fraction(0), min(k * p - d, w) if w is not None else k * p - d)
                        for r, k, d, w in pieces), Fraction(0))

    bends = sorted({x for _, k, d, w in pieces for x in ((d / k,) if w is None else (d / k, (d + w) / k)) if x > 0})
    lo = reached = Fraction(0)  # at(0) = 0: no piece taxes a price of 0
    target = Fraction(amount)
    for bend in bends:
        there = at(bend)
        if there >= target:
            p = lo + (target - reached) * (bend - lo) / (there - reached)
            break
        lo, reached = bend, there
    else:
        p = lo + (target - reached) / (at(lo + 1) - reached)
    return (2 * p.numerator + p.denominator) // (2 * p.denominator)


def _inclusive_terms(rule: Rule, js: Sequence[JurisdictionRate], amount: int, quantity: Decimal,
                     counted: int = 0, bands: Sequence[Band] = (),
                     factors: Sequence[Fraction] | None = None) -> tuple[int, list[Terms]]:
    """A tax-inclusive ``amount``'s price before tax and the terms of its rows (docs/tax-engine.md,
    "Tax-inclusive prices", steps 1 and 2): the terms are decided on the amount as sent and P is
    :func:`_pre_tax`; when P decides a per-item threshold otherwise (an item dropping under an
    exemption limit once its tax is taken out) and those terms give a P that decides them the same
    way, they are kept; else the first (the amount as sent decides: taxed)."""
    terms = [_terms(rule, j, amount, quantity, counted) for j in js]
    price = _pre_tax(_pieces(terms, js, quantity, bands, factors), amount)
    if price != amount:
        again = [_terms(rule, j, price, quantity, counted) for j in js]
        if again != terms:
            price2 = _pre_tax(_pieces(again, js, quantity, bands, factors), amount)
            if [_terms(rule, j, price2, quantity, counted) for j in js] == again:
                terms, price = again, price2
    return price, terms


def _place_cents(rows: list[TaxRow], missing: int) -> None:
    """Step 4: the cents by which ``rows``' taxes miss the line's tax (at most about one per row) go one
    per row to the rows whose rate x base lost most in the rounding (taken back, when the rows are
    over, from the rows that gained most), ties to the earlier row. In place."""
    if not missing:
        return
    step = 1 if missing > 0 else -1
    lost = sorted((-step * (Fraction(r.tax_rate) * r.taxable_base - r.tax_amount), i) for i, r in enumerate(rows)
                  if r.taxable_base and r.tax_rate and (step > 0 or r.tax_amount > 0))
    for n in range(abs(missing)):
        i = lost[n % len(lost)][1]
        rows[i] = replace(rows[i], tax_amount=rows[i].tax_amount + step)


def _inclusive(rule: Rule, js: Sequence[JurisdictionRate], amount: int,
               quantity: Decimal) -> tuple[int, list[tuple[int, Decimal, int, str | None]]]:
    """A tax-inclusive ``amount`` (not negative) of plain rows (no bands, no delivery rule) split into
    its price before tax and the rows' (base, rate, tax, reason): price + the rows' taxes = ``amount``
    exactly (:func:`_inclusive_split` without the rows' names)."""
    price, terms = _inclusive_terms(rule, js, amount, quantity)
    rows = [TaxRow(j.code, j.name, j.type, rate, base, tax, True, rule.name, "", exempt_reason=reason)
            for j, (base, rate, tax, reason) in zip(js, (_apply(t, price) for t in terms))]
    _place_cents(rows, amount - price - sum(r.tax_amount for r in rows))
    return price, [(r.taxable_base, r.tax_rate, r.tax_amount, r.exempt_reason) for r in rows]


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

    # Item rules: delivery lines are looked at only when the calculation has one.
    items = item_rules or NO_ITEM_RULES
    band_states = items.band_states
    states: list[str | None] = []
    counted: list[int] = []  # each line's share of delivery, worked out for the first threshold that counts it
    kept: dict[int, tuple[tuple[Rule | None, tuple[object, ...]], int, int, tuple[Band, ...], int]] = {}
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
        if res.place is not None:  # outside the US
            plan = _international_plan(line, res, registered, settings, inp.include_unregistered, on)
        else:
            holiday = holidays.find(res.state, line.category, net, line.quantity, on) if holidays is not None else None
            plan = _line_plan(line, res, rules, registered, settings, inp.include_unregistered, on,
                              how.detail if how is not None else "", holiday)
        bands = items.bands_for(res.state, line.category, on) if res.state in band_states else ()
        extra = 0
        if has_charges and plan[0] is not None and plan[0].threshold_counts == "price_and_delivery":
            counted = counted or delivery_counted(
                inp.lines, states, [max(0, a - o - s) for a, o, s in zip(amounts, own, shares)], items)
            extra = counted[idx]
        if line.inclusive:
            # Amounts before tax: the price (net) and the amount before discounts less the tax it includes.
            if has_charges and items.may_be_charge(line.category):  # a delivery rule may reshape it (below)
                kept[idx] = (plan, gross, net, bands, extra)
            rows, tax, before, net = _inclusive_line_rows(plan, line.quantity, gross, net, bands, extra)
            amount -= before
        else:
            rows, tax, before = _line_rows(plan, line.quantity, gross, net, bands, extra)
        discounts = _discount_results(line, share, max(0, before - tax))
        checks = tuple(t.online for t in line.tax_ids if t.online is not None) if line.tax_ids else ()
        results.append(LineResult(line.id, tax, before, rows, discounts, amount, net, resolution=res.level,
                                  sourcing=how.kind if how is not None else "", inclusive=line.inclusive,
                                  vat_checks=checks))
        total += tax
    if has_charges:
        for idx, delivery in delivery_shares(inp.lines, states, results, items, on):
            line, was = inp.lines[idx], results[idx]
            if line.inclusive:  # split again, the delivery rule shaping the price before tax too
                plan, gross, paid, bands, extra = kept[idx]
                rows, tax, before, price = _inclusive_line_rows(plan, line.quantity, gross, paid, bands, extra, delivery)
                was = replace(was, amount=amounts[idx] - before, taxable_amount=price)
            else:
                rows = tuple(delivery.reshape(r) for r in was.taxes)
                tax = sum(r.tax_amount for r in rows)
                before = sum(r.tax_amount_before_discounts for r in rows)
            total += tax - was.tax_amount
            results[idx] = replace(was, taxes=rows, tax_amount=tax, tax_amount_before_discounts=before,
                                   discounts=_discount_results(line, shares[idx], max(0, before - tax)))
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
    (jurisdiction, is_registered, detail) of a row to tax, worked out for every line."""
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


def _inclusive_split(
    rule: Rule, taxed: Sequence[tuple[JurisdictionRate, bool, str] | tuple[JurisdictionRate, bool, str, str, str]],
    amount: int, quantity: Decimal,
    bands: tuple[Band, ...] = (), counted: int = 0, share: DeliveryShare | None = None,
) -> tuple[int, list[TaxRow], list[int]]:
    """A tax-inclusive ``amount`` (not negative) split into its price before tax P, the rows of
    ``taxed`` (plan entries) and how many rows each entry has (a band adds one). The rows are those
    of a tax-exclusive line of price P (the taxability rule, the single-article ``bands``, the
    delivery rule's ``share``), their cents placed so that P + the rows' taxes = ``amount`` exactly
    (docs/tax-engine.md, "Tax-inclusive prices")."""
    js = [e[0] for e in taxed]
    factors = [share.factor(j.code) for j in js] if share is not None else None
    price, terms = _inclusive_terms(rule, js, amount, quantity, counted, bands, factors)
    counts = counted > 0 and rule.threshold_counts == "price_and_delivery"
    rows: list[TaxRow] = []
    sizes: list[int] = []
    for (j, is_reg, detail, *named), t in zip(taxed, terms):
        name, tax_type = named if named else (rule.name, "sales_tax")
        base, rate, tax, reason = _apply(t, price)
        if counts:
            detail = f"{detail}; the threshold compares the price plus the item's share of delivery ({counted} of delivery)"
        row = TaxRow(j.code, j.name, j.type, rate, base, tax, is_reg, name, detail, tax_type, reason,
                     tax, j.sourcing)
        shaped = banded(bands, row, base, quantity) if bands else [row]
        rows.extend(shaped if share is None else [share.reshape(r) for r in shaped])
        sizes.append(len(shaped))
    _place_cents(rows, amount - price - sum(r.tax_amount for r in rows))
    return price, rows, sizes


def _inclusive_line_rows(
    plan: tuple[Rule | None, tuple[object, ...]], quantity: Decimal, gross: int, net: int,
    bands: tuple[Band, ...] = (), counted: int = 0, share: DeliveryShare | None = None,
) -> tuple[tuple[TaxRow, ...], int, int, int]:
    """:func:`_line_rows` of a tax-inclusive line (:func:`_inclusive_split`): its rows, tax, tax before
    discounts, and its price before tax (the line's ``taxable_amount``; + its tax = ``net``)."""
    rule, entries = plan
    taxed = [e for e in entries if type(e) is not TaxRow]
    finished = [e if share is None else share.reshape(e) for e in entries if type(e) is TaxRow]
    if not taxed:
        return tuple(finished), 0, 0, net  # type: ignore[arg-type]
    assert rule is not None
    price, split, sizes = _inclusive_split(rule, taxed, net, quantity, bands, counted, share)  # type: ignore[arg-type]
    if gross != net:  # the same split of the amount before discounts, row by row (a band row by its name)
        before = {(r.jurisdiction_code, r.rule_name): r.tax_amount
                  for r in _inclusive_split(rule, taxed, gross, quantity, bands, counted, share)[1]}  # type: ignore[arg-type]
        split = [replace(r, tax_amount_before_discounts=before.get((r.jurisdiction_code, r.rule_name), r.tax_amount))
                 for r in split]
    # In the plan's order: a finished row where it was, a taxed entry's rows (with a band's) in its place.
    rows: list[TaxRow] = []
    done, size, at = iter(finished), iter(sizes), 0
    for entry in entries:
        if type(entry) is TaxRow:
            rows.append(next(done))  # type: ignore[arg-type]
            continue
        n = next(size)
        rows.extend(split[at:at + n])
        at += n
    tax = sum(r.tax_amount for r in split)
    return tuple(rows), tax, sum(r.tax_amount_before_discounts for r in split), price


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
    """:func:`_line_plan` of a line outside the US (:mod:`levy.domain.tax.international`):
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
