"""Handlers of the RPCs, one module per area. Importing this package registers them."""

from levy.app.handlers import customers, org_admin, products, reference  # noqa: F401
