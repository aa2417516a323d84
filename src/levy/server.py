"""``levy serve``: the gRPC server and the REST gateway in one process.

Shutdown (SIGTERM or SIGINT): health turns NOT_SERVING and ``/healthz`` 503,
new requests are refused (503 / UNAVAILABLE), the listeners close after
``shutdown_drain_seconds``, in-flight requests get ``shutdown_grace_seconds``
to finish, then the process exits 0.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import signal
import socket
from collections.abc import Callable, Iterator
from typing import Any

import uvicorn

from levy.app import bootstrap, metrics
from levy.config import Config, split_address
from levy.transport.gateway import Gateway
from levy.transport.grpc_server import GrpcServer
from levy.transport.http_limits import limited_protocol
from levy.workers import ready_message

log = logging.getLogger("levy.server")


class _Uvicorn(uvicorn.Server):
    """uvicorn without its own signal handling: this process owns the signals."""

    @contextlib.contextmanager
    def capture_signals(self) -> Iterator[None]:
        yield


def reuse_port_socket(address: str) -> socket.socket:
    """A listening TCP socket with SO_REUSEPORT: every worker binds its own on the
    same port and the kernel spreads connections over them."""
    host, port = split_address(address)
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEPORT, 1)
    sock.bind((host, port))
    sock.listen(2048)
    sock.setblocking(False)
    return sock


async def serve(config: Config, *, ready: asyncio.Event | None = None, migrate_db: bool = True,
                reuse_port: bool = False, on_ready: Callable[[], None] | None = None) -> int:
    """Serve until SIGTERM/SIGINT. ``migrate_db=False``, ``reuse_port=True`` and ``on_ready``
    when run as one of several workers (the parent migrated before forking, and says it is
    serving when every worker called ``on_ready``)."""
    # The signals are ours before anything listens: a SIGTERM that arrives while the
    # server starts (a supervisor that saw /healthz answer, or one that gives up) stops
    # it the graceful way once it is up, instead of killing it mid-start (exit -15).
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stop.set)
    app = await bootstrap.build(config, migrate_db=migrate_db)
    pipeline = app.pipeline

    grpc_server = GrpcServer(pipeline, config, reuse_port=reuse_port)
    grpc_port = await grpc_server.start(config.grpc_address)
    gateway = Gateway(pipeline, config)
    if config.metrics:
        gateway.extra_routes["/metrics"] = _metrics
    if config.console:
        from levy.console import Console

        gateway.mount("/console", Console(pipeline, app.console, config))
    metrics.DB_POOL_SIZE.set(config.db_pool_size)
    metrics.count_statements(app.services.engine)
    host, port = split_address(config.http_address)
    sockets = [reuse_port_socket(config.http_address)] if reuse_port else None
    web = _Uvicorn(
        uvicorn.Config(
            gateway,
            host=host,
            port=port,
            lifespan="off",
            log_level="warning",
            log_config=None,
            access_log=False,
            http=limited_protocol(config),
            timeout_graceful_shutdown=int(config.shutdown_grace_seconds) or None,
        )
    )
    web_task = asyncio.create_task(web.serve(sockets=sockets))
    while not web.started:
        if web_task.done():
            await web_task
            raise OSError(f"cannot listen for HTTP on {config.http_address}")
        await asyncio.sleep(0.01)
    log.info("levy serving gRPC on %s (port %d), HTTP on %s, event loop %s", config.grpc_address, grpc_port,
             config.http_address, type(asyncio.get_running_loop()).__module__.split(".")[0])
    if on_ready is not None:
        on_ready()
    else:
        print(ready_message(config), flush=True)

    if ready is not None:
        ready.set()
    waiter = asyncio.create_task(stop.wait())
    await asyncio.wait({waiter, web_task}, return_when=asyncio.FIRST_COMPLETED)

    log.info("shutting down: draining for %.1fs, grace %.1fs", config.shutdown_drain_seconds, config.shutdown_grace_seconds)
    gateway.shutting_down = True
    await grpc_server.begin_shutdown()
    if config.shutdown_drain_seconds > 0:
        await asyncio.sleep(config.shutdown_drain_seconds)
    web.should_exit = True
    await asyncio.gather(grpc_server.stop(config.shutdown_grace_seconds), web_task, return_exceptions=True)
    await app.close()
    print("levy: stopped", flush=True)
    return 0


async def _metrics(scope: Any) -> tuple[int, bytes, str]:
    body, ctype = metrics.render()
    return 200, body, ctype
