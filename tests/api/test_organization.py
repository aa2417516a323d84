"""Organization administration through both transports against a real server
(SQLite and PostgreSQL): tax settings, registrations, API keys; admin-only
access and tenant isolation."""

from __future__ import annotations

import asyncio
from datetime import date

import grpc
from google.protobuf import field_mask_pb2
import httpx
import pytest

from levyserver import LevyServer, Tenant
from levytest import call_error, md
from levy.v1 import organization_pb2 as pb
from levy.v1 import organization_pb2_grpc, reference_pb2, reference_pb2_grpc


@pytest.fixture
def stub(channel: grpc.Channel) -> organization_pb2_grpc.OrganizationServiceStub:
    return organization_pb2_grpc.OrganizationServiceStub(channel)


def pointers(r: httpx.Response) -> dict[str, str]:
    return {e["source"]["pointer"]: e["detail"] for e in r.json()["errors"]}


# ------------------------------------------------------------ admin only, both transports

REST_CALLS = [
    ("GET", "/organization/settings", None),
    ("PATCH", "/organization/settings", {"exemption_management": False}),
    ("GET", "/organization/registrations", None),
    ("POST", "/organization/registrations", {"jurisdiction": "US-ST-CA", "effective_from": "2024-01-01"}),
    ("DELETE", "/organization/registrations/reg_01HZZZZZZZZZZZZZZZZZZZZZZZ", None),
    ("GET", "/api-keys", None),
    ("POST", "/api-keys", {"name": "x"}),
    ("DELETE", "/api-keys/key_01HZZZZZZZZZZZZZZZZZZZZZZZ", None),
]

GRPC_CALLS = [
    ("GetOrganizationSettings", pb.GetOrganizationSettingsRequest()),
    ("UpdateOrganizationSettings",
     pb.UpdateOrganizationSettingsRequest(settings=pb.OrganizationSettings(exemption_management=False))),
    ("ListRegistrations", pb.ListRegistrationsRequest()),
    ("CreateRegistration", pb.CreateRegistrationRequest(
        registration=pb.Registration(jurisdiction="US-ST-CA", effective_from="2024-01-01"))),
    ("DeleteRegistration", pb.DeleteRegistrationRequest(registration_id="reg_01HZZZZZZZZZZZZZZZZZZZZZZZ")),
    ("ListApiKeys", pb.ListApiKeysRequest()),
    ("CreateApiKey", pb.CreateApiKeyRequest(api_key=pb.ApiKey(name="x"))),
    ("DeleteApiKey", pb.DeleteApiKeyRequest(key_id="key_01HZZZZZZZZZZZZZZZZZZZZZZZ")),
]


@pytest.mark.parametrize("method, path, body", REST_CALLS)
def test_rest_plain_key_is_403_and_no_key_is_401(http: httpx.Client, anon_http: httpx.Client, admin_http: httpx.Client,
                                                 method: str, path: str, body: dict | None) -> None:
    r = http.request(method, path, json=body)
    assert r.status_code == 403, r.text
    assert r.json()["errors"][0]["code"] == "permission_error"
    r = anon_http.request(method, path, json=body)
    assert r.status_code == 401, r.text
    assert r.json()["errors"][0]["code"] == "authentication_error"
    # Nothing was changed by the refused calls.
    assert admin_http.get("/organization/settings").json()["exemption_management"] is True
    assert admin_http.get("/organization/registrations").json()["data"] == []
    assert [k["name"] for k in admin_http.get("/api-keys").json()["data"]] == ["admin", "plain"]


@pytest.mark.parametrize("rpc, req", GRPC_CALLS, ids=[c[0] for c in GRPC_CALLS])
def test_grpc_plain_key_is_permission_denied_and_no_key_unauthenticated(stub, tenant: Tenant, rpc: str, req) -> None:
    err = call_error(getattr(stub, rpc), req, md(tenant.key))
    assert err.code == grpc.StatusCode.PERMISSION_DENIED and err.reason == "permission_error"
    err = call_error(getattr(stub, rpc), req, [])
    assert err.code == grpc.StatusCode.UNAUTHENTICATED


# ------------------------------------------------------------ settings


def test_rest_settings_defaults_then_partial_patch(admin_http: httpx.Client, tenant: Tenant) -> None:
    r = admin_http.get("/organization/settings")
    assert r.status_code == 200, r.text
    body = r.json()
    assert set(body) == {"organization_id", "name", "default_tax_codes", "exemption_management",
                         "certificate_treatment", "filing_currencies", "nexus_approaching_share", "updated_at"}
    assert body["filing_currencies"] == {"US": "USD"}  # the default from data (issue 37)
    assert body["nexus_approaching_share"] == "0.8"  # the default (issue 35)
    assert body["organization_id"] == tenant.organization_id
    assert body["name"].startswith("Test org ")
    assert body["default_tax_codes"] == ["GENERAL.TANGIBLE.GOODS"]
    assert body["exemption_management"] is True
    assert body["certificate_treatment"] == "certificate_only"
    first_updated = body["updated_at"]

    r = admin_http.patch("/organization/settings", json={"certificate_treatment": "certificate_and_product_tax_code"})
    assert r.status_code == 200, r.text
    after = r.json()
    assert after["certificate_treatment"] == "certificate_and_product_tax_code"
    assert after["exemption_management"] is True and after["name"] == body["name"]
    assert after["default_tax_codes"] == ["GENERAL.TANGIBLE.GOODS"]
    assert after["updated_at"] > first_updated

    r = admin_http.patch("/organization/settings", json={
        "name": "  Acme Corp ", "exemption_management": False,
        "default_tax_codes": ["SOFTWARE.SAAS.GENERAL", "_B2B"],
    })
    assert r.status_code == 200, r.text
    assert admin_http.get("/organization/settings").json() == {
        **r.json(), "name": "Acme Corp", "exemption_management": False,
        "default_tax_codes": ["SOFTWARE.SAAS.GENERAL", "_B2B"],
        "certificate_treatment": "certificate_and_product_tax_code",
    }


def test_rest_settings_refuses_sales_tax_and_bad_values_writing_nothing(admin_http: httpx.Client) -> None:
    before = admin_http.get("/organization/settings").json()
    r = admin_http.patch("/organization/settings", json={"default_tax_codes": ["SALES_TAX"], "name": "New name"})
    assert r.status_code == 422
    (err,) = r.json()["errors"]
    assert err["code"] == "validation_error" and err["source"]["pointer"] == "/default_tax_codes/0"
    assert "organization default" in err["detail"]

    r = admin_http.patch("/organization/settings", json={
        "default_tax_codes": ["NOT.A.CODE"], "certificate_treatment": "sometimes", "name": "   ",
        "exemption_management": None,
    })
    assert r.status_code == 422
    ptrs = pointers(r)
    assert set(ptrs) == {"/default_tax_codes/0", "/certificate_treatment", "/name", "/exemption_management"}
    assert "unknown tax code" in ptrs["/default_tax_codes/0"]
    assert "certificate_only" in ptrs["/certificate_treatment"]
    assert "null" in ptrs["/exemption_management"]

    for empty in ([], None):
        r = admin_http.patch("/organization/settings", json={"default_tax_codes": empty})
        assert r.status_code == 422
        assert "cannot be empty" in pointers(r)["/default_tax_codes"]

    r = admin_http.patch("/organization/settings", json={"default_tax_codes": ["_B2B"]})
    assert r.status_code == 422 and "category path" in pointers(r)["/default_tax_codes"]
    r = admin_http.patch("/organization/settings", json={"exemption_management": "yes", "colour": 1})
    assert r.status_code == 422 and set(pointers(r)) == {"/exemption_management", "/colour"}
    r = admin_http.patch("/organization/settings", json={"name": "x" * 201})
    assert r.status_code == 422 and "/name" in pointers(r)
    assert admin_http.get("/organization/settings").json() == before


def test_grpc_settings_get_and_update_without_mask(stub, tenant: Tenant) -> None:
    got = stub.GetOrganizationSettings(pb.GetOrganizationSettingsRequest(), metadata=md(tenant.admin_key))
    assert got.organization_id == tenant.organization_id
    assert list(got.default_tax_codes) == ["GENERAL.TANGIBLE.GOODS"] and got.exemption_management is True
    assert got.HasField("updated_at")
    # Empty mask: only the fields set on the message change.
    out = stub.UpdateOrganizationSettings(
        pb.UpdateOrganizationSettingsRequest(settings=pb.OrganizationSettings(exemption_management=False)),
        metadata=md(tenant.admin_key),
    )
    assert out.exemption_management is False and out.name == got.name
    assert list(out.default_tax_codes) == ["GENERAL.TANGIBLE.GOODS"] and out.certificate_treatment == "certificate_only"
    out = stub.UpdateOrganizationSettings(
        pb.UpdateOrganizationSettingsRequest(
            settings=pb.OrganizationSettings(default_tax_codes=["FOOD.GROCERY.GENERAL"], name="Grocer")),
        metadata=md(tenant.admin_key),
    )
    assert list(out.default_tax_codes) == ["FOOD.GROCERY.GENERAL"] and out.name == "Grocer"
    assert out.exemption_management is False
    err = call_error(stub.UpdateOrganizationSettings, pb.UpdateOrganizationSettingsRequest(
        settings=pb.OrganizationSettings(default_tax_codes=["SALES_TAX"], certificate_treatment="bad")),
        md(tenant.admin_key))
    assert err.code == grpc.StatusCode.INVALID_ARGUMENT and err.reason == "validation_error"
    assert {v[0] for v in err.violations} == {"/default_tax_codes/0", "/certificate_treatment"}
    again = stub.GetOrganizationSettings(pb.GetOrganizationSettingsRequest(), metadata=md(tenant.admin_key))
    assert list(again.default_tax_codes) == ["FOOD.GROCERY.GENERAL"] and again.certificate_treatment == "certificate_only"
    assert again.nexus_approaching_share == "0.8"
    out = stub.UpdateOrganizationSettings(pb.UpdateOrganizationSettingsRequest(
        settings=pb.OrganizationSettings(nexus_approaching_share="0.75")), metadata=md(tenant.admin_key))
    assert out.nexus_approaching_share == "0.75" and list(out.default_tax_codes) == ["FOOD.GROCERY.GENERAL"]
    err = call_error(stub.UpdateOrganizationSettings, pb.UpdateOrganizationSettingsRequest(
        settings=pb.OrganizationSettings(nexus_approaching_share="1.0")), md(tenant.admin_key))
    assert [v[0] for v in err.violations] == ["/nexus_approaching_share"]
    # In the mask and unset on the message: null, the default again.
    out = stub.UpdateOrganizationSettings(pb.UpdateOrganizationSettingsRequest(
        settings=pb.OrganizationSettings(), update_mask=field_mask_pb2.FieldMask(paths=["nexus_approaching_share"])),
        metadata=md(tenant.admin_key))
    assert out.nexus_approaching_share == "0.8"


def test_settings_are_per_organization(server: LevyServer, tenant: Tenant, other_tenant: Tenant) -> None:
    with httpx.Client(base_url=server.http_url, headers={"X-API-Key": tenant.admin_key}) as a, \
            httpx.Client(base_url=server.http_url, headers={"X-API-Key": other_tenant.admin_key}) as b:
        assert a.patch("/organization/settings", json={"exemption_management": False, "name": "A"}).status_code == 200
        other = b.get("/organization/settings").json()
        assert other["organization_id"] == other_tenant.organization_id
        assert other["exemption_management"] is True and other["name"] != "A"


# ------------------------------------------------------------ registrations


def test_rest_registrations_create_list_delete(admin_http: httpx.Client) -> None:
    r = admin_http.post("/organization/registrations", json={
        "jurisdiction": "US-ST-CA", "registration_number": "SR EAA 123-456789", "effective_from": "2024-01-01"})
    assert r.status_code == 201, r.text
    ca = r.json()
    assert set(ca) == {"id", "jurisdiction", "registration_number", "effective_from", "effective_to", "created_at"}
    assert ca["id"].startswith("reg_") and ca["effective_to"] is None
    assert ca["registration_number"] == "SR EAA 123-456789"
    ids = [ca["id"]]
    for body in ({"jurisdiction": "US-ST-NY", "effective_from": "2023-03-01", "effective_to": "2023-12-31"},
                 {"jurisdiction": "US-ST-NY", "effective_from": "2024-01-01"},
                 {"jurisdiction": "US-CI-CO-DENVER", "effective_from": "2024-01-01"}):
        r = admin_http.post("/organization/registrations", json=body)
        assert r.status_code == 201, r.text
        assert r.json()["registration_number"] is None
        ids.append(r.json()["id"])
    listed = admin_http.get("/organization/registrations").json()
    assert [x["id"] for x in listed["data"]] == ids[::-1] and listed["has_more"] is False
    assert listed["data"][-1] == ca
    page1 = admin_http.get("/organization/registrations", params={"limit": 3}).json()
    assert [x["id"] for x in page1["data"]] == ids[:0:-1] and page1["has_more"] is True
    page2 = admin_http.get("/organization/registrations",
                           params={"limit": 3, "starting_after": page1["data"][-1]["id"]}).json()
    assert [x["id"] for x in page2["data"]] == [ids[0]] and page2["has_more"] is False

    r = admin_http.delete(f"/organization/registrations/{ids[1]}")
    assert r.status_code == 204 and r.content == b""
    assert admin_http.delete(f"/organization/registrations/{ids[1]}").status_code == 404
    assert ids[1] not in [x["id"] for x in admin_http.get("/organization/registrations").json()["data"]]


@pytest.mark.parametrize("body, pointer, fragment", [
    ({"jurisdiction": "us-st-ca", "effective_from": "2024-01-01"}, "/jurisdiction", "upper-case"),
    ({"jurisdiction": "US-ST-XX", "effective_from": "2024-01-01"}, "/jurisdiction", "not a US state"),
    ({"jurisdiction": "NY", "effective_from": "2024-01-01"}, "/jurisdiction", "not a jurisdiction code"),
    ({"jurisdiction": "DE-ST-BY", "effective_from": "2024-01-01"}, "/jurisdiction", "outside the US only"),
    ({"jurisdiction": "US-ZZ-CA", "effective_from": "2024-01-01"}, "/jurisdiction", "unknown level"),
    ({"jurisdiction": "US-CO-NY", "effective_from": "2024-01-01"}, "/jurisdiction", "names the place"),
    ({"jurisdiction": "US-ST-CA-LOCAL", "effective_from": "2024-01-01"}, "/jurisdiction", "no suffix"),
    ({"effective_from": "2024-01-01"}, "/jurisdiction", "required"),
    ({"jurisdiction": "US-ST-CA"}, "/effective_from", "required"),
    ({"jurisdiction": "US-ST-CA", "effective_from": "2024-02-30"}, "/effective_from", "YYYY-MM-DD"),
    ({"jurisdiction": "US-ST-CA", "effective_from": "20240101"}, "/effective_from", "YYYY-MM-DD"),
    ({"jurisdiction": "US-ST-CA", "effective_from": "2024-05-01", "effective_to": "2024-04-30"},
     "/effective_to", "before effective_from"),
])
def test_rest_registration_validation(admin_http: httpx.Client, body: dict, pointer: str, fragment: str) -> None:
    r = admin_http.post("/organization/registrations", json=body)
    assert r.status_code == 422, r.text
    ptrs = pointers(r)
    assert fragment in ptrs[pointer]
    assert admin_http.get("/organization/registrations").json()["data"] == []


def test_rest_registration_reports_every_problem_at_once(admin_http: httpx.Client) -> None:
    r = admin_http.post("/organization/registrations", json={"jurisdiction": "US-ST-QQ", "effective_from": "soon",
                                                            "effective_to": "later"})
    assert r.status_code == 422
    assert set(pointers(r)) == {"/jurisdiction", "/effective_from", "/effective_to"}


def test_rest_overlapping_registration_is_409(admin_http: httpx.Client) -> None:
    first = admin_http.post("/organization/registrations", json={
        "jurisdiction": "US-ST-TX", "effective_from": "2024-01-01", "effective_to": "2024-06-30"}).json()
    for dates in ({"effective_from": "2024-06-30"}, {"effective_from": "2023-01-01", "effective_to": "2024-01-01"},
                  {"effective_from": "2023-01-01"}):
        r = admin_http.post("/organization/registrations", json={"jurisdiction": "US-ST-TX", **dates})
        assert r.status_code == 409, r.text
        (err,) = r.json()["errors"]
        assert err["code"] == "conflict" and err["meta"] == {"existing_registration_id": first["id"]}
        assert "overlaps" in err["detail"]
    # Adjacent dates and other jurisdictions are fine.
    assert admin_http.post("/organization/registrations", json={
        "jurisdiction": "US-ST-TX", "effective_from": "2024-07-01"}).status_code == 201
    assert admin_http.post("/organization/registrations", json={
        "jurisdiction": "US-ST-OK", "effective_from": "2024-01-01"}).status_code == 201


def test_grpc_registrations(stub, tenant: Tenant) -> None:
    meta = md(tenant.admin_key)
    reg = stub.CreateRegistration(pb.CreateRegistrationRequest(registration=pb.Registration(
        jurisdiction="US-ST-WA", registration_number="600-123-456", effective_from="2022-10-01",
        effective_to="2030-12-31")), metadata=meta)
    assert reg.id.startswith("reg_") and reg.effective_to == "2030-12-31" and reg.HasField("created_at")
    listed = stub.ListRegistrations(pb.ListRegistrationsRequest(limit=10), metadata=meta)
    assert [r.id for r in listed.data] == [reg.id] and not listed.has_more
    assert listed.data[0] == reg
    err = call_error(stub.CreateRegistration, pb.CreateRegistrationRequest(registration=pb.Registration(
        jurisdiction="US-ST-WA", effective_from="2025-01-01")), meta)
    assert err.code == grpc.StatusCode.ALREADY_EXISTS and err.reason == "conflict"
    err = call_error(stub.CreateRegistration, pb.CreateRegistrationRequest(registration=pb.Registration(
        jurisdiction="US-ST-WA")), meta)
    assert err.code == grpc.StatusCode.INVALID_ARGUMENT and err.violations[0][0] == "/effective_from"
    err = call_error(stub.ListRegistrations, pb.ListRegistrationsRequest(limit=0), meta)
    assert err.code == grpc.StatusCode.INVALID_ARGUMENT
    stub.DeleteRegistration(pb.DeleteRegistrationRequest(registration_id=reg.id), metadata=meta)
    err = call_error(stub.DeleteRegistration, pb.DeleteRegistrationRequest(registration_id=reg.id), meta)
    assert err.code == grpc.StatusCode.NOT_FOUND
    assert list(stub.ListRegistrations(pb.ListRegistrationsRequest(), metadata=meta).data) == []


def test_registrations_are_isolated_between_organizations(server: LevyServer, stub, tenant: Tenant,
                                                          other_tenant: Tenant) -> None:
    with httpx.Client(base_url=server.http_url, headers={"X-API-Key": tenant.admin_key}) as a, \
            httpx.Client(base_url=server.http_url, headers={"X-API-Key": other_tenant.admin_key}) as b:
        mine = a.post("/organization/registrations",
                      json={"jurisdiction": "US-ST-FL", "effective_from": "2024-01-01"}).json()
        # The other organization may register the same jurisdiction and dates: no overlap across tenants.
        theirs = b.post("/organization/registrations",
                        json={"jurisdiction": "US-ST-FL", "effective_from": "2024-01-01"})
        assert theirs.status_code == 201
        assert [x["id"] for x in b.get("/organization/registrations").json()["data"]] == [theirs.json()["id"]]
        assert b.delete(f"/organization/registrations/{mine['id']}").status_code == 404
        err = call_error(stub.DeleteRegistration, pb.DeleteRegistrationRequest(registration_id=mine["id"]),
                         md(other_tenant.admin_key))
        assert err.code == grpc.StatusCode.NOT_FOUND
        assert [x["id"] for x in a.get("/organization/registrations").json()["data"]] == [mine["id"]]


def test_registrations_for_gives_the_engine_its_registrations(server: LevyServer, admin_http: httpx.Client,
                                                              tenant: Tenant, other_tenant: Tenant) -> None:
    from levy.domain.tax.model import Registration
    from levy.store.db import create_engine, transaction
    from levy.store.organization import registrations_for

    admin_http.post("/organization/registrations", json={"jurisdiction": "US-ST-CA", "effective_from": "2024-01-01"})
    admin_http.post("/organization/registrations", json={
        "jurisdiction": "US-ST-AZ", "effective_from": "2020-01-01", "effective_to": "2021-12-31"})

    async def read(org_id: str) -> list[Registration]:
        engine = create_engine(server.database_url, pool_size=1)
        try:
            async with transaction(engine, write=False) as conn:
                return await registrations_for(conn, org_id)
        finally:
            await engine.dispose()

    regs = asyncio.run(read(tenant.organization_id))
    assert regs == [Registration("US-ST-AZ", date(2020, 1, 1), date(2021, 12, 31)),
                    Registration("US-ST-CA", date(2024, 1, 1), None)]
    assert regs[0].covers(date(2021, 12, 31)) and not regs[0].covers(date(2022, 1, 1))
    assert asyncio.run(read(other_tenant.organization_id)) == []


# ------------------------------------------------------------ API keys


def test_rest_api_keys_list_create_revoke(server: LevyServer, admin_http: httpx.Client, tenant: Tenant) -> None:
    listed = admin_http.get("/api-keys").json()
    assert [k["id"] for k in listed["data"]] == [tenant.admin_key_id, tenant.key_id]
    for k in listed["data"]:
        assert set(k) == {"id", "name", "admin", "prefix", "secret", "created_at", "last_used_at", "revoked_at"}
        assert k["secret"] is None and k["revoked_at"] is None
    assert listed["data"][0]["admin"] is True and listed["data"][1]["admin"] is False
    assert listed["data"][0]["last_used_at"] is not None  # this very call used it
    assert tenant.admin_key.startswith(listed["data"][0]["prefix"])

    r = admin_http.post("/api-keys", json={"name": " billing sync "})
    assert r.status_code == 201, r.text
    new = r.json()
    assert new["id"].startswith("key_") and new["name"] == "billing sync" and new["admin"] is False
    assert new["secret"] and new["secret"].startswith(new["prefix"]) and new["revoked_at"] is None
    with httpx.Client(base_url=server.http_url, headers={"X-API-Key": new["secret"]}) as c:
        assert c.get("/product-tax-codes", params={"limit": 1}).status_code == 200
        assert c.get("/api-keys").status_code == 403
        again = admin_http.get("/api-keys").json()["data"]
        assert again[0]["id"] == new["id"] and again[0]["secret"] is None
        assert new["secret"] not in admin_http.get("/api-keys").text

        r = admin_http.delete(f"/api-keys/{new['id']}")
        assert r.status_code == 204 and r.content == b""
        r = c.get("/product-tax-codes", params={"limit": 1})
        assert r.status_code == 401 and "revoked" in r.json()["errors"][0]["detail"]
    assert admin_http.delete(f"/api-keys/{new['id']}").status_code == 204
    revoked = next(k for k in admin_http.get("/api-keys").json()["data"] if k["id"] == new["id"])
    assert revoked["revoked_at"] is not None

    admin2 = admin_http.post("/api-keys", json={"name": "second admin", "admin": True}).json()
    assert admin2["admin"] is True
    with httpx.Client(base_url=server.http_url, headers={"X-API-Key": admin2["secret"]}) as c2:
        assert c2.get("/api-keys").status_code == 200


def test_rest_api_key_validation(admin_http: httpx.Client) -> None:
    for body in ({}, {"name": "  "}, {"name": None}):
        r = admin_http.post("/api-keys", json=body)
        assert r.status_code == 422, r.text
        (err,) = r.json()["errors"]
        assert err["code"] == "validation_required_field" and err["source"]["pointer"] == "/name"
    r = admin_http.post("/api-keys", json={"name": "x", "secret": "mine", "prefix": "p"})
    assert r.status_code == 422 and set(pointers(r)) == {"/secret", "/prefix"}
    assert len(admin_http.get("/api-keys").json()["data"]) == 2


def test_last_admin_key_cannot_be_revoked(server: LevyServer, admin_http: httpx.Client, stub, tenant: Tenant) -> None:
    r = admin_http.delete(f"/api-keys/{tenant.admin_key_id}")
    assert r.status_code == 422
    (err,) = r.json()["errors"]
    assert err["code"] == "invalid_state" and "last active admin key" in err["detail"]
    err2 = call_error(stub.DeleteApiKey, pb.DeleteApiKeyRequest(key_id=tenant.admin_key_id), md(tenant.admin_key))
    assert err2.code == grpc.StatusCode.FAILED_PRECONDITION
    # Revoking the plain key is fine; with a second admin key, the first admin key can go (even itself).
    assert admin_http.delete(f"/api-keys/{tenant.key_id}").status_code == 204
    second = admin_http.post("/api-keys", json={"name": "next", "admin": True}).json()
    assert admin_http.delete(f"/api-keys/{tenant.admin_key_id}").status_code == 204
    assert admin_http.get("/api-keys").status_code == 401
    with httpx.Client(base_url=server.http_url, headers={"X-API-Key": second["secret"]}) as c:
        r = c.delete(f"/api-keys/{second['id']}")
        assert r.status_code == 422 and "last active admin key" in r.json()["errors"][0]["detail"]


def test_grpc_api_keys(stub, channel: grpc.Channel, tenant: Tenant) -> None:
    meta = md(tenant.admin_key)
    created = stub.CreateApiKey(pb.CreateApiKeyRequest(api_key=pb.ApiKey(name="grpc key", admin=False)), metadata=meta)
    assert created.id.startswith("key_") and created.HasField("secret") and not created.admin
    assert not created.HasField("revoked_at") and not created.HasField("last_used_at")
    listed = stub.ListApiKeys(pb.ListApiKeysRequest(limit=2), metadata=meta)
    assert [k.id for k in listed.data] == [created.id, tenant.admin_key_id] and listed.has_more
    assert not any(k.HasField("secret") for k in listed.data)
    rest = stub.ListApiKeys(pb.ListApiKeysRequest(starting_after=tenant.admin_key_id), metadata=meta)
    assert [k.id for k in rest.data] == [tenant.key_id] and not rest.has_more
    # The new key works over gRPC, then stops at once when revoked (again: no error).
    ref = reference_pb2_grpc.ReferenceServiceStub(channel)
    ref.ListProductTaxCodes(reference_pb2.ListProductTaxCodesRequest(limit=1), metadata=md(created.secret))
    stub.DeleteApiKey(pb.DeleteApiKeyRequest(key_id=created.id), metadata=meta)
    stub.DeleteApiKey(pb.DeleteApiKeyRequest(key_id=created.id), metadata=meta)
    err = call_error(ref.ListProductTaxCodes, reference_pb2.ListProductTaxCodesRequest(limit=1), md(created.secret))
    assert err.code == grpc.StatusCode.UNAUTHENTICATED and "revoked" in err.message
    err = call_error(stub.CreateApiKey, pb.CreateApiKeyRequest(api_key=pb.ApiKey()), meta)
    assert err.code == grpc.StatusCode.INVALID_ARGUMENT and err.violations[0][0] == "/name"
    err = call_error(stub.DeleteApiKey, pb.DeleteApiKeyRequest(key_id="key_nope"), meta)
    assert err.code == grpc.StatusCode.NOT_FOUND


def test_api_keys_are_isolated_between_organizations(server: LevyServer, stub, admin_http: httpx.Client,
                                                     tenant: Tenant, other_tenant: Tenant) -> None:
    assert admin_http.delete(f"/api-keys/{other_tenant.key_id}").status_code == 404
    err = call_error(stub.DeleteApiKey, pb.DeleteApiKeyRequest(key_id=other_tenant.key_id), md(tenant.admin_key))
    assert err.code == grpc.StatusCode.NOT_FOUND
    with httpx.Client(base_url=server.http_url, headers={"X-API-Key": other_tenant.key}) as c:
        assert c.get("/product-tax-codes", params={"limit": 1}).status_code == 200  # still works
    ids = {k["id"] for k in admin_http.get("/api-keys", params={"limit": 1000}).json()["data"]}
    assert ids == {tenant.key_id, tenant.admin_key_id}
