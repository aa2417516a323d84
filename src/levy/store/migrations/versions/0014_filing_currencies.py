"""Organization settings: the organization's own filing currencies per country

Issue 37: a return is in its country's filing currency. The defaults are data
(levy/data/currency/filing_currencies.json: USD for the US, fixed); an organization
may choose the currency of other countries' returns. The column holds those choices
as a JSON object (country -> ISO 4217), NULL when there are none.

Revision ID: 0014_filing_currencies
Revises: 0013_console_guards
"""

import sqlalchemy as sa
from alembic import op


revision = "0014_filing_currencies"
down_revision = "0013_console_guards"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("organization_settings", schema=None) as batch_op:
        batch_op.add_column(sa.Column("filing_currencies", sa.Text(), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("organization_settings", schema=None) as batch_op:
        batch_op.drop_column("filing_currencies")
