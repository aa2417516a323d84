"""Tables of the resource areas, defined together so that every area works
against one data model (customers, certificates, products, organization
settings and registrations, imported rates, idempotency records).

Transactions and filings add their own modules and migrations.
"""

from sqlalchemy import Boolean, Column, Date, ForeignKey, Index, Integer, LargeBinary, Numeric
from sqlalchemy import PrimaryKeyConstraint, String, Table, Text, UniqueConstraint

from levy.store.tables.base import UtcDateTime, id_column_type, metadata


# Customers and products are both records of a seller's source system: the same
# identity (an id, and the source's triple unique per organization) and times.
# Each table needs its own Column objects, hence functions.
def _source_record_identity() -> list[Column]:
    return [
        Column("id", id_column_type(), primary_key=True),
        Column("organization_id", id_column_type(), ForeignKey("organizations.id"), nullable=False),
        Column("source", String(64), nullable=False),
        Column("source_account_id", String(255), nullable=False),
        Column("source_id", String(255), nullable=False),
    ]


def _source_record_times() -> list[Column]:
    return [
        Column("source_updated_at", UtcDateTime(), nullable=True),
        Column("created_at", UtcDateTime(), nullable=False),
        Column("updated_at", UtcDateTime(), nullable=False),
    ]


def _source_record_keys() -> list[UniqueConstraint | Index]:
    return [
        UniqueConstraint("organization_id", "source", "source_account_id", "source_id"),
        Index(None, "organization_id", "id"),
    ]


# Organization tax settings (issue: organization administration).
organization_settings = Table(
    "organization_settings",
    metadata,
    Column("organization_id", id_column_type(), ForeignKey("organizations.id"), primary_key=True),
    # JSON array of tax codes used for products without their own.
    Column("default_tax_codes", Text(), nullable=False),
    Column("exemption_management", Boolean(), nullable=False),
    # certificate_only | certificate_and_product_tax_code
    Column("certificate_treatment", String(40), nullable=False),
    Column("updated_at", UtcDateTime(), nullable=False),
    # JSON object country -> ISO 4217: the organization's own filing currencies (those that differ
    # from the defaults of levy/data/currency/filing_currencies.json); NULL when none.
    Column("filing_currencies", Text(), nullable=True),
    # The share of a nexus threshold from which a state is "approaching" (a decimal string); NULL: the default.
    Column("nexus_approaching_share", String(12), nullable=True),
)

customers = Table(
    "customers",
    metadata,
    *_source_record_identity(),
    Column("name", String(500), nullable=True),
    Column("email", String(320), nullable=True),
    Column("merged_into_customer_id", id_column_type(), nullable=True),
    *_source_record_times(),
    # Set when deleted: the row stays as a tombstone keeping its triple.
    Column("deleted_at", UtcDateTime(), nullable=True),
    # Exemption overrides (set through the organization API).
    Column("override_exempt", Boolean(), nullable=False),
    Column("override_resale", Boolean(), nullable=False),
    Column("override_manufacturing", Boolean(), nullable=False),
    Column("exemption_updated_at", UtcDateTime(), nullable=True),
    *_source_record_keys(),
)

exemption_certificates = Table(
    "exemption_certificates",
    metadata,
    Column("id", id_column_type(), primary_key=True),
    Column("organization_id", id_column_type(), ForeignKey("organizations.id"), nullable=False),
    Column("customer_id", id_column_type(), ForeignKey("customers.id"), nullable=False),
    Column("jurisdiction", String(64), nullable=False),
    Column("exemption_type", String(32), nullable=False),
    # in_review | valid | rejected | expired | renewed
    Column("status", String(32), nullable=False),
    Column("starts_at", Date(), nullable=True),
    Column("expires_at", Date(), nullable=True),
    Column("created_at", UtcDateTime(), nullable=False),
    Column("updated_at", UtcDateTime(), nullable=False),
    Index(None, "organization_id", "customer_id", "id"),
)

products = Table(
    "products",
    metadata,
    *_source_record_identity(),
    Column("name", String(500), nullable=False),
    Column("description", Text(), nullable=True),
    Column("source_category", String(255), nullable=True),
    # JSON array of assigned tax codes; [] means the organization default.
    Column("tax_codes", Text(), nullable=False),
    # True when the only tax code is SALES_TAX (spec 4.7, marked products).
    Column("marked_sales_tax", Boolean(), nullable=False),
    *_source_record_times(),
    Column("archived_at", UtcDateTime(), nullable=True),
    *_source_record_keys(),
)

registrations = Table(
    "registrations",
    metadata,
    Column("id", id_column_type(), primary_key=True),
    Column("organization_id", id_column_type(), ForeignKey("organizations.id"), nullable=False),
    Column("jurisdiction", String(64), nullable=False),
    Column("registration_number", String(100), nullable=True),
    Column("effective_from", Date(), nullable=False),
    Column("effective_to", Date(), nullable=True),
    Column("created_at", UtcDateTime(), nullable=False),
    Index(None, "organization_id", "id"),
)

# Imported rate tables (reference data shared by every organization).
rate_imports = Table(
    "rate_imports",
    metadata,
    Column("id", id_column_type(), primary_key=True),
    # zip5 | sst
    Column("format", String(16), nullable=False),
    Column("source_file", String(500), nullable=False),
    # SHA-256 of the file's bytes: importing the same file again changes nothing.
    Column("sha256", String(64), nullable=False, unique=True),
    Column("effective_from", Date(), nullable=False),
    Column("effective_to", Date(), nullable=True),
    Column("row_count", Integer(), nullable=False),
    Column("imported_at", UtcDateTime(), nullable=False),
    # JSON object: the import's report (rows read, coverage, anomalies), or NULL.
    Column("report", Text(), nullable=True),
)

zip_rates = Table(
    "zip_rates",
    metadata,
    Column("id", Integer(), primary_key=True, autoincrement=True),
    Column("import_id", id_column_type(), ForeignKey("rate_imports.id"), nullable=False),
    Column("state", String(2), nullable=False),
    Column("zip5", String(5), nullable=False),
    Column("region_name", String(200), nullable=False),
    Column("state_rate", Numeric(9, 6), nullable=False),
    Column("county_rate", Numeric(9, 6), nullable=False),
    Column("city_rate", Numeric(9, 6), nullable=False),
    Column("special_rate", Numeric(9, 6), nullable=False),
    Column("effective_from", Date(), nullable=False),
    Column("effective_to", Date(), nullable=True),
    Column("source", String(500), nullable=False),
    Column("line", Integer(), nullable=False),
    Index(None, "import_id"),
)

# Imported local records (one row per levy.domain.tax.local_rates.LocalRecord);
# zip_rates keeps the per-ZIP rows of imports made before it existed, read as
# "estimated" records.
local_rates = Table(
    "local_rates",
    metadata,
    Column("id", Integer(), primary_key=True, autoincrement=True),
    Column("import_id", id_column_type(), ForeignKey("rate_imports.id"), nullable=False),
    Column("state", String(2), nullable=False),
    Column("zip5", String(5), nullable=True),  # NULL: a place-wide record (city or unincorporated county)
    Column("plus4_low", String(4), nullable=True),
    Column("plus4_high", String(4), nullable=True),
    Column("street_low", Integer(), nullable=True),
    Column("street_high", Integer(), nullable=True),
    Column("street_parity", String(4), nullable=True),  # odd | even | both
    Column("street_predir", String(8), nullable=True),
    Column("street_name", String(200), nullable=True),
    Column("street_suffix", String(16), nullable=True),
    Column("street_postdir", String(8), nullable=True),
    # The secondary range of a street range (suites, units): designator, low, high, odd | even | both.
    Column("unit_abbr", String(8), nullable=True),
    Column("unit_low", String(16), nullable=True),
    Column("unit_high", String(16), nullable=True),
    Column("unit_parity", String(4), nullable=True),
    Column("city", String(200), nullable=True),
    Column("county", String(200), nullable=True),
    Column("is_primary", Boolean(), nullable=False),
    Column("unincorporated", Boolean(), nullable=False),
    # JSON array of {type, name, rate (decimal text), code, authority}.
    Column("components", Text(), nullable=False),
    Column("effective_from", Date(), nullable=False),
    Column("effective_to", Date(), nullable=True),
    Column("source", String(500), nullable=False),
    # official_address | official_zip | estimated
    Column("source_kind", String(16), nullable=False),
    Column("line", Integer(), nullable=False),
    # A partial record's component types, comma-joined ("county"); NULL: a full record.
    Column("scope", String(40), nullable=True),
    Index(None, "import_id"),
)

# The address-level records of an import (ZIP+4 ranges and street ranges: SST ``4`` and ``a``
# records) in blocks of up to 50,000, compressed (levy.store.rate_imports.AddressBlock): a
# national boundary file is millions of them, read only to build each host's address file
# (levy.store.address_file) and to compare quarters, so they are not a row each.
address_blocks = Table(
    "address_blocks",
    metadata,
    Column("import_id", id_column_type(), ForeignKey("rate_imports.id"), nullable=False),
    Column("seq", Integer(), nullable=False),  # the block's place in the import (file order)
    Column("records", Integer(), nullable=False),
    Column("data", LargeBinary(), nullable=False),
    PrimaryKeyConstraint("import_id", "seq"),
)

# Idempotency-Key records: the first response of a request, replayed on retry.
idempotency_keys = Table(
    "idempotency_keys",
    metadata,
    Column("organization_id", id_column_type(), ForeignKey("organizations.id"), nullable=False),
    Column("key", String(255), nullable=False),
    # RPC full name the key was used on.
    Column("method", String(120), nullable=False),
    # SHA-256 of the request (method + body): a different body with the same key is 422.
    Column("request_hash", String(64), nullable=False),
    # NULL while the first request is still running.
    Column("status_code", Integer(), nullable=True),
    Column("response", LargeBinary(), nullable=True),
    Column("created_at", UtcDateTime(), nullable=False),
    Column("completed_at", UtcDateTime(), nullable=True),
    PrimaryKeyConstraint("organization_id", "key"),
    Index(None, "created_at"),
)
