"""Idempotency-Key semantics on a real database (SQLite and PostgreSQL), with a
handler that really writes: replay, reuse with another body, in-progress,
stored client errors, released server errors, atomicity, crash takeover."""

from __future__ import annotations

import asyncio
from datetime import datetime, timedelta, timezone

import pytest
from sqlalchemy import func, select, update

from levy.app import idempotency
from levy.app.context import CallContext
from levy.app.registry import method_by_name
from levy.app.services import AppServices
from levy.config import Config
from levy.domain.errors import Conflict, InternalError, ValidationFailed
from levy.store import migrate
from levy.store.keys import SqlOrganizations
from levy.store.tables.areas import idempotency_keys
from levy.store.tables.foundation import organizations
from levy.v1 import customers_pb2

METHOD = method_by_name()["levy.v1.CustomerService.CreateCustomer"]


class Harness:
    def __init__(self, services: AppServices, org_id: str) -> None:
        self.services = services
        self.org_id = org_id
        self.calls = 0

    def ctx(self, key: str | None) -> CallContext:
        ctx = CallContext(services=self.services, request_id="req_test", transport="grpc", idempotency_key=key)

        class _Key:
            organization_id = self.org_id

        ctx.key = _Key()  # type: ignore[assignment]
        return ctx

    async def org_count(self) -> int:
        async with self.services.uow() as conn:
            return int((await conn.execute(select(func.count()).select_from(organizations))).scalar_one())

    async def handler(self, req: customers_pb2.CreateCustomerRequest, ctx: CallContext) -> customers_pb2.Customer:
        """Writes a row (an organization, as a stand-in resource) and answers."""
        self.calls += 1
        async with ctx.uow(write=True) as conn:
            org = await SqlOrganizations(conn).create(f"made by {req.customer.source_id}")
        if req.customer.source_id == "fail-422":
            raise ValidationFailed("bad name", pointer="/name")
        if req.customer.source_id == "fail-500":
            raise InternalError("boom")
        if req.customer.source_id == "crash":
            raise RuntimeError("crash")
        return customers_pb2.Customer(id=org.id, source_id=req.customer.source_id)


def req(source_id: str) -> customers_pb2.CreateCustomerRequest:
    return customers_pb2.CreateCustomerRequest(customer=customers_pb2.Customer(source_id=source_id))


async def make_harness(database_url: str) -> Harness:
    services = AppServices.create(Config(database_url=database_url))
    await migrate.upgrade(services.engine)
    async with services.uow(write=True) as conn:
        org = await SqlOrganizations(conn).create("idem")
    return Harness(services, org.id)


@pytest.fixture
def run_with(database_url: str):  # type: ignore[no-untyped-def]
    """Run ``test(harness)`` in one event loop with a fresh harness."""

    def runner(test):  # type: ignore[no-untyped-def]
        async def main() -> None:
            h = await make_harness(database_url)
            try:
                await test(h)
            finally:
                await h.services.close()

        asyncio.run(main())

    return runner


def test_first_response_is_replayed_without_running_again(run_with) -> None:  # type: ignore[no-untyped-def]
    async def go(harness: Harness) -> None:
        before = await harness.org_count()
        first = await idempotency.run(METHOD, req("a"), harness.ctx("k1"), harness.handler)
        again = await idempotency.run(METHOD, req("a"), harness.ctx("k1"), harness.handler)
        assert again == first and harness.calls == 1
        assert await harness.org_count() == before + 1
        # Without a key, every call runs.
        await idempotency.run(METHOD, req("a"), harness.ctx(None), harness.handler)
        assert harness.calls == 2

    run_with(go)


def test_same_key_different_request_is_422(run_with) -> None:  # type: ignore[no-untyped-def]
    async def go(harness: Harness) -> None:
        await idempotency.run(METHOD, req("a"), harness.ctx("k2"), harness.handler)
        with pytest.raises(ValidationFailed) as e:
            await idempotency.run(METHOD, req("b"), harness.ctx("k2"), harness.handler)
        assert e.value.first.code == "idempotency_key_reused"
        assert harness.calls == 1

    run_with(go)


def test_retry_while_running_is_409(run_with) -> None:  # type: ignore[no-untyped-def]
    async def go(harness: Harness) -> None:
        started, release = asyncio.Event(), asyncio.Event()

        async def slow(r, ctx):  # type: ignore[no-untyped-def]
            started.set()
            await release.wait()
            return customers_pb2.Customer(id="cust_slow")

        first = asyncio.create_task(idempotency.run(METHOD, req("s"), harness.ctx("k3"), slow))
        await started.wait()
        with pytest.raises(Conflict) as e:
            await idempotency.run(METHOD, req("s"), harness.ctx("k3"), slow)
        assert e.value.first.code == "idempotency_in_progress"
        release.set()
        assert (await first).id == "cust_slow"
        assert (await idempotency.run(METHOD, req("s"), harness.ctx("k3"), slow)).id == "cust_slow"

    run_with(go)


def test_client_errors_are_stored_and_their_writes_rolled_back(run_with) -> None:  # type: ignore[no-untyped-def]
    async def go(harness: Harness) -> None:
        before = await harness.org_count()
        for _ in range(2):
            with pytest.raises(ValidationFailed) as e:
                await idempotency.run(METHOD, req("fail-422"), harness.ctx("k4"), harness.handler)
            assert e.value.status == 422 and e.value.first.pointer == "/name"
        assert harness.calls == 1
        assert await harness.org_count() == before  # the handler's write did not commit

    run_with(go)


def test_server_errors_release_the_key(run_with) -> None:  # type: ignore[no-untyped-def]
    async def go(harness: Harness) -> None:
        for source in ("fail-500", "crash"):
            for _ in range(2):
                with pytest.raises((InternalError, RuntimeError)):
                    await idempotency.run(METHOD, req(source), harness.ctx(f"k5-{source}"), harness.handler)
        assert harness.calls == 4  # each retry ran again

    run_with(go)


def test_abandoned_claim_is_taken_over_after_the_lock_time(run_with) -> None:  # type: ignore[no-untyped-def]
    async def go(harness: Harness) -> None:
        # A claim left by a process that died before committing its work.
        async with harness.services.uow(write=True) as conn:
            await conn.execute(
                idempotency_keys.insert().values(
                    organization_id=harness.org_id, key="k6", method=METHOD.full_name,
                    request_hash=idempotency.request_hash(METHOD, req("z"), harness.ctx("k6")),
                    status_code=None, response=None, created_at=datetime.now(timezone.utc), completed_at=None,
                )
            )
        with pytest.raises(Conflict):
            await idempotency.run(METHOD, req("z"), harness.ctx("k6"), harness.handler)
        async with harness.services.uow(write=True) as conn:
            await conn.execute(
                update(idempotency_keys).where(idempotency_keys.c.key == "k6")
                .values(created_at=datetime.now(timezone.utc) - timedelta(minutes=5))
            )
        out = await idempotency.run(METHOD, req("z"), harness.ctx("k6"), harness.handler)
        assert out.source_id == "z" and harness.calls == 1

    run_with(go)


def test_records_expire_after_24_hours(run_with) -> None:  # type: ignore[no-untyped-def]
    async def go(harness: Harness) -> None:
        await idempotency.run(METHOD, req("e"), harness.ctx("k7"), harness.handler)
        async with harness.services.uow(write=True) as conn:
            await conn.execute(
                update(idempotency_keys).where(idempotency_keys.c.key == "k7")
                .values(created_at=datetime.now(timezone.utc) - timedelta(hours=25))
            )
        await idempotency.run(METHOD, req("other"), harness.ctx("k7"), harness.handler)
        assert harness.calls == 2
        assert await idempotency.purge_expired(harness.services) == 0

    run_with(go)


class _DeadlockDetected(Exception):
    """Stands in for the driver's error (asyncpg's carries ``sqlstate``; tests/unit/test_write_conflicts.py
    provokes a real one)."""

    sqlstate = "40P01"


def test_a_deadlocked_request_transaction_runs_again_whole(run_with) -> None:  # type: ignore[no-untyped-def]
    """The handler's writes of the aborted attempt are rolled back with it; the second attempt's
    writes and stored response commit together (issue 16)."""
    from sqlalchemy import exc as sa_exc

    async def go(harness: Harness) -> None:
        before = await harness.org_count()
        handler = harness.handler

        async def deadlocks_once(request, ctx):  # type: ignore[no-untyped-def]
            response = await handler(request, ctx)  # writes a row in the request's transaction
            if harness.calls == 1:
                raise sa_exc.DBAPIError("INSERT", {}, _DeadlockDetected("deadlock detected"))
            return response

        first = await idempotency.run(METHOD, req("dl"), harness.ctx("k-deadlock"), deadlocks_once)
        assert harness.calls == 2
        assert await harness.org_count() == before + 1  # the first attempt's row was rolled back
        again = await idempotency.run(METHOD, req("dl"), harness.ctx("k-deadlock"), deadlocks_once)
        assert again == first and harness.calls == 2  # replayed from the stored response

    run_with(go)
