"""Events (issue 35): the outbox of what happened, written with each change; webhook endpoints,
their deliveries and attempts

Revision ID: 0015_events
Revises: 0013_console_guards
"""

from alembic import op
import sqlalchemy as sa

from levy.store.tables.base import UtcDateTime

revision = "0015_events"
down_revision = "0014_filing_currencies"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "events",
        sa.Column("sequence", sa.BigInteger().with_variant(sa.Integer(), "sqlite"), primary_key=True,
                  autoincrement=True),
        sa.Column("id", sa.String(40), nullable=False),
        sa.Column("organization_id", sa.String(40), nullable=False),
        sa.Column("type", sa.String(64), nullable=False),
        sa.Column("object_type", sa.String(32), nullable=False),
        sa.Column("object_id", sa.String(40), nullable=False),
        sa.Column("created_at", UtcDateTime(), nullable=False),
        sa.Column("data", sa.LargeBinary(), nullable=False),
        sa.Column("dispatched", sa.Boolean(), nullable=False),
        sa.PrimaryKeyConstraint("sequence", name="pk_events"),
        sa.UniqueConstraint("id", name="uq_events_id"),
        sqlite_autoincrement=True,
    )
    op.create_index("ix_events_organization_id_sequence", "events", ["organization_id", "sequence"])
    op.create_index("ix_events_organization_id_type_sequence", "events", ["organization_id", "type", "sequence"])
    op.create_index("ix_events_dispatched_sequence", "events", ["dispatched", "sequence"])
    op.create_table(
        "webhook_endpoints",
        sa.Column("id", sa.String(40), nullable=False),
        sa.Column("organization_id", sa.String(40), nullable=False),
        sa.Column("url", sa.String(2048), nullable=False),
        sa.Column("enabled_events", sa.Text(), nullable=False),
        sa.Column("description", sa.String(500), nullable=True),
        sa.Column("enabled", sa.Boolean(), nullable=False),
        sa.Column("secret", sa.String(100), nullable=False),
        sa.Column("disabled_reason", sa.Text(), nullable=True),
        sa.Column("failing_since", UtcDateTime(), nullable=True),
        sa.Column("created_at", UtcDateTime(), nullable=False),
        sa.Column("updated_at", UtcDateTime(), nullable=False),
        sa.PrimaryKeyConstraint("id", name="pk_webhook_endpoints"),
    )
    op.create_index("ix_webhook_endpoints_organization_id_id", "webhook_endpoints", ["organization_id", "id"])
    op.create_table(
        "webhook_deliveries",
        sa.Column("id", sa.String(40), nullable=False),
        sa.Column("organization_id", sa.String(40), nullable=False),
        sa.Column("endpoint_id", sa.String(40), nullable=False),
        sa.Column("event_id", sa.String(40), nullable=False),
        sa.Column("event_sequence", sa.BigInteger(), nullable=False),
        sa.Column("event_type", sa.String(64), nullable=False),
        sa.Column("object_id", sa.String(40), nullable=False),
        sa.Column("status", sa.String(16), nullable=False),
        sa.Column("attempts", sa.Integer(), nullable=False),
        sa.Column("next_attempt_at", UtcDateTime(), nullable=True),
        sa.Column("lease_until", UtcDateTime(), nullable=True),
        sa.Column("created_at", UtcDateTime(), nullable=False),
        sa.Column("delivered_at", UtcDateTime(), nullable=True),
        sa.ForeignKeyConstraint(["endpoint_id"], ["webhook_endpoints.id"],
                                name="fk_webhook_deliveries_endpoint_id_webhook_endpoints"),
        sa.PrimaryKeyConstraint("id", name="pk_webhook_deliveries"),
    )
    op.create_index("ix_webhook_deliveries_status_next_attempt_at", "webhook_deliveries",
                    ["status", "next_attempt_at"])
    op.create_index("ix_webhook_deliveries_endpoint_id_object_id_event_sequence", "webhook_deliveries",
                    ["endpoint_id", "object_id", "event_sequence"])
    op.create_index("ix_webhook_deliveries_organization_id_endpoint_id_id", "webhook_deliveries",
                    ["organization_id", "endpoint_id", "id"])
    op.create_table(
        "webhook_attempts",
        sa.Column("delivery_id", sa.String(40), nullable=False),
        sa.Column("number", sa.Integer(), nullable=False),
        sa.Column("organization_id", sa.String(40), nullable=False),
        sa.Column("at", UtcDateTime(), nullable=False),
        sa.Column("status_code", sa.Integer(), nullable=True),
        sa.Column("succeeded", sa.Boolean(), nullable=False),
        sa.Column("latency_ms", sa.Integer(), nullable=False),
        sa.Column("response_excerpt", sa.Text(), nullable=False),
        sa.ForeignKeyConstraint(["delivery_id"], ["webhook_deliveries.id"],
                                name="fk_webhook_attempts_delivery_id_webhook_deliveries"),
        sa.PrimaryKeyConstraint("delivery_id", "number", name="pk_webhook_attempts"),
    )


def downgrade() -> None:
    op.drop_table("webhook_attempts")
    op.drop_table("webhook_deliveries")
    op.drop_table("webhook_endpoints")
    op.drop_table("events")
