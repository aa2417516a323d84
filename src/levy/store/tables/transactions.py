"""Transactions: the transaction, its goods lines with the full
stored engine result (per line and per jurisdiction rows), and the
attribution of tax-only transactions. Collected-tax (``SALES_TAX``) lines are
never stored as lines: their total is ``tax_collected``.

Stored so that returns and credits never recalculate history (see
docs/transactions.md, "Storage").
"""

from sqlalchemy import BigInteger, Boolean, Column, Date, ForeignKey, Index, Integer, LargeBinary
from sqlalchemy import PrimaryKeyConstraint, String, Table, Text, UniqueConstraint

from levy.store.tables.base import UtcDateTime, id_column_type, metadata

transactions = Table(
    "transactions",
    metadata,
    Column("id", id_column_type(), primary_key=True),
    Column("organization_id", id_column_type(), ForeignKey("organizations.id"), nullable=False),
    Column("type", String(16), nullable=False),  # sale | credit
    Column("status", String(16), nullable=False),  # draft | finalized | filed | void
    Column("source", String(64), nullable=False),
    Column("currency", String(3), nullable=False),
    Column("transaction_date", UtcDateTime(), nullable=False),
    Column("reference_id", String(255), nullable=True),
    # As sent; ``parent_found`` says whether it names a transaction of the organization
    # (then ``parent_transaction_id`` is that transaction's id even when only
    # ``parent_reference_id`` was sent).
    Column("parent_transaction_id", String(255), nullable=True),
    Column("parent_reference_id", String(255), nullable=True),
    Column("parent_found", Boolean(), nullable=False),
    Column("discount_amount", BigInteger(), nullable=False),
    Column("vendor_discount_amount", BigInteger(), nullable=False),
    # Goods lines: quantity x unit_price, and after every discount (what credits count).
    Column("gross_amount", BigInteger(), nullable=False),
    Column("net_amount", BigInteger(), nullable=False),
    # TaxState parts (levy.domain.transactions.rules.TaxState).
    Column("tax_calculated", BigInteger(), nullable=False),
    Column("tax_provided", BigInteger(), nullable=True),
    Column("tax_collected", BigInteger(), nullable=True),
    Column("tax_reduction", BigInteger(), nullable=False),
    Column("filing_tax_amount", BigInteger(), nullable=False),
    Column("filing_tax_amount_source", String(16), nullable=False),
    Column("tax_only", Boolean(), nullable=False),
    Column("held_off_reason", String(40), nullable=True),
    # JSON array of the registered jurisdiction codes in force on the transaction date.
    Column("registrations", Text(), nullable=False),
    # Migration 0012: units of the filing currency per unit of ``currency`` (a decimal
    # string) and the date it applies to; NULL in the filing currency. The marketplace facilitator's
    # name when the sale was made through one (its tax is the facilitator's to remit).
    Column("exchange_rate", String(40), nullable=True),
    Column("exchange_rate_date", Date(), nullable=True),
    Column("marketplace_facilitator", String(255), nullable=True),
    Column("created_at", UtcDateTime(), nullable=False),
    Column("updated_at", UtcDateTime(), nullable=False),
    UniqueConstraint("organization_id", "reference_id"),
    Index(None, "organization_id", "id"),
    Index(None, "organization_id", "status", "transaction_date"),
    Index(None, "organization_id", "parent_transaction_id"),
)

transaction_lines = Table(
    "transaction_lines",
    metadata,
    Column("transaction_id", id_column_type(), ForeignKey("transactions.id"), nullable=False),
    Column("position", Integer(), nullable=False),
    Column("organization_id", id_column_type(), nullable=False),
    Column("line_id", String(255), nullable=False),
    # The matched customer (``cust_``) and product preset (``prd_``), when any.
    Column("customer_id", id_column_type(), nullable=True),
    Column("product_id", id_column_type(), nullable=True),
    # The request line as received (its input fields), echoed in responses and copied by full
    # credits: a serialized ``levy.v1.TransactionLineItem`` (``input_message``, since 0011), or
    # JSON (``input``) in rows written before.
    Column("input", Text(), nullable=True),
    Column("amount", BigInteger(), nullable=False),
    Column("taxable_amount", BigInteger(), nullable=False),
    Column("tax_amount", BigInteger(), nullable=False),
    Column("tax_amount_before_discounts", BigInteger(), nullable=False),
    # JSON array of {id, amount, tax_amount_reduction}.
    Column("discounts", Text(), nullable=False),
    Column("detail", Text(), nullable=False),
    # How the line's address was resolved (address | zip4 | city | zip5 | state); NULL before 0005.
    Column("resolution", String(8), nullable=True),
    # The sourcing rule applied (destination | origin | mixed) and the ship-from used (JSON
    # {"location_id"?, "address"}), NULL when the line had no ship-from (and before 0007).
    Column("sourcing", String(16), nullable=True),
    Column("ship_from", Text(), nullable=True),
    Column("input_message", LargeBinary(), nullable=True),  # since 0011: see ``input``
    # The online (VIES) checks of the line's EU VAT ids (JSON array of [vat_number, result,
    # checked_on, request_identifier, detail]); NULL when none was made (and before 0020).
    Column("vat_checks", Text(), nullable=True),
    PrimaryKeyConstraint("transaction_id", "position"),
    Index(None, "organization_id", "customer_id"),
)

transaction_line_taxes = Table(
    "transaction_line_taxes",
    metadata,
    Column("transaction_id", id_column_type(), ForeignKey("transactions.id"), nullable=False),
    Column("line_position", Integer(), nullable=False),
    Column("position", Integer(), nullable=False),
    Column("organization_id", id_column_type(), nullable=False),
    Column("jurisdiction_code", String(64), nullable=False),
    Column("jurisdiction_name", String(200), nullable=False),
    Column("jurisdiction_type", String(16), nullable=False),
    Column("tax_type", String(32), nullable=False),
    Column("tax_rate", String(32), nullable=False),  # exact decimal text
    Column("taxable_base", BigInteger(), nullable=False),
    Column("tax_amount", BigInteger(), nullable=False),
    Column("tax_amount_before_discounts", BigInteger(), nullable=False),
    Column("is_registered", Boolean(), nullable=False),
    Column("rule_name", String(200), nullable=False),
    Column("exempt_reason", String(40), nullable=True),
    Column("detail", Text(), nullable=False),
    # Which address put the row there (origin | destination); NULL without a ship-from (and before 0007).
    Column("sourcing", String(16), nullable=True),
    PrimaryKeyConstraint("transaction_id", "line_position", "position"),
)

transaction_tax_only = Table(
    "transaction_tax_only",
    metadata,
    Column("transaction_id", id_column_type(), ForeignKey("transactions.id"), nullable=False),
    Column("position", Integer(), nullable=False),
    Column("organization_id", id_column_type(), nullable=False),
    Column("jurisdiction_code", String(64), nullable=False),
    Column("tax_amount", BigInteger(), nullable=False),
    PrimaryKeyConstraint("transaction_id", "position"),
)


#: Daily reference exchange rates as published (migration 0012): units of ``quote_currency`` per
#: unit of ``base_currency`` on ``rate_date`` (the ECB's euro reference rates: base ``EUR``).
exchange_rates = Table(
    "exchange_rates",
    metadata,
    Column("rate_date", Date(), nullable=False),
    Column("base_currency", String(3), nullable=False),
    Column("quote_currency", String(3), nullable=False),
    Column("rate", String(40), nullable=False),
    Column("source", String(255), nullable=False),
    PrimaryKeyConstraint("rate_date", "base_currency", "quote_currency"),
)
