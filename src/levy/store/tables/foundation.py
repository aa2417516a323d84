"""Organizations and API keys (foundation)."""

from sqlalchemy import Boolean, Column, ForeignKey, Index, String, Table

from levy.store.tables.base import UtcDateTime, id_column_type, metadata

organizations = Table(
    "organizations",
    metadata,
    Column("id", id_column_type(), primary_key=True),
    Column("name", String(200), nullable=False),
    Column("created_at", UtcDateTime(), nullable=False),
    Column("updated_at", UtcDateTime(), nullable=False),
)

api_keys = Table(
    "api_keys",
    metadata,
    Column("id", id_column_type(), primary_key=True),
    Column("organization_id", id_column_type(), ForeignKey("organizations.id"), nullable=False),
    Column("name", String(200), nullable=False),
    Column("prefix", String(24), nullable=False),
    # SHA-256 of the secret, hex. The secret itself is never stored.
    Column("secret_hash", String(64), nullable=False, unique=True),
    Column("admin", Boolean(), nullable=False),
    Column("created_at", UtcDateTime(), nullable=False),
    Column("last_used_at", UtcDateTime(), nullable=True),
    Column("revoked_at", UtcDateTime(), nullable=True),
    Index(None, "organization_id", "id"),
)
