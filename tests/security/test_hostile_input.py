"""Hostile input found by adversarial testing (issue 16), kept fixed; see docs/security.md."""

from __future__ import annotations

import json
import socket
from typing import Any
from urllib.parse import urlsplit

import grpc
import pytest
from grpc_status import rpc_status

from levyserver import LevyServer, Tenant
from levytest import grpc_error, md
from levy.v1 import reference_pb2 as refpb
from levy.v1 import reference_pb2_grpc as refpbg

# Raw request bytes of levy.v1.GetCustomerRequest (field 1, customer_id, a string).
UNDECODABLE = {
    # Tag 0x0a (field 1, length-delimited), length 2, bytes that are not UTF-8.
    "string field not UTF-8": b"\x0a\x02\xff\xfe",
    # Declares 5 bytes, carries 2.
    "truncated": b"\x0a\x05ab",
    # A tag with a wire type that does not exist (7).
    "bad wire type": b"\x0f",
}


def raw_call(channel: grpc.Channel, data: bytes, metadata: list[tuple[str, str]]) -> grpc.RpcError:
    call = channel.unary_unary("/levy.v1.CustomerService/GetCustomer", request_serializer=None,
                               response_deserializer=None)
    with pytest.raises(grpc.RpcError) as e:
        call(data, metadata=metadata, timeout=30)
    return e.value  # type: ignore[return-value]


@pytest.mark.parametrize("case", UNDECODABLE, ids=list(UNDECODABLE))
def test_undecodable_grpc_request_is_invalid_argument(channel: grpc.Channel, tenant: Tenant, case: str) -> None:
    # Before: UNKNOWN "Exception deserializing request!" (grpc's own, from the parser).
    err = grpc_error(raw_call(channel, UNDECODABLE[case], md(tenant.key)))
    assert err.code == grpc.StatusCode.INVALID_ARGUMENT, err
    assert err.message.startswith("The request is not a valid levy.v1.GetCustomerRequest message"), err.message
    assert "Error" not in err.message and "Exception" not in err.message and "Traceback" not in err.message
    assert err.reason == "validation_error" and err.errors[0]["status"] == "422"
    assert err.trailers.get("x-request-id", "").startswith("req_")


def test_undecodable_grpc_request_without_a_key_is_unauthenticated(channel: grpc.Channel) -> None:
    # Authentication first, as for every request: an unauthenticated caller learns nothing about its input.
    e = raw_call(channel, UNDECODABLE["truncated"], [])
    assert e.code() == grpc.StatusCode.UNAUTHENTICATED  # type: ignore[attr-defined]
    assert rpc_status.from_call(e) is not None  # type: ignore[arg-type]


# ------------------------------------------------------------------ which API key a request presents
# One rule for both transports (levy.app.auth.presented_key, docs/security.md): X-API-Key when sent,
# else Authorization: Bearer; surrounding spaces and tabs are not part of a value; a field sent twice
# is one value joined by ", ", never a key.

def key_forms(key: str) -> dict[str, tuple[list[tuple[str, str]], int]]:
    """Header lines (in order) -> the status they get (200: authenticated)."""
    unknown = "levy_sk_" + "A" * 43
    return {
        "trailing spaces": ([("x-api-key", key + "   ")], 200),
        "trailing tab": ([("x-api-key", key + "\t")], 200),
        "leading space": ([("x-api-key", " " + key)], 200),
        "bearer with trailing spaces": ([("authorization", f"Bearer {key}  ")], 200),
        # X-API-Key wins over Authorization wherever each comes.
        "x-api-key then a bad bearer": ([("x-api-key", key), ("authorization", f"Bearer {unknown}")], 200),
        "a bad bearer then x-api-key": ([("authorization", f"Bearer {unknown}"), ("x-api-key", key)], 200),
        "bearer then a bad x-api-key": ([("authorization", f"Bearer {key}"), ("x-api-key", unknown)], 401),
        "x-api-key twice": ([("x-api-key", key), ("x-api-key", key)], 401),
        "bearer twice": ([("authorization", f"Bearer {key}"), ("authorization", f"Bearer {key}")], 401),
    }


FORM_NAMES = list(key_forms("k"))


def raw_get(server: LevyServer, path: str, lines: list[tuple[str, str]]) -> tuple[int, dict[str, Any]]:
    """GET over a plain socket: httpx (h11) refuses to send a value with surrounding whitespace."""
    url = urlsplit(server.http_url)
    head = f"GET {path} HTTP/1.1\r\nHost: {url.netloc}\r\nConnection: close\r\n"
    head += "".join(f"{name}: {value}\r\n" for name, value in lines) + "\r\n"
    with socket.create_connection((url.hostname, url.port), timeout=30) as sock:
        sock.sendall(head.encode("latin-1"))
        data = b""
        while chunk := sock.recv(65536):
            data += chunk
    status_line, _, rest = data.partition(b"\r\n")
    body = rest.partition(b"\r\n\r\n")[2]
    return int(status_line.split()[1]), json.loads(body)


@pytest.mark.parametrize("form", FORM_NAMES)
def test_presented_key_rest(server: LevyServer, tenant: Tenant, form: str) -> None:
    lines, status = key_forms(tenant.key)[form]
    code, out = raw_get(server, "/product-tax-codes?limit=1", lines)
    assert code == status, (form, out)
    if status == 401:
        assert out["errors"][0]["code"] == "authentication_error"
    else:
        assert len(out["data"]) == 1


@pytest.mark.parametrize("form", [f for f in FORM_NAMES if f != "trailing tab"])  # grpc refuses a tab to send
def test_presented_key_grpc(channel: grpc.Channel, tenant: Tenant, form: str) -> None:
    lines, status = key_forms(tenant.key)[form]
    stub = refpbg.ReferenceServiceStub(channel)
    req = refpb.ListProductTaxCodesRequest(limit=1)
    if status == 200:
        stub.ListProductTaxCodes(req, metadata=lines, timeout=30)
        return
    with pytest.raises(grpc.RpcError) as e:
        stub.ListProductTaxCodes(req, metadata=lines, timeout=30)
    err = grpc_error(e.value)  # type: ignore[arg-type]
    assert err.code == grpc.StatusCode.UNAUTHENTICATED and err.reason == "authentication_error", (form, err)
