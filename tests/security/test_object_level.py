"""OWASP API1 (object-level authorization) for the resources that exist:
every operation addressing another organization's customer, certificate or
product (and business location) answers 404 / NOT_FOUND over REST and gRPC, with the shared helper
``security_helpers.assert_other_tenant_gets_404`` (add each resource here as
it lands: transactions, filings)."""

from __future__ import annotations

from collections.abc import Iterator

import grpc
import httpx
import pytest

from levyserver import LevyServer, Tenant
from levy.app.registry import methods
from security_helpers import assert_other_tenant_gets_404

_VAR_CUSTOMER = "{customer_id}"


@pytest.fixture
def client_for(server: LevyServer) -> Iterator:  # type: ignore[type-arg]
    clients: list[httpx.Client] = []

    def make(key: str) -> httpx.Client:
        c = httpx.Client(base_url=server.http_url, headers={"X-API-Key": key}, timeout=30)
        clients.append(c)
        return c

    yield make
    for c in clients:
        c.close()


def _ops(path_prefix: str, var: str) -> list:  # type: ignore[type-arg]
    return [m for m in methods() if m.http_path.startswith(path_prefix) and var in m.http_path]


def test_customers_and_certificates_of_another_organization_are_404(
        admin_http: httpx.Client, tenant: Tenant, other_tenant: Tenant, client_for, channel: grpc.Channel) -> None:  # type: ignore[no-untyped-def]
    cust = admin_http.post("/customers", json={"source_id": "ola-1", "name": "Owner's customer"})
    assert cust.status_code == 201, cust.text
    cid = cust.json()["id"]
    cert = admin_http.post(f"/customers/{cid}/exemption-certificates",
                           json={"jurisdiction": "US-ST-CA", "exemption_type": "resale"})
    assert cert.status_code == 201, cert.text
    ids = {"customer_id": cid, "certificate_id": cert.json()["id"]}
    ops = [m for m in _ops("/customers/", _VAR_CUSTOMER) if m.name != "MergeCustomer"]
    assert {"GetCustomer", "UpdateCustomer", "DeleteCustomer", "RestoreCustomer", "UpdateExemptionOverrides",
            "CreateExemptionCertificate", "ListExemptionCertificates", "UpdateExemptionCertificate",
            "DeleteExemptionCertificate"} <= {m.name for m in ops}
    bodies = {"CreateExemptionCertificate": {"jurisdiction": "US-ST-CA", "exemption_type": "resale"},
              "UpdateCustomer": {"name": "stolen"}, "UpdateExemptionOverrides": {"exempt": True},
              "UpdateExemptionCertificate": {"status": "revoked"}}
    assert_other_tenant_gets_404(tenant, other_tenant, client_for, channel, ids, ops, bodies=bodies,
                                 owner_values=["Owner's customer", "US-ST-CA"])
    # Nothing changed for the owner, and the intruder's lists do not show it.
    again = admin_http.get(f"/customers/{cid}")
    assert again.status_code == 200 and again.json()["name"] == "Owner's customer"
    assert admin_http.get(f"/customers/{cid}/exemption-certificates").json()["data"]
    other = client_for(other_tenant.admin_key)
    assert cid not in other.get("/customers", params={"limit": 1000}).text
    # A merge into another organization's customer is refused too.
    mine = other.post("/customers", json={"source_id": "ola-2"}).json()["id"]
    r = other.post(f"/customers/{mine}/merge", json={"into_customer_id": cid})
    assert r.status_code in (404, 422), r.text
    assert cid not in r.text or r.json()["errors"][0]["code"] != "conflict"
    # Batch upserts of the same triple create the intruder's own customer.
    r = other.post("/customers/batch", json={"data": [{"source_id": "ola-1", "name": "overwrite"}]})
    assert r.status_code == 200 and r.json()["data"][0]["status"] == "created", r.text
    assert admin_http.get(f"/customers/{cid}").json()["name"] == "Owner's customer"


def test_products_of_another_organization_are_404(
        admin_http: httpx.Client, tenant: Tenant, other_tenant: Tenant, client_for, channel: grpc.Channel) -> None:  # type: ignore[no-untyped-def]
    prd = admin_http.post("/products", json={"source_id": "olp-1", "name": "Owner's product",
                                             "tax_codes": ["GENERAL.TANGIBLE.GOODS"]})
    assert prd.status_code == 201, prd.text
    pid = prd.json()["id"]
    ops = _ops("/products/", "{product_id}")
    assert {m.name for m in ops} == {"GetProduct", "UpdateProduct", "DeleteProduct"}
    assert_other_tenant_gets_404(tenant, other_tenant, client_for, channel, {"product_id": pid}, ops,
                                 bodies={"UpdateProduct": {"name": "stolen"}}, owner_values=["Owner's product"])
    assert admin_http.get(f"/products/{pid}").json()["name"] == "Owner's product"
    assert pid not in client_for(other_tenant.admin_key).get("/products", params={"limit": 1000}).text


def test_transactions_of_another_organization_are_404(
        admin_http: httpx.Client, tenant: Tenant, other_tenant: Tenant, client_for, channel: grpc.Channel) -> None:  # type: ignore[no-untyped-def]
    ref = "olt-ref-1"
    txn = admin_http.post("/transactions", json={
        "type": "sale", "status": "finalized", "reference_id": ref, "transaction_date": "2026-03-15T00:00:00Z",
        "line_items": [{"id": "owner-line", "unit_price": "12345", "customer": {"address": {"state": "TX"}}}]})
    assert txn.status_code == 200, txn.text
    tid = txn.json()["id"]
    ops = _ops("/transactions/", "{id}")
    assert {m.name for m in ops} == {"GetTransaction", "UpdateTransaction"}
    assert_other_tenant_gets_404(tenant, other_tenant, client_for, channel, {"id": tid}, ops,
                                 bodies={"UpdateTransaction": {"status": "void"}},
                                 owner_values=["owner-line", "12345"])
    assert admin_http.get(f"/transactions/{tid}").json()["status"] == "finalized"
    other = client_for(other_tenant.admin_key)
    assert tid not in other.get("/transactions", params={"limit": 1000}).text
    # Crediting another organization's sale by id or reference: its parent does not exist here.
    for parent in ({"parent_transaction_id": tid}, {"parent_reference_id": ref}):
        r = other.post("/transactions", json={"type": "credit", "status": "finalized", **parent})
        assert r.status_code == 422 and "12345" not in r.text, r.text
    # The same reference_id is free in another organization.
    r = other.post("/transactions", json={
        "type": "sale", "status": "draft", "reference_id": ref,
        "line_items": [{"id": "x", "unit_price": "1", "customer": {"address": {"state": "TX"}}}]})
    assert r.status_code == 200, r.text


def test_business_locations_of_another_organization_are_404(
        admin_http: httpx.Client, tenant: Tenant, other_tenant: Tenant, client_for, channel: grpc.Channel) -> None:  # type: ignore[no-untyped-def]
    loc = admin_http.post("/organization/locations", json={
        "name": "Owner's warehouse", "effective_from": "2026-01-01", "is_default": True,
        "address": {"line1": "100 Congress Ave", "city": "Austin", "state": "TX", "postal_code": "78701"}})
    assert loc.status_code == 201, loc.text
    lid = loc.json()["id"]
    ops = _ops("/organization/locations/", "{location_id}")
    assert {m.name for m in ops} == {"GetLocation", "UpdateLocation", "ArchiveLocation", "UnarchiveLocation"}
    assert_other_tenant_gets_404(tenant, other_tenant, client_for, channel, {"location_id": lid}, ops,
                                 bodies={"UpdateLocation": {"name": "stolen"}},
                                 owner_values=["Owner's warehouse", "100 Congress Ave"])
    assert admin_http.get(f"/organization/locations/{lid}").json() == loc.json()
    assert lid not in client_for(other_tenant.admin_key).get("/organization/locations",
                                                             params={"include_archived": "true"}).text
