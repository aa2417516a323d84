"""Issue 37 part A: a transaction's exchange rate to the filing currency and its marketplace
facilitator; a table of daily reference exchange rates (``levy rates import`` of the European
Central Bank's euro reference-rate CSV).

``exchange_rate`` is a decimal string (units of the filing currency per unit of the transaction
currency) with the date it applies to, NULL when the transaction is in the filing currency (or a
draft without a rate). ``marketplace_facilitator`` is the facilitator's name, NULL for the
seller's own sales. ``exchange_rates`` holds one rate per (date, base, quote): units of ``quote``
per unit of ``base`` as published (the ECB: base EUR).

Revision ID: 0012_currency_marketplace
Revises: 0011_line_input_message
"""

from alembic import op
import sqlalchemy as sa


revision = "0012_currency_marketplace"
down_revision = "0011_line_input_message"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("transactions") as batch_op:
        batch_op.add_column(sa.Column("exchange_rate", sa.String(40), nullable=True))
        batch_op.add_column(sa.Column("exchange_rate_date", sa.Date(), nullable=True))
        batch_op.add_column(sa.Column("marketplace_facilitator", sa.String(255), nullable=True))
    op.create_table(
        "exchange_rates",
        sa.Column("rate_date", sa.Date(), nullable=False),
        sa.Column("base_currency", sa.String(3), nullable=False),
        sa.Column("quote_currency", sa.String(3), nullable=False),
        sa.Column("rate", sa.String(40), nullable=False),
        sa.Column("source", sa.String(255), nullable=False),
        sa.PrimaryKeyConstraint("rate_date", "base_currency", "quote_currency"),
    )


def downgrade() -> None:
    op.drop_table("exchange_rates")
    with op.batch_alter_table("transactions") as batch_op:
        batch_op.drop_column("marketplace_facilitator")
        batch_op.drop_column("exchange_rate_date")
        batch_op.drop_column("exchange_rate")
