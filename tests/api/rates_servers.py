"""A Levy server on a database of its own with rate files imported the way a user does it
(``levy migrate`` then ``levy rates import``), for the API tests of address resolution."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import grpc
import httpx
import pytest
from levyserver import LevyServer, fresh_database, start_server
from test_calculations import Caller, _levy

from levy.v1 import calculations_pb2_grpc as pbg


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


def caller(transport: str, server: LevyServer) -> Iterator[Caller]:
    """A calculation Caller through ``transport`` ("rest" or "grpc") to ``server``, for a fixture to yield from."""
    with httpx.Client(base_url=server.http_url, timeout=30) as rest, grpc.insecure_channel(server.grpc_target) as ch:
        yield Caller(transport, rest, pbg.CalculationServiceStub(ch))
