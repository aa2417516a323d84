"""Console users' emails unique per organization, not across organizations

Issue 30: inviting an email that another organization's console already uses was
refused ("a console user with the email exists"), which told any admin that the
account exists elsewhere. An email now names one account per organization; sign-in
finds the account whose password matches (levy.app.console_service.sign_in). Lookups by
email keep an index of their own.

Revision ID: 0013_console_guards
Revises: 0012_currency_marketplace
"""

from alembic import op


revision = "0013_console_guards"
down_revision = "0012_currency_marketplace"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("console_users", schema=None) as batch_op:
        batch_op.drop_constraint("uq_console_users_email", type_="unique")
        batch_op.create_unique_constraint("uq_console_users_organization_id_email", ["organization_id", "email"])
        batch_op.create_index("ix_console_users_email", ["email"], unique=False)


def downgrade() -> None:
    with op.batch_alter_table("console_users", schema=None) as batch_op:
        batch_op.drop_index("ix_console_users_email")
        batch_op.drop_constraint("uq_console_users_organization_id_email", type_="unique")
        batch_op.create_unique_constraint("uq_console_users_email", ["email"])
