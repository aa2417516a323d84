"""Bugs schemathesis found in the gateway, kept fixed (docs/security.md)."""

from __future__ import annotations

import httpx


def test_second_method_on_a_templated_path_is_routed(admin_http: httpx.Client) -> None:
    # POST /transactions/{id} and PATCH/DELETE /customers/{customer_id} were 405
    # because GET on the same template was tried first.
    for method, path in [("POST", "/transactions/txn_1"), ("PATCH", "/customers/cust_1"),
                         ("DELETE", "/customers/cust_1"), ("POST", "/filings/fil_1"),
                         ("PATCH", "/products/prd_1"), ("DELETE", "/customers/cust_1/exemption-certificates/c")]:
        r = admin_http.request(method, path, json={} if method != "DELETE" else None)
        assert r.status_code in (404, 501), (method, path, r.text)  # routed to the RPC: no such id / not yet
        assert r.json()["errors"][0]["code"] in ("not_found", "not_implemented"), r.text


def test_allow_of_a_literal_path_lists_only_its_methods(admin_http: httpx.Client) -> None:
    r = admin_http.request("OPTIONS", "/customers/batch")
    assert r.status_code == 405
    assert r.headers["allow"] == "POST"
    r = admin_http.get("/customers/batch")
    assert r.status_code == 405 and r.headers["allow"] == "POST"


def test_out_of_range_query_integer_is_422_not_500(http: httpx.Client) -> None:
    for value in ("517782679449381", "-99999999999", "99999999999999999999999999"):
        r = http.get("/product-attributes", params={"limit": value})
        assert r.status_code == 422, r.text
        assert r.json()["errors"][0]["source"] == {"pointer": None, "parameter": "limit"}


def test_empty_service_version_means_the_latest(http: httpx.Client) -> None:
    r = http.get("/product-tax-codes", params={"limit": 1}, headers={"Service-Version": ""})
    assert r.status_code == 200


def test_nul_characters_are_422_not_500(admin_http: httpx.Client, channel, tenant) -> None:  # type: ignore[no-untyped-def]
    # PostgreSQL cannot store NUL: GetCustomer with id "\0" over gRPC was INTERNAL.
    import grpc

    from levy.v1 import customers_pb2, customers_pb2_grpc
    from levytest import call_error, md

    stub = customers_pb2_grpc.CustomerServiceStub(channel)
    err = call_error(stub.GetCustomer, customers_pb2.GetCustomerRequest(customer_id="\x00"), md(tenant.admin_key))
    assert err.code == grpc.StatusCode.INVALID_ARGUMENT and err.violations[0][0] == "/customer_id"
    err = call_error(stub.UpdateCustomer, customers_pb2.UpdateCustomerRequest(
        customer_id="cust_\x00", customer=customers_pb2.Customer(name="n")), md(tenant.admin_key))
    assert err.code == grpc.StatusCode.INVALID_ARGUMENT
    r = admin_http.post("/customers", json={"source_id": "a\u0000b"})
    assert r.status_code == 422 and r.json()["errors"][0]["source"]["pointer"] == "/source_id"
    r = admin_http.get("/customers/cust_%00")
    assert r.status_code == 422, r.text


def test_out_of_range_grpc_timestamp_is_invalid_argument(channel, tenant) -> None:  # type: ignore[no-untyped-def]
    # CreateProduct with source_updated_at before year 1 was INTERNAL.
    import grpc
    from google.protobuf import timestamp_pb2

    from levy.v1 import products_pb2, products_pb2_grpc
    from levytest import call_error, md

    stub = products_pb2_grpc.ProductServiceStub(channel)
    for ts in (timestamp_pb2.Timestamp(seconds=-62135596801), timestamp_pb2.Timestamp(seconds=253402300800),
               timestamp_pb2.Timestamp(seconds=0, nanos=-1), timestamp_pb2.Timestamp(seconds=0, nanos=10**9)):
        req = products_pb2.CreateProductRequest(product=products_pb2.Product(source_id="p1", source_updated_at=ts))
        err = call_error(stub.CreateProduct, req, md(tenant.admin_key))
        assert err.code == grpc.StatusCode.INVALID_ARGUMENT, (ts, err)
        assert err.violations[0][0] == "/source_updated_at"


def test_idempotent_replay_of_a_required_field_error_is_422_not_500(admin_http: httpx.Client) -> None:
    # Schemathesis (stateful): POST /customers without a body, replayed with the
    # same Idempotency-Key, rebuilt RequiredField(items=...) and crashed.
    headers = {"Idempotency-Key": "replay-required-field"}
    first = admin_http.post("/customers", headers=headers, json={})
    second = admin_http.post("/customers", headers=headers, json={})
    assert first.status_code == 422, first.text
    assert second.status_code == 422, second.text
    assert second.json()["errors"] == first.json()["errors"]


def test_early_years_render_as_rfc3339(admin_http: httpx.Client) -> None:
    # Schemathesis: source_updated_at 0956-02-10 came back as "956-02-10T...Z".
    r = admin_http.post("/products", json={"source_id": "early-year", "name": "Early", "tax_codes": ["GENERAL.TANGIBLE.GOODS"],
                                           "source_updated_at": "0956-02-10T03:56:46Z"})
    assert r.status_code == 201, r.text
    assert r.json()["source_updated_at"] == "0956-02-10T03:56:46Z"


def test_non_ascii_digit_property_is_422_not_500(http: httpx.Client) -> None:
    # An unknown property named "²" ("²".isdigit() is True, int("²") fails) made the
    # calculation error shape's ``loc`` raise: 500 without headers.
    r = http.post("/calculations", json={"transaction_date": "2026-01-05T00:00:00Z",
                                         "line_items": [{"id": "1", "quantity": "1", "unit_price": "100", "²": 1}]})
    assert r.status_code == 422, r.text
    assert ["body", "line_items", 0, "²"] in [d["loc"] for d in r.json()["detail"]]
