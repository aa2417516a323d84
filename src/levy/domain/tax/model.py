"""Inputs and outputs of the tax engine: plain frozen dataclasses, no I/O."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import date, datetime
from decimal import Decimal
from typing import Literal
from levy.domain.periods import Dated, within
from levy.domain.values import value

JurisdictionType = Literal["state", "county", "city", "special", "country", "province"]
ExemptReason = Literal["exemption_certificate", "resale", "non_taxable_product", "unregistered", "no_tax", "reverse_charge"]
CertificateTreatment = Literal["certificate_only", "certificate_and_product_tax_code"]

SALES_TAX_CODE = "SALES_TAX"


@value
class Address:
    line1: str | None = None
    city: str | None = None
    state: str | None = None
    country: str | None = "US"
    postal_code: str | None = None


@dataclass(frozen=True, slots=True)
class Registration(Dated):
    """The seller is registered in ``jurisdiction`` (e.g. "US-ST-CA") over [from, to]."""

    jurisdiction: str
    effective_from: date
    effective_to: date | None = None


@dataclass(frozen=True, slots=True)
class Certificate:
    """An approved exemption certificate row (jurisdiction like "US-ST-CA")."""

    jurisdiction: str
    exemption_type: str  # "resale", "manufacturing", "government", "nonprofit", "other"...
    status: str = "valid"
    starts_at: date | None = None
    expires_at: date | None = None

    def covers(self, on: date) -> bool:
        if self.status != "valid":
            return False
        return within(on, self.starts_at, self.expires_at)


@dataclass(frozen=True, slots=True)
class CustomerExemption:
    exempt: bool = False
    resale: bool = False
    manufacturing: bool = False
    certificates: tuple[Certificate, ...] = ()


@dataclass(frozen=True, slots=True)
class ExemptionSettings:
    exemption_management: bool = False
    certificate_treatment: CertificateTreatment = "certificate_only"


@value
class Discount:
    id: str
    amount: int


@dataclass(frozen=True, slots=True)
class VatCheck:
    """The answer of the EU's VIES service about one VAT number (docs/international.md, "VIES").

    ``result``: ``valid`` or ``invalid`` (VIES answered), ``unavailable`` (no answer: down, slow, a
    member state's system unavailable); ``checked_on``: the consultation date VIES gave (the day
    asked when unavailable); ``request_identifier``: VIES's consultation number ("" when VIES gave
    none); ``detail``: why it was unavailable ("" otherwise)."""

    vat_number: str  # country prefix and number as asked, e.g. "DE123456788"
    result: str
    checked_on: date
    request_identifier: str = ""
    detail: str = ""


@dataclass(frozen=True, slots=True)
class TaxId:
    """A customer's tax id as sent (spec 2.5 ``tax_ids``: country, type, value), with the online
    check of an EU VAT number when one was made (``online``)."""

    type: str
    value: str
    country: str | None = None
    online: VatCheck | None = None


@value
class LineInput:
    """One line, already parsed by the transport adapter.

    ``category`` is the category path (e.g. "CLOTHING.APPAREL.SHIRTS") and
    ``attributes`` its trailing attribute codes. ``is_sales_tax`` marks a
    collected-tax line (section 4.7); ``sales_tax_violation`` says its codes broke
    rule 1 (other codes beside it, an attribute suffix): see
    :func:`levy.domain.tax.codes.parse_tax_codes`.
    """

    id: str
    quantity: Decimal
    unit_price: int
    category: str | None = None
    attributes: tuple[str, ...] = ()
    is_sales_tax: bool = False
    from_marked_product: bool = False
    sales_tax_violation: bool = False
    address: Address | None = None
    discounts: tuple[Discount, ...] = ()
    discount_amount: int = 0
    vendor_discount_amount: int = 0
    exemption: CustomerExemption | None = None
    customer_detail: str | None = None
    pointer: str = ""  # JSON pointer of this line, e.g. "/line_items/0"
    # Where the line ships from: a location's or the line's own address, None = destination as always.
    ship_from: Address | None = None
    ship_from_label: str = ""  # e.g. "location loc_..." or "the line's ship_from address"
    ship_from_pointer: str = ""  # JSON pointer of the address for resolution errors
    ship_from_location: str = ""  # the location's id when the ship-from is a business location
    # Levy extension: the line's amount includes its tax (tax_behavior "inclusive").
    inclusive: bool = False
    # The customer's tax ids (spec 2.5; TaxId): reverse charge (levy.domain.tax.international) outside the US.
    tax_ids: tuple[TaxId, ...] = ()


@value
class CalculationInput:
    lines: tuple[LineInput, ...]
    currency: str = "USD"
    transaction_date: datetime | date | None = None
    discount_amount: int = 0
    vendor_discount_amount: int = 0
    include_unregistered: bool = False


@value
class TaxRow:
    jurisdiction_code: str
    jurisdiction_name: str
    jurisdiction_type: JurisdictionType
    tax_rate: Decimal
    taxable_base: int
    tax_amount: int
    is_registered: bool
    rule_name: str
    detail: str = ""
    tax_type: str = "sales_tax"
    exempt_reason: ExemptReason | None = None
    tax_amount_before_discounts: int = 0
    # Which address put the row there: "origin", "destination", or "" when the line had no ship-from.
    sourcing: str = ""


@value
class DiscountResult:
    id: str
    amount: int
    tax_amount_reduction: int


@value
class LineResult:
    id: str
    tax_amount: int
    tax_amount_before_discounts: int
    taxes: tuple[TaxRow, ...]
    discounts: tuple[DiscountResult, ...]
    amount: int  # quantity x unit_price, rounded half up (inclusive: less the tax it includes before discounts)
    taxable_amount: int  # amount less its own discounts and its share of discount_amount
    is_sales_tax: bool = False
    detail: str = ""
    # How the line's address was resolved (levy.domain.tax.local_rates.RESOLUTION_LEVELS); "" for collected-tax lines.
    resolution: str = ""
    # The sourcing rule applied: "destination", "origin", "mixed"; "" when the line had no ship-from.
    sourcing: str = ""
    # The line's amount included its tax; ``taxable_amount`` is then its price before tax
    # (``taxable_amount + tax_amount`` = the amount less discounts) and ``amount`` the amount before
    # discounts less its tax before discounts, so that returns count sales net of the tax they include.
    inclusive: bool = False
    # The online (VIES) checks of the line's EU VAT ids, when the server makes them.
    vat_checks: tuple[VatCheck, ...] = ()


@value
class CalculationResult:
    tax_amount: int
    currency: str
    lines: tuple[LineResult, ...] = field(default_factory=tuple)
