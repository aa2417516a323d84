"""Alembic environment: run by levy.store.migrate with a live connection."""

from alembic import context

from levy.store.tables import metadata

config = context.config
connection = config.attributes["connection"]
context.configure(
    connection=connection,
    target_metadata=metadata,
    render_as_batch=connection.dialect.name == "sqlite",
    compare_type=True,
)
with context.begin_transaction():
    context.run_migrations()
