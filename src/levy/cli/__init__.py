"""The ``levy`` command line: one module per command group, each exposing
``register(sub)``, and :mod:`levy.cli.common` for what they share.

Scripts rely on this contract: ``levy keys create`` prints the new secret and
nothing else on stdout; every command and option is described by ``--help``.
Every option that has a LEVY_* environment variable says so.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import signal
import sys
from collections.abc import Sequence

from levy import __version__
from levy.cli import certificates, filings, holidays, locations, org, rates, serve, tenants, transactions, users
from levy.cli.common import config_from

# The command groups, in the order ``levy --help`` lists them.
GROUPS = (serve, tenants, org, certificates, rates, holidays, filings, locations, users, transactions)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="levy",
        description="Levy: an open-source, self-hostable sales tax service (gRPC and a JSON REST gateway).",
    )
    parser.add_argument("--version", action="version", version=f"levy {__version__}")
    parser.add_argument(
        "--log-level", default=None, choices=["debug", "info", "warning", "error"],
        help="Log level (env LEVY_LOG_LEVEL; default info).",
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    for group in GROUPS:
        group.register(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    config = config_from(args)
    from levy import logs

    logs.configure(config.log_level)
    try:
        if args.func is serve.serve:
            from levy import eventloop
            from levy.workers import run

            try:
                eventloop.loop_factory(config.event_loop)
            except ValueError as e:
                print(f"levy: {e}", file=sys.stderr)
                return 2
            return run(config)
        status = asyncio.run(args.func(args))
        sys.stdout.flush()  # here, where a closed pipe is caught, rather than at exit
        return status
    except BrokenPipeError:
        # The reader stopped early (`levy rates list | head -5`): exit quietly, as a command
        # killed by SIGPIPE does, with nothing left for Python to flush at exit.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 128 + signal.SIGPIPE
    except KeyboardInterrupt:  # pragma: no cover
        return 130

