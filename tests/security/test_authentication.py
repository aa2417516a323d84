"""OWASP API2 (broken authentication) and API5 (function-level
authorization), on every operation of the registry over REST and gRPC."""

from __future__ import annotations

import grpc
import httpx
import pytest

from levyserver import LevyServer, Tenant
from levytest import md
from security_helpers import (
    admin_methods,
    all_methods,
    broken_keys,
    grpc_call,
    grpc_error_of,
    grpc_metadata,
    rest_call,
)

FORMS = ["missing", "empty", "malformed", "truncated", "unknown", "revoked", "bearer_unknown", "bearer_revoked",
         "bearer_malformed", "bearer_no_scheme", "basic_scheme"]


@pytest.mark.parametrize("form", FORMS)
def test_every_operation_answers_401_without_a_valid_key(form: str, server: LevyServer, tenant: Tenant,
                                                          anon_http: httpx.Client, channel: grpc.Channel) -> None:
    headers = broken_keys(server.database_url, tenant)[form]
    for m in all_methods():
        # An invalid body too: authentication comes before the body is read.
        r = rest_call(anon_http, m, headers=headers, content=b'{"not json')
        assert r.status_code == 401, (m.name, r.status_code, r.text)
        (err,) = r.json()["errors"]
        assert err["code"] == "authentication_error" and err["status"] == "401", (m.name, err)
        assert r.headers["x-request-id"].startswith("req_")
        e = grpc_error_of(channel, m, grpc_metadata(headers))
        assert e.code == grpc.StatusCode.UNAUTHENTICATED, (m.name, e)
        assert e.reason == "authentication_error"


def test_bearer_form_of_a_valid_key_authenticates(server: LevyServer, tenant: Tenant, anon_http: httpx.Client,
                                                  channel: grpc.Channel) -> None:
    r = anon_http.get("/product-tax-codes", params={"limit": 1}, headers={"Authorization": f"Bearer {tenant.key}"})
    assert r.status_code == 200, r.text
    m = next(m for m in all_methods() if m.name == "ListProductTaxCodes")
    resp, err = grpc_call(channel, m, [("authorization", f"Bearer {tenant.key}")])
    assert err is None and resp is not None


def test_admin_operations_refuse_plain_keys(http: httpx.Client, channel: grpc.Channel, tenant: Tenant) -> None:
    ops = admin_methods()
    assert len(ops) >= 20  # settings, registrations, certificates, overrides, restore, merge, keys, filings
    for m in ops:
        r = rest_call(http, m, content=b'{"not json')
        assert r.status_code == 403, (m.name, r.status_code, r.text)
        assert r.json()["errors"][0]["code"] == "permission_error"
        e = grpc_error_of(channel, m, md(tenant.key))
        assert e.code == grpc.StatusCode.PERMISSION_DENIED, (m.name, e)
        assert e.reason == "permission_error"


def test_admin_keys_pass_the_admin_check(admin_http: httpx.Client, channel: grpc.Channel, tenant: Tenant) -> None:
    for m in admin_methods():
        r = rest_call(admin_http, m)
        assert r.status_code not in (401, 403), (m.name, r.status_code, r.text)
        _, err = grpc_call(channel, m, md(tenant.admin_key))
        assert err is None or err.code not in (grpc.StatusCode.UNAUTHENTICATED, grpc.StatusCode.PERMISSION_DENIED)


def test_plain_keys_reach_non_admin_operations(http: httpx.Client, channel: grpc.Channel, tenant: Tenant) -> None:
    for m in all_methods():
        if m.policy.admin_only:
            continue
        r = rest_call(http, m)
        assert r.status_code not in (401, 403), (m.name, r.status_code, r.text)
        _, err = grpc_call(channel, m, md(tenant.key))
        assert err is None or err.code not in (grpc.StatusCode.UNAUTHENTICATED, grpc.StatusCode.PERMISSION_DENIED)
