"""Hostile input found by adversarial testing (issue 16), kept fixed; see docs/security.md."""

from __future__ import annotations

import grpc
import pytest
from grpc_status import rpc_status

from levyserver import Tenant
from levytest import grpc_error, md

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
