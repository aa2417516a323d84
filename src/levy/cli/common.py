"""What every ``levy`` command group shares: the database and organization
options, the configuration from the options, running a command in one
transaction on a migrated database, how Levy errors are printed, JSON output.

This module imports none of the command modules of :mod:`levy.cli` (a test
checks it), so any of them can import it."""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Awaitable, Callable, Sequence
from typing import Any

from levy.config import Config

Command = Callable[[argparse.Namespace], Awaitable[int]]

ORGANIZATION_HELP = "Organization (default: the only organization; required when there are several)."


def add_db(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--database-url",
        metavar="URL",
        help="SQLAlchemy async database URL (env LEVY_DATABASE_URL; default sqlite+aiosqlite:///./levy.db, "
        "in the working directory; only migrate and serve create a database that does not exist). "
        "PostgreSQL: postgresql+asyncpg://user@host:5432/db",
    )


def add_organization(p: argparse.ArgumentParser) -> None:
    """``--organization`` (defaulting to the only one) and ``--database-url``, for :func:`run_in_organization`."""
    p.add_argument("--organization", metavar="ORG_ID", help=ORGANIZATION_HELP)
    add_db(p)


def config_from(args: argparse.Namespace) -> Config:
    overrides: dict[str, Any] = {
        "database_url": getattr(args, "database_url", None),
        "grpc_address": getattr(args, "grpc_address", None),
        "http_address": getattr(args, "http_address", None),
        "shutdown_grace_seconds": getattr(args, "shutdown_grace_seconds", None),
        "shutdown_drain_seconds": getattr(args, "shutdown_drain_seconds", None),
        "log_level": getattr(args, "log_level", None),
        "workers": getattr(args, "workers", None),
        "event_loop": getattr(args, "event_loop", None),
    }
    if getattr(args, "no_reflection", False):
        overrides["grpc_reflection"] = False
    if getattr(args, "no_console", False):
        overrides["console"] = False
    return Config.from_env(**overrides)


async def with_store(args: argparse.Namespace, fn: Callable[[Any], Awaitable[int]], *, write: bool = True) -> int:
    """Run ``fn(conn)`` in one transaction on a migrated database.

    Every command but ``migrate`` and ``serve`` comes here, and none of them creates a
    database: a SQLite file that does not exist is refused (exit 2), so that a command
    run from another directory does not quietly start an empty ``./levy.db``."""
    from levy.app.services import AppServices
    from levy.store import migrate
    from levy.store.db import missing_sqlite_file

    config = config_from(args)
    missing = missing_sqlite_file(config.database_url)
    if missing is not None:
        print(f"levy: no Levy database at {missing}; run levy migrate or pass --database-url", file=sys.stderr)
        return 2
    services = AppServices.create(config)
    try:
        await migrate.upgrade(services.engine)
        async with services.uow(write=write) as conn:
            return await fn(conn)
    finally:
        await services.close()


class Refused(Exception):
    """A command refused before reaching the application core; the message goes to stderr (exit 2)."""


async def organization_id(conn: Any, requested: str | None) -> str:
    """The ``--organization`` given, or the only organization there is."""
    from levy.store.keys import SqlOrganizations

    orgs = SqlOrganizations(conn)
    if requested:
        if await orgs.get(requested) is None:
            raise Refused(f"no organization {requested}")
        return requested
    n = await orgs.count()
    if n == 0:
        raise Refused("there is no organization yet; create one with 'levy organizations create --name NAME'")
    if n > 1:
        raise Refused("there are several organizations; pass --organization ORG_ID")
    org = await orgs.first()
    assert org is not None
    return org.id


def option_for(pointer: str | None) -> str:
    """The option an error's JSON pointer names, as a message prefix: ``/lines/1/amount`` is ``--lines[2]: ``."""
    if not pointer:
        return ""
    parts = pointer.strip("/").split("/")
    if parts[0] == "address" and len(parts) > 1:  # a location's /address/postal_code is --postal-code
        parts = parts[1:]
    opt = "--" + parts[0].replace("_", "-")
    opt = {"--registration-number": "--number"}.get(opt, opt)
    return f"{opt}{''.join(f'[{int(p) + 1}]' for p in parts[1:] if p.isdigit())}: "


async def run_in_organization(args: argparse.Namespace, fn: Callable[[Any, str], Awaitable[str | None]], *,
                              write: bool) -> int:
    """Run ``fn(conn, organization_id)`` in one transaction; Levy errors go to stderr (exit 2).

    A command that writes (``write``) records an audit entry in that transaction, naming what
    ``fn`` returns: the id of the object it made or changed."""
    from levy.domain.errors import LevyError

    async def body(conn: Any) -> int:
        org = await organization_id(conn, args.organization)
        target = await fn(conn, org)
        if write:
            await audit_cli(conn, org, args, target or "")
        return 0

    try:
        return await with_store(args, body, write=write)
    except Refused as e:
        print(f"levy: {e}", file=sys.stderr)
    except LevyError as e:
        for item in e.items:
            print(f"levy: {option_for(item.pointer)}{item.detail}", file=sys.stderr)
    return 2


async def audit_cli(conn: Any, org: str, args: argparse.Namespace, target: str = "", detail: str = "") -> None:
    """The audit entry of the command ``args`` that changed ``target`` in ``org`` (the audit log of
    every transport), in the command's transaction."""
    from levy.app.audit import record_cli

    await record_cli(conn, org, command_name(args), target, detail)


def command_name(args: argparse.Namespace) -> str:
    """The command and its action, ``registrations add`` -> ``registrations.add``."""
    parts = [str(args.command)] + [str(v) for k, v in sorted(vars(args).items())
                                   if k.endswith("_command") and k != "command" and v]
    return ".".join(parts)


async def print_pages(fetch: Callable[[str | None], Awaitable[tuple[Sequence[Any], bool]]],
                      line: Callable[[Any], str]) -> None:
    """Print ``line(item)`` for every item of a listing, page after page: ``fetch(after)`` returns
    the page after the id ``after`` (None: the first) and whether there are more."""
    after = None
    while True:
        page, more = await fetch(after)
        for item in page:
            print(line(item))
        if not more:
            return
        after = page[-1].id


def print_message(msg: Any) -> None:
    """A protobuf message as the REST API renders it (JSON, indented)."""
    from levy.transport.codec import to_json

    print(json.dumps(to_json(msg), indent=2))
