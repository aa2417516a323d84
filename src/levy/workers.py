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

Ports: only this server's workers may share them. Before forking, the parent
checks that nothing listens on either address (a bind without SO_REUSEPORT,
:func:`claim_ports`) and then holds a bound, never listening socket with
SO_REUSEPORT but not SO_REUSEADDR (with it only where an earlier server's connections in
TIME_WAIT hold the port, after a restart) on each until it exits: its own workers
(SO_REUSEPORT, same user) join it, while a second, independent ``levy serve``
fails its own check with "address already in use", as a ``--workers 1`` server
does. Each worker reports on a pipe when its ports answer; the parent prints
that it is serving only when all have (:func:`ready_message`).

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
import select
import shutil
import signal
import socket
import sys
import tempfile
from types import FrameType

from levy import eventloop
from levy.config import Config, split_address

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


def ready_message(config: Config, workers: int = 1) -> str:
    """What ``levy serve`` prints once its ports answer: where it serves, where the console is
    and that a request needs an API key."""
    who = f"{workers} workers serving" if workers > 1 else "serving"
    lines = [f"levy: {who} gRPC on {config.grpc_address}, HTTP on {config.http_address}"]
    if config.console:
        lines.append(f"levy: web console at http://{config.http_address}/console/ "
                     "(first user: levy users create --email EMAIL --role admin)")
    lines.append("levy: every API request needs an API key (X-API-Key header or x-api-key metadata): "
                 "levy keys create --name NAME --admin")
    return "\n".join(lines)


def claim_ports(addresses: list[str]) -> list[socket.socket]:
    """Sockets holding ``addresses`` for this server's workers (see the module's docstring);
    raises ``OSError`` (errno EADDRINUSE, "address already in use") when another process listens
    on one of them. An address with port 0 is not held (each worker picks its own port)."""
    held: list[socket.socket] = []
    try:
        for address in addresses:
            host, port = split_address(address)
            if port == 0:
                continue
            family = socket.AF_INET6 if ":" in host else socket.AF_INET
            with socket.socket(family, socket.SOCK_STREAM) as probe:
                # SO_REUSEADDR: a connection of an earlier server in TIME_WAIT does not count.
                probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
                try:
                    probe.bind((host, port))
                except OSError as e:
                    raise OSError(e.errno, f"cannot listen on {address}: {e.strerror}") from None
            sock = socket.socket(family, socket.SOCK_STREAM)
            held.append(sock)
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEPORT, 1)
            try:
                sock.bind((host, port))
            except OSError:
                # Nothing listens (the probe bound), so what holds the port is an earlier server's
                # connections in TIME_WAIT (a restart on its ports): hold it with SO_REUSEADDR too.
                # A second server is then refused by its probe once the workers listen.
                sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
                sock.bind((host, port))
    except BaseException:
        for sock in held:
            sock.close()
        raise
    return held


def worker_count(config: Config) -> int:
    return config.workers if config.workers > 0 else (os.cpu_count() or 1)


def run(config: Config) -> int:
    limit_malloc_arenas()
    n = worker_count(config)
    if n == 1:
        from levy.server import serve

        try:  # the same check and message as with several workers
            for sock in claim_ports([config.grpc_address, config.http_address]):
                sock.close()
        except OSError as e:
            return _cannot_listen(e)
        return eventloop.run(serve(config), config.event_loop)
    return _supervise(config, n)


def _cannot_listen(e: OSError) -> int:
    log.error("%s", e)
    print(f"levy: {e}", file=sys.stderr, flush=True)
    return 1


async def _migrate(config: Config) -> None:
    from levy.store import migrate
    from levy.store.db import create_engine

    engine = create_engine(config.database_url, pool_size=1)
    try:
        await migrate.upgrade(engine)
    finally:
        await engine.dispose()


def _supervise(config: Config, n: int) -> int:
    try:
        held = claim_ports([config.grpc_address, config.http_address])
    except OSError as e:
        return _cannot_listen(e)
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
    ready_r, ready_w = os.pipe()
    for i in range(n):
        pid = os.fork()
        if pid == 0:  # the worker
            os.close(ready_r)
            for sock in held:
                sock.close()
            _worker(config, i, ready_w)
        children[pid] = i
    os.close(ready_w)
    log.info("levy: %d workers started: %s", n, ", ".join(str(p) for p in children))

    exit_code = 0
    ready: int | None = 0
    while children:
        if ready is not None:  # not all ports answer yet: wait for a worker's word or a worker's end
            ready = _read_ready(ready_r, ready)
            if ready == n:
                ready = None
                if not stopping:
                    print(ready_message(config, n), flush=True)
            found = os.waitpid(-1, os.WNOHANG)
            if found == (0, 0):
                continue
            pid, status = found
        else:
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
    os.close(ready_r)
    for sock in held:
        sock.close()
    if own_dir is not None:
        shutil.rmtree(own_dir, ignore_errors=True)
    print(f"levy: all workers stopped (exit {exit_code})", flush=True)
    return exit_code


def _read_ready(fd: int, ready: int) -> int | None:
    """``ready`` plus the workers that reported their ports answer within 0.2 s; None when no
    worker can report any more (each reported or ended)."""
    readable, _, _ = select.select([fd], [], [], 0.2)
    if not readable:
        return ready
    got = os.read(fd, 64)
    return ready + len(got) if got else None


def _worker(config: Config, index: int, ready_fd: int) -> None:
    """Runs in the forked child; never returns. Writes one byte to ``ready_fd`` once its ports
    answer."""
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    signal.signal(signal.SIGINT, signal.SIG_DFL)
    code = 1
    try:
        from levy.server import serve

        def ready() -> None:
            os.write(ready_fd, b"1")
            os.close(ready_fd)

        code = eventloop.run(serve(config, migrate_db=False, reuse_port=True, on_ready=ready), config.event_loop)
    except BaseException:
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
