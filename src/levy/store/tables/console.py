"""The web console: its users, their sessions, and the audit log of what
they did. Users belong to one organization with a role (``admin`` or ``member``)."""

from sqlalchemy import Boolean, Column, ForeignKey, Index, Integer, LargeBinary, String, Table, UniqueConstraint

from levy.store.tables.base import UtcDateTime, id_column_type, metadata

console_users = Table(
    "console_users",
    metadata,
    Column("id", id_column_type(), primary_key=True),
    Column("organization_id", id_column_type(), ForeignKey("organizations.id"), nullable=False),
    # Lower-cased; unique in its organization (one sign-in form for all: sign-in finds the
    # account of that email whose password matches). Unique across organizations,
    # inviting an address told the inviting admin that another organization used it.
    Column("email", String(320), nullable=False),
    # argon2id, PHC string form.
    Column("password_hash", String(200), nullable=False),
    Column("role", String(16), nullable=False),
    # Set for a one-time password (printed by `levy users create` or an invitation).
    Column("must_change_password", Boolean(), nullable=False),
    Column("created_at", UtcDateTime(), nullable=False),
    Column("updated_at", UtcDateTime(), nullable=False),
    Index(None, "organization_id", "id"),
    UniqueConstraint("organization_id", "email"),
    Index(None, "email"),
)

console_sessions = Table(
    "console_sessions",
    metadata,
    # SHA-256 of the cookie's token, hex: the token itself is never stored.
    Column("id", String(64), primary_key=True),
    Column("user_id", id_column_type(), ForeignKey("console_users.id"), nullable=False),
    Column("csrf_token", String(64), nullable=False),
    Column("created_at", UtcDateTime(), nullable=False),
    Column("expires_at", UtcDateTime(), nullable=False),
    Index(None, "user_id"),
)

console_audit = Table(
    "console_audit",
    metadata,
    Column("id", id_column_type(), primary_key=True),
    Column("organization_id", id_column_type(), ForeignKey("organizations.id"), nullable=False),
    Column("user_id", id_column_type(), nullable=True),
    Column("actor_email", String(320), nullable=False),
    # What was done, e.g. `api_key.created`, and to what (an id).
    Column("action", String(64), nullable=False),
    Column("target", String(200), nullable=False),
    Column("detail", String(500), nullable=False),
    Column("created_at", UtcDateTime(), nullable=False),
    Index(None, "organization_id", "id"),
)

# The document of an exemption certificate (PDF or image) uploaded in the console.
certificate_documents = Table(
    "certificate_documents",
    metadata,
    Column("id", id_column_type(), primary_key=True),
    Column("organization_id", id_column_type(), ForeignKey("organizations.id"), nullable=False),
    # No foreign key: deleting a certificate (the API's DeleteExemptionCertificate) deletes its document
    # in the same statement group (levy.store.customers.delete_certificates).
    Column("certificate_id", id_column_type(), nullable=False, unique=True),
    Column("filename", String(255), nullable=False),
    Column("content_type", String(64), nullable=False),
    Column("size", Integer(), nullable=False),
    Column("data", LargeBinary(), nullable=False),
    Column("created_at", UtcDateTime(), nullable=False),
)
