"""Handlers of the RPCs, one module per area. Importing this package registers them."""

from levy.app.handlers import calculations, customers, org_admin, products, reference, transactions  # noqa: F401
