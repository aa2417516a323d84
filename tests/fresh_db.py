"""``fresh_database_url``: an empty database of its own for one test, on SQLite
(a temp file) and on PostgreSQL (created and dropped around the test; skips
without ``LEVY_TEST_POSTGRES_URL`` like every PostgreSQL test). For tests that
need a database no other test writes to (the CLI's "the only organization"
defaults, a server built in-process). Import the fixture into the test module."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from levyserver import fresh_database


@pytest.fixture(params=["sqlite", "postgres"])
def fresh_database_url(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    with fresh_database(request.param, tmp_path) as url:
        yield url
