"""Generated from docs/openapi.json by clients/python/scripts/gen-client. Do not edit:
run scripts/gen-protos (or clients/python/scripts/gen-client).

The models (TypedDicts), one ``Call`` per operation (``_ops``) and the methods of
``LevyClient`` (``SyncOperations``) and ``AsyncLevyClient`` (``AsyncOperations``)."""

import uuid
from collections.abc import AsyncIterator, Callable, Iterator
from typing import Any, Literal, Required, TypedDict, TypeVar
from urllib.parse import quote

from levy_client._core import Call, query

T = TypeVar("T")


def _p(value: str) -> str:
    return quote(value, safe="")


__all__ = [
    "OPERATIONS",
    "Address",
    "AddressInput",
    "ApiKey",
    "ApiKeyInput",
    "ArchiveLocationRequestBody",
    "AsyncOperations",
    "BatchCreateResult",
    "BatchCreateSummary",
    "BatchCreateTransactionsRequestBody",
    "BatchCreateTransactionsResponse",
    "BatchResult",
    "BatchSummary",
    "BatchUpsertCustomersRequestBody",
    "BatchUpsertCustomersResponse",
    "BusinessLocation",
    "BusinessLocationInput",
    "CalculatedLineItem",
    "Calculation",
    "CalculationDetail",
    "CalculationValidationError",
    "ConvertedTransaction",
    "CreateCalculationRequestBody",
    "Customer",
    "CustomerExemption",
    "CustomerInput",
    "CustomerPreset",
    "CustomerPresetInput",
    "Event",
    "EventData",
    "ExemptionCertificate",
    "ExemptionCertificateInput",
    "ExemptionJurisdiction",
    "ExemptionOverrides",
    "ExemptionOverridesInput",
    "Filing",
    "FilingInput",
    "HeldTransaction",
    "InternationalLiability",
    "InternationalNexus",
    "JsonApiError",
    "JsonApiErrorBody",
    "JurisdictionTotals",
    "LiabilityReport",
    "LineCustomer",
    "LineCustomerInput",
    "LineDiscount",
    "LineDiscountInput",
    "LineItemInput",
    "LineProduct",
    "LineProductInput",
    "ListApiKeysResponse",
    "ListCustomersResponse",
    "ListEventsResponse",
    "ListExemptionCertificatesResponse",
    "ListFilingTransactionsResponse",
    "ListFilingsResponse",
    "ListLocationsResponse",
    "ListProductAttributesResponse",
    "ListProductTaxCodesResponse",
    "ListProductsResponse",
    "ListRegistrationsResponse",
    "ListTransactionsResponse",
    "ListWebhookDeliveriesResponse",
    "ListWebhookEndpointsResponse",
    "LocationAddress",
    "LocationAddressInput",
    "MarketplaceTransaction",
    "MergeCustomerRequestBody",
    "NexusReport",
    "NexusState",
    "OrganizationSettings",
    "OrganizationSettingsInput",
    "Product",
    "ProductAttribute",
    "ProductAttributeGroup",
    "ProductInput",
    "ProductPreset",
    "ProductPresetInput",
    "ProductTaxCode",
    "Registration",
    "RegistrationInput",
    "ReplayWebhookDeliveryRequestBody",
    "RestoreCustomerRequestBody",
    "ReturnTaxOnlyAllocation",
    "ReturnTransaction",
    "RotateWebhookEndpointSecretRequestBody",
    "ServiceVersion",
    "ShipFrom",
    "ShipFromInput",
    "SyncOperations",
    "Tax",
    "TaxId",
    "TaxIdInput",
    "TaxOnlyAttribution",
    "Transaction",
    "TransactionInput",
    "TransactionLineItem",
    "TransactionLineItemInput",
    "UnarchiveLocationRequestBody",
    "VatCheck",
    "WebhookAttempt",
    "WebhookDelivery",
    "WebhookEndpoint",
    "WebhookEndpointInput",
]

# Models: one per component schema.

class Address(TypedDict, total=False):
    """A postal address."""
    line1: Required[str | None]
    """Street line."""
    city: Required[str | None]
    """City."""
    state: Required[str | None]
    """State or region code, for example `CA`."""
    country: Required[str | None]
    """ISO 3166-1 alpha-2 country code, for example `US`."""
    postal_code: Required[str | None]
    """Postal code: a ZIP (`94103`) or ZIP+4 (`94103-1234`) in the US."""


class AddressInput(TypedDict, total=False):
    """A postal address."""
    line1: str | None
    """Street line."""
    city: str | None
    """City."""
    state: str | None
    """State or region code, for example `CA`."""
    country: str | None
    """ISO 3166-1 alpha-2 country code, for example `US`."""
    postal_code: str | None
    """Postal code: a ZIP (`94103`) or ZIP+4 (`94103-1234`) in the US."""


class ApiKey(TypedDict, total=False):
    """An API key. The secret is returned only by CreateApiKey."""
    id: Required[str]
    """Identifier, prefix `key_`."""
    name: Required[str | None]
    """Name given at creation."""
    admin: Required[bool | None]
    """Admin-scoped keys may use the organization service."""
    prefix: Required[str]
    """The first characters of the secret, to recognise it."""
    secret: Required[str | None]
    """The secret: only in the response of CreateApiKey, otherwise null."""
    created_at: Required[str | None]
    """Creation time."""
    last_used_at: Required[str | None]
    """Last use, or null."""
    revoked_at: Required[str | None]
    """Revocation time, or null."""


class ApiKeyInput(TypedDict, total=False):
    """An API key. The secret is returned only by CreateApiKey."""
    name: str | None
    """Name given at creation."""
    admin: bool | None
    """Admin-scoped keys may use the organization service."""


class ArchiveLocationRequestBody(TypedDict, total=False):
    """Request of ArchiveLocation."""


class BatchCreateResult(TypedDict, total=False):
    """The result of one transactions batch item."""
    index: Required[int]
    """Position in the request, from 0."""
    status: Required[str]
    """`created`, `existing` or `failed`."""
    transaction: Required["Transaction | None"]
    """The transaction as stored, for created and existing; else null."""
    errors: Required["list[JsonApiError] | None"]
    """The errors, for failed; else null."""


class BatchCreateSummary(TypedDict, total=False):
    """Counts of a transactions batch per status."""
    created: Required[int]
    """Transactions created."""
    existing: Required[int]
    """Items whose `reference_id` was already stored (unchanged)."""
    failed: Required[int]
    """Items that failed."""


class BatchCreateTransactionsRequestBody(TypedDict, total=False):
    """Request of BatchCreateTransactions."""
    transactions: "list[TransactionInput | dict[str, Any]] | None"
    """Transactions to create, at most 1000, in the shape of POST /transactions;
    `status` may also be `filed` (history already reported).
    """


class BatchCreateTransactionsResponse(TypedDict, total=False):
    """Result of BatchCreateTransactions."""
    object: Required[str]
    """Always `batch`."""
    summary: Required["BatchCreateSummary | None"]
    """Counts per status."""
    data: Required["list[BatchCreateResult]"]
    """One result per request item, in request order."""


class BatchResult(TypedDict, total=False):
    """The result of one batch item."""
    index: Required[int]
    """Position in the request, from 0."""
    status: Required[str]
    """`created`, `updated`, `stale`, `deleted` or `failed`."""
    customer: Required["Customer | None"]
    """The customer as stored, for created, updated and stale; else null."""
    errors: Required["list[JsonApiError] | None"]
    """The errors, for failed; else null."""


class BatchSummary(TypedDict, total=False):
    """Counts of a batch upsert per status."""
    created: Required[int]
    """Customers created."""
    updated: Required[int]
    """Customers updated."""
    stale: Required[int]
    """Items older than the stored customer (unchanged)."""
    deleted: Required[int]
    """Items matching a deleted customer (unchanged)."""
    failed: Required[int]
    """Items that failed."""


class BatchUpsertCustomersRequestBody(TypedDict, total=False):
    """Request of BatchUpsertCustomers."""
    data: "list[CustomerInput | dict[str, Any]] | None"
    """Customers to create or update, at most 1000."""


class BatchUpsertCustomersResponse(TypedDict, total=False):
    """Result of BatchUpsertCustomers."""
    object: Required[str]
    """Always `batch`."""
    summary: Required["BatchSummary | None"]
    """Counts per status."""
    data: Required["list[BatchResult]"]
    """One result per request item, in request order."""


class BusinessLocation(TypedDict, total=False):
    """One of the organization's places of business."""
    id: Required[str]
    """Identifier, prefix `loc_`."""
    name: Required[str]
    """Name, for example `Austin warehouse`."""
    address: Required["LocationAddress | None"]
    """The location's address."""
    is_default: Required[bool]
    """The default ship-from location of line items that name none (one at a time)."""
    effective_from: Required[str]
    """First day sales ship from here (YYYY-MM-DD)."""
    effective_to: Required[str | None]
    """Last day (YYYY-MM-DD), or null for open-ended."""
    archived_at: Required[str | None]
    """When the location was archived, or null."""
    created_at: Required[str]
    """Record creation time."""
    updated_at: Required[str]
    """Record last update time."""


class BusinessLocationInput(TypedDict, total=False):
    """One of the organization's places of business."""
    name: str | None
    """Name, for example `Austin warehouse`."""
    address: "LocationAddressInput | None"
    """The location's address."""
    is_default: bool | None
    """The default ship-from location of line items that name none (one at a time)."""
    effective_from: str | None
    """First day sales ship from here (YYYY-MM-DD)."""
    effective_to: str | None
    """Last day (YYYY-MM-DD), or null for open-ended."""


class CalculatedLineItem(TypedDict, total=False):
    """Tax of one line (spec 2.7)."""
    id: Required[str]
    """Line identifier."""
    tax_amount: Required[str]
    """Tax of the line, in minor units."""
    tax_amount_before_discounts: Required[str]
    """Tax the line would carry without discounts."""
    taxes: Required["list[Tax]"]
    """Per-jurisdiction rows."""
    discounts: Required["list[LineDiscount]"]
    """Per-discount tax reductions."""
    resolution: Required[str]
    """Levy extension: how precisely the line's address was resolved to its
    local jurisdictions, first match wins: `address` (a street range matched
    `line1`), `zip4` (a ZIP+4 range), `city` (the address city among the
    ZIP's candidates), `zip5` (the ZIP's default candidate) or `state`
    (state-level only); outside the US `country` or `province` (a Canadian
    province, docs/international.md). Empty for collected-tax lines. Each tax row's
    `detail` says the same in words.
    """
    sourcing: Required[str]
    """Levy extension: the sourcing rule applied to the line (docs/sourcing.md):
    `destination`, `origin` or `mixed` (per row, see `Tax.sourcing`); empty
    when the line had no ship-from (neither its own nor a default location).
    """
    tax_behavior: Required[str]
    """Levy extension: how the line was taxed, `exclusive` or `inclusive` (its
    amount included the tax; its rows' `taxable_base` is then its price before
    tax, and that price + `tax_amount` = the amount less discounts).
    """
    vat_checks: Required["list[VatCheck]"]
    """Levy extension: the online checks of the line's EU VAT ids against the
    European Commission's VIES service, when the server is configured for
    them (`LEVY_VIES_URL`; docs/international.md, "VIES"). Empty otherwise.
    """


class Calculation(TypedDict, total=False):
    """The result of a calculation (spec 2.7)."""
    tax_amount: Required[str]
    """Total tax due, in minor units."""
    currency: Required[str]
    """ISO 4217 code."""
    line_items: Required["list[CalculatedLineItem]"]
    """Per-line results."""


class CalculationDetail(TypedDict, total=False):
    detail: Required[str]


class CalculationValidationError(TypedDict, total=False):
    """422 of the calculation endpoint (spec section 7.2)."""
    detail: Required[list[dict[str, Any]]]


class ConvertedTransaction(TypedDict, total=False):
    """Levy extension (issue 37): a transaction on the return in another currency
    than the filing currency, converted at its stored rate.
    """
    transaction_id: Required[str]
    """The transaction's `txn_` id."""
    currency: Required[str]
    """The transaction's own currency (ISO 4217)."""
    exchange_rate: Required[str]
    """Units of the filing currency per unit of `currency`."""
    exchange_rate_date: Required[str]
    """The day the rate applies to (YYYY-MM-DD)."""
    original_gross_sales: Required[str]
    """Its goods lines' gross in the state in minor units of `currency`."""
    gross_sales: Required[str]
    """The same converted: minor units of the filing currency."""


class CreateCalculationRequestBody(TypedDict, total=False):
    """Request of CreateCalculation (spec 2.6)."""
    currency: str | None
    """ISO 4217 code (default `USD`)."""
    discount_amount: str | None
    """Transaction-level discount in minor units; reduces the taxable base."""
    vendor_discount_amount: str | None
    """Vendor-funded discount in minor units; does not reduce the base."""
    transaction_date: str | None
    """Date of the transaction (default: now)."""
    line_items: "list[LineItemInput] | None"
    """The line items."""
    tax_behavior: str | None
    """Levy extension: the `tax_behavior` of the lines that send none,
    `exclusive` (the default) or `inclusive`.
    """


class Customer(TypedDict, total=False):
    """A buyer record (spec section 2.1)."""
    id: Required[str]
    """Stable identifier, prefix `cust_`."""
    source_id: Required[str]
    """Identifier in the source system. Required on create; not blank."""
    source: Required[str]
    """Source system: `native` (default) or one of the supported integrations."""
    source_account_id: Required[str]
    """Account in the source system; `__default__` for sources that do not
    keep customers per account.
    """
    name: Required[str | None]
    """Name, or null."""
    email: Required[str | None]
    """Email, or null. Need not be unique."""
    merged_into_customer_id: Required[str | None]
    """`cust_` id of the customer this one was merged into, or null."""
    source_updated_at: Required[str | None]
    """Last update time in the source system, or null if unknown."""
    created_at: Required[str]
    """Record creation time."""
    updated_at: Required[str]
    """Record last update time."""
    exemption: Required["CustomerExemption | None"]
    """Approved exemption certificates on file; returned on retrieve."""


class CustomerExemption(TypedDict, total=False):
    """Snapshot of a customer's approved exemption certificates (spec 2.1)."""
    overrides: Required["ExemptionOverrides | None"]
    """Customer-wide overrides."""
    jurisdictions: Required["list[ExemptionJurisdiction]"]
    """One row per jurisdiction covered by an approved certificate."""
    updated_at: Required[str | None]
    """Last change of the snapshot, or null."""


class CustomerInput(TypedDict, total=False):
    """A buyer record (spec section 2.1)."""
    source_id: str | None
    """Identifier in the source system. Required on create; not blank."""
    source: str | None
    """Source system: `native` (default) or one of the supported integrations."""
    source_account_id: str | None
    """Account in the source system; `__default__` for sources that do not
    keep customers per account.
    """
    name: str | None
    """Name, or null."""
    email: str | None
    """Email, or null. Need not be unique."""
    source_updated_at: str | None
    """Last update time in the source system, or null if unknown."""


class CustomerPreset(TypedDict, total=False):
    """Reference to a stored customer by its source identifiers."""
    id: Required[str | None]
    """The customer's `source_id` (not the `cust_` id)."""
    source: Required[str | None]
    """The customer's source (default `native`)."""
    source_account_id: Required[str | None]
    """The customer's source account, to disambiguate."""


class CustomerPresetInput(TypedDict, total=False):
    """Reference to a stored customer by its source identifiers."""
    id: str | None
    """The customer's `source_id` (not the `cust_` id)."""
    source: str | None
    """The customer's source (default `native`)."""
    source_account_id: str | None
    """The customer's source account, to disambiguate."""


class Event(TypedDict, total=False):
    """Something that happened to one object."""
    id: Required[str]
    """Identifier, prefix `evt_`."""
    type: Required[str]
    """What happened, for example `transaction.finalized` (docs/events.md lists
    every type).
    """
    created_at: Required[str | None]
    """When it happened (the commit of the change)."""
    object_type: Required[str]
    """The kind of object: `transaction`, `customer`, `filing`,
    `webhook_endpoint`, `certificate` or `nexus_state`.
    """
    object_id: Required[str]
    """The object's id (`txn_`, `cust_`, `fil_`, `we_`, `cexc_`; a nexus state:
    its jurisdiction, for example `US-ST-TX`).
    """
    data: Required["EventData | None"]
    """The object as the API returned it just after the change."""


class EventData(TypedDict, total=False):
    """The object of an event: one of these is set, the one `object_type` names."""
    transaction: Required["Transaction | None"]
    """The transaction (sale or credit) of a `transaction.*` or `credit.*` event."""
    customer: Required["Customer | None"]
    """The customer of a `customer.*` event."""
    filing: Required["Filing | None"]
    """The filing of a `filing.*` event."""
    webhook_endpoint: Required["WebhookEndpoint | None"]
    """The endpoint of a `webhook_endpoint.*` event (without its secret)."""
    certificate: Required["ExemptionCertificate | None"]
    """The exemption certificate of a `certificate.*` event, as
    `GET /customers/{customer_id}/exemption-certificates` lists it.
    """
    nexus_state: Required["NexusState | None"]
    """The state of a `nexus.*` event, as its line of `GET /nexus` on the day the
    event was produced.
    """


class ExemptionCertificate(TypedDict, total=False):
    """An exemption certificate on file for a customer."""
    id: Required[str]
    """Identifier, prefix `cexc_`."""
    customer_id: Required[str]
    """The customer's `cust_` id."""
    jurisdiction: Required[str | None]
    """Jurisdiction code, for example `US-ST-CA`."""
    exemption_type: Required[str | None]
    """`resale`, `manufacturing`, `government`, `nonprofit`, `agricultural` or `other`."""
    status: Required[str | None]
    """`in_review`, `valid`, `rejected`, `expired` or `renewed`."""
    starts_at: Required[str | None]
    """First day covered (YYYY-MM-DD), or null."""
    expires_at: Required[str | None]
    """Last day covered (YYYY-MM-DD), or null."""
    created_at: Required[str | None]
    """Record creation time."""
    updated_at: Required[str | None]
    """Record last update time."""


class ExemptionCertificateInput(TypedDict, total=False):
    """An exemption certificate on file for a customer."""
    jurisdiction: str | None
    """Jurisdiction code, for example `US-ST-CA`."""
    exemption_type: str | None
    """`resale`, `manufacturing`, `government`, `nonprofit`, `agricultural` or `other`."""
    status: str | None
    """`in_review`, `valid`, `rejected`, `expired` or `renewed`."""
    starts_at: str | None
    """First day covered (YYYY-MM-DD), or null."""
    expires_at: str | None
    """Last day covered (YYYY-MM-DD), or null."""


class ExemptionJurisdiction(TypedDict, total=False):
    """One jurisdiction row of the exemption snapshot."""
    jurisdiction: Required[str]
    """Jurisdiction code, for example `US-ST-CA`."""
    jurisdiction_name: Required[str]
    """Jurisdiction name, for example `California`."""
    exemption_type: Required[str]
    """Exemption type, for example `resale`."""
    status: Required[str]
    """Certificate status, for example `valid`."""
    starts_at: Required[str | None]
    """First day covered (YYYY-MM-DD), or null."""
    expires_at: Required[str | None]
    """Last day covered (YYYY-MM-DD), or null."""
    certificate_id: Required[str]
    """Certificate id, prefix `cexc_`."""


class ExemptionOverrides(TypedDict, total=False):
    """Customer-wide exemption overrides. Always all three in responses; on
    update an unset (null or omitted) field keeps its current value.
    """
    exempt: Required[bool | None]
    """The customer is exempt everywhere."""
    resale: Required[bool | None]
    """The customer buys for resale everywhere."""
    manufacturing: Required[bool | None]
    """The customer buys for manufacturing everywhere."""


class ExemptionOverridesInput(TypedDict, total=False):
    """Customer-wide exemption overrides. Always all three in responses; on
    update an unset (null or omitted) field keeps its current value.
    """
    exempt: bool | None
    """The customer is exempt everywhere."""
    resale: bool | None
    """The customer buys for resale everywhere."""
    manufacturing: bool | None
    """The customer buys for manufacturing everywhere."""


class Filing(TypedDict, total=False):
    """A return for one state and period."""
    id: Required[str]
    """Identifier, prefix `fil_`."""
    jurisdiction: Required[str | None]
    """State jurisdiction code, for example `US-ST-CA`, or a return outside
    the US (issue 34): `EU-OSS`, `CA`, `CA-PR-QC`, `CA-PR-BC`, `CA-PR-SK`,
    `CA-PR-MB`, `GB`, `AU`.
    """
    period_start: Required[str | None]
    """First day of the period (YYYY-MM-DD)."""
    period_end: Required[str | None]
    """Last day of the period (YYYY-MM-DD)."""
    status: Required[str | None]
    """`prepared` or `filed`."""
    jurisdictions: Required["list[JurisdictionTotals]"]
    """Per-jurisdiction totals."""
    held_transactions: Required["list[HeldTransaction]"]
    """Transactions held off the return."""
    filing_tax_amount: Required[str]
    """Total tax due on the return."""
    credits_carried_forward: Required[str]
    """Credits carried forward to a later return."""
    transaction_count: Required[int]
    """Number of transactions on the return."""
    created_at: Required[str | None]
    """Record creation time."""
    filed_at: Required[str | None]
    """When it was filed, or null."""
    totals: Required["JurisdictionTotals | None"]
    """The sum of the jurisdictions (`jurisdiction` is `TOTAL`)."""
    tax_only_allocations: Required["list[ReturnTaxOnlyAllocation]"]
    """Tax-only allocations on the return."""
    currency: Required[str]
    """Levy extension: the currency of every amount (the filing currency: `USD`
    for a US state; `EUR`, `CAD`, `GBP`, `AUD` outside the US).
    """
    marketplace_transactions: Required["list[MarketplaceTransaction]"]
    """Levy extension: marketplace sales of the period, left off the return."""
    converted_transactions: Required["list[ConvertedTransaction]"]
    """Levy extension: the return's transactions in another currency."""


class FilingInput(TypedDict, total=False):
    """A return for one state and period."""
    jurisdiction: str | None
    """State jurisdiction code, for example `US-ST-CA`, or a return outside
    the US (issue 34): `EU-OSS`, `CA`, `CA-PR-QC`, `CA-PR-BC`, `CA-PR-SK`,
    `CA-PR-MB`, `GB`, `AU`.
    """
    period_start: str | None
    """First day of the period (YYYY-MM-DD)."""
    period_end: str | None
    """Last day of the period (YYYY-MM-DD)."""
    status: str | None
    """`prepared` or `filed`."""


class HeldTransaction(TypedDict, total=False):
    """A transaction left off a return, and why."""
    transaction_id: Required[str]
    """The transaction's `txn_` id."""
    reason: Required[str]
    """Why it is held off returns (a code)."""
    detail: Required[str]
    """The reason in words."""


class InternationalLiability(TypedDict, total=False):
    """Levy extension (issue 34): one return outside the US over a liability
    report's range (docs/international.md, "Returns").
    """
    jurisdiction: Required[str]
    """The return's jurisdiction: `EU-OSS`, `CA`, `CA-PR-QC`, `GB`, `AU`..."""
    currency: Required[str]
    """The currency of its amounts."""
    jurisdictions: Required["list[JurisdictionTotals]"]
    """One row per jurisdiction, tax type and rate; reverse-charged sales in
    rows of their own (`tax_type` `reverse_charge`).
    """
    totals: Required["JurisdictionTotals | None"]
    """The sum of the taxed rows (`jurisdiction` is `TOTAL`)."""
    held_transactions: Required["list[HeldTransaction]"]
    """Transactions held off (each listed once)."""
    converted_transactions: Required["list[ConvertedTransaction]"]
    """Transactions in another currency, converted."""


class InternationalNexus(TypedDict, total=False):
    """Levy extension (issue 34): one registration threshold outside the US on
    the report's date (docs/international.md, "Thresholds").
    """
    jurisdiction: Required[str]
    """The registration that answers it: `EU-OSS`, `CA`, `AU`, `GB`."""
    name: Required[str]
    """What the threshold is about."""
    currency: Required[str]
    """The currency of the amounts (`EUR`, `CAD`, `AUD`, `GBP`)."""
    sales_amount: Required[str]
    """B2C sales over the deciding period, minor units of `currency` (sales in
    another currency at the ECB reference rate of their day).
    """
    transaction_count: Required[int]
    """Sales counted over the period."""
    sales_threshold: Required[str | None]
    """The threshold, minor units of `currency`; null: registration from the
    first sale.
    """
    measurement_period: Required[str]
    """`current_or_previous_calendar_year`, `trailing_12_months` or
    `from_first_sale`.
    """
    crossed_when: Required[str]
    """`exceeds` or `meets`: how the sales cross the threshold."""
    period_start: Required[str]
    """First day of the deciding period (YYYY-MM-DD)."""
    period_end: Required[str]
    """Last day of the deciding period (YYYY-MM-DD)."""
    threshold_share: Required[str | None]
    """Fraction of the threshold reached (`1` = 100 %); null without a threshold."""
    exceeded: Required[bool]
    """The sales crossed the threshold."""
    is_registered: Required[bool]
    """The organization holds the registration on the date."""
    needs_registration: Required[bool]
    """Crossed and not registered."""
    threshold_source: Required[str]
    """The law and official guidance of the threshold."""
    held_transactions: Required["list[HeldTransaction]"]
    """Transactions in another currency without a published rate for their day
    (not counted).
    """


class JsonApiError(TypedDict, total=False):
    status: Required[str]
    """HTTP status, as a string."""
    code: Required[str]
    """Machine-readable error code, for example `validation_error`."""
    title: Required[str]
    detail: Required[str]
    source: dict[str, Any]
    meta: Required[dict[str, Any] | None]
    """What the error concerns, by code (for example `existing_customer_id`)."""


class JsonApiErrorBody(TypedDict, total=False):
    """Error body (spec section 7.1)."""
    errors: Required["list[JsonApiError]"]


class JurisdictionTotals(TypedDict, total=False):
    """Totals of one jurisdiction on a return or report."""
    jurisdiction: Required[str]
    """Jurisdiction code, for example `US-ST-CA`."""
    jurisdiction_name: Required[str]
    """Jurisdiction name."""
    jurisdiction_type: Required[str]
    """`state`, `county`, `city` or `special`."""
    gross_sales: Required[str]
    """Gross sales, minor units."""
    exempt_sales_certificate: Required[str]
    """Exempt sales by certificate."""
    exempt_sales_non_taxable: Required[str]
    """Exempt sales of non-taxable products."""
    exempt_sales_unregistered: Required[str]
    """Sales not taxed because the seller was not registered."""
    taxable_sales: Required[str]
    """Taxable sales."""
    tax_calculated: Required[str]
    """Tax calculated by Levy."""
    tax_provided: Required[str]
    """Tax provided by the caller (collected)."""
    filing_tax_amount: Required[str]
    """Tax due used for filing, credits netted."""
    tax_only_allocated: Required[str]
    """Tax of tax-only transactions allocated here."""
    discounts: Required[str]
    """Discounts: gross sales less the lines' net amounts."""
    sales_filing_tax: Required[str]
    """Filing tax of the period's sales."""
    credits_filing_tax: Required[str]
    """Filing tax of the period's credits (a positive number)."""
    carried_credits_applied: Required[str]
    """Credits carried from the previous return applied here."""
    credits_carried_forward: Required[str]
    """Credits left over for the next return."""
    tax_rate: Required[str | None]
    """Levy extension (issue 34), returns outside the US only (null on US
    returns): the row's rate, a decimal fraction (`0.2` for 20 %).
    """
    tax_type: Required[str | None]
    """Levy extension (issue 34), returns outside the US only: `vat`, `gst`,
    `hst`, `pst` or `qst`; `reverse_charge` for the sales the customer
    accounts for (listed apart: rate 0, tax 0, outside the totals).
    """


LiabilityReport = TypedDict("LiabilityReport", {"from": Required[str], "to": Required[str], "jurisdictions": Required["list[JurisdictionTotals]"], "held_transactions": Required["list[HeldTransaction]"], "state_totals": Required["list[JurisdictionTotals]"], "tax_only_allocations": Required["list[ReturnTaxOnlyAllocation]"], "currency": Required[str], "marketplace_transactions": Required["list[MarketplaceTransaction]"], "converted_transactions": Required["list[ConvertedTransaction]"], "international": Required["list[InternationalLiability]"]}, total=False)
# Liability totals over a range.


class LineCustomer(TypedDict, total=False):
    """Who buys on a line, and where."""
    address: Required["Address | None"]
    """Ship-to address."""
    tax_ids: Required["list[TaxId]"]
    """The buyer's tax ids."""
    preset: Required["CustomerPreset | None"]
    """A stored customer whose exemptions apply."""


class LineCustomerInput(TypedDict, total=False):
    """Who buys on a line, and where."""
    address: "AddressInput | None"
    """Ship-to address."""
    tax_ids: "list[TaxIdInput] | None"
    """The buyer's tax ids."""
    preset: "CustomerPresetInput | None"
    """A stored customer whose exemptions apply."""


class LineDiscount(TypedDict, total=False):
    """Tax removed from a line by one of its discounts."""
    id: Required[str]
    """Discount identifier."""
    tax_amount_reduction: Required[str]
    """Tax not charged because of the discount, in minor units."""


class LineDiscountInput(TypedDict, total=False):
    """A discount on a line (input). Levy's decision: `{id, amount}`."""
    id: str | None
    """Discount identifier, echoed in the response."""
    amount: str | None
    """Discount amount in minor units (integer string, not negative)."""


class LineItemInput(TypedDict, total=False):
    """A line item of a calculation or transaction request (spec 2.5)."""
    id: str | None
    """Line identifier."""
    quantity: str | None
    """Quantity, a decimal string (default "1")."""
    unit_price: str | None
    """Unit price in minor units (integer string)."""
    product: "LineProductInput | None"
    """What is sold."""
    customer: "LineCustomerInput | None"
    """Who buys, and where."""
    discounts: "list[LineDiscountInput] | None"
    """Discounts on this line."""
    discount_amount: str | None
    """Discount on this line in minor units; reduces its taxable base."""
    vendor_discount_amount: str | None
    """Vendor-funded discount on this line; does not reduce the base."""
    ship_from: "ShipFromInput | None"
    """Levy extension: where the line ships from (a business location or an
    address). Without it the organization's default location in effect on
    the transaction date is used; with no location at all the line is taxed
    at its delivery address. See docs/sourcing.md.
    """
    tax_behavior: str | None
    """Levy extension: `exclusive` (the default: tax is added to the amount) or
    `inclusive` (the amount, quantity x unit_price less discounts, already
    includes the tax: taxable base + tax = amount). Without it the request's
    `tax_behavior` applies. See docs/calculations.md.
    """


class LineProduct(TypedDict, total=False):
    """What is sold on a line."""
    tax_attributes: Required[list[str]]
    """Tax codes and attributes for the line; take precedence over the preset's."""
    preset: Required["ProductPreset | None"]
    """A stored product whose resolved tax codes apply."""


class LineProductInput(TypedDict, total=False):
    """What is sold on a line."""
    tax_attributes: list[str] | None
    """Tax codes and attributes for the line; take precedence over the preset's."""
    preset: "ProductPresetInput | None"
    """A stored product whose resolved tax codes apply."""


class ListApiKeysResponse(TypedDict, total=False):
    """A page of API keys."""
    data: Required["list[ApiKey]"]
    """Keys, newest first."""
    has_more: Required[bool]
    """More items follow this page."""


class ListCustomersResponse(TypedDict, total=False):
    """A page of customers."""
    data: Required["list[Customer]"]
    """Customers, newest first."""
    has_more: Required[bool]
    """More items follow this page."""


class ListEventsResponse(TypedDict, total=False):
    """A page of events."""
    data: Required["list[Event]"]
    """Events, newest first."""
    has_more: Required[bool]
    """More items follow this page."""


class ListExemptionCertificatesResponse(TypedDict, total=False):
    """A page of certificates."""
    data: Required["list[ExemptionCertificate]"]
    """Certificates, newest first."""
    has_more: Required[bool]
    """More items follow this page."""


class ListFilingTransactionsResponse(TypedDict, total=False):
    """A page of a return's transactions."""
    data: Required["list[ReturnTransaction]"]
    """Transactions in return order."""
    has_more: Required[bool]
    """More items follow this page."""


class ListFilingsResponse(TypedDict, total=False):
    """A page of filings."""
    data: Required["list[Filing]"]
    """Filings, newest first."""
    has_more: Required[bool]
    """More items follow this page."""


class ListLocationsResponse(TypedDict, total=False):
    """A page of locations."""
    data: Required["list[BusinessLocation]"]
    """Locations, newest first."""
    has_more: Required[bool]
    """More items follow this page."""


class ListProductAttributesResponse(TypedDict, total=False):
    """A page of product attributes."""
    data: Required["list[ProductAttribute]"]
    """Attributes, ordered by code."""
    has_more: Required[bool]
    """More items follow this page."""


class ListProductTaxCodesResponse(TypedDict, total=False):
    """A page of product tax codes."""
    data: Required["list[ProductTaxCode]"]
    """Tax codes, ordered by code."""
    has_more: Required[bool]
    """More items follow this page."""


class ListProductsResponse(TypedDict, total=False):
    """A page of products."""
    data: Required["list[Product]"]
    """Products, newest first."""
    has_more: Required[bool]
    """More items follow this page."""


class ListRegistrationsResponse(TypedDict, total=False):
    """A page of registrations."""
    data: Required["list[Registration]"]
    """Registrations, newest first."""
    has_more: Required[bool]
    """More items follow this page."""


class ListTransactionsResponse(TypedDict, total=False):
    """A page of transactions."""
    data: Required["list[Transaction]"]
    """Transactions, newest first."""
    has_more: Required[bool]
    """More items follow this page."""


class ListWebhookDeliveriesResponse(TypedDict, total=False):
    """A page of deliveries."""
    data: Required["list[WebhookDelivery]"]
    """Deliveries, newest first."""
    has_more: Required[bool]
    """More items follow this page."""


class ListWebhookEndpointsResponse(TypedDict, total=False):
    """A page of webhook endpoints."""
    data: Required["list[WebhookEndpoint]"]
    """Endpoints, newest first."""
    has_more: Required[bool]
    """More items follow this page."""


class LocationAddress(TypedDict, total=False):
    """A location's postal address."""
    line1: Required[str]
    """Street address."""
    line2: Required[str | None]
    """Suite, unit or floor, or null."""
    city: Required[str]
    """City."""
    state: Required[str | None]
    """State code, for example `TX` (required for a US address)."""
    postal_code: Required[str | None]
    """ZIP code `12345` or `12345-6789` (required for a US address; it must lie in the state)."""
    country: Required[str]
    """Two-letter country code (default `US`)."""


class LocationAddressInput(TypedDict, total=False):
    """A location's postal address."""
    line1: str | None
    """Street address."""
    line2: str | None
    """Suite, unit or floor, or null."""
    city: str | None
    """City."""
    state: str | None
    """State code, for example `TX` (required for a US address)."""
    postal_code: str | None
    """ZIP code `12345` or `12345-6789` (required for a US address; it must lie in the state)."""
    country: str | None
    """Two-letter country code (default `US`)."""


class MarketplaceTransaction(TypedDict, total=False):
    """Levy extension (issue 37): a marketplace sale (or its credit) left off
    the seller's return: the marketplace facilitator remits its tax.
    """
    transaction_id: Required[str]
    """The transaction's `txn_` id."""
    marketplace_facilitator: Required[str]
    """The facilitator's name."""
    gross_sales: Required[str]
    """Its goods lines' gross in the state, minor units of the filing currency
    (negative for a credit).
    """
    tax_amount: Required[str]
    """Its tax in the state (the facilitator's to remit), minor units."""


class MergeCustomerRequestBody(TypedDict, total=False):
    """Request of MergeCustomer."""
    into_customer_id: str | None
    """The `cust_` id of the surviving customer."""


class NexusReport(TypedDict, total=False):
    """Economic nexus status per state."""
    as_of: Required[str]
    """Evaluation date."""
    states: Required["list[NexusState]"]
    """States; crossed and unregistered first."""
    international: Required["list[InternationalNexus]"]
    """Levy extension (issue 34): the registration thresholds outside the US
    (EU, Canada, Australia, UK), each measured in its own currency.
    """
    approaching_share: Required[str]
    """Levy extension (issue 35): the organization's `nexus_approaching_share` (its settings),
    the share of a threshold from which a state is "approaching", for example `0.8`.
    """


class NexusState(TypedDict, total=False):
    """Economic nexus status of one state."""
    state: Required[str]
    """State code, for example `CA`."""
    sales_amount: Required[str]
    """Sales over the measurement period, minor units."""
    transaction_count: Required[int]
    """Transactions over the measurement period."""
    sales_threshold: Required[str | None]
    """Sales threshold, minor units, or null."""
    transaction_threshold: Required[int | None]
    """Transaction threshold, or null."""
    rule: Required[str]
    """`sales_only`, `sales_or_transactions` or `sales_and_transactions`."""
    measurement_period: Required[str]
    """Measurement period rule."""
    threshold_share: Required[str]
    """Share of the threshold reached, decimal string."""
    exceeded: Required[bool]
    """The threshold is exceeded."""
    is_registered: Required[bool]
    """The seller is registered there."""
    crossed_on: Required[str | None]
    """Date the threshold was crossed (YYYY-MM-DD), or null."""
    period_start: Required[str]
    """First day of the deciding measurement period."""
    period_end: Required[str]
    """Last day of the deciding measurement period."""
    threshold_source: Required[str]
    """Where the threshold comes from."""
    needs_registration: Required[bool]
    """Exceeded and not registered: the seller should register."""
    converted_transaction_count: Required[int]
    """Levy extension (issue 37): how many of the transactions counted over the
    measurement period are in another currency than the filing currency.
    """
    converted_transactions: Required["list[ConvertedTransaction]"]
    """Levy extension (issue 37): those transactions, converted at their stored
    rate (`gross_sales` in minor units of the filing currency; a credit negative).
    """


class OrganizationSettings(TypedDict, total=False):
    """The organization's tax settings."""
    organization_id: Required[str]
    """Organization id, prefix `org_`."""
    name: Required[str | None]
    """Organization name."""
    default_tax_codes: Required[list[str]]
    """Tax codes used for products without their own (never `SALES_TAX`)."""
    exemption_management: Required[bool | None]
    """When false, calculations ignore exemption certificates."""
    certificate_treatment: Required[str | None]
    """`certificate_only` or `certificate_and_product_tax_code`."""
    updated_at: Required[str | None]
    """Last change."""
    filing_currencies: Required[dict[str, str]]
    """The currency of the organization's returns per country: ISO 3166-1 alpha-2 country ->
    ISO 4217 currency, for example `{"US": "USD", "GB": "GBP"}`. Responses show every country
    with a currency (the defaults with the organization's choices over them). A PATCH replaces
    the organization's choices: a country left out goes back to its default (or to none). US
    returns are in USD: another currency for US is refused (422 at `/filing_currencies/US`).
    """
    nexus_approaching_share: Required[str | None]
    """The share of a state's economic nexus threshold from which its nexus standing is
    "approaching" (the console's nexus page, the `nexus.threshold_approaching` event): a decimal
    string above 0 and below 1, default `0.8`. Sent as null: back to the default.
    """


class OrganizationSettingsInput(TypedDict, total=False):
    """The organization's tax settings."""
    name: str | None
    """Organization name."""
    default_tax_codes: list[str] | None
    """Tax codes used for products without their own (never `SALES_TAX`)."""
    exemption_management: bool | None
    """When false, calculations ignore exemption certificates."""
    certificate_treatment: str | None
    """`certificate_only` or `certificate_and_product_tax_code`."""
    filing_currencies: dict[str, str] | None
    """The currency of the organization's returns per country: ISO 3166-1 alpha-2 country ->
    ISO 4217 currency, for example `{"US": "USD", "GB": "GBP"}`. Responses show every country
    with a currency (the defaults with the organization's choices over them). A PATCH replaces
    the organization's choices: a country left out goes back to its default (or to none). US
    returns are in USD: another currency for US is refused (422 at `/filing_currencies/US`).
    """
    nexus_approaching_share: str | None
    """The share of a state's economic nexus threshold from which its nexus standing is
    "approaching" (the console's nexus page, the `nexus.threshold_approaching` event): a decimal
    string above 0 and below 1, default `0.8`. Sent as null: back to the default.
    """


class Product(TypedDict, total=False):
    """A product (spec section 2.2)."""
    id: Required[str]
    """Stable identifier, prefix `prd_`."""
    source_id: Required[str]
    """Identifier in the source system. Required on create."""
    source: Required[str]
    """Source system; `native` for products managed through this API."""
    source_account_id: Required[str]
    """Account in the source system (default `__default__`)."""
    name: Required[str]
    """Name. Required on create."""
    description: Required[str | None]
    """Description, or null. Null on update clears it."""
    source_category: Required[str | None]
    """Free text category, or null."""
    tax_codes: Required[list[str]]
    """Tax codes assigned. Empty means the organization default."""
    resolved_tax_codes: Required[list[str]]
    """Tax codes used in calculations. Never empty."""
    source_updated_at: Required[str | None]
    """Last update time in the source system; must move forward on update."""
    created_at: Required[str]
    """Record creation time."""
    updated_at: Required[str]
    """Record last update time."""
    archived_at: Required[str | None]
    """When the product was archived, or null."""
    marked_sales_tax: Required[bool]
    """True when the product's only tax code is `SALES_TAX` (spec 4.7)."""


class ProductAttribute(TypedDict, total=False):
    """A product attribute (spec 2.4)."""
    code: Required[str]
    """Code, starting with an underscore, for example `_DOWNLOADED`."""
    name: Required[str]
    """Display name."""
    description: Required[str]
    """What the attribute means."""
    group: Required["ProductAttributeGroup | None"]
    """The attribute's group."""
    ptcs: Required[list[str]]
    """Top-level tax code categories it applies to; empty means every product."""


class ProductAttributeGroup(TypedDict, total=False):
    """Group of product attributes."""
    key: Required[str]
    """Group key."""
    name: Required[str]
    """Group display name."""
    exclusive: Required[bool]
    """Attributes of an exclusive group are mutually exclusive."""


class ProductInput(TypedDict, total=False):
    """A product (spec section 2.2)."""
    source_id: str | None
    """Identifier in the source system. Required on create."""
    source: str | None
    """Source system; `native` for products managed through this API."""
    source_account_id: str | None
    """Account in the source system (default `__default__`)."""
    name: str | None
    """Name. Required on create."""
    description: str | None
    """Description, or null. Null on update clears it."""
    source_category: str | None
    """Free text category, or null."""
    tax_codes: list[str] | None
    """Tax codes assigned. Empty means the organization default."""
    source_updated_at: str | None
    """Last update time in the source system; must move forward on update."""


class ProductPreset(TypedDict, total=False):
    """Reference to a stored product."""
    id: Required[str | None]
    """The product's `prd_` id."""
    source: Required[str | None]
    """The product's source."""


class ProductPresetInput(TypedDict, total=False):
    """Reference to a stored product."""
    id: str | None
    """The product's `prd_` id."""
    source: str | None
    """The product's source."""


class ProductTaxCode(TypedDict, total=False):
    """A product tax code (spec 2.3)."""
    code: Required[str]
    """Dot-separated uppercase category path, for example `CLOTHING.APPAREL.GENERAL`."""
    description: Required[str | None]
    """What the code covers, or null."""


class Registration(TypedDict, total=False):
    """The seller's registration to collect tax in a jurisdiction."""
    id: Required[str]
    """Identifier, prefix `reg_`."""
    jurisdiction: Required[str]
    """Jurisdiction code, for example `US-ST-CA`."""
    registration_number: Required[str | None]
    """Registration number, or null."""
    effective_from: Required[str]
    """First day covered (YYYY-MM-DD)."""
    effective_to: Required[str | None]
    """Last day covered (YYYY-MM-DD), or null for open-ended."""
    created_at: Required[str]
    """Record creation time."""


class RegistrationInput(TypedDict, total=False):
    """The seller's registration to collect tax in a jurisdiction."""
    jurisdiction: str | None
    """Jurisdiction code, for example `US-ST-CA`."""
    registration_number: str | None
    """Registration number, or null."""
    effective_from: str | None
    """First day covered (YYYY-MM-DD)."""
    effective_to: str | None
    """Last day covered (YYYY-MM-DD), or null for open-ended."""


class ReplayWebhookDeliveryRequestBody(TypedDict, total=False):
    """Request of ReplayWebhookDelivery."""


class RestoreCustomerRequestBody(TypedDict, total=False):
    """Request of RestoreCustomer."""


class ReturnTaxOnlyAllocation(TypedDict, total=False):
    """One allocation of a tax-only transaction on a return (negative for a credit)."""
    transaction_id: Required[str]
    """The transaction's `txn_` id."""
    jurisdiction: Required[str]
    """Jurisdiction code."""
    tax_amount: Required[str]
    """Tax allocated, minor units."""


class ReturnTransaction(TypedDict, total=False):
    """One transaction on a return."""
    transaction_id: Required[str]
    """The transaction's `txn_` id."""
    type: Required[str]
    """`sale` or `credit`."""
    status: Required[str]
    """Its status now (`finalized` or `filed`; a prepared return's
    transaction may have moved since).
    """
    transaction_date: Required[str]
    """Its date (UTC, YYYY-MM-DD)."""
    currency: Required[str]
    """ISO 4217 code of the transaction."""
    reference_id: Required[str | None]
    """Its reference id, or null."""
    amounts: Required["JurisdictionTotals | None"]
    """Its figures on the return: the state's total row had it been alone on
    it (`jurisdiction` is the state's code; a credit's are negative;
    carried credits are the return's, not a transaction's).
    """


class RotateWebhookEndpointSecretRequestBody(TypedDict, total=False):
    """Request of RotateWebhookEndpointSecret."""


ServiceVersion = Literal["", "hydrogen.2025-04-15"]
# A release of the API (`Service-Version`); empty: the latest.


class ShipFrom(TypedDict, total=False):
    """Levy extension: where a line ships from. Send `location_id` or `address`,
    not both.
    """
    location_id: Required[str | None]
    """The `loc_` id of one of the organization's business locations."""
    address: Required["Address | None"]
    """A ship-from address (a US state and ZIP place it in its jurisdictions)."""


class ShipFromInput(TypedDict, total=False):
    """Levy extension: where a line ships from. Send `location_id` or `address`,
    not both.
    """
    location_id: str | None
    """The `loc_` id of one of the organization's business locations."""
    address: "AddressInput | None"
    """A ship-from address (a US state and ZIP place it in its jurisdictions)."""


class Tax(TypedDict, total=False):
    """One jurisdiction's tax on a line (spec 2.7)."""
    detail: Required[str]
    """Explanation of how the row was obtained."""
    jurisdiction_name: Required[str]
    """Jurisdiction name, for example `California`."""
    jurisdiction_type: Required[str]
    """`state`, `county`, `city` or `special`; outside the US `country` or
    `province` (docs/international.md).
    """
    tax_amount: Required[str]
    """Tax in minor units."""
    tax_type: Required[str]
    """Kind of tax, for example `sales_tax`; outside the US `vat`, `gst`, `hst`,
    `pst` or `qst`.
    """
    is_registered: Required[bool]
    """Whether the seller is registered in the jurisdiction on the date."""
    rule_name: Required[str]
    """The rule that applied."""
    taxable_base: Required[str]
    """Base the rate applied to, in minor units."""
    tax_rate: Required[str]
    """Rate as a decimal string, for example `0.0725`."""
    sourcing: Required[str]
    """Levy extension: which address put the row on the line, `origin` (the
    ship-from) or `destination` (the delivery address), by the state's
    sourcing rule (docs/sourcing.md); empty when the line had no ship-from.
    `detail` says the rule in words.
    """


class TaxId(TypedDict, total=False):
    """A buyer's tax id."""
    country: Required[str | None]
    """Country of the id."""
    type: Required[str | None]
    """Type, for example `eu_vat`."""
    value: Required[str | None]
    """The id."""


class TaxIdInput(TypedDict, total=False):
    """A buyer's tax id."""
    country: str | None
    """Country of the id."""
    type: str | None
    """Type, for example `eu_vat`."""
    value: str | None
    """The id."""


class TaxOnlyAttribution(TypedDict, total=False):
    """The share of a tax-only transaction's tax attributed to one jurisdiction."""
    jurisdiction_code: Required[str]
    """Jurisdiction code, for example `US-ST-CA`."""
    tax_amount: Required[str]
    """Tax in minor units."""


class Transaction(TypedDict, total=False):
    """A sale or credit (spec 2.8)."""
    id: Required[str]
    """Identifier, prefix `txn_`."""
    type: Required[str]
    """`sale` or `credit` (required on create)."""
    status: Required[str]
    """`draft`, `finalized`, `filed` or `void` (`draft` or `finalized`
    required on create).
    """
    currency: Required[str]
    """ISO 4217 code (default `USD`)."""
    discount_amount: Required[str | None]
    """Transaction-level discount in minor units."""
    vendor_discount_amount: Required[str | None]
    """Vendor-funded discount in minor units."""
    transaction_date: Required[str | None]
    """Date of the transaction."""
    line_items: Required["list[TransactionLineItem]"]
    """Line items (collected-tax lines removed)."""
    parent_transaction_id: Required[str | None]
    """For a credit, the id of the original transaction."""
    parent_reference_id: Required[str | None]
    """For a credit, the reference id of the original transaction."""
    reference_id: Required[str | None]
    """Id in an external billing system; unique in the organization."""
    tax_amount: Required[str | None]
    """Tax of the transaction in minor units; provided or calculated."""
    filing_tax_amount: Required[str]
    """Tax used for filing."""
    filing_tax_amount_source: Required[str]
    """`provided` or `calculated`."""
    calculated_tax_amount: Required[str]
    """Tax as calculated by Levy, whatever the filing source."""
    created_at: Required[str]
    """Record creation time."""
    updated_at: Required[str]
    """Record last update time."""
    held_off_returns_reason: Required[str | None]
    """Why the transaction is held off returns, or null."""
    source: Required[str | None]
    """Levy extension: where the document comes from, one of the customer
    sources (default `native`). Selects the marked-line netting policy (4.7).
    Set on create only.
    """
    tax_only_attributions: Required["list[TaxOnlyAttribution]"]
    """Tax-only transactions: the tax attributed to each jurisdiction the
    collected-tax lines' addresses reach where the seller is registered.
    """
    collected_tax_amount: Required[str | None]
    """Collected-tax (`SALES_TAX`) lines counted in `tax_amount`, in minor units,
    or null when none was sent.
    """
    provided_tax_amount: Required[str | None]
    """The `tax_amount` last sent (without collected-tax lines), or null."""
    flat_amount: Required[str | None]
    """Levy extension (issue 37): a credit by amount. On create of a credit
    naming its parent, instead of `line_items` and `tax_amount`: the total to
    refund, tax included, in minor units. Spread over what remains of the
    parent's lines in proportion to their remaining totals (largest
    remainder), the tax reversed with it; stored and returned as the
    credit's lines (see docs/transactions.md). Not returned.
    """
    tax_behavior: Required[str | None]
    """Levy extension: the `tax_behavior` of the lines that send none,
    `exclusive` (the default) or `inclusive` (see `LineItem.tax_behavior`).
    Not stored as such: each line stores the behaviour it was taxed with
    (`line_items[].tax_behavior`), so this reads back as null.
    """
    exchange_rate: Required[str | None]
    """Levy extension (issue 37): units of the organization's filing currency
    (USD for the US) per unit of `currency`, a decimal string such as `1.1`.
    Required on a finalized transaction in another currency unless the
    imported daily reference rates have one for its date; a credit uses its
    sale's rate. Null in the filing currency.
    """
    exchange_rate_date: Required[str | None]
    """Levy extension: the day `exchange_rate` applies to (`YYYY-MM-DD`;
    default the transaction date's UTC day).
    """
    marketplace_facilitator: Required[str | None]
    """Levy extension: the marketplace facilitator's name when the sale was made
    through one: its tax is the facilitator's to remit, so the sale is left
    off the seller's returns and liability (it still counts toward economic
    nexus where the state's rule counts marketplace sales). Set on create only.
    """


class TransactionInput(TypedDict, total=False):
    """A sale or credit (spec 2.8)."""
    type: str | None
    """`sale` or `credit` (required on create)."""
    status: str | None
    """`draft`, `finalized`, `filed` or `void` (`draft` or `finalized`
    required on create).
    """
    currency: str | None
    """ISO 4217 code (default `USD`)."""
    discount_amount: str | None
    """Transaction-level discount in minor units."""
    vendor_discount_amount: str | None
    """Vendor-funded discount in minor units."""
    transaction_date: str | None
    """Date of the transaction."""
    line_items: "list[TransactionLineItemInput] | None"
    """Line items (collected-tax lines removed)."""
    parent_transaction_id: str | None
    """For a credit, the id of the original transaction."""
    parent_reference_id: str | None
    """For a credit, the reference id of the original transaction."""
    reference_id: str | None
    """Id in an external billing system; unique in the organization."""
    tax_amount: str | None
    """Tax of the transaction in minor units; provided or calculated."""
    source: str | None
    """Levy extension: where the document comes from, one of the customer
    sources (default `native`). Selects the marked-line netting policy (4.7).
    Set on create only.
    """
    flat_amount: str | None
    """Levy extension (issue 37): a credit by amount. On create of a credit
    naming its parent, instead of `line_items` and `tax_amount`: the total to
    refund, tax included, in minor units. Spread over what remains of the
    parent's lines in proportion to their remaining totals (largest
    remainder), the tax reversed with it; stored and returned as the
    credit's lines (see docs/transactions.md). Not returned.
    """
    tax_behavior: str | None
    """Levy extension: the `tax_behavior` of the lines that send none,
    `exclusive` (the default) or `inclusive` (see `LineItem.tax_behavior`).
    Not stored as such: each line stores the behaviour it was taxed with
    (`line_items[].tax_behavior`), so this reads back as null.
    """
    exchange_rate: str | None
    """Levy extension (issue 37): units of the organization's filing currency
    (USD for the US) per unit of `currency`, a decimal string such as `1.1`.
    Required on a finalized transaction in another currency unless the
    imported daily reference rates have one for its date; a credit uses its
    sale's rate. Null in the filing currency.
    """
    exchange_rate_date: str | None
    """Levy extension: the day `exchange_rate` applies to (`YYYY-MM-DD`;
    default the transaction date's UTC day).
    """
    marketplace_facilitator: str | None
    """Levy extension: the marketplace facilitator's name when the sale was made
    through one: its tax is the facilitator's to remit, so the sale is left
    off the seller's returns and liability (it still counts toward economic
    nexus where the state's rule counts marketplace sales). Set on create only.
    """


class TransactionLineItem(TypedDict, total=False):
    """A line of a transaction: the request line plus its stored tax result."""
    id: Required[str | None]
    """Line identifier."""
    quantity: Required[str | None]
    """Quantity, a decimal string."""
    unit_price: Required[str | None]
    """Unit price in minor units."""
    product: Required["LineProduct | None"]
    """What is sold."""
    customer: Required["LineCustomer | None"]
    """Who buys, and where."""
    discounts: Required["list[LineDiscountInput]"]
    """Discounts on this line."""
    discount_amount: Required[str | None]
    """Discount on this line in minor units."""
    vendor_discount_amount: Required[str | None]
    """Vendor-funded discount on this line."""
    tax_amount: Required[str]
    """Tax of the line, in minor units."""
    tax_amount_before_discounts: Required[str]
    """Tax the line would carry without discounts."""
    taxes: Required["list[Tax]"]
    """Per-jurisdiction rows as calculated and stored."""
    discount_reductions: Required["list[LineDiscount]"]
    """Per-discount tax reductions."""
    resolution: Required[str]
    """Levy extension: how the line's address was resolved when it was
    calculated (`address`, `zip4`, `city`, `zip5` or `state`; see
    `CalculatedLineItem.resolution`), stored with the line.
    """
    ship_from: Required["ShipFrom | None"]
    """Levy extension: where the line ships from (see `LineItem.ship_from`)."""
    sourcing: Required[str]
    """Levy extension: the sourcing rule applied (see
    `CalculatedLineItem.sourcing`), stored with the line.
    """
    ship_from_used: Required["ShipFrom | None"]
    """Levy extension: the ship-from the line was taxed with, as stored (the
    line's own, its default location's, or for a credit its sale line's);
    null when the line had none.
    """
    tax_behavior: Required[str | None]
    """Levy extension: `exclusive` (the default) or `inclusive` (see
    `LineItem.tax_behavior`). Stored with the line: a line taxed by the
    transaction's `tax_behavior` reads back with it here.
    """
    vat_checks: Required["list[VatCheck]"]
    """Levy extension: the online (VIES) checks of the line's EU VAT ids made
    when the line was calculated, stored with it (see
    `CalculatedLineItem.vat_checks`).
    """


class TransactionLineItemInput(TypedDict, total=False):
    """A line of a transaction: the request line plus its stored tax result."""
    id: str | None
    """Line identifier."""
    quantity: str | None
    """Quantity, a decimal string."""
    unit_price: str | None
    """Unit price in minor units."""
    product: "LineProductInput | None"
    """What is sold."""
    customer: "LineCustomerInput | None"
    """Who buys, and where."""
    discounts: "list[LineDiscountInput] | None"
    """Discounts on this line."""
    discount_amount: str | None
    """Discount on this line in minor units."""
    vendor_discount_amount: str | None
    """Vendor-funded discount on this line."""
    ship_from: "ShipFromInput | None"
    """Levy extension: where the line ships from (see `LineItem.ship_from`)."""
    tax_behavior: str | None
    """Levy extension: `exclusive` (the default) or `inclusive` (see
    `LineItem.tax_behavior`). Stored with the line: a line taxed by the
    transaction's `tax_behavior` reads back with it here.
    """


class UnarchiveLocationRequestBody(TypedDict, total=False):
    """Request of UnarchiveLocation."""


class VatCheck(TypedDict, total=False):
    """Levy extension: what VIES answered about one EU VAT id of a line."""
    vat_number: Required[str]
    """The number asked about, with its country prefix (`DE136695976`; Greece
    `EL`).
    """
    result: Required[str]
    """`valid` or `invalid` (VIES answered: an invalid id earns no reverse
    charge), or `unavailable` (no answer in time, or VIES or the member
    state's system unavailable: the format check decided).
    """
    checked_on: Required[str]
    """The consultation date VIES gave (`YYYY-MM-DD`); the day asked when
    unavailable.
    """
    request_identifier: Required[str]
    """VIES's consultation number (request identifier), when it gave one
    (it does when the server sends its requester VAT number).
    """
    detail: Required[str]
    """Why the check was unavailable (for example `no answer within 3 s`, `HTTP
    200, MS_UNAVAILABLE`); empty otherwise.
    """


class WebhookAttempt(TypedDict, total=False):
    """One attempt of a delivery."""
    number: Required[int]
    """1 for the first attempt."""
    at: Required[str | None]
    """When it was sent."""
    status_code: Required[int | None]
    """The receiver's HTTP status, or null when none came (timeout, refused)."""
    succeeded: Required[bool]
    """Whether the receiver accepted it (a 2xx status)."""
    latency_ms: Required[int]
    """Milliseconds from sending to the answer (or the failure)."""
    response_excerpt: Required[str]
    """The start of the answer's body, or what went wrong."""


class WebhookDelivery(TypedDict, total=False):
    """One event sent (or to send) to one endpoint."""
    id: Required[str]
    """Identifier, prefix `whd_`."""
    endpoint_id: Required[str]
    """The endpoint's `we_` id."""
    event_id: Required[str]
    """The event's `evt_` id (also the `webhook-id` header)."""
    event_type: Required[str]
    """The event's type."""
    status: Required[str]
    """`pending` (to send or retry), `succeeded` or `failed` (retries exhausted)."""
    next_attempt_at: Required[str | None]
    """When the next attempt is due, or null."""
    created_at: Required[str | None]
    """Record creation time."""
    attempts: Required["list[WebhookAttempt]"]
    """Every attempt, oldest first."""


class WebhookEndpoint(TypedDict, total=False):
    """Where the organization's events are sent."""
    id: Required[str]
    """Identifier, prefix `we_`."""
    url: Required[str]
    """The receiver's URL: https (http and addresses inside the network only
    where the server's settings allow them).
    """
    enabled_events: Required[list[str]]
    """The event types sent there (`*` for all)."""
    description: Required[str | None]
    """What the endpoint is for."""
    enabled: Required[bool]
    """Whether events are sent (default true). Levy sets it false when every
    delivery has failed for several days.
    """
    secret: Required[str | None]
    """The signing secret, `whsec_...`: in the answer of the create and of a
    rotation only, otherwise null.
    """
    disabled_reason: Required[str | None]
    """Why Levy disabled the endpoint, or null."""
    created_at: Required[str | None]
    """Record creation time."""
    updated_at: Required[str | None]
    """Last change."""


class WebhookEndpointInput(TypedDict, total=False):
    """Where the organization's events are sent."""
    url: str | None
    """The receiver's URL: https (http and addresses inside the network only
    where the server's settings allow them).
    """
    enabled_events: list[str] | None
    """The event types sent there (`*` for all)."""
    description: str | None
    """What the endpoint is for."""
    enabled: bool | None
    """Whether events are sent (default true). Levy sets it false when every
    delivery has failed for several days.
    """


# Operations: one Call per operationId.

class _Operations:
    """The ``Call`` of each operation (``levy_client._generated._ops``)."""

    @staticmethod
    def archive_location(location_id: str, /, body: ArchiveLocationRequestBody | None = None) -> Call[BusinessLocation]:
        """Archives a location: it stops being the default and is no longer listed by default."""
        headers: dict[str, str] = {}
        return Call("POST", f"/organization/locations/{_p(location_id)}/archive", json={} if body is None else body, headers=headers, repeatable=False)

    @staticmethod
    def batch_create_transactions(body: BatchCreateTransactionsRequestBody | None = None, *, idempotency_key: str | None = None) -> Call[BatchCreateTransactionsResponse]:
        """Levy extension: imports up to 1000 transactions (a seller's history) in
        one database transaction; each item is created, found `existing` by its
        `reference_id`, or fails on its own (shaped like POST /customers/batch).
        """
        headers: dict[str, str] = {}
        headers["Idempotency-Key"] = idempotency_key or str(uuid.uuid4())
        return Call("POST", "/transactions/batch", json={} if body is None else body, headers=headers)

    @staticmethod
    def batch_upsert_customers(body: BatchUpsertCustomersRequestBody | None = None, *, idempotency_key: str | None = None) -> Call[BatchUpsertCustomersResponse]:
        """Creates or updates up to 1000 customers; each succeeds or fails on its
        own (spec 4.2).
        """
        headers: dict[str, str] = {}
        headers["Idempotency-Key"] = idempotency_key or str(uuid.uuid4())
        return Call("POST", "/customers/batch", json={} if body is None else body, headers=headers)

    @staticmethod
    def create_api_key(body: ApiKeyInput | None = None) -> Call[ApiKey]:
        """Creates an API key; the secret is returned once."""
        headers: dict[str, str] = {}
        return Call("POST", "/api-keys", json={} if body is None else body, headers=headers, repeatable=False)

    @staticmethod
    def create_calculation(body: CreateCalculationRequestBody | None = None, *, x_include_unregistered: Literal["true", "false"] | None = None) -> Call[Calculation]:
        """Calculates tax. Honours `X-Include-Unregistered` (gRPC metadata
        `x-include-unregistered`). Errors use the calculation error shape.
        """
        headers = query(**{"X-Include-Unregistered": x_include_unregistered})
        return Call("POST", "/calculations", json={} if body is None else body, headers=headers, repeatable=False)

    @staticmethod
    def create_customer(body: CustomerInput | None = None, *, idempotency_key: str | None = None) -> Call[Customer]:
        """Creates a customer. 409 if the triple already exists (spec 4.1)."""
        headers: dict[str, str] = {}
        headers["Idempotency-Key"] = idempotency_key or str(uuid.uuid4())
        return Call("POST", "/customers", json={} if body is None else body, headers=headers)

    @staticmethod
    def create_exemption_certificate(customer_id: str, /, body: ExemptionCertificateInput | None = None) -> Call[ExemptionCertificate]:
        """Adds an exemption certificate to a customer."""
        headers: dict[str, str] = {}
        return Call("POST", f"/customers/{_p(customer_id)}/exemption-certificates", json={} if body is None else body, headers=headers, repeatable=False)

    @staticmethod
    def create_filing(body: FilingInput | None = None) -> Call[Filing]:
        """Prepares a return for a state and period; `status: filed` files it."""
        headers: dict[str, str] = {}
        return Call("POST", "/filings", json={} if body is None else body, headers=headers, repeatable=False)

    @staticmethod
    def create_location(body: BusinessLocationInput | None = None) -> Call[BusinessLocation]:
        """Records a location; with `is_default` true it replaces the previous default."""
        headers: dict[str, str] = {}
        return Call("POST", "/organization/locations", json={} if body is None else body, headers=headers, repeatable=False)

    @staticmethod
    def create_product(body: ProductInput | None = None) -> Call[Product]:
        """Creates a product. Omitting `tax_codes` assigns the organization default."""
        headers: dict[str, str] = {}
        return Call("POST", "/products", json={} if body is None else body, headers=headers, repeatable=False)

    @staticmethod
    def create_registration(body: RegistrationInput | None = None) -> Call[Registration]:
        """Records a registration in a jurisdiction."""
        headers: dict[str, str] = {}
        return Call("POST", "/organization/registrations", json={} if body is None else body, headers=headers, repeatable=False)

    @staticmethod
    def create_transaction(body: TransactionInput | None = None, *, idempotency_key: str | None = None) -> Call[Transaction]:
        """Creates a sale or credit, as `draft` or `finalized`."""
        headers: dict[str, str] = {}
        headers["Idempotency-Key"] = idempotency_key or str(uuid.uuid4())
        return Call("POST", "/transactions", json={} if body is None else body, headers=headers)

    @staticmethod
    def create_webhook_endpoint(body: WebhookEndpointInput | None = None) -> Call[WebhookEndpoint]:
        """Creates an endpoint. Its signing `secret` is in this answer only."""
        headers: dict[str, str] = {}
        return Call("POST", "/webhook-endpoints", json={} if body is None else body, headers=headers, repeatable=False)

    @staticmethod
    def delete_api_key(key_id: str, /) -> Call[None]:
        """Revokes an API key at once."""
        headers: dict[str, str] = {}
        return Call("DELETE", f"/api-keys/{_p(key_id)}", headers=headers, empty=True)

    @staticmethod
    def delete_customer(customer_id: str, /) -> Call[None]:
        """Deletes a customer (a tombstone keeps its triple). 204, also when
        already deleted.
        """
        headers: dict[str, str] = {}
        return Call("DELETE", f"/customers/{_p(customer_id)}", headers=headers, empty=True)

    @staticmethod
    def delete_exemption_certificate(customer_id: str, certificate_id: str, /) -> Call[None]:
        """Removes a certificate."""
        headers: dict[str, str] = {}
        return Call("DELETE", f"/customers/{_p(customer_id)}/exemption-certificates/{_p(certificate_id)}", headers=headers, empty=True)

    @staticmethod
    def delete_product(product_id: str, /) -> Call[None]:
        """Archives a product: it stays readable and can no longer be used as a
        preset (Levy extension).
        """
        headers: dict[str, str] = {}
        return Call("DELETE", f"/products/{_p(product_id)}", headers=headers, empty=True)

    @staticmethod
    def delete_registration(registration_id: str, /) -> Call[None]:
        """Removes a registration."""
        headers: dict[str, str] = {}
        return Call("DELETE", f"/organization/registrations/{_p(registration_id)}", headers=headers, empty=True)

    @staticmethod
    def delete_webhook_endpoint(endpoint_id: str, /) -> Call[None]:
        """Deletes an endpoint and its pending deliveries."""
        headers: dict[str, str] = {}
        return Call("DELETE", f"/webhook-endpoints/{_p(endpoint_id)}", headers=headers, empty=True)

    @staticmethod
    def export_filing(filing_id: str, /, *, file: str | None = None) -> Call[str]:
        """Exports a return as CSV (`file`: `return`, the default, or
        `transactions`).
        """
        params = query(file=file)
        headers: dict[str, str] = {}
        return Call("GET", f"/filings/{_p(filing_id)}/export", params=params, headers=headers, text=True)

    @staticmethod
    def get_customer(customer_id: str, /) -> Call[Customer]:
        """Retrieves a customer with its read-only `exemption` object."""
        headers: dict[str, str] = {}
        return Call("GET", f"/customers/{_p(customer_id)}", headers=headers)

    @staticmethod
    def get_event(event_id: str, /) -> Call[Event]:
        """Retrieves an event."""
        headers: dict[str, str] = {}
        return Call("GET", f"/events/{_p(event_id)}", headers=headers)

    @staticmethod
    def get_filing(filing_id: str, /) -> Call[Filing]:
        """Retrieves a filing with its return."""
        headers: dict[str, str] = {}
        return Call("GET", f"/filings/{_p(filing_id)}", headers=headers)

    @staticmethod
    def get_liability_report(*, from_: str | None = None, to: str | None = None) -> Call[LiabilityReport]:
        """Liability totals of finalized and filed transactions over a range."""
        params = query(**{"from": from_}, to=to)
        headers: dict[str, str] = {}
        return Call("GET", "/reports/liability", params=params, headers=headers)

    @staticmethod
    def get_location(location_id: str, /) -> Call[BusinessLocation]:
        """Returns one location (archived ones included)."""
        headers: dict[str, str] = {}
        return Call("GET", f"/organization/locations/{_p(location_id)}", headers=headers)

    @staticmethod
    def get_nexus_report(*, as_of: str | None = None) -> Call[NexusReport]:
        """Economic nexus status per state."""
        params = query(as_of=as_of)
        headers: dict[str, str] = {}
        return Call("GET", "/nexus", params=params, headers=headers)

    @staticmethod
    def get_organization_settings() -> Call[OrganizationSettings]:
        """Returns the organization's tax settings."""
        headers: dict[str, str] = {}
        return Call("GET", "/organization/settings", headers=headers)

    @staticmethod
    def get_product(product_id: str, /) -> Call[Product]:
        """Retrieves a product (Levy extension: not shown in the spec)."""
        headers: dict[str, str] = {}
        return Call("GET", f"/products/{_p(product_id)}", headers=headers)

    @staticmethod
    def get_transaction(id: str, /) -> Call[Transaction]:
        """Retrieves a transaction."""
        headers: dict[str, str] = {}
        return Call("GET", f"/transactions/{_p(id)}", headers=headers)

    @staticmethod
    def get_webhook_endpoint(endpoint_id: str, /) -> Call[WebhookEndpoint]:
        """Retrieves an endpoint (without its secret)."""
        headers: dict[str, str] = {}
        return Call("GET", f"/webhook-endpoints/{_p(endpoint_id)}", headers=headers)

    @staticmethod
    def list_api_keys(*, limit: int | None = None, starting_after: str | None = None) -> Call[ListApiKeysResponse]:
        """Lists the organization's API keys (never their secrets)."""
        params = query(limit=limit, starting_after=starting_after)
        headers: dict[str, str] = {}
        return Call("GET", "/api-keys", params=params, headers=headers)

    @staticmethod
    def list_customers(*, limit: int | None = None, starting_after: str | None = None) -> Call[ListCustomersResponse]:
        """Lists active customers, newest first."""
        params = query(limit=limit, starting_after=starting_after)
        headers: dict[str, str] = {}
        return Call("GET", "/customers", params=params, headers=headers)

    @staticmethod
    def list_events(*, limit: int | None = None, starting_after: str | None = None, type: str | None = None, created_from: str | None = None, created_to: str | None = None) -> Call[ListEventsResponse]:
        """Lists events, newest first."""
        params = query(limit=limit, starting_after=starting_after, type=type, created_from=created_from, created_to=created_to)
        headers: dict[str, str] = {}
        return Call("GET", "/events", params=params, headers=headers)

    @staticmethod
    def list_exemption_certificates(customer_id: str, /, *, limit: int | None = None, starting_after: str | None = None) -> Call[ListExemptionCertificatesResponse]:
        """Lists a customer's certificates, all statuses."""
        params = query(limit=limit, starting_after=starting_after)
        headers: dict[str, str] = {}
        return Call("GET", f"/customers/{_p(customer_id)}/exemption-certificates", params=params, headers=headers)

    @staticmethod
    def list_filing_transactions(filing_id: str, /, *, limit: int | None = None, starting_after: str | None = None) -> Call[ListFilingTransactionsResponse]:
        """Lists the transactions on a return (return order: by date, then id),
        each with its amounts on that return (Levy extension, issue 37).
        """
        params = query(limit=limit, starting_after=starting_after)
        headers: dict[str, str] = {}
        return Call("GET", f"/filings/{_p(filing_id)}/transactions", params=params, headers=headers)

    @staticmethod
    def list_filings(*, limit: int | None = None, starting_after: str | None = None) -> Call[ListFilingsResponse]:
        """Lists filings, newest first."""
        params = query(limit=limit, starting_after=starting_after)
        headers: dict[str, str] = {}
        return Call("GET", "/filings", params=params, headers=headers)

    @staticmethod
    def list_locations(*, limit: int | None = None, starting_after: str | None = None, include_archived: bool | None = None) -> Call[ListLocationsResponse]:
        """Lists the organization's locations, newest first (archived ones only when asked)."""
        params = query(limit=limit, starting_after=starting_after, include_archived=include_archived)
        headers: dict[str, str] = {}
        return Call("GET", "/organization/locations", params=params, headers=headers)

    @staticmethod
    def list_product_attributes(*, ptc: str | None = None, limit: int | None = None, starting_after: str | None = None) -> Call[ListProductAttributesResponse]:
        """Lists product attributes, optionally only those applying to a tax code."""
        params = query(ptc=ptc, limit=limit, starting_after=starting_after)
        headers: dict[str, str] = {}
        return Call("GET", "/product-attributes", params=params, headers=headers)

    @staticmethod
    def list_product_tax_codes(*, limit: int | None = None, starting_after: str | None = None) -> Call[ListProductTaxCodesResponse]:
        """Lists product tax codes, paged by `code`."""
        params = query(limit=limit, starting_after=starting_after)
        headers: dict[str, str] = {}
        return Call("GET", "/product-tax-codes", params=params, headers=headers)

    @staticmethod
    def list_products(*, limit: int | None = None, starting_after: str | None = None) -> Call[ListProductsResponse]:
        """Lists products, newest first (Levy extension: not shown in the spec)."""
        params = query(limit=limit, starting_after=starting_after)
        headers: dict[str, str] = {}
        return Call("GET", "/products", params=params, headers=headers)

    @staticmethod
    def list_registrations(*, limit: int | None = None, starting_after: str | None = None) -> Call[ListRegistrationsResponse]:
        """Lists the seller's registrations."""
        params = query(limit=limit, starting_after=starting_after)
        headers: dict[str, str] = {}
        return Call("GET", "/organization/registrations", params=params, headers=headers)

    @staticmethod
    def list_transactions(*, limit: int | None = None, starting_after: str | None = None, status: str | None = None, type: str | None = None, reference_id: str | None = None, customer_id: str | None = None, transaction_date_from: str | None = None, transaction_date_to: str | None = None, source: str | None = None) -> Call[ListTransactionsResponse]:
        """Lists transactions, newest first, with filters."""
        params = query(limit=limit, starting_after=starting_after, status=status, type=type, reference_id=reference_id, customer_id=customer_id, transaction_date_from=transaction_date_from, transaction_date_to=transaction_date_to, source=source)
        headers: dict[str, str] = {}
        return Call("GET", "/transactions", params=params, headers=headers)

    @staticmethod
    def list_webhook_deliveries(endpoint_id: str, /, *, limit: int | None = None, starting_after: str | None = None) -> Call[ListWebhookDeliveriesResponse]:
        """Lists the endpoint's deliveries, newest first, each with its attempts."""
        params = query(limit=limit, starting_after=starting_after)
        headers: dict[str, str] = {}
        return Call("GET", f"/webhook-endpoints/{_p(endpoint_id)}/deliveries", params=params, headers=headers)

    @staticmethod
    def list_webhook_endpoints(*, limit: int | None = None, starting_after: str | None = None) -> Call[ListWebhookEndpointsResponse]:
        """Lists endpoints, newest first."""
        params = query(limit=limit, starting_after=starting_after)
        headers: dict[str, str] = {}
        return Call("GET", "/webhook-endpoints", params=params, headers=headers)

    @staticmethod
    def merge_customer(customer_id: str, /, body: MergeCustomerRequestBody | None = None) -> Call[Customer]:
        """Records that a customer was merged into another."""
        headers: dict[str, str] = {}
        return Call("POST", f"/customers/{_p(customer_id)}/merge", json={} if body is None else body, headers=headers, repeatable=False)

    @staticmethod
    def replay_webhook_delivery(endpoint_id: str, delivery_id: str, /, body: ReplayWebhookDeliveryRequestBody | None = None) -> Call[WebhookDelivery]:
        """Sends a delivery's event again now (a new attempt; a delivery that had
        failed for good is retried on the schedule again).
        """
        headers: dict[str, str] = {}
        return Call("POST", f"/webhook-endpoints/{_p(endpoint_id)}/deliveries/{_p(delivery_id)}/replay", json={} if body is None else body, headers=headers, repeatable=False)

    @staticmethod
    def restore_customer(customer_id: str, /, body: RestoreCustomerRequestBody | None = None) -> Call[Customer]:
        """Undoes the deletion of a customer."""
        headers: dict[str, str] = {}
        return Call("POST", f"/customers/{_p(customer_id)}/restore", json={} if body is None else body, headers=headers, repeatable=False)

    @staticmethod
    def rotate_webhook_endpoint_secret(endpoint_id: str, /, body: RotateWebhookEndpointSecretRequestBody | None = None) -> Call[WebhookEndpoint]:
        """Replaces the endpoint's signing secret; the new `secret` is in this
        answer only.
        """
        headers: dict[str, str] = {}
        return Call("POST", f"/webhook-endpoints/{_p(endpoint_id)}/rotate-secret", json={} if body is None else body, headers=headers, repeatable=False)

    @staticmethod
    def unarchive_location(location_id: str, /, body: UnarchiveLocationRequestBody | None = None) -> Call[BusinessLocation]:
        """Undoes the archiving of a location (it does not become the default again by itself)."""
        headers: dict[str, str] = {}
        return Call("POST", f"/organization/locations/{_p(location_id)}/unarchive", json={} if body is None else body, headers=headers, repeatable=False)

    @staticmethod
    def update_customer(customer_id: str, /, body: CustomerInput | None = None) -> Call[Customer]:
        """Updates a customer. Omitted fields and nulls keep the current value."""
        headers: dict[str, str] = {}
        return Call("PATCH", f"/customers/{_p(customer_id)}", json={} if body is None else body, headers=headers)

    @staticmethod
    def update_exemption_certificate(customer_id: str, certificate_id: str, /, body: ExemptionCertificateInput | None = None) -> Call[ExemptionCertificate]:
        """Changes a certificate (status, dates, type)."""
        headers: dict[str, str] = {}
        return Call("PATCH", f"/customers/{_p(customer_id)}/exemption-certificates/{_p(certificate_id)}", json={} if body is None else body, headers=headers)

    @staticmethod
    def update_exemption_overrides(customer_id: str, /, body: ExemptionOverridesInput | None = None) -> Call[ExemptionOverrides]:
        """Sets a customer's exemption overrides."""
        headers: dict[str, str] = {}
        return Call("PATCH", f"/customers/{_p(customer_id)}/exemption-overrides", json={} if body is None else body, headers=headers)

    @staticmethod
    def update_filing(filing_id: str, /, body: FilingInput | None = None) -> Call[Filing]:
        """Confirms a prepared filing (`status: filed`)."""
        headers: dict[str, str] = {}
        return Call("POST", f"/filings/{_p(filing_id)}", json={} if body is None else body, headers=headers, repeatable=False)

    @staticmethod
    def update_location(location_id: str, /, body: BusinessLocationInput | None = None) -> Call[BusinessLocation]:
        """Changes the fields sent (an `address` sent replaces the whole address)."""
        headers: dict[str, str] = {}
        return Call("PATCH", f"/organization/locations/{_p(location_id)}", json={} if body is None else body, headers=headers)

    @staticmethod
    def update_organization_settings(body: OrganizationSettingsInput | None = None) -> Call[OrganizationSettings]:
        """Changes the organization's tax settings."""
        headers: dict[str, str] = {}
        return Call("PATCH", "/organization/settings", json={} if body is None else body, headers=headers)

    @staticmethod
    def update_product(product_id: str, /, body: ProductInput | None = None) -> Call[Product]:
        """Updates a product. Omitted fields are unchanged; `description: null`
        clears it; `tax_codes: []` reverts to the organization default.
        """
        headers: dict[str, str] = {}
        return Call("PATCH", f"/products/{_p(product_id)}", json={} if body is None else body, headers=headers)

    @staticmethod
    def update_transaction(id: str, /, body: TransactionInput | None = None, *, idempotency_key: str | None = None) -> Call[Transaction]:
        """Partially updates a transaction (status, reference_id, tax_amount,
        line_items, ...).
        """
        headers: dict[str, str] = {}
        headers["Idempotency-Key"] = idempotency_key or str(uuid.uuid4())
        return Call("POST", f"/transactions/{_p(id)}", json={} if body is None else body, headers=headers)

    @staticmethod
    def update_webhook_endpoint(endpoint_id: str, /, body: WebhookEndpointInput | None = None) -> Call[WebhookEndpoint]:
        """Updates an endpoint. Omitted fields and nulls keep the current value."""
        headers: dict[str, str] = {}
        return Call("PATCH", f"/webhook-endpoints/{_p(endpoint_id)}", json={} if body is None else body, headers=headers)


_ops = _Operations

#: operationId -> method name, for every operation of docs/openapi.json.
OPERATIONS: dict[str, str] = {
    "ArchiveLocation": "archive_location",
    "BatchCreateTransactions": "batch_create_transactions",
    "BatchUpsertCustomers": "batch_upsert_customers",
    "CreateApiKey": "create_api_key",
    "CreateCalculation": "create_calculation",
    "CreateCustomer": "create_customer",
    "CreateExemptionCertificate": "create_exemption_certificate",
    "CreateFiling": "create_filing",
    "CreateLocation": "create_location",
    "CreateProduct": "create_product",
    "CreateRegistration": "create_registration",
    "CreateTransaction": "create_transaction",
    "CreateWebhookEndpoint": "create_webhook_endpoint",
    "DeleteApiKey": "delete_api_key",
    "DeleteCustomer": "delete_customer",
    "DeleteExemptionCertificate": "delete_exemption_certificate",
    "DeleteProduct": "delete_product",
    "DeleteRegistration": "delete_registration",
    "DeleteWebhookEndpoint": "delete_webhook_endpoint",
    "ExportFiling": "export_filing",
    "GetCustomer": "get_customer",
    "GetEvent": "get_event",
    "GetFiling": "get_filing",
    "GetLiabilityReport": "get_liability_report",
    "GetLocation": "get_location",
    "GetNexusReport": "get_nexus_report",
    "GetOrganizationSettings": "get_organization_settings",
    "GetProduct": "get_product",
    "GetTransaction": "get_transaction",
    "GetWebhookEndpoint": "get_webhook_endpoint",
    "ListApiKeys": "list_api_keys",
    "ListCustomers": "list_customers",
    "ListEvents": "list_events",
    "ListExemptionCertificates": "list_exemption_certificates",
    "ListFilingTransactions": "list_filing_transactions",
    "ListFilings": "list_filings",
    "ListLocations": "list_locations",
    "ListProductAttributes": "list_product_attributes",
    "ListProductTaxCodes": "list_product_tax_codes",
    "ListProducts": "list_products",
    "ListRegistrations": "list_registrations",
    "ListTransactions": "list_transactions",
    "ListWebhookDeliveries": "list_webhook_deliveries",
    "ListWebhookEndpoints": "list_webhook_endpoints",
    "MergeCustomer": "merge_customer",
    "ReplayWebhookDelivery": "replay_webhook_delivery",
    "RestoreCustomer": "restore_customer",
    "RotateWebhookEndpointSecret": "rotate_webhook_endpoint_secret",
    "UnarchiveLocation": "unarchive_location",
    "UpdateCustomer": "update_customer",
    "UpdateExemptionCertificate": "update_exemption_certificate",
    "UpdateExemptionOverrides": "update_exemption_overrides",
    "UpdateFiling": "update_filing",
    "UpdateLocation": "update_location",
    "UpdateOrganizationSettings": "update_organization_settings",
    "UpdateProduct": "update_product",
    "UpdateTransaction": "update_transaction",
    "UpdateWebhookEndpoint": "update_webhook_endpoint",
}


class SyncOperations:
    """Every operation as a method; the client supplies ``send`` and ``_items``."""

    def send(self, call: Call[T]) -> T:
        raise NotImplementedError

    def _items(self, page: Callable[[str | None], Call[Any]], cursor: str) -> Iterator[Any]:
        raise NotImplementedError

    def archive_location(self, location_id: str, /, body: ArchiveLocationRequestBody | None = None) -> BusinessLocation:
        """Archives a location: it stops being the default and is no longer listed by default."""
        return self.send(_ops.archive_location(location_id, body))

    def batch_create_transactions(self, body: BatchCreateTransactionsRequestBody | None = None, *, idempotency_key: str | None = None) -> BatchCreateTransactionsResponse:
        """Levy extension: imports up to 1000 transactions (a seller's history) in
        one database transaction; each item is created, found `existing` by its
        `reference_id`, or fails on its own (shaped like POST /customers/batch).
        """
        return self.send(_ops.batch_create_transactions(body, idempotency_key=idempotency_key))

    def batch_upsert_customers(self, body: BatchUpsertCustomersRequestBody | None = None, *, idempotency_key: str | None = None) -> BatchUpsertCustomersResponse:
        """Creates or updates up to 1000 customers; each succeeds or fails on its
        own (spec 4.2).
        """
        return self.send(_ops.batch_upsert_customers(body, idempotency_key=idempotency_key))

    def create_api_key(self, body: ApiKeyInput | None = None) -> ApiKey:
        """Creates an API key; the secret is returned once."""
        return self.send(_ops.create_api_key(body))

    def create_calculation(self, body: CreateCalculationRequestBody | None = None, *, x_include_unregistered: Literal["true", "false"] | None = None) -> Calculation:
        """Calculates tax. Honours `X-Include-Unregistered` (gRPC metadata
        `x-include-unregistered`). Errors use the calculation error shape.
        """
        return self.send(_ops.create_calculation(body, x_include_unregistered=x_include_unregistered))

    def create_customer(self, body: CustomerInput | None = None, *, idempotency_key: str | None = None) -> Customer:
        """Creates a customer. 409 if the triple already exists (spec 4.1)."""
        return self.send(_ops.create_customer(body, idempotency_key=idempotency_key))

    def create_exemption_certificate(self, customer_id: str, /, body: ExemptionCertificateInput | None = None) -> ExemptionCertificate:
        """Adds an exemption certificate to a customer."""
        return self.send(_ops.create_exemption_certificate(customer_id, body))

    def create_filing(self, body: FilingInput | None = None) -> Filing:
        """Prepares a return for a state and period; `status: filed` files it."""
        return self.send(_ops.create_filing(body))

    def create_location(self, body: BusinessLocationInput | None = None) -> BusinessLocation:
        """Records a location; with `is_default` true it replaces the previous default."""
        return self.send(_ops.create_location(body))

    def create_product(self, body: ProductInput | None = None) -> Product:
        """Creates a product. Omitting `tax_codes` assigns the organization default."""
        return self.send(_ops.create_product(body))

    def create_registration(self, body: RegistrationInput | None = None) -> Registration:
        """Records a registration in a jurisdiction."""
        return self.send(_ops.create_registration(body))

    def create_transaction(self, body: TransactionInput | None = None, *, idempotency_key: str | None = None) -> Transaction:
        """Creates a sale or credit, as `draft` or `finalized`."""
        return self.send(_ops.create_transaction(body, idempotency_key=idempotency_key))

    def create_webhook_endpoint(self, body: WebhookEndpointInput | None = None) -> WebhookEndpoint:
        """Creates an endpoint. Its signing `secret` is in this answer only."""
        return self.send(_ops.create_webhook_endpoint(body))

    def delete_api_key(self, key_id: str, /) -> None:
        """Revokes an API key at once."""
        return self.send(_ops.delete_api_key(key_id))

    def delete_customer(self, customer_id: str, /) -> None:
        """Deletes a customer (a tombstone keeps its triple). 204, also when
        already deleted.
        """
        return self.send(_ops.delete_customer(customer_id))

    def delete_exemption_certificate(self, customer_id: str, certificate_id: str, /) -> None:
        """Removes a certificate."""
        return self.send(_ops.delete_exemption_certificate(customer_id, certificate_id))

    def delete_product(self, product_id: str, /) -> None:
        """Archives a product: it stays readable and can no longer be used as a
        preset (Levy extension).
        """
        return self.send(_ops.delete_product(product_id))

    def delete_registration(self, registration_id: str, /) -> None:
        """Removes a registration."""
        return self.send(_ops.delete_registration(registration_id))

    def delete_webhook_endpoint(self, endpoint_id: str, /) -> None:
        """Deletes an endpoint and its pending deliveries."""
        return self.send(_ops.delete_webhook_endpoint(endpoint_id))

    def export_filing(self, filing_id: str, /, *, file: str | None = None) -> str:
        """Exports a return as CSV (`file`: `return`, the default, or
        `transactions`).
        """
        return self.send(_ops.export_filing(filing_id, file=file))

    def get_customer(self, customer_id: str, /) -> Customer:
        """Retrieves a customer with its read-only `exemption` object."""
        return self.send(_ops.get_customer(customer_id))

    def get_event(self, event_id: str, /) -> Event:
        """Retrieves an event."""
        return self.send(_ops.get_event(event_id))

    def get_filing(self, filing_id: str, /) -> Filing:
        """Retrieves a filing with its return."""
        return self.send(_ops.get_filing(filing_id))

    def get_liability_report(self, *, from_: str | None = None, to: str | None = None) -> LiabilityReport:
        """Liability totals of finalized and filed transactions over a range."""
        return self.send(_ops.get_liability_report(from_=from_, to=to))

    def get_location(self, location_id: str, /) -> BusinessLocation:
        """Returns one location (archived ones included)."""
        return self.send(_ops.get_location(location_id))

    def get_nexus_report(self, *, as_of: str | None = None) -> NexusReport:
        """Economic nexus status per state."""
        return self.send(_ops.get_nexus_report(as_of=as_of))

    def get_organization_settings(self) -> OrganizationSettings:
        """Returns the organization's tax settings."""
        return self.send(_ops.get_organization_settings())

    def get_product(self, product_id: str, /) -> Product:
        """Retrieves a product (Levy extension: not shown in the spec)."""
        return self.send(_ops.get_product(product_id))

    def get_transaction(self, id: str, /) -> Transaction:
        """Retrieves a transaction."""
        return self.send(_ops.get_transaction(id))

    def get_webhook_endpoint(self, endpoint_id: str, /) -> WebhookEndpoint:
        """Retrieves an endpoint (without its secret)."""
        return self.send(_ops.get_webhook_endpoint(endpoint_id))

    def list_api_keys(self, *, limit: int | None = None, starting_after: str | None = None) -> ListApiKeysResponse:
        """Lists the organization's API keys (never their secrets)."""
        return self.send(_ops.list_api_keys(limit=limit, starting_after=starting_after))

    def iter_api_keys(self, *, page_size: int = 100) -> Iterator[ApiKey]:
        """Every item of ``list_api_keys``, fetching pages of ``page_size`` as needed."""
        return self._items(lambda after: _ops.list_api_keys(limit=page_size, starting_after=after), "id")

    def list_customers(self, *, limit: int | None = None, starting_after: str | None = None) -> ListCustomersResponse:
        """Lists active customers, newest first."""
        return self.send(_ops.list_customers(limit=limit, starting_after=starting_after))

    def iter_customers(self, *, page_size: int = 100) -> Iterator[Customer]:
        """Every item of ``list_customers``, fetching pages of ``page_size`` as needed."""
        return self._items(lambda after: _ops.list_customers(limit=page_size, starting_after=after), "id")

    def list_events(self, *, limit: int | None = None, starting_after: str | None = None, type: str | None = None, created_from: str | None = None, created_to: str | None = None) -> ListEventsResponse:
        """Lists events, newest first."""
        return self.send(_ops.list_events(limit=limit, starting_after=starting_after, type=type, created_from=created_from, created_to=created_to))

    def iter_events(self, *, page_size: int = 100, type: str | None = None, created_from: str | None = None, created_to: str | None = None) -> Iterator[Event]:
        """Every item of ``list_events``, fetching pages of ``page_size`` as needed."""
        return self._items(lambda after: _ops.list_events(type=type, created_from=created_from, created_to=created_to, limit=page_size, starting_after=after), "id")

    def list_exemption_certificates(self, customer_id: str, /, *, limit: int | None = None, starting_after: str | None = None) -> ListExemptionCertificatesResponse:
        """Lists a customer's certificates, all statuses."""
        return self.send(_ops.list_exemption_certificates(customer_id, limit=limit, starting_after=starting_after))

    def iter_exemption_certificates(self, customer_id: str, /, *, page_size: int = 100) -> Iterator[ExemptionCertificate]:
        """Every item of ``list_exemption_certificates``, fetching pages of ``page_size`` as needed."""
        return self._items(lambda after: _ops.list_exemption_certificates(customer_id, limit=page_size, starting_after=after), "id")

    def list_filing_transactions(self, filing_id: str, /, *, limit: int | None = None, starting_after: str | None = None) -> ListFilingTransactionsResponse:
        """Lists the transactions on a return (return order: by date, then id),
        each with its amounts on that return (Levy extension, issue 37).
        """
        return self.send(_ops.list_filing_transactions(filing_id, limit=limit, starting_after=starting_after))

    def iter_filing_transactions(self, filing_id: str, /, *, page_size: int = 100) -> Iterator[ReturnTransaction]:
        """Every item of ``list_filing_transactions``, fetching pages of ``page_size`` as needed."""
        return self._items(lambda after: _ops.list_filing_transactions(filing_id, limit=page_size, starting_after=after), "transaction_id")

    def list_filings(self, *, limit: int | None = None, starting_after: str | None = None) -> ListFilingsResponse:
        """Lists filings, newest first."""
        return self.send(_ops.list_filings(limit=limit, starting_after=starting_after))

    def iter_filings(self, *, page_size: int = 100) -> Iterator[Filing]:
        """Every item of ``list_filings``, fetching pages of ``page_size`` as needed."""
        return self._items(lambda after: _ops.list_filings(limit=page_size, starting_after=after), "id")

    def list_locations(self, *, limit: int | None = None, starting_after: str | None = None, include_archived: bool | None = None) -> ListLocationsResponse:
        """Lists the organization's locations, newest first (archived ones only when asked)."""
        return self.send(_ops.list_locations(limit=limit, starting_after=starting_after, include_archived=include_archived))

    def iter_locations(self, *, page_size: int = 100, include_archived: bool | None = None) -> Iterator[BusinessLocation]:
        """Every item of ``list_locations``, fetching pages of ``page_size`` as needed."""
        return self._items(lambda after: _ops.list_locations(include_archived=include_archived, limit=page_size, starting_after=after), "id")

    def list_product_attributes(self, *, ptc: str | None = None, limit: int | None = None, starting_after: str | None = None) -> ListProductAttributesResponse:
        """Lists product attributes, optionally only those applying to a tax code."""
        return self.send(_ops.list_product_attributes(ptc=ptc, limit=limit, starting_after=starting_after))

    def iter_product_attributes(self, *, page_size: int = 100, ptc: str | None = None) -> Iterator[ProductAttribute]:
        """Every item of ``list_product_attributes``, fetching pages of ``page_size`` as needed."""
        return self._items(lambda after: _ops.list_product_attributes(ptc=ptc, limit=page_size, starting_after=after), "code")

    def list_product_tax_codes(self, *, limit: int | None = None, starting_after: str | None = None) -> ListProductTaxCodesResponse:
        """Lists product tax codes, paged by `code`."""
        return self.send(_ops.list_product_tax_codes(limit=limit, starting_after=starting_after))

    def iter_product_tax_codes(self, *, page_size: int = 100) -> Iterator[ProductTaxCode]:
        """Every item of ``list_product_tax_codes``, fetching pages of ``page_size`` as needed."""
        return self._items(lambda after: _ops.list_product_tax_codes(limit=page_size, starting_after=after), "code")

    def list_products(self, *, limit: int | None = None, starting_after: str | None = None) -> ListProductsResponse:
        """Lists products, newest first (Levy extension: not shown in the spec)."""
        return self.send(_ops.list_products(limit=limit, starting_after=starting_after))

    def iter_products(self, *, page_size: int = 100) -> Iterator[Product]:
        """Every item of ``list_products``, fetching pages of ``page_size`` as needed."""
        return self._items(lambda after: _ops.list_products(limit=page_size, starting_after=after), "id")

    def list_registrations(self, *, limit: int | None = None, starting_after: str | None = None) -> ListRegistrationsResponse:
        """Lists the seller's registrations."""
        return self.send(_ops.list_registrations(limit=limit, starting_after=starting_after))

    def iter_registrations(self, *, page_size: int = 100) -> Iterator[Registration]:
        """Every item of ``list_registrations``, fetching pages of ``page_size`` as needed."""
        return self._items(lambda after: _ops.list_registrations(limit=page_size, starting_after=after), "id")

    def list_transactions(self, *, limit: int | None = None, starting_after: str | None = None, status: str | None = None, type: str | None = None, reference_id: str | None = None, customer_id: str | None = None, transaction_date_from: str | None = None, transaction_date_to: str | None = None, source: str | None = None) -> ListTransactionsResponse:
        """Lists transactions, newest first, with filters."""
        return self.send(_ops.list_transactions(limit=limit, starting_after=starting_after, status=status, type=type, reference_id=reference_id, customer_id=customer_id, transaction_date_from=transaction_date_from, transaction_date_to=transaction_date_to, source=source))

    def iter_transactions(self, *, page_size: int = 100, status: str | None = None, type: str | None = None, reference_id: str | None = None, customer_id: str | None = None, transaction_date_from: str | None = None, transaction_date_to: str | None = None, source: str | None = None) -> Iterator[Transaction]:
        """Every item of ``list_transactions``, fetching pages of ``page_size`` as needed."""
        return self._items(lambda after: _ops.list_transactions(status=status, type=type, reference_id=reference_id, customer_id=customer_id, transaction_date_from=transaction_date_from, transaction_date_to=transaction_date_to, source=source, limit=page_size, starting_after=after), "id")

    def list_webhook_deliveries(self, endpoint_id: str, /, *, limit: int | None = None, starting_after: str | None = None) -> ListWebhookDeliveriesResponse:
        """Lists the endpoint's deliveries, newest first, each with its attempts."""
        return self.send(_ops.list_webhook_deliveries(endpoint_id, limit=limit, starting_after=starting_after))

    def iter_webhook_deliveries(self, endpoint_id: str, /, *, page_size: int = 100) -> Iterator[WebhookDelivery]:
        """Every item of ``list_webhook_deliveries``, fetching pages of ``page_size`` as needed."""
        return self._items(lambda after: _ops.list_webhook_deliveries(endpoint_id, limit=page_size, starting_after=after), "id")

    def list_webhook_endpoints(self, *, limit: int | None = None, starting_after: str | None = None) -> ListWebhookEndpointsResponse:
        """Lists endpoints, newest first."""
        return self.send(_ops.list_webhook_endpoints(limit=limit, starting_after=starting_after))

    def iter_webhook_endpoints(self, *, page_size: int = 100) -> Iterator[WebhookEndpoint]:
        """Every item of ``list_webhook_endpoints``, fetching pages of ``page_size`` as needed."""
        return self._items(lambda after: _ops.list_webhook_endpoints(limit=page_size, starting_after=after), "id")

    def merge_customer(self, customer_id: str, /, body: MergeCustomerRequestBody | None = None) -> Customer:
        """Records that a customer was merged into another."""
        return self.send(_ops.merge_customer(customer_id, body))

    def replay_webhook_delivery(self, endpoint_id: str, delivery_id: str, /, body: ReplayWebhookDeliveryRequestBody | None = None) -> WebhookDelivery:
        """Sends a delivery's event again now (a new attempt; a delivery that had
        failed for good is retried on the schedule again).
        """
        return self.send(_ops.replay_webhook_delivery(endpoint_id, delivery_id, body))

    def restore_customer(self, customer_id: str, /, body: RestoreCustomerRequestBody | None = None) -> Customer:
        """Undoes the deletion of a customer."""
        return self.send(_ops.restore_customer(customer_id, body))

    def rotate_webhook_endpoint_secret(self, endpoint_id: str, /, body: RotateWebhookEndpointSecretRequestBody | None = None) -> WebhookEndpoint:
        """Replaces the endpoint's signing secret; the new `secret` is in this
        answer only.
        """
        return self.send(_ops.rotate_webhook_endpoint_secret(endpoint_id, body))

    def unarchive_location(self, location_id: str, /, body: UnarchiveLocationRequestBody | None = None) -> BusinessLocation:
        """Undoes the archiving of a location (it does not become the default again by itself)."""
        return self.send(_ops.unarchive_location(location_id, body))

    def update_customer(self, customer_id: str, /, body: CustomerInput | None = None) -> Customer:
        """Updates a customer. Omitted fields and nulls keep the current value."""
        return self.send(_ops.update_customer(customer_id, body))

    def update_exemption_certificate(self, customer_id: str, certificate_id: str, /, body: ExemptionCertificateInput | None = None) -> ExemptionCertificate:
        """Changes a certificate (status, dates, type)."""
        return self.send(_ops.update_exemption_certificate(customer_id, certificate_id, body))

    def update_exemption_overrides(self, customer_id: str, /, body: ExemptionOverridesInput | None = None) -> ExemptionOverrides:
        """Sets a customer's exemption overrides."""
        return self.send(_ops.update_exemption_overrides(customer_id, body))

    def update_filing(self, filing_id: str, /, body: FilingInput | None = None) -> Filing:
        """Confirms a prepared filing (`status: filed`)."""
        return self.send(_ops.update_filing(filing_id, body))

    def update_location(self, location_id: str, /, body: BusinessLocationInput | None = None) -> BusinessLocation:
        """Changes the fields sent (an `address` sent replaces the whole address)."""
        return self.send(_ops.update_location(location_id, body))

    def update_organization_settings(self, body: OrganizationSettingsInput | None = None) -> OrganizationSettings:
        """Changes the organization's tax settings."""
        return self.send(_ops.update_organization_settings(body))

    def update_product(self, product_id: str, /, body: ProductInput | None = None) -> Product:
        """Updates a product. Omitted fields are unchanged; `description: null`
        clears it; `tax_codes: []` reverts to the organization default.
        """
        return self.send(_ops.update_product(product_id, body))

    def update_transaction(self, id: str, /, body: TransactionInput | None = None, *, idempotency_key: str | None = None) -> Transaction:
        """Partially updates a transaction (status, reference_id, tax_amount,
        line_items, ...).
        """
        return self.send(_ops.update_transaction(id, body, idempotency_key=idempotency_key))

    def update_webhook_endpoint(self, endpoint_id: str, /, body: WebhookEndpointInput | None = None) -> WebhookEndpoint:
        """Updates an endpoint. Omitted fields and nulls keep the current value."""
        return self.send(_ops.update_webhook_endpoint(endpoint_id, body))


class AsyncOperations:
    """Every operation as a method; the client supplies ``send`` and ``_items``."""

    async def send(self, call: Call[T]) -> T:
        raise NotImplementedError

    def _items(self, page: Callable[[str | None], Call[Any]], cursor: str) -> AsyncIterator[Any]:
        raise NotImplementedError

    async def archive_location(self, location_id: str, /, body: ArchiveLocationRequestBody | None = None) -> BusinessLocation:
        """Archives a location: it stops being the default and is no longer listed by default."""
        return await self.send(_ops.archive_location(location_id, body))

    async def batch_create_transactions(self, body: BatchCreateTransactionsRequestBody | None = None, *, idempotency_key: str | None = None) -> BatchCreateTransactionsResponse:
        """Levy extension: imports up to 1000 transactions (a seller's history) in
        one database transaction; each item is created, found `existing` by its
        `reference_id`, or fails on its own (shaped like POST /customers/batch).
        """
        return await self.send(_ops.batch_create_transactions(body, idempotency_key=idempotency_key))

    async def batch_upsert_customers(self, body: BatchUpsertCustomersRequestBody | None = None, *, idempotency_key: str | None = None) -> BatchUpsertCustomersResponse:
        """Creates or updates up to 1000 customers; each succeeds or fails on its
        own (spec 4.2).
        """
        return await self.send(_ops.batch_upsert_customers(body, idempotency_key=idempotency_key))

    async def create_api_key(self, body: ApiKeyInput | None = None) -> ApiKey:
        """Creates an API key; the secret is returned once."""
        return await self.send(_ops.create_api_key(body))

    async def create_calculation(self, body: CreateCalculationRequestBody | None = None, *, x_include_unregistered: Literal["true", "false"] | None = None) -> Calculation:
        """Calculates tax. Honours `X-Include-Unregistered` (gRPC metadata
        `x-include-unregistered`). Errors use the calculation error shape.
        """
        return await self.send(_ops.create_calculation(body, x_include_unregistered=x_include_unregistered))

    async def create_customer(self, body: CustomerInput | None = None, *, idempotency_key: str | None = None) -> Customer:
        """Creates a customer. 409 if the triple already exists (spec 4.1)."""
        return await self.send(_ops.create_customer(body, idempotency_key=idempotency_key))

    async def create_exemption_certificate(self, customer_id: str, /, body: ExemptionCertificateInput | None = None) -> ExemptionCertificate:
        """Adds an exemption certificate to a customer."""
        return await self.send(_ops.create_exemption_certificate(customer_id, body))

    async def create_filing(self, body: FilingInput | None = None) -> Filing:
        """Prepares a return for a state and period; `status: filed` files it."""
        return await self.send(_ops.create_filing(body))

    async def create_location(self, body: BusinessLocationInput | None = None) -> BusinessLocation:
        """Records a location; with `is_default` true it replaces the previous default."""
        return await self.send(_ops.create_location(body))

    async def create_product(self, body: ProductInput | None = None) -> Product:
        """Creates a product. Omitting `tax_codes` assigns the organization default."""
        return await self.send(_ops.create_product(body))

    async def create_registration(self, body: RegistrationInput | None = None) -> Registration:
        """Records a registration in a jurisdiction."""
        return await self.send(_ops.create_registration(body))

    async def create_transaction(self, body: TransactionInput | None = None, *, idempotency_key: str | None = None) -> Transaction:
        """Creates a sale or credit, as `draft` or `finalized`."""
        return await self.send(_ops.create_transaction(body, idempotency_key=idempotency_key))

    async def create_webhook_endpoint(self, body: WebhookEndpointInput | None = None) -> WebhookEndpoint:
        """Creates an endpoint. Its signing `secret` is in this answer only."""
        return await self.send(_ops.create_webhook_endpoint(body))

    async def delete_api_key(self, key_id: str, /) -> None:
        """Revokes an API key at once."""
        return await self.send(_ops.delete_api_key(key_id))

    async def delete_customer(self, customer_id: str, /) -> None:
        """Deletes a customer (a tombstone keeps its triple). 204, also when
        already deleted.
        """
        return await self.send(_ops.delete_customer(customer_id))

    async def delete_exemption_certificate(self, customer_id: str, certificate_id: str, /) -> None:
        """Removes a certificate."""
        return await self.send(_ops.delete_exemption_certificate(customer_id, certificate_id))

    async def delete_product(self, product_id: str, /) -> None:
        """Archives a product: it stays readable and can no longer be used as a
        preset (Levy extension).
        """
        return await self.send(_ops.delete_product(product_id))

    async def delete_registration(self, registration_id: str, /) -> None:
        """Removes a registration."""
        return await self.send(_ops.delete_registration(registration_id))

    async def delete_webhook_endpoint(self, endpoint_id: str, /) -> None:
        """Deletes an endpoint and its pending deliveries."""
        return await self.send(_ops.delete_webhook_endpoint(endpoint_id))

    async def export_filing(self, filing_id: str, /, *, file: str | None = None) -> str:
        """Exports a return as CSV (`file`: `return`, the default, or
        `transactions`).
        """
        return await self.send(_ops.export_filing(filing_id, file=file))

    async def get_customer(self, customer_id: str, /) -> Customer:
        """Retrieves a customer with its read-only `exemption` object."""
        return await self.send(_ops.get_customer(customer_id))

    async def get_event(self, event_id: str, /) -> Event:
        """Retrieves an event."""
        return await self.send(_ops.get_event(event_id))

    async def get_filing(self, filing_id: str, /) -> Filing:
        """Retrieves a filing with its return."""
        return await self.send(_ops.get_filing(filing_id))

    async def get_liability_report(self, *, from_: str | None = None, to: str | None = None) -> LiabilityReport:
        """Liability totals of finalized and filed transactions over a range."""
        return await self.send(_ops.get_liability_report(from_=from_, to=to))

    async def get_location(self, location_id: str, /) -> BusinessLocation:
        """Returns one location (archived ones included)."""
        return await self.send(_ops.get_location(location_id))

    async def get_nexus_report(self, *, as_of: str | None = None) -> NexusReport:
        """Economic nexus status per state."""
        return await self.send(_ops.get_nexus_report(as_of=as_of))

    async def get_organization_settings(self) -> OrganizationSettings:
        """Returns the organization's tax settings."""
        return await self.send(_ops.get_organization_settings())

    async def get_product(self, product_id: str, /) -> Product:
        """Retrieves a product (Levy extension: not shown in the spec)."""
        return await self.send(_ops.get_product(product_id))

    async def get_transaction(self, id: str, /) -> Transaction:
        """Retrieves a transaction."""
        return await self.send(_ops.get_transaction(id))

    async def get_webhook_endpoint(self, endpoint_id: str, /) -> WebhookEndpoint:
        """Retrieves an endpoint (without its secret)."""
        return await self.send(_ops.get_webhook_endpoint(endpoint_id))

    async def list_api_keys(self, *, limit: int | None = None, starting_after: str | None = None) -> ListApiKeysResponse:
        """Lists the organization's API keys (never their secrets)."""
        return await self.send(_ops.list_api_keys(limit=limit, starting_after=starting_after))

    def iter_api_keys(self, *, page_size: int = 100) -> AsyncIterator[ApiKey]:
        """Every item of ``list_api_keys``, fetching pages of ``page_size`` as needed."""
        return self._items(lambda after: _ops.list_api_keys(limit=page_size, starting_after=after), "id")

    async def list_customers(self, *, limit: int | None = None, starting_after: str | None = None) -> ListCustomersResponse:
        """Lists active customers, newest first."""
        return await self.send(_ops.list_customers(limit=limit, starting_after=starting_after))

    def iter_customers(self, *, page_size: int = 100) -> AsyncIterator[Customer]:
        """Every item of ``list_customers``, fetching pages of ``page_size`` as needed."""
        return self._items(lambda after: _ops.list_customers(limit=page_size, starting_after=after), "id")

    async def list_events(self, *, limit: int | None = None, starting_after: str | None = None, type: str | None = None, created_from: str | None = None, created_to: str | None = None) -> ListEventsResponse:
        """Lists events, newest first."""
        return await self.send(_ops.list_events(limit=limit, starting_after=starting_after, type=type, created_from=created_from, created_to=created_to))

    def iter_events(self, *, page_size: int = 100, type: str | None = None, created_from: str | None = None, created_to: str | None = None) -> AsyncIterator[Event]:
        """Every item of ``list_events``, fetching pages of ``page_size`` as needed."""
        return self._items(lambda after: _ops.list_events(type=type, created_from=created_from, created_to=created_to, limit=page_size, starting_after=after), "id")

    async def list_exemption_certificates(self, customer_id: str, /, *, limit: int | None = None, starting_after: str | None = None) -> ListExemptionCertificatesResponse:
        """Lists a customer's certificates, all statuses."""
        return await self.send(_ops.list_exemption_certificates(customer_id, limit=limit, starting_after=starting_after))

    def iter_exemption_certificates(self, customer_id: str, /, *, page_size: int = 100) -> AsyncIterator[ExemptionCertificate]:
        """Every item of ``list_exemption_certificates``, fetching pages of ``page_size`` as needed."""
        return self._items(lambda after: _ops.list_exemption_certificates(customer_id, limit=page_size, starting_after=after), "id")

    async def list_filing_transactions(self, filing_id: str, /, *, limit: int | None = None, starting_after: str | None = None) -> ListFilingTransactionsResponse:
        """Lists the transactions on a return (return order: by date, then id),
        each with its amounts on that return (Levy extension, issue 37).
        """
        return await self.send(_ops.list_filing_transactions(filing_id, limit=limit, starting_after=starting_after))

    def iter_filing_transactions(self, filing_id: str, /, *, page_size: int = 100) -> AsyncIterator[ReturnTransaction]:
        """Every item of ``list_filing_transactions``, fetching pages of ``page_size`` as needed."""
        return self._items(lambda after: _ops.list_filing_transactions(filing_id, limit=page_size, starting_after=after), "transaction_id")

    async def list_filings(self, *, limit: int | None = None, starting_after: str | None = None) -> ListFilingsResponse:
        """Lists filings, newest first."""
        return await self.send(_ops.list_filings(limit=limit, starting_after=starting_after))

    def iter_filings(self, *, page_size: int = 100) -> AsyncIterator[Filing]:
        """Every item of ``list_filings``, fetching pages of ``page_size`` as needed."""
        return self._items(lambda after: _ops.list_filings(limit=page_size, starting_after=after), "id")

    async def list_locations(self, *, limit: int | None = None, starting_after: str | None = None, include_archived: bool | None = None) -> ListLocationsResponse:
        """Lists the organization's locations, newest first (archived ones only when asked)."""
        return await self.send(_ops.list_locations(limit=limit, starting_after=starting_after, include_archived=include_archived))

    def iter_locations(self, *, page_size: int = 100, include_archived: bool | None = None) -> AsyncIterator[BusinessLocation]:
        """Every item of ``list_locations``, fetching pages of ``page_size`` as needed."""
        return self._items(lambda after: _ops.list_locations(include_archived=include_archived, limit=page_size, starting_after=after), "id")

    async def list_product_attributes(self, *, ptc: str | None = None, limit: int | None = None, starting_after: str | None = None) -> ListProductAttributesResponse:
        """Lists product attributes, optionally only those applying to a tax code."""
        return await self.send(_ops.list_product_attributes(ptc=ptc, limit=limit, starting_after=starting_after))

    def iter_product_attributes(self, *, page_size: int = 100, ptc: str | None = None) -> AsyncIterator[ProductAttribute]:
        """Every item of ``list_product_attributes``, fetching pages of ``page_size`` as needed."""
        return self._items(lambda after: _ops.list_product_attributes(ptc=ptc, limit=page_size, starting_after=after), "code")

    async def list_product_tax_codes(self, *, limit: int | None = None, starting_after: str | None = None) -> ListProductTaxCodesResponse:
        """Lists product tax codes, paged by `code`."""
        return await self.send(_ops.list_product_tax_codes(limit=limit, starting_after=starting_after))

    def iter_product_tax_codes(self, *, page_size: int = 100) -> AsyncIterator[ProductTaxCode]:
        """Every item of ``list_product_tax_codes``, fetching pages of ``page_size`` as needed."""
        return self._items(lambda after: _ops.list_product_tax_codes(limit=page_size, starting_after=after), "code")

    async def list_products(self, *, limit: int | None = None, starting_after: str | None = None) -> ListProductsResponse:
        """Lists products, newest first (Levy extension: not shown in the spec)."""
        return await self.send(_ops.list_products(limit=limit, starting_after=starting_after))

    def iter_products(self, *, page_size: int = 100) -> AsyncIterator[Product]:
        """Every item of ``list_products``, fetching pages of ``page_size`` as needed."""
        return self._items(lambda after: _ops.list_products(limit=page_size, starting_after=after), "id")

    async def list_registrations(self, *, limit: int | None = None, starting_after: str | None = None) -> ListRegistrationsResponse:
        """Lists the seller's registrations."""
        return await self.send(_ops.list_registrations(limit=limit, starting_after=starting_after))

    def iter_registrations(self, *, page_size: int = 100) -> AsyncIterator[Registration]:
        """Every item of ``list_registrations``, fetching pages of ``page_size`` as needed."""
        return self._items(lambda after: _ops.list_registrations(limit=page_size, starting_after=after), "id")

    async def list_transactions(self, *, limit: int | None = None, starting_after: str | None = None, status: str | None = None, type: str | None = None, reference_id: str | None = None, customer_id: str | None = None, transaction_date_from: str | None = None, transaction_date_to: str | None = None, source: str | None = None) -> ListTransactionsResponse:
        """Lists transactions, newest first, with filters."""
        return await self.send(_ops.list_transactions(limit=limit, starting_after=starting_after, status=status, type=type, reference_id=reference_id, customer_id=customer_id, transaction_date_from=transaction_date_from, transaction_date_to=transaction_date_to, source=source))

    def iter_transactions(self, *, page_size: int = 100, status: str | None = None, type: str | None = None, reference_id: str | None = None, customer_id: str | None = None, transaction_date_from: str | None = None, transaction_date_to: str | None = None, source: str | None = None) -> AsyncIterator[Transaction]:
        """Every item of ``list_transactions``, fetching pages of ``page_size`` as needed."""
        return self._items(lambda after: _ops.list_transactions(status=status, type=type, reference_id=reference_id, customer_id=customer_id, transaction_date_from=transaction_date_from, transaction_date_to=transaction_date_to, source=source, limit=page_size, starting_after=after), "id")

    async def list_webhook_deliveries(self, endpoint_id: str, /, *, limit: int | None = None, starting_after: str | None = None) -> ListWebhookDeliveriesResponse:
        """Lists the endpoint's deliveries, newest first, each with its attempts."""
        return await self.send(_ops.list_webhook_deliveries(endpoint_id, limit=limit, starting_after=starting_after))

    def iter_webhook_deliveries(self, endpoint_id: str, /, *, page_size: int = 100) -> AsyncIterator[WebhookDelivery]:
        """Every item of ``list_webhook_deliveries``, fetching pages of ``page_size`` as needed."""
        return self._items(lambda after: _ops.list_webhook_deliveries(endpoint_id, limit=page_size, starting_after=after), "id")

    async def list_webhook_endpoints(self, *, limit: int | None = None, starting_after: str | None = None) -> ListWebhookEndpointsResponse:
        """Lists endpoints, newest first."""
        return await self.send(_ops.list_webhook_endpoints(limit=limit, starting_after=starting_after))

    def iter_webhook_endpoints(self, *, page_size: int = 100) -> AsyncIterator[WebhookEndpoint]:
        """Every item of ``list_webhook_endpoints``, fetching pages of ``page_size`` as needed."""
        return self._items(lambda after: _ops.list_webhook_endpoints(limit=page_size, starting_after=after), "id")

    async def merge_customer(self, customer_id: str, /, body: MergeCustomerRequestBody | None = None) -> Customer:
        """Records that a customer was merged into another."""
        return await self.send(_ops.merge_customer(customer_id, body))

    async def replay_webhook_delivery(self, endpoint_id: str, delivery_id: str, /, body: ReplayWebhookDeliveryRequestBody | None = None) -> WebhookDelivery:
        """Sends a delivery's event again now (a new attempt; a delivery that had
        failed for good is retried on the schedule again).
        """
        return await self.send(_ops.replay_webhook_delivery(endpoint_id, delivery_id, body))

    async def restore_customer(self, customer_id: str, /, body: RestoreCustomerRequestBody | None = None) -> Customer:
        """Undoes the deletion of a customer."""
        return await self.send(_ops.restore_customer(customer_id, body))

    async def rotate_webhook_endpoint_secret(self, endpoint_id: str, /, body: RotateWebhookEndpointSecretRequestBody | None = None) -> WebhookEndpoint:
        """Replaces the endpoint's signing secret; the new `secret` is in this
        answer only.
        """
        return await self.send(_ops.rotate_webhook_endpoint_secret(endpoint_id, body))

    async def unarchive_location(self, location_id: str, /, body: UnarchiveLocationRequestBody | None = None) -> BusinessLocation:
        """Undoes the archiving of a location (it does not become the default again by itself)."""
        return await self.send(_ops.unarchive_location(location_id, body))

    async def update_customer(self, customer_id: str, /, body: CustomerInput | None = None) -> Customer:
        """Updates a customer. Omitted fields and nulls keep the current value."""
        return await self.send(_ops.update_customer(customer_id, body))

    async def update_exemption_certificate(self, customer_id: str, certificate_id: str, /, body: ExemptionCertificateInput | None = None) -> ExemptionCertificate:
        """Changes a certificate (status, dates, type)."""
        return await self.send(_ops.update_exemption_certificate(customer_id, certificate_id, body))

    async def update_exemption_overrides(self, customer_id: str, /, body: ExemptionOverridesInput | None = None) -> ExemptionOverrides:
        """Sets a customer's exemption overrides."""
        return await self.send(_ops.update_exemption_overrides(customer_id, body))

    async def update_filing(self, filing_id: str, /, body: FilingInput | None = None) -> Filing:
        """Confirms a prepared filing (`status: filed`)."""
        return await self.send(_ops.update_filing(filing_id, body))

    async def update_location(self, location_id: str, /, body: BusinessLocationInput | None = None) -> BusinessLocation:
        """Changes the fields sent (an `address` sent replaces the whole address)."""
        return await self.send(_ops.update_location(location_id, body))

    async def update_organization_settings(self, body: OrganizationSettingsInput | None = None) -> OrganizationSettings:
        """Changes the organization's tax settings."""
        return await self.send(_ops.update_organization_settings(body))

    async def update_product(self, product_id: str, /, body: ProductInput | None = None) -> Product:
        """Updates a product. Omitted fields are unchanged; `description: null`
        clears it; `tax_codes: []` reverts to the organization default.
        """
        return await self.send(_ops.update_product(product_id, body))

    async def update_transaction(self, id: str, /, body: TransactionInput | None = None, *, idempotency_key: str | None = None) -> Transaction:
        """Partially updates a transaction (status, reference_id, tax_amount,
        line_items, ...).
        """
        return await self.send(_ops.update_transaction(id, body, idempotency_key=idempotency_key))

    async def update_webhook_endpoint(self, endpoint_id: str, /, body: WebhookEndpointInput | None = None) -> WebhookEndpoint:
        """Updates an endpoint. Omitted fields and nulls keep the current value."""
        return await self.send(_ops.update_webhook_endpoint(endpoint_id, body))
