"""``levy serve``: one process, or a parent and N forked workers.

With ``--workers 1`` the server runs in this process (``levy.server.serve``).
With N > 1 the parent applies migrations once, sets
``PROMETHEUS_MULTIPROC_DIR`` (a fresh temporary directory unless already set)
so that ``/metrics`` aggregates every worker, and forks N workers *before* any
gRPC object exists (gRPC is not fork-safe; the parent never imports the
server). Each worker runs the full server, binding the gRPC and HTTP ports
with SO_REUSEPORT; the kernel spreads connections over them.

Signals: SIGTERM/SIGINT to the parent are forwarded to every worker, which
drain as a single process does; the parent exits 0 when all workers exited 0.
A worker that exits while the parent did not ask it to (crash, failed start)
is reported in the log and the whole group stops: the others get SIGTERM and
the parent exits 1, so that the supervisor (systemd, Kubernetes, compose)
restarts a clean group. The design choice and its reasons are in
docs/operations.md.
"""

from __future__ import annotations

import asyncio
import logging
import os
import shutil
import signal
import sys
import tempfile
from types import FrameType

from levy import eventloop
from levy.config import Config

log = logging.getLogger("levy.workers")


def worker_count(config: Config) -> int:
    return config.workers if config.workers > 0 else (os.cpu_count() or 1)


def run(config: Config) -> int:
    n = worker_count(config)
    if n == 1:
        from levy.server import serve

        return eventloop.run(serve(config), config.event_loop)
    return _supervise(config, n)


async def _migrate(config: Config) -> None:
    from levy.store import migrate
    from levy.store.db import create_engine

    engine = create_engine(config.database_url, pool_size=1)
    try:
        await migrate.upgrade(engine)
    finally:
        await engine.dispose()


def _supervise(config: Config, n: int) -> int:
    own_dir = None
    if not os.environ.get("PROMETHEUS_MULTIPROC_DIR"):
        own_dir = tempfile.mkdtemp(prefix="levy-metrics-")
        os.environ["PROMETHEUS_MULTIPROC_DIR"] = own_dir
    if "grpc" in sys.modules:  # pragma: no cover - a guard for future imports
        log.warning("grpc was imported before forking the workers; it must not create objects in the parent")
    asyncio.run(_migrate(config))

    stopping = False
    children: dict[int, int] = {}

    def forward(signum: int, _frame: FrameType | None) -> None:
        nonlocal stopping
        stopping = True
        for pid in list(children):
            try:
                os.kill(pid, signum)
            except ProcessLookupError:
                pass

    signal.signal(signal.SIGTERM, forward)
    signal.signal(signal.SIGINT, forward)
    for i in range(n):
        pid = os.fork()
        if pid == 0:  # the worker
            _worker(config, i)
        children[pid] = i
    log.info("levy: %d workers started: %s", n, ", ".join(str(p) for p in children))
    print(f"levy: {n} workers serving gRPC on {config.grpc_address}, HTTP on {config.http_address}", flush=True)

    exit_code = 0
    while children:
        try:
            pid, status = os.wait()
        except ChildProcessError:  # pragma: no cover
            break
        index = children.pop(pid, None)
        if index is None:
            continue
        code = os.waitstatus_to_exitcode(status)
        _mark_dead(pid)
        if stopping and code == 0:
            continue
        exit_code = 1
        log.error("worker %d (pid %d) exited with %s%s; stopping the group", index, pid, code,
                  "" if stopping else " while not asked to stop")
        if not stopping:
            forward(signal.SIGTERM, None)
    if own_dir is not None:
        shutil.rmtree(own_dir, ignore_errors=True)
    print(f"levy: all workers stopped (exit {exit_code})", flush=True)
    return exit_code


def _worker(config: Config, index: int) -> None:
    """Runs in the forked child; never returns."""
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    signal.signal(signal.SIGINT, signal.SIG_DFL)
    code = 1
    try:
        from levy.server import serve

        code = eventloop.run(serve(config, migrate_db=False, reuse_port=True), config.event_loop)
    except BaseException:  # noqa: BLE001 - report, then exit non-zero
        log.exception("worker %d failed", index)
    finally:
        logging.shutdown()
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(code)


def _mark_dead(pid: int) -> None:
    if os.environ.get("PROMETHEUS_MULTIPROC_DIR"):
        from prometheus_client import multiprocess

        multiprocess.mark_process_dead(pid)
