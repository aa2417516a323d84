"""Crash consistency (issue 11, Faults): ``levy serve`` is SIGKILLed at 8
seeded random moments per backend during concurrent customer creates, batch
upserts and finalized sales (some with a ``reference_id``) sent with
Idempotency-Keys; after restarts and retries every acknowledged write is present
exactly once with its content, no batch is half-applied, no reference id is
duplicated, and every retry replays the original response. Workloads: one function pair per
operation (see ``crash_harness``)."""

from __future__ import annotations

import random
from collections import Counter
from pathlib import Path
from typing import Any

import httpx
import pytest

from levyserver import create_tenant, drop_postgres_database, make_postgres_database
from crash_harness import Op, Workload, list_all, run_crash_test

SEED = 11
KILLS = 8


def make_create(n: int, rng: random.Random) -> Op:
    body = {"source_id": f"crash-c{n}", "name": f"create {n}", "email": f"c{n}@example.com"}
    return Op("create", f"create-{n}", "POST", "/customers", body, 201)


def make_batch(n: int, rng: random.Random) -> Op:
    size = rng.randint(2, 60)
    items = [{"source_id": f"crash-b{n}-{i}", "name": f"batch {n} item {i}"} for i in range(size)]
    return Op("batch", f"batch-{n}", "POST", "/customers/batch", {"data": items}, 200)


def read_back(c: httpx.Client, collection: str, ops: list[Op]) -> list[tuple[Op, dict[str, Any], dict[str, Any]]]:
    """(op, acknowledged body, stored body) of each op, read by the id it was acknowledged with."""
    out = []
    for op in ops:
        assert op.acked is not None
        sent = op.acked.json()
        got = c.get(f"{collection}/{sent['id']}")
        assert got.status_code == 200, (op.key, got.text)
        out.append((op, sent, got.json()))
    return out


def check_creates(c: httpx.Client, ops: list[Op]) -> None:
    for op, _, stored in read_back(c, "/customers", ops):
        assert {k: stored[k] for k in ("source_id", "name", "email")} == op.body


def check_batches(c: httpx.Client, ops: list[Op]) -> None:
    for op in ops:
        assert op.acked is not None
        body = op.acked.json()
        items = op.body["data"]
        # Every item of the batch was new: a half-applied earlier attempt would
        # show as some items "updated" in the acknowledged (retried) response.
        assert body["summary"] == {"created": len(items), "updated": 0, "stale": 0, "deleted": 0, "failed": 0}, op.key
        for item, result in zip(items, body["data"], strict=True):
            assert result["status"] == "created" and result["customer"]["source_id"] == item["source_id"]
            assert result["customer"]["name"] == item["name"]


def make_txn(n: int, rng: random.Random) -> Op:
    lines = [{"id": f"l{i}", "quantity": str(rng.randint(1, 3)), "unit_price": str(rng.randint(100, 50000)),
              "customer": {"address": {"state": rng.choice(["TX", "CA"])}},
              "product": {"tax_attributes": ["GENERAL.TANGIBLE.GOODS"]}} for i in range(rng.randint(1, 5))]
    body = {"type": "sale", "status": "finalized", "transaction_date": "2026-03-15T12:00:00Z", "line_items": lines}
    if n % 2 == 0:
        body["reference_id"] = f"crash-inv-{n}"
    return Op("txn", f"txn-{n}", "POST", "/transactions", body, 200)


def check_txns(c: httpx.Client, ops: list[Op]) -> None:
    for op, sent, stored in read_back(c, "/transactions", ops):
        assert stored == sent, op.key  # the acknowledged content, all of it (tax, lines, rows)
        assert (stored["status"], stored.get("reference_id")) == ("finalized", op.body.get("reference_id"))
        assert [(li["id"], li["quantity"], li["unit_price"]) for li in stored["line_items"]] == \
            [(li["id"], li["quantity"], li["unit_price"]) for li in op.body["line_items"]], op.key


WORKLOADS = [Workload("create", make_create, check_creates), Workload("batch", make_batch, check_batches),
             Workload("txn", make_txn, check_txns)]


def check_whole_store(c: httpx.Client, ops: list[Op]) -> None:
    """The organization holds exactly the acknowledged customers: each once, each batch whole."""
    rows = list_all(c, "/customers")
    by_source = Counter(r["source_id"] for r in rows)
    assert [s for s, k in by_source.items() if k > 1] == []
    assert len({r["id"] for r in rows}) == len(rows)
    expected: dict[str, str] = {}
    for op in ops:
        assert op.acked is not None
        if op.workload == "create":
            expected[op.body["source_id"]] = op.acked.json()["id"]
        elif op.workload == "batch":
            for d in op.acked.json()["data"]:
                expected[d["customer"]["source_id"]] = d["customer"]["id"]
    assert {r["source_id"]: r["id"] for r in rows} == expected
    # Transactions: exactly the acknowledged ones (a killed attempt left none behind), each once,
    # and no reference id twice.
    txns = list_all(c, "/transactions")
    assert sorted(t["id"] for t in txns) == sorted(op.acked.json()["id"] for op in ops if op.workload == "txn")
    refs = Counter(t["reference_id"] for t in txns if t.get("reference_id"))
    assert [r for r, k in refs.items() if k > 1] == []
    assert set(refs) == {op.body["reference_id"] for op in ops if op.workload == "txn" and "reference_id" in op.body}


@pytest.mark.slow
@pytest.mark.parametrize("backend", ["sqlite", "postgres"])
def test_sigkill_during_writes_loses_nothing_acknowledged(backend: str, tmp_path: Path) -> None:
    name = None
    if backend == "sqlite":
        url = f"sqlite+aiosqlite:///{tmp_path}/crash.db"
    else:
        url, name = make_postgres_database()
    try:
        # The store must exist before the tenant: one throwaway start migrates it.
        from levyserver import start_server

        first = start_server(url, tmp_path)
        tenant = create_tenant(url)
        r = httpx.post(first.http_url + "/organization/registrations", headers={"X-API-Key": tenant.admin_key},
                       json={"jurisdiction": "US-ST-TX", "effective_from": "2020-01-01"}, timeout=30)
        assert r.status_code in (200, 201), r.text
        assert first.stop() == 0
        report = run_crash_test(url, tmp_path, tenant.key, WORKLOADS, seed=SEED, kills=KILLS)
        assert len(report.kills) == KILLS
        assert {op.workload for op in report.ops} == {"create", "batch", "txn"}
        retried = [op for op in report.ops if op.attempts > 1]
        assert retried, "no request was interrupted by a kill: the test exercised nothing"
        assert any(op.workload == "txn" for op in retried), "no transaction creation was interrupted by a kill"
        srv_check = start_server(url, tmp_path)
        try:
            with httpx.Client(base_url=srv_check.http_url, headers={"X-API-Key": tenant.key}, timeout=30) as c:
                check_whole_store(c, report.ops)
        finally:
            srv_check.stop()
        per = {w: (sum(op.workload == w for op in report.ops), sum(op.workload == w for op in retried))
               for w in ("create", "batch", "txn")}
        print(f"{backend}: {len(report.ops)} writes, {len(retried)} retried (per workload: {per}), "
              f"kills at {report.kills}")
    finally:
        if name:
            drop_postgres_database(name)
