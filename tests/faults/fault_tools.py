"""Tools of the fault tests: a TCP proxy that a test can stop and start (the
database "goes away" and "comes back" for a server that reaches it through the
proxy), PostgreSQL backend killing, and a small helper to find leaks."""

from __future__ import annotations

import asyncio
import contextlib
import threading
from typing import Any

LEAKS = ("Traceback", "File \"", "sqlalchemy", "sqlite", "asyncpg", "SELECT", "OperationalError",
         "ConnectionRefused", "ConnectionDoesNotExist", ".py")


class TcpProxy:
    """Forwards 127.0.0.1:<port> to (host, target_port) from a background event loop.

    ``stop()`` closes the listener and cuts every open connection (the database
    is unreachable: connects are refused, open connections reset); ``start()``
    listens again on the same port."""

    def __init__(self, target_host: str, target_port: int) -> None:
        self.target = (target_host, target_port)
        self.port = 0
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, daemon=True)
        self._thread.start()
        self._server: asyncio.base_events.Server | None = None
        self._writers: set[asyncio.StreamWriter] = set()

    def _run(self, coro: Any) -> Any:
        return asyncio.run_coroutine_threadsafe(coro, self._loop).result(timeout=10)

    def start(self) -> None:
        self._run(self._start())

    def stop(self) -> None:
        self._run(self._stop())

    def close(self) -> None:
        with contextlib.suppress(Exception):
            self.stop()
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(timeout=5)

    async def _start(self) -> None:
        self._server = await asyncio.start_server(self._client, "127.0.0.1", self.port, reuse_address=True)
        self.port = self._server.sockets[0].getsockname()[1]

    async def _stop(self) -> None:
        if self._server is not None:
            self._server.close()
            self._server = None
        for w in list(self._writers):
            w.transport.abort()
        self._writers.clear()

    async def _client(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            up_reader, up_writer = await asyncio.open_connection(*self.target)
        except OSError:
            writer.transport.abort()
            return
        self._writers.update((writer, up_writer))

        async def pipe(src: asyncio.StreamReader, dst: asyncio.StreamWriter) -> None:
            try:
                while data := await src.read(65536):
                    dst.write(data)
                    await dst.drain()
            except (OSError, asyncio.CancelledError):
                pass
            finally:
                dst.transport.abort()

        await asyncio.gather(pipe(reader, up_writer), pipe(up_reader, writer))
        self._writers.discard(writer)
        self._writers.discard(up_writer)


async def _terminate(admin_url: str, database: str) -> int:
    import asyncpg
    from sqlalchemy.engine import make_url

    u = make_url(admin_url)
    conn = await asyncpg.connect(user=u.username, password=u.password, host=u.host or "127.0.0.1",
                                 port=u.port or 5432, database=u.database)
    try:
        rows = await conn.fetch(
            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid()",
            database,
        )
        return sum(1 for r in rows if r[0])
    finally:
        await conn.close()


def terminate_backends(admin_url: str, database: str) -> int:
    """``pg_terminate_backend`` every connection to ``database``; how many were killed."""
    return asyncio.run(_terminate(admin_url, database))
