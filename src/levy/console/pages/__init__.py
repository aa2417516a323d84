"""The console's pages by group, one module each: its views (a class mixed into
:class:`levy.console.app.Console`) and ``routes(console)``, the :class:`~levy.console.routing.Route`
objects that name them. :data:`PAGES` is the order in which their routes are matched."""

from levy.console.pages import (
    account,
    calculator,
    customers,
    filings,
    keys,
    locations,
    nexus,
    people,
    products,
    settings,
    transactions,
    webhooks,
)

PAGES = (account, keys, customers, settings, calculator, nexus, filings, transactions, people, products, locations,
         webhooks)

__all__ = ["PAGES"]
