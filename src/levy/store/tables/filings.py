"""Filing: returns, the transactions each filed return includes, and
the credits a filed return carries forward per jurisdiction.

``filing_transactions`` is unique on ``(transaction_id, state)``: a transaction
is on at most one filed return per state, whatever races.
"""

from sqlalchemy import BigInteger, Column, Date, ForeignKey, Index, Integer, PrimaryKeyConstraint, String
from sqlalchemy import Table, Text, UniqueConstraint

from levy.store.tables.base import UtcDateTime, id_column_type, metadata

filings = Table(
    "filings",
    metadata,
    Column("id", id_column_type(), primary_key=True),
    Column("organization_id", id_column_type(), ForeignKey("organizations.id"), nullable=False),
    Column("jurisdiction", String(16), nullable=False),  # US-ST-XX
    Column("period_start", Date(), nullable=False),
    Column("period_end", Date(), nullable=False),
    Column("status", String(16), nullable=False),  # prepared | filed
    # The return's figures as JSON (levy.app.filings.return_to_json), fixed when prepared.
    Column("figures", Text(), nullable=False),
    Column("transaction_count", Integer(), nullable=False),
    Column("filing_tax_amount", BigInteger(), nullable=False),
    Column("credits_carried_forward", BigInteger(), nullable=False),
    Column("created_at", UtcDateTime(), nullable=False),
    Column("filed_at", UtcDateTime(), nullable=True),
    Index(None, "organization_id", "id"),
    Index(None, "organization_id", "jurisdiction", "status", "period_start"),
)

filing_transactions = Table(
    "filing_transactions",
    metadata,
    Column("filing_id", id_column_type(), ForeignKey("filings.id"), nullable=False),
    Column("transaction_id", id_column_type(), ForeignKey("transactions.id"), nullable=False),
    # A US state's two letters, or the key of a return outside the US (``INTL-EU-OSS``).
    Column("state", String(16), nullable=False),
    Column("organization_id", id_column_type(), nullable=False),
    PrimaryKeyConstraint("filing_id", "transaction_id"),
    UniqueConstraint("transaction_id", "state"),
)

filing_credits = Table(
    "filing_credits",
    metadata,
    Column("filing_id", id_column_type(), ForeignKey("filings.id"), nullable=False),
    Column("organization_id", id_column_type(), nullable=False),
    Column("jurisdiction_code", String(64), nullable=False),
    Column("amount", BigInteger(), nullable=False),
    PrimaryKeyConstraint("filing_id", "jurisdiction_code"),
)
