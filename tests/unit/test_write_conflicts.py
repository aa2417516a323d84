"""A transaction PostgreSQL aborts as a deadlock victim: recognised on the real
driver exception, run again a bounded number of times, and answered 503 with
Retry-After (never 500) when the retries run out (issue 16)."""

from __future__ import annotations

import asyncio
import os
from types import SimpleNamespace

import pytest
from sqlalchemy import exc as sa_exc
from sqlalchemy import text

from levy.app.services import retry_write_conflicts
from levy.domain.errors import Unavailable
from levy.store.db import create_engine, is_write_conflict, transaction
from levy.transport.errors import from_unexpected
from levyserver import PG_ENV


async def _real_deadlock(url: str) -> BaseException:
    """The exception SQLAlchemy raises for the victim of a real deadlock: two transactions
    each hold one advisory lock and ask for the other's."""
    engine = create_engine(url, pool_size=2)
    held = asyncio.Barrier(2)

    async def side(first: int, second: int) -> None:
        async with transaction(engine, write=True) as conn:
            await conn.execute(text("SELECT pg_advisory_xact_lock(:k)"), {"k": first})
            await held.wait()
            await conn.execute(text("SELECT pg_advisory_xact_lock(:k)"), {"k": second})

    try:
        results = await asyncio.gather(side(1_600_001, 1_600_002), side(1_600_002, 1_600_001), return_exceptions=True)
    finally:
        await engine.dispose()
    errors = [r for r in results if isinstance(r, BaseException)]
    assert len(errors) == 1, results  # PostgreSQL aborts exactly one of the two
    return errors[0]


@pytest.fixture(scope="module")
def deadlock() -> BaseException:
    url = os.environ.get(PG_ENV)
    if not url:
        pytest.skip(f"needs {PG_ENV}")
    return asyncio.run(_real_deadlock(url))


def test_a_real_deadlock_is_a_write_conflict(deadlock: BaseException) -> None:
    assert isinstance(deadlock, sa_exc.DBAPIError)
    assert is_write_conflict(deadlock)
    assert not is_write_conflict(sa_exc.IntegrityError("INSERT", {}, Exception("duplicate key")))
    assert not is_write_conflict(ValueError("40P01"))


def test_a_conflict_is_run_again_until_it_succeeds(deadlock: BaseException) -> None:
    calls = []

    async def work() -> str:
        calls.append(1)
        if len(calls) < 3:
            raise deadlock
        return "done"

    assert asyncio.run(retry_write_conflicts(work)) == "done"
    assert len(calls) == 3


def test_retries_are_bounded_and_other_errors_are_not_retried(deadlock: BaseException) -> None:
    calls = []

    async def always(exc: BaseException) -> None:
        calls.append(1)
        raise exc

    with pytest.raises(sa_exc.DBAPIError):
        asyncio.run(retry_write_conflicts(lambda: always(deadlock), attempts=4))
    assert len(calls) == 4
    calls.clear()
    with pytest.raises(ValueError):
        asyncio.run(retry_write_conflicts(lambda: always(ValueError("bug"))))
    assert len(calls) == 1


def test_inside_a_request_transaction_the_conflict_goes_up_at_once(deadlock: BaseException) -> None:
    """The request's transaction is aborted as a whole: only its opener (idempotency) may run it again."""
    calls = []

    async def work() -> None:
        calls.append(1)
        raise deadlock

    async def inside() -> None:
        await retry_write_conflicts(work, in_request_transaction=True)

    with pytest.raises(sa_exc.DBAPIError):
        asyncio.run(inside())
    assert len(calls) == 1


def test_a_conflict_left_after_the_retries_is_503_with_retry_after(deadlock: BaseException) -> None:
    ctx = SimpleNamespace(request_id="req_1", response_headers={})
    err = from_unexpected(deadlock, ctx, "POST /customers/batch")
    assert isinstance(err, Unavailable)
    assert (err.status, err.grpc_code, err.first.code) == (503, "UNAVAILABLE", "service_unavailable")
    assert ctx.response_headers == {"retry-after": "1"}
    assert "deadlock" not in err.detail and "req_1" in err.detail
