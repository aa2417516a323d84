"""The web console: its users, sessions and audit log (issue 21)

Revision ID: 0010_console
Revises: 0007_ship_from
"""

from alembic import op
import sqlalchemy as sa

from levy.store.tables.base import UtcDateTime


revision = "0010_console"
down_revision = "0007_ship_from"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "console_users",
        sa.Column("id", sa.String(length=40), nullable=False),
        sa.Column("organization_id", sa.String(length=40), nullable=False),
        sa.Column("email", sa.String(length=320), nullable=False),
        sa.Column("password_hash", sa.String(length=200), nullable=False),
        sa.Column("role", sa.String(length=16), nullable=False),
        sa.Column("must_change_password", sa.Boolean(), nullable=False),
        sa.Column("created_at", UtcDateTime(), nullable=False),
        sa.Column("updated_at", UtcDateTime(), nullable=False),
        sa.ForeignKeyConstraint(["organization_id"], ["organizations.id"],
                                name=op.f("fk_console_users_organization_id_organizations")),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_console_users")),
        sa.UniqueConstraint("email", name=op.f("uq_console_users_email")),
    )
    with op.batch_alter_table("console_users", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_console_users_organization_id_id"), ["organization_id", "id"], unique=False)
    op.create_table(
        "console_sessions",
        sa.Column("id", sa.String(length=64), nullable=False),
        sa.Column("user_id", sa.String(length=40), nullable=False),
        sa.Column("csrf_token", sa.String(length=64), nullable=False),
        sa.Column("created_at", UtcDateTime(), nullable=False),
        sa.Column("expires_at", UtcDateTime(), nullable=False),
        sa.ForeignKeyConstraint(["user_id"], ["console_users.id"], name=op.f("fk_console_sessions_user_id_console_users")),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_console_sessions")),
    )
    with op.batch_alter_table("console_sessions", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_console_sessions_user_id"), ["user_id"], unique=False)
    op.create_table(
        "console_audit",
        sa.Column("id", sa.String(length=40), nullable=False),
        sa.Column("organization_id", sa.String(length=40), nullable=False),
        sa.Column("user_id", sa.String(length=40), nullable=True),
        sa.Column("actor_email", sa.String(length=320), nullable=False),
        sa.Column("action", sa.String(length=64), nullable=False),
        sa.Column("target", sa.String(length=200), nullable=False),
        sa.Column("detail", sa.String(length=500), nullable=False),
        sa.Column("created_at", UtcDateTime(), nullable=False),
        sa.ForeignKeyConstraint(["organization_id"], ["organizations.id"],
                                name=op.f("fk_console_audit_organization_id_organizations")),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_console_audit")),
    )
    with op.batch_alter_table("console_audit", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_console_audit_organization_id_id"), ["organization_id", "id"], unique=False)
    op.create_table(
        "certificate_documents",
        sa.Column("id", sa.String(length=40), nullable=False),
        sa.Column("organization_id", sa.String(length=40), nullable=False),
        sa.Column("certificate_id", sa.String(length=40), nullable=False),
        sa.Column("filename", sa.String(length=255), nullable=False),
        sa.Column("content_type", sa.String(length=64), nullable=False),
        sa.Column("size", sa.Integer(), nullable=False),
        sa.Column("data", sa.LargeBinary(), nullable=False),
        sa.Column("created_at", UtcDateTime(), nullable=False),
        sa.ForeignKeyConstraint(["organization_id"], ["organizations.id"],
                                name=op.f("fk_certificate_documents_organization_id_organizations")),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_certificate_documents")),
        sa.UniqueConstraint("certificate_id", name=op.f("uq_certificate_documents_certificate_id")),
    )


def downgrade() -> None:
    op.drop_table("certificate_documents")
    with op.batch_alter_table("console_audit", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_console_audit_organization_id_id"))
    op.drop_table("console_audit")
    with op.batch_alter_table("console_sessions", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_console_sessions_user_id"))
    op.drop_table("console_sessions")
    with op.batch_alter_table("console_users", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_console_users_organization_id_id"))
    op.drop_table("console_users")
