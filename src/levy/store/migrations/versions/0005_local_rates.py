"""Local rates: imported records by ZIP, ZIP+4 range, street range or place; import reports; line resolution

Revision ID: 0005_local_rates
Revises: 0004_filings

Imports made before this revision keep their per-ZIP rows in ``zip_rates``; the
rate table reads them as ``estimated`` ZIP-level records (see
``levy.store.rate_imports.all_records``), so nothing is converted here.
"""

from alembic import op
import sqlalchemy as sa


revision = "0005_local_rates"
down_revision = "0004_filings"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "local_rates",
        sa.Column("id", sa.Integer(), autoincrement=True, nullable=False),
        sa.Column("import_id", sa.String(length=40), nullable=False),
        sa.Column("state", sa.String(length=2), nullable=False),
        sa.Column("zip5", sa.String(length=5), nullable=True),
        sa.Column("plus4_low", sa.String(length=4), nullable=True),
        sa.Column("plus4_high", sa.String(length=4), nullable=True),
        sa.Column("street_low", sa.Integer(), nullable=True),
        sa.Column("street_high", sa.Integer(), nullable=True),
        sa.Column("street_parity", sa.String(length=4), nullable=True),
        sa.Column("street_predir", sa.String(length=8), nullable=True),
        sa.Column("street_name", sa.String(length=200), nullable=True),
        sa.Column("street_suffix", sa.String(length=16), nullable=True),
        sa.Column("street_postdir", sa.String(length=8), nullable=True),
        sa.Column("city", sa.String(length=200), nullable=True),
        sa.Column("county", sa.String(length=200), nullable=True),
        sa.Column("is_primary", sa.Boolean(), nullable=False),
        sa.Column("unincorporated", sa.Boolean(), nullable=False),
        sa.Column("components", sa.Text(), nullable=False),
        sa.Column("effective_from", sa.Date(), nullable=False),
        sa.Column("effective_to", sa.Date(), nullable=True),
        sa.Column("source", sa.String(length=500), nullable=False),
        sa.Column("source_kind", sa.String(length=16), nullable=False),
        sa.Column("line", sa.Integer(), nullable=False),
        sa.Column("scope", sa.String(length=40), nullable=True),
        sa.ForeignKeyConstraint(["import_id"], ["rate_imports.id"], name=op.f("fk_local_rates_import_id_rate_imports")),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_local_rates")),
    )
    with op.batch_alter_table("local_rates", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_local_rates_import_id"), ["import_id"], unique=False)
    with op.batch_alter_table("rate_imports", schema=None) as batch_op:
        batch_op.add_column(sa.Column("report", sa.Text(), nullable=True))
    with op.batch_alter_table("transaction_lines", schema=None) as batch_op:
        batch_op.add_column(sa.Column("resolution", sa.String(length=8), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("transaction_lines", schema=None) as batch_op:
        batch_op.drop_column("resolution")
    with op.batch_alter_table("rate_imports", schema=None) as batch_op:
        batch_op.drop_column("report")
    with op.batch_alter_table("local_rates", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_local_rates_import_id"))
    op.drop_table("local_rates")
