"""Foundation: organizations and API keys.

Revision ID: 0001_foundation
Revises:
"""

import sqlalchemy as sa
from alembic import op

from levy.store.tables.base import UtcDateTime

revision = "0001_foundation"
down_revision = None
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "organizations",
        sa.Column("id", sa.String(40), primary_key=True),
        sa.Column("name", sa.String(200), nullable=False),
        sa.Column("created_at", UtcDateTime(), nullable=False),
        sa.Column("updated_at", UtcDateTime(), nullable=False),
        sa.PrimaryKeyConstraint("id", name="pk_organizations"),
    )
    op.create_table(
        "api_keys",
        sa.Column("id", sa.String(40), nullable=False),
        sa.Column("organization_id", sa.String(40), nullable=False),
        sa.Column("name", sa.String(200), nullable=False),
        sa.Column("prefix", sa.String(24), nullable=False),
        sa.Column("secret_hash", sa.String(64), nullable=False),
        sa.Column("admin", sa.Boolean(), nullable=False),
        sa.Column("created_at", UtcDateTime(), nullable=False),
        sa.Column("last_used_at", UtcDateTime(), nullable=True),
        sa.Column("revoked_at", UtcDateTime(), nullable=True),
        sa.PrimaryKeyConstraint("id", name="pk_api_keys"),
        sa.ForeignKeyConstraint(
            ["organization_id"], ["organizations.id"], name="fk_api_keys_organization_id_organizations"
        ),
        sa.UniqueConstraint("secret_hash", name="uq_api_keys_secret_hash"),
    )
    op.create_index("ix_api_keys_organization_id_id", "api_keys", ["organization_id", "id"])


def downgrade() -> None:
    op.drop_index("ix_api_keys_organization_id_id", table_name="api_keys")
    op.drop_table("api_keys")
    op.drop_table("organizations")
