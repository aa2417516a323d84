"""A Levy server on a database of its own with rate files imported the way a user does it
(``levy migrate`` then ``levy rates import``), for the API tests of address resolution."""

from __future__ import annotations

import asyncio
import hashlib
from collections.abc import Iterator, Sequence
from datetime import date
from pathlib import Path

import grpc
import httpx
import pytest
from levyserver import LevyServer, fresh_database, start_server
from test_calculations import Caller, _levy

from levy.v1 import calculations_pb2_grpc as pbg

from levy.domain.tax.local_rates import LocalRecord


def server_with_rates(kind: str, tmp_path_factory: pytest.TempPathFactory, *files: Path,
                      import_flags: tuple[str, ...] = ()) -> Iterator[LevyServer]:
    """Yields the server (``kind``: "sqlite" or "postgres"); skips when a rate file is absent."""
    for need in files:
        if not need.is_file():
            pytest.skip(f"rate files not present: {need}")
    with fresh_database(kind, tmp_path_factory.mktemp("ratesdb")) as url:
        for args in (("migrate",), ("rates", "import", *map(str, files), *import_flags, "--no-progress")):
            done = _levy(url, *args)
            assert done.returncode == 0, done.stdout + done.stderr
        srv = start_server(url, tmp_path_factory.mktemp("rates-logs"))
        try:
            yield srv
        finally:
            assert srv.stop() == 0, srv.log()


async def _import_records(url: str, source: str, records: Sequence[LocalRecord]) -> None:
    from levy.app.rate_import import ParsedFile, import_files
    from levy.store.db import create_engine

    engine = create_engine(url, pool_size=1)
    try:
        async with engine.begin() as conn:
            await import_files(conn, [ParsedFile(Path(source), "test", hashlib.sha256(source.encode()).hexdigest(),
                                                 date(2020, 1, 1), None, list(records), {"rows_read": len(records)})])
    finally:
        await engine.dispose()


def server_with_records(kind: str, tmp_path_factory: pytest.TempPathFactory, source: str,
                        records: Sequence[LocalRecord]) -> Iterator[LevyServer]:
    """Yields a server (``kind``: "sqlite" or "postgres") on a database of its own with synthetic
    ``records`` imported through the application's import path (as file ``source``); it re-reads
    rate imports every 0.3 s, so wait for the records to be picked up."""
    with fresh_database(kind, tmp_path_factory.mktemp("recordsdb")) as url:
        srv = start_server(url, tmp_path_factory.mktemp("records-logs"), extra_env={"LEVY_RATES_REFRESH_SECONDS": "0.3"})
        try:
            asyncio.run(_import_records(url, source, records))
            yield srv
        finally:
            assert srv.stop() == 0, srv.log()


def caller(transport: str, server: LevyServer) -> Iterator[Caller]:
    """A calculation Caller through ``transport`` ("rest" or "grpc") to ``server``, for a fixture to yield from."""
    with httpx.Client(base_url=server.http_url, timeout=30) as rest, grpc.insecure_channel(server.grpc_target) as ch:
        yield Caller(transport, rest, pbg.CalculationServiceStub(ch))
