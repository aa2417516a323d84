"""The fleet test of issue 9: three ``levy serve`` processes (separate ports,
``--workers 1`` each) on ONE PostgreSQL database and ONE Redis, driven from
threads through all three replicas round-robin (REST and gRPC):

- overlapping batch upserts: no duplicate triple, every acknowledged item present
  with one of the values written for it, each triple created exactly once;
- transaction creations with colliding ``reference_id``: one success per reference,
  the rest 409 naming the winner, one row per reference in the database;
- lifecycle moves on shared transactions from all three replicas at once: exactly
  one of three competing finalizations wins, and the outcomes of competing
  void / draft / edit moves are those of one serial order (none lost);
- concurrent credits on one parent never exceed it;
- a rate limit that holds across the replicas (the burst in total, not 3x).

It needs PostgreSQL and Redis (``LEVY_TEST_POSTGRES_URL``, ``LEVY_TEST_REDIS_URL``;
``.ci/run`` sets both) and skips with that reason otherwise. Every request has a
timeout and every phase a fixed number of requests, so the test ends by itself.
"""

from __future__ import annotations

import asyncio
import itertools
import os
import random
import signal
import threading
from collections import Counter, defaultdict
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import grpc
import httpx
import pytest
from google.protobuf import json_format
from sqlalchemy import func, select

from levyserver import (
    PG_ENV,
    REDIS_ENV,
    LevyServer,
    Tenant,
    create_tenant,
    drop_postgres_database,
    make_postgres_database,
    start_server,
)
from levytest import grpc_error, md
from levy.store.db import create_engine, transaction
from levy.store.tables.areas import customers as customers_t
from levy.store.tables.transactions import transaction_lines as lines_t
from levy.store.tables.transactions import transactions as txn_t
from levy.v1 import reference_pb2, reference_pb2_grpc
from levy.v1 import transactions_pb2 as tpb
from levy.v1 import transactions_pb2_grpc as tpbg

pytestmark = [pytest.mark.postgres, pytest.mark.redis, pytest.mark.slow]

REPLICAS = 3
TIMEOUT = 30  # seconds, every HTTP request and gRPC call
# Redis database of this test (not the default 0 the other tests use): rate-limit
# keys are per API key id, unique per run, so parallel runs do not collide either.
REDIS_DB = 13
D = "2026-03-15T12:00:00Z"


def _redis_url() -> str:
    missing = [v for v in (PG_ENV, REDIS_ENV) if not os.environ.get(v)]
    if missing:
        if os.environ.get("LEVY_TEST_REQUIRE_SERVICES"):
            pytest.fail(f"{' and '.join(missing)} not set but LEVY_TEST_REQUIRE_SERVICES is")
        pytest.skip(f"the fleet test runs replicas on one PostgreSQL and one Redis: set {' and '.join(missing)} "
                    "(for example postgresql+asyncpg://postgres@127.0.0.1:5432/test, redis://127.0.0.1:6379/0)")
    url = os.environ[REDIS_ENV]
    base, _, last = url.rstrip("/").rpartition("/")
    return f"{base}/{REDIS_DB}" if last.isdigit() and base.count("/") >= 2 else f"{url.rstrip('/')}/{REDIS_DB}"


class Fleet:
    """Three replicas on one database; clients pick them round-robin."""

    def __init__(self, servers: list[LevyServer], tenant: Tenant) -> None:
        self.servers, self.tenant = servers, tenant
        self.channels = [grpc.insecure_channel(s.grpc_target) for s in servers]
        self._rr = itertools.count()
        self._local = threading.local()

    def next(self) -> int:
        return next(self._rr) % len(self.servers)

    def http(self, i: int) -> httpx.Client:
        clients = getattr(self._local, "clients", None)
        if clients is None:
            clients = self._local.clients = [
                httpx.Client(base_url=s.http_url, headers={"X-API-Key": self.tenant.key}, timeout=TIMEOUT)
                for s in self.servers]
        return clients[i]

    def tx_stub(self, i: int) -> tpbg.TransactionServiceStub:
        return tpbg.TransactionServiceStub(self.channels[i])

    def close(self) -> None:
        for ch in self.channels:
            ch.close()

    def stop(self) -> None:
        self.close()
        codes = [s.stop(signal.SIGTERM) for s in self.servers]
        assert codes == [0] * len(codes), [s.log()[-2000:] for s in self.servers]


def start_fleet(database_url: str, log_dir: Path, env: dict[str, str]) -> list[LevyServer]:
    # Started at once: the three run the migrations check concurrently (advisory lock).
    with ThreadPoolExecutor(REPLICAS) as pool:
        futures = [pool.submit(start_server, database_url, log_dir, extra_env=env, args=["--workers", "1"])
                   for _ in range(REPLICAS)]
        return [f.result() for f in futures]


@pytest.fixture(scope="module")
def fleet_db() -> Iterator[tuple[str, str]]:
    redis_url = _redis_url()
    url, name = make_postgres_database()
    try:
        yield url, redis_url
    finally:
        drop_postgres_database(name)


@pytest.fixture(scope="module")
def fleet(fleet_db: tuple[str, str], tmp_path_factory: pytest.TempPathFactory) -> Iterator[Fleet]:
    url, redis_url = fleet_db
    servers = start_fleet(url, tmp_path_factory.mktemp("fleet"), {"LEVY_REDIS_URL": redis_url})
    f = Fleet(servers, create_tenant(url))
    try:
        r = httpx.post(servers[0].http_url + "/organization/registrations", timeout=TIMEOUT,
                       headers={"X-API-Key": f.tenant.admin_key},
                       json={"jurisdiction": "US-ST-TX", "effective_from": "2020-01-01"})
        assert r.status_code in (200, 201), r.text
        yield f
    finally:
        f.stop()


def db_rows(database_url: str, stmt: Any) -> list[Any]:
    async def run() -> list[Any]:
        engine = create_engine(database_url, pool_size=1)
        try:
            async with transaction(engine, write=False) as conn:
                return list((await conn.execute(stmt)).all())
        finally:
            await engine.dispose()

    return asyncio.run(run())


def at_once(calls: list[Callable[[], Any]]) -> list[Any]:
    """Run the calls in threads released together by a barrier; results in order."""
    barrier = threading.Barrier(len(calls))

    def run(fn: Callable[[], Any]) -> Any:
        barrier.wait(timeout=TIMEOUT)
        return fn()

    with ThreadPoolExecutor(len(calls)) as pool:
        return list(pool.map(run, calls))


def line(price: int, id: str = "1") -> dict[str, Any]:
    return {"id": id, "quantity": "1", "unit_price": str(price), "customer": {"address": {"state": "TX"}},
            "product": {"tax_attributes": ["GENERAL.TANGIBLE.GOODS"]}}


def create_txn(f: Fleet, i: int, body: dict[str, Any], via_grpc: bool) -> tuple[int, dict[str, Any]]:
    """(HTTP status, body) through replica ``i``, by REST or gRPC (errors as ``{"errors": [...]}``)."""
    if not via_grpc:
        r = f.http(i).post("/transactions", json=body)
        return r.status_code, r.json()
    req = tpb.CreateTransactionRequest(transaction=json_format.ParseDict(body, tpb.Transaction()))
    try:
        out = f.tx_stub(i).CreateTransaction(req, metadata=md(f.tenant.key), timeout=TIMEOUT)
    except grpc.RpcError as e:
        err = grpc_error(e)
        assert err.errors, err
        return int(err.errors[0]["status"]), {"errors": err.errors, "grpc_code": err.code}
    return 200, json_format.MessageToDict(out, preserving_proto_field_name=True)


def update_txn(f: Fleet, i: int, tid: str, body: dict[str, Any]) -> tuple[int, dict[str, Any]]:
    r = f.http(i).post(f"/transactions/{tid}", json=body)
    return r.status_code, r.json()


# ------------------------------------------------------------------ batch upserts


def test_overlapping_batch_upserts_through_three_replicas(fleet: Fleet, fleet_db: tuple[str, str]) -> None:
    rng = random.Random(9)
    pool_ids = [f"fleet-{n:03d}" for n in range(90)]
    batches = []
    for b in range(24):
        chosen = rng.sample(pool_ids, 40)  # random order: batches lock overlapping rows in different orders
        batches.append([{"source_id": s, "name": f"b{b}-{s}", "email": f"b{b}@example.com"} for s in chosen])

    def send(b: int) -> httpx.Response:
        return fleet.http(b % REPLICAS).post("/customers/batch", json={"data": batches[b]})

    with ThreadPoolExecutor(6) as pool:
        responses = list(pool.map(send, range(len(batches))))

    written: dict[str, set[str]] = defaultdict(set)
    ids: dict[str, set[str]] = defaultdict(set)
    created = Counter()
    for items, r in zip(batches, responses, strict=True):
        assert r.status_code == 200, r.text
        body = r.json()
        assert body["summary"]["failed"] == 0 and body["summary"]["deleted"] == 0, body["summary"]
        for item, result in zip(items, body["data"], strict=True):
            assert result["status"] in ("created", "updated"), result
            assert result["customer"]["source_id"] == item["source_id"]
            written[item["source_id"]].add(item["name"])
            ids[item["source_id"]].add(result["customer"]["id"])
            created[item["source_id"]] += result["status"] == "created"
    # Each triple was created by exactly one item of one batch; every other item updated that row.
    assert {s: n for s, n in created.items() if n != 1} == {}
    assert {s: v for s, v in ids.items() if len(v) != 1} == {}

    url = fleet_db[0]
    org = fleet.tenant.organization_id
    dup = db_rows(url, select(customers_t.c.source, customers_t.c.source_account_id, customers_t.c.source_id,
                              func.count()).where(customers_t.c.organization_id == org)
                  .group_by(customers_t.c.source, customers_t.c.source_account_id, customers_t.c.source_id)
                  .having(func.count() > 1))
    assert dup == []
    rows = {r.source_id: r for r in db_rows(url, select(customers_t).where(
        customers_t.c.organization_id == org, customers_t.c.source_id.like("fleet-%")))}
    assert set(rows) == set(written)  # every acknowledged item is present, nothing else
    for sid, row in rows.items():
        assert row.id in ids[sid]
        assert row.name in written[sid], (sid, row.name)  # one of the values written for it, whole:
        assert row.email == row.name.split("-", 1)[0] + "@example.com"  # name and email of the same item


# ------------------------------------------------------------------ reference ids


def test_colliding_reference_ids_through_three_replicas(fleet: Fleet, fleet_db: tuple[str, str]) -> None:
    refs = [f"fleet-inv-{n}" for n in range(6)]
    attempts = 6  # per reference: two per replica, REST and gRPC
    calls = []
    for ref in refs:
        for a in range(attempts):
            body = {"type": "sale", "status": "finalized", "transaction_date": D, "reference_id": ref,
                    "line_items": [line(1000 + a)]}
            calls.append((ref, lambda b=body, i=a % REPLICAS, g=bool(a // REPLICAS): create_txn(fleet, i, b, g)))
    results = at_once([c for _, c in calls])
    by_ref: dict[str, list[tuple[int, dict[str, Any]]]] = defaultdict(list)
    for (ref, _), res in zip(calls, results, strict=True):
        by_ref[ref].append(res)
    for ref, outcomes in by_ref.items():
        codes = sorted(s for s, _ in outcomes)
        assert codes == [200] + [409] * (attempts - 1), (ref, outcomes)
        winner = next(o for s, o in outcomes if s == 200)
        assert winner["reference_id"] == ref
        for s, o in outcomes:
            if s == 409:
                e = o["errors"][0]
                assert e["code"] == "duplicate_reference_id"
                assert e["meta"] == {"existing_transaction_id": winner["id"],
                                     "existing_transaction_path": f"/transactions/{winner['id']}"}
    rows = db_rows(fleet_db[0], select(txn_t.c.reference_id, func.count()).where(
        txn_t.c.organization_id == fleet.tenant.organization_id, txn_t.c.reference_id.in_(refs))
        .group_by(txn_t.c.reference_id))
    assert dict(rows) == {ref: 1 for ref in refs}


# ------------------------------------------------------------------ lifecycle moves


def _model(order: list[tuple[str, dict[str, Any]]], start: tuple[str, int]) -> tuple[list[bool], tuple[str, int]]:
    """Apply moves serially from ``start`` = (status, unit price): which succeed, and the end state."""
    status, price = start
    ok = []
    for _, move in order:
        if "line_items" in move:
            good = status == "draft"
            if good:
                price = int(move["line_items"][0]["unit_price"])
                status = move.get("status", status)
        elif move["status"] == status:
            good = True  # requesting the current status is a no-op
        else:
            good = (status, move["status"]) in {("draft", "finalized"), ("draft", "void"),
                                                ("finalized", "void"), ("finalized", "draft")}
            if good:
                status = move["status"]
        ok.append(good)
    return ok, (status, price)


def explained_by_a_serial_order(moves: list[tuple[str, dict[str, Any]]], succeeded: list[bool],
                                start: tuple[str, int], end: tuple[str, int]) -> bool:
    for perm in itertools.permutations(range(len(moves))):
        ok, state = _model([moves[i] for i in perm], start)
        if state == end and all(ok[perm.index(i)] == succeeded[i] for i in range(len(moves))):
            return True
    return False


def test_lifecycle_races_through_three_replicas(fleet: Fleet, fleet_db: tuple[str, str]) -> None:
    n = 6
    tids = []
    for k in range(n):
        s, out = create_txn(fleet, fleet.next(), {"type": "sale", "status": "draft", "transaction_date": D,
                                                  "line_items": [line(500)]}, via_grpc=k % 2 == 1)
        assert s == 200, out
        tids.append(out["id"])

    # 1. Three finalizations with different lines at once, one per replica: exactly one wins
    #    (the others find it finalized: its lines can no longer change), its lines are kept.
    prices = [1000, 2000, 3000]
    calls = [lambda t=t, r=r: update_txn(fleet, r, t, {"status": "finalized", "line_items": [line(prices[r])]})
             for t in tids for r in range(REPLICAS)]
    results = at_once(calls)
    winners = {}
    for k, t in enumerate(tids):
        mine = results[k * REPLICAS:(k + 1) * REPLICAS]
        assert sorted(s for s, _ in mine) == [200, 422, 422], mine
        for s, o in mine:
            if s == 422:
                assert o["errors"][0]["code"] == "invalid_state" and "move it to 'draft' first" in o["errors"][0]["detail"]
        winners[t] = next(int(o["line_items"][0]["unit_price"]) for s, o in mine if s == 200)
        for r in range(REPLICAS):  # every replica reads the same single state
            got = fleet.http(r).get(f"/transactions/{t}").json()
            assert (got["status"], int(got["line_items"][0]["unit_price"])) == ("finalized", winners[t])

    # 2. From finalized, at once: void (replica 0), back to draft (1), edit the lines (2; needs draft).
    moves = [("void", {"status": "void"}), ("draft", {"status": "draft"}), ("edit", {"line_items": [line(7777)]})]
    calls = [lambda t=t, r=r: update_txn(fleet, r, t, moves[r][1]) for t in tids for r in range(REPLICAS)]
    results = at_once(calls)
    for k, t in enumerate(tids):
        mine = results[k * REPLICAS:(k + 1) * REPLICAS]
        assert all(s in (200, 422) for s, _ in mine), mine
        assert all(o["errors"][0]["code"] == "invalid_state" for s, o in mine if s == 422), mine
        got = fleet.http(k % REPLICAS).get(f"/transactions/{t}").json()
        end = (got["status"], int(got["line_items"][0]["unit_price"]))
        # void is allowed from finalized and from draft, so it always succeeds and is final.
        assert mine[0][0] == 200 and got["status"] == "void", (mine, got)
        assert explained_by_a_serial_order(moves, [s == 200 for s, _ in mine], ("finalized", winners[t]), end), \
            (mine, end)
    # Never a duplicated or lost line: each transaction holds exactly its one line.
    rows = db_rows(fleet_db[0], select(lines_t.c.transaction_id, func.count()).where(
        lines_t.c.transaction_id.in_(tids)).group_by(lines_t.c.transaction_id))
    assert dict(rows) == {t: 1 for t in tids}


def test_concurrent_credits_through_three_replicas(fleet: Fleet, fleet_db: tuple[str, str]) -> None:
    """Three credits of 4000 on a 10000 sale, one per replica at once: two fit, the third is refused."""
    parents = []
    for _ in range(4):
        s, out = create_txn(fleet, fleet.next(), {"type": "sale", "status": "finalized", "transaction_date": D,
                                                  "line_items": [line(10000)]}, via_grpc=False)
        assert s == 200, out
        parents.append(out["id"])
    calls = [lambda p=p, r=r: create_txn(fleet, r, {"type": "credit", "status": "finalized", "transaction_date": D,
                                                   "parent_transaction_id": p, "line_items": [line(4000)]},
                                         via_grpc=r == 2)
             for p in parents for r in range(REPLICAS)]
    results = at_once(calls)
    for k, p in enumerate(parents):
        mine = results[k * REPLICAS:(k + 1) * REPLICAS]
        assert sorted(s for s, _ in mine) == [200, 200, 422], mine
        refused = next(o for s, o in mine if s == 422)
        assert refused["errors"][0]["meta"]["remaining_amount"] == 2000
    rows = db_rows(fleet_db[0], select(txn_t.c.parent_transaction_id, func.sum(txn_t.c.net_amount)).where(
        txn_t.c.organization_id == fleet.tenant.organization_id, txn_t.c.type == "credit",
        txn_t.c.parent_transaction_id.in_(parents)).group_by(txn_t.c.parent_transaction_id))
    assert dict(rows) == {p: 8000 for p in parents}


# ------------------------------------------------------------------ rate limit


def test_rate_limit_holds_across_three_replicas(fleet_db: tuple[str, str], tmp_path: Path) -> None:
    """Its own fleet (the limit is per process configuration): burst 10, one token per 100 s."""
    url, redis_url = fleet_db
    burst = 10
    servers = start_fleet(url, tmp_path, {"LEVY_REDIS_URL": redis_url, "LEVY_RATE_LIMIT_BURST": str(burst),
                                          "LEVY_RATE_LIMIT_PER_SECOND": "0.01"})
    fleet = Fleet(servers, create_tenant(url))
    try:
        def rest(i: int) -> tuple[str, int, dict[str, str]]:
            r = httpx.get(servers[i].http_url + "/product-tax-codes", params={"limit": 1}, timeout=TIMEOUT,
                          headers={"X-API-Key": fleet.tenant.key})
            return "rest", r.status_code, dict(r.headers)

        def rpc(i: int) -> tuple[str, int, dict[str, str]]:
            stub = reference_pb2_grpc.ReferenceServiceStub(fleet.channels[i])
            req = reference_pb2.ListProductTaxCodesRequest(limit=1)
            try:
                _, call = stub.ListProductTaxCodes.with_call(req, metadata=md(fleet.tenant.key), timeout=TIMEOUT)
            except grpc.RpcError as e:
                err = grpc_error(e)
                assert err.code == grpc.StatusCode.RESOURCE_EXHAUSTED and err.reason == "rate_limit_error", err
                assert err.retry_after is not None and err.retry_after >= 1
                return "grpc", 429, {**err.trailers, "retry-info": str(err.retry_after)}
            return "grpc", 200, dict(call.trailing_metadata())

        calls = [lambda i=i: (rpc if i % 4 == 3 else rest)(i % REPLICAS) for i in range(36)]
        results = at_once(calls)
        statuses = Counter(s for _, s, _ in results)
        assert statuses == {200: burst, 429: 36 - burst}, statuses  # the burst in total, not 3x
        remaining = sorted(int(h["x-ratelimit-remaining"]) for _, s, h in results if s == 200)
        assert remaining == list(range(burst))  # each token handed out once
        for kind, s, h in results:
            assert h["x-ratelimit-limit"] == str(burst)
            if s == 429:
                assert h["x-ratelimit-remaining"] == "0"
                assert int(h["retry-after"]) >= 1
        # Every replica now refuses the key, and another key still has its whole burst.
        assert [rest(i)[1] for i in range(REPLICAS)] == [429] * REPLICAS
        other = create_tenant(url)
        r = httpx.get(servers[1].http_url + "/product-tax-codes", headers={"X-API-Key": other.key}, timeout=TIMEOUT)
        assert r.status_code == 200 and r.headers["x-ratelimit-remaining"] == str(burst - 1)
    finally:
        fleet.stop()
