"""Handlers of the RPCs, one module per area. Importing this package registers them."""

from levy.app.handlers import reference  # noqa: F401
from levy.app.handlers import customers  # noqa: F401
