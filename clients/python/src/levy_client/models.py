"""Typed request and response bodies (spec section 2, plus Levy's extensions).

They are ``TypedDict``s: a request is a plain ``dict`` a type checker can verify,
and a response is the decoded JSON, unchanged. Amounts are strings holding
integers in minor units (``"1000"`` is $10.00), as on the wire. Input types are
partial (``total=False``): send only what you set; ``None`` sends JSON null.
"""

from __future__ import annotations

from typing import Any, Generic, Literal, NotRequired, Required, TypedDict, TypeVar

T = TypeVar("T")


class Page(TypedDict, Generic[T]):
    """One page of a list (spec section 4): ``data`` and ``has_more``."""

    data: list[T]
    has_more: bool


# ------------------------------------------------------------------ errors (spec 7.1)


class ErrorSource(TypedDict, total=False):
    pointer: Required[str | None]
    parameter: str


class ErrorObject(TypedDict):
    status: str
    code: str
    title: str
    detail: str
    source: NotRequired[ErrorSource]
    meta: NotRequired[dict[str, Any] | None]


# ------------------------------------------------------------------ customers (spec 2.1, 4.1, 4.2)


class CustomerInput(TypedDict, total=False):
    source_id: str
    source: str
    source_account_id: str
    name: str | None
    email: str | None
    source_updated_at: str | None


class ExemptionOverrides(TypedDict):
    exempt: bool | None
    resale: bool | None
    manufacturing: bool | None


class ExemptionJurisdiction(TypedDict):
    jurisdiction: str
    jurisdiction_name: str
    exemption_type: str
    status: str
    starts_at: str | None
    expires_at: str | None
    certificate_id: str


class CustomerExemption(TypedDict):
    overrides: ExemptionOverrides | None
    jurisdictions: list[ExemptionJurisdiction]
    updated_at: str | None


class Customer(TypedDict):
    id: str
    source_id: str
    source: str
    source_account_id: str
    name: str | None
    email: str | None
    merged_into_customer_id: str | None
    source_updated_at: str | None
    created_at: str
    updated_at: str
    exemption: CustomerExemption | None


BatchStatus = Literal["created", "updated", "stale", "deleted", "failed"]


class BatchSummary(TypedDict):
    created: int
    updated: int
    stale: int
    deleted: int
    failed: int


class BatchResult(TypedDict):
    index: int
    status: BatchStatus
    customer: Customer | None
    errors: list[ErrorObject] | None


class BatchResponse(TypedDict):
    object: Literal["batch"]
    summary: BatchSummary
    data: list[BatchResult]


# ------------------------------------------------------------------ products and reference data (2.2-2.4)


class ProductInput(TypedDict, total=False):
    source_id: str
    source: str
    source_account_id: str
    name: str
    description: str | None
    source_category: str | None
    tax_codes: list[str]
    source_updated_at: str | None


class Product(TypedDict):
    id: str
    source_id: str
    source: str
    source_account_id: str
    name: str
    description: str | None
    source_category: str | None
    tax_codes: list[str]
    resolved_tax_codes: list[str]
    source_updated_at: str | None
    created_at: str
    updated_at: str
    archived_at: str | None
    marked_sales_tax: bool


class ProductTaxCode(TypedDict):
    code: str
    description: str | None


class ProductAttributeGroup(TypedDict):
    key: str
    name: str
    exclusive: bool


class ProductAttribute(TypedDict):
    code: str
    name: str
    description: str
    group: ProductAttributeGroup | None
    ptcs: list[str]


# ------------------------------------------------------------------ line items and calculations (2.5-2.7)


class Address(TypedDict, total=False):
    line1: str | None
    city: str | None
    state: str | None
    country: str | None
    postal_code: str | None


class TaxId(TypedDict, total=False):
    country: str | None
    type: str | None
    value: str | None


class CustomerPreset(TypedDict, total=False):
    id: str  # the customer's source_id, not its cust_ id (spec 2.5)
    source: str
    source_account_id: str


class ProductPreset(TypedDict, total=False):
    id: str  # the product's prd_ id
    source: str


class LineProduct(TypedDict, total=False):
    tax_attributes: list[str]
    preset: ProductPreset | None


class LineCustomer(TypedDict, total=False):
    address: Address | None
    tax_ids: list[TaxId]
    preset: CustomerPreset | None


class LineDiscountInput(TypedDict, total=False):
    id: str
    amount: str


class LineItemInput(TypedDict, total=False):
    id: str
    quantity: str
    unit_price: str
    product: LineProduct
    customer: LineCustomer
    discounts: list[LineDiscountInput]
    discount_amount: str
    vendor_discount_amount: str


class CalculationRequest(TypedDict, total=False):
    currency: str
    discount_amount: str
    vendor_discount_amount: str
    transaction_date: str
    line_items: list[LineItemInput]


class Tax(TypedDict):
    detail: str
    jurisdiction_name: str
    jurisdiction_type: str
    tax_amount: str
    tax_type: str
    is_registered: bool
    rule_name: str
    taxable_base: str
    tax_rate: str


class LineDiscount(TypedDict):
    id: str
    tax_amount_reduction: str


class CalculatedLineItem(TypedDict):
    id: str
    tax_amount: str
    tax_amount_before_discounts: str
    taxes: list[Tax]
    discounts: list[LineDiscount]


class Calculation(TypedDict):
    tax_amount: str
    currency: str
    line_items: list[CalculatedLineItem]


# ------------------------------------------------------------------ transactions (2.8, 4.6)

TransactionType = Literal["sale", "credit"]
TransactionStatus = Literal["draft", "finalized", "filed", "void"]


class TransactionInput(CalculationRequest, total=False):
    """Create (``type`` and ``status`` usually set) or partial update."""

    type: TransactionType
    status: TransactionStatus
    parent_transaction_id: str
    parent_reference_id: str
    reference_id: str
    tax_amount: str
    source: str


class TransactionLineItem(TypedDict):
    id: str
    quantity: str
    unit_price: str
    product: LineProduct | None
    customer: LineCustomer | None
    discounts: list[LineDiscountInput]
    discount_amount: str | None
    vendor_discount_amount: str | None
    tax_amount: str
    tax_amount_before_discounts: str
    taxes: list[Tax]
    discount_reductions: list[LineDiscount]


class Transaction(TypedDict):
    id: str
    type: TransactionType
    status: TransactionStatus
    currency: str
    discount_amount: str | None
    vendor_discount_amount: str | None
    transaction_date: str | None
    line_items: list[TransactionLineItem]
    parent_transaction_id: str | None
    parent_reference_id: str | None
    reference_id: str | None
    tax_amount: str | None
    filing_tax_amount: str
    filing_tax_amount_source: str
    calculated_tax_amount: str
    created_at: str
    updated_at: str
    held_off_returns_reason: str | None
    source: str | None
    tax_only_attributions: list[dict[str, Any]]
    collected_tax_amount: str | None
    provided_tax_amount: str | None


class TransactionFilters(TypedDict, total=False):
    """Query filters of ``GET /transactions`` (Levy's choice; the spec shows none)."""

    status: TransactionStatus
    type: TransactionType
    reference_id: str
    customer_id: str
    transaction_date_from: str
    transaction_date_to: str
    source: str


# ------------------------------------------------------------------ organization (Levy's extensions)


class OrganizationSettingsInput(TypedDict, total=False):
    name: str
    default_tax_codes: list[str]
    exemption_management: bool
    certificate_treatment: str


class OrganizationSettings(TypedDict):
    organization_id: str
    name: str | None
    default_tax_codes: list[str]
    exemption_management: bool | None
    certificate_treatment: str | None
    updated_at: str | None


class RegistrationInput(TypedDict, total=False):
    jurisdiction: Required[str]  # e.g. "US-ST-CA"
    registration_number: str
    effective_from: Required[str]  # YYYY-MM-DD
    effective_to: str | None


class Registration(TypedDict):
    id: str
    jurisdiction: str
    registration_number: str | None
    effective_from: str
    effective_to: str | None
    created_at: str
