"""The tax engine: pure, line by line, jurisdiction by jurisdiction.

See docs/tax-engine.md for the method (amounts, discounts, rounding, rules).
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import UTC, date, datetime
from decimal import Decimal

from levy.domain.errors import LevyError, ValidationFailed
from levy.domain.memo import BoundedMemo
from levy.domain.money import allocate, currency_exponent, mul_round, round_half_up
from levy.domain.tax.model import (
    CalculationInput,
    CalculationResult,
    CustomerExemption,
    DiscountResult,
    ExemptionSettings,
    LineInput,
    LineResult,
    Registration,
    TaxRow,
)
from levy.domain.tax.rates import JurisdictionRate, RateTable, Resolution
from levy.domain.tax.taxability import Rule, Taxability

INVALID_SALES_TAX_LINE = "invalid_sales_tax_line"
SALES_TAX_DETAIL = "Validation failed: invalid_sales_tax_line"
MULTIPLE_VALIDATION = "Validation failed: multiple errors"
MULTIPLE_PROCESSING = "Processing failed: multiple errors"
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


def combine_errors(errors: list[LevyError]) -> LevyError:
    """Combine calculation errors as section 4.7 rule 5 says.

    Only collected-tax violations -> ``Validation failed: invalid_sales_tax_line``;
    several validation errors of other kinds too -> ``Validation failed: multiple
    errors``; any non-validation (calculation) error among several ->
    ``Processing failed: multiple errors``. A single other error is returned as is.
    """
    if not errors:
        raise ValueError("no errors to combine")
    items = [i for e in errors for i in e.items]
    sales_tax = [i for i in items if i.type == INVALID_SALES_TAX_LINE]
    if len(items) == len(sales_tax):
        return ValidationFailed(SALES_TAX_DETAIL, items=items)
    if len(items) == 1:
        return errors[0]
    if any(not isinstance(e, ValidationFailed) for e in errors):
        return ValidationFailed(MULTIPLE_PROCESSING, items=items)
    return ValidationFailed(MULTIPLE_VALIDATION, items=items)


def sales_tax_error(pointer: str, why: str) -> ValidationFailed:
    return ValidationFailed(SALES_TAX_DETAIL, pointer=pointer or None, type=INVALID_SALES_TAX_LINE, meta={"rule": why})


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


def _taxed(rule: Rule, j: JurisdictionRate, amount: int, quantity: Decimal) -> tuple[int, Decimal, int, str | None]:
    """Apply a taxability rule to one jurisdiction row for a (non-negative) amount:
    (taxable base, rate, tax, exempt reason or None). The rule's name is the row's."""
    treatment = rule.treatment
    rate = j.rate
    if j.type == "state":
        if treatment == "exempt":
            return 0, _ZERO, 0, "non_taxable_product"
        if treatment == "reduced" and rule.rate is not None:
            rate = rule.rate
    else:
        if j.statewide and rule.local_rate is not None:
            rate = rule.local_rate
            return amount, rate, mul_round(amount, rate) if amount and rate else 0, None
        if rule.local == "exempt" or (rule.local == "follow" and treatment == "exempt"):
            return 0, _ZERO, 0, "non_taxable_product"
        if rule.local == "taxable":
            return amount, rate, mul_round(amount, rate) if amount and rate else 0, None
    if treatment == "percentage" and rule.percent is not None:
        base = mul_round(amount, rule.percent)
        return base, rate, mul_round(base, rate) if base and rate else 0, None
    if treatment == "threshold" and rule.threshold is not None:
        if rule.threshold_mode == "exempt_up_to":
            exempt_part = round_half_up(rule.threshold * quantity)
            base = max(0, amount - exempt_part)
            return base, rate, mul_round(base, rate) if base and rate else 0, None if base else "non_taxable_product"
        per_item = amount / quantity if quantity else Decimal(amount)
        if per_item < rule.threshold:
            return 0, _ZERO, 0, "non_taxable_product"
    return amount, rate, mul_round(amount, rate) if amount and rate else 0, None


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


def _validate(inp: CalculationInput, rates: RateTable, on: date) -> tuple[list[LevyError], list[Resolution | None]]:
    errors: list[LevyError] = []
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
    return errors, resolutions


def calculate(
    inp: CalculationInput,
    rates: RateTable,
    rules: Taxability,
    registrations: Iterable[Registration] = (),
    settings: ExemptionSettings | None = None,
    *,
    prior_errors: Iterable[LevyError] = (),
) -> CalculationResult:
    """Tax due for ``inp``, by line and jurisdiction.

    ``prior_errors`` are validation errors the adapter already found while
    parsing; they are combined with the engine's own (section 4.7 rule 5).
    Raises ValidationFailed (422) for input problems.
    """
    settings = settings or ExemptionSettings()
    errors: list[LevyError] = list(prior_errors)
    try:
        currency_exponent(inp.currency)
    except LevyError as e:
        errors.append(e)
    on = _on(inp.transaction_date)
    more, resolutions = _validate(inp, rates, on)
    errors.extend(more)
    if errors:
        raise combine_errors(errors)
    registered = _registered_codes(registrations, on)

    # Amounts, own discounts, and the transaction discount's allocation.
    amounts = [mul_round(line.unit_price, line.quantity) for line in inp.lines]
    own = [sum(d.amount for d in line.discounts) + line.discount_amount for line in inp.lines]
    weights = [0 if line.is_sales_tax else max(0, a - o) for line, a, o in zip(inp.lines, amounts, own)]
    if inp.discount_amount and sum(weights):
        shares = allocate(min(inp.discount_amount, sum(weights)), weights)
    else:
        shares = [0] * len(inp.lines)

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
        plan = _line_plan(line, res, rules, registered, settings, inp.include_unregistered, on)
        rows, tax, before = _line_rows(plan, line.quantity, gross, net)
        discounts = _discount_results(line, share, max(0, before - tax))
        results.append(LineResult(line.id, tax, before, rows, discounts, amount, net, resolution=res.level))
        total += tax
    return CalculationResult(total, inp.currency, tuple(results))


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


# What a line's rows are, amounts aside, for the things that decide them: the
# resolution and the rules (by identity: both come from immutable tables, and
# the entry keeps them, so an id is never reused while its entry lives), what is
# sold, the customer's exemption (by identity, kept the same way), the settings,
# the registrations on the day and the customer note. Every line selling the
# same thing to the same place under the same registrations shares it; only the
# amounts are worked out per line. Bounded like the tables' own memos.
_PLANS: BoundedMemo[tuple[object, ...], tuple[object, object, object, Rule | None, tuple[object, ...]]] = BoundedMemo(20_000)


def _line_plan(
    line: LineInput,
    res: Resolution,
    rules: Taxability,
    registered: frozenset[str],
    settings: ExemptionSettings,
    include_unregistered: bool,
    on: date,
) -> tuple[Rule | None, tuple[object, ...]]:
    """(rule, entries): each entry a finished TaxRow (nothing taxed) or the
    (jurisdiction, is_registered, detail) of a row to tax."""
    exemption = line.exemption
    key = (id(res), id(rules), line.category, line.attributes, id(exemption), settings, registered,
           include_unregistered, on, line.customer_detail)
    hit = _PLANS.get(key)
    if hit is not None and hit[0] is res and hit[1] is rules and hit[2] is exemption:
        return hit[3], hit[4]
    extra = [line.customer_detail] if line.customer_detail else []
    if not res.supported:
        detail = "; ".join([res.how, *res.details, *extra])
        plan: tuple[Rule | None, tuple[object, ...]] = (None, (
            TaxRow(res.country, res.country, "state", _ZERO, 0, 0, False, "Country not supported yet", detail,
                   exempt_reason="no_tax"),
        ))
        _PLANS.put(key, (res, rules, exemption, *plan))
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
    state_detail = "; ".join([res.how, *res.details, *extra])
    local_detail = "; ".join([res.how, *extra])
    entries: list[object] = []
    for j in res.rows:
        is_reg = state_registered if j.statewide else (j.code in registered or state_registered)
        detail = state_detail if j.type == "state" else local_detail
        if exemption_name is not None:
            entries.append(TaxRow(j.code, j.name, j.type, _ZERO, 0, 0, is_reg, exemption_name, detail,
                                  exempt_reason="exemption_certificate"))
        elif j.type == "state" and j.rate == 0 and not rule.rate and not rule.local_rate:
            entries.append(TaxRow(j.code, j.name, j.type, _ZERO, 0, 0, is_reg, _no_tax_name(j), detail,
                                  exempt_reason="no_tax"))
        elif not is_reg and not include_unregistered:
            entries.append(TaxRow(j.code, j.name, j.type, _ZERO, 0, 0, False,
                                  f"Seller not registered in {_state_name(j)}: no tax collected", detail,
                                  exempt_reason="unregistered"))
        else:
            entries.append((j, is_reg, detail))
    plan = (rule, tuple(entries))
    _PLANS.put(key, (res, rules, exemption, *plan))
    return plan


def _line_rows(
    plan: tuple[Rule | None, tuple[object, ...]], quantity: Decimal, gross: int, net: int
) -> tuple[tuple[TaxRow, ...], int, int]:
    """A line's rows, its plan (:func:`_line_plan`) applied to its amounts, with their
    tax and tax before discounts summed (the plan's finished rows carry none)."""
    rule, entries = plan
    rows: list[TaxRow] = []
    total = total_before = 0
    for entry in entries:
        if type(entry) is TaxRow:
            rows.append(entry)
            continue
        j, is_reg, detail = entry  # type: ignore[misc]
        assert rule is not None
        base, rate, tax, reason = _taxed(rule, j, net, quantity)
        before = _taxed(rule, j, gross, quantity)[2] if gross != net else tax
        rows.append(TaxRow(j.code, j.name, j.type, rate, base, tax, is_reg, rule.name, detail, "sales_tax", reason,
                           before))
        total += tax
        total_before += before
    return tuple(rows), total, total_before


def _no_tax_name(j: JurisdictionRate) -> str:
    return f"{j.name} has no state sales tax"


def _state_name(j: JurisdictionRate) -> str:
    return j.name if j.type == "state" else f"{j.state} ({j.name})"
