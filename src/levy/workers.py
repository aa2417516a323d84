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

Memory: before anything else, ``run`` caps glibc's malloc arenas at
:data:`MALLOC_ARENAS` (as ``MALLOC_ARENA_MAX=2`` would) unless the operator set
``MALLOC_ARENA_MAX`` or ``glibc.malloc.arena_max`` themselves; see
:func:`limit_malloc_arenas` and docs/operations.md ("Memory").
"""

from __future__ import annotations

import asyncio
import ctypes
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


# glibc's default is 8 arenas per core; gRPC core's threads each take one and
# fragment it (see limit_malloc_arenas).
MALLOC_ARENAS = 2
_M_ARENA_MAX = -8  # mallopt parameter, <malloc.h>


def limit_malloc_arenas(arenas: int = MALLOC_ARENAS) -> bool:
    """Cap glibc's malloc arenas for this process (and the workers it forks).

    Measured under 100,000 gRPC calculations (docs/performance.md): Python's own
    allocations (``tracemalloc``, ``sys.getallocatedblocks()``) and the bytes
    malloc has handed out (``mallinfo2().uordblks``) stay flat, but with glibc's
    default of up to 8 arenas per core, the per-thread arenas used by gRPC core's
    threads keep gaining free, fragmented chunks (``fordblks`` 18 -> 26 MB) and
    RSS creeps up by about 2-3 MB per 100,000 requests. Two arenas keep RSS flat
    and lower, with no measurable loss of throughput (the event loop is one
    thread; the other threads allocate little). Same effect as the environment
    variable ``MALLOC_ARENA_MAX=2``, applied here so that every way of running
    ``levy serve`` gets it; glibc reads the limit when it first needs a new arena
    past its eighth, so setting it at start-up takes effect.

    Does nothing (returns False) when the operator chose a limit
    (``MALLOC_ARENA_MAX``, or ``glibc.malloc.arena_max`` in ``GLIBC_TUNABLES``)
    or the C library is not glibc."""
    if "MALLOC_ARENA_MAX" in os.environ or "glibc.malloc.arena_max" in os.environ.get("GLIBC_TUNABLES", ""):
        return False
    try:
        libc = ctypes.CDLL(None)
        if not hasattr(libc, "gnu_get_libc_version") or not hasattr(libc, "mallopt"):
            return False
        return bool(libc.mallopt(_M_ARENA_MAX, arenas) == 1)
    except OSError:  # pragma: no cover - no C library to load
        return False


def worker_count(config: Config) -> int:
    return config.workers if config.workers > 0 else (os.cpu_count() or 1)


def run(config: Config) -> int:
    limit_malloc_arenas()
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
