"""A transaction line's input stored as the request's own message (protobuf bytes), not JSON

Rows written before keep their JSON ``input`` (read through ``json_format.ParseDict``); new
rows carry ``input_message`` and a NULL ``input``. Issue 20: encoding the JSON was a tenth of
a 10-line transaction's server CPU, decoding it most of a transaction list's.

Revision ID: 0011_line_input_message
Revises: 0010_console
"""

from alembic import op
import sqlalchemy as sa


revision = "0011_line_input_message"
down_revision = "0010_console"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("transaction_lines") as batch_op:
        batch_op.add_column(sa.Column("input_message", sa.LargeBinary(), nullable=True))
        batch_op.alter_column("input", existing_type=sa.Text(), nullable=True)


def downgrade() -> None:
    # Lines stored with only their message cannot go back to a NOT NULL JSON column.
    with op.batch_alter_table("transaction_lines") as batch_op:
        batch_op.drop_column("input_message")
