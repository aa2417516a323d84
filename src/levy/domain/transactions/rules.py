"""Transactions: the business rules of spec sections 2.8, 3.1, 4.6 and 4.7 (pure, no I/O).

- Lifecycle (3.1): :func:`check_transition`, :func:`check_lines_editable`.
- Request fields: :func:`validate_type`, :func:`validate_create_status`,
  :func:`validate_source_field`, :func:`check_parent_fields`.
- Lines (4.7): :func:`plan_lines` (collected-tax lines split off and
  validated, marked-line netting, tax-only detection); the details live in
  :mod:`levy.domain.transactions.collected` and
  :mod:`levy.domain.transactions.tax_only`.
- Tax provided or calculated (2.8, 4.6 rule 7, 4.7 "Updating"): :class:`TaxState`
  and :func:`tax_on_create`, :func:`tax_on_lines_update`, :func:`tax_on_amount_update`.
- Updates (4.7 "Updating"): :data:`CREATE_ONLY`, :data:`CALCULATION_FIELDS`,
  :func:`update_field_errors`, :func:`check_amount_changeable`, :func:`check_recorded`.
- Credits (4.6 workflows 3-5): :func:`credit_kind`, :func:`full_credit_lines`,
  :func:`check_full_credit_not_empty`, :func:`check_parent_found`; what credits may reverse
  (the invariant, the remaining-tax rule) is :mod:`levy.domain.transactions.credits`.

``reference_id`` uniqueness within the organization is the database's job
(a unique index; the store turns the violation into 409 with the existing
id in ``meta``). See docs/transactions.md for how the wiring uses all this.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from datetime import UTC, date, datetime, timedelta
from typing import Final, Literal, TypeVar

from levy.domain.customers import CustomerSources, validate_source
from levy.domain.errors import (
    FailedPrecondition,
    LevyError,
    RequiredField,
    ValidationFailed,
)
from levy.domain.money import MAX_AMOUNT, mul_round, out_of_range, range_errors
from levy.domain.periods import check_report_date
from levy.domain.tax.engine import line_amount_errors
from levy.domain.transactions.collected import (
    LineSplit,
    NettingPolicies,
    TransactionLine,
    merged_customer_errors,
    split_lines,
)
from levy.domain.transactions.tax_only import HeldOffReason, is_tax_only

TransactionType = Literal["sale", "credit"]
Status = Literal["draft", "finalized", "filed", "void"]
TaxSource = Literal["provided", "calculated"]

TYPES: Final = ("sale", "credit")
STATUSES: Final = ("draft", "finalized", "filed", "void")
CREATE_STATUSES: Final = ("draft", "finalized")
#: A batch import of history may also create transactions already reported (``filed``).
IMPORT_STATUSES: Final = ("draft", "finalized", "filed")
TERMINAL: Final = frozenset({"filed", "void"})
DEFAULT_SOURCE: Final = "native"

NOT_RECORDED: Final = "not_recorded"
PROVIDED: Final = "provided"
CALCULATED: Final = "calculated"

# Every allowed move (3.1). finalized -> filed only by filing, never through the API.
ALLOWED_MOVES: Final = frozenset(
    {
        ("draft", "finalized"),
        ("draft", "void"),
        ("finalized", "void"),
        ("finalized", "draft"),
        ("finalized", "filed"),
    }
)


class _Unset:
    __slots__ = ()

    def __repr__(self) -> str:  # pragma: no cover
        return "UNSET"


UNSET: Final = _Unset()
"""A field that was not sent (as opposed to sent as ``null``)."""


# -- request fields -------------------------------------------------------------------


def validate_type(value: object, pointer: str = "/type") -> TransactionType:
    """``type`` is required: ``sale`` or ``credit`` (only it marks a credit; amounts stay positive)."""
    if value is None:
        raise RequiredField("type", pointer=pointer, detail="The field 'type' is required: 'sale' or 'credit'.")
    if value not in TYPES:
        raise ValidationFailed(f"type {value!r} is not supported: it must be 'sale' or 'credit'", pointer=pointer)
    return value  # type: ignore[return-value]


def validate_status(value: object, pointer: str = "/status") -> Status:
    if value not in STATUSES:
        raise ValidationFailed(
            f"status {value!r} is not a transaction status: it must be one of {', '.join(STATUSES)}", pointer=pointer
        )
    return value  # type: ignore[return-value]


def validate_create_status(value: object, pointer: str = "/status", *, history: bool = False) -> Status:
    """A transaction is created as ``draft`` or ``finalized`` (required; 3.1); an imported one
    (``history``, POST /transactions/batch) may also be ``filed``."""
    allowed = IMPORT_STATUSES if history else CREATE_STATUSES
    names = " or ".join(f"'{s}'" for s in allowed)
    if value is None:
        raise RequiredField(
            "status", pointer=pointer, detail=f"The field 'status' is required: {names}."
        )
    status = validate_status(value, pointer)
    if status not in allowed:
        raise FailedPrecondition(
            f"a transaction is created as {names}, not '{status}'",
            pointer=pointer,
            meta={"requested_status": status},
        )
    return status


def validate_source_field(value: object, pointer: str = "/source", *, sources: CustomerSources) -> str:
    """Levy extension ``source`` on transactions: one of ``sources``, default ``native``."""
    if value is None:
        return DEFAULT_SOURCE
    return validate_source(value, pointer, sources=sources)


def check_parent_fields(
    transaction_type: TransactionType, parent_transaction_id: str | None, parent_reference_id: str | None
) -> bool:
    """Only a credit names a parent. Returns whether a parent is named."""
    named = bool(parent_transaction_id) or bool(parent_reference_id)
    if transaction_type == "sale" and named:
        pointer = "/parent_transaction_id" if parent_transaction_id else "/parent_reference_id"
        raise ValidationFailed("only a credit can name a parent transaction; this is a sale", pointer=pointer)
    return named


# -- transaction date -------------------------------------------------------------


def check_transaction_date(on: datetime, pointer: str = "/transaction_date") -> datetime:
    """A transaction (or calculation) date whose UTC day reports, returns and nexus studies take
    (:data:`levy.domain.periods.FIRST_DATE` .. :data:`~levy.domain.periods.LAST_DATE`), else 422 at
    ``pointer``: tax on a day outside could never be reported or filed."""
    check_report_date(on.astimezone(UTC).date(), pointer=pointer)
    return on


# -- lifecycle (3.1) --------------------------------------------------------------------


def check_transition(current: str, requested: object, *, by_filing: bool = False) -> bool:
    """Check the move ``current`` -> ``requested``; True when it is a move, False for a no-op.

    Allowed: draft->finalized, draft->void, finalized->void, finalized->draft,
    and finalized->filed only with ``by_filing=True`` (filing does it; the API
    cannot ask for ``filed``). ``filed`` and ``void`` are terminal. An
    unchanged status is a no-op. Refusals are 422 :class:`FailedPrecondition`
    (pointer ``/status``) naming both statuses.
    """
    requested = validate_status(requested)
    if requested == current:
        return False
    meta = {"current_status": current, "requested_status": requested}
    if current in TERMINAL:
        raise FailedPrecondition(
            f"the transaction is '{current}', which is final: it cannot move to '{requested}'",
            pointer="/status",
            meta=meta,
        )
    if requested == "filed" and not by_filing:
        raise FailedPrecondition(
            f"the transaction is '{current}': status 'filed' cannot be requested, it is set when a return "
            "including the transaction is filed",
            pointer="/status",
            meta=meta,
        )
    if (current, requested) not in ALLOWED_MOVES:
        raise FailedPrecondition(
            f"the transaction is '{current}': it cannot move to '{requested}' (a draft is finalized or "
            "voided before it can be filed)",
            pointer="/status",
            meta=meta,
        )
    return True


def check_lines_editable(status: str, pointer: str = "/line_items") -> None:
    """Line items change only in ``draft``."""
    if status == "draft":
        return
    if status == "finalized":
        detail = (
            "line items of a 'finalized' transaction cannot change: move it to 'draft' first (status 'draft'), "
            "then send line_items with status 'finalized' in a second call"
        )
    else:
        detail = f"line items of a '{status}' transaction cannot change: '{status}' transactions are final"
    raise FailedPrecondition(detail, pointer=pointer, meta={"current_status": status})


# -- lines --------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class LinePlan:
    """What to do with the lines of one create (or ``line_items`` update).

    ``split.goods`` are stored and passed to the engine (``split.engine_lines``);
    collected-tax lines are not stored. ``record`` is False when the source
    does not record the document at all (only marked lines netting below 0).
    ``tax_only``: stored with no line items; when ``held_off_reason`` is None
    the wiring calls :func:`attribute_tax_only` with ``collected_reached`` built
    from ``collected_addresses`` (one per collected line; None = no address).
    """

    split: LineSplit
    record: bool = True
    tax_only: bool = False
    held_off_reason: HeldOffReason | None = None
    collected_addresses: tuple = ()

    @property
    def needs_attribution(self) -> bool:
        return self.record and self.tax_only and self.held_off_reason is None


def plan_lines(
    lines: Sequence[TransactionLine],
    *,
    transaction_type: TransactionType,
    source: str = DEFAULT_SOURCE,
    has_parent: bool = False,
    netting: NettingPolicies,
) -> LinePlan:
    """Validate and split the lines of a transaction (4.7); raise every violation at once (422).
    ``netting``: the sources' netting policies (reference data)."""
    errors: list[LevyError] = list(merged_customer_errors(lines, transaction_type))
    errors.extend(negative_credit_line_errors(lines, transaction_type))
    # Collected-tax lines included: their amounts become the stored tax.
    past_range = line_amount_errors([tl.line for tl in lines],
                                      [mul_round(tl.line.unit_price, tl.line.quantity) for tl in lines])
    errors.extend(past_range)
    try:
        split = split_lines(lines, source=source, transaction_type=transaction_type, has_parent=has_parent,
                            netting=netting)
    except ValidationFailed as e:
        errors.append(e)
    else:
        if not past_range:  # marked lines less their discounts (a reduction when negative)
            errors.extend(range_errors([(split.collected_amount or 0, "The collected-tax lines' total", "/line_items"),
                                        (split.reduction, "The marked lines' negative net", "/line_items")],
                                       "The collected-tax lines' total and negative net", "/line_items"))
    if errors:
        raise ValidationFailed.many(errors)
    addresses = tuple(tl.line.address for tl in lines if tl.is_sales_tax)
    if not split.only_collected:
        return LinePlan(split)
    if split.disposition == "not_recorded":
        return LinePlan(split, record=False, tax_only=True, collected_addresses=addresses)
    if split.disposition == "store_off_returns":
        return LinePlan(split, tax_only=True, held_off_reason="negative_marked_only", collected_addresses=addresses)
    if not is_tax_only(transaction_type, has_parent, True):
        return LinePlan(split, tax_only=True, held_off_reason="credit_with_parent", collected_addresses=addresses)
    return LinePlan(split, tax_only=True, collected_addresses=addresses)


def negative_credit_line_errors(lines: Sequence[TransactionLine], transaction_type: str) -> list[ValidationFailed]:
    """A credit's amounts are positive (only ``type`` marks it): a goods line with a negative price is 422."""
    if transaction_type != "credit":
        return []
    return [
        ValidationFailed(
            f"{tl.describe()}: a credit's amounts are positive (only type 'credit' marks it), "
            f"but unit_price is {tl.line.unit_price}",
            pointer=f"{tl.pointer}/unit_price",
            meta={"line_id": tl.id, "index": tl.index},
        )
        for tl in lines
        if not tl.is_sales_tax and tl.line.unit_price < 0
    ]


# -- tax provided or calculated -------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class TaxState:
    """The tax of a transaction and where it comes from.

    ``provided``: the ``tax_amount`` sent (the last one), or None. ``collected``:
    the total of the collected-tax lines counted, or None when there are none.
    ``reduction``: a negative marked-line net lowering the tax (never below 0).
    ``calculated``: the engine's tax on the goods lines, always kept for reporting.
    """

    calculated: int
    provided: int | None = None
    collected: int | None = None
    reduction: int = 0

    @property
    def is_provided(self) -> bool:
        return self.provided is not None or self.collected is not None

    @property
    def tax_amount(self) -> int:
        """The response's ``tax_amount`` (already includes collected lines)."""
        if not self.is_provided:
            return self.calculated
        return max(0, (self.provided or 0) + (self.collected or 0) - self.reduction)

    @property
    def filing_tax_amount(self) -> int:
        return self.tax_amount

    @property
    def filing_tax_amount_source(self) -> TaxSource:
        return PROVIDED if self.is_provided else CALCULATED


def _check_amount(value: int | None, pointer: str = "/tax_amount") -> None:
    if value is not None and value < 0:
        raise ValidationFailed(
            "tax_amount must not be negative: a credit is marked by its type, with positive amounts",
            pointer=pointer,
        )


def _in_range(state: TaxState) -> TaxState:
    """The tax stored (``tax_amount`` sent plus the collected-tax lines) stays within MAX_AMOUNT."""
    total = (state.provided or 0) + (state.collected or 0)
    if total > MAX_AMOUNT:
        raise out_of_range("tax_amount plus the collected-tax lines", total, "/tax_amount")
    return state


def tax_on_create(*, calculated: int, tax_amount: int | None, split: LineSplit) -> TaxState:
    """Create: provided when ``tax_amount`` is sent or any collected-tax line exists (even of 0)."""
    _check_amount(tax_amount)
    return _in_range(TaxState(calculated, tax_amount, split.collected_amount, split.reduction))


def tax_on_lines_update(
    previous: TaxState, *, calculated: int, split: LineSplit, tax_amount: int | None | _Unset = UNSET
) -> TaxState:
    """Update sending ``line_items`` (the full list again, collected lines included).

    The collected part is recomputed from these lines only (a collected line
    left out is removed); the provided part is the ``tax_amount`` sent, else
    the previously sent one (``None`` sent explicitly clears it). No collected
    line and no provided amount left: the tax is calculated.
    """
    provided = previous.provided if isinstance(tax_amount, _Unset) else tax_amount
    _check_amount(provided)
    return _in_range(TaxState(calculated, provided, split.collected_amount, split.reduction))


def tax_on_amount_update(previous: TaxState, tax_amount: int | None) -> TaxState:
    """Update sending ``tax_amount`` without ``line_items``: replaces the previous provided
    amount; collected lines already counted stay counted. ``None`` (explicit null) clears it."""
    _check_amount(tax_amount)
    return _in_range(replace(previous, provided=tax_amount))


# -- credits (4.6 workflows 3-5) ------------------------------------------------------------

CreditKind = Literal["sale", "full_credit", "credit_with_lines", "flat_credit"]
T = TypeVar("T")


def credit_kind(transaction_type: TransactionType, *, has_parent: bool, line_items_sent: bool,
                flat_amount_sent: bool = False, tax_amount_sent: bool = False) -> CreditKind:
    """Which create workflow applies.

    A sale needs ``line_items``. A credit with a parent and no (or empty)
    ``line_items`` is a full credit copying the parent's stored lines; a credit
    that sends lines uses them, even when a parent is named; a credit with
    neither lines nor parent is refused. ``flat_amount`` makes a credit
    by amount: only a credit naming its parent, without ``line_items`` or
    ``tax_amount`` (its lines and tax come from the amount).
    """
    if flat_amount_sent:
        if transaction_type != "credit" or not has_parent:
            raise ValidationFailed(
                "flat_amount refunds an amount of a sale: only a credit naming its parent (parent_transaction_id "
                "or parent_reference_id) may send it", pointer="/flat_amount")
        errors: list[LevyError] = []
        if line_items_sent:
            errors.append(ValidationFailed(
                "send flat_amount or line_items, not both: flat_amount is spread over the parent's lines",
                pointer="/line_items"))
        if tax_amount_sent:
            errors.append(ValidationFailed(
                "flat_amount already includes the tax it refunds: do not send tax_amount with it",
                pointer="/tax_amount"))
        if errors:
            raise ValidationFailed.many(errors)
        return "flat_credit"
    if transaction_type == "sale":
        if not line_items_sent:
            raise RequiredField("line_items", pointer="/line_items", detail="A sale needs line_items.")
        return "sale"
    if line_items_sent:
        return "credit_with_lines"
    if not has_parent:
        raise RequiredField(
            "line_items",
            pointer="/line_items",
            detail="A credit without line_items is a full credit and must name its parent "
            "(parent_transaction_id or parent_reference_id).",
        )
    return "full_credit"


def full_credit_lines(parent_lines: Sequence[T], marked_after_sale: Callable[[T], bool]) -> list[T]:
    """The parent's stored (goods) lines a full credit copies.

    The stored lines no longer hold the parent's collected-tax lines. A line
    whose product was marked ``SALES_TAX`` after the sale (``marked_after_sale``)
    is left out (4.7 tax-only rule 4).
    """
    return [ln for ln in parent_lines if not marked_after_sale(ln)]


def check_full_credit_not_empty(copied_lines: Sequence[object], tax_amount: int | None) -> None:
    """A full credit that copies nothing and sends no tax_amount reverses nothing (tax-only parent): 422."""
    if not copied_lines and tax_amount is None:
        raise ValidationFailed(
            "the parent has no stored line items to copy (a tax-only sale, or only lines of products marked "
            "SALES_TAX since): send the credit's tax_amount or its line_items",
            pointer="/line_items",
        )


def check_parent_found(found: bool, *, only_collected_lines: bool, pointer: str = "/parent_transaction_id") -> bool:
    """A named parent must exist in the organization, except for a credit of only collected-tax
    lines (stored and held off returns). Returns ``found``."""
    if not found and not only_collected_lines:
        raise ValidationFailed(
            "the parent transaction does not exist in this organization", pointer=pointer
        )
    return found


# -- updates (4.7 "Updating") -----------------------------------------------------------------

#: Fields fixed when the transaction is created.
CREATE_ONLY: Final = ("type", "parent_transaction_id", "parent_reference_id", "source", "flat_amount",
                      "marketplace_facilitator")
#: Fields that change the calculation: draft only, and sent together with ``line_items``.
CALCULATION_FIELDS: Final = ("currency", "discount_amount", "vendor_discount_amount", "transaction_date",
                             "tax_behavior")
#: The fields whose stored amounts are final once the transaction is ``filed`` or ``void``.
AMENDABLE_STATUSES: Final = ("draft", "finalized")


def update_field_errors(present: Sequence[str], *, line_items_empty: bool, status_null: bool) -> list[LevyError]:
    """What is wrong with the set of fields an update sends (``present``), every problem at once:
    a create-only field, a calculation field without ``line_items``, ``line_items`` sent empty
    (``line_items_empty``) and ``status`` sent as null (``status_null``)."""
    errors: list[LevyError] = [
        ValidationFailed(f"{name} is set when the transaction is created and cannot change", pointer=f"/{name}")
        for name in present if name in CREATE_ONLY
    ]
    if "line_items" not in present:
        errors.extend(
            ValidationFailed(f"{f} changes the calculation: send it together with the full line_items", pointer=f"/{f}")
            for f in CALCULATION_FIELDS if f in present
        )
    elif line_items_empty:
        errors.append(RequiredField("line_items", pointer="/line_items",
                                    detail="line_items, when sent, is the full list of lines again (not empty)."))
    if "status" in present and status_null:
        errors.append(ValidationFailed("status cannot be null", pointer="/status"))
    return errors


def check_amount_changeable(status: str, what: str, pointer: str) -> None:
    """The tax or the exchange rate (``what``) of a ``filed`` or ``void`` transaction is final:
    422 :class:`FailedPrecondition` at ``pointer``."""
    if status not in AMENDABLE_STATUSES:
        raise FailedPrecondition(
            f"the {what} of a '{status}' transaction cannot change: '{status}' transactions are final",
            pointer=pointer, meta={"current_status": status},
        )


def check_recorded(plan: LinePlan, source: str) -> None:
    """A document whose only lines are marked ``SALES_TAX`` lines netting below 0 is not recorded
    on a source that carries the reduction to a later document: 422 ``not_recorded``."""
    if plan.record:
        return
    raise FailedPrecondition(
        f"the document's only lines are marked SALES_TAX lines netting below 0 "
        f"(-{plan.split.reduction}): source '{source}' carries the reduction to a later document, "
        "so this one is not recorded",
        pointer="/line_items", code=NOT_RECORDED,
        meta={"source": source, "reduction": plan.split.reduction},
    )


# -- list filters (GET /transactions; Levy's choice, the spec shows none) ---------------------


@dataclass(frozen=True, slots=True)
class ListFilters:
    """Filters of ``GET /transactions`` (newest first; all optional, combined with AND).

    ``transaction_date_from`` is inclusive, ``transaction_date_to`` exclusive
    (both UTC instants; a bare date means its UTC midnight).
    """

    status: Status | None = None
    type: TransactionType | None = None
    reference_id: str | None = None
    customer_id: str | None = None
    source: str | None = None
    transaction_date_from: datetime | None = None
    transaction_date_to: datetime | None = None


def _instant(value: str | None, parameter: str) -> datetime | None:
    if value is None or value == "":
        return None
    try:
        parsed = datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        raise ValidationFailed(
            f"{parameter} must be an ISO 8601 date or date-time (e.g. 2026-01-31 or 2026-01-31T12:00:00Z); "
            f"got {value!r}",
            parameter=parameter,
        ) from None
    if parsed.tzinfo is None:
        parsed = parsed.replace(tzinfo=UTC)
    return parsed.astimezone(UTC)


def instant_range(start_text: str | None, end_text: str | None, start_name: str, end_name: str,
                  errors: list[LevyError]) -> tuple[datetime | None, datetime | None]:
    """A list's ``[start, end)`` query parameters as instants (:func:`_instant`); each problem
    appended to ``errors`` (an end not after the start is one)."""
    start = end = None
    try:
        start = _instant(start_text, start_name)
    except ValidationFailed as e:
        errors.append(e)
    try:
        end = _instant(end_text, end_name)
    except ValidationFailed as e:
        errors.append(e)
    if start is not None and end is not None and end <= start:
        errors.append(ValidationFailed(f"{end_name} must be after {start_name}", parameter=end_name))
    return start, end


def parse_list_filters(
    *,
    status: str | None = None,
    type: str | None = None,
    reference_id: str | None = None,
    customer_id: str | None = None,
    source: str | None = None,
    transaction_date_from: str | None = None,
    transaction_date_to: str | None = None,
    sources: CustomerSources,
) -> ListFilters:
    """Validate the query parameters of ``GET /transactions`` (``source``: one of ``sources``); every
    problem at once (422)."""
    errors: list[LevyError] = []
    if status is not None and status not in STATUSES:
        errors.append(ValidationFailed(f"status must be one of {', '.join(STATUSES)}; got {status!r}",
                                       parameter="status"))
    if type is not None and type not in TYPES:
        errors.append(ValidationFailed(f"type must be 'sale' or 'credit'; got {type!r}", parameter="type"))
    if source is not None:
        try:
            validate_source(source, "/source", sources=sources)
        except ValidationFailed as e:
            errors.append(ValidationFailed(e.detail, parameter="source"))
    start, end = instant_range(transaction_date_from, transaction_date_to, "transaction_date_from",
                               "transaction_date_to", errors)
    if errors:
        raise ValidationFailed.many(errors)
    return ListFilters(status, type, reference_id or None, customer_id or None, source, start, end)  # type: ignore[arg-type]


# -- the console's search (Levy's choice: a person searching, not a program listing) ------------

_STATE = re.compile(r"[A-Z]{2}\Z")


@dataclass(frozen=True, slots=True)
class TransactionSearch:
    """The console's transaction search: the list filters (status, type, dates) plus text.

    ``reference_text`` is part of the reference id, any case; ``customer_text`` a ``cust_`` id
    (exact) or part of a customer's source id, name or email, any case; ``state`` the two-letter
    state of a line's tax rows (where the line was taxed, as nexus counts it). Newest first by
    transaction date.
    """

    filters: ListFilters
    reference_text: str | None = None
    customer_text: str | None = None
    state: str | None = None

    @property
    def customer_id(self) -> str | None:
        text = self.customer_text or ""
        return text if text.startswith("cust_") else None


def parse_search(*, status: str | None = None, type: str | None = None, reference: str | None = None,
                 customer: str | None = None, state: str | None = None, date_from: str | None = None,
                 date_to: str | None = None) -> TransactionSearch:
    """Validate the console's search; every problem at once (422). A bare ``date_to`` is
    inclusive (its whole day, like the returns and liability pages): From = To is one day."""
    errors: list[LevyError] = []
    if date_to and len(date_to) == 10:
        try:
            date_to = (date.fromisoformat(date_to) + timedelta(days=1)).isoformat()
        except ValueError:
            pass  # parse_list_filters reports it
    try:
        filters = parse_list_filters(status=status or None, type=type or None, transaction_date_from=date_from or None,
                                     transaction_date_to=date_to or None, sources={})
    except ValidationFailed as e:
        errors.append(e)
    state = (state or "").strip().upper() or None
    if state is not None and not _STATE.match(state):
        errors.append(ValidationFailed(f"state must be a two-letter US state code; got {state!r}", parameter="state"))
    if errors:
        raise ValidationFailed.many(errors)
    return TransactionSearch(filters, (reference or "").strip() or None, (customer or "").strip() or None, state)
