"""Write-time date range (issue 37): a transaction or calculation dated (UTC) outside what
reports, returns and nexus studies take (1900-01-01 .. 9998-12-31, ``levy.domain.periods``)
is refused with 422 at ``/transaction_date`` (gRPC INVALID_ARGUMENT) and nothing is stored;
the ends of the range are taken. REST and gRPC, SQLite and PostgreSQL."""

from __future__ import annotations

from typing import Any

import grpc
import httpx
from google.protobuf import json_format

from levyserver import LevyServer, Tenant
from levytest import call_error, md
from levy.v1 import calculations_pb2 as cpb
from levy.v1 import calculations_pb2_grpc as cpbg
from levy.v1 import transactions_pb2 as tpb
from txn_api import Txn, body, error_of, line, tx  # noqa: F401  (fixture)

OUTSIDE = ("9999-12-31T00:00:00Z", "0001-01-01T00:00:00Z", "1899-12-31T23:59:59Z")
# The ends, and a local time whose UTC day is inside: 1899-12-31T20:00-05:00 is 1900-01-01T01:00Z.
INSIDE = ("9998-12-31T23:59:59Z", "1900-01-01T00:00:00Z", "1899-12-31T20:00:00-05:00")


def refused_at_date(result: tuple[int, dict[str, Any]], tx: Txn) -> None:
    errs = error_of(result)
    assert [(e["code"], e["source"]["pointer"]) for e in errs] == [("validation_error", "/transaction_date")], errs
    assert "1900-01-01 to 9998-12-31" in errs[0]["detail"]
    if tx.transport == "grpc":
        assert result[1]["grpc_code"] == grpc.StatusCode.INVALID_ARGUMENT


def test_transactions_outside_the_range_are_refused(tx: Txn) -> None:
    before = len(tx.list(limit=100)["data"])
    for when in OUTSIDE:
        refused_at_date(tx.create_raw(body(line("a", 10000), status="finalized", transaction_date=when)), tx)
    assert len(tx.list(limit=100)["data"]) == before  # nothing stored
    sale = tx.create(body(line("a", 10000), status="finalized"))
    # A full credit and a credit by amount take the date too (their lines come from the sale).
    credit = {"type": "credit", "status": "finalized", "parent_transaction_id": sale["id"]}
    refused_at_date(tx.create_raw({**credit, "transaction_date": OUTSIDE[0]}), tx)
    refused_at_date(tx.create_raw({**credit, "transaction_date": OUTSIDE[1], "flat_amount": "100"}), tx)
    # A draft's lines sent again with a date outside: refused, the draft unchanged.
    draft = tx.create(body(line("a", 10000)))
    refused_at_date(tx.update_raw(draft["id"], {"line_items": [line("a", 5000)], "transaction_date": OUTSIDE[0]}),
                    tx)
    assert tx.get(draft["id"])["line_items"][0]["unit_price"] == "10000"
    for when in INSIDE:  # 10000 in TX at 6.25%: 625 (the rates of the earliest data apply out of range)
        out = tx.create(body(line("a", 10000), status="finalized", transaction_date=when))
        assert out["status"] == "finalized"


def calculate(transport: str, server: LevyServer, channel: grpc.Channel, key: str,
              payload: dict[str, Any]) -> tuple[int, Any]:
    if transport == "rest":
        r = httpx.post(f"{server.http_url}/calculations", json=payload, headers={"X-API-Key": key}, timeout=60)
        return r.status_code, r.json()
    stub = cpbg.CalculationServiceStub(channel)
    req = json_format.ParseDict(payload, cpb.CreateCalculationRequest())
    try:
        stub.CreateCalculation(req, metadata=md(key))
    except grpc.RpcError:
        return 422, call_error(stub.CreateCalculation, req, md(key))
    return 200, None


def test_calculations_outside_the_range_are_refused(tx: Txn, server: LevyServer, channel: grpc.Channel,
                                                    tenant: Tenant) -> None:
    for when in OUTSIDE:
        payload = {"transaction_date": when, "line_items": [line("a", 10000)]}
        status, out = calculate(tx.transport, server, channel, tenant.key, payload)
        assert status == 422, out
        if tx.transport == "rest":  # the calculation's own error shape (spec 7.2)
            assert [d["loc"] for d in out["detail"]] == [["body", "transaction_date"]], out
            assert "1900-01-01 to 9998-12-31" in out["detail"][0]["msg"]
        else:
            assert out.code == grpc.StatusCode.INVALID_ARGUMENT
            assert [p for p, _ in out.violations] == ["/transaction_date"], out
    ok = calculate(tx.transport, server, channel, tenant.key,
                   {"transaction_date": INSIDE[0], "line_items": [line("a", 10000)]})
    assert ok[0] == 200, ok


def test_a_batch_item_outside_the_range_fails_alone(tx: Txn) -> None:
    """POST /transactions/batch (gRPC BatchCreateTransactions): the item dated outside fails at its
    own ``/transactions/N/transaction_date``, the others are stored."""
    items = [body(line("a", 10000), status="finalized", transaction_date=INSIDE[0]),
             body(line("a", 10000), status="finalized", transaction_date=OUTSIDE[0]),
             body(line("a", 4000), status="finalized", transaction_date=OUTSIDE[1])]
    if tx.transport == "rest":
        r = tx.http.post("/transactions/batch", json={"transactions": items})
        code, out = r.status_code, r.json()
    else:
        req = tpb.BatchCreateTransactionsRequest(transactions=[json_format.ParseDict(b, tpb.Transaction())
                                                               for b in items])
        code, out = tx._grpc(tx.stub.BatchCreateTransactions, req, None)
    assert code == 200, out
    assert [d["status"] for d in out["data"]] == ["created", "failed", "failed"], out
    assert out["data"][0]["transaction"]["tax_amount"] == "625"  # 10000 x 6.25 %
    for i in (1, 2):
        (err,) = out["data"][i]["errors"]
        assert (err["status"], err["source"]["pointer"]) == ("422", f"/transactions/{i}/transaction_date"), err
        assert "1900-01-01 to 9998-12-31" in err["detail"]
