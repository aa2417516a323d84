"""Customers end to end (spec 2.1, 3.2, 4.1, 4.2, 7, 8) through REST and gRPC,
against a real server on SQLite and PostgreSQL."""

from __future__ import annotations

import json
import uuid
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import grpc
import httpx
import pytest
from google.protobuf import field_mask_pb2, timestamp_pb2

from levyserver import LevyServer, Tenant
from levytest import call_error, md
from levy.store.reference_data import customer_sources as load_sources
from levy.v1 import customers_pb2 as pb
from levy.v1 import customers_pb2_grpc

PER_ACCOUNT = next(s.source for s in load_sources().values() if s.per_account)
SINGLE = next(s.source for s in load_sources().values() if not s.per_account and s.source != "native")
REQUIRED_KEYS = {"id", "source_id", "source", "source_account_id", "created_at", "updated_at"}
ALL_KEYS = REQUIRED_KEYS | {"name", "email", "merged_into_customer_id", "source_updated_at", "exemption"}


def sid() -> str:
    return "c-" + uuid.uuid4().hex[:12]


@pytest.fixture
def stub(channel: grpc.Channel) -> customers_pb2_grpc.CustomerServiceStub:
    return customers_pb2_grpc.CustomerServiceStub(channel)


def ts(text: str) -> timestamp_pb2.Timestamp:
    t = timestamp_pb2.Timestamp()
    t.FromJsonString(text)
    return t


def create(http: httpx.Client, **body: Any) -> dict[str, Any]:
    body.setdefault("source_id", sid())
    r = http.post("/customers", json=body)
    assert r.status_code == 201, r.text
    return r.json()


# ------------------------------------------------------------------ create


def test_create_returns_201_with_the_resource_and_defaults(http: httpx.Client) -> None:
    source_id = sid()
    r = http.post("/customers", json={"source_id": source_id, "name": "Ada", "email": "ada@example.com",
                                      "source_updated_at": "2026-01-02T03:04:05Z"})
    assert r.status_code == 201, r.text
    c = r.json()
    assert set(c) == ALL_KEYS
    assert c["id"].startswith("cust_") and len(c["id"]) == 31
    assert (c["source_id"], c["source"], c["source_account_id"]) == (source_id, "native", "__default__")
    assert (c["name"], c["email"]) == ("Ada", "ada@example.com")
    assert c["source_updated_at"] == "2026-01-02T03:04:05Z"
    assert c["merged_into_customer_id"] is None and c["exemption"] is None
    assert c["created_at"] == c["updated_at"] and c["created_at"].endswith("Z")
    got = http.get(f"/customers/{c['id']}").json()
    assert {k: got[k] for k in REQUIRED_KEYS | {"name", "email"}} == {k: c[k] for k in REQUIRED_KEYS | {"name", "email"}}


def test_create_per_account_source_needs_a_real_account(http: httpx.Client) -> None:
    r = http.post("/customers", json={"source_id": sid(), "source": PER_ACCOUNT})
    assert r.status_code == 422
    (err,) = r.json()["errors"]
    assert err["source"]["pointer"] == "/source_account_id"
    assert "per" in err["detail"] and "__default__" in err["detail"]
    c = create(http, source=PER_ACCOUNT, source_account_id="acct-1")
    assert c["source_account_id"] == "acct-1"
    r = http.post("/customers", json={"source_id": sid(), "source": SINGLE, "source_account_id": "acct-1"})
    assert r.status_code == 422
    (err,) = r.json()["errors"]
    assert err["source"]["pointer"] == "/source_account_id" and "'__default__'" in err["detail"]
    assert create(http, source=SINGLE)["source_account_id"] == "__default__"


@pytest.mark.parametrize(
    "body, pointer, fragment",
    [
        ({}, "/source_id", "required"),
        ({"source_id": "   "}, "/source_id", "blank"),
        ({"source_id": "x" * 256}, "/source_id", "256"),
        ({"source_id": "a", "name": "n" * 501}, "/name", "501"),
        ({"source_id": "a", "email": "e" * 310 + "@example.com"}, "/email", "322"),
        ({"source_id": "a", "email": "not-an-email"}, "/email", "email"),
        ({"source_id": "a", "source": "Native"}, "/source", "not supported"),
        ({"source_id": "a", "source_account_id": "x" * 256}, "/source_account_id", "256"),
        ({"source_id": "a", "colour": "red"}, "/colour", "Unknown property"),
        ({"source_id": "a", "source_updated_at": "yesterday"}, "/source_updated_at", "ISO 8601"),
    ],
)
def test_create_rejects_bad_input_with_pointer(http: httpx.Client, body: dict[str, Any], pointer: str,
                                               fragment: str) -> None:
    r = http.post("/customers", json=body)
    assert r.status_code == 422, r.text
    errs = r.json()["errors"]
    assert [e["source"]["pointer"] for e in errs] == [pointer]
    assert fragment in errs[0]["detail"]


@pytest.mark.parametrize("field", ["id", "created_at", "updated_at", "merged_into_customer_id", "exemption"])
def test_create_rejects_read_only_fields(http: httpx.Client, field: str) -> None:
    value: Any = {} if field == "exemption" else "2026-01-01T00:00:00Z" if field.endswith("_at") else "cust_x"
    r = http.post("/customers", json={"source_id": sid(), field: value})
    assert r.status_code == 422
    (err,) = r.json()["errors"]
    assert err["source"]["pointer"] == f"/{field}" and "read-only" in err["detail"]


def test_missing_source_id_is_validation_required_field(http: httpx.Client) -> None:
    r = http.post("/customers", json={"name": "x"})
    (err,) = r.json()["errors"]
    assert (err["status"], err["code"], err["title"]) == ("422", "validation_required_field", "Missing source_id")


def test_duplicate_is_409_with_meta(http: httpx.Client) -> None:
    c = create(http)
    r = http.post("/customers", json={"source_id": c["source_id"], "name": "other"})
    assert r.status_code == 409
    (err,) = r.json()["errors"]
    assert err["status"] == "409" and err["code"] == "duplicate_customer"
    assert err["meta"] == {"existing_customer_id": c["id"], "existing_customer_path": f"/customers/{c['id']}",
                           "deleted": False}
    # Same source_id under another source is another customer.
    assert create(http, source_id=c["source_id"], source=SINGLE)["id"] != c["id"]


def test_recreating_a_deleted_customer_is_409_deleted_without_path(http: httpx.Client) -> None:
    c = create(http)
    assert http.delete(f"/customers/{c['id']}").status_code == 204
    r = http.post("/customers", json={"source_id": c["source_id"]})
    assert r.status_code == 409
    meta = r.json()["errors"][0]["meta"]
    assert meta == {"existing_customer_id": c["id"], "deleted": True}


def test_concurrent_creates_of_one_triple_make_one_customer(server: LevyServer, tenant: Tenant) -> None:
    source_id = sid()

    def post(_: int) -> int:
        with httpx.Client(base_url=server.http_url, headers={"X-API-Key": tenant.key}, timeout=30) as c:
            return c.post("/customers", json={"source_id": source_id}).status_code

    with ThreadPoolExecutor(8) as ex:
        codes = list(ex.map(post, range(8)))
    assert sorted(codes) == [201] + [409] * 7


# ------------------------------------------------------------------ list / retrieve / tenancy


def test_list_is_newest_first_paged_and_skips_deleted(http: httpx.Client) -> None:
    made = [create(http)["id"] for _ in range(5)]
    assert http.delete(f"/customers/{made[2]}").status_code == 204
    seen: list[str] = []
    after = None
    while True:
        r = http.get("/customers", params={"limit": 2, **({"starting_after": after} if after else {})})
        assert r.status_code == 200
        body = r.json()
        assert set(body) == {"data", "has_more"} and len(body["data"]) <= 2
        seen += [c["id"] for c in body["data"]]
        if not body["has_more"]:
            break
        after = body["data"][-1]["id"]
    assert seen == [made[4], made[3], made[1], made[0]]
    assert http.get("/customers", params={"limit": 1001}).status_code == 422


def test_other_organization_sees_404_and_nothing_in_lists(http: httpx.Client, server: LevyServer,
                                                          other_tenant: Tenant) -> None:
    c = create(http)
    with httpx.Client(base_url=server.http_url, headers={"X-API-Key": other_tenant.key}) as other:
        assert other.get(f"/customers/{c['id']}").status_code == 404
        assert other.patch(f"/customers/{c['id']}", json={"name": "x"}).status_code == 404
        assert other.delete(f"/customers/{c['id']}").status_code == 404
        assert other.get("/customers").json() == {"data": [], "has_more": False}
        # The same triple is free in another organization.
        r = other.post("/customers", json={"source_id": c["source_id"]})
        assert r.status_code == 201
    assert http.get(f"/customers/{c['id']}").json()["name"] is None


def test_unknown_customer_is_404(http: httpx.Client) -> None:
    r = http.get("/customers/cust_00000000000000000000000000")
    assert r.status_code == 404 and r.json()["errors"][0]["code"] == "not_found"


def test_retrieve_includes_empty_exemption(http: httpx.Client) -> None:
    c = create(http)
    ex = http.get(f"/customers/{c['id']}").json()["exemption"]
    assert ex == {"overrides": {"exempt": False, "resale": False, "manufacturing": False}, "jurisdictions": [],
                  "updated_at": None}


# ------------------------------------------------------------------ update


def test_patch_keeps_omitted_and_null_fields(http: httpx.Client) -> None:
    c = create(http, name="Ada", email="ada@example.com", source_updated_at="2026-01-01T00:00:00Z")
    r = http.patch(f"/customers/{c['id']}", json={"name": "Grace", "email": None})
    assert r.status_code == 200, r.text
    u = r.json()
    assert (u["name"], u["email"], u["source_updated_at"]) == ("Grace", "ada@example.com", "2026-01-01T00:00:00Z")
    assert u["updated_at"] > c["updated_at"] and u["created_at"] == c["created_at"]
    r = http.patch(f"/customers/{c['id']}", json={"source_updated_at": None})
    assert r.json()["source_updated_at"] == "2026-01-01T00:00:00Z"
    assert http.get(f"/customers/{c['id']}").json()["name"] == "Grace"


def test_patch_source_updated_at_cannot_move_back(http: httpx.Client) -> None:
    c = create(http, source_updated_at="2026-01-02T00:00:00Z")
    r = http.patch(f"/customers/{c['id']}", json={"source_updated_at": "2026-01-01T00:00:00Z", "name": "x"})
    assert r.status_code == 422
    (err,) = r.json()["errors"]
    assert err["source"]["pointer"] == "/source_updated_at" and "older" in err["detail"]
    assert http.get(f"/customers/{c['id']}").json()["name"] is None
    r = http.patch(f"/customers/{c['id']}", json={"source_updated_at": "2026-01-03T00:00:00Z"})
    assert r.status_code == 200 and r.json()["source_updated_at"] == "2026-01-03T00:00:00Z"


def test_patch_checks_account_form_against_the_resulting_source(http: httpx.Client) -> None:
    c = create(http)
    r = http.patch(f"/customers/{c['id']}", json={"source": PER_ACCOUNT})
    assert r.status_code == 422
    assert r.json()["errors"][0]["source"]["pointer"] == "/source_account_id"
    r = http.patch(f"/customers/{c['id']}", json={"source": PER_ACCOUNT, "source_account_id": "a1"})
    assert r.status_code == 200 and r.json()["source"] == PER_ACCOUNT


def test_patch_to_a_taken_triple_is_409(http: httpx.Client) -> None:
    a, b = create(http), create(http)
    r = http.patch(f"/customers/{b['id']}", json={"source_id": a["source_id"]})
    assert r.status_code == 409
    assert r.json()["errors"][0]["meta"]["existing_customer_id"] == a["id"]


def test_patch_rejects_unknown_and_read_only_properties(http: httpx.Client) -> None:
    c = create(http)
    r = http.patch(f"/customers/{c['id']}", json={"id": "cust_x", "foo": 1, "source_id": ""})
    assert r.status_code == 422
    assert {e["source"]["pointer"] for e in r.json()["errors"]} == {"/id", "/foo"}
    r = http.patch(f"/customers/{c['id']}", json={"source_id": " "})
    assert r.status_code == 422 and r.json()["errors"][0]["source"]["pointer"] == "/source_id"


# ------------------------------------------------------------------ delete


def test_delete_is_204_twice_and_hides_the_customer(http: httpx.Client) -> None:
    c = create(http)
    r = http.delete(f"/customers/{c['id']}")
    assert r.status_code == 204 and r.content == b""
    assert http.delete(f"/customers/{c['id']}").status_code == 204
    assert http.get(f"/customers/{c['id']}").status_code == 404
    assert http.patch(f"/customers/{c['id']}", json={"name": "x"}).status_code == 404
    assert c["id"] not in [x["id"] for x in http.get("/customers", params={"limit": 1000}).json()["data"]]
    assert http.delete("/customers/cust_00000000000000000000000000").status_code == 404


# ------------------------------------------------------------------ gRPC


def test_grpc_customer_lifecycle(stub: customers_pb2_grpc.CustomerServiceStub, tenant: Tenant) -> None:
    m = md(tenant.key)
    source_id = sid()
    c = stub.CreateCustomer(pb.CreateCustomerRequest(customer=pb.Customer(source_id=source_id, name="Ada")), metadata=m)
    assert c.id.startswith("cust_") and c.source == "native" and c.source_account_id == "__default__"
    got = stub.GetCustomer(pb.GetCustomerRequest(customer_id=c.id), metadata=m)
    assert got.name == "Ada" and got.HasField("exemption") and not got.exemption.overrides.exempt
    # Empty mask: every set field counts; unset ones keep their value.
    u = stub.UpdateCustomer(pb.UpdateCustomerRequest(customer_id=c.id, customer=pb.Customer(email="a@b.co")), metadata=m)
    assert (u.name, u.email) == ("Ada", "a@b.co")
    # A mask naming a field left unset: null, keeps the current value.
    u = stub.UpdateCustomer(pb.UpdateCustomerRequest(customer_id=c.id, customer=pb.Customer(name="Grace"),
                                                     update_mask=field_mask_pb2.FieldMask(paths=["name", "email"])),
                            metadata=m)
    assert (u.name, u.email) == ("Grace", "a@b.co")
    page = stub.ListCustomers(pb.ListCustomersRequest(limit=1000), metadata=m)
    assert c.id in [x.id for x in page.data]
    err = call_error(stub.CreateCustomer, pb.CreateCustomerRequest(customer=pb.Customer(source_id=source_id)), m)
    assert err.code == grpc.StatusCode.ALREADY_EXISTS and err.reason == "duplicate_customer"
    assert err.errors[0]["meta"] == {"existing_customer_id": c.id, "existing_customer_path": f"/customers/{c.id}",
                                     "deleted": False}
    stub.DeleteCustomer(pb.DeleteCustomerRequest(customer_id=c.id), metadata=m)
    stub.DeleteCustomer(pb.DeleteCustomerRequest(customer_id=c.id), metadata=m)
    err = call_error(stub.GetCustomer, pb.GetCustomerRequest(customer_id=c.id), m)
    assert err.code == grpc.StatusCode.NOT_FOUND
    err = call_error(stub.CreateCustomer, pb.CreateCustomerRequest(customer=pb.Customer(source_id=source_id)), m)
    assert err.errors[0]["meta"] == {"existing_customer_id": c.id, "deleted": True}


def test_grpc_validation(stub: customers_pb2_grpc.CustomerServiceStub, tenant: Tenant) -> None:
    m = md(tenant.key)
    err = call_error(stub.CreateCustomer, pb.CreateCustomerRequest(customer=pb.Customer(name="x")), m)
    assert err.code == grpc.StatusCode.INVALID_ARGUMENT and err.reason == "validation_required_field"
    assert err.violations[0][0] == "/source_id"
    err = call_error(stub.CreateCustomer, pb.CreateCustomerRequest(customer=pb.Customer(source_id="x" * 256)), m)
    assert err.violations[0][0] == "/source_id"
    err = call_error(stub.CreateCustomer, pb.CreateCustomerRequest(
        customer=pb.Customer(source_id=sid(), id="cust_x", merged_into_customer_id="cust_y")), m)
    assert sorted(v[0] for v in err.violations) == ["/id", "/merged_into_customer_id"]
    err = call_error(stub.CreateCustomer, pb.CreateCustomerRequest(
        customer=pb.Customer(source_id=sid(), source=PER_ACCOUNT)), m)
    assert err.violations[0][0] == "/source_account_id"
    c = stub.CreateCustomer(pb.CreateCustomerRequest(customer=pb.Customer(
        source_id=sid(), source_updated_at=ts("2026-02-01T00:00:00Z"))), metadata=m)
    err = call_error(stub.UpdateCustomer, pb.UpdateCustomerRequest(
        customer_id=c.id, customer=pb.Customer(source_updated_at=ts("2026-01-01T00:00:00Z"))), m)
    assert err.code == grpc.StatusCode.INVALID_ARGUMENT and err.violations[0][0] == "/source_updated_at"


# ------------------------------------------------------------------ batch upsert


def batch(http: httpx.Client, items: list[Any]) -> dict[str, Any]:
    r = http.post("/customers/batch", json={"data": items})
    assert r.status_code == 200, r.text
    body = r.json()
    assert set(body) == {"object", "summary", "data"} and body["object"] == "batch"
    assert [d["index"] for d in body["data"]] == list(range(len(items)))
    for d in body["data"]:
        assert set(d) == {"index", "status", "customer", "errors"}
        assert (d["customer"] is not None) == (d["status"] in ("created", "updated", "stale"))
        assert (d["errors"] is not None) == (d["status"] == "failed")
    counts = {s: sum(d["status"] == s for d in body["data"]) for s in ("created", "updated", "stale", "deleted", "failed")}
    assert body["summary"] == counts
    return body


def test_batch_every_status(http: httpx.Client) -> None:
    existing = create(http, name="old", email="old@example.com", source_updated_at="2026-01-05T00:00:00Z")
    fresh = create(http, source_updated_at="2026-01-05T00:00:00Z")
    gone = create(http)
    assert http.delete(f"/customers/{gone['id']}").status_code == 204
    new_id = sid()
    body = batch(http, [
        {"source_id": new_id, "name": "New", "source_updated_at": "2026-01-01T00:00:00Z"},
        {"source_id": existing["source_id"], "name": "Renamed", "email": None,
         "source_updated_at": "2026-01-06T00:00:00Z"},
        {"source_id": fresh["source_id"], "name": "ignored", "source_updated_at": "2026-01-04T00:00:00Z"},
        {"source_id": gone["source_id"], "name": "ignored"},
        {"name": "no id"},
        {"source_id": sid(), "source": PER_ACCOUNT},
    ])
    assert [d["status"] for d in body["data"]] == ["created", "updated", "stale", "deleted", "failed", "failed"]
    assert body["summary"] == {"created": 1, "updated": 1, "stale": 1, "deleted": 1, "failed": 2}
    created = body["data"][0]["customer"]
    assert created["source_id"] == new_id and created["id"].startswith("cust_") and created["name"] == "New"
    assert http.get(f"/customers/{created['id']}").json()["name"] == "New"
    updated = body["data"][1]["customer"]
    assert updated["id"] == existing["id"]
    assert (updated["name"], updated["email"]) == ("Renamed", "old@example.com")
    assert http.get(f"/customers/{existing['id']}").json()["name"] == "Renamed"
    stale = body["data"][2]["customer"]
    assert stale["id"] == fresh["id"] and stale["name"] is None
    assert http.get(f"/customers/{fresh['id']}").json()["name"] is None
    assert http.get(f"/customers/{gone['id']}").status_code == 404
    (missing,) = body["data"][4]["errors"]
    assert (missing["status"], missing["code"], missing["title"]) == ("422", "validation_required_field",
                                                                      "Missing source_id")
    assert missing["source"]["pointer"] == "/data/4/source_id"
    (acct,) = body["data"][5]["errors"]
    assert acct["source"]["pointer"] == "/data/5/source_account_id" and acct["status"] == "422"


def test_batch_resend_is_safe(http: httpx.Client) -> None:
    items = [{"source_id": sid(), "name": f"n{i}"} for i in range(20)]
    first = batch(http, items)
    assert first["summary"]["created"] == 20
    again = batch(http, items)
    assert again["summary"] == {"created": 0, "updated": 20, "stale": 0, "deleted": 0, "failed": 0}
    assert [d["customer"]["id"] for d in again["data"]] == [d["customer"]["id"] for d in first["data"]]
    assert [d["customer"] for d in again["data"]] == [d["customer"] for d in first["data"]]  # nothing changed


def test_batch_duplicates_inside_one_request_all_fail(http: httpx.Client) -> None:
    dup = sid()
    body = batch(http, [{"source_id": dup}, {"source_id": sid()}, {"source_id": dup, "name": "b"}])
    assert [d["status"] for d in body["data"]] == ["failed", "created", "failed"]
    for i in (0, 2):
        (err,) = body["data"][i]["errors"]
        assert err["status"] == "422" and "more than once" in err["detail"] and "0, 2" in err["detail"]
    assert dup not in [c["source_id"] for c in http.get("/customers", params={"limit": 1000}).json()["data"]]


def test_batch_item_parse_errors_fail_only_that_item(http: httpx.Client) -> None:
    body = batch(http, [{"source_id": sid(), "colour": "red"}, {"source_id": 5}, {"source_id": sid(), "id": "x"},
                        {"source_id": "x" * 256}, "not an object", {"source_id": sid()}])
    statuses = [d["status"] for d in body["data"]]
    assert statuses == ["failed"] * 5 + ["created"]
    pointers = [d["errors"][0]["source"]["pointer"] for d in body["data"][:5]]
    assert pointers == ["/data/0/colour", "/data/1/source_id", "/data/2/id", "/data/3/source_id", "/data/4"]


def test_batch_over_1000_items_or_malformed_is_422_at_data(http: httpx.Client) -> None:
    r = http.post("/customers/batch", json={"data": [{"source_id": str(i)} for i in range(1001)]})
    assert r.status_code == 422
    (err,) = r.json()["errors"]
    assert err["code"] == "validation_error" and err["source"]["pointer"] == "/data" and "1000" in err["detail"]
    r = http.post("/customers/batch", json={"data": {"source_id": "x"}})
    assert r.status_code == 422 and r.json()["errors"][0]["source"]["pointer"] == "/data"
    r = http.post("/customers/batch", json={"data": [], "extra": 1})
    assert r.status_code == 422 and r.json()["errors"][0]["source"]["pointer"] == "/extra"


def test_batch_1000_items_is_accepted(http: httpx.Client) -> None:
    body = batch(http, [{"source_id": sid()} for _ in range(1000)])
    assert body["summary"]["created"] == 1000


def test_batch_over_size_is_413_before_parsing(server: LevyServer, tenant: Tenant) -> None:
    limit = 5242880
    raw = b'{"data": [' + b" " * (limit) + b"]}"
    with httpx.Client(base_url=server.http_url, headers={"X-API-Key": tenant.key}, timeout=30) as c:
        r = c.post("/customers/batch", content=raw, headers={"content-type": "application/json"})
        assert r.status_code == 413
        (err,) = r.json()["errors"]
        assert (err["status"], err["code"], err["title"]) == ("413", "request_too_large", "Request Too Large")
        assert str(len(raw)) in err["detail"] and str(limit) in err["detail"] and "Split" in err["detail"]

        # Without Content-Length (chunked): refused while counting, still before parsing (the body is not JSON).
        def chunks():  # type: ignore[no-untyped-def]
            for _ in range(6):
                yield b"x" * (1 << 20)

        r = c.post("/customers/batch", content=chunks(), headers={"content-type": "application/json"})
        assert r.status_code == 413 and r.json()["errors"][0]["code"] == "request_too_large"


def test_grpc_batch(stub: customers_pb2_grpc.CustomerServiceStub, tenant: Tenant) -> None:
    m = md(tenant.key)
    old = stub.CreateCustomer(pb.CreateCustomerRequest(customer=pb.Customer(
        source_id=sid(), source_updated_at=ts("2026-03-01T00:00:00Z"))), metadata=m)
    dup = sid()
    resp = stub.BatchUpsertCustomers(pb.BatchUpsertCustomersRequest(data=[
        pb.Customer(source_id=sid(), name="n"),
        pb.Customer(source_id=old.source_id, source_updated_at=ts("2026-02-01T00:00:00Z"), name="x"),
        pb.Customer(name="no id"),
        pb.Customer(source_id=dup), pb.Customer(source_id=dup),
        pb.Customer(source_id="y" * 256),
        pb.Customer(source_id=sid(), id="cust_x"),
    ]), metadata=m)
    assert resp.object == "batch"
    assert [d.status for d in resp.data] == ["created", "stale", "failed", "failed", "failed", "failed", "failed"]
    assert (resp.summary.created, resp.summary.stale, resp.summary.failed) == (1, 1, 5)
    assert resp.data[1].customer.id == old.id and not resp.data[1].customer.HasField("name")
    e = resp.data[2].errors[0]
    assert (e.status, e.code, e.title, e.source.pointer) == ("422", "validation_required_field", "Missing source_id",
                                                            "/data/2/source_id")
    assert resp.data[5].errors[0].source.pointer == "/data/5/source_id"
    assert resp.data[6].errors[0].source.pointer == "/data/6/id"
    # Same limits as REST: 1000 items is fine, 1001 is refused at /data.
    ok = stub.BatchUpsertCustomers(pb.BatchUpsertCustomersRequest(data=[pb.Customer(source_id=sid())
                                                                        for _ in range(1000)]), metadata=m)
    assert ok.summary.created == 1000
    err = call_error(stub.BatchUpsertCustomers, pb.BatchUpsertCustomersRequest(
        data=[pb.Customer(source_id=str(i)) for i in range(1001)]), m)
    assert err.code == grpc.StatusCode.INVALID_ARGUMENT and err.violations[0][0] == "/data"
    big = pb.BatchUpsertCustomersRequest(data=[pb.Customer(source_id=sid(), name="n" * 500, email="e" * 300 + "@x.co")
                                               for _ in range(7000)])
    err = call_error(stub.BatchUpsertCustomers, big, m)
    assert err.code == grpc.StatusCode.RESOURCE_EXHAUSTED and err.reason == "request_too_large"


def test_batch_is_scoped_to_the_organization(http: httpx.Client, server: LevyServer, other_tenant: Tenant) -> None:
    c = create(http, name="mine")
    with httpx.Client(base_url=server.http_url, headers={"X-API-Key": other_tenant.key}) as other:
        r = other.post("/customers/batch", json={"data": [{"source_id": c["source_id"], "name": "theirs"}]})
        assert r.json()["data"][0]["status"] == "created"
        assert r.json()["data"][0]["customer"]["id"] != c["id"]
    assert http.get(f"/customers/{c['id']}").json()["name"] == "mine"


def test_overlapping_concurrent_batches_never_duplicate_nor_lose_updates(server: LevyServer, tenant: Tenant) -> None:
    shared = [sid() for _ in range(300)]
    writers = 6

    def run(w: int) -> dict[str, Any]:
        # Each writer sends the shared ids (in its own order) plus a few of its own.
        ids = shared[w * 37 % 300:] + shared[: w * 37 % 300] + [f"own-{w}-{i}-{uuid.uuid4().hex[:6]}" for i in range(20)]
        items = [{"source_id": s, "name": f"writer-{w}"} for s in ids]
        with httpx.Client(base_url=server.http_url, headers={"X-API-Key": tenant.key}, timeout=120) as c:
            r = c.post("/customers/batch", content=json.dumps({"data": items}),
                       headers={"content-type": "application/json"})
            assert r.status_code == 200, r.text
            return r.json()

    with ThreadPoolExecutor(writers) as ex:
        results = list(ex.map(run, range(writers)))
    created = sum(r["summary"]["created"] for r in results)
    updated = sum(r["summary"]["updated"] for r in results)
    assert sum(r["summary"]["failed"] for r in results) == 0
    assert created == 300 + writers * 20  # every shared id created exactly once
    assert updated == (writers - 1) * 300
    ids_by_source: dict[str, set[str]] = {}
    for r in results:
        for d in r["data"]:
            ids_by_source.setdefault(d["customer"]["source_id"], set()).add(d["customer"]["id"])
    assert all(len(v) == 1 for v in ids_by_source.values())
    with httpx.Client(base_url=server.http_url, headers={"X-API-Key": tenant.key}) as c:
        stored: list[dict[str, Any]] = []
        after = None
        while True:
            page = c.get("/customers", params={"limit": 1000, **({"starting_after": after} if after else {})}).json()
            stored += page["data"]
            if not page["has_more"]:
                break
            after = page["data"][-1]["id"]
    by_source = {c["source_id"]: c for c in stored}
    assert len(stored) == len(by_source) == 300 + writers * 20
    assert all(by_source[s]["name"] in {f"writer-{w}" for w in range(writers)} for s in shared)


@pytest.mark.parametrize("text", ["0001-01-01T00:00:00+01:00", "9999-12-31T23:59:59-01:00", "2026-02-30T00:00:00Z"])
def test_timestamp_outside_years_1_to_9999_after_its_offset_is_422(http: httpx.Client, text: str) -> None:
    """An offset that carries the instant out of range is invalid input, not a 500."""
    r = http.post("/customers", json={"source_id": sid(), "source_updated_at": text})
    assert r.status_code == 422, r.text
    err = r.json()["errors"][0]
    assert err["source"]["pointer"] == "/source_updated_at"
    b = http.post("/customers/batch", json={"data": [{"source_id": sid(), "source_updated_at": text}]})
    assert b.status_code == 200, b.text
    item = b.json()["data"][0]
    assert item["status"] == "failed"
    assert item["errors"][0]["source"]["pointer"] == "/data/0/source_updated_at"
