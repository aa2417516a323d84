"""Sourcing: the ship-from a transaction line was taxed with, its sourcing rule, and each tax row's sourcing

Revision ID: 0007_ship_from
Revises: 0006_business_locations
"""

from alembic import op
import sqlalchemy as sa


revision = "0007_ship_from"
down_revision = "0006_business_locations"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("transaction_lines") as batch_op:
        batch_op.add_column(sa.Column("sourcing", sa.String(length=16), nullable=True))
        batch_op.add_column(sa.Column("ship_from", sa.Text(), nullable=True))
    with op.batch_alter_table("transaction_line_taxes") as batch_op:
        batch_op.add_column(sa.Column("sourcing", sa.String(length=16), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("transaction_line_taxes") as batch_op:
        batch_op.drop_column("sourcing")
    with op.batch_alter_table("transaction_lines") as batch_op:
        batch_op.drop_column("ship_from")
        batch_op.drop_column("sourcing")
