"""Business locations: the organization's places of business, one of
which may be the default ship-from address of its sales.

At most one non-archived default per organization: the store clears the
previous default in the same write transaction (see ``levy.store.locations``).
"""

from sqlalchemy import Boolean, Column, Date, ForeignKey, Index, String, Table, text

from levy.store.tables.base import UtcDateTime, id_column_type, metadata

business_locations = Table(
    "business_locations",
    metadata,
    Column("id", id_column_type(), primary_key=True),
    Column("organization_id", id_column_type(), ForeignKey("organizations.id"), nullable=False),
    Column("name", String(200), nullable=False),
    Column("line1", String(500), nullable=False),
    Column("line2", String(500), nullable=True),
    Column("city", String(200), nullable=False),
    Column("state", String(100), nullable=True),
    Column("postal_code", String(20), nullable=True),
    Column("country", String(2), nullable=False, server_default=text("'US'")),
    Column("is_default", Boolean(), nullable=False),
    Column("effective_from", Date(), nullable=False),
    Column("effective_to", Date(), nullable=True),
    Column("archived_at", UtcDateTime(), nullable=True),
    Column("created_at", UtcDateTime(), nullable=False),
    Column("updated_at", UtcDateTime(), nullable=False),
    Index(None, "organization_id", "id"),
)
