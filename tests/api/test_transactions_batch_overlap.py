"""Overlapping transaction batches (issue 30, point 8), SQLite and PostgreSQL: eight concurrent batches of
150 sales drawn from 300 shared reference ids, four over REST (two of them with an Idempotency-Key, which
run in the request's own transaction) and four over gRPC, all at once, twice. On PostgreSQL 5-7 of 8 failed
whole with 503 (deadlocks on the reference ids' unique index, taken in each batch's own order, until the
retries gave up). Every batch must succeed, an item stored meanwhile by another batch answering
``existing`` (docs/transactions.md), each reference id stored exactly once, and no deadlock.

Figures by hand: each sale is one line of 1000 in TX (Texas 6.25 % only): 62.5 -> 63."""

from __future__ import annotations

import asyncio
import random
import uuid
from typing import Any

import grpc
import httpx
from google.protobuf import json_format
from levyserver import LevyServer, Tenant
from levytest import md
from test_customers_race import _deadlocks, own_server  # noqa: F401  (the fixture: a server of the test's own)
from txn_api import register

from levy.v1 import transactions_pb2 as pb
from levy.v1 import transactions_pb2_grpc as pbg

REFS = 300
CONCURRENT = 8
PER_BATCH = 150


def _sale(ref: str) -> dict[str, Any]:
    return {"type": "sale", "status": "finalized", "transaction_date": "2025-06-02T00:00:00Z", "reference_id": ref,
            "line_items": [{"id": "1", "quantity": "1", "unit_price": "1000", "customer": {"address": {"state": "TX"}}}]}


def test_overlapping_batches_all_succeed_with_existing_items(own_server: tuple[LevyServer, Tenant]) -> None:  # noqa: F811
    srv, tenant = own_server
    with httpx.Client(base_url=srv.http_url, headers={"X-API-Key": tenant.admin_key}, timeout=60) as admin:
        register(admin, "TX")
    prefix = uuid.uuid4().hex[:8]
    refs = [f"{prefix}-{i:03d}" for i in range(REFS)]
    rng = random.Random(30)
    rounds = [[rng.sample(refs, PER_BATCH) for _ in range(CONCURRENT)] for _ in range(2)]
    outcomes: list[str] = []
    items: list[tuple[str, str, str]] = []  # (reference id, status, tax)

    async def run() -> None:
        async with httpx.AsyncClient(base_url=srv.http_url, headers={"X-API-Key": tenant.key}, timeout=120,
                                     limits=httpx.Limits(max_connections=CONCURRENT)) as c, \
                grpc.aio.insecure_channel(srv.grpc_target, options=[
                    ("grpc.max_receive_message_length", 16 << 20)]) as ch:
            stub = pbg.TransactionServiceStub(ch)

            async def rest(i: int, batch: list[str]) -> None:
                headers = {"Idempotency-Key": uuid.uuid4().hex} if i % 2 else {}
                r = await c.post("/transactions/batch", headers=headers,
                                 json={"transactions": [_sale(ref) for ref in batch]})
                outcomes.append(f"rest {r.status_code}")
                if r.status_code == 200:
                    items.extend((ref, d["status"], (d["transaction"] or {}).get("tax_amount", ""))
                                 for ref, d in zip(batch, r.json()["data"], strict=True))

            async def rpc(batch: list[str]) -> None:
                req = pb.BatchCreateTransactionsRequest(
                    transactions=[json_format.ParseDict(_sale(ref), pb.Transaction()) for ref in batch])
                try:
                    resp = await stub.BatchCreateTransactions(req, metadata=md(tenant.key), timeout=120)
                except grpc.aio.AioRpcError as e:
                    outcomes.append(f"grpc {e.code().name} {e.details()}")
                    return
                outcomes.append("grpc OK")
                items.extend((ref, d.status, d.transaction.tax_amount) for ref, d in zip(batch, resp.data, strict=True))

            for batches in rounds:
                await asyncio.gather(*(rest(i, b) if i < CONCURRENT // 2 else rpc(b) for i, b in enumerate(batches)))

    asyncio.run(run())
    assert sorted(outcomes) == sorted(["rest 200"] * CONCURRENT + ["grpc OK"] * CONCURRENT), (sorted(set(outcomes)),
                                                                                             srv.log()[-6000:])
    # Every item stored or found stored, at 63 (1000 x 6.25 % = 62.5, half up); each reference created once.
    assert {status for _, status, _ in items} <= {"created", "existing"}
    assert {tax for _, _, tax in items} == {"63"}
    sent = {ref for batches in rounds for b in batches for ref in b}
    created = [ref for ref, status, _ in items if status == "created"]
    assert sorted(created) == sorted(sent)
    with httpx.Client(base_url=srv.http_url, headers={"X-API-Key": tenant.key}, timeout=60) as c:
        stored: list[str] = []
        params: dict[str, Any] = {"limit": 100}
        while True:
            page = c.get("/transactions", params=params).json()
            stored += [t["reference_id"] for t in page["data"]]
            if not page["has_more"]:
                break
            params["starting_after"] = page["data"][-1]["id"]
    assert sorted(stored) == sorted(sent)
    assert srv.stop() == 0, srv.log()
    if srv.database_url.startswith("postgresql"):
        assert asyncio.run(_deadlocks(srv.database_url)) == 0
