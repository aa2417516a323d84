"""Customer administration (issue 5, customer side): exemption certificates,
the read-only `exemption` snapshot, overrides, restore and merge; admin keys
only; REST and gRPC against a real server on SQLite and PostgreSQL."""

from __future__ import annotations

import uuid
from datetime import datetime, timedelta, timezone
from typing import Any

import grpc
import httpx
import pytest
from google.protobuf import field_mask_pb2

from levyserver import LevyServer, Tenant
from levytest import call_error, md
from levy.v1 import customers_pb2 as cpb
from levy.v1 import organization_pb2 as pb
from levy.v1 import organization_pb2_grpc

# The server's calendar is UTC. Dates that must fall on one side of today sit two days away,
# so a run that crosses midnight between creating a certificate and reading it back still holds.
TODAY = datetime.now(timezone.utc).date()
CERT_KEYS = {"id", "customer_id", "jurisdiction", "exemption_type", "status", "starts_at", "expires_at",
             "created_at", "updated_at"}


def day(offset: int) -> str:
    return (TODAY + timedelta(days=offset)).isoformat()


def customer(admin_http: httpx.Client) -> dict[str, Any]:
    r = admin_http.post("/customers", json={"source_id": "c-" + uuid.uuid4().hex[:10]})
    assert r.status_code == 201, r.text
    return r.json()


def add(admin_http: httpx.Client, cid: str, **body: Any) -> dict[str, Any]:
    body.setdefault("jurisdiction", "US-ST-CA")
    body.setdefault("exemption_type", "resale")
    r = admin_http.post(f"/customers/{cid}/exemption-certificates", json=body)
    assert r.status_code == 201, r.text
    return r.json()


@pytest.fixture
def ostub(channel: grpc.Channel) -> organization_pb2_grpc.OrganizationServiceStub:
    return organization_pb2_grpc.OrganizationServiceStub(channel)


# ------------------------------------------------------------------ certificates


def test_certificate_crud(admin_http: httpx.Client) -> None:
    c = customer(admin_http)
    cert = add(admin_http, c["id"], jurisdiction="us-st-ny", starts_at=day(-10), expires_at=day(10))
    assert set(cert) == CERT_KEYS
    assert cert["id"].startswith("cexc_") and cert["customer_id"] == c["id"]
    assert (cert["jurisdiction"], cert["exemption_type"], cert["status"]) == ("US-ST-NY", "resale", "in_review")
    assert (cert["starts_at"], cert["expires_at"]) == (day(-10), day(10))
    second = add(admin_http, c["id"], jurisdiction="US-ST-DC", exemption_type="government", status="rejected")
    r = admin_http.get(f"/customers/{c['id']}/exemption-certificates", params={"limit": 1})
    assert r.status_code == 200
    assert [x["id"] for x in r.json()["data"]] == [second["id"]] and r.json()["has_more"] is True
    r = admin_http.get(f"/customers/{c['id']}/exemption-certificates",
                       params={"starting_after": second["id"]})
    assert [x["id"] for x in r.json()["data"]] == [cert["id"]] and r.json()["has_more"] is False
    r = admin_http.patch(f"/customers/{c['id']}/exemption-certificates/{cert['id']}",
                         json={"status": "valid", "expires_at": None})
    assert r.status_code == 200, r.text
    assert (r.json()["status"], r.json()["expires_at"]) == ("valid", day(10))
    r = admin_http.delete(f"/customers/{c['id']}/exemption-certificates/{cert['id']}")
    assert r.status_code == 204 and r.content == b""
    assert admin_http.delete(f"/customers/{c['id']}/exemption-certificates/{cert['id']}").status_code == 404
    ids = [x["id"] for x in admin_http.get(f"/customers/{c['id']}/exemption-certificates").json()["data"]]
    assert ids == [second["id"]]


@pytest.mark.parametrize(
    "body, pointer, fragment",
    [
        ({"jurisdiction": "US-ST-XX"}, "/jurisdiction", "not a US state"),
        ({"jurisdiction": "California"}, "/jurisdiction", "US-ST-CA"),
        ({"jurisdiction": "CA-ST-ON"}, "/jurisdiction", "not supported"),
        ({"exemption_type": "charity"}, "/exemption_type", "nonprofit"),
        ({"status": "approved"}, "/status", "in_review"),
        ({"starts_at": "2026-13-01"}, "/starts_at", "YYYY-MM-DD"),
        ({"starts_at": "2026-02-01", "expires_at": "2026-01-01"}, "/expires_at", "after"),
        ({"jurisdiction": None}, "/jurisdiction", "required"),
        ({"id": "cexc_x"}, "/id", "read-only"),
    ],
)
def test_certificate_validation(admin_http: httpx.Client, body: dict[str, Any], pointer: str, fragment: str) -> None:
    c = customer(admin_http)
    full = {"jurisdiction": "US-ST-CA", "exemption_type": "resale", **body}
    r = admin_http.post(f"/customers/{c['id']}/exemption-certificates", json=full)
    assert r.status_code == 422, r.text
    (err,) = r.json()["errors"]
    assert err["source"]["pointer"] == pointer and fragment in err["detail"]


def test_patch_dates_are_checked_against_the_stored_ones(admin_http: httpx.Client) -> None:
    c = customer(admin_http)
    cert = add(admin_http, c["id"], starts_at="2026-01-10", expires_at="2026-12-31")
    r = admin_http.patch(f"/customers/{c['id']}/exemption-certificates/{cert['id']}", json={"expires_at": "2026-01-01"})
    assert r.status_code == 422 and r.json()["errors"][0]["source"]["pointer"] == "/expires_at"


def test_certificates_need_admin_key_and_an_active_customer_of_the_org(
    http: httpx.Client, admin_http: httpx.Client, server: LevyServer, other_tenant: Tenant
) -> None:
    c = customer(admin_http)
    r = http.post(f"/customers/{c['id']}/exemption-certificates", json={"jurisdiction": "US-ST-CA",
                                                                         "exemption_type": "resale"})
    assert r.status_code == 403 and r.json()["errors"][0]["code"] == "permission_error"
    assert http.get(f"/customers/{c['id']}/exemption-certificates").status_code == 403
    cert = add(admin_http, c["id"])
    with httpx.Client(base_url=server.http_url, headers={"X-API-Key": other_tenant.admin_key}) as other:
        assert other.get(f"/customers/{c['id']}/exemption-certificates").status_code == 404
        assert other.patch(f"/customers/{c['id']}/exemption-certificates/{cert['id']}",
                           json={"status": "valid"}).status_code == 404
        assert other.delete(f"/customers/{c['id']}/exemption-certificates/{cert['id']}").status_code == 404
    d = customer(admin_http)
    # A certificate is reached only through its own customer.
    assert admin_http.patch(f"/customers/{d['id']}/exemption-certificates/{cert['id']}",
                            json={"status": "valid"}).status_code == 404
    assert admin_http.delete(f"/customers/{d['id']}").status_code == 204
    r = admin_http.post(f"/customers/{d['id']}/exemption-certificates", json={"jurisdiction": "US-ST-CA",
                                                                               "exemption_type": "resale"})
    assert r.status_code == 404


# ------------------------------------------------------------------ the exemption snapshot


def test_exemption_shows_only_current_valid_certificates_one_per_jurisdiction(admin_http: httpx.Client,
                                                                             http: httpx.Client) -> None:
    c = customer(admin_http)
    cid = c["id"]
    add(admin_http, cid, jurisdiction="US-ST-CA", status="in_review")
    add(admin_http, cid, jurisdiction="US-ST-CA", status="rejected")
    add(admin_http, cid, jurisdiction="US-ST-NY", status="valid", expires_at=day(-2))  # expired by date
    add(admin_http, cid, jurisdiction="US-ST-NY", status="valid", starts_at=day(2))  # not started
    add(admin_http, cid, jurisdiction="US-ST-NY", status="expired")
    tx_short = add(admin_http, cid, jurisdiction="US-ST-TX", status="valid", starts_at=day(-5), expires_at=day(30))
    tx_long = add(admin_http, cid, jurisdiction="US-ST-TX", status="valid", starts_at=day(-5), expires_at=day(300),
                  exemption_type="manufacturing")
    add(admin_http, cid, jurisdiction="US-ST-TX", status="valid", starts_at=day(-5), expires_at=day(100))
    wa = add(admin_http, cid, jurisdiction="US-ST-WA", status="valid")
    assert tx_short["id"] != tx_long["id"]
    ex = http.get(f"/customers/{cid}").json()["exemption"]
    assert ex["overrides"] == {"exempt": False, "resale": False, "manufacturing": False}
    assert ex["updated_at"] is not None
    assert ex["jurisdictions"] == [
        {"jurisdiction": "US-ST-TX", "jurisdiction_name": "Texas", "exemption_type": "manufacturing",
         "status": "valid", "starts_at": day(-5), "expires_at": day(300), "certificate_id": tx_long["id"]},
        {"jurisdiction": "US-ST-WA", "jurisdiction_name": "Washington", "exemption_type": "resale",
         "status": "valid", "starts_at": None, "expires_at": None, "certificate_id": wa["id"]},
    ]
    # Approving the CA certificate makes it appear.
    ca = admin_http.get(f"/customers/{cid}/exemption-certificates", params={"limit": 1000}).json()["data"]
    in_review = next(x for x in ca if x["jurisdiction"] == "US-ST-CA" and x["status"] == "in_review")
    admin_http.patch(f"/customers/{cid}/exemption-certificates/{in_review['id']}", json={"status": "valid"})
    rows = http.get(f"/customers/{cid}").json()["exemption"]["jurisdictions"]
    assert [r["jurisdiction"] for r in rows] == ["US-ST-CA", "US-ST-TX", "US-ST-WA"]
    assert rows[0]["jurisdiction_name"] == "California"


def test_overrides_partial_update(admin_http: httpx.Client, http: httpx.Client) -> None:
    c = customer(admin_http)
    r = admin_http.patch(f"/customers/{c['id']}/exemption-overrides", json={"resale": True})
    assert r.status_code == 200, r.text
    assert r.json() == {"exempt": False, "resale": True, "manufacturing": False}
    r = admin_http.patch(f"/customers/{c['id']}/exemption-overrides", json={"exempt": True, "resale": None})
    assert r.json() == {"exempt": True, "resale": True, "manufacturing": False}
    ex = http.get(f"/customers/{c['id']}").json()["exemption"]
    assert ex["overrides"] == {"exempt": True, "resale": True, "manufacturing": False}
    assert ex["updated_at"] is not None
    r = admin_http.patch(f"/customers/{c['id']}/exemption-overrides", json={"exempt": "yes"})
    assert r.status_code == 422 and r.json()["errors"][0]["source"]["pointer"] == "/exempt"
    assert http.patch(f"/customers/{c['id']}/exemption-overrides", json={"exempt": True}).status_code == 403


# ------------------------------------------------------------------ delete / restore / merge


def test_delete_removes_certificates_and_restore_does_not_bring_them_back(admin_http: httpx.Client) -> None:
    c = customer(admin_http)
    add(admin_http, c["id"], status="valid")
    assert admin_http.delete(f"/customers/{c['id']}").status_code == 204
    assert c["id"] not in [x["id"] for x in admin_http.get("/customers", params={"limit": 1000}).json()["data"]]
    r = admin_http.post(f"/customers/{c['id']}/restore")
    assert r.status_code == 200, r.text
    assert r.json()["id"] == c["id"] and r.json()["source_id"] == c["source_id"]
    assert c["id"] in [x["id"] for x in admin_http.get("/customers", params={"limit": 1000}).json()["data"]]
    assert admin_http.get(f"/customers/{c['id']}").json()["exemption"]["jurisdictions"] == []
    assert admin_http.get(f"/customers/{c['id']}/exemption-certificates").json()["data"] == []
    r = admin_http.post(f"/customers/{c['id']}/restore")
    assert r.status_code == 422 and "not deleted" in r.json()["errors"][0]["detail"]
    assert admin_http.post("/customers/cust_00000000000000000000000000/restore").status_code == 404


def test_restore_needs_admin(http: httpx.Client, admin_http: httpx.Client) -> None:
    c = customer(admin_http)
    admin_http.delete(f"/customers/{c['id']}")
    assert http.post(f"/customers/{c['id']}/restore").status_code == 403


def test_merge_rules(admin_http: httpx.Client, http: httpx.Client) -> None:
    a, b, c, gone = (customer(admin_http) for _ in range(4))
    admin_http.delete(f"/customers/{gone['id']}")

    def merge(src: str, body: dict[str, Any]) -> httpx.Response:
        return admin_http.post(f"/customers/{src}/merge", json=body)

    r = merge(a["id"], {})
    assert r.status_code == 422 and r.json()["errors"][0]["code"] == "validation_required_field"
    r = merge(a["id"], {"into_customer_id": a["id"]})
    assert r.status_code == 422 and "itself" in r.json()["errors"][0]["detail"]
    r = merge(a["id"], {"into_customer_id": gone["id"]})
    assert r.status_code == 422 and "deleted" in r.json()["errors"][0]["detail"]
    r = merge(a["id"], {"into_customer_id": "cust_00000000000000000000000000"})
    assert r.status_code == 404
    r = merge(a["id"], {"into_customer_id": b["id"]})
    assert r.status_code == 200, r.text
    assert r.json()["merged_into_customer_id"] == b["id"]
    # A merged customer stays readable and listed.
    assert http.get(f"/customers/{a['id']}").json()["merged_into_customer_id"] == b["id"]
    r = merge(a["id"], {"into_customer_id": c["id"]})
    assert r.status_code == 422 and "already merged" in r.json()["errors"][0]["detail"]
    r = merge(c["id"], {"into_customer_id": a["id"]})
    assert r.status_code == 422 and "itself merged" in r.json()["errors"][0]["detail"]
    assert http.post(f"/customers/{c['id']}/merge", json={"into_customer_id": b["id"]}).status_code == 403
    r = merge(c["id"], {"into_customer_id": b["id"], "extra": 1})
    assert r.status_code == 422 and r.json()["errors"][0]["source"]["pointer"] == "/extra"


def test_merge_across_organizations_is_404(admin_http: httpx.Client, server: LevyServer,
                                           other_tenant: Tenant) -> None:
    a = customer(admin_http)
    with httpx.Client(base_url=server.http_url, headers={"X-API-Key": other_tenant.admin_key}) as other:
        b = customer(other)
        assert other.post(f"/customers/{b['id']}/merge", json={"into_customer_id": a["id"]}).status_code == 404
        assert other.post(f"/customers/{a['id']}/merge", json={"into_customer_id": b["id"]}).status_code == 404


# ------------------------------------------------------------------ gRPC


def test_grpc_admin_operations(ostub: organization_pb2_grpc.OrganizationServiceStub, channel: grpc.Channel,
                               tenant: Tenant) -> None:
    from levy.v1 import customers_pb2_grpc

    cstub = customers_pb2_grpc.CustomerServiceStub(channel)
    m = md(tenant.admin_key)
    a = cstub.CreateCustomer(cpb.CreateCustomerRequest(customer=cpb.Customer(source_id="g-" + uuid.uuid4().hex)),
                             metadata=m)
    b = cstub.CreateCustomer(cpb.CreateCustomerRequest(customer=cpb.Customer(source_id="g-" + uuid.uuid4().hex)),
                             metadata=m)
    cert = ostub.CreateExemptionCertificate(pb.CreateExemptionCertificateRequest(
        customer_id=a.id, certificate=pb.ExemptionCertificate(jurisdiction="US-ST-OH", exemption_type="nonprofit",
                                                              status="valid")), metadata=m)
    assert cert.id.startswith("cexc_") and cert.status == "valid" and not cert.HasField("starts_at")
    err = call_error(ostub.CreateExemptionCertificate, pb.CreateExemptionCertificateRequest(
        customer_id=a.id, certificate=pb.ExemptionCertificate(jurisdiction="US-ST-ZZ", exemption_type="resale")), m)
    assert err.code == grpc.StatusCode.INVALID_ARGUMENT and err.violations[0][0] == "/jurisdiction"
    err = call_error(ostub.ListExemptionCertificates, pb.ListExemptionCertificatesRequest(customer_id=a.id),
                     md(tenant.key))
    assert err.code == grpc.StatusCode.PERMISSION_DENIED
    page = ostub.ListExemptionCertificates(pb.ListExemptionCertificatesRequest(customer_id=a.id), metadata=m)
    assert [c.id for c in page.data] == [cert.id]
    upd = ostub.UpdateExemptionCertificate(pb.UpdateExemptionCertificateRequest(
        customer_id=a.id, certificate_id=cert.id, certificate=pb.ExemptionCertificate(expires_at=day(5))), metadata=m)
    assert upd.expires_at == day(5) and upd.status == "valid"
    got = cstub.GetCustomer(cpb.GetCustomerRequest(customer_id=a.id), metadata=m)
    assert [(j.jurisdiction, j.jurisdiction_name, j.certificate_id) for j in got.exemption.jurisdictions] == [
        ("US-ST-OH", "Ohio", cert.id)]
    ov = ostub.UpdateExemptionOverrides(pb.UpdateExemptionOverridesRequest(
        customer_id=a.id, overrides=cpb.ExemptionOverrides(manufacturing=True)), metadata=m)
    assert (ov.exempt, ov.resale, ov.manufacturing) == (False, False, True)
    # Masked but unset: keeps the current value.
    ov = ostub.UpdateExemptionOverrides(pb.UpdateExemptionOverridesRequest(
        customer_id=a.id, overrides=cpb.ExemptionOverrides(exempt=True),
        update_mask=field_mask_pb2.FieldMask(paths=["exempt", "manufacturing"])), metadata=m)
    assert (ov.exempt, ov.resale, ov.manufacturing) == (True, False, True)
    ostub.DeleteExemptionCertificate(pb.DeleteExemptionCertificateRequest(customer_id=a.id, certificate_id=cert.id),
                                     metadata=m)
    merged = ostub.MergeCustomer(pb.MergeCustomerRequest(customer_id=a.id, into_customer_id=b.id), metadata=m)
    assert merged.merged_into_customer_id == b.id
    err = call_error(ostub.MergeCustomer, pb.MergeCustomerRequest(customer_id=b.id, into_customer_id=b.id), m)
    assert err.code == grpc.StatusCode.FAILED_PRECONDITION
    err = call_error(ostub.RestoreCustomer, pb.RestoreCustomerRequest(customer_id=b.id), m)
    assert err.code == grpc.StatusCode.FAILED_PRECONDITION
    cstub.DeleteCustomer(cpb.DeleteCustomerRequest(customer_id=b.id), metadata=m)
    restored = ostub.RestoreCustomer(pb.RestoreCustomerRequest(customer_id=b.id), metadata=m)
    assert restored.id == b.id
    assert cstub.GetCustomer(cpb.GetCustomerRequest(customer_id=b.id), metadata=m).id == b.id
