"""Events: the outbox.

An event row is written in the same database transaction as the change it
reports. ``sequence`` is given by the database (SQLite AUTOINCREMENT,
PostgreSQL BIGSERIAL): the order events are listed in, newest first. It is
marked ``info={"generated": True}``, so the fast inserts of
:mod:`levy.store.rows` leave it to the database. ``data`` is the object's
protobuf message, serialized, as the API returned it (the message type follows
from ``object_type``). ``dispatched``: whether the delivery worker has handed
the event to the organization's webhook endpoints.

Webhook endpoints, their deliveries (one per event and endpoint: the unit the
worker claims, retries and logs) and each delivery's attempts. A delivery is
claimed by setting ``lease_until`` in a write transaction (PostgreSQL: ``FOR
UPDATE SKIP LOCKED``); a worker killed mid-delivery leaves a lease that runs
out, and the delivery is taken again (at least once).
"""

from sqlalchemy import BigInteger, Boolean, Column, ForeignKey, Index, Integer, LargeBinary
from sqlalchemy import PrimaryKeyConstraint, String, Table, Text

from levy.store.tables.base import UtcDateTime, id_column_type, metadata

events = Table(
    "events",
    metadata,
    Column("sequence", BigInteger().with_variant(Integer(), "sqlite"), primary_key=True, autoincrement=True,
           info={"generated": True}),
    Column("id", id_column_type(), nullable=False, unique=True),
    Column("organization_id", id_column_type(), nullable=False),
    Column("type", String(64), nullable=False),
    Column("object_type", String(32), nullable=False),
    Column("object_id", id_column_type(), nullable=False),
    Column("created_at", UtcDateTime(), nullable=False),
    Column("data", LargeBinary(), nullable=False),
    Column("dispatched", Boolean(), nullable=False),
    Index(None, "organization_id", "sequence"),
    Index(None, "organization_id", "type", "sequence"),
    Index(None, "dispatched", "sequence"),
    Index(None, "created_at"),
    sqlite_autoincrement=True,
)

# The time-based events already produced: one row per organization and key (the
# event's type, its object and its period, levy.domain.event_jobs), inserted with ON CONFLICT DO
# NOTHING in the transaction of the event it marks. The primary key makes the event once per
# period however many replicas run the job at the same time.
event_marks = Table(
    "event_marks",
    metadata,
    Column("organization_id", id_column_type(), nullable=False),
    Column("key", String(200), nullable=False),
    Column("event_id", id_column_type(), nullable=False),
    Column("created_at", UtcDateTime(), nullable=False),
    PrimaryKeyConstraint("organization_id", "key"),
)

webhook_endpoints = Table(
    "webhook_endpoints",
    metadata,
    Column("id", id_column_type(), primary_key=True),
    Column("organization_id", id_column_type(), nullable=False),
    Column("url", String(2048), nullable=False),
    Column("enabled_events", Text(), nullable=False),  # JSON array of types, "*" for all
    Column("description", String(500), nullable=True),
    Column("enabled", Boolean(), nullable=False),
    # The signing secret (whsec_...): kept to sign with, shown once (create, rotation).
    Column("secret", String(100), nullable=False),
    Column("disabled_reason", Text(), nullable=True),
    # When its deliveries started failing (reset by a success): disabled after LEVY_WEBHOOK_DISABLE_AFTER_HOURS.
    Column("failing_since", UtcDateTime(), nullable=True),
    Column("created_at", UtcDateTime(), nullable=False),
    Column("updated_at", UtcDateTime(), nullable=False),
    Index(None, "organization_id", "id"),
)

webhook_deliveries = Table(
    "webhook_deliveries",
    metadata,
    Column("id", id_column_type(), primary_key=True),
    Column("organization_id", id_column_type(), nullable=False),
    Column("endpoint_id", id_column_type(), ForeignKey("webhook_endpoints.id"), nullable=False),
    Column("event_id", id_column_type(), nullable=False),
    Column("event_sequence", BigInteger(), nullable=False),
    Column("event_type", String(64), nullable=False),
    Column("object_id", id_column_type(), nullable=False),
    Column("status", String(16), nullable=False),  # pending | succeeded | failed
    Column("attempts", Integer(), nullable=False),
    Column("next_attempt_at", UtcDateTime(), nullable=True),
    Column("lease_until", UtcDateTime(), nullable=True),
    Column("created_at", UtcDateTime(), nullable=False),
    Column("delivered_at", UtcDateTime(), nullable=True),
    Index(None, "status", "next_attempt_at"),
    Index(None, "endpoint_id", "object_id", "event_sequence"),
    Index(None, "organization_id", "endpoint_id", "id"),
    Index(None, "created_at"),
)

webhook_attempts = Table(
    "webhook_attempts",
    metadata,
    Column("delivery_id", id_column_type(), ForeignKey("webhook_deliveries.id"), nullable=False),
    Column("number", Integer(), nullable=False),
    Column("organization_id", id_column_type(), nullable=False),
    Column("at", UtcDateTime(), nullable=False),
    Column("status_code", Integer(), nullable=True),
    Column("succeeded", Boolean(), nullable=False),
    Column("latency_ms", Integer(), nullable=False),
    Column("response_excerpt", Text(), nullable=False),
    PrimaryKeyConstraint("delivery_id", "number"),
)
