"""OWASP API3 (property-level authorization) and API4 (unrestricted resource
consumption) on every body route, generated from the request descriptors:
read-only and server-owned properties cannot be set, string and array limits,
body size limits (413 before parsing), deeply nested JSON, page size caps."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import grpc
import httpx
import pytest
from google.protobuf import descriptor

from levy.app.registry import MethodInfo, field_policy, is_output_only, methods
from levy.config import Config
from levytest import md
from security_helpers import body_methods, grpc_call, rest_call, rest_path

FD = descriptor.FieldDescriptor
SPECIAL = ("google.protobuf.",)


def _body_desc(m: MethodInfo) -> descriptor.Descriptor:
    body = m.http.body
    req = m.request_cls.DESCRIPTOR
    return req if body == "*" else req.fields_by_name[body].message_type


def _walk(desc: descriptor.Descriptor, depth: int = 0) -> Iterator[tuple[list[Any], FD]]:
    """(path of keys and list indexes, field) of every field of an input body,
    nested messages included, without going through read-only parents."""
    for f in desc.fields:
        yield [f.name], f
        if depth < 4 and f.type == FD.TYPE_MESSAGE and not is_output_only(f) \
                and not f.message_type.full_name.startswith(SPECIAL) and not field_policy(f).per_item_errors:
            for sub, g in _walk(f.message_type, depth + 1):
                yield ([f.name, 0, *sub] if f.is_repeated else [f.name, *sub]), g


def _build(path: list[Any], value: Any) -> Any:
    if not path:
        return value
    head, rest = path[0], path[1:]
    if isinstance(head, int):
        return [_build(rest, value)]
    return {head: _build(rest, value)}


def _pointer(path: list[Any]) -> str:
    return "".join(f"/{p}" for p in path)


def error_pointers(r: httpx.Response) -> set[str]:
    body = r.json()
    if "errors" in body:
        return {(e.get("source") or {}).get("pointer") for e in body["errors"]}
    return {"".join(f"/{p}" for p in d["loc"][1:]) for d in body["detail"]}  # calculation shape


def _sample(f: FD) -> Any:
    if f.is_repeated:
        return []
    if f.type == FD.TYPE_MESSAGE:
        return "2026-01-01T00:00:00Z" if f.message_type.full_name == "google.protobuf.Timestamp" else {}
    if f.type == FD.TYPE_BOOL:
        return True
    if f.type == FD.TYPE_STRING:
        return "filed" if f.name == "status" else "x"
    return 1


def _body_cases(pred: Any) -> list[tuple[MethodInfo, list[Any], FD]]:
    out = []
    for m in body_methods():
        for path, f in _walk(_body_desc(m)):
            if pred(f):
                out.append((m, path, f))
    return out


READ_ONLY = _body_cases(is_output_only)


def test_read_only_cases_cover_the_server_owned_fields() -> None:
    names = {f.name for _, _, f in READ_ONLY}
    assert {"id", "created_at", "merged_into_customer_id", "exemption", "organization_id"} <= names, names


@pytest.mark.parametrize("m,path,f", READ_ONLY, ids=lambda x: x.name if hasattr(x, "name") else None)
def test_read_only_property_cannot_be_set(m: MethodInfo, path: list[Any], f: FD, admin_http: httpx.Client) -> None:
    r = rest_call(admin_http, m, body=_build(path, _sample(f)))
    assert r.status_code == 422, (m.name, path, r.status_code, r.text)
    assert _pointer(path) in error_pointers(r), r.text


@pytest.mark.parametrize("m", [m for m in body_methods() if m.http.body == "*" and "{" in m.http_path],
                         ids=lambda m: m.name)
def test_path_fields_cannot_be_overridden_in_the_body(m: MethodInfo, admin_http: httpx.Client) -> None:
    r = rest_call(admin_http, m, body={"customer_id": "cust_someone_else"})
    assert r.status_code == 422, r.text
    assert "/customer_id" in error_pointers(r)


STRING_LIMITS = _body_cases(lambda f: not is_output_only(f) and f.type == FD.TYPE_STRING
                            and field_policy(f).max_length and not f.is_repeated)
ARRAY_LIMITS = _body_cases(lambda f: not is_output_only(f) and f.is_repeated and field_policy(f).max_items)


@pytest.mark.parametrize("m,path,f", STRING_LIMITS, ids=lambda x: x.name if hasattr(x, "name") else None)
def test_string_over_its_limit_is_422(m: MethodInfo, path: list[Any], f: FD, admin_http: httpx.Client) -> None:
    limit = field_policy(f).max_length
    r = rest_call(admin_http, m, body=_build(path, "é" * (limit + 1)))  # characters, not bytes
    assert r.status_code == 422, (m.name, path, r.text)
    assert _pointer(path) in error_pointers(r), r.text
    r = rest_call(admin_http, m, body=_build(path, "é" * limit))  # at the limit: no length error
    assert "characters long" not in r.text, r.text


@pytest.mark.parametrize("m,path,f", ARRAY_LIMITS, ids=lambda x: x.name if hasattr(x, "name") else None)
def test_array_over_its_limit_is_422(m: MethodInfo, path: list[Any], f: FD, admin_http: httpx.Client) -> None:
    n = field_policy(f).max_items + 1
    item: Any = {} if f.type == FD.TYPE_MESSAGE else "X"
    r = rest_call(admin_http, m, body=_build(path, [item] * n))
    assert r.status_code == 422, (m.name, path, r.text[:500])
    assert _pointer(path) in error_pointers(r), r.text[:500]


def test_grpc_array_over_its_limit_is_invalid_argument(channel: grpc.Channel, tenant: Any) -> None:
    m = next(m for m in methods() if m.name == "BatchUpsertCustomers")
    req = m.request_cls()
    for _ in range(1001):
        req.data.add()  # type: ignore[attr-defined]
    _, err = grpc_call(channel, m, md(tenant.admin_key), req)
    assert err is not None and err.code == grpc.StatusCode.INVALID_ARGUMENT, err
    assert ("/data", "'data' has 1001 items; the maximum is 1000.") in err.violations


def _limit(m: MethodInfo) -> int:
    return m.policy.max_body_bytes or Config().max_body_bytes


@pytest.mark.parametrize("m", body_methods(), ids=lambda m: m.name)
def test_body_over_the_limit_is_413_before_parsing(m: MethodInfo, admin_http: httpx.Client) -> None:
    limit = _limit(m)
    garbage = b"{" + b"x" * limit  # not JSON: a 413 proves it was never parsed
    r = rest_call(admin_http, m, content=garbage)
    assert r.status_code == 413, (m.name, r.status_code, r.text[:300])
    (err,) = r.json()["errors"]
    assert err["code"] == "request_too_large" and err["meta"]["max_size"] == limit
    assert str(limit) in err["detail"]

    def chunks() -> Iterator[bytes]:  # no Content-Length: counted while reading
        yield b"{"
        for _ in range(limit // 65536 + 2):
            yield b"x" * 65536

    r = admin_http.request(m.http_method, rest_path(m), content=chunks(), headers={"content-type": "application/json"})
    assert r.status_code == 413, (m.name, r.status_code, r.text[:300])


def test_grpc_message_over_the_limit_is_resource_exhausted(channel: grpc.Channel, tenant: Any) -> None:
    m = next(m for m in methods() if m.name == "BatchUpsertCustomers")
    req = m.request_cls()
    for i in range(1000):
        req.data.add(source_id=f"{i}", name="n" * 500, email="e" * 320)  # type: ignore[attr-defined]
    for c in req.data:  # type: ignore[attr-defined]
        c.source_account_id = "a" * 255 * 20
    assert req.ByteSize() > _limit(m)
    _, err = grpc_call(channel, m, md(tenant.admin_key), req)
    assert err is not None and err.code == grpc.StatusCode.RESOURCE_EXHAUSTED, err
    assert err.reason == "request_too_large"


@pytest.mark.parametrize("m", body_methods(), ids=lambda m: m.name)
def test_deeply_nested_json_is_422_not_500(m: MethodInfo, admin_http: httpx.Client) -> None:
    for depth in (100, 5000, 100_000):
        for doc in (b"[" * depth + b"]" * depth, b'{"a":' * depth + b"1" + b"}" * depth):
            if len(doc) > _limit(m):
                continue
            r = rest_call(admin_http, m, content=doc)
            assert r.status_code == 422, (m.name, depth, r.status_code, r.text[:300])
    # nested inside a real object property
    first_obj = next((f.name for f in _body_desc(m).fields if f.type == FD.TYPE_MESSAGE and not is_output_only(f)
                      and not f.is_repeated and not f.message_type.full_name.startswith(SPECIAL)), None)
    if first_obj:
        r = rest_call(admin_http, m, content=b'{"' + first_obj.encode() + b'":' + b'{"x":' * 3000 + b"1"
                      + b"}" * 3001)
        assert r.status_code == 422, (m.name, r.status_code, r.text[:300])


@pytest.mark.parametrize("params", [
    {"limit": 1001}, {"limit": 0}, {"limit": -1}, {"limit": 99999999999}, {"limit": "1_000"}, {"limit": " 5"},
    {"limit": "٥"}, {"limit": "1e3"}, {"limit": ""}, {"unknown": "1"},
])
def test_page_size_is_capped(params: dict[str, Any], http: httpx.Client) -> None:
    for path in ("/product-tax-codes", "/product-attributes"):
        r = http.get(path, params=params)
        assert r.status_code == 422, (path, params, r.text)
        (err,) = r.json()["errors"]
        assert err["source"]["parameter"] in params


def test_largest_page_is_1000(http: httpx.Client) -> None:
    assert http.get("/product-tax-codes", params={"limit": 1000}).status_code == 200
