"""Collected-tax (``SALES_TAX``) lines on transactions: spec section 4.7.

Pure functions over :class:`TransactionLine` (an engine :class:`LineInput`
plus what only transactions need). :func:`split_lines` separates goods lines
(passed to the tax engine) from collected-tax lines (never taxed; their
amount is added to the transaction's ``tax_amount``), validates every
collected line with an error that names the line and the rule, and nets
negative marked-product lines for the sources that do so (data:
``levy/data/customer_sources.json``, fields ``nets_marked_lines``,
``nets_credit_notes``, ``negative_marked_only_document``, parsed by
:func:`parse_netting_policies` and passed in).

See docs/transactions.md.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from levy.domain.errors import LevyError, ValidationFailed
from levy.domain.money import round_half_up
from levy.domain.tax.calc_errors import INVALID_SALES_TAX_LINE
from levy.domain.tax.model import SALES_TAX_CODE, LineInput

NegativeMarkedOnly = Literal["not_recorded", "store_off_returns"]
Disposition = Literal["record", "not_recorded", "store_off_returns"]

# Rule names put in ``meta.rule`` of each error (stable, for clients and tests).
RULE_ONLY_CODE = "only_code"
RULE_ATTRIBUTE_SUFFIX = "no_attribute_suffix"
RULE_DISCOUNT = "no_discount"
RULE_NEGATIVE = "non_negative_amount"
RULE_MARKED_NEGATIVE = "marked_line_non_negative_after_discounts"
RULE_DUPLICATE_ID = "unique_id"


@dataclass(frozen=True, slots=True)
class TransactionLine:
    """One request line after tax-code resolution.

    ``line`` is the engine input the wiring already builds for calculations
    (id, quantity, unit_price, category/attributes, ``is_sales_tax``,
    ``from_marked_product``, discounts, address, pointer...). ``index`` is the
    line's position in the request's ``line_items``; ``tax_codes`` are the
    codes in effect for the line as given (the line's own
    ``product.tax_attributes`` when sent, else the product's codes), used to
    name which part of rule 1 a collected line breaks;
    ``merged_into_customer_id`` is set when the line's ``customer.preset``
    resolved to a customer that was merged into another (spec 3.2).
    """

    line: LineInput
    index: int
    tax_codes: tuple[str, ...] = ()
    merged_into_customer_id: str | None = None

    @property
    def id(self) -> str:
        return self.line.id

    @property
    def pointer(self) -> str:
        return self.line.pointer or f"/line_items/{self.index}"

    @property
    def is_sales_tax(self) -> bool:
        return self.line.is_sales_tax

    @property
    def from_marked_product(self) -> bool:
        return self.line.is_sales_tax and self.line.from_marked_product

    @property
    def amount(self) -> int:
        """unit_price x quantity, rounded half up to minor units."""
        return round_half_up(self.line.quantity * self.line.unit_price)

    @property
    def own_discounts(self) -> int:
        return sum(d.amount for d in self.line.discounts) + self.line.discount_amount

    @property
    def has_discount(self) -> bool:
        ln = self.line
        return bool(any(d.amount for d in ln.discounts) or ln.discount_amount or ln.vendor_discount_amount)

    @property
    def collected_amount(self) -> int:
        """Tax this collected line reports.

        Plain ``SALES_TAX`` line: unit_price x quantity rounded half up. Line of
        a marked product: that amount less the line's own discounts
        (``discounts`` and ``discount_amount``; a vendor-funded discount does
        not change what was collected), rounded half up once.
        """
        if self.from_marked_product:
            return round_half_up(self.line.quantity * self.line.unit_price - self.own_discounts)
        return self.amount

    def describe(self) -> str:
        return f"line '{self.id}' (line_items[{self.index}])"


def effective_codes(
    line_tax_attributes: Sequence[str] | None, product_tax_codes: Sequence[str] | None
) -> tuple[tuple[str, ...], bool]:
    """The codes a line uses and whether it comes from a marked product (4.7 marked rule 1).

    Attributes sent on the line take precedence over the product's codes, so
    a line of a marked product that sends its own attributes is an ordinary
    line (or a plain ``SALES_TAX`` line if it sends exactly that). Returns
    ``(codes, from_marked_product)``. The product's codes must be its codes
    *now*, when the transaction is received (marked rule 4): stored lines
    keep what was decided then.
    """
    if line_tax_attributes:
        return tuple(line_tax_attributes), False
    codes = tuple(product_tax_codes or ())
    return codes, codes == (SALES_TAX_CODE,)


# -- source data -----------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class NettingPolicy:
    source: str
    nets_marked_lines: bool
    nets_credit_notes: bool
    negative_marked_only_document: NegativeMarkedOnly | None


#: Per source, its marked-line netting policy.
NettingPolicies = Mapping[str, NettingPolicy]


def parse_netting_policies(doc: Mapping[str, Any]) -> dict[str, NettingPolicy]:
    """Per source, its marked-line netting policy, from ``customer_sources.json`` (its parsed document)."""
    out: dict[str, NettingPolicy] = {}
    for e in doc["sources"]:
        nets = bool(e["nets_marked_lines"])
        neg = e.get("negative_marked_only_document")
        if nets and neg not in ("not_recorded", "store_off_returns"):
            raise ValueError(f"source {e['source']!r} nets marked lines but has no negative_marked_only_document")
        if not nets and neg is not None:
            raise ValueError(f"source {e['source']!r} does not net marked lines but sets negative_marked_only_document")
        out[e["source"]] = NettingPolicy(e["source"], nets, bool(e["nets_credit_notes"]), neg)
    return out


def netting_policy(policies: NettingPolicies, source: str) -> NettingPolicy:
    """Policy of ``source`` in ``policies``; an unknown source nets nothing (like ``native``)."""
    return policies.get(source) or NettingPolicy(source, False, False, None)


def nets_marked_lines(policies: NettingPolicies, source: str, transaction_type: str) -> bool:
    """Whether a document of ``source`` and ``transaction_type`` nets negative marked lines."""
    p = netting_policy(policies, source)
    if not p.nets_marked_lines:
        return False
    return transaction_type != "credit" or p.nets_credit_notes


# -- validation -------------------------------------------------------------------


def sales_tax_line_error(tl: TransactionLine, rule: str, why: str) -> ValidationFailed:
    """422 ``validation_error`` naming the line and the rule (4.7 rule 5, transactions)."""
    return ValidationFailed(
        f"{tl.describe()} is a collected-tax (SALES_TAX) line: {why}",
        pointer=tl.pointer,
        type=INVALID_SALES_TAX_LINE,
        meta={"rule": rule, "line_id": tl.id, "index": tl.index},
        title="Invalid collected-tax line",
    )


def _rule1(tl: TransactionLine) -> tuple[str, str] | None:
    codes = tl.tax_codes
    suffixed = [c for c in codes if c != SALES_TAX_CODE and c.split(".", 1)[0] == SALES_TAX_CODE]
    if suffixed:
        return RULE_ATTRIBUTE_SUFFIX, (
            f"'{suffixed[0]}' is not allowed: SALES_TAX takes no attribute suffix; send exactly ['SALES_TAX']"
        )
    if len(codes) > 1 or (tl.line.sales_tax_violation and not codes):
        others = [c for c in codes if c != SALES_TAX_CODE]
        shown = f" (also sent: {', '.join(others)})" if others else ""
        return RULE_ONLY_CODE, f"SALES_TAX must be its only tax code, with no other code beside it{shown}"
    return None


def validate_sales_tax_lines(
    lines: Sequence[TransactionLine], *, allow_negative_marked: bool = False
) -> list[ValidationFailed]:
    """Every rule of 4.7 for the collected lines of one transaction; all errors found.

    ``allow_negative_marked``: a marked line whose amount after its discounts
    is negative is accepted (it will be netted: see :func:`net_marked_lines`).
    """
    errors: list[ValidationFailed] = []
    counts: dict[str, int] = {}
    for tl in lines:
        counts[tl.id] = counts.get(tl.id, 0) + 1
    for tl in lines:
        if not tl.is_sales_tax:
            continue
        r1 = _rule1(tl)
        if r1 is not None:
            errors.append(sales_tax_line_error(tl, *r1))
        if tl.from_marked_product:
            if tl.collected_amount < 0 and not allow_negative_marked:
                errors.append(sales_tax_line_error(
                    tl, RULE_MARKED_NEGATIVE,
                    f"its amount after its own discounts is {tl.collected_amount}, and it must not be negative "
                    "(a line of a product marked SALES_TAX may carry discounts, but not more than its amount)",
                ))
        else:
            if tl.has_discount:
                errors.append(sales_tax_line_error(
                    tl, RULE_DISCOUNT,
                    "a collected-tax line cannot carry a discount (discounts, discount_amount and "
                    "vendor_discount_amount must be absent or 0)",
                ))
            if tl.line.unit_price < 0 or tl.amount < 0:
                errors.append(sales_tax_line_error(
                    tl, RULE_NEGATIVE,
                    f"its amount ({tl.amount}) must not be negative; refunds use a credit transaction with "
                    "positive amounts, and several negative corrections must be netted into one line",
                ))
        if counts[tl.id] > 1:
            errors.append(sales_tax_line_error(
                tl, RULE_DUPLICATE_ID, f"its id '{tl.id}' is used by another line of the transaction; it must be unique",
            ))
    return errors


def merged_customer_errors(lines: Sequence[TransactionLine], transaction_type: str) -> list[ValidationFailed]:
    """Errors for lines whose customer preset resolved to a merged customer, on a new sale."""
    if transaction_type != "sale":
        return []
    return [
        ValidationFailed(
            f"{tl.describe()}: its customer preset resolves to a customer merged into "
            f"'{tl.merged_into_customer_id}'; a new sale cannot use a merged customer, use the surviving one",
            pointer=f"{tl.pointer}/customer/preset",
            meta={"line_id": tl.id, "index": tl.index, "merged_into_customer_id": tl.merged_into_customer_id},
        )
        for tl in lines
        if tl.merged_into_customer_id
    ]


def check_no_merged_customers(lines: Sequence[TransactionLine], transaction_type: str) -> None:
    """A line whose customer preset resolved to a merged customer cannot be part of a new sale (422)."""
    errors: list[LevyError] = list(merged_customer_errors(lines, transaction_type))
    if errors:
        raise ValidationFailed.many(errors)


# -- netting and splitting ---------------------------------------------------------


@dataclass(frozen=True, slots=True)
class NetResult:
    """Marked lines after netting (4.7 marked rule 3).

    ``lines``: the marked lines kept (unchanged when none was negative; else
    all of them become one collected line worth ``amount``). ``reduction``:
    how much a negative net lowers the document's tax (0 or more).
    """

    lines: tuple[TransactionLine, ...]
    amount: int
    reduction: int
    netted: bool


def net_marked_lines(marked: Sequence[TransactionLine]) -> NetResult:
    """Net the marked lines of one document when any of them is negative.

    No negative line: nothing is netted. Otherwise the net of all marked lines
    is kept as one line (the first marked line stands for it) when 0 or more;
    a negative net keeps no line and becomes a reduction of the document's tax.
    """
    amounts = [tl.collected_amount for tl in marked]
    total = sum(amounts)
    if not any(a < 0 for a in amounts):
        return NetResult(tuple(marked), total, 0, False)
    if total >= 0:
        return NetResult((marked[0],), total, 0, True)
    return NetResult((), 0, -total, True)


@dataclass(frozen=True, slots=True)
class LineSplit:
    """Lines of one transaction after the collected-tax rules.

    ``goods``: the lines to store and to pass to the tax engine (in request
    order). ``collected``: collected-tax lines counted (never stored as lines
    nor returned). ``collected_amount``: their total (None when the request
    had no collected-tax line at all: the tax is then not provided by lines).
    ``reduction``: a negative marked net lowering the document's tax.
    ``disposition``: ``record``, or for a document whose only lines are
    marked lines netting below 0, the source's ``negative_marked_only_document``.
    """

    goods: tuple[TransactionLine, ...]
    collected: tuple[TransactionLine, ...]
    collected_amount: int | None
    reduction: int = 0
    disposition: Disposition = "record"
    netted: bool = False

    @property
    def has_collected(self) -> bool:
        return self.collected_amount is not None

    @property
    def engine_lines(self) -> tuple[LineInput, ...]:
        return tuple(tl.line for tl in self.goods)

    @property
    def only_collected(self) -> bool:
        """Every line sent was a collected-tax line (and there was at least one)."""
        return not self.goods and self.collected_amount is not None


def split_lines(
    lines: Sequence[TransactionLine],
    *,
    source: str = "native",
    transaction_type: str = "sale",
    has_parent: bool = False,
    netting: NettingPolicies,
) -> LineSplit:
    """Separate goods lines from collected-tax lines and apply every 4.7 rule. ``netting``: the
    sources' netting policies (reference data).

    Raises one :class:`ValidationFailed` holding every violation found.
    """
    nets = nets_marked_lines(netting, source, transaction_type)
    errors = validate_sales_tax_lines(lines, allow_negative_marked=nets)
    if errors:
        raise ValidationFailed.many(list(errors))
    goods = tuple(tl for tl in lines if not tl.is_sales_tax)
    plain = tuple(tl for tl in lines if tl.is_sales_tax and not tl.from_marked_product)
    marked = tuple(tl for tl in lines if tl.from_marked_product)
    if not plain and not marked:
        return LineSplit(goods, (), None)
    net = net_marked_lines(marked) if nets else NetResult(marked, sum(t.collected_amount for t in marked), 0, False)
    amount = sum(t.collected_amount for t in plain) + net.amount
    disposition: Disposition = "record"
    if net.reduction and not goods and not plain and (transaction_type == "sale" or not has_parent):
        disposition = netting_policy(netting, source).negative_marked_only_document or "record"
    return LineSplit(goods, plain + net.lines, amount, net.reduction, disposition, net.netted)
