"""The ``levy`` command line.

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
from collections.abc import Awaitable, Callable, Sequence
from typing import Any

from levy import __version__
from levy.config import Config

Command = Callable[[argparse.Namespace], Awaitable[int]]


def _add_db(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--database-url",
        metavar="URL",
        help="SQLAlchemy async database URL (env LEVY_DATABASE_URL; default sqlite+aiosqlite:///./levy.db, "
        "in the working directory; only migrate and serve create a database that does not exist). "
        "PostgreSQL: postgresql+asyncpg://user@host:5432/db",
    )


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

    p = sub.add_parser("serve", help="Run the gRPC server and the REST gateway.",
                       description="Run the gRPC server and the REST gateway (in --workers processes). "
                       "Applies pending database migrations at start-up. SIGTERM/SIGINT drain and exit 0. "
                       "Rate limits, timeouts, the concurrency cap, Redis and metrics are configured through "
                       "LEVY_* environment variables (see docs/operations.md).")
    _add_db(p)
    p.add_argument("--grpc-address", metavar="HOST:PORT",
                   help="gRPC listen address (env LEVY_GRPC_ADDRESS; default 127.0.0.1:50051).")
    p.add_argument("--http-address", metavar="HOST:PORT",
                   help="REST gateway listen address (env LEVY_HTTP_ADDRESS; default 127.0.0.1:8080).")
    p.add_argument("--shutdown-grace-seconds", type=float, metavar="S",
                   help="Seconds in-flight requests get to finish on shutdown (env LEVY_SHUTDOWN_GRACE_SECONDS; default 10).")
    p.add_argument("--shutdown-drain-seconds", type=float, metavar="S",
                   help="Seconds between reporting NOT_SERVING and closing the listeners "
                   "(env LEVY_SHUTDOWN_DRAIN_SECONDS; default 0).")
    p.add_argument("--workers", type=int, metavar="N",
                   help="Worker processes sharing the gRPC and HTTP ports with SO_REUSEPORT, forked after migrations "
                   "and before any gRPC object exists (env LEVY_WORKERS; default 0 = one per CPU core; 1 = a single "
                   "process). If a worker dies unexpectedly, the others are stopped and levy exits 1.")
    p.add_argument("--event-loop", choices=("auto", "uvloop", "asyncio"),
                   help="Event loop: auto (uvloop when installed), uvloop or asyncio "
                   "(env LEVY_EVENT_LOOP; default auto).")
    p.add_argument("--no-reflection", action="store_true",
                   help="Do not serve gRPC server reflection (env LEVY_GRPC_REFLECTION=false).")
    p.set_defaults(func=_serve)

    p = sub.add_parser("migrate", help="Apply pending database migrations.",
                       description="Apply pending database migrations (idempotent).")
    _add_db(p)
    p.set_defaults(func=_migrate)

    orgs = sub.add_parser("organizations", help="Manage organizations (tenants).",
                          description="Manage organizations (tenants).")
    osub = orgs.add_subparsers(dest="org_command", metavar="ACTION", required=True)
    p = osub.add_parser("create", help="Create an organization and print its id.",
                        description="Create an organization and print its id (one line).")
    p.add_argument("--name", required=True, help="Organization name.")
    _add_db(p)
    p.set_defaults(func=_org_create)
    p = osub.add_parser("list", help="List organizations.", description="List organizations: id and name.")
    _add_db(p)
    p.set_defaults(func=_org_list)

    keys = sub.add_parser("keys", help="Manage API keys.", description="Manage API keys.")
    ksub = keys.add_subparsers(dest="key_command", metavar="ACTION", required=True)
    p = ksub.add_parser("create", help="Create an API key and print its secret (once).",
                        description="Create an API key and print its secret, and nothing else, on stdout (one line). "
                        "If the database has no organization yet, one is created.")
    p.add_argument("--name", required=True, help="Key name, to recognise it in lists.")
    p.add_argument("--organization", metavar="ORG_ID",
                   help="Organization of the key (default: the only organization; required when there are several).")
    p.add_argument("--admin", action="store_true", help="Admin scope: may use the organization/admin API.")
    _add_db(p)
    p.set_defaults(func=_keys_create)
    p = ksub.add_parser("list", help="List API keys (never their secrets).",
                        description="List API keys: id, organization, name, prefix, admin, created, last used, revoked.")
    p.add_argument("--organization", metavar="ORG_ID", help="Only this organization's keys.")
    _add_db(p)
    p.set_defaults(func=_keys_list)
    p = ksub.add_parser("revoke", help="Revoke an API key.", description="Revoke an API key; it stops working at once.")
    p.add_argument("key_id", metavar="KEY_ID", help="The key's id (key_...).")
    _add_db(p)
    p.set_defaults(func=_keys_revoke)

    from levy import cli_ext

    cli_ext.register(sub, _add_db)
    return parser


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
    return Config.from_env(**overrides)


async def _serve(args: argparse.Namespace) -> int:  # pragma: no cover - main() runs serve through levy.workers
    raise AssertionError("levy serve is run by levy.workers.run")


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


async def _migrate(args: argparse.Namespace) -> int:
    from levy.app.services import AppServices
    from levy.store import migrate

    services = AppServices.create(config_from(args))
    try:
        await migrate.upgrade(services.engine)
        print(f"database at revision {await migrate.current_revision(services.engine)}")
    finally:
        await services.close()
    return 0


async def _org_create(args: argparse.Namespace) -> int:
    from levy.store.keys import SqlOrganizations

    async def run(conn: Any) -> int:
        org = await SqlOrganizations(conn).create(args.name)
        print(org.id)
        return 0

    return await with_store(args, run)


async def _org_list(args: argparse.Namespace) -> int:
    from sqlalchemy import select

    from levy.store.tables.foundation import organizations

    async def run(conn: Any) -> int:
        for row in (await conn.execute(select(organizations).order_by(organizations.c.id))).all():
            print(f"{row.id}\t{row.name}")
        return 0

    return await with_store(args, run, write=False)


async def _keys_create(args: argparse.Namespace) -> int:
    from levy.store.keys import SqlApiKeys, SqlOrganizations

    async def run(conn: Any) -> int:
        orgs = SqlOrganizations(conn)
        if args.organization:
            org = await orgs.get(args.organization)
            if org is None:
                print(f"levy: no organization {args.organization}", file=sys.stderr)
                return 2
        else:
            n = await orgs.count()
            if n == 0:
                org = await orgs.create("Default organization")
            elif n == 1:
                org = await orgs.first()
            else:
                print("levy: there are several organizations; pass --organization ORG_ID", file=sys.stderr)
                return 2
        assert org is not None
        _, secret = await SqlApiKeys(conn).create(org.id, args.name, args.admin)
        print(secret)
        return 0

    return await with_store(args, run)


async def _keys_list(args: argparse.Namespace) -> int:
    from levy.store.keys import SqlApiKeys

    def ts(v: Any) -> str:
        return v.isoformat() if v else "-"

    async def run(conn: Any) -> int:
        keys = SqlApiKeys(conn)
        after = None
        print("id\torganization\tname\tprefix\tadmin\tcreated_at\tlast_used_at\trevoked_at")
        while True:
            page, more = await keys.list(args.organization, 1000, after)
            for k in page:
                print(f"{k.id}\t{k.organization_id}\t{k.name}\t{k.prefix}\t{'yes' if k.admin else 'no'}\t"
                      f"{ts(k.created_at)}\t{ts(k.last_used_at)}\t{ts(k.revoked_at)}")
            if not more:
                return 0
            after = page[-1].id

    return await with_store(args, run, write=False)


async def _keys_revoke(args: argparse.Namespace) -> int:
    from levy.store.keys import SqlApiKeys

    async def run(conn: Any) -> int:
        rec = await SqlApiKeys(conn).revoke(None, args.key_id)
        if rec is None:
            print(f"levy: no key {args.key_id}", file=sys.stderr)
            return 2
        print(f"revoked {rec.id}")
        return 0

    return await with_store(args, run)


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    config = config_from(args)
    from levy import logs

    logs.configure(config.log_level)
    try:
        if args.func is _serve:
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


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
