"""The calculation service: request values -> engine input -> result.

Shared by ``POST /calculations`` and the transactions service: both send the
calculation request fields (``currency``, ``discount_amount``,
``vendor_discount_amount``, ``transaction_date``, ``tax_behavior``,
``line_items``), which the handlers turn into a :class:`CalculationRequest` of
plain values. Presets are resolved with a constant number of queries on the
caller's connection; rates and taxability rules come from memory
(:mod:`levy.app.rates_runtime`). See docs/calculations.md.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterable
from dataclasses import dataclass, field, replace
from datetime import UTC, date, datetime
from decimal import Decimal

from sqlalchemy.ext.asyncio import AsyncConnection

from levy.app.context import CallContext
from levy.app.preset_cache import OrgPresets
from levy.app.vies import ask as ask_vies
from levy.app.vies import check_lines, vies_number
from levy.domain.customers import validate_source
from levy.domain.errors import ErrorCollector, LevyError, NotFound, RequiredField, ValidationFailed
from levy.domain.locations import BusinessLocation
from levy.domain.settings import OrganizationSettings
from levy.domain.money import parse_amount, parse_quantity
from levy.domain.tax import calc_errors, engine, line_rules
from levy.domain.tax.codes import parse_tax_codes
from levy.domain.tax.model import (
    Address,
    CalculationInput,
    CalculationResult,
    Discount,
    ExemptionSettings,
    LineInput,
    Registration,
    TaxId,
)
from levy.domain.transactions.rules import check_transaction_date
from levy.store import calc_reads
from levy.store.locations import all_locations
from levy.store.reference_data import ReferenceData

DEFAULT_CUSTOMER_SOURCE = "native"
_ONE = Decimal(1)


# -- the request, as plain values (None: not sent) ------------------------------------------


@dataclass(frozen=True, slots=True)
class PresetRef:
    """A line's product or customer preset: its id ("" when not sent), ``source`` and, for a
    customer, ``source_account_id``."""

    id: str
    source: str | None = None
    source_account_id: str | None = None


@dataclass(frozen=True, slots=True)
class DiscountSent:
    """One of a line's ``discounts``: its id ("" when not sent) and amount."""

    id: str
    amount: str | None


@dataclass(frozen=True, slots=True)
class TaxIdSent:
    """One of the customer's ``tax_ids`` ("" for a part not sent)."""

    type: str
    value: str
    country: str


@dataclass(frozen=True, slots=True)
class ShipFromSent:
    """A line's ``ship_from``: a location id, an address, or (refused) both or neither."""

    location_id: str | None = None
    address: Address | None = None


@dataclass(frozen=True, slots=True)
class LineRequest:
    """One line of the request. ``id`` is "" when not sent."""

    id: str
    quantity: str | None = None
    unit_price: str | None = None
    discounts: tuple[DiscountSent, ...] = ()
    discount_amount: str | None = None
    vendor_discount_amount: str | None = None
    tax_attributes: tuple[str, ...] = ()
    product_preset: PresetRef | None = None
    address: Address | None = None
    tax_ids: tuple[TaxIdSent, ...] = ()
    customer_preset: PresetRef | None = None
    ship_from: ShipFromSent | None = None
    tax_behavior: str | None = None


@dataclass(frozen=True, slots=True)
class CalculationRequest:
    """The calculation request fields (of ``POST /calculations`` or a transaction)."""

    currency: str | None = None
    discount_amount: str | None = None
    vendor_discount_amount: str | None = None
    transaction_date: datetime | None = None
    tax_behavior: str | None = None
    line_items: tuple[LineRequest, ...] = ()


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
    ctx: CallContext, fields: CalculationRequest, conn: AsyncConnection | None = None
) -> tuple[CalculationResult, CalculationDetails]:
    """Calculate the tax of the calculation request ``fields``.

    Raises ValidationFailed (calculation error shape, see :func:`levy.domain.tax.calc_errors.shape_error`).
    """
    prepared = await prepare(ctx, fields, conn)
    return run_engine(ctx, prepared), prepared.details


def run_engine(
    ctx: CallContext, prepared: Prepared, lines: tuple[LineInput, ...] | None = None, *, shape: bool = True
) -> CalculationResult:
    """Run the engine on ``prepared`` (or only on ``lines`` of it); every error found so far is combined.

    ``shape``: errors in the calculation error shape (``calc_errors.shape_error``); transactions pass False.
    """
    inp = prepared.input if lines is None else replace(prepared.input, lines=lines)
    reference = ctx.services.reference
    try:
        return engine.calculate(
            inp, ctx.services.rates.table, reference.taxability, prepared.registrations,
            prepared.exemption_settings, prior_errors=prepared.errors, sourcing=reference.sourcing,
            holidays=reference.holidays,
            item_rules=reference.item_rules,
        )
    except LevyError as e:
        if not shape:
            raise
        raise calc_errors.shape_error(e) from None


async def prepare(
    ctx: CallContext, fields: CalculationRequest, conn: AsyncConnection | None = None, *, require_lines: bool = True
) -> Prepared:
    """Translate the calculation request ``fields`` into the engine's input.

    ``conn``: the caller's transaction, for what the preset cache lacks; without
    one, a read unit of work is opened only when the cache lacks something.

    Problems are collected in ``Prepared.errors`` (a line that fails is left out
    of the input) so that callers report them together with their own.
    """
    collector = ErrorCollector()
    errors, attempt = collector.errors, collector.attempt
    currency = fields.currency if fields.currency is not None else "USD"
    discount = attempt(parse_amount, fields.discount_amount, "/discount_amount") \
        if fields.discount_amount is not None else 0
    vendor = (
        attempt(parse_amount, fields.vendor_discount_amount, "/vendor_discount_amount")
        if fields.vendor_discount_amount is not None
        else 0
    )
    on = fields.transaction_date
    if on is not None:
        attempt(check_transaction_date, on)
    inclusive = bool(attempt(line_rules.is_inclusive, fields.tax_behavior, False, "/tax_behavior"))
    items = fields.line_items
    if not items and require_lines:
        errors.append(ValidationFailed("At least one line item is required.", pointer="/line_items", type="missing"))

    # Presets from the per-organization cache; what it lacks in one read transaction.
    settings, registrations, product_rows, customer_rows, locations = await _presets(
        ctx,
        conn,
        [pp.id for li in items if (pp := li.product_preset) is not None and pp.id],
        [cp.id for li in items if (cp := li.customer_preset) is not None and cp.id],
    )

    default_codes = parse_tax_codes(tuple(settings.default_tax_codes))
    details = CalculationDetails(input=CalculationInput(lines=()))
    origins = Origins(locations, (on or datetime.now(UTC)).date())
    lines: list[LineInput] = []
    for i, li in enumerate(items):
        line = attempt(_line, i, li, product_rows, customer_rows, default_codes.category, details, origins,
                       inclusive, reference=ctx.services.reference)
        if line is not None:
            lines.append(line)
            details.lines[i] = line
        elif not errors:  # pragma: no cover - _line either returns or raises
            raise AssertionError("line translation failed without an error")

    international = ctx.services.rates.table.international
    if ctx.services.vies is not None and international is not None and details.lines:
        checked = await check_lines(ctx.services.vies, details.lines, international.member_states,
                                    ctx.vies_answers)
        if checked:
            details.lines.update(checked)
            lines = list(details.lines.values())

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


async def check_vat_ids_first(ctx: CallContext, requests: Iterable[CalculationRequest]) -> None:
    """Ask VIES (when configured) about the well-formed ``eu_vat`` ids of the requests' lines whose
    address is in a member state, before the caller opens its write transaction: the calculation
    inside it then finds the answers in ``ctx.vies_answers`` and never holds the transaction (on
    SQLite the database's one writer) while VIES is slow (a line's address is always the request's
    own: a customer preset carries exemptions, not addresses)."""
    international = ctx.services.rates.table.international
    if ctx.services.vies is None or international is None:
        return
    numbers = [n for calc in requests for li in calc.line_items
               if li.address is not None and (li.address.country or "").upper() in international.member_states
               for t in _tax_ids(li.tax_ids, "", []) if (n := vies_number(t))]
    await ask_vies(ctx.services.vies, numbers, ctx.vies_answers)


async def _presets(
    ctx: CallContext, conn: AsyncConnection | None, product_ids: list[str], source_ids: list[str]
) -> tuple[OrganizationSettings, tuple[Registration, ...], dict[str, calc_reads.ProductRow],
           list[calc_reads.CustomerRow], tuple[BusinessLocation, ...]]:
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
                    async with ctx.uow() as own:
                        await _read_presets(own, org, entry, missing_products, missing_customers)
        else:
            await _read_presets(conn, org, entry, missing_products, missing_customers)
    assert entry.settings is not None
    products = {p: row for p in set(product_ids) if (row := entry.products[p]) is not None}
    customers = [row for c in sorted(set(source_ids)) for row in entry.customers[c]]
    return entry.settings[0], entry.settings[1], products, customers, entry.locations


async def organization_settings(ctx: CallContext, conn: AsyncConnection | None) -> OrganizationSettings:
    """The organization's settings, from the preset cache (or read: ``conn``, or a read of its own)."""
    return (await _presets(ctx, conn, [], []))[0]


async def _read_presets(
    conn: AsyncConnection, org: str, entry: OrgPresets, product_ids: list[str], source_ids: list[str]
) -> None:
    if entry.settings is None:
        entry.locations = await all_locations(conn, org)
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


def _line(
    i: int,
    li: LineRequest,
    product_rows: dict[str, calc_reads.ProductRow],
    customer_rows: list[calc_reads.CustomerRow],
    default_category: str | None,
    details: CalculationDetails,
    origins: Origins,
    inclusive: bool = False,
    *,
    reference: ReferenceData,
) -> LineInput:
    """One request line -> LineInput: parses its fields, reads its presets, and
    leaves what they mean to :mod:`levy.domain.tax.line_rules`. Every problem of
    the line is collected into one error (wording in
    :mod:`levy.domain.tax.calc_errors`)."""
    p = f"/line_items/{i}"
    collector = ErrorCollector()
    errs, attempt = collector.errors, collector.attempt
    if not li.id:
        errs.append(calc_errors.line_id_required(p))
    quantity = attempt(parse_quantity, li.quantity, f"{p}/quantity") if li.quantity is not None else _ONE
    if li.unit_price is not None:
        unit_price = attempt(parse_amount, li.unit_price, f"{p}/unit_price", allow_negative=True)
    else:
        unit_price = None
        errs.append(calc_errors.unit_price_required(p))
    discounts: list[Discount] = []
    for j, d in enumerate(li.discounts):
        if d.amount is None:
            errs.append(calc_errors.discount_amount_required(p, j))
            continue
        amount = attempt(parse_amount, d.amount, f"{p}/discounts/{j}/amount")
        if amount is not None:
            discounts.append(Discount(d.id if d.id else f"discount_{j}", amount))
    line_discount = attempt(parse_amount, li.discount_amount, f"{p}/discount_amount") \
        if li.discount_amount is not None else 0
    line_vendor = (
        attempt(parse_amount, li.vendor_discount_amount, f"{p}/vendor_discount_amount")
        if li.vendor_discount_amount is not None else 0
    )

    # What is sold: the product preset, if any, then the rules of precedence.
    preset_codes: tuple[str, ...] | None = None
    preset_marked = False
    preset = li.product_preset
    if preset is not None:
        pid = preset.id
        row = product_rows.get(pid) if pid else None
        if not pid:
            errs.append(calc_errors.product_preset_id_required(p))
        elif row is None or (preset.source is not None and preset.source != row.source):
            errs.append(calc_errors.no_such_product(p, pid))
        elif row.archived:
            errs.append(calc_errors.product_archived(p, pid))
        else:
            details.product_ids[i] = row.id
            details.product_codes[i] = row.tax_codes
            preset_codes = row.tax_codes
            preset_marked = line_rules.is_marked_product(row.tax_codes, row.marked_sales_tax)
    sold = attempt(line_rules.what_is_sold, li.tax_attributes, preset_codes, preset_marked,
                   default_category, p, catalogue=reference.catalogue) or line_rules.SoldAs(None)

    # Who buys, and where.
    address = li.address
    tax_ids = _tax_ids(li.tax_ids, f"{p}/customer/tax_ids", errs) if li.tax_ids else ()
    match = line_rules.CustomerMatch()
    cp = li.customer_preset
    if cp is not None:
        source = attempt(validate_source, cp.source, f"{p}/customer/preset/source",
                         sources=reference.customer_sources) if cp.source is not None \
            else DEFAULT_CUSTOMER_SOURCE
        if not cp.id:
            errs.append(calc_errors.customer_preset_id_required(p))
        elif source is not None:
            match = line_rules.match_customer(customer_rows, source, cp.id, cp.source_account_id)
            if match.customer_id is not None:
                details.customer_ids[i] = match.customer_id
            if match.merged_into:
                details.merged_into[i] = match.merged_into

    ship_from = origins.of(li.ship_from, p, errs)
    if li.tax_behavior is not None:
        inclusive = bool(attempt(line_rules.is_inclusive, li.tax_behavior, inclusive, f"{p}/tax_behavior"))
    if errs:
        raise ValidationFailed.many(errs)  # type: ignore[arg-type]
    return LineInput(li.id, quantity, unit_price, sold.category, sold.attributes, sold.is_sales_tax,
                     sold.marked_product, sold.sales_tax_violation, address, tuple(discounts), line_discount,
                     line_vendor, match.exemption, match.detail, p, *ship_from, inclusive=inclusive,
                     tax_ids=tax_ids)


def _tax_ids(items: tuple[TaxIdSent, ...], pointer: str, errs: list[LevyError]) -> tuple[TaxId, ...]:
    """The customer's ``tax_ids`` (spec 2.5): each needs a type and a value (422 at the missing one);
    whether an id is valid is the engine's to say (a malformed id earns no reverse charge)."""
    out: list[TaxId] = []
    for j, t in enumerate(items):
        missing = [name for name in ("type", "value") if not getattr(t, name).strip()]
        for name in missing:
            errs.append(ValidationFailed(f"A tax id needs its {name} (for example type 'eu_vat', value 'DE136695976').",
                                         pointer=f"{pointer}/{j}/{name}", type="missing"))
        if not missing:
            out.append(TaxId(t.type.strip(), t.value, t.country.strip().upper() or None))
    return tuple(out)


_NO_SHIP_FROM: tuple[None, str, str, str] = (None, "", "", "")


class Origins:
    """Where lines ship from: a line's ``ship_from`` (a location id or an
    address), else the organization's default location in effect on the date, else none."""

    __slots__ = ("by_id", "default")

    def __init__(self, locations: tuple[BusinessLocation, ...], on: date) -> None:
        self.by_id = {loc.id: loc for loc in locations}
        self.default = next((loc for loc in locations if loc.is_default and not loc.archived and loc.covers(on)), None)

    def of(self, sf: ShipFromSent | None, p: str, errs: list[LevyError]) -> tuple[Address | None, str, str, str]:
        """(address, label, pointer, location id) of the line's ship-from ``sf``; problems go to ``errs``."""
        if sf is None:
            if self.default is None:
                return _NO_SHIP_FROM
            d = self.default
            return d.address, f"default location {d.id}", f"{p}/ship_from", d.id
        if sf.location_id is not None and sf.address is not None:
            errs.append(ValidationFailed("Send ship_from.location_id or ship_from.address, not both.",
                                         pointer=f"{p}/ship_from"))
            return _NO_SHIP_FROM
        if sf.location_id is not None:
            loc = self.by_id.get(sf.location_id)
            if loc is None:
                errs.append(NotFound(f"No business location '{sf.location_id}'.", pointer=f"{p}/ship_from/location_id"))
                return _NO_SHIP_FROM
            if loc.archived:
                errs.append(ValidationFailed(f"The business location '{loc.id}' is archived.",
                                             pointer=f"{p}/ship_from/location_id", type="archived"))
                return _NO_SHIP_FROM
            return loc.address, f"location {loc.id}", f"{p}/ship_from/location_id", loc.id
        if sf.address is not None:
            a = sf.address
            if not a.postal_code and (a.country or "US").strip().upper() in ("US", "USA"):
                errs.append(RequiredField("ship_from.address.postal_code", pointer=f"{p}/ship_from/address/postal_code",
                                          detail="A US ship_from address needs a postal code (its ZIP places it "
                                                 "in its local jurisdictions)."))
                return _NO_SHIP_FROM
            return a, "the line's ship_from address", f"{p}/ship_from/address", ""
        errs.append(ValidationFailed("ship_from needs a location_id or an address.", pointer=f"{p}/ship_from"))
        return _NO_SHIP_FROM

