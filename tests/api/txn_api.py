"""Helpers of the transaction tests: one caller for REST and gRPC, body builders,
registrations through the API. Figures used by the tests (worked by hand):
TX address without postal code -> Texas state 6.25% only; CA without postal
code -> California 6% + statewide local 1.25%."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from typing import Any

import grpc
import httpx
import pytest
from google.protobuf import json_format

from levyserver import LevyServer, Tenant
from levytest import call_error, md
from levy.v1 import transactions_pb2 as pb
from levy.v1 import transactions_pb2_grpc as pbg

D = "2026-03-15T12:00:00Z"
RESOLUTIONS = ("address", "zip4", "city", "zip5", "state", "country", "province")


def assert_resolved(out: dict[str, Any]) -> dict[str, Any]:
    """Every line with tax rows says how its address was resolved (issue 17); ``out`` back."""
    for li in out.get("line_items", ()):
        if li.get("taxes"):
            assert li.get("resolution") in RESOLUTIONS, li
    return out


def uid() -> str:
    return uuid.uuid4().hex[:10]


def line(id: str = "1", price: int = 10000, state: str | None = "TX", codes: list[str] | None = None,
         qty: str = "1", **extra: Any) -> dict[str, Any]:
    out: dict[str, Any] = {"id": id, "quantity": qty, "unit_price": str(price)}
    if state is not None:
        out["customer"] = {"address": {"state": state}}
    out["product"] = {"tax_attributes": codes or ["GENERAL.TANGIBLE.GOODS"]}
    out.update(extra)
    return out


def tax_line(id: str = "T", amount: int = 500, state: str | None = "TX", **extra: Any) -> dict[str, Any]:
    return line(id, amount, state, ["SALES_TAX"], **extra)


def body(*lines: dict[str, Any], type: str = "sale", status: str = "draft", **extra: Any) -> dict[str, Any]:
    out: dict[str, Any] = {"type": type, "status": status, "transaction_date": D}
    if lines:
        out["line_items"] = list(lines)
    out.update(extra)
    return out


def register(admin_http: httpx.Client, *states: str) -> None:
    for s in states:
        r = admin_http.post("/organization/registrations",
                            json={"jurisdiction": f"US-ST-{s}", "effective_from": "2020-01-01"})
        assert r.status_code in (200, 201), r.text


class Txn:
    """Transactions through one transport; answers (status, JSON body) alike for both.

    Errors come back as ``{"errors": [...]}`` (REST body; gRPC's levy.v1.ErrorBody)."""

    def __init__(self, transport: str, server: Any, channel: grpc.Channel, key: str) -> None:
        self.transport, self.key = transport, key
        self.http = httpx.Client(base_url=server.http_url, headers={"X-API-Key": key}, timeout=60)
        self.stub = pbg.TransactionServiceStub(channel)

    def close(self) -> None:
        self.http.close()

    @staticmethod
    def _dict(msg: Any) -> dict[str, Any]:
        return json_format.MessageToDict(msg, preserving_proto_field_name=True,
                                         always_print_fields_with_no_presence=True)

    def _grpc(self, method: Any, req: Any, headers: dict[str, str] | None) -> tuple[int, dict[str, Any]]:
        meta = md(self.key) + [(k.lower(), v) for k, v in (headers or {}).items()]
        try:
            return 200, self._dict(method(req, metadata=meta))
        except grpc.RpcError:
            err = call_error(method, req, meta)
            assert err.errors, err
            return int(err.errors[0]["status"]), {"errors": err.errors, "grpc_code": err.code,
                                                  "violations": err.violations}

    def create_raw(self, b: dict[str, Any], headers: dict[str, str] | None = None) -> tuple[int, dict[str, Any]]:
        if self.transport == "rest":
            r = self.http.post("/transactions", json=b, headers=headers or {})
            return r.status_code, r.json()
        req = pb.CreateTransactionRequest(transaction=json_format.ParseDict(b, pb.Transaction()))
        return self._grpc(self.stub.CreateTransaction, req, headers)

    def update_raw(self, tid: str, b: dict[str, Any], headers: dict[str, str] | None = None
                   ) -> tuple[int, dict[str, Any]]:
        if self.transport == "rest":
            r = self.http.post(f"/transactions/{tid}", json=b, headers=headers or {})
            return r.status_code, r.json()
        msg = json_format.ParseDict({k: v for k, v in b.items() if v is not None}, pb.Transaction())
        req = pb.UpdateTransactionRequest(id=tid, transaction=msg)
        req.update_mask.paths.extend(b.keys())
        return self._grpc(self.stub.UpdateTransaction, req, headers)

    def get_raw(self, tid: str) -> tuple[int, dict[str, Any]]:
        if self.transport == "rest":
            r = self.http.get(f"/transactions/{tid}")
            return r.status_code, r.json()
        return self._grpc(self.stub.GetTransaction, pb.GetTransactionRequest(id=tid), None)

    def list_raw(self, **params: Any) -> tuple[int, dict[str, Any]]:
        if self.transport == "rest":
            r = self.http.get("/transactions", params=params)
            return r.status_code, r.json()
        return self._grpc(self.stub.ListTransactions, pb.ListTransactionsRequest(**params), None)

    def create(self, b: dict[str, Any], **kw: Any) -> dict[str, Any]:
        status, out = self.create_raw(b, **kw)
        assert status == 200, out
        return assert_resolved(out)

    def update(self, tid: str, b: dict[str, Any], **kw: Any) -> dict[str, Any]:
        status, out = self.update_raw(tid, b, **kw)
        assert status == 200, out
        return assert_resolved(out)

    def get(self, tid: str) -> dict[str, Any]:
        status, out = self.get_raw(tid)
        assert status == 200, out
        return assert_resolved(out)

    def list(self, **params: Any) -> dict[str, Any]:
        status, out = self.list_raw(**params)
        assert status == 200, out
        for t in out.get("data", ()):
            assert_resolved(t)
        return out


def error_of(result: tuple[int, dict[str, Any]], status: int = 422) -> list[dict[str, Any]]:
    code, out = result
    assert code == status, out
    return out["errors"]


def pointers(errors: list[dict[str, Any]]) -> set[str | None]:
    return {(e.get("source") or {}).get("pointer") for e in errors}


@pytest.fixture(params=["rest", "grpc"])
def tx(request: pytest.FixtureRequest, server: LevyServer, channel: grpc.Channel, tenant: Tenant,
       admin_http: httpx.Client) -> Iterator[Txn]:
    """A tenant registered in TX and CA, calling through REST or gRPC."""
    register(admin_http, "TX", "CA")
    t = Txn(request.param, server, channel, tenant.key)
    yield t
    t.close()
