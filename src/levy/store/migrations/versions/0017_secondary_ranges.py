"""Secondary address ranges (issue 33): the suites or units of a street range that an SST
boundary record places apart (columns 10-13 of the boundary file)

Revision ID: 0017_secondary_ranges
Revises: 0016_intl_returns
"""

from alembic import op
import sqlalchemy as sa

revision = "0017_secondary_ranges"
down_revision = "0016_intl_returns"
branch_labels = None
depends_on = None

_COLUMNS = (("unit_abbr", 8), ("unit_low", 16), ("unit_high", 16), ("unit_parity", 4))


def upgrade() -> None:
    with op.batch_alter_table("local_rates") as batch:
        for name, length in _COLUMNS:
            batch.add_column(sa.Column(name, sa.String(length), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("local_rates") as batch:
        for name, _ in reversed(_COLUMNS):
            batch.drop_column(name)
