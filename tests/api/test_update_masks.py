"""Every update RPC reads "which fields were sent" the same way (issue 32), against
a real server on SQLite and PostgreSQL:

- gRPC: an ``update_mask`` path that is not a writable field of the resource is
  refused with INVALID_ARGUMENT, pointer ``/update_mask/paths/<index>``, and one
  message shape ("update_mask path 'x' is not a writable <what> field; writable
  fields: ..."); nothing changes. A known path still changes the field.
- REST: the gateway builds the mask from the JSON keys, so the same typo is an
  unknown property: 422 with the key's pointer; nothing changes. A known key
  still changes the field.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import grpc
import httpx
import pytest
from google.protobuf import field_mask_pb2
from google.protobuf.message import Message
from levyserver import Tenant
from levytest import call_error, md
from txn_api import line, register

from levy.v1 import customers_pb2 as cpb
from levy.v1 import (
    customers_pb2_grpc,
    events_pb2_grpc,
    filings_pb2_grpc,
    locations_pb2_grpc,
    organization_pb2_grpc,
    products_pb2_grpc,
    transactions_pb2_grpc,
)
from levy.v1 import events_pb2 as epb
from levy.v1 import filings_pb2 as fpb
from levy.v1 import locations_pb2 as lpb
from levy.v1 import organization_pb2 as opb
from levy.v1 import products_pb2 as ppb
from levy.v1 import transactions_pb2 as tpb

TYPO = "nmae"


def _created(r: httpx.Response) -> dict[str, Any]:
    assert r.status_code in (200, 201), r.text
    return r.json()


def _customer(c: httpx.Client) -> dict[str, Any]:
    return _created(c.post("/customers", json={"source_id": "c-" + uuid.uuid4().hex[:10]}))


@dataclass
class Case:
    """One update RPC: ``setup`` creates the resource and returns its REST path
    (for the update) and the path that reads it back; ``request`` builds the
    gRPC request with ``value`` set on ``field`` and the mask given."""

    name: str
    what: str  # the noun in the refusal
    writable: str  # the refusal's list of writable fields, as the message shows it
    stub: Callable[[grpc.Channel], Any]
    rpc: str
    setup: Callable[[httpx.Client], tuple[dict[str, Any], str, str]]
    rest_method: str
    field: str
    grpc_value: Any
    rest_value: Any
    request: Callable[[dict[str, Any], Any, list[str]], Message]


def _product(c: httpx.Client) -> tuple[dict[str, Any], str, str]:
    p = _created(c.post("/products", json={"source_id": "p-" + uuid.uuid4().hex[:8], "name": "Old"}))
    return p, f"/products/{p['id']}", f"/products/{p['id']}"


def _transaction(c: httpx.Client) -> tuple[dict[str, Any], str, str]:
    t = _created(c.post("/transactions", json={"type": "sale", "status": "draft", "reference_id": "old",
                                               "line_items": [line()]}))
    return t, f"/transactions/{t['id']}", f"/transactions/{t['id']}"


def _customer_case(c: httpx.Client) -> tuple[dict[str, Any], str, str]:
    cu = _customer(c)
    return cu, f"/customers/{cu['id']}", f"/customers/{cu['id']}"


def _certificate(c: httpx.Client) -> tuple[dict[str, Any], str, str]:
    cu = _customer(c)
    cert = _created(c.post(f"/customers/{cu['id']}/exemption-certificates",
                           json={"jurisdiction": "US-ST-CA", "exemption_type": "resale"}))
    # The list is the way to read a certificate back; the customer has one.
    return cert, f"/customers/{cu['id']}/exemption-certificates/{cert['id']}", \
        f"/customers/{cu['id']}/exemption-certificates"


def _overrides(c: httpx.Client) -> tuple[dict[str, Any], str, str]:
    cu = _customer(c)
    # The overrides are read back on the customer.
    return cu, f"/customers/{cu['id']}/exemption-overrides", f"/customers/{cu['id']}"


def _settings(c: httpx.Client) -> tuple[dict[str, Any], str, str]:
    return {}, "/organization/settings", "/organization/settings"


def _location(c: httpx.Client) -> tuple[dict[str, Any], str, str]:
    loc = _created(c.post("/organization/locations", json={
        "name": "Old", "effective_from": "2026-01-01",
        "address": {"line1": "901 Bagby St", "city": "Houston", "state": "TX", "postal_code": "77002"}}))
    return loc, f"/organization/locations/{loc['id']}", f"/organization/locations/{loc['id']}"


def _filing(c: httpx.Client) -> tuple[dict[str, Any], str, str]:
    register(c, "TX")
    f = _created(c.post("/filings", json={"jurisdiction": "US-ST-TX", "period_start": "2026-01-01",
                                          "period_end": "2026-01-31"}))
    assert f["status"] == "prepared"
    return f, f"/filings/{f['id']}", f"/filings/{f['id']}"


def _webhook(c: httpx.Client) -> tuple[dict[str, Any], str, str]:
    ep = _created(c.post("/webhook-endpoints", json={"url": "https://example.com/hook", "enabled_events": ["*"],
                                                     "description": "Old"}))
    ep.pop("secret")  # shown once, at creation
    return ep, f"/webhook-endpoints/{ep['id']}", f"/webhook-endpoints/{ep['id']}"


def _mask(paths: list[str]) -> field_mask_pb2.FieldMask:
    return field_mask_pb2.FieldMask(paths=paths)


CASES = [
    Case("product", "product",
         "source_id, source, source_account_id, name, description, source_category, tax_codes, source_updated_at",
         products_pb2_grpc.ProductServiceStub, "UpdateProduct", _product, "PATCH", "name", "Grpc", "Rest",
         lambda r, v, m: ppb.UpdateProductRequest(product_id=r["id"], product=ppb.Product(name=v), update_mask=_mask(m))),
    Case("transaction", "transaction",
         "status, currency, discount_amount, vendor_discount_amount, transaction_date, line_items, reference_id, "
         "tax_amount, tax_behavior, exchange_rate, exchange_rate_date",
         transactions_pb2_grpc.TransactionServiceStub, "UpdateTransaction", _transaction, "POST", "reference_id",
         "grpc-ref", "rest-ref",
         lambda r, v, m: tpb.UpdateTransactionRequest(id=r["id"], transaction=tpb.Transaction(reference_id=v),
                                                      update_mask=_mask(m))),
    Case("customer", "customer", "source_id, source, source_account_id, name, email, source_updated_at",
          customers_pb2_grpc.CustomerServiceStub, "UpdateCustomer", _customer_case,
         "PATCH", "name", "Grpc", "Rest",
         lambda r, v, m: cpb.UpdateCustomerRequest(customer_id=r["id"], customer=cpb.Customer(name=v),
                                                   update_mask=_mask(m))),
    Case("certificate", "certificate", "jurisdiction, exemption_type, status, starts_at, expires_at",
          organization_pb2_grpc.OrganizationServiceStub,
         "UpdateExemptionCertificate", _certificate, "PATCH", "status", "valid", "rejected",
         lambda r, v, m: opb.UpdateExemptionCertificateRequest(
             customer_id=r["customer_id"], certificate_id=r["id"], certificate=opb.ExemptionCertificate(status=v),
             update_mask=_mask(m))),
    Case("overrides", "exemption overrides", "exempt, resale, manufacturing",
         organization_pb2_grpc.OrganizationServiceStub, "UpdateExemptionOverrides", _overrides, "PATCH", "resale",
         True, False,
         lambda r, v, m: opb.UpdateExemptionOverridesRequest(
             customer_id=r["id"], overrides=cpb.ExemptionOverrides(resale=v), update_mask=_mask(m))),
    Case("settings", "organization settings",
         "name, default_tax_codes, exemption_management, certificate_treatment, filing_currencies, "
         "nexus_approaching_share",
         organization_pb2_grpc.OrganizationServiceStub, "UpdateOrganizationSettings", _settings, "PATCH", "name",
         "Grpc org", "Rest org",
         lambda r, v, m: opb.UpdateOrganizationSettingsRequest(settings=opb.OrganizationSettings(name=v),
                                                               update_mask=_mask(m))),
    Case("location", "location", "name, is_default, effective_from, effective_to, address",
         locations_pb2_grpc.LocationServiceStub, "UpdateLocation", _location, "PATCH", "name", "Grpc", "Rest",
         lambda r, v, m: lpb.UpdateLocationRequest(location_id=r["id"], location=lpb.BusinessLocation(name=v),
                                                   update_mask=_mask(m))),
    Case("webhook", "webhook endpoint", "url, enabled_events, description, enabled",
         events_pb2_grpc.WebhookServiceStub, "UpdateWebhookEndpoint", _webhook, "PATCH", "description", "Grpc",
         "Rest",
         lambda r, v, m: epb.UpdateWebhookEndpointRequest(
             endpoint_id=r["id"], webhook_endpoint=epb.WebhookEndpoint(description=v), update_mask=_mask(m))),
    # A filing changes only by filing it; its other fields are refused with their own reason.
    Case("filing", "filing", "status", filings_pb2_grpc.FilingServiceStub, "UpdateFiling", _filing, "POST",
         "status", "filed", "filed",
         lambda r, v, m: fpb.UpdateFilingRequest(filing_id=r["id"], filing=fpb.Filing(status=v),
                                                 update_mask=_mask(m))),
]


def _read(c: httpx.Client, path: str) -> dict[str, Any]:
    r = c.get(path)
    assert r.status_code == 200, r.text
    return r.json()


def _value(read: dict[str, Any], case: Case) -> Any:
    if case.name == "certificate":
        return read["data"][0][case.field]
    if case.name == "overrides":
        return read["exemption"]["overrides"][case.field]
    return read[case.field]


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_unknown_mask_path_refused_known_path_works(admin_http: httpx.Client, channel: grpc.Channel, tenant: Tenant,
                                                    case: Case) -> None:
    resource, path, read_path = case.setup(admin_http)
    before = _read(admin_http, read_path)
    call = getattr(case.stub(channel), case.rpc)
    m = md(tenant.admin_key)

    # gRPC: the known field and a typo; the typo (index 1) refuses the whole update.
    err = call_error(call, case.request(resource, case.grpc_value, [case.field, TYPO]), m)
    assert err.code == grpc.StatusCode.INVALID_ARGUMENT, err
    assert err.violations[0][0] == "/update_mask/paths/1", err.violations
    detail = err.violations[0][1]
    assert detail.startswith(f"update_mask path '{TYPO}' is not a writable {case.what} field; writable fields: ")
    assert detail.endswith(f"writable fields: {case.writable}"), detail
    assert err.errors[0]["source"]["pointer"] == "/update_mask/paths/1"

    # REST: the typo is an unknown property of the body.
    r = admin_http.request(case.rest_method, path, json={case.field: case.rest_value, TYPO: "x"})
    assert r.status_code == 422, r.text
    assert [e["source"]["pointer"] for e in r.json()["errors"]] == [f"/{TYPO}"]
    assert _read(admin_http, read_path) == before  # nothing changed

    # A known path changes the field, over gRPC then over REST.
    call(case.request(resource, case.grpc_value, [case.field]), metadata=m)
    assert _value(_read(admin_http, read_path), case) == case.grpc_value
    r = admin_http.request(case.rest_method, path, json={case.field: case.rest_value})
    assert r.status_code == 200, r.text
    assert _value(_read(admin_http, read_path), case) == case.rest_value


def test_customer_read_only_mask_path_refused(admin_http: httpx.Client, channel: grpc.Channel,
                                              tenant: Tenant) -> None:
    """A read-only field named in the mask (``id``) is no writable field: refused, not skipped."""
    cu = _customer(admin_http)
    before = _read(admin_http, f"/customers/{cu['id']}")
    stub = customers_pb2_grpc.CustomerServiceStub(channel)
    err = call_error(stub.UpdateCustomer, cpb.UpdateCustomerRequest(
        customer_id=cu["id"], customer=cpb.Customer(name="X"), update_mask=_mask(["id"])), md(tenant.admin_key))
    assert err.code == grpc.StatusCode.INVALID_ARGUMENT
    assert err.violations[0][0] == "/update_mask/paths/0"
    assert _read(admin_http, f"/customers/{cu['id']}") == before
