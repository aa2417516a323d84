"""One error object shape, exactly the spec's (7.1; issue 16): a failed batch item's errors and a
request's errors carry {status, code, title, detail, source?, meta} and nothing else, over REST and
gRPC, on SQLite and PostgreSQL. Before: a batch item also had "type" and "source": {"parameter": null},
and gRPC's ErrorBody a "type" the REST body lacks."""

from __future__ import annotations

import uuid

import grpc
import httpx
from google.protobuf import json_format

from levyserver import Tenant
from levytest import call_error, md
from levy.v1 import customers_pb2 as pb
from levy.v1 import customers_pb2_grpc as pbg
from levy.v1 import errors_pb2

SPEC_FIELDS = {"status", "code", "title", "detail", "source", "meta"}


def test_rest_batch_item_error_is_the_request_error(http: httpx.Client) -> None:
    r = http.post("/customers/batch", json={"data": [{"name": "no id"}, {"source_id": uuid.uuid4().hex}]})
    assert r.status_code == 200, r.text
    (item_error,) = r.json()["data"][0]["errors"]
    assert item_error == {"status": "422", "code": "validation_required_field", "title": "Missing source_id",
                          "detail": item_error["detail"], "source": {"pointer": "/data/0/source_id"}, "meta": None}
    # The same problem in a single create: the same object but for where it points.
    r = http.post("/customers", json={"name": "no id"})
    assert r.status_code == 422, r.text
    (request_error,) = r.json()["errors"]
    assert request_error == {**item_error, "source": {"pointer": "/source_id"}}


def test_rest_query_parameter_error_has_parameter(http: httpx.Client) -> None:
    r = http.get("/customers", params={"limit": "0"})
    assert r.status_code == 422
    (err,) = r.json()["errors"]
    assert set(err) == SPEC_FIELDS and err["source"] == {"pointer": None, "parameter": "limit"}


def test_grpc_error_objects_have_only_the_spec_fields(channel: grpc.Channel, tenant: Tenant) -> None:
    assert set(errors_pb2.ErrorObject.DESCRIPTOR.fields_by_name) == SPEC_FIELDS
    stub = pbg.CustomerServiceStub(channel)
    resp = stub.BatchUpsertCustomers(pb.BatchUpsertCustomersRequest(data=[pb.Customer(name="no id")]),
                                     metadata=md(tenant.key))
    (e,) = resp.data[0].errors
    assert (e.status, e.code, e.title, e.source.pointer) == ("422", "validation_required_field", "Missing source_id",
                                                            "/data/0/source_id")
    assert not e.source.HasField("parameter") and not e.HasField("meta")
    err = call_error(stub.CreateCustomer, pb.CreateCustomerRequest(customer=pb.Customer(name="no id")), md(tenant.key))
    assert err.errors == [{"status": "422", "code": "validation_required_field", "title": "Missing source_id",
                           "detail": e.detail, "source": {"pointer": "/source_id"}}]  # meta unset: null
    assert json_format.MessageToDict(e, preserving_proto_field_name=True)["source"] == {"pointer": "/data/0/source_id"}
