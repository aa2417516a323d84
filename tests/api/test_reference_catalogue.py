"""Reference data (spec 2.3, 2.4, 4.4) through REST and gRPC: paging by code,
the ``ptc`` filter and its edge cases."""

from __future__ import annotations

import grpc
import httpx
import pytest

from levyserver import Tenant
from levytest import call_error, md
from levy.store.reference_data import catalogue as load_catalogue
from levy.v1 import reference_pb2, reference_pb2_grpc


def applying_to(top: str) -> list[str]:
    return [a.code for a in load_catalogue().attributes if not a.ptcs or top in a.ptcs]


def rest_attribute_codes(http: httpx.Client, **params: object) -> list[str]:
    seen: list[str] = []
    after = None
    while True:
        r = http.get("/product-attributes", params={**params, **({"starting_after": after} if after else {})})
        assert r.status_code == 200, r.text
        seen += [a["code"] for a in r.json()["data"]]
        if not r.json()["has_more"]:
            return seen
        after = seen[-1]


def test_catalogue_has_the_promised_breadth(http: httpx.Client) -> None:
    codes = [c["code"] for c in http.get("/product-tax-codes", params={"limit": 1000}).json()["data"]]
    assert len(codes) >= 80 and "SALES_TAX" in codes
    attrs = http.get("/product-attributes", params={"limit": 1000}).json()["data"]
    assert len(attrs) >= 12
    assert {"_DOWNLOADED", "_LOAD_AND_LEAVE", "_B2B", "_RESALE"} <= {a["code"] for a in attrs}


def test_rest_tax_codes_starting_after_any_string(http: httpx.Client) -> None:
    r = http.get("/product-tax-codes", params={"starting_after": "SOFTWARE", "limit": 2})
    data = r.json()["data"]
    assert [d["code"] for d in data] == [c for c in sorted(c.code for c in load_catalogue().tax_codes)
                                         if c > "SOFTWARE"][:2]
    last = sorted(c.code for c in load_catalogue().tax_codes)[-1]
    r = http.get("/product-tax-codes", params={"starting_after": last})
    assert r.json() == {"data": [], "has_more": False}


def test_rest_attributes_page_by_code_with_ptc(http: httpx.Client) -> None:
    assert rest_attribute_codes(http, limit=2, ptc="SOFTWARE.SAAS.GENERAL") == applying_to("SOFTWARE")
    assert rest_attribute_codes(http, limit=3) == sorted(a.code for a in load_catalogue().attributes)


@pytest.mark.parametrize("ptc, top", [
    ("SOFTWARE", "SOFTWARE"),                          # a top-level category
    ("SHIPPING.DELIVERY", "SHIPPING"),                 # a category prefix
    ("DIGITAL.EBOOKS.GENERAL._DOWNLOADED", "DIGITAL"),  # a full code with attributes
    ("FOOD.GROCERY.GENERAL", "FOOD"),
])
def test_rest_ptc_forms(http: httpx.Client, ptc: str, top: str) -> None:
    assert rest_attribute_codes(http, ptc=ptc, limit=1000) == applying_to(top)


def test_rest_ptc_sales_tax_takes_no_attributes(http: httpx.Client) -> None:
    assert http.get("/product-attributes", params={"ptc": "SALES_TAX"}).json() == {"data": [], "has_more": False}


@pytest.mark.parametrize("ptc, fragment", [
    ("software.saas.general", "case-sensitive"),
    ("NOT.A.CODE", "unknown tax code"),
    ("CLOTHING.APPAREL.GENERAL._DOWNLOADED", "does not apply"),
    ("_B2B", "names no category path"),
    ("SALES_TAX._B2B", "never takes attributes"),
])
def test_rest_bad_ptc_is_422_on_the_parameter(http: httpx.Client, ptc: str, fragment: str) -> None:
    r = http.get("/product-attributes", params={"ptc": ptc})
    assert r.status_code == 422
    (e,) = r.json()["errors"]
    assert e["code"] == "validation_error" and e["source"]["parameter"] == "ptc"
    assert fragment in e["detail"]


def test_grpc_attributes_with_ptc_page_by_code(channel: grpc.Channel, tenant: Tenant) -> None:
    s = reference_pb2_grpc.ReferenceServiceStub(channel)
    seen: list[str] = []
    req = reference_pb2.ListProductAttributesRequest(limit=2, ptc="DIGITAL.STREAMING.VIDEO")
    while True:
        resp = s.ListProductAttributes(req, metadata=md(tenant.key))
        seen += [a.code for a in resp.data]
        for a in resp.data:
            assert a.name and a.description and a.group.key
            assert not a.ptcs or "DIGITAL" in a.ptcs
        if not resp.has_more:
            break
        req = reference_pb2.ListProductAttributesRequest(limit=2, ptc="DIGITAL.STREAMING.VIDEO",
                                                         starting_after=seen[-1])
    assert seen == applying_to("DIGITAL")
    full = s.ListProductAttributes(reference_pb2.ListProductAttributesRequest(limit=1000), metadata=md(tenant.key))
    assert [a.code for a in full.data] == sorted(a.code for a in load_catalogue().attributes)
    b2b = next(a for a in full.data if a.code == "_B2B")
    assert b2b.group.exclusive and list(b2b.ptcs) == []
    empty = s.ListProductAttributes(reference_pb2.ListProductAttributesRequest(ptc="SALES_TAX"),
                                    metadata=md(tenant.key))
    assert list(empty.data) == [] and not empty.has_more
    err = call_error(s.ListProductAttributes, reference_pb2.ListProductAttributesRequest(ptc="sales_tax"),
                     md(tenant.key))
    assert err.code == grpc.StatusCode.INVALID_ARGUMENT and err.violations[0][0] == "ptc"
    err = call_error(s.ListProductAttributes, reference_pb2.ListProductAttributesRequest(limit=1001),
                     md(tenant.key))
    assert err.code == grpc.StatusCode.INVALID_ARGUMENT


def test_grpc_tax_codes_limit_1000_and_description(channel: grpc.Channel, tenant: Tenant) -> None:
    s = reference_pb2_grpc.ReferenceServiceStub(channel)
    resp = s.ListProductTaxCodes(reference_pb2.ListProductTaxCodesRequest(limit=1000), metadata=md(tenant.key))
    assert [c.code for c in resp.data] == sorted(c.code for c in load_catalogue().tax_codes) and not resp.has_more
    assert all(c.description for c in resp.data)
