"""Events produced by a periodic job (issue 35): the marks that make each time-based event once
per organization, object and period; indexes for the retention of events and deliveries

Revision ID: 0018_event_jobs
Revises: 0017_secondary_ranges
"""

from alembic import op
import sqlalchemy as sa

from levy.store.tables.base import UtcDateTime

revision = "0018_event_jobs"
down_revision = "0017_secondary_ranges"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "event_marks",
        sa.Column("organization_id", sa.String(40), nullable=False),
        sa.Column("key", sa.String(200), nullable=False),
        sa.Column("event_id", sa.String(40), nullable=False),
        sa.Column("created_at", UtcDateTime(), nullable=False),
        sa.PrimaryKeyConstraint("organization_id", "key", name="pk_event_marks"),
    )
    op.create_index("ix_events_created_at", "events", ["created_at"])
    op.create_index("ix_webhook_deliveries_created_at", "webhook_deliveries", ["created_at"])


def downgrade() -> None:
    op.drop_index("ix_webhook_deliveries_created_at", "webhook_deliveries")
    op.drop_index("ix_events_created_at", "events")
    op.drop_table("event_marks")
