"""Filings: returns, their transactions, credits carried forward

Revision ID: 0004_filings
Revises: 0003_transactions
"""

from alembic import op
import sqlalchemy as sa

from levy.store.tables.base import UtcDateTime


revision = "0004_filings"
down_revision = "0003_transactions"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "filings",
        sa.Column("id", sa.String(length=40), nullable=False),
        sa.Column("organization_id", sa.String(length=40), nullable=False),
        sa.Column("jurisdiction", sa.String(length=16), nullable=False),
        sa.Column("period_start", sa.Date(), nullable=False),
        sa.Column("period_end", sa.Date(), nullable=False),
        sa.Column("status", sa.String(length=16), nullable=False),
        sa.Column("figures", sa.Text(), nullable=False),
        sa.Column("transaction_count", sa.Integer(), nullable=False),
        sa.Column("filing_tax_amount", sa.BigInteger(), nullable=False),
        sa.Column("credits_carried_forward", sa.BigInteger(), nullable=False),
        sa.Column("created_at", UtcDateTime(), nullable=False),
        sa.Column("filed_at", UtcDateTime(), nullable=True),
        sa.ForeignKeyConstraint(["organization_id"], ["organizations.id"],
                                name=op.f("fk_filings_organization_id_organizations")),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_filings")),
    )
    with op.batch_alter_table("filings", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_filings_organization_id_id"), ["organization_id", "id"], unique=False)
        batch_op.create_index(
            batch_op.f("ix_filings_organization_id_jurisdiction_status_period_start"),
            ["organization_id", "jurisdiction", "status", "period_start"], unique=False,
        )
    op.create_table(
        "filing_transactions",
        sa.Column("filing_id", sa.String(length=40), nullable=False),
        sa.Column("transaction_id", sa.String(length=40), nullable=False),
        sa.Column("state", sa.String(length=2), nullable=False),
        sa.Column("organization_id", sa.String(length=40), nullable=False),
        sa.ForeignKeyConstraint(["filing_id"], ["filings.id"], name=op.f("fk_filing_transactions_filing_id_filings")),
        sa.ForeignKeyConstraint(["transaction_id"], ["transactions.id"],
                                name=op.f("fk_filing_transactions_transaction_id_transactions")),
        sa.PrimaryKeyConstraint("filing_id", "transaction_id", name=op.f("pk_filing_transactions")),
        sa.UniqueConstraint("transaction_id", "state", name=op.f("uq_filing_transactions_transaction_id_state")),
    )
    op.create_table(
        "filing_credits",
        sa.Column("filing_id", sa.String(length=40), nullable=False),
        sa.Column("organization_id", sa.String(length=40), nullable=False),
        sa.Column("jurisdiction_code", sa.String(length=64), nullable=False),
        sa.Column("amount", sa.BigInteger(), nullable=False),
        sa.ForeignKeyConstraint(["filing_id"], ["filings.id"], name=op.f("fk_filing_credits_filing_id_filings")),
        sa.PrimaryKeyConstraint("filing_id", "jurisdiction_code", name=op.f("pk_filing_credits")),
    )


def downgrade() -> None:
    op.drop_table("filing_credits")
    op.drop_table("filing_transactions")
    with op.batch_alter_table("filings", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_filings_organization_id_jurisdiction_status_period_start"))
        batch_op.drop_index(batch_op.f("ix_filings_organization_id_id"))
    op.drop_table("filings")
