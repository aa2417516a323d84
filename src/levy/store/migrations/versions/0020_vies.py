"""The online (VIES) checks of a transaction line's EU VAT ids, stored with the line

Revision ID: 0020_vies
Revises: 0019_approaching_share
"""

from alembic import op
import sqlalchemy as sa

revision = "0020_vies"
down_revision = "0019_approaching_share"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("transaction_lines") as batch:
        batch.add_column(sa.Column("vat_checks", sa.Text(), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("transaction_lines") as batch:
        batch.drop_column("vat_checks")
