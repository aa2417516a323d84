"""Table definitions, one module per area, all on one MetaData.

Alembic migrations create them; ``tests/store`` checks that the migrations
produce exactly this metadata.
"""

from levy.store.tables.base import metadata
from levy.store.tables import areas, console, events, filings, foundation, locations, transactions  # noqa: F401  (registers tables)

__all__ = ["metadata"]
