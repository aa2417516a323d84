"""Business locations: the organization's places of business and its default ship-from

Revision ID: 0006_business_locations
Revises: 0005_local_rates
"""

from alembic import op
import sqlalchemy as sa

from levy.store.tables.base import UtcDateTime


revision = "0006_business_locations"
down_revision = "0005_local_rates"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "business_locations",
        sa.Column("id", sa.String(length=40), nullable=False),
        sa.Column("organization_id", sa.String(length=40), nullable=False),
        sa.Column("name", sa.String(length=200), nullable=False),
        sa.Column("line1", sa.String(length=500), nullable=False),
        sa.Column("line2", sa.String(length=500), nullable=True),
        sa.Column("city", sa.String(length=200), nullable=False),
        sa.Column("state", sa.String(length=100), nullable=True),
        sa.Column("postal_code", sa.String(length=20), nullable=True),
        sa.Column("country", sa.String(length=2), server_default=sa.text("'US'"), nullable=False),
        sa.Column("is_default", sa.Boolean(), nullable=False),
        sa.Column("effective_from", sa.Date(), nullable=False),
        sa.Column("effective_to", sa.Date(), nullable=True),
        sa.Column("archived_at", UtcDateTime(), nullable=True),
        sa.Column("created_at", UtcDateTime(), nullable=False),
        sa.Column("updated_at", UtcDateTime(), nullable=False),
        sa.ForeignKeyConstraint(["organization_id"], ["organizations.id"],
                                name=op.f("fk_business_locations_organization_id_organizations")),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_business_locations")),
    )
    with op.batch_alter_table("business_locations", schema=None) as batch_op:
        batch_op.create_index(
            batch_op.f("ix_business_locations_organization_id_id"), ["organization_id", "id"], unique=False
        )


def downgrade() -> None:
    with op.batch_alter_table("business_locations", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_business_locations_organization_id_id"))
    op.drop_table("business_locations")
