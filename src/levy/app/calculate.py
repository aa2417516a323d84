"""The calculation service: request fields -> engine input -> result.

Shared by ``POST /calculations`` and (later) ``POST /transactions``: both send
the calculation request fields (``currency``, ``discount_amount``,
``vendor_discount_amount``, ``transaction_date``, ``line_items``). Presets are
resolved with a constant number of queries on the caller's connection; rates
and taxability rules come from memory (:mod:`levy.app.rates_runtime`).
See docs/calculations.md.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime, timedelta
from decimal import Decimal
from typing import Any

from sqlalchemy.ext.asyncio import AsyncConnection

from levy.app.context import CallContext
from levy.app.preset_cache import OrgPresets
from levy.app.rates_runtime import current_rates
from levy.domain.customers import validate_source
from levy.domain.errors import ErrorItem, LevyError, RequiredField, ValidationFailed
from levy.domain.settings import OrganizationSettings
from levy.domain.money import parse_amount, parse_quantity
from levy.domain.tax import engine
from levy.domain.tax.codes import parse_tax_codes
from levy.domain.tax.model import (
    SALES_TAX_CODE,
    Address,
    CalculationInput,
    CalculationResult,
    CustomerExemption,
    Discount,
    ExemptionSettings,
    LineInput,
    Registration,
)
from levy.domain.taxcodes import load_catalogue
from levy.rates.builtin import load_taxability
from levy.store import calc_reads

DEFAULT_CUSTOMER_SOURCE = "native"
_ONE = Decimal(1)


@dataclass
class CalculationDetails:
    """What the calculation resolved, for callers that store it (transactions)."""

    input: CalculationInput
    # Line index -> the matched customer's ``cust_`` id.
    customer_ids: dict[int, str] = field(default_factory=dict)
    # Line index -> the product preset's ``prd_`` id.
    product_ids: dict[int, str] = field(default_factory=dict)
    # Line index -> the customer the matched (merged) customer was merged into.
    merged_into: dict[int, str] = field(default_factory=dict)
    # Line index -> the product preset's tax codes as stored now.
    product_codes: dict[int, tuple[str, ...]] = field(default_factory=dict)
    # Line index -> its translated engine input (lines that failed are absent).
    lines: dict[int, LineInput] = field(default_factory=dict)


@dataclass
class Prepared:
    """The request translated for the engine, with the reads it needed (one read transaction)."""

    details: CalculationDetails
    errors: list[LevyError]
    registrations: tuple[Registration, ...]
    exemption_settings: ExemptionSettings

    @property
    def input(self) -> CalculationInput:
        return self.details.input


async def calculate(
    ctx: CallContext, fields: Any, conn: AsyncConnection | None = None
) -> tuple[CalculationResult, CalculationDetails]:
    """Calculate the tax of a message carrying the calculation request fields.

    Raises ValidationFailed (calculation error shape, see :func:`shape_error`).
    """
    prepared = await prepare(ctx, fields, conn)
    return run_engine(ctx, prepared), prepared.details


def run_engine(
    ctx: CallContext, prepared: Prepared, lines: tuple[LineInput, ...] | None = None, *, shape: bool = True
) -> CalculationResult:
    """Run the engine on ``prepared`` (or only on ``lines`` of it); every error found so far is combined.

    ``shape``: errors in the calculation error shape (:func:`shape_error`); transactions pass False.
    """
    inp = prepared.input if lines is None else replace(prepared.input, lines=lines)
    try:
        return engine.calculate(
            inp, current_rates(ctx.services), load_taxability(), prepared.registrations,
            prepared.exemption_settings, prior_errors=prepared.errors,
        )
    except LevyError as e:
        if not shape:
            raise
        raise shape_error(e) from None


async def prepare(
    ctx: CallContext, fields: Any, conn: AsyncConnection | None = None, *, require_lines: bool = True
) -> Prepared:
    """Translate the calculation request fields of ``fields`` into the engine's input.

    ``conn``: the caller's transaction, for what the preset cache lacks; without
    one, a read unit of work is opened only when the cache lacks something.

    Problems are collected in ``Prepared.errors`` (a line that fails is left out
    of the input) so that callers report them together with their own.
    """
    org = ctx.organization_id
    collector = _Errors()
    errors, attempt = collector.errors, collector.attempt
    currency = fields.currency if fields.HasField("currency") else "USD"
    discount = attempt(parse_amount, fields.discount_amount, "/discount_amount") if fields.HasField("discount_amount") else 0
    vendor = (
        attempt(parse_amount, fields.vendor_discount_amount, "/vendor_discount_amount")
        if fields.HasField("vendor_discount_amount")
        else 0
    )
    on = _utc(fields.transaction_date) if fields.HasField("transaction_date") else None
    items = list(fields.line_items)
    if not items and require_lines:
        errors.append(ValidationFailed("At least one line item is required.", pointer="/line_items", type="missing"))

    # Presets from the per-organization cache; what it lacks in one read transaction.
    settings, registrations, product_rows, customer_rows = await _presets(
        ctx,
        conn,
        # An unset preset reads as an empty one: its id is "".
        [pid for li in items if (pid := li.product.preset.id)],
        [cid for li in items if (cid := li.customer.preset.id)],
    )

    default_codes = parse_tax_codes(tuple(settings.default_tax_codes))
    details = CalculationDetails(input=CalculationInput(lines=()))
    lines: list[LineInput] = []
    for i, li in enumerate(items):
        line = attempt(_line, i, li, product_rows, customer_rows, default_codes.category, details)
        if line is not None:
            lines.append(line)
            details.lines[i] = line
        elif not errors:  # pragma: no cover - _line either returns or raises
            raise AssertionError("line translation failed without an error")

    details.input = CalculationInput(
        lines=tuple(lines),
        currency=currency,
        transaction_date=on,
        discount_amount=discount or 0,
        vendor_discount_amount=vendor or 0,
        include_unregistered=ctx.include_unregistered,
    )
    exemption_settings = ExemptionSettings(settings.exemption_management, settings.certificate_treatment)  # type: ignore[arg-type]
    return Prepared(details, errors, registrations, exemption_settings)


_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


def _utc(ts: Any) -> datetime:
    """``Timestamp.ToDatetime(tzinfo=UTC)`` without its Python-level detours (same
    value: nanos are non-negative, checked with the field limits, and truncated to
    microseconds as protobuf does)."""
    return _EPOCH + timedelta(seconds=ts.seconds, microseconds=ts.nanos // 1000)


async def _presets(
    ctx: CallContext, conn: AsyncConnection | None, product_ids: list[str], source_ids: list[str]
) -> tuple[OrganizationSettings, tuple[Registration, ...], dict[str, calc_reads.ProductRow], list[calc_reads.CustomerRow]]:
    """Settings, registrations and the named presets: from :mod:`levy.app.preset_cache`,
    reading only what it lacks (``conn``, or one read unit of work)."""
    org = ctx.organization_id
    entry = ctx.services.presets.entry(org)
    missing_products = sorted({p for p in product_ids if p not in entry.products})
    missing_customers = sorted({c for c in source_ids if c not in entry.customers})
    if entry.settings is None or missing_products or missing_customers:
        if conn is None:
            # One read per entry at a time: concurrent calculations that find the same
            # entry empty (a new second) wait for the first read instead of each reading
            # the same rows. Only callers holding no connection wait (no pool deadlock).
            if entry.read_lock is None:
                entry.read_lock = asyncio.Lock()
            async with entry.read_lock:
                missing_products = [p for p in missing_products if p not in entry.products]
                missing_customers = [c for c in missing_customers if c not in entry.customers]
                if entry.settings is None or missing_products or missing_customers:
                    async with ctx.services.uow() as own:
                        await _read_presets(own, org, entry, missing_products, missing_customers)
        else:
            await _read_presets(conn, org, entry, missing_products, missing_customers)
    assert entry.settings is not None
    products = {p: row for p in set(product_ids) if (row := entry.products[p]) is not None}
    customers = [row for c in sorted(set(source_ids)) for row in entry.customers[c]]
    return entry.settings[0], entry.settings[1], products, customers


async def _read_presets(
    conn: AsyncConnection, org: str, entry: OrgPresets, product_ids: list[str], source_ids: list[str]
) -> None:
    if entry.settings is None:
        entry.settings = await calc_reads.settings_and_registrations(conn, org)
    if product_ids:
        found = await calc_reads.products_by_id(conn, org, product_ids)
        for p in product_ids:
            entry.products[p] = found.get(p)
    if source_ids:
        by_source: dict[str, list[calc_reads.CustomerRow]] = {c: [] for c in source_ids}
        for row in await calc_reads.customers_by_source_id(conn, org, source_ids):
            by_source[row.source_id].append(row)
        for c, rows in by_source.items():
            entry.customers[c] = tuple(rows)


class _Errors:
    """Collects every problem of a request instead of stopping at the first."""

    def __init__(self) -> None:
        self.errors: list[LevyError] = []

    def attempt(self, fn: Any, *args: Any, **kw: Any) -> Any:
        try:
            return fn(*args, **kw)
        except LevyError as e:
            self.errors.append(e)
            return None


def _line(
    i: int,
    li: Any,
    product_rows: dict[str, calc_reads.ProductRow],
    customer_rows: list[calc_reads.CustomerRow],
    default_category: str | None,
    details: CalculationDetails,
) -> LineInput:
    """One request line -> LineInput; collects every problem of the line into one error.

    Written for the hot path: each field is probed once, errors are caught where
    they arise (exceptions cost nothing until raised) and nothing is built for a
    field that is absent."""
    p = f"/line_items/{i}"
    errs: list[LevyError] = []
    has = li.HasField
    if not li.id:
        errs.append(RequiredField("id", pointer=f"{p}/id", detail="The line item id is required."))
    quantity: Any = _ONE
    if has("quantity"):
        try:
            quantity = parse_quantity(li.quantity, f"{p}/quantity")
        except LevyError as e:
            errs.append(e)
    unit_price: Any = None
    if has("unit_price"):
        try:
            unit_price = parse_amount(li.unit_price, f"{p}/unit_price", allow_negative=True)
        except LevyError as e:
            errs.append(e)
    else:
        errs.append(RequiredField("unit_price", pointer=f"{p}/unit_price", detail="The line item unit_price is required."))
    discounts: list[Discount] = []
    for j, d in enumerate(li.discounts):
        if not d.HasField("amount"):
            errs.append(RequiredField("amount", pointer=f"{p}/discounts/{j}/amount", detail="The discount amount is required."))
            continue
        try:
            amount = parse_amount(d.amount, f"{p}/discounts/{j}/amount")
        except LevyError as e:
            errs.append(e)
            continue
        discounts.append(Discount(d.id if d.id else f"discount_{j}", amount))
    line_discount = line_vendor = 0
    if has("discount_amount"):
        try:
            line_discount = parse_amount(li.discount_amount, f"{p}/discount_amount")
        except LevyError as e:
            errs.append(e)
    if has("vendor_discount_amount"):
        try:
            line_vendor = parse_amount(li.vendor_discount_amount, f"{p}/vendor_discount_amount")
        except LevyError as e:
            errs.append(e)

    # What is sold: the line's own codes win over the preset's; else the organization default.
    category, attributes = None, ()
    is_sales_tax = violation = marked = False
    preset_codes: tuple[str, ...] | None = None
    product = li.product
    if product.HasField("preset"):
        preset = product.preset
        pid = preset.id
        row = product_rows.get(pid) if pid else None
        if not pid:
            errs.append(RequiredField("id", pointer=f"{p}/product/preset/id", detail="The product preset id is required."))
        elif row is None or (preset.HasField("source") and preset.source != row.source):
            errs.append(ValidationFailed(f"No product '{pid}' exists.", pointer=f"{p}/product/preset/id", input=pid,
                                         type="not_found"))
        elif row.archived:
            errs.append(ValidationFailed(f"The product '{pid}' is archived.", pointer=f"{p}/product/preset/id",
                                         input=pid, type="archived"))
        else:
            details.product_ids[i] = row.id
            details.product_codes[i] = row.tax_codes
            preset_codes = row.tax_codes
            marked = row.marked_sales_tax or tuple(row.tax_codes) == (SALES_TAX_CODE,)
    codes = tuple(product.tax_attributes)
    if codes:
        if any(c.split(".", 1)[0] == SALES_TAX_CODE for c in codes):
            parsed = parse_tax_codes(codes)
            is_sales_tax, violation = parsed.is_sales_tax, parsed.sales_tax_violation
        else:
            base = parse_tax_codes(preset_codes) if preset_codes and not marked else None
            try:
                resolved = load_catalogue().resolve(
                    list(codes), f"{p}/product/tax_attributes",
                    default_category=(base.category if base and base.category else default_category),
                )
            except LevyError as e:
                errs.append(e)
            else:
                category, attributes = resolved.category, tuple(resolved.attributes)
        marked = False  # the line's own attributes take precedence over a marked product
    elif marked:
        is_sales_tax = True
    elif preset_codes:
        parsed = parse_tax_codes(preset_codes)
        category, attributes = parsed.category, parsed.attributes
    else:
        category = default_category

    # Who buys, and where.
    address = None
    customer = li.customer
    if customer.HasField("address"):
        a = customer.address
        # Unset optional strings read as "": None for those (ListFields names the set ones).
        given = {f.name: v for f, v in a.ListFields()}
        address = Address(given.get("line1"), given.get("city"), given.get("state"), given.get("country"),
                          given.get("postal_code"))
    exemption: CustomerExemption | None = None
    customer_detail: str | None = None
    if customer.HasField("preset"):
        cp = customer.preset
        source: str | None = DEFAULT_CUSTOMER_SOURCE
        if cp.HasField("source"):
            try:
                source = validate_source(cp.source, f"{p}/customer/preset/source")
            except LevyError as e:
                errs.append(e)
                source = None
        if not cp.id:
            errs.append(RequiredField("id", pointer=f"{p}/customer/preset/id",
                                      detail="The customer preset id (its source_id) is required."))
        elif source is not None:
            account = cp.source_account_id if cp.HasField("source_account_id") else None
            matches = [
                c
                for c in customer_rows
                if c.source == source and c.source_id == cp.id and (account is None or c.source_account_id == account)
            ]
            if len(matches) == 1:
                exemption = matches[0].exemption
                details.customer_ids[i] = matches[0].id
                if matches[0].merged_into_customer_id:
                    details.merged_into[i] = matches[0].merged_into_customer_id
            elif not matches:
                customer_detail = f"no customer matches preset '{cp.id}' (source {source}): line taxed without exemptions"
            else:
                customer_detail = (
                    f"customer preset '{cp.id}' (source {source}) matches {len(matches)} customers in different "
                    "accounts: send source_account_id; line taxed without exemptions"
                )

    if errs:
        raise ValidationFailed.many(errs)  # type: ignore[arg-type]
    return LineInput(li.id, quantity, unit_price, category, attributes, is_sales_tax, marked and is_sales_tax,
                     violation, address, tuple(discounts), line_discount, line_vendor, exemption, customer_detail, p)


def shape_error(err: LevyError) -> LevyError:
    """Section 4.7 rule 5 in the calculation error shape.

    Collected-tax violations never name the line: they become one item
    ``{type: invalid_sales_tax_line, loc: ["body", "line_items"]}``. The first
    item's ``msg`` (and the gRPC status message) is the spec's detail:
    ``Validation failed: invalid_sales_tax_line`` alone, or ``Validation failed:
    multiple errors`` / ``Processing failed: multiple errors`` followed by the
    other errors' own items.
    """
    sales = [i for i in err.items if i.type == engine.INVALID_SALES_TAX_LINE]
    if not sales:
        return err
    others = [i for i in err.items if i.type != engine.INVALID_SALES_TAX_LINE]
    if not others:
        message = engine.SALES_TAX_DETAIL
    elif err.detail == engine.MULTIPLE_PROCESSING or any(i.status != 422 for i in others):
        message = engine.MULTIPLE_PROCESSING
    else:
        message = engine.MULTIPLE_VALIDATION
    head = ErrorItem(
        status=422,
        code="validation_error",
        title="Validation Error",
        detail=message,
        pointer="/line_items",
        meta={"rules": sorted({str((i.meta or {}).get("rule")) for i in sales})},
        type=engine.INVALID_SALES_TAX_LINE,
        input=None,
    )
    return ValidationFailed(message, items=[head, *others])
