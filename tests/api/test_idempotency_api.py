"""Idempotency-Key through both transports on a real server."""

from __future__ import annotations

import uuid

import grpc
import httpx

from levyserver import Tenant
from levytest import call_error, md
from levy.v1 import customers_pb2, customers_pb2_grpc


def test_rest_retry_replays_the_first_response(http: httpx.Client) -> None:
    key = str(uuid.uuid4())
    body = {"source_id": f"idem-{key}", "name": "First"}
    first = http.post("/customers", json=body, headers={"Idempotency-Key": key})
    assert first.status_code == 201
    again = http.post("/customers", json=body, headers={"Idempotency-Key": key})
    assert again.status_code == 201 and again.json() == first.json()
    assert again.headers["idempotent-replayed"] == "true"
    listed = [c["id"] for c in http.get("/customers", params={"limit": 1000}).json()["data"]]
    assert listed.count(first.json()["id"]) == 1
    # Without the key the same body is a duplicate: proof the retry did not run again.
    assert http.post("/customers", json=body).status_code == 409


def test_rest_same_key_other_body_is_422(http: httpx.Client) -> None:
    key = str(uuid.uuid4())
    assert http.post("/customers", json={"source_id": f"a-{key}"}, headers={"Idempotency-Key": key}).status_code == 201
    r = http.post("/customers", json={"source_id": f"b-{key}"}, headers={"Idempotency-Key": key})
    assert r.status_code == 422
    err = r.json()["errors"][0]
    assert err["code"] == "idempotency_key_reused" and err["source"]["parameter"] == "Idempotency-Key"


def test_rest_stored_client_error_is_replayed(http: httpx.Client) -> None:
    key = str(uuid.uuid4())
    body = {"source_id": f"dup-{key}"}
    assert http.post("/customers", json=body).status_code == 201
    r1 = http.post("/customers", json=body, headers={"Idempotency-Key": key})
    r2 = http.post("/customers", json=body, headers={"Idempotency-Key": key})
    assert r1.status_code == r2.status_code == 409 and r1.json() == r2.json()


def test_batch_retry_replays(http: httpx.Client) -> None:
    key = str(uuid.uuid4())
    body = {"data": [{"source_id": f"b{i}-{key}"} for i in range(3)]}
    first = http.post("/customers/batch", json=body, headers={"Idempotency-Key": key})
    again = http.post("/customers/batch", json=body, headers={"Idempotency-Key": key})
    assert first.status_code == again.status_code == 200
    assert first.json() == again.json() and first.json()["summary"]["created"] == 3


def test_grpc_idempotency_key_metadata(channel: grpc.Channel, tenant: Tenant) -> None:
    stub = customers_pb2_grpc.CustomerServiceStub(channel)
    key = str(uuid.uuid4())
    req = customers_pb2.CreateCustomerRequest(customer=customers_pb2.Customer(source_id=f"g-{key}"))
    a = stub.CreateCustomer(req, metadata=md(tenant.key, idempotency_key=key))
    b = stub.CreateCustomer(req, metadata=md(tenant.key, idempotency_key=key))
    assert a == b
    other = customers_pb2.CreateCustomerRequest(customer=customers_pb2.Customer(source_id=f"h-{key}"))
    err = call_error(stub.CreateCustomer, other, md(tenant.key, idempotency_key=key))
    assert err.code == grpc.StatusCode.INVALID_ARGUMENT and err.reason == "idempotency_key_reused"
