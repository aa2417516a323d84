"""Handlers of the RPCs, one module per area. Importing this package registers them."""

from levy.app.handlers import (  # noqa: F401
    calculations,
    customers,
    filings,
    org_admin,
    products,
    reference,
    transactions,
)
