"""``levy serve`` and ``levy migrate``: run the server, apply database migrations."""

from __future__ import annotations

import argparse
from typing import Any

from levy.cli.common import add_db, config_from


def register(sub: Any) -> None:
    p = sub.add_parser("serve", help="Run the gRPC server and the REST gateway.",
                       description="Run the gRPC server and the REST gateway (in --workers processes). "
                       "Applies pending database migrations at start-up. SIGTERM/SIGINT drain and exit 0. "
                       "Rate limits, timeouts, the concurrency cap, Redis and metrics are configured through "
                       "LEVY_* environment variables (see docs/operations.md).")
    add_db(p)
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
                   "process). Only this server's workers share the ports: an address another process listens on stops the "
                   "start with 'address already in use' (exit 1). It says it is serving once every worker's ports "
                   "answer. If a worker dies unexpectedly, the others are stopped and levy exits 1.")
    p.add_argument("--event-loop", choices=("auto", "uvloop", "asyncio"),
                   help="Event loop: auto (uvloop when installed), uvloop or asyncio "
                   "(env LEVY_EVENT_LOOP; default auto).")
    p.add_argument("--no-reflection", action="store_true",
                   help="Do not serve gRPC server reflection (env LEVY_GRPC_REFLECTION=false).")
    p.add_argument("--no-console", action="store_true",
                   help="Do not serve the web console under /console (env LEVY_CONSOLE=false; docs/console.md).")
    p.set_defaults(func=serve)

    p = sub.add_parser("migrate", help="Apply pending database migrations.",
                       description="Apply pending database migrations (idempotent).")
    add_db(p)
    p.set_defaults(func=_migrate)


async def serve(args: argparse.Namespace) -> int:  # pragma: no cover - main() runs serve through levy.workers
    raise AssertionError("levy serve is run by levy.workers.run")


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
