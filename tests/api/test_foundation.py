"""Foundation behaviour through both transports against a real server
(SQLite and PostgreSQL): auth, versions, errors, pagination, health."""

from __future__ import annotations

import asyncio

import grpc
import httpx
import pytest
from grpc_health.v1 import health_pb2, health_pb2_grpc
from grpc_reflection.v1alpha import reflection_pb2, reflection_pb2_grpc

from levyserver import LevyServer, Tenant
from levytest import call_error, md
from levy.store.reference_data import catalogue as load_catalogue
from levy.v1 import customers_pb2, organization_pb2, organization_pb2_grpc, reference_pb2, reference_pb2_grpc

CURRENT = "hydrogen.2025-04-15"


def all_codes() -> list[str]:
    return [c.code for c in load_catalogue().tax_codes]


# ------------------------------------------------------------ the first resource


def test_rest_lists_product_tax_codes_page_by_page(http: httpx.Client) -> None:
    seen: list[str] = []
    after = None
    pages = 0
    while True:
        params = {"limit": 7, **({"starting_after": after} if after else {})}
        r = http.get("/product-tax-codes", params=params)
        assert r.status_code == 200, r.text
        body = r.json()
        assert set(body) == {"data", "has_more"}
        assert len(body["data"]) <= 7
        for item in body["data"]:
            assert set(item) == {"code", "description"}
        seen += [i["code"] for i in body["data"]]
        pages += 1
        if not body["has_more"]:
            break
        after = body["data"][-1]["code"]
    assert seen == sorted(seen) == all_codes()
    assert pages == -(-len(seen) // 7)


def test_rest_page_size_1000_is_allowed_and_default_is_100(http: httpx.Client) -> None:
    r = http.get("/product-tax-codes", params={"limit": 1000})
    assert r.status_code == 200
    assert [i["code"] for i in r.json()["data"]] == all_codes()
    assert r.json()["has_more"] is False
    r = http.get("/product-tax-codes")
    assert len(r.json()["data"]) == min(100, len(all_codes()))
    assert r.json()["has_more"] is (len(all_codes()) > 100)


@pytest.mark.parametrize("limit", [0, -1, 1001])
def test_rest_limit_out_of_range_is_422_naming_the_parameter(http: httpx.Client, limit: int) -> None:
    r = http.get("/product-tax-codes", params={"limit": limit})
    assert r.status_code == 422
    err = r.json()["errors"][0]
    assert err["code"] == "validation_error" and err["status"] == "422"
    assert err["source"]["parameter"] == "limit"


def test_grpc_lists_product_tax_codes_page_by_page(channel: grpc.Channel, tenant: Tenant) -> None:
    stub = reference_pb2_grpc.ReferenceServiceStub(channel)
    seen: list[str] = []
    req = reference_pb2.ListProductTaxCodesRequest(limit=50)
    while True:
        resp, call = stub.ListProductTaxCodes.with_call(req, metadata=md(tenant.key))
        seen += [d.code for d in resp.data]
        trailers = dict(call.trailing_metadata())
        assert trailers["service-version"] == CURRENT
        assert trailers["x-request-id"].startswith("req_")
        if not resp.has_more:
            break
        req = reference_pb2.ListProductTaxCodesRequest(limit=50, starting_after=seen[-1])
    assert seen == all_codes()


def test_grpc_limit_error_carries_rich_details(channel: grpc.Channel, tenant: Tenant) -> None:
    stub = reference_pb2_grpc.ReferenceServiceStub(channel)
    err = call_error(stub.ListProductTaxCodes, reference_pb2.ListProductTaxCodesRequest(limit=5000), md(tenant.key))
    assert err.code == grpc.StatusCode.INVALID_ARGUMENT
    assert err.reason == "validation_error"
    assert err.violations and err.violations[0][0] == "limit"
    assert err.errors[0]["status"] == "422" and err.errors[0]["code"] == "validation_error"


def test_product_attributes_filter_by_ptc(http: httpx.Client) -> None:
    r = http.get("/product-attributes", params={"ptc": "SOFTWARE.SAAS.GENERAL", "limit": 1000})
    assert r.status_code == 200
    codes = [a["code"] for a in r.json()["data"]]
    assert "_B2B" in codes and "_DOWNLOADED" in codes and "_MANDATORY" not in codes
    for a in r.json()["data"]:
        assert set(a) == {"code", "name", "description", "group", "ptcs"}
        assert a["ptcs"] == [] or "SOFTWARE" in a["ptcs"]
    clothing = {a["code"] for a in http.get("/product-attributes", params={"ptc": "CLOTHING.APPAREL.GENERAL"}).json()["data"]}
    assert "_DOWNLOADED" not in clothing
    r = http.get("/product-attributes", params={"ptc": "NOT.A.CODE"})
    assert r.status_code == 422 and r.json()["errors"][0]["source"]["parameter"] == "ptc"


# ------------------------------------------------------------ authentication


@pytest.mark.parametrize(
    "headers, fragment",
    [
        ({}, "No API key"),
        ({"X-API-Key": "nope"}, "malformed"),
        ({"X-API-Key": "levy_sk_" + "A" * 43}, "unknown"),
        ({"Authorization": "Bearer levy_sk_" + "B" * 43}, "unknown"),
        ({"Authorization": "Basic abc"}, "No API key"),
    ],
)
def test_rest_bad_keys_are_401_jsonapi(anon_http: httpx.Client, headers: dict[str, str], fragment: str) -> None:
    r = anon_http.get("/product-tax-codes", headers=headers)
    assert r.status_code == 401
    assert r.headers["content-type"] == "application/json"
    (err,) = r.json()["errors"]
    assert err["status"] == "401" and err["code"] == "authentication_error" and err["title"] == "Unauthorized"
    assert fragment in err["detail"]


def test_bearer_key_is_accepted(anon_http: httpx.Client, tenant: Tenant) -> None:
    r = anon_http.get("/product-tax-codes", headers={"Authorization": f"Bearer {tenant.key}"}, params={"limit": 1})
    assert r.status_code == 200


def test_auth_comes_before_validation(anon_http: httpx.Client) -> None:
    r = anon_http.post("/customers", content=b"{not json")
    assert r.status_code == 401


def test_grpc_bad_keys_are_unauthenticated(channel: grpc.Channel, tenant: Tenant) -> None:
    stub = reference_pb2_grpc.ReferenceServiceStub(channel)
    req = reference_pb2.ListProductTaxCodesRequest(limit=1)
    for metadata in ([], [("x-api-key", "x")], [("x-api-key", "levy_sk_" + "C" * 43)]):
        err = call_error(stub.ListProductTaxCodes, req, metadata)
        assert err.code == grpc.StatusCode.UNAUTHENTICATED
        assert err.reason == "authentication_error"
        assert err.errors[0]["status"] == "401"
    resp = stub.ListProductTaxCodes(req, metadata=[("authorization", f"Bearer {tenant.key}")])
    assert len(resp.data) == 1


def test_revoked_key_stops_working(server: LevyServer, tenant: Tenant) -> None:
    from levy.store.db import create_engine, transaction
    from levy.store.keys import SqlApiKeys

    with httpx.Client(base_url=server.http_url, headers={"X-API-Key": tenant.key}) as c:
        assert c.get("/product-tax-codes", params={"limit": 1}).status_code == 200

        async def revoke() -> None:
            engine = create_engine(server.database_url, pool_size=1)
            async with transaction(engine, write=True) as conn:
                assert await SqlApiKeys(conn).revoke(tenant.organization_id, tenant.key_id) is not None
            await engine.dispose()

        asyncio.run(revoke())
        # Other processes trust a key for at most the auth cache time (2 s by default).
        import time

        deadline = time.monotonic() + 5
        status = 200
        while time.monotonic() < deadline and status == 200:
            status = c.get("/product-tax-codes", params={"limit": 1}).status_code
            time.sleep(0.2)
        r = c.get("/product-tax-codes", params={"limit": 1})
        assert r.status_code == 401 and "revoked" in r.json()["errors"][0]["detail"]


def test_admin_operations_refuse_plain_keys(http: httpx.Client, admin_http: httpx.Client, channel: grpc.Channel,
                                            tenant: Tenant) -> None:
    r = http.get("/organization/settings")
    assert r.status_code == 403
    assert r.json()["errors"][0]["code"] == "permission_error"
    assert admin_http.get("/organization/settings").status_code != 403
    stub = organization_pb2_grpc.OrganizationServiceStub(channel)
    err = call_error(stub.GetOrganizationSettings, organization_pb2.GetOrganizationSettingsRequest(), md(tenant.key))
    assert err.code == grpc.StatusCode.PERMISSION_DENIED


# ------------------------------------------------------------ versioning


def test_version_header_served_and_echoed(http: httpx.Client) -> None:
    r = http.get("/product-tax-codes", params={"limit": 1})
    assert r.headers["service-version"] == CURRENT
    r = http.get("/product-tax-codes", params={"limit": 1}, headers={"Service-Version": "hydrogen.2025-06-01"})
    assert r.status_code == 200 and r.headers["service-version"] == CURRENT


@pytest.mark.parametrize(
    "value, fragment",
    [
        ("hydrogen", "malformed"),
        ("hydrogen.2025-13-01", "invalid date"),
        ("helium.2025-04-15", "unknown"),
        ("hydrogen.2099-01-01", "future"),
        ("hydrogen.2024-01-01", "predates"),
    ],
)
def test_bad_version_header_is_400(http: httpx.Client, channel: grpc.Channel, tenant: Tenant, value: str,
                                   fragment: str) -> None:
    r = http.get("/product-tax-codes", headers={"Service-Version": value})
    assert r.status_code == 400
    (err,) = r.json()["errors"]
    assert err["code"] == "invalid_service_version" and fragment in err["detail"]
    assert r.headers["service-version"] == CURRENT
    stub = reference_pb2_grpc.ReferenceServiceStub(channel)
    e = call_error(stub.ListProductTaxCodes, reference_pb2.ListProductTaxCodesRequest(),
                   md(tenant.key, service_version=value))
    assert e.code == grpc.StatusCode.INVALID_ARGUMENT and e.reason == "invalid_service_version"


# ------------------------------------------------------------ REST errors


def test_unknown_route_is_404_jsonapi(http: httpx.Client) -> None:
    r = http.get("/no-such-thing")
    assert r.status_code == 404
    assert r.json()["errors"][0]["code"] == "not_found"


def test_wrong_method_is_405_with_allow(http: httpx.Client) -> None:
    r = http.put("/product-tax-codes")
    assert r.status_code == 405
    assert r.headers["allow"] == "GET"
    r = http.post("/customers/cust_x")
    assert r.status_code == 405
    assert set(r.headers["allow"].split(", ")) == {"DELETE", "GET", "PATCH"}


def test_malformed_json_is_422_with_pointer(http: httpx.Client) -> None:
    r = http.post("/products", content=b'{"source_id": ', headers={"content-type": "application/json"})
    assert r.status_code == 422
    (err,) = r.json()["errors"]
    assert err["code"] == "validation_error" and err["source"]["pointer"] == ""
    assert "not valid JSON" in err["detail"]


def test_unknown_readonly_and_mistyped_properties_are_422_with_pointers(http: httpx.Client) -> None:
    r = http.post("/products", json={"source_id": 7, "name": "x", "colour": "red", "id": "prd_x",
                                     "tax_codes": "GENERAL.TANGIBLE.GOODS"})
    assert r.status_code == 422
    by_pointer = {e["source"]["pointer"]: e["detail"] for e in r.json()["errors"]}
    assert set(by_pointer) == {"/source_id", "/colour", "/id", "/tax_codes"}
    assert "Unknown property" in by_pointer["/colour"]
    assert "read-only" in by_pointer["/id"]
    assert "must be a string" in by_pointer["/source_id"]
    assert "must be an array" in by_pointer["/tax_codes"]


def test_nested_unknown_property_pointer(http: httpx.Client) -> None:
    r = http.post("/calculations", json={"line_items": [{"id": "a"}, {"id": "b", "customer": {"adress": {}}}]})
    assert r.status_code == 422
    (d,) = r.json()["detail"]
    assert d["loc"] == ["body", "line_items", 1, "customer", "adress"]
    assert d["type"] == "extra_forbidden"


def test_string_limits_from_the_protos_are_enforced(http: httpx.Client) -> None:
    r = http.post("/products", json={"source_id": "x" * 256, "name": "n"})
    assert r.status_code == 422
    err = r.json()["errors"][0]
    assert err["source"]["pointer"] == "/source_id" and "maximum is 255" in err["detail"]


def test_413_before_parsing(http: httpx.Client) -> None:
    body = b"[" + b" " * 1_100_000 + b"]"
    r = http.post("/products", content=body, headers={"content-type": "application/json"})
    assert r.status_code == 413
    err = r.json()["errors"][0]
    assert err["code"] == "request_too_large" and "1100002 bytes" in err["detail"]


# ------------------------------------------------------------ health and reflection


def test_healthz_and_grpc_health(anon_http: httpx.Client, channel: grpc.Channel) -> None:
    r = anon_http.get("/healthz")
    assert r.status_code == 200 and r.json() == {"status": "serving"}
    health = health_pb2_grpc.HealthStub(channel)
    for service in ("", "levy.v1.CalculationService", "levy.v1.CustomerService"):
        resp = health.Check(health_pb2.HealthCheckRequest(service=service))
        assert resp.status == health_pb2.HealthCheckResponse.SERVING


def test_grpc_reflection_lists_every_service(channel: grpc.Channel) -> None:
    stub = reflection_pb2_grpc.ServerReflectionStub(channel)
    responses = stub.ServerReflectionInfo(iter([reflection_pb2.ServerReflectionRequest(list_services="")]))
    names = {s.name for r in responses for s in r.list_services_response.service}
    assert {
        "levy.v1.CalculationService", "levy.v1.TransactionService", "levy.v1.CustomerService",
        "levy.v1.ProductService", "levy.v1.ReferenceService", "levy.v1.OrganizationService", "levy.v1.LocationService",
        "levy.v1.FilingService", "grpc.health.v1.Health",
    } <= names


def test_customer_message_mirrors_the_spec_fields() -> None:
    spec_fields = {"id", "source_id", "source", "source_account_id", "name", "email", "merged_into_customer_id",
                   "source_updated_at", "created_at", "updated_at", "exemption"}
    assert set(customers_pb2.Customer.DESCRIPTOR.fields_by_name) == spec_fields
