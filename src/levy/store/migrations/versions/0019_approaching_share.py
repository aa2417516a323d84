"""The organization's share of a nexus threshold from which a state is "approaching" (issue 35)

Revision ID: 0019_approaching_share
Revises: 0018_event_jobs
"""

from alembic import op
import sqlalchemy as sa

revision = "0019_approaching_share"
down_revision = "0018_event_jobs"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("organization_settings") as batch:
        batch.add_column(sa.Column("nexus_approaching_share", sa.String(12), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("organization_settings") as batch:
        batch.drop_column("nexus_approaching_share")
