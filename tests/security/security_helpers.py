"""Reusable helpers of the security tests: one sample call per operation over
REST and gRPC (built from the registry, so new operations are covered as they
land), keys in every broken form, and the object-level authorization check.
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import Callable, Iterable
from typing import Any

import grpc
import httpx
from google.protobuf import message

from levyserver import Tenant
from levy.app.registry import MethodInfo, methods
from levy.domain.keys import new_secret
from levytest import GrpcError, call_error, md

_VAR = re.compile(r"\{([a-z_][a-z0-9_]*)\}")

# Ids that exist nowhere: path parameters of the sample calls.
SAMPLE_IDS = {
    "customer_id": "cust_00000000000000000000000000",
    "product_id": "prd_00000000000000000000000000",
    "id": "txn_00000000000000000000000000",
    "filing_id": "fil_00000000000000000000000000",
    "certificate_id": "cexc_00000000000000000000000000",
    "registration_id": "reg_00000000000000000000000000",
    "key_id": "key_00000000000000000000000000",
    "location_id": "loc_00000000000000000000000000",
    "event_id": "evt_00000000000000000000000000",
    "endpoint_id": "we_00000000000000000000000000",
    "delivery_id": "whd_00000000000000000000000000",
}


def method_id(m: MethodInfo) -> str:
    return m.name


def all_methods() -> tuple[MethodInfo, ...]:
    return methods()


def admin_methods() -> list[MethodInfo]:
    return [m for m in methods() if m.policy.admin_only]


def body_methods() -> list[MethodInfo]:
    return [m for m in methods() if m.http.body]


def rest_path(m: MethodInfo, ids: dict[str, str] | None = None) -> str:
    values = {**SAMPLE_IDS, **(ids or {})}
    return _VAR.sub(lambda mo: values[mo.group(1)], m.http_path)


def rest_call(client: httpx.Client, m: MethodInfo, *, headers: dict[str, str] | None = None,
              body: Any = None, content: bytes | None = None, ids: dict[str, str] | None = None,
              params: dict[str, Any] | None = None) -> httpx.Response:
    """One REST request of ``m`` (body ``{}`` for body routes unless given)."""
    kwargs: dict[str, Any] = {"headers": headers or {}, "params": params}
    if m.http.body:
        if content is not None:
            kwargs["content"] = content
            kwargs["headers"] = {"content-type": "application/json", **kwargs["headers"]}
        else:
            kwargs["json"] = {} if body is None else body
    return client.request(m.http_method, rest_path(m, ids), **kwargs)


def grpc_request(m: MethodInfo, ids: dict[str, str] | None = None) -> message.Message:
    req = m.request_cls()
    values = {**SAMPLE_IDS, **(ids or {})}
    for name in _VAR.findall(m.http_path):
        setattr(req, name, values[name])
    return req


def grpc_stub(channel: grpc.Channel, m: MethodInfo) -> Callable[..., Any]:
    return channel.unary_unary(m.grpc_path, request_serializer=m.request_cls.SerializeToString,
                               response_deserializer=m.response_cls.FromString)


def grpc_error_of(channel: grpc.Channel, m: MethodInfo, metadata: list[tuple[str, str]],
                  request: message.Message | None = None) -> GrpcError:
    return call_error(grpc_stub(channel, m), request or grpc_request(m), metadata)


def grpc_call(channel: grpc.Channel, m: MethodInfo, metadata: list[tuple[str, str]],
              request: message.Message | None = None) -> tuple[Any, GrpcError | None]:
    """(response, None) or (None, error)."""
    try:
        return grpc_stub(channel, m)(request or grpc_request(m), metadata=metadata), None
    except grpc.RpcError as e:
        from levytest import grpc_error

        return None, grpc_error(e)


async def _revoked_key(database_url: str, organization_id: str) -> str:
    from levy.store.db import create_engine, transaction
    from levy.store.keys import SqlApiKeys

    engine = create_engine(database_url, pool_size=1)
    try:
        async with transaction(engine, write=True) as conn:
            keys = SqlApiKeys(conn)
            rec, secret = await keys.create(organization_id, "to revoke", True)
            await keys.revoke(organization_id, rec.id)
    finally:
        await engine.dispose()
    return secret


def broken_keys(database_url: str, tenant: Tenant) -> dict[str, dict[str, str]]:
    """Header sets that must all answer 401: missing, malformed, unknown, revoked, bearer forms."""
    revoked = asyncio.run(_revoked_key(database_url, tenant.organization_id))
    unknown = new_secret()
    return {
        "missing": {},
        "empty": {"X-API-Key": ""},
        "malformed": {"X-API-Key": "not-a-key"},
        "truncated": {"X-API-Key": tenant.admin_key[:-1]},
        "unknown": {"X-API-Key": unknown},
        "revoked": {"X-API-Key": revoked},
        "bearer_unknown": {"Authorization": f"Bearer {unknown}"},
        "bearer_revoked": {"Authorization": f"Bearer {revoked}"},
        "bearer_malformed": {"Authorization": "Bearer not-a-key"},
        "bearer_no_scheme": {"Authorization": tenant.admin_key},
        "basic_scheme": {"Authorization": f"Basic {tenant.admin_key}"},
    }


def grpc_metadata(headers: dict[str, str]) -> list[tuple[str, str]]:
    return [(k.lower(), v) for k, v in headers.items()]


def assert_other_tenant_gets_404(
    owner: Tenant,
    intruder: Tenant,
    http_client: Callable[[str], httpx.Client],
    channel: grpc.Channel,
    resource_ids: dict[str, str],
    operations: Iterable[MethodInfo],
    *,
    bodies: dict[str, Any] | None = None,
    owner_values: Iterable[str] = (),
) -> None:
    """Object-level authorization: every operation of ``operations`` addressing
    ``owner``'s resources (``resource_ids``: path parameter -> id) with
    ``intruder``'s admin key answers 404 over REST and NOT_FOUND over gRPC, and
    none of ``owner_values`` (the owner's data) appears in the answer. ``http_client(key)`` gives a
    client authenticated with that key. For the area tests of customers,
    products, transactions, certificates and filings as they land.
    """
    client = http_client(intruder.admin_key)
    for m in operations:
        r = rest_call(client, m, ids=resource_ids, body=(bodies or {}).get(m.name))
        assert r.status_code == 404, (m.name, r.status_code, r.text)
        assert r.json()["errors"][0]["code"] == "not_found"
        for value in owner_values:  # the id the caller sent may be echoed; the owner's data never
            assert value not in r.text, (m.name, value, r.text)
        err = grpc_error_of(channel, m, md(intruder.admin_key), grpc_request(m, resource_ids))
        assert err.code == grpc.StatusCode.NOT_FOUND, (m.name, err)
