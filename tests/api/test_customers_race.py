"""The batch upsert's race path: a triple inserted by a concurrent transaction
after the batch's select is updated, not duplicated (SQLite and PostgreSQL)."""

from __future__ import annotations

import asyncio
import random
import uuid
from collections.abc import Iterator
from pathlib import Path

import grpc
import httpx
import pytest
from sqlalchemy.engine import make_url

from levyserver import LevyServer, Tenant, create_tenant, fresh_database, start_server
from levytest import md
from levy.v1 import customers_pb2, customers_pb2_grpc
from levy.app import customers as uc
from levy.domain.customers import BatchItem
from levy.store.customers import SqlCustomers
from levy.store.db import create_engine, transaction


async def _scenario(url: str, org: str) -> tuple[list[BatchItem], str, dict]:
    engine = create_engine(url, pool_size=2)
    source_id = "race-" + uuid.uuid4().hex[:8]
    values = {"source": "native", "source_account_id": "__default__", "source_id": source_id, "name": "first",
              "email": None, "source_updated_at": None}
    items = [BatchItem(0, {**values, "name": "second"}, []), BatchItem(1, {**values, "source_id": source_id + "-b"}, [])]
    try:
        async with transaction(engine, write=True) as first:
            first_id = "cust_" + uuid.uuid4().hex[:26].upper()
            assert await SqlCustomers(first).insert(org, first_id, values, uc.utcnow())

            async def second() -> dict:
                async with transaction(engine, write=True) as conn:
                    return await uc.batch_upsert(conn, org, items)

            task = asyncio.create_task(second())
            await asyncio.sleep(0.5)  # the batch is now waiting on the first transaction
            assert not task.done()
        await task
        async with transaction(engine, write=False) as conn:
            rows = await SqlCustomers(conn).page(org, 100, None)
    finally:
        await engine.dispose()
    return items, first_id, {r.source_id: r for r in rows[0]}


def test_batch_updates_a_triple_a_concurrent_transaction_inserted(server: LevyServer, tenant: Tenant) -> None:
    items, first_id, rows = asyncio.run(_scenario(server.database_url, tenant.organization_id))
    assert [it.status for it in items] == ["updated", "created"]
    assert items[0].customer_id == first_id
    source_id = items[0].values["source_id"]  # type: ignore[index]
    assert set(rows) == {source_id, source_id + "-b"}
    assert rows[source_id].id == first_id and rows[source_id].name == "second"


# ------------------------------------------------------------------ overlapping batches under load
# Issue 16: 20 concurrent batches of 200 new customers drawn from 400 ids deadlocked on
# PostgreSQL (the batch locked stored rows in id order, then inserted in triple order, then
# locked the triples it lost to a concurrent insert) and some answered 500 after the retries.

IDS = [f"ovl-{i:03d}" for i in range(400)]
CONCURRENT = 20
PER_BATCH = 200


def _batches(rounds: int, seed: int) -> list[list[list[str]]]:
    """``rounds`` rounds of CONCURRENT batches, each PER_BATCH distinct ids out of IDS."""
    rng = random.Random(seed)
    return [[rng.sample(IDS, PER_BATCH) for _ in range(CONCURRENT)] for _ in range(rounds)]


@pytest.fixture(params=["sqlite", "postgres"])
def own_server(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[tuple[LevyServer, Tenant]]:
    """A server of this test's own (stopped by the test, so that PostgreSQL's statistics are final)."""
    with fresh_database(request.param, tmp_path) as url:
        srv = start_server(url, tmp_path)
        try:
            yield srv, create_tenant(url)
        finally:
            srv.stop()


async def _deadlocks(url: str) -> int:
    """Deadlocks PostgreSQL detected in the database of ``url`` (its backends have exited)."""
    import asyncpg

    u = make_url(url)
    conn = await asyncpg.connect(user=u.username, password=u.password, host=u.host, port=u.port or 5432,
                                 database=u.database)
    try:
        return int(await conn.fetchval("SELECT deadlocks FROM pg_stat_database WHERE datname = $1", u.database))
    finally:
        await conn.close()


def _check_outcome(srv: LevyServer, tenant: Tenant, sent: set[str], outcomes: list[str], ok: str) -> None:
    """Every batch succeeded, the stored customers are exactly the ids sent, and no deadlock occurred."""
    assert outcomes == [ok] * len(outcomes), sorted(set(outcomes))
    with httpx.Client(base_url=srv.http_url, headers={"X-API-Key": tenant.key}, timeout=30) as c:
        stored: list[str] = []
        after = None
        while True:
            page = c.get("/customers", params={"limit": 100, **({"starting_after": after} if after else {})}).json()
            stored += [row["source_id"] for row in page["data"]]
            if not page["has_more"]:
                break
            after = page["data"][-1]["id"]
    assert sorted(stored) == sorted(sent)  # exactly the union, each once
    code = srv.stop()
    assert code == 0, srv.log()
    assert "Traceback" not in srv.log()
    if srv.database_url.startswith("postgresql"):
        assert asyncio.run(_deadlocks(srv.database_url)) == 0


def test_overlapping_rest_batches_never_deadlock(own_server: tuple[LevyServer, Tenant]) -> None:
    srv, tenant = own_server
    rounds = _batches(5, seed=16)
    statuses: list[str] = []

    async def run() -> None:
        async with httpx.AsyncClient(base_url=srv.http_url, headers={"X-API-Key": tenant.key}, timeout=60,
                                     limits=httpx.Limits(max_connections=CONCURRENT)) as c:
            for n, batches in enumerate(rounds):
                async def one(i: int, ids: list[str]) -> None:
                    # Every other batch with an Idempotency-Key: it runs in the request's transaction.
                    headers = {"Idempotency-Key": uuid.uuid4().hex} if i % 2 else {}
                    r = await c.post("/customers/batch", headers=headers,
                                     json={"data": [{"source_id": s, "name": f"round {n}"} for s in ids]})
                    statuses.append(str(r.status_code))
                    if r.status_code == 200:
                        summary = r.json()["summary"]
                        assert summary["created"] + summary["updated"] == PER_BATCH, summary

                await asyncio.gather(*(one(i, ids) for i, ids in enumerate(batches)))

    asyncio.run(run())
    # 100 batches of 200 ids out of 400: with this seed every id is sent at least once.
    sent = {s for batches in rounds for ids in batches for s in ids}
    assert len(sent) == 400
    _check_outcome(srv, tenant, sent, statuses, "200")


def test_overlapping_grpc_batches_never_deadlock(own_server: tuple[LevyServer, Tenant]) -> None:
    srv, tenant = own_server
    rounds = _batches(5, seed=61)
    codes: list[str] = []

    async def run() -> None:
        async with grpc.aio.insecure_channel(srv.grpc_target) as ch:
            stub = customers_pb2_grpc.CustomerServiceStub(ch)
            for n, batches in enumerate(rounds):
                async def one(ids: list[str]) -> None:
                    req = customers_pb2.BatchUpsertCustomersRequest(
                        data=[customers_pb2.Customer(source_id=s, name=f"round {n}") for s in ids])
                    try:
                        resp = await stub.BatchUpsertCustomers(req, metadata=md(tenant.key))
                    except grpc.aio.AioRpcError as e:
                        codes.append(e.code().name)
                        return
                    codes.append("OK")
                    assert resp.summary.created + resp.summary.updated == PER_BATCH

                await asyncio.gather(*(one(ids) for ids in batches))

    asyncio.run(run())
    sent = {s for batches in rounds for ids in batches for s in ids}
    _check_outcome(srv, tenant, sent, codes, "OK")
