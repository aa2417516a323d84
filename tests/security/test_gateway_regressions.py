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
        assert r.status_code != 405, (method, path, r.text)
        assert r.status_code == 501, (method, path, r.text)  # routed to the RPC, not implemented yet


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
