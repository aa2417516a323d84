"""Shared test support (imported as ``levyserver``; ``tests/conftest.py`` re-exports
its fixtures). Test modules import helpers from here, never from ``conftest``:
several ``conftest.py`` files exist and the name is ambiguous at run time.

Fixtures: a real ``levy serve`` process per database backend.

- ``database_url`` is parametrized over SQLite (a temp file) and PostgreSQL.
  PostgreSQL tests read ``LEVY_TEST_POSTGRES_URL`` (``.ci/run`` sets it, e.g.
  ``postgresql+asyncpg://postgres@127.0.0.1:5432/test``) and run in a fresh
  database created for the test session and dropped after it; without the
  variable they skip with that reason.
- ``server`` starts ``python -m levy serve`` on free ports against it.
- ``tenant`` creates a new organization with an admin key and a plain key
  directly in the store, so every test has its own tenant.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import socket
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import grpc
import httpx
import pytest

ROOT = Path(__file__).resolve().parents[1]
SRC = ROOT / "src"
if str(SRC) not in sys.path:
    sys.path.insert(0, str(SRC))

PG_ENV = "LEVY_TEST_POSTGRES_URL"
REDIS_ENV = "LEVY_TEST_REDIS_URL"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


# Test servers run as one process and with limits far above what any test sends, so
# that tests sharing a server never trip each other's limits (and many 401 tests
# from 127.0.0.1 do not trip the failed-authentication limit). The tests of those
# limits and of --workers start their own servers with other values.
TEST_SERVER_DEFAULTS = {
    "LEVY_WORKERS": "1",
    "LEVY_RATE_LIMIT_PER_SECOND": "100000",
    "LEVY_RATE_LIMIT_BURST": "100000",
    "LEVY_AUTH_FAILURE_LIMIT_PER_MINUTE": "100000",
    "LEVY_CONSOLE_SIGN_IN_PER_ADDRESS_PER_MINUTE": "100000",
}


def levy_env(**extra: str) -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = str(SRC) + os.pathsep + env.get("PYTHONPATH", "")
    for k in list(env):
        if k.startswith("LEVY_") and not k.startswith("LEVY_TEST_"):
            del env[k]
    env.update(TEST_SERVER_DEFAULTS)
    env.update(extra)
    return env


# ------------------------------------------------------------------ databases


async def _pg_admin(url: str, sql: str) -> None:
    import asyncpg
    from sqlalchemy.engine import make_url

    u = make_url(url)
    conn = await asyncpg.connect(
        user=u.username, password=u.password, host=u.host or "127.0.0.1", port=u.port or 5432, database=u.database
    )
    try:
        await conn.execute(sql)
    finally:
        await conn.close()


def make_postgres_database() -> tuple[str, str]:
    """(url of a fresh database, its name). Skips when PostgreSQL is not configured."""
    base = os.environ.get(PG_ENV)
    if not base:
        if os.environ.get("LEVY_TEST_REQUIRE_SERVICES"):
            pytest.fail(f"{PG_ENV} is not set but LEVY_TEST_REQUIRE_SERVICES is")
        pytest.skip(
            f"PostgreSQL tests need {PG_ENV} (for example postgresql+asyncpg://postgres@127.0.0.1:5432/test); "
            ".ci/run sets it"
        )
    from sqlalchemy.engine import make_url

    name = f"levy_test_{uuid.uuid4().hex[:12]}"
    asyncio.run(_pg_admin(base, f'CREATE DATABASE "{name}"'))
    return make_url(base).set(database=name).render_as_string(hide_password=False), name


def drop_postgres_database(name: str) -> None:
    base = os.environ[PG_ENV]
    asyncio.run(_pg_admin(base, f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))


@contextmanager
def fresh_database(kind: str, directory: Path) -> Iterator[str]:
    """The url of a new, empty database: ``kind`` "sqlite" (a file in ``directory``) or
    "postgres" (created now, dropped on exit; skips when PostgreSQL is not configured)."""
    if kind == "sqlite":
        yield f"sqlite+aiosqlite:///{directory}/levy.db"
        return
    url, name = make_postgres_database()
    try:
        yield url
    finally:
        drop_postgres_database(name)


@pytest.fixture(scope="session", params=["sqlite", "postgres"])
def database_url(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    with fresh_database(request.param, tmp_path_factory.mktemp("db")) as url:
        yield url


# ------------------------------------------------------------------ servers


@dataclass
class LevyServer:
    proc: subprocess.Popen[bytes]
    http_url: str
    grpc_target: str
    database_url: str
    log_path: Path

    def log(self) -> str:
        return self.log_path.read_text(errors="replace") if self.log_path.exists() else ""

    def stop(self, sig: int = signal.SIGTERM, timeout: float = 30) -> int:
        if self.proc.poll() is None:
            self.proc.send_signal(sig)
        return self.proc.wait(timeout=timeout)


def start_server(database_url: str, log_dir: Path, *, extra_env: dict[str, str] | None = None,
                 args: list[str] | None = None, timeout: float = 60,
                 ports: tuple[int, int] | None = None) -> LevyServer:
    """``ports``: (HTTP, gRPC), for example a stopped server's to restart it in place."""
    http_port, grpc_port = ports or (free_port(), free_port())
    log_path = log_dir / f"levy-{http_port}.log"
    log_file = open(log_path, "wb")
    proc = subprocess.Popen(
        [sys.executable, "-m", "levy", "serve", "--database-url", database_url,
         "--grpc-address", f"127.0.0.1:{grpc_port}", "--http-address", f"127.0.0.1:{http_port}", *(args or [])],
        env=levy_env(**(extra_env or {})),
        stdout=log_file,
        stderr=subprocess.STDOUT,
        cwd=str(ROOT),
    )
    server = LevyServer(proc, f"http://127.0.0.1:{http_port}", f"127.0.0.1:{grpc_port}", database_url, log_path)
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"levy serve exited with {proc.returncode}:\n{server.log()}")
        try:
            if httpx.get(server.http_url + "/healthz", timeout=1).status_code == 200:
                return server
        except httpx.HTTPError:
            pass
        time.sleep(0.1)
    proc.kill()
    raise RuntimeError(f"levy serve did not become healthy:\n{server.log()}")


@contextmanager
def own_server(kind: str, directory: Path, env: dict[str, str], *, timeout: float = 60) -> Iterator[LevyServer]:
    """A server of a test module's own (other limits) on a fresh ``kind`` database;
    stopped cleanly at the end (``timeout``: seconds it may take to answer /healthz)."""
    with fresh_database(kind, directory) as url:
        srv = start_server(url, directory, extra_env=env, timeout=timeout)
        try:
            yield srv
        finally:
            assert srv.stop() == 0, srv.log()


def raw_connect(srv: LevyServer) -> socket.socket:
    """A bare TCP connection to the server's HTTP port (for requests no client library sends)."""
    host, port = srv.http_url.removeprefix("http://").rsplit(":", 1)
    sock = socket.create_connection((host, int(port)))
    sock.settimeout(10)
    return sock


def read_until_closed(sock: socket.socket) -> bytes:
    """Everything the server sends until it closes the connection (a reset after its answer counts as closed)."""
    out = b""
    with contextlib.suppress(ConnectionResetError, BrokenPipeError):
        while chunk := sock.recv(65536):
            out += chunk
    return out


@pytest.fixture(scope="session")
def server(database_url: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[LevyServer]:
    srv = start_server(database_url, tmp_path_factory.mktemp("logs"))
    try:
        yield srv
    finally:
        code = srv.stop()
        assert code == 0, f"levy serve exited with {code}:\n{srv.log()}"


# ------------------------------------------------------------------ tenants


@dataclass
class Tenant:
    organization_id: str
    key: str  # plain key
    admin_key: str
    key_id: str
    admin_key_id: str


async def _create_tenant(database_url: str) -> Tenant:
    from levy.store.db import create_engine, transaction
    from levy.store.keys import SqlApiKeys, SqlOrganizations

    engine = create_engine(database_url, pool_size=1)
    try:
        async with transaction(engine, write=True) as conn:
            org = await SqlOrganizations(conn).create(f"Test org {uuid.uuid4().hex[:6]}")
            keys = SqlApiKeys(conn)
            plain, secret = await keys.create(org.id, "plain", False)
            admin, admin_secret = await keys.create(org.id, "admin", True)
    finally:
        await engine.dispose()
    return Tenant(org.id, secret, admin_secret, plain.id, admin.id)


def create_tenant(database_url: str) -> Tenant:
    return asyncio.run(_create_tenant(database_url))


@pytest.fixture
def tenant(server: LevyServer) -> Tenant:
    return create_tenant(server.database_url)


@pytest.fixture
def other_tenant(server: LevyServer) -> Tenant:
    return create_tenant(server.database_url)


# ------------------------------------------------------------------ clients


@pytest.fixture
def http(server: LevyServer, tenant: Tenant) -> Iterator[httpx.Client]:
    """REST client authenticated as the tenant's plain key."""
    with httpx.Client(base_url=server.http_url, headers={"X-API-Key": tenant.key}, timeout=30) as c:
        yield c


@pytest.fixture
def admin_http(server: LevyServer, tenant: Tenant) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=server.http_url, headers={"X-API-Key": tenant.admin_key}, timeout=30) as c:
        yield c


@pytest.fixture
def anon_http(server: LevyServer) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=server.http_url, timeout=30) as c:
        yield c


@pytest.fixture(scope="session")
def channel(server: LevyServer) -> Iterator[grpc.Channel]:
    ch = grpc.insecure_channel(
        server.grpc_target,
        options=[("grpc.max_send_message_length", 16 << 20), ("grpc.max_receive_message_length", 16 << 20)],
    )
    try:
        yield ch
    finally:
        ch.close()
