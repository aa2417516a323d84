"""POST /transactions/batch (issue 20, Levy extension) through REST and gRPC on SQLite and PostgreSQL:
per-item statuses and summary, a resent batch, credits naming parents in the same batch, provided
and calculated tax, ``filed`` history, limits, and /nexus and /reports/liability after an import.

Figures by hand: TX without postal code = Texas 6.25% only (10000 -> 625, 20000 -> 1250, 4000 -> 250,
8000 -> 500, 2000 -> 125, 1000 -> 62.5 -> 63 half up)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import grpc
import httpx
import pytest
from google.protobuf import json_format
from levyserver import LevyServer, Tenant
from levytest import call_error, md
from txn_api import Txn, line, register, uid

from levy.v1 import transactions_pb2 as pb
from levy.v1 import transactions_pb2_grpc as pbg

JAN = "2025-01-10T12:00:00Z"


class Batch(Txn):
    def batch_raw(self, items: list[Any]) -> tuple[int, dict[str, Any]]:
        if self.transport == "rest":
            r = self.http.post("/transactions/batch", json={"transactions": items})
            return r.status_code, r.json()
        req = pb.BatchCreateTransactionsRequest(
            transactions=[json_format.ParseDict(b, pb.Transaction()) for b in items])
        return self._grpc(self.stub.BatchCreateTransactions, req, None)

    def batch(self, items: list[Any]) -> dict[str, Any]:
        code, out = self.batch_raw(items)
        assert code == 200, out
        return out


@pytest.fixture(params=["rest", "grpc"])
def bt(request: pytest.FixtureRequest, server: LevyServer, channel: grpc.Channel, tenant: Tenant,
       admin_http: httpx.Client) -> Iterator[Batch]:
    register(admin_http, "TX")
    b = Batch(request.param, server, channel, tenant.key)
    yield b
    b.close()


def sale(ref: str | None, price: int, status: str = "finalized", **extra: Any) -> dict[str, Any]:
    out: dict[str, Any] = {"type": "sale", "status": status, "transaction_date": JAN,
                           "line_items": [line("1", price, "TX")], **extra}
    if ref is not None:
        out["reference_id"] = ref
    return out


def credit(ref: str, parent_ref: str, price: int) -> dict[str, Any]:
    return {"type": "credit", "status": "finalized", "transaction_date": JAN, "reference_id": ref,
            "parent_reference_id": parent_ref, "line_items": [line("1", price, "TX")]}


def test_batch_statuses_summary_and_resend(bt: Batch) -> None:
    p = uid()
    stored = bt.create(sale(f"{p}-old", 3000))
    items = [
        sale(f"{p}-A", 10000),                                   # 0 created, 625 calculated
        sale(f"{p}-B", 20000, status="filed", tax_amount="1300"),  # 1 created, 1300 provided (1250 calculated)
        {**sale(f"{p}-X", 1000), "line_items": [line("1", 1000, "TX", unit_price="abc")]},  # 2 failed
        credit(f"{p}-C", f"{p}-A", 4000),                        # 3 created, parent earlier in the batch: 250
        credit(f"{p}-D", f"{p}-E", 2000),                        # 4 created, parent later in the batch: 125
        sale(f"{p}-E", 8000),                                    # 5 created, 500
        sale(f"{p}-old", 3000),                                  # 6 existing (stored before)
        sale(f"{p}-F", 1000, status="draft"),                    # 7 created, 62.5 -> 63
        sale(f"{p}-A", 10000),                                   # 8 failed: reference sent twice
    ]
    out = bt.batch(items)
    assert out["object"] == "batch"
    assert [d["index"] for d in out["data"]] == list(range(9))
    assert [d["status"] for d in out["data"]] == ["created", "created", "failed", "created", "created", "created",
                                                  "existing", "created", "failed"]
    assert out["summary"] == {"created": 6, "existing": 1, "failed": 2}
    t = [d.get("transaction") for d in out["data"]]
    assert (t[0]["tax_amount"], t[0]["status"], t[0]["transaction_date"]) == ("625", "finalized", JAN)
    assert (t[1]["tax_amount"], t[1]["calculated_tax_amount"], t[1]["status"]) == ("1300", "1250", "filed")
    assert t[1]["filing_tax_amount_source"] == "provided"
    assert (t[3]["type"], t[3]["tax_amount"], t[3]["parent_transaction_id"]) == ("credit", "250", t[0]["id"])
    assert (t[4]["tax_amount"], t[4]["parent_transaction_id"]) == ("125", t[5]["id"])
    assert t[5]["tax_amount"] == "500"
    assert t[6]["id"] == stored["id"]
    assert (t[7]["tax_amount"], t[7]["status"]) == ("63", "draft")
    (e2,) = out["data"][2]["errors"]
    assert e2["source"]["pointer"] == "/transactions/2/line_items/0/unit_price" and e2["status"] == "422"
    (e8,) = out["data"][8]["errors"]
    assert (e8["code"], e8["source"]["pointer"]) == ("duplicate_reference_id", "/transactions/8/reference_id")
    for d in out["data"]:
        assert ("transaction" in d and d["transaction"]) != bool(d.get("errors")), d
    assert bt.get(t[0]["id"]) == t[0]

    # The same batch again, without its failed items: all existing, the same transactions, nothing changed.
    again = [it for i, it in enumerate(items) if i not in (2, 8)]
    count = len(bt.list(limit=100)["data"])
    out2 = bt.batch(again)
    assert out2["summary"] == {"created": 0, "existing": 7, "failed": 0}
    assert [d["transaction"] for d in out2["data"]] == [x for i, x in enumerate(t) if i not in (2, 8)]
    assert len(bt.list(limit=100)["data"]) == count == 7


def test_batch_item_errors_point_into_the_request(bt: Batch) -> None:
    p = uid()
    out = bt.batch([
        {"type": "sale", "transaction_date": JAN, "line_items": [line()]},           # status missing
        sale(f"{p}-1", 1000, status="void"),                                          # not a create status
        credit(f"{p}-2", f"{p}-none", 1000),                                          # no such parent
        sale(f"{p}-3", 1000),
        sale("r" * 256, 1000),                                                        # over the field limit
    ])
    assert out["summary"] == {"created": 1, "existing": 0, "failed": 4}
    ptrs = [[e["source"]["pointer"] for e in d.get("errors") or []] for d in out["data"]]
    assert ptrs[0] == ["/transactions/0/status"] and ptrs[1] == ["/transactions/1/status"]
    assert ptrs[2] == ["/transactions/2/parent_reference_id"] and ptrs[3] == []
    assert ptrs[4] == ["/transactions/4/reference_id"]


def test_batch_limits(bt: Batch, server: LevyServer, tenant: Tenant, channel: grpc.Channel) -> None:
    items = [sale(None, 100)] * 1001
    if bt.transport == "rest":
        r = bt.http.post("/transactions/batch", json={"transactions": items})
        assert r.status_code == 422
        (err,) = r.json()["errors"]
        assert err["source"]["pointer"] == "/transactions" and "1000" in err["detail"]
        raw = b'{"transactions": [' + b" " * 5242880 + b"]}"
        r = bt.http.post("/transactions/batch", content=raw, headers={"content-type": "application/json"})
        assert r.status_code == 413 and r.json()["errors"][0]["code"] == "request_too_large"
    else:
        req = pb.BatchCreateTransactionsRequest(transactions=[json_format.ParseDict(b, pb.Transaction())
                                                              for b in items])
        err = call_error(bt.stub.BatchCreateTransactions, req, md(tenant.key))
        assert err.code == grpc.StatusCode.INVALID_ARGUMENT and err.violations[0][0] == "/transactions"


def test_nexus_and_liability_reflect_an_import(server: LevyServer, channel: grpc.Channel, tenant: Tenant,
                                               admin_http: httpx.Client) -> None:
    register(admin_http, "TX")
    p = uid()
    ga = [{"type": "sale", "status": "filed", "transaction_date": "2025-02-01T10:00:00Z", "reference_id": f"{p}-g{i}",
           "line_items": [line("1", 100, "GA")]} for i in range(200)]
    tx = [sale(f"{p}-s1", 10000), sale(f"{p}-s2", 20000, status="filed"), credit(f"{p}-c1", f"{p}-s1", 4000),
          sale(f"{p}-d", 50000, status="draft")]
    b = Batch("rest", server, channel, tenant.key)
    try:
        assert b.batch(tx + ga)["summary"] == {"created": 204, "existing": 0, "failed": 0}
    finally:
        b.close()
    rep = admin_http.get("/reports/liability", params={"from": "2025-01-01", "to": "2025-01-31"}).json()
    totals = {t["jurisdiction"]: t for t in rep["state_totals"]}
    # TX: 10000 + 20000 - 4000 = 26000 of sales; 625 + 1250 - 250 = 1625 of tax; the draft never counts.
    assert (totals["US-ST-TX"]["gross_sales"], totals["US-ST-TX"]["filing_tax_amount"]) == ("26000", "1625")
    rep = admin_http.get("/nexus", params={"as_of": "2025-03-01"}).json()
    states = {s["state"]: s for s in rep["states"]}
    # GA: 200 transactions (its threshold) of $1.00 on 2025-02-01.
    g = states["GA"]
    assert (g["sales_amount"], g["transaction_count"], g["exceeded"], g["crossed_on"]) == ("20000", 200, True,
                                                                                           "2025-02-01")


def test_batch_idempotency_key_replays(http: httpx.Client, admin_http: httpx.Client) -> None:
    """Over REST (gRPC metadata goes through the same pipeline: tests/api/test_idempotency_api.py)."""
    register(admin_http, "TX")
    key, p = uid(), uid()
    items = [sale(f"{p}-1", 1000), sale(None, 2000)]  # the second has no reference id: created on every run
    first = http.post("/transactions/batch", json={"transactions": items}, headers={"Idempotency-Key": key})
    assert first.status_code == 200 and first.json()["summary"]["created"] == 2
    again = http.post("/transactions/batch", json={"transactions": items}, headers={"Idempotency-Key": key})
    assert again.status_code == 200 and again.json() == first.json()
    assert again.headers["idempotent-replayed"] == "true"
    assert len(http.get("/transactions", params={"limit": 100}).json()["data"]) == 2  # the replay created nothing
    other = http.post("/transactions/batch", json={"transactions": items[:1]}, headers={"Idempotency-Key": key})
    assert other.status_code == 422 and other.json()["errors"][0]["code"] == "idempotency_key_reused"


def test_grpc_batch_whose_answer_cannot_be_sent_stores_nothing(server: LevyServer, channel: grpc.Channel,
                                                               tenant: Tenant, admin_http: httpx.Client,
                                                               http: httpx.Client) -> None:
    """Issue 30, point 3: gRPC sends at most 8 MiB in one message. A batch whose answer would be larger is
    refused with RESOURCE_EXHAUSTED before it commits (a client retrying it without reference ids would
    otherwise store everything twice); the same batch over REST, which has no such limit, answers 200.

    The answer is made large cheaply: an item naming a stored reference id answers `existing` with the whole
    stored transaction, here one of 1000 lines (the most; each line's answer is over 150 bytes: over 150 KB),
    named by 60 items: over 9,000,000 bytes against 8,388,608, while the request stays small."""
    register(admin_http, "TX")
    p = uid()
    big = {"type": "sale", "status": "finalized", "transaction_date": JAN, "reference_id": f"{p}-big",
           "line_items": [line(str(i), 1000, "TX") for i in range(1000)]}
    assert http.post("/transactions", json=big, timeout=120).status_code in (200, 201)
    items = [sale(f"{p}-a", 10000), sale(f"{p}-b", 20000)] + [sale(f"{p}-big", 1) for _ in range(60)]
    # (an item naming a stored reference id answers the stored transaction, whatever else it says)
    req = pb.BatchCreateTransactionsRequest(transactions=[json_format.ParseDict(b, pb.Transaction()) for b in items])
    stub = pbg.TransactionServiceStub(channel)
    for extra in ({}, {"idempotency_key": uid()}):
        err = call_error(stub.BatchCreateTransactions, req, md(tenant.key, **extra))
        assert err.code == grpc.StatusCode.RESOURCE_EXHAUSTED, err
        assert "nothing was stored" in err.message and "8388608" in err.message, err.message
        for ref in ("a", "b"):  # nothing of the batch was committed
            assert not http.get("/transactions", params={"reference_id": f"{p}-{ref}"}).json()["data"]
    # A batch whose answer fits is stored as usual: 10000 x 6.25% = 625, 20000 x 6.25% = 1250.
    small = pb.BatchCreateTransactionsRequest(transactions=list(req.transactions)[:3])
    out = stub.BatchCreateTransactions(small, metadata=md(tenant.key))
    assert [d.status for d in out.data] == ["created", "created", "existing"]
    assert [d.transaction.tax_amount for d in out.data[:2]] == ["625", "1250"]
    # The big one over REST: 200, nothing new to create.
    r = http.post("/transactions/batch", json={"transactions": items}, timeout=120)
    assert r.status_code == 200 and r.json()["summary"] == {"created": 0, "existing": 62, "failed": 0}


def test_grpc_batch_item_with_an_invalid_timestamp_fails_alone(server: LevyServer, channel: grpc.Channel,
                                                              tenant: Tenant, admin_http: httpx.Client) -> None:
    """gRPC callers can send any Timestamp: an item whose transaction_date is none (past year 9999, or
    negative nanos) fails alone at its pointer, and the other items are stored."""
    register(admin_http, "TX")
    p = uid()
    items = [json_format.ParseDict(sale(f"{p}-{i}", 1000), pb.Transaction()) for i in range(3)]
    items[1].transaction_date.seconds = 10**12  # about the year 33658
    items[2].transaction_date.nanos = -1
    out = pbg.TransactionServiceStub(channel).BatchCreateTransactions(
        pb.BatchCreateTransactionsRequest(transactions=items), metadata=md(tenant.key))
    assert [d.status for d in out.data] == ["created", "failed", "failed"]
    assert [[e.source.pointer for e in d.errors] for d in out.data] == [
        [], ["/transactions/1/transaction_date"], ["/transactions/2/transaction_date"]]
    assert out.data[0].transaction.tax_amount == "63"  # 1000 x 6.25 % = 62.5 -> 63 half up
