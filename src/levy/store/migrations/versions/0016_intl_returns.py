"""Returns outside the US (issue 34): a filed return's transactions are recorded under a US state's
two letters or the key of a return outside the US (``INTL-EU-OSS``, ``INTL-CA-PR-QC``), so the
column widens from 2 to 16 characters.

Revision ID: 0016_intl_returns
Revises: 0015_events
"""

from alembic import op
import sqlalchemy as sa

revision = "0016_intl_returns"
down_revision = "0015_events"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("filing_transactions", schema=None) as batch_op:
        batch_op.alter_column("state", existing_type=sa.String(2), type_=sa.String(16), existing_nullable=False)


def downgrade() -> None:
    with op.batch_alter_table("filing_transactions", schema=None) as batch_op:
        batch_op.alter_column("state", existing_type=sa.String(16), type_=sa.String(2), existing_nullable=False)
