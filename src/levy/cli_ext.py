"""Subcommands contributed by areas beyond the foundation (rates, settings,
registrations, certificates, filings, ...). Each area adds a ``register``
call here so that ``levy --help`` lists it."""

from __future__ import annotations

import argparse
from collections.abc import Callable
from typing import Any


def register(sub: Any, add_db: Callable[[argparse.ArgumentParser], None]) -> None:
    """Add area subcommands to the ``levy`` parser."""
    from levy import cli_certificates, cli_filings, cli_org, cli_rates

    cli_org.register(sub, add_db)
    cli_certificates.register(sub, add_db)
    cli_rates.register(sub, add_db)
    cli_filings.register(sub, add_db)
