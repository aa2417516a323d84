"""SQL store: SQLAlchemy 2 async (SQLite by default, PostgreSQL in production)."""
